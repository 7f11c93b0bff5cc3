//! A strict reader of the Prometheus text format (0.0.4), as `promtool` and the
//! Prometheus server read it. `prometheus-parse` splits label values on `,` and
//! `}` and keeps their escapes, which is exactly what these tests must check, so
//! this one checks every line instead.

use std::collections::{BTreeMap, HashMap, HashSet};

/// One series and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

impl Sample {
    /// `name{k="v",...}`, labels sorted, for messages and maps.
    pub fn key(&self) -> String {
        format!("{}{:?}", self.name, self.labels)
    }
}

/// A whole exposition.
#[derive(Debug, Default)]
pub struct Exposition {
    /// The declared type of each family.
    pub types: HashMap<String, String>,
    pub samples: Vec<Sample>,
}

impl Exposition {
    /// The value of the series `name` with exactly `labels`.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.samples
            .iter()
            .find(|s| s.name == name && s.labels == labels)
            .map(|s| s.value)
    }

    /// Every series whose `name` label is `group`.
    pub fn of_group<'a>(&'a self, group: &'a str) -> impl Iterator<Item = &'a Sample> {
        self.samples
            .iter()
            .filter(move |s| s.labels.get("name").map(String::as_str) == Some(group))
    }
}

/// Parses `text`, refusing anything the format does not allow: bad names, bad
/// escapes, unquoted or unterminated values, a sample of an undeclared family,
/// a family declared twice or split in two, a series repeated, a label
/// repeated, a missing final newline.
pub fn parse(text: &str) -> Result<Exposition, String> {
    let mut out = Exposition::default();
    let mut helped = HashSet::new();
    let mut finished: HashSet<String> = HashSet::new();
    let mut current: Option<String> = None;
    let mut series = HashSet::new();
    if !text.is_empty() && !text.ends_with('\n') {
        return Err("no newline at the end".into());
    }
    for (number, line) in text.lines().enumerate() {
        let fail = |why: &str| format!("line {}: {why}: {line:?}", number + 1);
        let mut enter = |family: &str| -> Result<(), String> {
            if current.as_deref() != Some(family) {
                if finished.contains(family) {
                    return Err(fail("family split in two"));
                }
                finished.extend(current.replace(family.to_owned()));
            }
            Ok(())
        };
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').ok_or_else(|| fail("no help"))?;
            metric_name(name).map_err(|why| fail(&why))?;
            unescape(help, false).map_err(|why| fail(&why))?;
            if !helped.insert(name.to_owned()) {
                return Err(fail("second HELP"));
            }
            enter(name)?;
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, ty) = rest.split_once(' ').ok_or_else(|| fail("no type"))?;
            metric_name(name).map_err(|why| fail(&why))?;
            if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&ty) {
                return Err(fail("unknown type"));
            }
            if out.samples.iter().any(|s| s.name == name) {
                return Err(fail("TYPE after samples"));
            }
            if out.types.insert(name.to_owned(), ty.to_owned()).is_some() {
                return Err(fail("second TYPE"));
            }
            enter(name)?;
        } else if line.starts_with('#') || line.is_empty() {
            continue;
        } else {
            let sample = sample(line).map_err(|why| fail(&why))?;
            // A histogram's series are its name and a suffix.
            let histogram = ["_bucket", "_sum", "_count"]
                .iter()
                .filter_map(|suffix| sample.name.strip_suffix(suffix))
                .find(|family| out.types.get(*family).map(String::as_str) == Some("histogram"));
            let family = histogram.unwrap_or(&sample.name).to_owned();
            if !out.types.contains_key(&family) {
                return Err(fail("sample of an undeclared family"));
            }
            if histogram.is_some() && sample.name.ends_with("_bucket") {
                if !sample.labels.contains_key("le") {
                    return Err(fail("a bucket without `le`"));
                }
            } else if sample.labels.contains_key("le") && histogram.is_some() {
                return Err(fail("`le` on a histogram's sum or count"));
            }
            enter(&family)?;
            if !series.insert(sample.key()) {
                return Err(fail("series repeated"));
            }
            out.samples.push(sample);
        }
    }
    Ok(out)
}

fn sample(line: &str) -> Result<Sample, String> {
    let end = line.find(['{', ' ']).ok_or("no value")?;
    let (name, mut rest) = line.split_at(end);
    metric_name(name)?;
    let mut labels = BTreeMap::new();
    if let Some(after) = rest.strip_prefix('{') {
        rest = after;
        while let Some(after) = rest.strip_prefix('}').map_or(Some(rest), |_| None) {
            let (key, after) = after.split_once("=\"").ok_or("a label without =\"")?;
            label_name(key)?;
            let (value, after) = quoted(after)?;
            if labels.insert(key.to_owned(), value).is_some() {
                return Err(format!("label {key} repeated"));
            }
            rest = match after.strip_prefix(',') {
                Some(next) if next.starts_with('}') => return Err("a trailing comma".into()),
                Some(next) => next,
                None if after.starts_with('}') => after,
                None => return Err("no , or } after a label".into()),
            };
        }
        rest = &rest[1..];
    }
    let rest = rest.strip_prefix(' ').ok_or("no space before the value")?;
    let mut fields = rest.split(' ');
    let value = number(fields.next().unwrap_or(""))?;
    if let Some(timestamp) = fields.next() {
        timestamp
            .parse::<i64>()
            .map_err(|_| format!("bad timestamp {timestamp:?}"))?;
    }
    if fields.next().is_some() {
        return Err("trailing fields".into());
    }
    Ok(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

/// The value of a quoted label value, which `s` starts just inside, and what
/// follows its closing quote.
fn quoted(s: &str) -> Result<(String, &str), String> {
    let mut escaped = false;
    for (at, c) in s.char_indices() {
        match (escaped, c) {
            (false, '\\') => escaped = true,
            (false, '"') => return Ok((unescape(&s[..at], true)?, &s[at + 1..])),
            (false, '\n') => return Err("a raw newline in a label value".into()),
            _ => escaped = false,
        }
    }
    Err("an unterminated label value".into())
}

/// Label values may escape `\\`, `"` and newlines; help text `\\` and newlines.
fn unescape(s: &str, quote: bool) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('"') if quote => out.push('"'),
            other => return Err(format!("bad escape \\{other:?}")),
        }
    }
    Ok(out)
}

fn metric_name(name: &str) -> Result<(), String> {
    identifier(name, true).ok_or_else(|| format!("bad metric name {name:?}"))
}

fn label_name(name: &str) -> Result<(), String> {
    identifier(name, false).ok_or_else(|| format!("bad label name {name:?}"))
}

fn identifier(name: &str, colon: bool) -> Option<()> {
    let ok = |c: char, first: bool| {
        c == '_' || c.is_ascii_alphabetic() || (colon && c == ':') || (!first && c.is_ascii_digit())
    };
    let mut chars = name.chars();
    (chars.next().is_some_and(|c| ok(c, true)) && chars.all(|c| ok(c, false))).then_some(())
}

/// A sample value as Go's `ParseFloat` reads it, without Rust's extra
/// spellings (`inf`, `infinity`).
fn number(s: &str) -> Result<f64, String> {
    match s {
        "NaN" => Ok(f64::NAN),
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        _ if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')) =>
        {
            s.parse().map_err(|_| format!("bad value {s:?}"))
        }
        _ => Err(format!("bad value {s:?}")),
    }
}
