//! `BREAKER_CONFIG` picks the file and `BREAKER_<TABLE>__<NAME>__<KEY>`
//! variables edit it; a bad variable refuses everything, naming the variable.
//! The environment is passed as pairs: no test touches the process env.
#![cfg(feature = "config")]

use std::path::PathBuf;

use breakerbox::config_file::{env_name, ErrorKind, Patch, Settings, Source};

/// A file in this test binary's scratch dir.
fn write_file(name: &str, text: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn open_ms(settings: &Settings, group: &str) -> u128 {
    settings
        .resolve(group, &Patch::new())
        .unwrap()
        .config
        .open()
        .as_millis()
}

/// The message of the error `vars` are refused with, checking that it names `var`.
fn refused(vars: &[(&str, &str)], kind: ErrorKind) -> String {
    let err = Settings::new().with_env(vars.iter().copied()).unwrap_err();
    assert_eq!(err.kind(), kind, "{err}");
    err.to_string()
}

fn assert_has(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "missing {part:?} in: {message}");
    }
}

#[test]
fn breaker_config_picks_the_file_and_variables_layer_over_it() {
    let path = write_file(
        "picked.toml",
        "[groups.search]\nopen_ms = 1000\n[groups.users]\nopen_ms = 2000\n",
    );
    let settings = Settings::from_env([
        ("PATH", "/usr/bin"),
        ("BREAKER_CONFIG", path.to_str().unwrap()),
        ("BREAKER_GROUPS__USERS__OPEN_MS", "2500"),
    ])
    .unwrap();
    assert_eq!(settings.file(), Some(path.as_path()));
    assert_eq!(open_ms(&settings, "search"), 1000);
    assert_eq!(open_ms(&settings, "users"), 2500);
}

#[test]
fn without_breaker_config_or_with_it_empty_there_is_no_file() {
    for vars in [vec![], vec![("BREAKER_CONFIG", "")]] {
        let settings = Settings::from_env(vars).unwrap();
        assert_eq!(settings.file(), None);
        assert_eq!(open_ms(&settings, "search"), 30_000);
    }
}

