//! A bad file is refused whole, with a message naming the file, the line, the
//! table and key, the value, and what is allowed; nothing of it applies.
#![cfg(feature = "config")]

use breakerbox::config_file::{ErrorKind, Patch, Settings, Source, Value};

/// The error a file refused with, after checking that it was refused.
fn refused(text: &str) -> (ErrorKind, String) {
    let err = Settings::from_toml_str(text, "conf/staging.toml").unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("breaker configuration refused, nothing applied: "),
        "{message}"
    );
    (err.kind(), message)
}

fn assert_has(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "missing {part:?} in: {message}");
    }
}

#[test]
fn an_unknown_key_lists_the_allowed_keys_and_suggests_the_nearest() {
    let (kind, msg) = refused("[groups.search]\nopen_ms = 1000\ntreshold = 3\n");
    assert_eq!(kind, ErrorKind::UnknownKey);
    assert_has(
        &msg,
        &[
            "`conf/staging.toml` line 3",
            "[groups.search] unknown key `treshold` (did you mean `threshold`?);",
            "allowed keys: `threshold`, `window_ms`, `window_calls`, `failure_rate`, `min_calls`, \
             `slow_call_ms`, `slow_call_rate`, `open_ms`, `half_open_probes`, \
             `successes_to_close`, `backoff`, `max_open_ms`, `probe_timeout_ms`, `timeout_ms`, \
             `max_concurrent`, `latency_p99_ms`, `ramp_ms`, `jitter`, `shadow`, `histogram_ms`, \
             `systemic_share`, `max_open_keys`, `throttle`, `throttle_window_ms`, `throttle_max_reject`, `throttle_min_rps`, \
             `max_hold_ms`, `abandoned`, `retry`, `retry_delay_ms`, `retry_max_delay_ms`, `retry_deadline_ms`, \
             `retry_budget_ratio`, `retry_budget_floor`, and `template`",
        ],
    );
}

#[test]
fn attribute_keys_that_configure_no_breaker_are_unknown_in_a_file() {
    for key in [
        "fallback",
        "is_failure",
        "registry",
        "crate",
        "group",
        "idempotent",
    ] {
        let (kind, msg) = refused(&format!("[defaults]\n{key} = \"x\"\n"));
        assert_eq!(kind, ErrorKind::UnknownKey, "{key}");
        assert_has(&msg, &[&format!("[defaults] unknown key `{key}`")]);
    }
}

#[test]
fn a_part_of_a_key_suggests_the_key_containing_it() {
    let (_, msg) = refused("[templates.slow]\nprobe_timeout = 10\n");
    assert_has(
        &msg,
        &["[templates.slow] unknown key `probe_timeout` (did you mean `probe_timeout_ms`?);"],
    );
    let (_, msg) = refused("[templates.slow]\ntimeout = 10\n");
    assert_has(
        &msg,
        &["[templates.slow] unknown key `timeout` (did you mean `timeout_ms`?);"],
    );
}

#[test]
fn only_a_group_may_name_a_template() {
    let (kind, msg) = refused("[templates.a]\nopen_ms = 1\n[templates.b]\ntemplate = \"a\"\n");
    assert_eq!(kind, ErrorKind::UnknownKey);
    assert_has(
        &msg,
        &[
            "line 4",
            "[templates.b] unknown key `template`",
            "only a [groups.NAME] table may name a template",
        ],
    );
}

#[test]
fn an_unknown_table_names_the_tables_a_file_holds() {
    let (kind, msg) = refused("[group.search]\nopen_ms = 1000\n");
    assert_eq!(kind, ErrorKind::UnknownTable);
    assert_has(
        &msg,
        &[
            "line 1",
            "unknown table `[group]` (did you mean `groups`?);",
            "`[defaults]`, `[templates.NAME]`, `[groups.NAME]`",
        ],
    );
}

#[test]
fn a_key_above_every_table_is_an_unknown_key_that_says_where_keys_go() {
    let (kind, msg) = refused("open_ms = 1000\n[groups.search]\nthreshold = 3\n");
    assert_eq!(kind, ErrorKind::UnknownKey, "{msg}");
    assert_has(
        &msg,
        &[
            "line 1",
            "unknown top-level key `open_ms`; a key goes in a table: put `open_ms` under \
             [defaults] (every group) or [groups.NAME]",
        ],
    );
    assert!(!msg.contains("unknown table"), "{msg}");
    let (kind, msg) = refused("colour = 3\n");
    assert_eq!(kind, ErrorKind::UnknownKey, "{msg}");
    assert_has(
        &msg,
        &["unknown top-level key `colour`; a file holds only the tables `[defaults]`"],
    );
}

