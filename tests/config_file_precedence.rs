//! The precedence rule, lowest first: crate default < `[defaults]` < template <
//! the attribute's literals < `[groups.X]` < `BREAKER_GROUPS__X__` variables;
//! and the attribute literals the file or the environment took away.
#![cfg(feature = "config")]

use breakerbox::config_file::{Patch, Settings, Source, Value};

/// An attribute's literal values.
fn attribute(values: &[(&str, Value)]) -> Patch {
    let mut patch = Patch::new();
    for (key, value) in values {
        patch.set(key, *value, Source::Attribute).unwrap();
    }
    patch
}

/// The six layers, each of which may set `open_ms` (the crate default is layer 1).
const LAYERS: [&str; 5] = ["defaults", "template", "attribute", "group", "env"];

/// Settings and literals in which exactly the layers in `set` give `open_ms`,
/// layer `i` (from 0, the `[defaults]`) giving `(i + 2) * 1000`.
fn layered(set: &[usize]) -> (Settings, Patch) {
    let ms = |layer: usize| (layer + 2) * 1000;
    let line = |layer: usize| {
        if set.contains(&layer) {
            format!("open_ms = {}\n", ms(layer))
        } else {
            String::new()
        }
    };
    let file = format!(
        "[defaults]\n{}[templates.t]\n{}[groups.search]\ntemplate = \"t\"\n{}",
        line(0),
        line(1),
        line(3)
    );
    let env: Vec<(String, String)> = if set.contains(&4) {
        vec![("BREAKER_GROUPS__SEARCH__OPEN_MS".into(), ms(4).to_string())]
    } else {
        vec![]
    };
    let settings = Settings::from_toml_str(&file, "layers.toml")
        .unwrap()
        .with_env(env)
        .unwrap();
    let literals = if set.contains(&2) {
        attribute(&[("open_ms", Value::U64(ms(2) as u64))])
    } else {
        Patch::new()
    };
    (settings, literals)
}

#[test]
fn each_layer_overrides_every_layer_below_it_and_none_above_it() {
    // Every combination of the five configurable layers: the highest one set wins.
    for mask in 0u32..32 {
        let set: Vec<usize> = (0..5).filter(|i| mask & (1 << i) != 0).collect();
        let (settings, literals) = layered(&set);
        let got = settings
            .resolve("search", &literals)
            .unwrap()
            .config
            .open()
            .as_millis();
        let want = set.last().map_or(30_000, |top| (top + 2) as u128 * 1000);
        let names: Vec<&str> = set.iter().map(|i| LAYERS[*i]).collect();
        assert_eq!(got, want, "layers setting open_ms: {names:?}");
    }
}

#[test]
fn the_winning_value_carries_its_source() {
    let (settings, literals) = layered(&[0, 1]);
    let resolved = settings.resolve("search", &literals).unwrap();
    let setting = resolved.settings.get("open_ms").unwrap();
    assert_eq!(setting.value, Value::U64(3000));
    assert_eq!(
        setting.to_string(),
        "`open_ms = 3000` (`layers.toml` line 4, [templates.t])"
    );
}

#[test]
fn defaults_and_template_variables_edit_their_table_in_place() {
    let file = "[defaults]\nopen_ms = 2000\n[templates.t]\nmin_calls = 5\n\
                [groups.search]\ntemplate = \"t\"\nopen_ms = 5000\n";
    let settings = Settings::from_toml_str(file, "f.toml")
        .unwrap()
        .with_env([
            ("BREAKER_DEFAULTS__OPEN_MS", "1500"),
            ("BREAKER_DEFAULTS__BACKOFF", "3"),
            ("BREAKER_TEMPLATES__T__MIN_CALLS", "7"),
        ])
        .unwrap();
    let literals = attribute(&[
        ("window_ms", Value::U64(10_000)),
        ("min_calls", Value::U32(9)),
    ]);
    let r = settings.resolve("search", &literals).unwrap();
    // The defaults variable beats `[defaults]` but not the group's own table...
    assert_eq!(r.config.open().as_millis(), 5000);
    assert_eq!(r.config.backoff(), 3.0);
    // ...and the template variable beats the template but not the attribute.
    assert_eq!(r.config.min_calls(), Some(9));
    assert!(r.overrides.is_empty(), "{:?}", r.overrides);

    let other = settings.resolve("other", &Patch::new()).unwrap();
    assert_eq!(other.config.open().as_millis(), 1500);
    assert_eq!(
        other.settings.get("open_ms").unwrap().source,
        Source::Env {
            var: "BREAKER_DEFAULTS__OPEN_MS".into()
        }
    );
}