#[test]
fn a_bad_file_named_by_breaker_config_is_refused_naming_the_file_and_the_variable() {
    let path = write_file("bad.toml", "[groups.search]\nopen_ms = 0\n");
    let err = Settings::from_env([("BREAKER_CONFIG", path.to_str().unwrap())]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert_has(
        &err.to_string(),
        &[
            &format!("`{}` line 2", path.display()),
            "[groups.search] open_ms = 0 is refused: `open_ms` must be at least 1",
            "(the file `BREAKER_CONFIG` names)",
        ],
    );
    let err = Settings::from_env([("BREAKER_CONFIG", "/nonexistent/x.toml")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert_has(
        &err.to_string(),
        &["cannot read `/nonexistent/x.toml`", "BREAKER_CONFIG"],
    );
}

#[test]
fn a_bad_variable_refuses_a_good_file_and_every_good_variable() {
    let path = write_file("good.toml", "[groups.search]\nopen_ms = 1000\n");
    let err = Settings::from_env([
        ("BREAKER_CONFIG", path.to_str().unwrap()),
        ("BREAKER_GROUPS__SEARCH__OPEN_MS", "5000"),
        ("BREAKER_GROUPS__SEARCH__THRESHOLD", "three"),
    ])
    .unwrap_err();
    assert_has(
        &err.to_string(),
        &["nothing applied", "BREAKER_GROUPS__SEARCH__THRESHOLD"],
    );
}

#[test]
fn group_names_are_spelled_upper_case_with_punctuation_as_underscores() {
    assert_eq!(env_name("user-profile.v2"), "USER_PROFILE_V2");
    let settings = Settings::new()
        .with_env([
            ("BREAKER_GROUPS__USER_PROFILE_V2__OPEN_MS", "1234"),
            ("BREAKER_GROUPS__SEARCH__OPEN_MS", "4321"),
        ])
        .unwrap();
    assert_eq!(open_ms(&settings, "user-profile.v2"), 1234);
    assert_eq!(open_ms(&settings, "Search"), 4321);
    assert_eq!(open_ms(&settings, "user-profile-v3"), 30_000);
}

#[test]
fn a_name_may_hold_double_underscores_since_the_key_is_after_the_last() {
    let settings = Settings::new()
        .with_env([("BREAKER_GROUPS__A__B__OPEN_MS", "77")])
        .unwrap();
    assert_eq!(open_ms(&settings, "a__b"), 77);
}

#[test]
fn table_and_key_are_matched_ignoring_case() {
    let settings = Settings::new()
        .with_env([("BREAKER_groups__search__open_ms", "99")])
        .unwrap();
    assert_eq!(open_ms(&settings, "search"), 99);
}

#[test]
fn a_template_variable_edits_the_template_of_that_name() {
    let text =
        "[templates.flaky-ish]\nwindow_ms = 60_000\n[groups.search]\ntemplate = \"flaky-ish\"\n";
    let settings = Settings::from_toml_str(text, "f.toml")
        .unwrap()
        .with_env([("BREAKER_TEMPLATES__FLAKY_ISH__MIN_CALLS", "3")])
        .unwrap();
    let resolved = settings.resolve("search", &Patch::new()).unwrap();
    assert_eq!(resolved.config.min_calls(), Some(3));
    assert_eq!(
        resolved.settings.get("min_calls").unwrap().source,
        Source::Env {
            var: "BREAKER_TEMPLATES__FLAKY_ISH__MIN_CALLS".into()
        }
    );
}

#[test]
fn breaker_config_and_other_breaker_names_without_double_underscores_are_not_ours() {
    let settings = Settings::new()
        .with_env([
            ("BREAKER_CONFIG", "/not/read/by/with_env.toml"),
            ("BREAKER_LOG", "debug"),
            ("BREAKERS__X__Y", "whatever"),
            ("MY_BREAKER_GROUPS__SEARCH__OPEN_MS", "1"),
        ])
        .unwrap();
    assert_eq!(settings, Settings::new());
}

#[test]
fn a_malformed_name_shows_the_scheme() {
    let scheme = "`BREAKER_DEFAULTS__<KEY>`, `BREAKER_TEMPLATES__<NAME>__<KEY>` or `BREAKER_GROUPS__<NAME>__<KEY>`";
    for (var, what) in [
        ("BREAKER_GROUPS__OPEN_MS", "missing the NAME or the KEY"),
        ("BREAKER_GROUPS__SEARCH__", "missing the NAME or the KEY"),
        (
            "BREAKER_TEMPLATES____OPEN_MS",
            "missing the NAME or the KEY",
        ),
        (
            "BREAKER_DEFAULTS__SEARCH__OPEN_MS",
            "[defaults] has no NAME",
        ),
    ] {
        let msg = refused(&[(var, "1")], ErrorKind::BadVariable);
        assert_has(&msg, &[&format!("variable `{var}`: {what}"), scheme]);
    }
}

#[test]
fn an_unknown_table_suggests_the_nearest() {
    let msg = refused(
        &[("BREAKER_GROUP__SEARCH__OPEN_MS", "1")],
        ErrorKind::BadVariable,
    );
    assert_has(
        &msg,
        &["variable `BREAKER_GROUP__SEARCH__OPEN_MS`: unknown table `GROUP` (did you mean `GROUPS`?);"],
    );
}

#[test]
fn an_unknown_key_lists_the_allowed_keys_and_suggests_the_nearest() {
    let msg = refused(&[("BREAKER_DEFAULTS__OPEN", "1")], ErrorKind::UnknownKey);
    assert_has(
        &msg,
        &[
            "variable `BREAKER_DEFAULTS__OPEN`: unknown key `OPEN` (did you mean `open_ms`?);",
            "allowed keys (upper-case in the name): `threshold`, `window_ms`",
            "`probe_timeout_ms`",
        ],
    );
    let msg = refused(
        &[("BREAKER_GROUPS__SEARCH__TEMPLATE", "flaky")],
        ErrorKind::UnknownKey,
    );
    assert_has(
        &msg,
        &["a group's template is chosen in the file, not by a variable"],
    );
}

#[test]
fn a_value_that_does_not_parse_names_the_variable_the_value_and_the_type() {
    for (var, value, takes) in [
        (
            "BREAKER_GROUPS__SEARCH__OPEN_MS",
            "5 s",
            "a duration like \"30s\", \"250ms\" or \"1m30s\"",
        ),
        (
            "BREAKER_DEFAULTS__THRESHOLD",
            "-1",
            "a whole number from 1 to 1048575 (u32)",
        ),
        ("BREAKER_DEFAULTS__FAILURE_RATE", "half", "a number (f64)"),
    ] {
        let msg = refused(&[(var, value)], ErrorKind::WrongType);
        let key = var.rsplit("__").next().unwrap().to_ascii_lowercase();
        assert_has(
            &msg,
            &[&format!(
                "variable `{var}`: `{value}` is not a value for `{key}`, which takes {takes}"
            )],
        );
    }
}

#[test]
fn a_value_the_builder_refuses_names_the_variable_and_the_rule() {
    let msg = refused(
        &[("BREAKER_GROUPS__SEARCH__FAILURE_RATE", "1.5")],
        ErrorKind::Refused,
    );
    assert_has(
        &msg,
        &["variable `BREAKER_GROUPS__SEARCH__FAILURE_RATE`: `1.5` is refused: `failure_rate` must be above 0.0 and at most 1.0"],
    );
}

#[test]
fn a_template_variable_must_name_a_template_of_the_file() {
    let msg = refused(
        &[("BREAKER_TEMPLATES__FLAKY__MIN_CALLS", "3")],
        ErrorKind::BadVariable,
    );
    assert_has(
        &msg,
        &["variable `BREAKER_TEMPLATES__FLAKY__MIN_CALLS`: no template of the file is named `FLAKY`", "the file defines no template"],
    );
}

#[test]
fn two_variables_for_one_key_of_one_table_are_refused() {
    let msg = refused(
        &[
            ("BREAKER_GROUPS__SEARCH__OPEN_MS", "1"),
            ("BREAKER_groups__search__open_ms", "2"),
        ],
        ErrorKind::BadVariable,
    );
    assert_has(
        &msg,
        &["variable `BREAKER_groups__search__open_ms`: `open_ms` of the same table is also set by `BREAKER_GROUPS__SEARCH__OPEN_MS`"],
    );
}

#[test]
fn a_variable_that_could_mean_two_groups_of_the_file_is_refused() {
    let text = "[groups.user-profile]\nopen_ms = 1\n[groups.user_profile]\nopen_ms = 2\n";
    let err = Settings::from_toml_str(text, "f.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__USER_PROFILE__OPEN_MS", "3")])
        .unwrap_err();
    assert_has(
        &err.to_string(),
        &["`USER_PROFILE` could be any of the groups `user-profile`, `user_profile` of the file"],
    );
}