#[test]
fn a_range_in_a_message_is_the_range_the_key_accepts() {
    for (line, takes) in [
        (
            "window_ms = 1.5",
            "a whole number from 10 to 18446744073709551615 (u64)",
        ),
        ("window_calls = -1", "a whole number from 1 to 65536 (u32)"),
        (
            "half_open_probes = \"2\"",
            "a whole number from 1 to 1023 (u32)",
        ),
        (
            "max_open_ms = \"x\"",
            "a whole number from 1 to 18446744073709551615 (u64)",
        ),
    ] {
        let (kind, msg) = refused(&format!("[defaults]\n{line}\n"));
        assert_eq!(kind, ErrorKind::WrongType, "{line}");
        assert_has(&msg, &[takes]);
    }
    // The ends of each range are accepted, and one past them refused.
    for (key, low, high) in [("open_ms", 1u64, u64::MAX), ("window_calls", 1, 65_536)] {
        let file = |value: u128| format!("[groups.g]\n{key} = {value}\n");
        let accepted = |value| Settings::from_toml_str(&file(value), "r.toml").is_ok();
        let (low, high) = (u128::from(low), u128::from(high));
        assert!(accepted(low) && accepted(high), "{key}");
        assert!(!accepted(low - 1) && !accepted(high + 1), "{key}");
    }
}

#[test]
fn an_unknown_template_names_the_templates_of_the_file() {
    let text = "[templates.flaky]\nmin_calls = 5\n[groups.search]\ntemplate = \"flakey\"\n";
    let (kind, msg) = refused(text);
    assert_eq!(kind, ErrorKind::UnknownTemplate);
    assert_has(
        &msg,
        &[
            "`conf/staging.toml` line 4",
            "[groups.search] template = \"flakey\": no template of that name (did you mean `flaky`?);",
            "templates in the file: `flaky`",
        ],
    );
}

#[test]
fn a_value_of_the_wrong_type_says_what_the_key_takes() {
    for (line, takes) in [
        (
            "open_ms = true",
            "a duration like \"30s\", \"250ms\" or \"1m30s\" (units `h`, `m`, `s`, `ms`, \
             `us`), or whole milliseconds: a whole number from 1 to 18446744073709551615 (u64)",
        ),
        ("threshold = -3", "a whole number from 1 to 1048575 (u32)"),
        ("threshold = 2.5", "a whole number from 1 to 1048575 (u32)"),
        (
            "min_calls = 5_000_000_000",
            "a whole number from 1 to 4294967295 (u32)",
        ),
        ("backoff = true", "a number (f64), like 0.5 or 2"),
    ] {
        let (kind, msg) = refused(&format!("[defaults]\n{line}\n"));
        assert_eq!(kind, ErrorKind::WrongType, "{line}");
        let key = line.split(' ').next().unwrap();
        assert_has(
            &msg,
            &[
                "`conf/staging.toml` line 2",
                &format!("[defaults] {line}: `{key}` takes {takes}"),
            ],
        );
    }
}

