//! Breaker tables inside the app's own TOML file are read with the file's
//! name and each key's line, as a file of their own is.
#![cfg(feature = "config")]

use breakerbox::config_file::{ErrorKind, Patch, Settings, Source, Value};

/// An app's configuration: its own tables, then the breaker's.
const APP: &str = r#"# app.toml
[server]
listen = "0.0.0.0:8080"
workers = [1, 2, 3]

[database]
url = "postgres://db/app"

[breaker.defaults]
open_ms = "10s"

[breaker.groups.search]
threshold = 4
"#;

#[test]
fn a_typo_in_the_apps_own_file_is_reported_at_its_line_not_the_tables() {
    let text = APP.replace("threshold = 4", "treshold = 4");
    let err = Settings::from_toml_str_at(&text, "app.toml", "breaker").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownKey);
    let message = err.to_string();
    assert!(
        message.contains("`app.toml` line 13: [breaker.groups.search] unknown key `treshold`"),
        "{message}"
    );
}

#[test]
fn values_and_overrides_name_the_apps_file_and_the_keys_line() {
    let settings = Settings::from_toml_str_at(APP, "app.toml", "breaker").unwrap();
    let mut literals = Patch::new();
    literals
        .set("threshold", Value::U32(3), Source::Attribute)
        .unwrap();
    let search = settings.resolve("search", &literals).unwrap();
    assert_eq!(search.config.threshold(), 4);
    assert_eq!(search.config.open().as_secs(), 10);
    assert_eq!(
        search.overrides[0].to_string(),
        "the attribute's `threshold = 3` is overridden by `threshold = 4` \
         (`app.toml` line 13, [breaker.groups.search])"
    );
    assert_eq!(
        search.settings.get("open_ms").unwrap().source,
        Source::File {
            path: std::path::Path::new("app.toml").into(),
            table: "breaker.defaults".into(),
            line: 10,
        }
    );
}

#[test]
fn an_app_file_without_the_breaker_table_configures_nothing() {
    let settings =
        Settings::from_toml_str_at("[server]\nlisten = \"x\"\n", "app.toml", "breaker").unwrap();
    assert_eq!(
        settings.resolve("search", &Patch::new()).unwrap().config,
        breakerbox::Config::DEFAULT
    );
    let err = Settings::from_toml_str_at("breaker = 3\n", "app.toml", "breaker").unwrap_err();
    assert!(err.to_string().contains("`app.toml` line 1"), "{err}");
}

/// Another format has no lines to give: it names the configuration as the
/// app names it.
#[cfg(feature = "serde")]
#[test]
fn another_format_names_the_configuration_it_was_read_from() {
    let json = serde_json::json!({"groups": {"search": {"treshold": 4}}});
    let err = Settings::from_deserializer(json, "app.json").unwrap_err();
    assert!(
        err.to_string()
            .contains("`app.json`: [groups.search] unknown key `treshold`"),
        "{err}"
    );
}

/// The app's own configuration in JSON, the breaker's object inside it.
#[cfg(feature = "json")]
const APP_JSON: &str = r#"{
  "server": { "listen": "0.0.0.0:8080", "workers": [1, 2, 3] },
  "database": { "url": "postgres://db/app", "pool": null },
  "breaker": {
    "defaults": {
      "open_ms": "10s"
    },
    "groups": {
      "search": {
        "threshold": 4
      }
    }
  }
}
"#;

#[cfg(feature = "json")]
#[test]
fn a_typo_in_the_apps_own_json_file_is_reported_at_its_line() {
    let text = APP_JSON.replace("\"threshold\"", "\"treshold\"");
    let err = Settings::from_json_str_at(&text, "app.json", "breaker").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownKey);
    let message = err.to_string();
    assert!(
        message.contains("`app.json` line 10: [breaker.groups.search] unknown key `treshold`"),
        "{message}"
    );
    let text = APP_JSON.replace("\"10s\"", "\"soon\"");
    let err = Settings::from_json_str_at(&text, "app.json", "breaker").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongType);
    assert!(
        err.to_string()
            .contains("`app.json` line 6: [breaker.defaults] open_ms = \"soon\""),
        "{err}"
    );
}

#[cfg(feature = "json")]
#[test]
fn values_and_overrides_name_the_apps_json_file_and_the_keys_line() {
    let settings = Settings::from_json_str_at(APP_JSON, "app.json", "breaker").unwrap();
    assert_eq!(settings.file(), Some(std::path::Path::new("app.json")));
    let mut literals = Patch::new();
    literals
        .set("threshold", Value::U32(3), Source::Attribute)
        .unwrap();
    let search = settings.resolve("search", &literals).unwrap();
    assert_eq!(search.config.threshold(), 4);
    assert_eq!(search.config.open().as_secs(), 10);
    assert_eq!(
        search.overrides[0].to_string(),
        "the attribute's `threshold = 3` is overridden by `threshold = 4` \
         (`app.json` line 10, [breaker.groups.search])"
    );
    assert_eq!(
        search.settings.get("open_ms").unwrap().source,
        Source::File {
            path: std::path::Path::new("app.json").into(),
            table: "breaker.defaults".into(),
            line: 6,
        }
    );
}

#[cfg(feature = "json")]
#[test]
fn an_app_json_file_without_the_breaker_object_configures_nothing() {
    let settings =
        Settings::from_json_str_at(r#"{"server": {"listen": "x"}}"#, "app.json", "breaker")
            .unwrap();
    assert_eq!(
        settings.resolve("search", &Patch::new()).unwrap().config,
        breakerbox::Config::DEFAULT
    );
    let err = Settings::from_json_str_at("{\n\"breaker\": 3}", "app.json", "breaker").unwrap_err();
    assert!(err.to_string().contains("`app.json` line 2"), "{err}");
    let err = Settings::from_json_str_at("{\n\"breaker\": {,}", "app.json", "breaker").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Syntax);
    assert!(
        err.to_string()
            .contains("`app.json` is not valid JSON: line 2"),
        "{err}"
    );
}
