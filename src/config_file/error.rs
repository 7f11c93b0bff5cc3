//! [`Error`]: why a configuration file, a variable or a group's composed
//! configuration was refused, in a message that names where and what is allowed.

use std::fmt;

/// What kind of mistake an [`Error`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read.
    Io,
    /// The file is not valid TOML, or a table is not a table.
    Syntax,
    /// A top-level table other than `defaults`, `templates`, `groups`.
    UnknownTable,
    /// A key that configures nothing (a typo, or `fallback`, `registry`, ...).
    UnknownKey,
    /// A group names a template the file does not define.
    UnknownTemplate,
    /// A value of the wrong type: a boolean for `open_ms`, a duration without
    /// its unit (`open_ms = "30"`) or with another one, a negative count.
    WrongType,
    /// A value, or a group's composed configuration, the builder refuses.
    Refused,
    /// A `BREAKER_` variable that does not follow the naming scheme.
    BadVariable,
    /// A value the group's code would never enforce: `timeout_ms` or
    /// `max_concurrent` for a group whose `#[circuit_breaker]` does not name
    /// the key (see [`Declaration::attribute`](super::Declaration::attribute)),
    /// or a retry key for a group whose `#[circuit_breaker]` runs no retry
    /// loop (see [`Declaration::retry`](super::Declaration::retry)).
    Unenforced,
    /// Applied to a live registry, it would change the failure policy of a
    /// running breaker (its kind, its window's size, or whether slow calls or
    /// p99 latency are judged), or its `max_concurrent` or `timeout_ms`, which
    /// are fixed when it is built (see
    /// [`Breaker::reconfigure`](crate::Breaker::reconfigure)).
    LivePolicyChange,
}

/// A refused configuration: the message names the file (and line, table and
/// key) or the variable, the value, and what is allowed. Nothing of a refused
/// file or environment is applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// The message without the leading "refused" line.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    /// What kind of mistake this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "breaker configuration refused, nothing applied: {}",
            self.message
        )
    }
}

impl std::error::Error for Error {}

/// The closest of `choices` to `typed`: a few edits away, or a part of it
/// (`open` for `open_ms`), as " (did you mean `x`?)".
pub(crate) fn suggest<'a>(typed: &str, choices: impl Iterator<Item = &'a str>) -> String {
    let typed = typed.to_ascii_lowercase();
    choices
        .map(|c| (strsim::levenshtein(&typed, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| {
            *d <= (c.len() / 3).max(1)
                || (typed.len() >= 4 && (c.contains(typed.as_str()) || typed.contains(*c)))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

/// What the unknown key `typed` stands for: " (renamed to `x`)" for a former
/// name of one of `keys`, else the closest of them, as [`suggest`] says it.
pub(crate) fn suggest_key<'a>(typed: &str, keys: impl Iterator<Item = &'a str>) -> String {
    let keys: Vec<&str> = keys.collect();
    match breaker_rules::renamed(&typed.to_ascii_lowercase()).filter(|now| keys.contains(now)) {
        Some(now) => format!(" (renamed to `{now}`)"),
        None => suggest(typed, keys.into_iter()),
    }
}

/// "`a`, `b`, `c`"
pub(crate) fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