#[test]
fn a_value_the_builder_refuses_gives_the_builders_rule_even_in_an_unused_template() {
    for (table, line, rule) in [
        (
            "defaults",
            "threshold = 0",
            "`threshold` must be at least 1",
        ),
        (
            "templates.unused",
            "failure_rate = 1.5",
            "`failure_rate` must be above 0.0 and at most 1.0",
        ),
        (
            "groups.search",
            "backoff = 0.5",
            "`backoff` must be at least 1.0",
        ),
        (
            "groups.search",
            "window_ms = 5",
            "`window_ms` must be at least 10",
        ),
        (
            "templates.unused",
            "window_calls = 100_000",
            "`window_calls` must be at most 65536",
        ),
        (
            "defaults",
            "backoff = nan",
            "`backoff` must be a finite number",
        ),
        (
            "groups.search",
            "throttle = 0.5",
            "`throttle` must be a finite number of at least 1.0",
        ),
        (
            "templates.unused",
            "throttle_max_reject = 1.0",
            "`throttle_max_reject` must be above 0.0 and below 1.0",
        ),
        (
            "defaults",
            "throttle_window_ms = 0",
            "`throttle_window_ms` must be at least 10",
        ),
        (
            "groups.search",
            "systemic_share = 1.5",
            "`systemic_share` must be above 0.0 and at most 1.0",
        ),
        (
            "defaults",
            "max_open_keys = 0.0",
            "`max_open_keys` must be above 0.0 and at most 1.0",
        ),
    ] {
        let (kind, msg) = refused(&format!("[{table}]\n{line}\n"));
        assert_eq!(kind, ErrorKind::Refused, "{line}");
        assert_has(
            &msg,
            &["line 2", &format!("[{table}] {line} is refused: {rule}")],
        );
    }
}

#[test]
fn values_that_need_another_layer_are_not_refused_alone() {
    // A rate needs a window, a cap needs a short enough `open_ms`: some other
    // layer may bring either, so the file is taken and the group is judged whole.
    let text = "[templates.rates]\nfailure_rate = 0.2\nmin_calls = 100_000\n\
                throttle_max_reject = 0.5\n[defaults]\nmax_open_ms = 1000\n";
    let settings = Settings::from_toml_str(text, "f.toml").unwrap();
    assert!(settings.template("rates").is_some());
}

#[test]
fn text_that_is_not_toml_is_refused_with_the_line() {
    let (kind, msg) = refused("[defaults]\nopen_ms = = 3\n");
    assert_eq!(kind, ErrorKind::Syntax);
    assert_has(&msg, &["`conf/staging.toml` is not valid TOML", "line 2"]);
}

#[test]
fn a_syntax_error_on_a_long_line_gives_a_short_message() {
    // A 48 MiB line with a syntax error at its end: the message quotes a few
    // characters around the error, not the line.
    let mut text = String::from("[defaults]\nopen_ms = ");
    text.extend(std::iter::repeat_n('7', 48 << 20));
    text.push_str(" = 3\n");
    let (kind, msg) = refused(&text);
    assert_eq!(kind, ErrorKind::Syntax);
    assert!(msg.len() < 500, "{} bytes: {}", msg.len(), &msg[..1_000]);
    assert_has(
        &msg,
        &[
            "`conf/staging.toml` is not valid TOML: line 2, column 50331660",
            "(near `…7777777777",
            "7777777777 = 3`)",
        ],
    );
}

#[test]
fn a_syntax_error_names_its_line_and_column_and_quotes_the_text_near_it() {
    let (_, msg) = refused("[defaults]\nthreshold = = 3\n");
    assert_has(
        &msg,
        &["`conf/staging.toml` is not valid TOML: line 2, column 13 (near `threshold = = 3`)"],
    );
}