#[test]
fn a_template_gives_its_values_to_the_groups_that_name_it_only() {
    let file = "[templates.flaky]\nwindow_ms = 60_000\nfailure_rate = 0.25\nmin_calls = 20\n\
                [groups.search]\ntemplate = \"flaky\"\nopen_ms = 30_000\n\
                [groups.users]\nopen_ms = 1_000\n";
    let settings = Settings::from_toml_str(file, "f.toml").unwrap();
    let search = settings.resolve("search", &Patch::new()).unwrap().config;
    assert_eq!(search.window().unwrap().as_millis(), 60_000);
    assert_eq!(search.failure_rate(), Some(0.25));
    assert_eq!(search.min_calls(), Some(20));
    let users = settings.resolve("users", &Patch::new()).unwrap().config;
    assert_eq!(users.window(), None);
    assert_eq!(users.threshold(), 5);
    assert_eq!(users.open().as_millis(), 1_000);
}

#[test]
fn every_literal_taken_away_is_listed_with_its_source_and_no_other() {
    let file = "[defaults]\nhalf_open_probes = 4\n[groups.search]\nthreshold = 4\nbackoff = 2.0\n";
    let settings = Settings::from_toml_str(file, "prod.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__SEARCH__OPEN_MS", "5000")])
        .unwrap();
    let literals = attribute(&[
        ("threshold", Value::U32(3)),
        ("open_ms", Value::U64(30_000)),
        ("backoff", Value::F64(2.0)),        // same value: nothing taken
        ("half_open_probes", Value::U32(2)), // beats [defaults]: nothing taken
        ("successes_to_close", Value::U32(2)), // nobody else sets it
    ]);
    let r = settings.resolve("search", &literals).unwrap();
    let listed: Vec<String> = r.overrides.iter().map(ToString::to_string).collect();
    assert_eq!(
        listed,
        [
            "the attribute's `threshold = 3` is overridden by `threshold = 4` (`prod.toml` line 4, [groups.search])",
            "the attribute's `open_ms = 30000` is overridden by `open_ms = 5000` (variable `BREAKER_GROUPS__SEARCH__OPEN_MS`)",
        ]
    );
    assert_eq!(r.config.half_open_probes(), 2);
    assert_eq!(r.config.successes_to_close(), 2);
}

#[test]
fn a_higher_layer_that_picks_another_policy_replaces_the_literal_policy_and_says_so() {
    let file = "[groups.search]\nwindow_calls = 100\nmin_calls = 50\n";
    let settings = Settings::from_toml_str(file, "f.toml").unwrap();
    let literals = attribute(&[("threshold", Value::U32(3))]);
    let r = settings.resolve("search", &literals).unwrap();
    assert_eq!(r.config.window_calls(), Some(100));
    assert_eq!(r.config.min_calls(), Some(50));
    assert_eq!(r.overrides.len(), 1);
    assert_eq!(r.overrides[0].key, "threshold");
    assert_eq!(r.overrides[0].by.key, "window_calls");
}

#[test]
fn the_attribute_policy_replaces_a_template_policy_with_its_window_keys() {
    let file = "[templates.flaky]\nwindow_ms = 60_000\nfailure_rate = 0.5\nmin_calls = 20\n\
                [groups.search]\ntemplate = \"flaky\"\n";
    let settings = Settings::from_toml_str(file, "f.toml").unwrap();
    let literals = attribute(&[("threshold", Value::U32(3))]);
    let config = settings.resolve("search", &literals).unwrap().config;
    assert_eq!(config.threshold(), 3);
    assert_eq!(config.window(), None);
    assert_eq!(config.min_calls(), None);
}

#[test]
fn window_keys_in_defaults_tune_windowed_groups_and_leave_consecutive_ones_alone() {
    let settings = Settings::new()
        .with_env([("BREAKER_DEFAULTS__MIN_CALLS", "20")])
        .unwrap();
    let consecutive = settings.resolve("plain", &Patch::new()).unwrap();
    assert_eq!(consecutive.config.threshold(), 5);
    assert_eq!(consecutive.config.min_calls(), None);
    assert!(consecutive.settings.get("min_calls").is_none());

    let literals = attribute(&[("window_ms", Value::U64(10_000))]);
    let windowed = settings.resolve("windowed", &literals).unwrap();
    assert_eq!(windowed.config.min_calls(), Some(20));
}

#[test]
fn a_variable_that_picks_the_consecutive_policy_takes_the_literal_window_and_its_keys() {
    let settings = Settings::new()
        .with_env([("BREAKER_GROUPS__SEARCH__THRESHOLD", "2")])
        .unwrap();
    let literals = attribute(&[
        ("window_ms", Value::U64(10_000)),
        ("min_calls", Value::U32(5)),
        ("open_ms", Value::U64(1_000)),
    ]);
    let r = settings.resolve("search", &literals).unwrap();
    assert_eq!(r.config.threshold(), 2);
    assert_eq!(r.config.window(), None);
    assert_eq!(r.config.open().as_millis(), 1_000);
    let taken: Vec<(&str, &str)> = r.overrides.iter().map(|o| (o.key, o.by.key)).collect();
    assert_eq!(
        taken,
        [("window_ms", "threshold"), ("min_calls", "threshold")]
    );
}
