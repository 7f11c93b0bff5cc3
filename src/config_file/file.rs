//! Reads the TOML format into [`Settings`]: `[defaults]`, `[templates.NAME]`,
//! `[groups.NAME]`, every key checked against the key table where it stands.

use std::path::Path;
use std::sync::Arc;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::duration::parse_quoted_millis;
use super::error::{list, suggest, suggest_key, Error, ErrorKind};
use super::patch::{check_alone, key_index, keys, takes, Patch, Source, Ty, Value, KEYS};
use super::{FileGroup, Settings};

/// The top-level tables a file may hold, and how each is written.
const TABLES: [(&str, &str); 3] = [
    ("defaults", "[defaults]"),
    ("templates", "[templates.NAME]"),
    ("groups", "[groups.NAME]"),
];

/// The file's text and its name, to say "`path` line N" of a span.
struct Doc<'a> {
    path: Arc<Path>,
    text: &'a str,
    /// Which line of the user's file a span of `text` names.
    lines: Lines<'a>,
    /// The dotted key of the table that holds the breaker tables (`breaker`
    /// for `[breaker.defaults]`), empty when they stand at the top.
    at: &'a str,
}

impl Doc<'_> {
    /// The name of the table `name` of the breaker tables as the file
    /// writes it: `groups.search`, or `breaker.groups.search` under `at`.
    fn table(&self, name: &str) -> String {
        if self.at.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.at)
        }
    }
}

/// Which line of the user's file a span of a [`Doc`]'s text stands for.
#[derive(Clone, Copy)]
enum Lines<'a> {
    /// The text is the user's own file: the span's own line.
    Own,
    /// The text is TOML rendered from the user's file in another format: for
    /// each line of the text, the line of the user's file that wrote the key
    /// rendered there (0: none).
    #[cfg_attr(not(feature = "json"), allow(dead_code))]
    Mapped(&'a [usize]),
    /// TOML rendered from a value with no lines to give: messages and
    /// sources name the configuration without a line.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    None,
}

impl Doc<'_> {
    /// The line of the user's file that the text at `offset` stands for.
    fn user_line(&self, offset: usize) -> Option<usize> {
        match self.lines {
            Lines::Own => Some(self.line(offset)),
            Lines::Mapped(map) => map.get(self.line(offset)).copied().filter(|&l| l > 0),
            Lines::None => None,
        }
    }

    fn line(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        self.text.as_bytes()[..offset]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    fn at(&self, span: std::ops::Range<usize>) -> String {
        match self.user_line(span.start) {
            Some(line) => format!("`{}` line {line}", self.path.display()),
            None => format!("`{}`", self.path.display()),
        }
    }

    /// Where a key of `table` at `offset` was written.
    fn source(&self, table: &str, offset: usize) -> Source {
        match self.user_line(offset) {
            Some(line) => Source::File {
                path: self.path.clone(),
                table: table.to_owned(),
                line,
            },
            None => Source::Serde {
                name: self.path.clone(),
                table: table.to_owned(),
            },
        }
    }

    fn error(&self, kind: ErrorKind, span: std::ops::Range<usize>, what: String) -> Error {
        Error::new(kind, format!("{}: {what}", self.at(span)))
    }
}

type Entry<'a> = (
    &'a Spanned<toml::de::DeString<'a>>,
    &'a Spanned<DeValue<'a>>,
);

/// Parses `text`, the contents of the file `path`, into settings.
pub(crate) fn parse(text: &str, path: Arc<Path>) -> Result<Settings, Error> {
    walk(&Doc {
        path,
        text,
        lines: Lines::Own,
        at: "",
    })
}

/// Parses `text`, the contents of the file `path`, into the settings its
/// table `at` (a dotted key) holds; the file's other tables are not read.
pub(crate) fn parse_at(text: &str, path: Arc<Path>, at: &str) -> Result<Settings, Error> {
    walk(&Doc {
        path,
        text,
        lines: Lines::Own,
        at,
    })
}

/// Reads a table deserialized from any serde format, named `name` in
/// messages and sources, by the same walk as a file: rendered as TOML, which
/// only this walk reads.
#[cfg(feature = "serde")]
pub(crate) fn from_table(table: &toml::Table, name: Arc<Path>) -> Result<Settings, Error> {
    let text = toml::to_string(table).map_err(|e| {
        Error::new(
            ErrorKind::WrongType,
            format!(
                "`{}`: a value cannot be read as configuration: {e}",
                name.display()
            ),
        )
    })?;
    walk(&Doc {
        path: name,
        text: &text,
        lines: Lines::None,
        at: "",
    })
}

