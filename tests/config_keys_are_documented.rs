//! Every docs table of configuration keys lists exactly the keys of the tables
//! the builder, the attribute and the loader are made from, each once, with
//! the type (and the builder method) the table gives it.

use std::collections::BTreeSet;

use breaker_rules::{KeyInfo, Ty, KEYS, RETRY_KEYS};
use breakerbox::Config;

/// The attribute keys that configure neither a breaker nor its retries.
const OTHER_KEYS: [&str; 11] = [
    "group",
    "fallback",
    "fallback_on",
    "is_failure",
    "retry_on",
    "registry",
    "crate",
    "timer",
    "key",
    "key_capacity",
    "idempotent",
];

/// The rows of the markdown table that follows `header` in `source`, a doc
/// comment whose lines start with `prefix` (or, with an empty `prefix`, a
/// markdown file): each row's cells.
fn rows(source: &str, prefix: &str, header: &str) -> Vec<Vec<String>> {
    let start = format!("{prefix} {header}");
    let start = start.trim_start();
    let mut lines = source
        .lines()
        .map(str::trim_start)
        .skip_while(|l| !l.starts_with(start));
    assert!(lines.next().is_some(), "no table headed `{header}`");
    lines
        .skip(1) // |---|
        .map_while(|l| l.strip_prefix(prefix)?.trim().strip_prefix("| `"))
        .map(|row| row.split(" | ").map(str::to_owned).collect())
        .collect()
}

/// The first column of every row of the table that follows `header`: the keys.
fn first_column(source: &str, prefix: &str, header: &str) -> Vec<String> {
    rows(source, prefix, header)
        .into_iter()
        .map(|cells| cells[0].split('`').next().unwrap().to_owned())
        .collect()
}

/// The key of the tables named `name`.
fn info(name: &str) -> KeyInfo {
    KEYS.iter()
        .chain(&RETRY_KEYS)
        .find(|k| k.name == name)
        .copied()
        .unwrap_or_else(|| panic!("`{name}` is in no table of keys"))
}

/// Each row of the table after `header` names its key's type in its second
/// column: an integer, a number or a switch, and a Rust type, when it names
/// one, that is the key's. With `durations`, a `u64` key's row says that it
/// takes a duration.
fn assert_types(source: &str, prefix: &str, header: &str, durations: bool) {
    for cells in rows(source, prefix, header) {
        let key = cells[0].split('`').next().unwrap();
        let Some(info) = KEYS.iter().chain(&RETRY_KEYS).find(|k| k.name == key) else {
            continue;
        };
        let ty = &cells[1];
        let (word, rust) = match info.ty {
            Ty::U32 => ("integer", "`u32`"),
            Ty::U64 => ("integer", "`u64`"),
            Ty::F64 => ("number", "`f64`"),
            Ty::Bool => ("`true` or `false`", "`bool`"),
            Ty::Choice(words) => {
                for word in words {
                    let quoted = format!("`\"{word}\"`");
                    assert!(
                        ty.contains(&quoted),
                        "{header} `{key}`: {ty:?} lacks {quoted}"
                    );
                }
                continue;
            }
        };
        assert!(ty.contains(word), "{header} `{key}`: {ty:?} is no {word}");
        for other in ["`u32`", "`u64`", "`f64`"] {
            assert!(
                other == rust || !ty.contains(other),
                "{header} `{key}`: {ty:?} names another type than {rust}"
            );
        }
        if durations && info.ty == Ty::U64 {
            assert!(ty.contains("duration"), "{header} `{key}`: {ty:?}");
        }
    }
}

fn assert_lists_the_keys(table: &str, rows: &[String], with_others: bool) {
    assert_lists(table, rows, with_others, false);
}

fn assert_lists(table: &str, rows: &[String], with_others: bool, with_retry: bool) {
    let unique: BTreeSet<&str> = rows.iter().map(String::as_str).collect();
    assert_eq!(
        unique.len(),
        rows.len(),
        "{table}: a key listed twice: {rows:?}"
    );
    let mut want: BTreeSet<&str> = Config::KEYS.into_iter().collect();
    if with_others {
        want.extend(OTHER_KEYS);
    }
    if with_others || with_retry {
        want.extend(RETRY_KEYS.iter().map(|k| k.name));
    }
    assert_eq!(unique, want, "{table}");
}

#[test]
fn the_config_docs_table_lists_every_builder_key() {
    let source = include_str!("../breaker-core/src/config/settings.rs");
    let header = "| key (builder method) |";
    let rows = first_column(source, "///", header);
    assert_lists_the_keys("Config", &rows, false);
    for cells in self::rows(source, "///", header) {
        let key = cells[0].split('`').next().unwrap();
        let method = cells[0].split('`').nth(2).unwrap_or(key);
        assert_eq!(method, info(key).method, "`{key}`'s builder method");
    }
}

#[test]
fn the_attribute_docs_table_lists_every_key() {
    // The attribute's own page, rendered on its re-export.
    let source = include_str!("../src/circuit_breaker.md");
    let header = "| key | type | default |";
    let rows = first_column(source, "", header);
    assert_lists_the_keys("the attribute's keys", &rows, true);
    assert_types(source, "", header, false);
}

#[test]
fn the_config_file_docs_table_lists_every_key_the_loader_takes() {
    let source = include_str!("../src/config_file/mod.rs");
    let rows = first_column(source, "//!", "| key | type |");
    assert_lists("config_file", &rows, false, true);
    assert_types(source, "//!", "| key | type |", true);
    let loader: Vec<String> = breakerbox::config_file::keys().map(str::to_owned).collect();
    assert_lists("config_file::keys()", &loader, false, true);
}
