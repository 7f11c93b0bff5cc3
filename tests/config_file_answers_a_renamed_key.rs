//! A file or a variable that names a key by its former name is refused, as
//! any unknown key is, and the refusal names the key to write instead.
#![cfg(feature = "config")]

use breakerbox::config_file::{ErrorKind, Settings};

#[test]
fn a_file_key_by_its_former_name_is_answered_with_its_name() {
    for (former, now) in [
        ("retry_backoff_ms", "retry_delay_ms"),
        ("retry_cap_ms", "retry_max_delay_ms"),
    ] {
        let file = format!("[groups.search]\n{former} = 20\n");
        let err = Settings::from_toml_str(&file, "app.toml").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownKey, "{err}");
        let message = err.to_string();
        assert!(
            message.contains(&format!("unknown key `{former}` (renamed to `{now}`)")),
            "{message}"
        );
        // The new name is taken.
        let file = format!("[groups.search]\n{now} = 20\n");
        assert!(Settings::from_toml_str(&file, "app.toml").is_ok());
    }
}

#[test]
fn a_variable_by_its_former_name_is_answered_with_its_name() {
    let err = Settings::new()
        .with_env([("BREAKER_GROUPS__SEARCH__RETRY_CAP_MS", "20")])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownKey, "{err}");
    assert!(
        err.to_string()
            .contains("(renamed to `retry_max_delay_ms`)"),
        "{err}"
    );
}

#[test]
fn a_former_name_the_loader_never_took_gets_no_hint_of_a_key_it_does_not_take() {
    // `max_keys` is the former name of the attribute's `key_capacity`, which
    // no file sets: the loader answers it as any unknown key.
    let err = Settings::from_toml_str("[defaults]\nmax_keys = 5\n", "app.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownKey, "{err}");
    assert!(!err.to_string().contains("renamed"), "{err}");
}