/// Reads the breaker tables under the dotted key `at` of a value read from
/// the file `path` in another format (`table`, the value at `at` under its
/// path of tables), by the same walk as a TOML file: rendered as TOML, each
/// rendered key taken back to the line `key_line` gives for its path of keys
/// in the user's file.
#[cfg(feature = "json")]
pub(crate) fn from_value_at(
    table: &toml::Table,
    path: Arc<Path>,
    at: &str,
    key_line: &dyn Fn(&[String]) -> Option<usize>,
) -> Result<Settings, Error> {
    let text = toml::to_string(table).map_err(|e| {
        Error::new(
            ErrorKind::WrongType,
            format!(
                "`{}`: a value cannot be read as configuration: {e}",
                path.display()
            ),
        )
    })?;
    let rendered = Doc {
        path,
        text: &text,
        lines: Lines::None,
        at,
    };
    let parsed = DeTable::parse(&text).map_err(|e| syntax_error(&rendered, &e))?;
    let mut map = vec![0; text.lines().count() + 2];
    let line_of = |offset: usize| rendered.line(offset);
    map_lines(
        parsed.get_ref(),
        &mut Vec::new(),
        &mut map,
        &line_of,
        key_line,
    );
    walk(&Doc {
        lines: Lines::Mapped(&map),
        ..rendered
    })
}

/// Writes into `map`, for the line of each key of `table` (under `path`),
/// the user's line of that key. Parents first, so that a header line
/// (`[breaker.groups.search]`) names its last key's line.
#[cfg(feature = "json")]
fn map_lines(
    table: &DeTable<'_>,
    path: &mut Vec<String>,
    map: &mut [usize],
    line_of: &dyn Fn(usize) -> usize,
    key_line: &dyn Fn(&[String]) -> Option<usize>,
) {
    for (key, value) in table.iter() {
        path.push(key.get_ref().as_ref().to_owned());
        if let Some(slot) = map.get_mut(line_of(key.span().start)) {
            *slot = key_line(path).unwrap_or(0);
        }
        if let DeValue::Table(inner) = value.get_ref() {
            map_lines(inner, path, map, line_of, key_line);
        }
        path.pop();
    }
}

/// The tables of `doc`, each key checked.
fn walk(doc: &Doc<'_>) -> Result<Settings, Error> {
    let parsed = DeTable::parse(doc.text).map_err(|e| syntax_error(doc, &e))?;
    let mut settings = Settings {
        file: (!matches!(doc.lines, Lines::None)).then(|| doc.path.clone()),
        ..Settings::default()
    };
    let mut root = parsed.get_ref();
    for key in doc.at.split('.').filter(|k| !k.is_empty()) {
        let Some((name, value)) = root.get_key_value(key) else {
            // No breaker table: nothing configured.
            return Ok(settings);
        };
        root = table_of(doc, (name, value))?;
    }
    for (name, value) in root.iter() {
        match name.get_ref().as_ref() {
            "defaults" => {
                let table = doc.table("defaults");
                settings.defaults = patch(doc, &table, table_of(doc, (name, value))?, false)?.0
            }
            "templates" => {
                for (t, _, body) in named_tables(doc, (name, value))? {
                    let table = doc.table(&format!("templates.{t}"));
                    let (p, _) = patch(doc, &table, body, false)?;
                    settings.templates.insert(t.to_owned(), p);
                }
            }
            "groups" => {
                for (g, offset, body) in named_tables(doc, (name, value))? {
                    let table = doc.table(&format!("groups.{g}"));
                    let (p, template) = patch(doc, &table, body, true)?;
                    let source = doc.source(&table, offset);
                    settings.groups.insert(
                        g.to_owned(),
                        FileGroup {
                            template,
                            patch: p,
                            source,
                        },
                    );
                }
            }
            other if !matches!(value.get_ref(), DeValue::Table(_)) => {
                // A `key = value` above every table: a key, not a table.
                let fix = if key_index(other).is_some() {
                    format!(
                        "; a key goes in a table: put `{other}` under [defaults] (every group) \
                         or [groups.NAME]"
                    )
                } else {
                    format!(
                        "{}; a file holds only the tables {}",
                        suggest(other, keys().chain(TABLES.iter().map(|t| t.0))),
                        list(TABLES.iter().map(|t| t.1)),
                    )
                };
                return Err(doc.error(
                    ErrorKind::UnknownKey,
                    name.span(),
                    format!("unknown top-level key `{other}`{fix}"),
                ));
            }
            other => {
                return Err(doc.error(
                    ErrorKind::UnknownTable,
                    name.span(),
                    format!(
                        "unknown table `[{}]`{}; a file holds only {}",
                        doc.table(other),
                        suggest(other, TABLES.iter().map(|t| t.0)),
                        list(TABLES.iter().map(|t| t.1)),
                    ),
                ))
            }
        }
    }
    check_templates(doc, &settings, root)?;
    settings.check_tables()?;
    Ok(settings)
}