/// A file in the temporary directory holding `contents`, removed on drop.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str, contents: &[u8]) -> Self {
        let path = std::env::temp_dir().join(format!("{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_file_larger_than_one_mib_is_refused_naming_the_file_and_the_cap() {
    let mut text = b"[defaults]\nopen_ms = 3\n".to_vec();
    text.resize(1 << 20, b'#');
    text.push(b'\n');
    let large = TempFile::new("large.toml", &text);
    let err = Settings::from_file(&large.0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    let message = err.to_string();
    assert_has(
        &message,
        &[&format!("`{}` is larger than 1 MiB", large.0.display())],
    );

    // At the cap, it is read.
    text.truncate(1 << 20);
    let at_cap = TempFile::new("at-cap.toml", &text);
    let settings = Settings::from_file(&at_cap.0).unwrap();
    assert!(settings.defaults().get("open_ms").is_some());
}

#[cfg(unix)]
#[test]
fn an_endless_file_is_refused_at_once() {
    let err = Settings::from_file("/dev/zero").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert_has(&err.to_string(), &["`/dev/zero` is larger than 1 MiB"]);
    let err = Settings::from_env([("BREAKER_CONFIG", "/dev/zero")]).unwrap_err();
    assert_has(&err.to_string(), &["`/dev/zero` is larger than 1 MiB"]);
}

#[test]
fn a_file_that_is_not_utf8_is_refused_naming_the_file() {
    let bad = TempFile::new("latin1.toml", b"[defaults]\n# caf\xe9\n");
    let err = Settings::from_file(&bad.0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert_has(
        &err.to_string(),
        &[&format!("cannot read `{}`", bad.0.display())],
    );
}

#[test]
fn a_table_written_as_a_value_is_refused() {
    let (kind, msg) = refused("defaults = 3\n");
    assert_eq!(kind, ErrorKind::Syntax);
    assert_has(
        &msg,
        &[
            "line 1",
            "`defaults` must be a table, like `[defaults]`; found the integer `3`",
        ],
    );
    let (_, msg) = refused("[groups]\nsearch = 3\n");
    assert_has(&msg, &["line 2", "`groups.search` must be a table, like `[groups.search]` with keys under it; found the integer `3`"]);
}

#[test]
fn a_missing_file_names_the_file() {
    let err = Settings::from_file("/nonexistent/breaker.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert!(
        err.to_string()
            .contains("cannot read `/nonexistent/breaker.toml`"),
        "{err}"
    );
}

#[test]
fn a_group_whose_composed_config_the_builder_refuses_names_every_source_involved() {
    let text = "[defaults]\nwindow_calls = 10\n[groups.search]\nmin_calls = 20\n";
    let settings = Settings::from_toml_str(text, "f.toml").unwrap();
    let err = settings.resolve("search", &Patch::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert_has(
        &err.to_string(),
        &[
            "group `search`: `min_calls` must be at most `window_calls`, or the window never judges",
            "`window_calls = 10` (`f.toml` line 2, [defaults])",
            "`min_calls = 20` (`f.toml` line 4, [groups.search])",
        ],
    );
}

#[test]
fn a_window_key_set_for_a_consecutive_group_itself_is_refused_with_its_source() {
    let text = "[groups.search]\nmin_calls = 20\n";
    let settings = Settings::from_toml_str(text, "f.toml").unwrap();
    let err = settings.resolve("search", &Patch::new()).unwrap_err();
    assert_has(
        &err.to_string(),
        &[
            "group `search`: `min_calls` needs a window",
            "`min_calls = 20` (`f.toml` line 2, [groups.search])",
        ],
    );
    // With a window from the attribute the same file is fine.
    let mut literals = Patch::new();
    literals
        .set("window_ms", Value::U64(10_000), Source::Attribute)
        .unwrap();
    assert_eq!(
        settings
            .resolve("search", &literals)
            .unwrap()
            .config
            .min_calls(),
        Some(20)
    );
}

#[test]
fn resolving_every_declared_group_is_all_or_nothing() {
    let text = "[groups.search]\nmin_calls = 20\n[groups.users]\nopen_ms = 1000\n";
    let settings = Settings::from_toml_str(text, "f.toml").unwrap();
    let empty = Patch::new();
    let err = settings
        .resolve_all([("users", &empty), ("search", &empty)])
        .unwrap_err();
    assert!(err.to_string().contains("group `search`"), "{err}");
    let ok = settings.resolve_all([("users", &empty)]).unwrap();
    assert_eq!(ok[0].0, "users");
    assert_eq!(ok[0].1.config.open().as_millis(), 1000);
}

#[test]
fn groups_no_code_declares_are_listed_with_where_they_were_named() {
    let text = "[groups.search]\nopen_ms = 1000\n[groups.serach]\nopen_ms = 1000\n";
    let settings = Settings::from_toml_str(text, "f.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__USRES__OPEN_MS", "5")])
        .unwrap();
    let undeclared = settings.undeclared(["search", "users"]);
    let shown: Vec<String> = undeclared
        .iter()
        .map(|(name, source)| format!("{name}: {source}"))
        .collect();
    assert_eq!(
        shown,
        [
            "serach: `f.toml` line 3, [groups.serach]",
            "USRES: variable `BREAKER_GROUPS__USRES__OPEN_MS`",
        ]
    );
}

#[test]
fn a_table_whose_own_values_contradict_each_other_is_refused_with_both_sources() {
    for (table, lines, rule) in [
        (
            "groups.search",
            "window_ms = 10_000\nwindow_calls = 100\n",
            "set either `window_ms` (a time window) or `window_calls` (a count window), not both",
        ),
        (
            "templates.t",
            "threshold = 3\nwindow_ms = 10_000\n",
            "`threshold` counts consecutive failures",
        ),
        (
            "defaults",
            "window_calls = 10\nmin_calls = 20\n",
            "`min_calls` must be at most `window_calls`",
        ),
        (
            "defaults",
            "open_ms = 10_000\nmax_open_ms = 5_000\n",
            "`max_open_ms` must be at least `open_ms`",
        ),
    ] {
        let (kind, msg) = refused(&format!("[{table}]\n{lines}"));
        assert_eq!(kind, ErrorKind::Refused, "{lines}");
        let first = lines.lines().next().unwrap().split(' ').next().unwrap();
        let second = lines.lines().nth(1).unwrap().split(' ').next().unwrap();
        assert_has(
            &msg,
            &[
                &format!("[{table}] contradicts itself: {rule}"),
                &format!("`{first} = "),
                &format!("(`conf/staging.toml` line 2, [{table}])"),
                &format!("`{second} = "),
                &format!("(`conf/staging.toml` line 3, [{table}])"),
            ],
        );
    }
}

#[test]
fn a_variable_that_makes_its_table_contradict_itself_is_refused_naming_it() {
    let settings = Settings::from_toml_str("[defaults]\nwindow_calls = 10\n", "f.toml").unwrap();
    let err = settings
        .with_env([("BREAKER_DEFAULTS__MIN_CALLS", "20")])
        .unwrap_err();
    assert_has(
        &err.to_string(),
        &[
            "[defaults] contradicts itself: `min_calls` must be at most `window_calls`",
            "`window_calls = 10` (`f.toml` line 2, [defaults])",
            "`min_calls = 20` (variable `BREAKER_DEFAULTS__MIN_CALLS`)",
        ],
    );
}

#[test]
fn a_bad_retry_key_or_value_is_refused_naming_it_as_the_attribute_would() {
    let (kind, msg) = refused("[groups.search]\nrety = 2\n");
    assert_eq!(kind, ErrorKind::UnknownKey);
    assert_has(
        &msg,
        &["line 2", "unknown key `rety` (did you mean `retry`?);"],
    );
    let (_, msg) = refused("[defaults]\nretry_dealy_ms = 20\n");
    assert_has(&msg, &["(did you mean `retry_delay_ms`?)"]);

    let (kind, msg) = refused("[groups.search]\nretry_budget_ratio = 1.5\n");
    assert_eq!(kind, ErrorKind::Refused);
    assert_has(
        &msg,
        &[
            "line 2",
            "[groups.search] retry_budget_ratio = 1.5 is refused: `retry_budget_ratio` must be \
             from 0.0 to 1.0",
        ],
    );
    let (kind, msg) = refused("[groups.search]\nretry = -1\n");
    assert_eq!(kind, ErrorKind::WrongType);
    assert_has(
        &msg,
        &["`retry` takes a whole number from 0 to 4294967295 (u32)"],
    );
    let (kind, msg) = refused("[templates.t]\nretry_max_delay_ms = \"soon\"\n");
    assert_eq!(kind, ErrorKind::WrongType);
    assert_has(
        &msg,
        &["[templates.t] retry_max_delay_ms = \"soon\": `retry_max_delay_ms` takes a duration"],
    );

    let err = Settings::new()
        .with_env([("BREAKER_GROUPS__SEARCH__RETRY_BUDGET_RATIO", "-0.5")])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert_has(
        &err.to_string(),
        &["variable `BREAKER_GROUPS__SEARCH__RETRY_BUDGET_RATIO`: `-0.5` is refused"],
    );
    let settings = Settings::from_toml_str(
        "[groups.search]\nretry = 0\nretry_deadline_ms = \"1.5s\"\n",
        "ok.toml",
    )
    .unwrap();
    let search = settings.resolve("search", &Patch::new()).unwrap();
    assert_eq!(search.retry.overriding.retries, Some(0));
    assert_eq!(
        search.retry.overriding.deadline,
        Some(std::time::Duration::from_millis(1_500))
    );
    assert_eq!(
        search.config,
        breakerbox::Config::DEFAULT,
        "no breaker key set"
    );
}
