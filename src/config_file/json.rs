//! Reads the breaker tables inside an app's own JSON file (feature `json`),
//! each key with its line in that file.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize as _;

use super::error::{Error, ErrorKind};
use super::{file, Settings};

/// Reads the breaker tables under the dotted key `at` of the JSON `text` of
/// the file `path` (the whole document for an empty `at`).
pub(crate) fn parse_at(text: &str, path: Arc<Path>, at: &str) -> Result<Settings, Error> {
    let document: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::Syntax,
            format!(
                "`{}` is not valid JSON: line {}, column {}: {e}",
                path.display(),
                e.line(),
                e.column()
            ),
        )
    })?;
    let keys: Vec<&str> = at.split('.').filter(|k| !k.is_empty()).collect();
    let mut value = &document;
    for key in &keys {
        match value.get(key) {
            Some(inner) => value = inner,
            // No breaker table: nothing configured.
            None => return file::from_value_at(&toml::Table::new(), path, at, &|_| None),
        }
    }
    let breaker = toml::Value::deserialize(value).map_err(|e| {
        Error::new(
            ErrorKind::WrongType,
            format!(
                "`{}`: `{at}` cannot be read as configuration: {e}",
                path.display()
            ),
        )
    })?;
    // The value under its path of tables, as the TOML walk finds it.
    let mut wrapped = breaker;
    for key in keys.iter().rev() {
        wrapped = toml::Value::Table(toml::Table::from_iter([((*key).to_owned(), wrapped)]));
    }
    let toml::Value::Table(table) = wrapped else {
        return Err(Error::new(
            ErrorKind::Syntax,
            format!(
                "`{}` line 1: the breaker tables must be a JSON object",
                path.display()
            ),
        ));
    };
    let lines = key_lines(text);
    file::from_value_at(&table, path, at, &|keys| lines.get(keys).copied())
}

/// The line of each object member's key in the JSON `text`, by its path of
/// keys from the top (members of objects inside arrays are left out: no
/// breaker table is in an array). `text` is valid JSON, so the scan assumes
/// it and only stops short at its end.
fn key_lines(text: &str) -> HashMap<Vec<String>, usize> {
    let mut scan = Scan {
        text,
        at: 0,
        line: 1,
        lines: HashMap::new(),
    };
    scan.value(&mut Vec::new(), true);
    scan.lines
}

struct Scan<'a> {
    text: &'a str,
    at: usize,
    line: usize,
    lines: HashMap<Vec<String>, usize>,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => return,
            }
            self.at += 1;
        }
    }

    /// One value, its members' keys recorded under `path` when `keyed`.
    fn value(&mut self, path: &mut Vec<String>, keyed: bool) {
        self.skip_space();
        match self.peek() {
            Some(b'{') => {
                self.at += 1;
                loop {
                    self.skip_space();
                    match self.peek() {
                        None => return,
                        Some(b'}') => {
                            self.at += 1;
                            return;
                        }
                        Some(b',') => self.at += 1,
                        Some(_) => {
                            let line = self.line;
                            let key = self.string();
                            self.skip_space();
                            self.at += 1; // the `:`
                            path.push(key);
                            if keyed {
                                self.lines.insert(path.clone(), line);
                            }
                            self.value(path, keyed);
                            path.pop();
                        }
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                loop {
                    self.skip_space();
                    match self.peek() {
                        None => return,
                        Some(b']') => {
                            self.at += 1;
                            return;
                        }
                        Some(b',') => self.at += 1,
                        Some(_) => self.value(path, false),
                    }
                }
            }
            Some(b'"') => {
                self.string();
            }
            Some(_) => {
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                        break;
                    }
                    self.at += 1;
                }
            }
            None => {}
        }
    }

    /// A string at the scan's position, unescaped; the scan moves past it.
    fn string(&mut self) -> String {
        let start = self.at;
        self.at += 1;
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'"' => break,
                _ => {}
            }
        }
        let quoted = self.text.get(start..self.at.min(self.text.len()));
        quoted
            .and_then(|q| serde_json::from_str(q).ok())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::key_lines;

    #[test]
    fn each_key_has_the_line_it_is_written_on() {
        let text = "{\n  \"a\": {\"b\": 1,\n \"c\\\"d\": [ {\"x\": 2} ],\n\n  \"e\": \"}\"\n}, \"f\": null }";
        let lines = key_lines(text);
        let at = |keys: &[&str]| {
            lines
                .get(&keys.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>())
                .copied()
        };
        assert_eq!(at(&["a"]), Some(2));
        assert_eq!(at(&["a", "b"]), Some(2));
        assert_eq!(at(&["a", "c\"d"]), Some(3));
        assert_eq!(at(&["a", "e"]), Some(5));
        assert_eq!(at(&["f"]), Some(6));
        assert_eq!(at(&["a", "c\"d", "x"]), None);
    }
}
