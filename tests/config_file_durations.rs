//! The `*_ms` keys of a file and of the `BREAKER_` variables take a duration
//! (`"30s"`, `"250ms"`, `"1m30s"`) as well as whole milliseconds, and a bad
//! duration is refused naming where it was written and why.
#![cfg(feature = "config")]

use std::time::Duration;

use breakerbox::config_file::{ErrorKind, Patch, Settings};

fn resolved(settings: &Settings, group: &str) -> breakerbox::Config {
    settings.resolve(group, &Patch::new()).unwrap().config
}

#[test]
fn a_file_takes_durations_and_milliseconds_alike() {
    let text = "[defaults]\nopen_ms = \"1m30s\"\nmax_open_ms = \"2h\"\n\
                [groups.search]\nwindow_ms = \"10s\"\nslow_call_ms = \"250ms\"\n\
                probe_timeout_ms = \"1.5s\"\n\
                [groups.tail]\nwindow_ms = \"10s\"\nlatency_p99_ms = 40\n\
                [groups.plain]\nopen_ms = 2500\n";
    let settings = Settings::from_toml_str(text, "app.toml").unwrap();
    let search = resolved(&settings, "search");
    assert_eq!(search.open(), Duration::from_secs(90));
    assert_eq!(search.max_open(), Duration::from_secs(7200));
    assert_eq!(search.window(), Some(Duration::from_secs(10)));
    assert_eq!(search.slow_call(), Some(Duration::from_millis(250)));
    assert_eq!(search.probe_timeout(), Duration::from_millis(1500));
    assert_eq!(
        resolved(&settings, "tail").latency_p99(),
        Some(Duration::from_millis(40))
    );
    assert_eq!(
        resolved(&settings, "plain").open(),
        Duration::from_millis(2500)
    );
}

#[test]
fn a_variable_takes_durations_and_milliseconds_alike() {
    let settings = Settings::new()
        .with_env([
            ("BREAKER_DEFAULTS__OPEN_MS", "45s"),
            ("BREAKER_GROUPS__SEARCH__OPEN_MS", "750"),
            ("BREAKER_GROUPS__SEARCH__MAX_OPEN_MS", "1h30m"),
        ])
        .unwrap();
    let search = resolved(&settings, "search");
    assert_eq!(search.open(), Duration::from_millis(750));
    assert_eq!(search.max_open(), Duration::from_secs(5400));
    assert_eq!(resolved(&settings, "other").open(), Duration::from_secs(45));
}

/// Each bad duration, and what its refusal says beside the place.
const BAD: [(&str, &str); 8] = [
    ("", "an empty string is no duration"),
    (
        "30sec",
        "unknown unit `sec`; the units are `h`, `m`, `s`, `ms`, `us`",
    ),
    ("30d", "unknown unit `d`"),
    ("1m30", "`30` has no unit"),
    ("1.5ms", "not a whole number of milliseconds"),
    ("-5s", "expected a number at `-5s`"),
    ("99999999999999999999s", "longer than the longest duration"),
    ("1..5s", "`1..5s` is not a number of s"),
];

#[test]
fn a_bad_duration_in_a_file_names_the_file_line_key_and_reason() {
    for (text, says) in BAD {
        let file = format!("[groups.search]\nthreshold = 2\nopen_ms = \"{text}\"\n");
        let err = Settings::from_toml_str(&file, "conf/app.toml").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WrongType, "{text:?}: {err}");
        let msg = err.to_string();
        for part in [
            "`conf/app.toml` line 3",
            &format!(
                "[groups.search] open_ms = \"{text}\": `open_ms` takes a duration like \"30s\", \
                 \"250ms\" or \"1m30s\""
            ),
            says,
        ] {
            assert!(msg.contains(part), "{text:?}: missing {part:?} in {msg}");
        }
    }
}

#[test]
fn a_bad_duration_in_a_variable_names_the_variable_and_reason() {
    for (text, says) in BAD {
        let err = Settings::new()
            .with_env([("BREAKER_GROUPS__SEARCH__OPEN_MS", text)])
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WrongType, "{text:?}: {err}");
        let msg = err.to_string();
        for part in [
            "BREAKER_GROUPS__SEARCH__OPEN_MS",
            &format!("`{text}` is not a value for `open_ms`, which takes a duration like"),
            says,
        ] {
            assert!(msg.contains(part), "{text:?}: missing {part:?} in {msg}");
        }
    }
}

#[test]
fn a_quoted_number_without_a_unit_in_a_file_is_refused_and_an_integer_is_milliseconds() {
    for text in ["30", "30_000", " 250 ", "0"] {
        let file = format!("[groups.search]\nopen_ms = \"{text}\"\n");
        let err = Settings::from_toml_str(&file, "app.toml").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WrongType, "{text:?}: {err}");
        let msg = err.to_string();
        for part in [
            "`app.toml` line 2",
            &format!("`{}` has no unit", text.trim()),
            "write whole milliseconds as an integer, without quotes",
        ] {
            assert!(msg.contains(part), "{text:?}: missing {part:?} in {msg}");
        }
    }
    let settings = Settings::from_toml_str("[groups.search]\nopen_ms = 30\n", "app.toml").unwrap();
    assert_eq!(
        resolved(&settings, "search").open(),
        Duration::from_millis(30)
    );
}

#[test]
fn a_duration_the_rules_refuse_is_refused_by_the_rule() {
    let err = Settings::from_toml_str("[defaults]\nopen_ms = \"0s\"\n", "app.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(
        err.to_string().contains("`open_ms` must be at least 1"),
        "{err}"
    );
    let err = Settings::new()
        .with_env([("BREAKER_DEFAULTS__WINDOW_MS", "5ms")])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
}

#[test]
fn a_count_key_takes_no_duration() {
    let err = Settings::from_toml_str("[defaults]\nthreshold = \"3s\"\n", "app.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongType, "{err}");
    assert!(
        err.to_string().contains("`threshold` takes a whole number"),
        "{err}"
    );
}
