//! `jitter` from a file or a variable, judged by the builder's rule.
#![cfg(feature = "config")]

use breakerbox::config_file::{ErrorKind, Patch, Settings};

#[test]
fn a_file_and_a_variable_set_the_jitter() {
    let text = "[defaults]\njitter = 0.2\n[groups.search]\njitter = 0.1\n";
    let settings = Settings::from_toml_str(text, "app.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__USERS__JITTER", "0.3")])
        .unwrap();
    let jitter = |group| {
        settings
            .resolve(group, &Patch::new())
            .unwrap()
            .config
            .jitter()
    };
    assert_eq!(jitter("search"), 0.1);
    assert_eq!(jitter("users"), 0.3);
    assert_eq!(jitter("other"), 0.2);
}

#[test]
fn a_jitter_of_one_or_more_is_refused_by_the_rule() {
    let err = Settings::from_toml_str("[defaults]\njitter = 1.0\n", "app.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(
        err.to_string().contains(
            "[defaults] jitter = 1.0 is refused: `jitter` must be at least 0.0 and below 1.0"
        ),
        "{err}"
    );
    let err = Settings::new()
        .with_env([("BREAKER_DEFAULTS__JITTER", "-0.5")])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(
        err.to_string().contains("BREAKER_DEFAULTS__JITTER"),
        "{err}"
    );
}
