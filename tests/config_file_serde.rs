//! With feature `serde`, the breaker tables live inside an application's own
//! configuration (TOML, JSON, any self-describing format) and are read as a
//! file is: the same resolved configuration, the same refusals, the same
//! precedence under the `BREAKER_` variables.
#![cfg(feature = "serde")]

use std::time::Duration;

use breakerbox::config_file::{ErrorKind, Patch, Settings, Source};
use serde::Deserialize;

/// An application's own configuration, with the breaker tables under `breaker`.
#[derive(Deserialize)]
struct App {
    listen: String,
    breaker: Settings,
}

/// The same tables as a file of their own, inside an app's `config.toml`
/// under `[breaker]`, and as JSON.
const TABLES: &str = r#"[defaults]
open_ms = "10s"
jitter = 0.2

[templates.flaky]
window_ms = "30s"
failure_rate = 0.5
min_calls = 20

[groups.search]
template = "flaky"
open_ms = 30_000

[groups.billing]
threshold = 3
max_open_ms = "1m30s"
"#;

const APP_TOML: &str = r#"listen = "0.0.0.0:8080"

[breaker.defaults]
open_ms = "10s"
jitter = 0.2

[breaker.templates.flaky]
window_ms = "30s"
failure_rate = 0.5
min_calls = 20

[breaker.groups.search]
template = "flaky"
open_ms = 30_000

[breaker.groups.billing]
threshold = 3
max_open_ms = "1m30s"
"#;

const APP_JSON: &str = r#"{
  "listen": "0.0.0.0:8080",
  "breaker": {
    "defaults": { "open_ms": "10s", "jitter": 0.2 },
    "templates": { "flaky": { "window_ms": "30s", "failure_rate": 0.5, "min_calls": 20 } },
    "groups": {
      "search": { "template": "flaky", "open_ms": 30000 },
      "billing": { "threshold": 3, "max_open_ms": "1m30s" }
    }
  }
}"#;

/// A group's resolved configuration, printed: `Config` compares by its fields.
fn resolved(settings: &Settings, group: &str) -> String {
    format!(
        "{:?}",
        settings.resolve(group, &Patch::new()).unwrap().config
    )
}

fn assert_same_as_file(settings: &Settings) {
    let file = Settings::from_toml_str(TABLES, "breaker.toml").unwrap();
    for group in ["search", "billing", "declared-in-code-only"] {
        assert_eq!(resolved(settings, group), resolved(&file, group), "{group}");
    }
    assert_eq!(
        settings.groups().collect::<Vec<_>>(),
        file.groups().collect::<Vec<_>>()
    );
    let search = settings.resolve("search", &Patch::new()).unwrap().config;
    assert_eq!(search.open(), Duration::from_secs(30));
    assert_eq!(search.window(), Some(Duration::from_secs(30)));
}

#[test]
fn breaker_table_inside_an_app_toml_resolves_as_the_file_does() {
    let app: App = toml::from_str(APP_TOML).unwrap();
    assert_eq!(app.listen, "0.0.0.0:8080");
    assert_same_as_file(&app.breaker);
    assert_eq!(app.breaker.file(), None);
}

#[test]
fn breaker_table_inside_an_app_json_resolves_as_the_file_does() {
    let app: App = serde_json::from_str(APP_JSON).unwrap();
    assert_same_as_file(&app.breaker);
}