/// Every group's `template` names a template of the file.
fn check_templates(doc: &Doc<'_>, settings: &Settings, root: &DeTable<'_>) -> Result<(), Error> {
    for (group, entry) in &settings.groups {
        let Some(template) = &entry.template else {
            continue;
        };
        if settings.templates.contains_key(template) {
            continue;
        }
        let span = root
            .get("groups")
            .and_then(|g| g.get_ref().get(group.as_str()))
            .and_then(|g| g.get_ref().get("template"))
            .map_or(0..0, |v| v.span());
        let known = if settings.templates.is_empty() {
            "the file defines no template".to_owned()
        } else {
            format!(
                "templates in the file: {}",
                list(settings.templates.keys().map(String::as_str))
            )
        };
        return Err(doc.error(
            ErrorKind::UnknownTemplate,
            span,
            format!(
                "[{}] template = \"{template}\": no template of that name{}; {known}",
                doc.table(&format!("groups.{group}")),
                suggest(template, settings.templates.keys().map(String::as_str)),
            ),
        ));
    }
    Ok(())
}

fn table_of<'a>(doc: &Doc<'_>, (name, value): Entry<'a>) -> Result<&'a DeTable<'a>, Error> {
    value.get_ref().as_table().ok_or_else(|| {
        doc.error(
            ErrorKind::Syntax,
            value.span(),
            format!(
                "`{}` must be a table, like `[{}]`; found the {} `{}`",
                name.get_ref(),
                name.get_ref(),
                value.get_ref().type_str(),
                value_text(doc, value),
            ),
        )
    })
}

/// `[templates.NAME]` / `[groups.NAME]`: each NAME, where it stands and its table.
fn named_tables<'a>(
    doc: &Doc<'_>,
    entry: Entry<'a>,
) -> Result<Vec<(&'a str, usize, &'a DeTable<'a>)>, Error> {
    let outer = entry.0.get_ref();
    table_of(doc, entry)?
        .iter()
        .map(|(name, value)| {
            let body = value.get_ref().as_table().ok_or_else(|| {
                doc.error(
                    ErrorKind::Syntax,
                    name.span(),
                    format!(
                        "`{outer}.{}` must be a table, like `[{outer}.{}]` with keys under it; \
                         found the {} `{}`",
                        name.get_ref(),
                        name.get_ref(),
                        value.get_ref().type_str(),
                        value_text(doc, value),
                    ),
                )
            })?;
            if name.get_ref().trim().is_empty() {
                return Err(doc.error(
                    ErrorKind::Syntax,
                    name.span(),
                    format!("`[{outer}.\"\"]` has an empty name"),
                ));
            }
            Ok((name.get_ref().as_ref(), name.span().start, body))
        })
        .collect()
}

