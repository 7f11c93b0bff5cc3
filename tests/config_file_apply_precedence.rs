//! Each step of the precedence rule, through a real registry and the
//! attribute: crate default < `[defaults]` < template < the attribute's
//! literal values < `[groups.X]` < `BREAKER_GROUPS__X__` variables; and every
//! literal the file or a variable takes away, listed with its source.
#![cfg(feature = "config")]

use breakerbox::config_file::{declarations, Settings};
use breakerbox::{circuit_breaker, CircuitOpen, Registry};

#[derive(Debug)]
struct Failed;

impl From<CircuitOpen> for Failed {
    fn from(_: CircuitOpen) -> Self {
        Failed
    }
}

/// Spells out `open_ms = 30000`, which is also the crate default.
#[circuit_breaker(group = "ranked", threshold = 3, open_ms = 30000, registry = reg)]
fn ranked(reg: &Registry) -> Result<(), Failed> {
    Ok(())
}

/// Declares nothing but its group.
#[circuit_breaker(group = "plain", registry = reg)]
fn plain(reg: &Registry) -> Result<(), Failed> {
    Ok(())
}

/// A fresh registry with `file` and `env` applied before first use, then both
/// groups used once; returns their open durations in ms and the registry.
fn applied(file: &str, env: &[(&str, &str)]) -> (u128, u128, Registry) {
    let registry = Registry::new();
    let settings = Settings::from_toml_str(file, "stage.toml")
        .unwrap()
        .with_env(env.iter().copied())
        .unwrap();
    settings.apply(&registry).unwrap();
    ranked(&registry).unwrap();
    plain(&registry).unwrap();
    let open = |group| registry.get(group).unwrap().config().open().as_millis();
    (open("ranked"), open("plain"), registry)
}

#[test]
fn the_attribute_records_which_keys_it_spelled_out() {
    let ranked = declarations().find(|d| d.group == "ranked").unwrap();
    assert_eq!(
        ranked.config.explicit_keys().collect::<Vec<_>>(),
        ["threshold", "open_ms"]
    );
    let plain = declarations().find(|d| d.group == "plain").unwrap();
    assert_eq!(plain.config.explicit_keys().count(), 0);
}

#[test]
fn without_a_file_each_group_runs_its_declaration_over_the_crate_default() {
    let (ranked, plain, registry) = applied("", &[]);
    assert_eq!((ranked, plain), (30_000, 30_000));
    assert_eq!(registry.get("ranked").unwrap().config().threshold(), 3);
    assert_eq!(registry.get("plain").unwrap().config().threshold(), 5);
    assert!(registry.overrides().is_empty());
}

#[test]
fn defaults_beat_the_crate_default_but_not_a_literal_equal_to_it() {
    let (ranked, plain, registry) = applied("[defaults]\nopen_ms = 10_000\n", &[]);
    assert_eq!(plain, 10_000);
    assert_eq!(
        ranked, 30_000,
        "the literal open_ms = 30000 ranks above [defaults]"
    );
    assert!(registry.overrides().is_empty());
}

#[test]
fn a_template_beats_defaults_but_not_a_literal_equal_to_the_default() {
    let file = "[defaults]\nopen_ms = 10_000\n\
                [templates.t]\nopen_ms = 20_000\n\
                [groups.plain]\ntemplate = \"t\"\n\
                [groups.ranked]\ntemplate = \"t\"\n";
    let (ranked, plain, registry) = applied(file, &[]);
    assert_eq!(plain, 20_000);
    assert_eq!(
        ranked, 30_000,
        "the literal open_ms = 30000 ranks above a template"
    );
    assert!(registry.overrides().is_empty());
}

#[test]
fn a_group_table_beats_the_literal_and_the_override_is_listed_with_file_and_line() {
    let file =
        "[templates.t]\nopen_ms = 20_000\n[groups.ranked]\ntemplate = \"t\"\nopen_ms = 40_000\n";
    let (ranked, plain, registry) = applied(file, &[]);
    assert_eq!((ranked, plain), (40_000, 30_000));
    let overrides: Vec<String> = registry.overrides().iter().map(|o| o.to_string()).collect();
    assert_eq!(
        overrides,
        [
            "group `ranked`: the attribute's `open_ms = 30000` is overridden by \
          `open_ms = 40000` (`stage.toml` line 5, [groups.ranked])"
        ]
    );
}

#[test]
fn a_variable_beats_the_group_table_and_the_override_names_the_variable() {
    let (ranked, _, registry) = applied(
        "[groups.ranked]\nopen_ms = 40_000\n",
        &[("BREAKER_GROUPS__RANKED__OPEN_MS", "50000")],
    );
    assert_eq!(ranked, 50_000);
    let overrides: Vec<String> = registry.overrides().iter().map(|o| o.to_string()).collect();
    assert_eq!(
        overrides,
        [
            "group `ranked`: the attribute's `open_ms = 30000` is overridden by \
          `open_ms = 50000` (variable `BREAKER_GROUPS__RANKED__OPEN_MS`)"
        ]
    );
}

#[test]
fn applied_to_a_live_registry_the_same_rule_holds_and_the_state_is_kept() {
    let registry = Registry::new();
    ranked(&registry).unwrap();
    plain(&registry).unwrap();
    let before = registry.get("ranked").unwrap().metrics();
    let file = "[defaults]\nopen_ms = 10_000\nthreshold = 7\n[groups.ranked]\nthreshold = 4\n";
    let applied = Settings::from_toml_str(file, "live.toml")
        .unwrap()
        .apply(&registry)
        .unwrap();
    let changed: Vec<_> = applied.reconfigured.iter().map(|r| r.group).collect();
    assert_eq!(changed, ["plain", "ranked"]);
    let ranked_now = registry.get("ranked").unwrap();
    assert_eq!(ranked_now.config().threshold(), 4);
    assert_eq!(ranked_now.config().open().as_millis(), 30_000);
    let plain_now = registry.get("plain").unwrap();
    assert_eq!(plain_now.config().threshold(), 7);
    assert_eq!(plain_now.config().open().as_millis(), 10_000);
    assert_eq!(ranked_now.metrics().successes, before.successes);
    // The call site's cached breaker is the one reconfigured.
    ranked(&registry).unwrap();
    assert_eq!(ranked_now.metrics().successes, before.successes + 1);
}

#[test]
fn a_configured_group_takes_the_place_of_its_attribute_in_the_layers() {
    let registry = Registry::new();
    let by_hand = breakerbox::Config::builder().threshold(9).build().unwrap();
    registry.configure("ranked", by_hand).unwrap();
    Settings::from_toml_str("[defaults]\nthreshold = 2\nopen_ms = 10_000\n", "f.toml")
        .unwrap()
        .apply(&registry)
        .unwrap();
    ranked(&registry).unwrap();
    let config = *registry.get("ranked").unwrap().config();
    assert_eq!(
        config.threshold(),
        9,
        "the code's explicit threshold is a literal"
    );
    assert_eq!(
        config.open().as_millis(),
        10_000,
        "the rest layers as usual"
    );
}