#[test]
fn sources_name_the_configuration_and_table_without_a_line() {
    let json = r#"{ "groups": { "search": { "open_ms": "5s" } } }"#;
    let settings =
        Settings::from_deserializer(&mut serde_json::Deserializer::from_str(json), "config.json")
            .unwrap();
    let resolved = settings.resolve("search", &Patch::new()).unwrap();
    let setting = resolved
        .settings
        .iter()
        .find(|s| s.key == "open_ms")
        .unwrap();
    assert_eq!(setting.source.to_string(), "`config.json`, [groups.search]");
    assert!(matches!(&setting.source, Source::Serde { table, .. } if table == "groups.search"));

    let app: App =
        serde_json::from_str(r#"{ "listen": "", "breaker": { "defaults": { "threshold": 4 } } }"#)
            .unwrap();
    let setting = app
        .breaker
        .defaults()
        .iter()
        .next()
        .unwrap()
        .source
        .to_string();
    assert_eq!(setting, "`serde`, [defaults]");
}

/// A file's message with each place "`breaker.toml` line N" written as a
/// serde configuration's place, "`config.json`".
fn placed_as_json(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(at) = rest.find("`breaker.toml` line ") {
        out += &rest[..at];
        out += "`config.json`";
        rest = rest[at + "`breaker.toml` line ".len()..]
            .trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out + rest
}

/// A bad table, as TOML and as JSON, with the kind of its refusal.
const BAD: [(&str, &str, ErrorKind); 5] = [
    (
        "[groups.search]\ntreshold = 3\n",
        r#"{ "groups": { "search": { "treshold": 3 } } }"#,
        ErrorKind::UnknownKey,
    ),
    (
        "[groups.search]\nopen_ms = \"30sec\"\n",
        r#"{ "groups": { "search": { "open_ms": "30sec" } } }"#,
        ErrorKind::WrongType,
    ),
    (
        "[defaults]\nfailure_rate = 1.5\n",
        r#"{ "defaults": { "failure_rate": 1.5 } }"#,
        ErrorKind::Refused,
    ),
    (
        "[groups.search]\nwindow_calls = 10\nmin_calls = 20\n",
        r#"{ "groups": { "search": { "window_calls": 10, "min_calls": 20 } } }"#,
        ErrorKind::Refused,
    ),
    (
        "[groups.search]\ntemplate = \"flakey\"\n[templates.flaky]\nthreshold = 2\n",
        r#"{ "groups": { "search": { "template": "flakey" } }, "templates": { "flaky": { "threshold": 2 } } }"#,
        ErrorKind::UnknownTemplate,
    ),
];

#[test]
fn a_bad_table_is_refused_with_the_files_kind_and_message() {
    for (toml_text, json, kind) in BAD {
        let file = Settings::from_toml_str(toml_text, "breaker.toml").unwrap_err();
        let serde = Settings::from_deserializer(
            &mut serde_json::Deserializer::from_str(json),
            "config.json",
        )
        .unwrap_err();
        assert_eq!(file.kind(), kind, "{file}");
        assert_eq!(serde.kind(), kind, "{serde}");
        let (file, serde) = (file.to_string(), serde.to_string());
        assert!(file.contains("`breaker.toml` line "), "{file}");
        assert!(!serde.contains(" line "), "{serde}");
        assert_eq!(serde, placed_as_json(&file));
    }
}

#[test]
fn a_bad_table_inside_an_app_refuses_the_apps_config_with_the_same_message() {
    let file = Settings::from_toml_str("[groups.search]\nopen_ms = \"soon\"\n", "breaker.toml")
        .unwrap_err()
        .to_string();
    let app = "listen = \"\"\n[breaker.groups.search]\nopen_ms = \"soon\"\n";
    let same = file.replace("`breaker.toml` line 2", "`serde`");
    let err = toml::from_str::<App>(app).err().unwrap().to_string();
    assert!(err.contains(&same), "{err}");
    let json = r#"{ "listen": "", "breaker": { "groups": { "search": { "open_ms": "soon" } } } }"#;
    let err = serde_json::from_str::<App>(json).err().unwrap().to_string();
    assert!(err.contains(&same), "{err}");
}

#[test]
fn a_table_that_is_not_of_breaker_settings_is_refused() {
    let err = Settings::from_deserializer(
        &mut serde_json::Deserializer::from_str("[1, 2]"),
        "config.json",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Syntax);
    assert!(
        err.to_string()
            .contains(": `config.json` is not a table of breaker settings"),
        "{err}"
    );

    let err = Settings::from_deserializer(
        &mut serde_json::Deserializer::from_str(r#"{ "groups": { "search": 3 } }"#),
        "config.json",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Syntax);
    assert!(
        err.to_string().contains("`groups.search` must be a table"),
        "{err}"
    );
}

#[test]
fn variables_win_over_a_serde_table_as_over_a_file() {
    let vars = [
        ("BREAKER_GROUPS__SEARCH__OPEN_MS", "45s"),
        ("BREAKER_DEFAULTS__OPEN_MS", "2s"),
        ("BREAKER_TEMPLATES__FLAKY__MIN_CALLS", "50"),
    ];
    let app: App = serde_json::from_str(APP_JSON).unwrap();
    let layered = app.breaker.with_env(vars).unwrap();
    let file = Settings::from_toml_str(TABLES, "breaker.toml")
        .unwrap()
        .with_env(vars)
        .unwrap();
    for group in ["search", "billing", "declared-in-code-only"] {
        assert_eq!(resolved(&layered, group), resolved(&file, group), "{group}");
    }
    let search = layered.resolve("search", &Patch::new()).unwrap().config;
    assert_eq!(search.open(), Duration::from_secs(45));
    assert_eq!(search.min_calls(), Some(50));
    let billing = layered.resolve("billing", &Patch::new()).unwrap().config;
    assert_eq!(billing.open(), Duration::from_secs(2));
}
