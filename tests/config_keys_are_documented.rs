//! Every docs table of configuration keys lists exactly the keys of the table
//! the builder, the attribute and the loader are made from, each once.

use std::collections::BTreeSet;

use breakerbox::Config;

/// The attribute keys that are not configuration keys.
const OTHER_KEYS: [&str; 16] = [
    "group",
    "fallback",
    "fallback_on",
    "is_failure",
    "registry",
    "crate",
    "timer",
    "key",
    "max_keys",
    "retry",
    "idempotent",
    "retry_backoff_ms",
    "retry_cap_ms",
    "retry_deadline_ms",
    "retry_budget_ratio",
    "retry_budget_floor",
];

/// The first column of every row of the markdown table that follows `header`
/// in `source`, a doc comment whose lines start with `prefix`.
fn first_column(source: &str, prefix: &str, header: &str) -> Vec<String> {
    let mut lines = source
        .lines()
        .map(str::trim_start)
        .skip_while(|l| !l.starts_with(&format!("{prefix} {header}")));
    assert!(lines.next().is_some(), "no table headed `{header}`");
    lines
        .skip(1) // |---|
        .map_while(|l| l.strip_prefix(prefix)?.trim().strip_prefix("| `"))
        .map(|row| row.split('`').next().unwrap().to_owned())
        .collect()
}

/// The attribute keys of a group's retries, which a configuration file and
/// the variables take too (all but `idempotent`).
const RETRY_KEYS: [&str; 6] = [
    "retry",
    "retry_backoff_ms",
    "retry_cap_ms",
    "retry_deadline_ms",
    "retry_budget_ratio",
    "retry_budget_floor",
];

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
    if with_retry {
        want.extend(RETRY_KEYS);
    }
    assert_eq!(unique, want, "{table}");
}

#[test]
fn the_config_docs_table_lists_every_builder_key() {
    let source = include_str!("../breaker-core/src/config/settings.rs");
    let rows = first_column(source, "///", "| key (builder method) |");
    assert_lists_the_keys("Config", &rows, false);
}

#[test]
fn the_attribute_docs_table_lists_every_key() {
    // The attribute's own page: the doc comment on its re-export.
    let rows = first_column(
        include_str!("../src/lib.rs"),
        "///",
        "| key | type | default |",
    );
    assert_lists_the_keys("the attribute's keys", &rows, true);
}

#[test]
fn the_config_file_docs_table_lists_every_key_the_loader_takes() {
    let source = include_str!("../src/config_file/mod.rs");
    let rows = first_column(source, "//!", "| key | type |");
    assert_lists("config_file", &rows, false, true);
    let loader: Vec<String> = breakerbox::config_file::keys().map(str::to_owned).collect();
    assert_lists("config_file::keys()", &loader, false, true);
}