/// One table's keys; a group's `template = "NAME"` comes back on its own.
fn patch(
    doc: &Doc<'_>,
    table: &str,
    body: &DeTable<'_>,
    is_group: bool,
) -> Result<(Patch, Option<String>), Error> {
    let mut out = Patch::new();
    let mut template = None;
    for (key, value) in body.iter() {
        let name = key.get_ref().as_ref();
        let shown = value_text(doc, value);
        if is_group && name == "template" {
            match value.get_ref().as_str() {
                Some(t) => template = Some(t.to_owned()),
                None => {
                    return Err(doc.error(
                        ErrorKind::WrongType,
                        value.span(),
                        format!(
                            "[{table}] template = {shown}: `template` takes the name of a \
                             [templates.NAME] table as a string, like `template = \"flaky\"`"
                        ),
                    ))
                }
            }
            continue;
        }
        let Some(index) = key_index(name) else {
            let also = if is_group {
                ", and `template`".to_owned()
            } else if name == "template" {
                format!("; only a [groups.NAME] table may name a template, not [{table}]")
            } else {
                String::new()
            };
            return Err(doc.error(
                ErrorKind::UnknownKey,
                key.span(),
                format!(
                    "[{table}] unknown key `{name}`{}; allowed keys: {}{also}",
                    suggest_key(name, keys()),
                    list(keys()),
                ),
            ));
        };
        let ty = KEYS[index].ty;
        let parsed = match value.get_ref() {
            DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix())
                .ok()
                .and_then(|v| Value::from_integer(ty, v)),
            DeValue::Float(f) if ty == Ty::F64 => f.as_str().parse().ok().map(Value::F64),
            DeValue::Boolean(b) if ty == Ty::Bool => Some(Value::Bool(*b)),
            DeValue::String(word) => match ty {
                Ty::Choice(words) => words
                    .iter()
                    .find(|w| **w == &**word)
                    .map(|w| Value::Choice(w)),
                _ => None,
            },
            _ => None,
        };
        let parsed = match (parsed, value.get_ref()) {
            (None, DeValue::String(text)) if ty == Ty::U64 => match parse_quoted_millis(text) {
                Ok(ms) => Some(Value::U64(ms)),
                Err(why) => {
                    return Err(doc.error(
                        ErrorKind::WrongType,
                        value.span(),
                        format!(
                            "[{table}] {name} = {shown}: `{name}` takes {}: {why}",
                            takes(index)
                        ),
                    ))
                }
            },
            (parsed, _) => parsed,
        };
        let Some(parsed) = parsed else {
            return Err(doc.error(
                ErrorKind::WrongType,
                value.span(),
                format!(
                    "[{table}] {name} = {shown}: `{name}` takes {}",
                    takes(index)
                ),
            ));
        };
        if let Err(e) = check_alone(index, parsed) {
            return Err(doc.error(
                ErrorKind::Refused,
                value.span(),
                format!("[{table}] {name} = {shown} is refused: {e}"),
            ));
        }
        out.put(index, parsed, doc.source(table, key.span().start));
    }
    Ok((out, template))
}

/// At most this many characters of the file's text go into a message, on each
/// side of a syntax error, and at most this many of toml's own message.
const QUOTED_CHARS: usize = 40;
const TOML_MESSAGE_CHARS: usize = 240;

/// A syntax error as "`path` is not valid TOML: line L, column C: what toml
/// says (near `text`)", with the quoted text and toml's message cut short:
/// toml's own rendering quotes the whole line, so a long line would make a
/// message twice the file's size.
fn syntax_error(doc: &Doc<'_>, e: &toml::de::Error) -> Error {
    let mut message = format!("`{}` is not valid TOML", doc.path.display());
    if let Some(span) = e.span() {
        let start = floor_char_boundary(doc.text, span.start.min(doc.text.len()));
        let line_start = doc.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = doc.text[start..]
            .find('\n')
            .map_or(doc.text.len(), |i| start + i);
        let column = doc.text[line_start..start].chars().count() + 1;
        message += &format!(": line {}, column {column}", doc.line(start));
        let before = last_chars(&doc.text[line_start..start], QUOTED_CHARS);
        let after = first_chars(&doc.text[start..line_end], QUOTED_CHARS);
        let near = format!(
            "{}{}{}{}",
            if before.len() < start - line_start {
                "…"
            } else {
                ""
            },
            before,
            after,
            if after.len() < line_end - start {
                "…"
            } else {
                ""
            },
        );
        let near = near.trim();
        if !near.is_empty() {
            message += &format!(" (near `{}`)", near.escape_debug());
        }
    }
    let what = e.message().trim().replace('\n', "; ");
    let cut = first_chars(&what, TOML_MESSAGE_CHARS);
    message += &format!(": {cut}{}", if cut.len() < what.len() { "…" } else { "" });
    Error::new(ErrorKind::Syntax, message)
}

/// The largest char boundary of `text` at or before `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The first `n` characters of `text`.
fn first_chars(text: &str, n: usize) -> &str {
    text.char_indices().nth(n).map_or(text, |(i, _)| &text[..i])
}

/// The last `n` characters of `text`.
fn last_chars(text: &str, n: usize) -> &str {
    match n
        .checked_sub(1)
        .and_then(|k| text.char_indices().rev().nth(k))
    {
        Some((i, _)) => &text[i..],
        None => text,
    }
}

/// The value as written in the file.
fn value_text(doc: &Doc<'_>, value: &Spanned<DeValue<'_>>) -> String {
    doc.text
        .get(value.span())
        .map(str::trim)
        .filter(|t| !t.is_empty() && t.len() <= 80)
        .map_or_else(|| value.get_ref().type_str().to_owned(), str::to_owned)
}
