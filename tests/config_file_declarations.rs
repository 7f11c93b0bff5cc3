//! The attributes' groups are known at start-up, before any guarded fn runs,
//! so a group the configuration names and no code declares is reported.
#![cfg(feature = "config")]

use breakerbox::circuit_breaker;
use breakerbox::config_file::{declarations, declared_groups, Settings, Source};
use breakerbox::Registry;

#[circuit_breaker(group = "inventory-alpha", threshold = 2, fallback = zero)]
fn alpha() -> u32 {
    1
}

#[circuit_breaker(group = "inventory-beta", open_ms = 5_000, fallback = zero_async)]
async fn beta() -> u32 {
    1
}

fn zero() -> u32 {
    0
}

async fn zero_async() -> u32 {
    0
}

#[test]
fn both_guarded_fns_are_listed_before_either_runs() {
    // Neither fn has been called in this test binary.
    assert_eq!(
        declared_groups(),
        ["inventory-alpha", "inventory-beta", "inventory-runtime"]
    );
    let alpha = declarations()
        .find(|d| d.group == "inventory-alpha")
        .unwrap();
    assert_eq!(alpha.config.threshold(), 2);
    assert_eq!(alpha.module, "config_file_declarations");
    let _ = (self::alpha, beta);
}

#[test]
fn a_group_no_code_declares_is_reported_with_where_it_was_named() {
    let file =
        "[groups.inventory-alpha]\nthreshold = 3\n\n[groups.inventory-gamma]\nthreshold = 3\n";
    let settings = Settings::from_toml_str(file, "typo.toml")
        .unwrap()
        .with_env([
            ("BREAKER_GROUPS__INVENTORY_BETA__OPEN_MS", "1000"),
            ("BREAKER_GROUPS__INVENTORY_DELTA__OPEN_MS", "1000"),
        ])
        .unwrap();
    let applied = settings.apply(&Registry::new()).unwrap();
    let named: Vec<(&str, String)> = applied
        .undeclared
        .iter()
        .map(|(group, source)| (group.as_str(), source.to_string()))
        .collect();
    assert_eq!(
        named,
        [
            (
                "inventory-gamma",
                "`typo.toml` line 4, [groups.inventory-gamma]".to_owned()
            ),
            (
                "INVENTORY_DELTA",
                "variable `BREAKER_GROUPS__INVENTORY_DELTA__OPEN_MS`".to_owned()
            ),
        ]
    );
    assert!(matches!(
        applied.undeclared[0].1,
        Source::File { line: 4, .. }
    ));
}

/// A group only a middleware makes, at run time: a count window.
const RUNTIME: breakerbox::Config = match breakerbox::Config::builder().window_calls(20).build() {
    Ok(config) => config,
    Err(_) => panic!("invalid config"),
};
breakerbox::declare_group!("inventory-runtime", RUNTIME);

#[test]
fn a_group_made_at_run_time_is_declared_by_declare_group() {
    // Nothing has made the group: the file's table is still known, and its
    // composition with the declared config is judged at start-up.
    let registry = Registry::new();
    let declared = declarations()
        .find(|d| d.group == "inventory-runtime")
        .unwrap();
    assert_eq!(declared.config.window_calls(), Some(20));
    assert_eq!(declared.module, "config_file_declarations");
    let file = "[groups.inventory-runtime]\nopen_ms = 2_000\n";
    let applied = Settings::from_toml_str(file, "runtime.toml")
        .unwrap()
        .apply(&registry)
        .unwrap();
    assert!(applied.undeclared.is_empty(), "{:?}", applied.undeclared);
    // Made later, as `per_host` makes it: the declaration and the file hold.
    let hosts = registry
        .keyed::<String>("inventory-runtime", &RUNTIME, 100)
        .unwrap();
    assert_eq!(hosts.config().window_calls(), Some(20));
    assert_eq!(hosts.config().open().as_millis(), 2_000);
    // A table the declared config cannot take is refused before anything
    // runs: alone `min_calls = 30` is fine, over `window_calls = 20` it is not.
    let mixed = "[groups.inventory-runtime]\nmin_calls = 30\n";
    let refused = Settings::from_toml_str(mixed, "mixed.toml")
        .unwrap()
        .apply(&Registry::new())
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("declared in `config_file_declarations`"),
        "{refused}"
    );
}

#[test]
fn applied_settings_list_each_declared_groups_configuration_and_sources_before_any_call() {
    let registry = Registry::new();
    let file =
        "[defaults]\nprobe_timeout_ms = \"10s\"\n[groups.inventory-alpha]\nopen_ms = \"2s\"\n";
    let applied = Settings::from_toml_str(file, "start.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__INVENTORY_BETA__BACKOFF", "3")])
        .unwrap()
        .apply(&registry)
        .unwrap();
    assert!(registry.groups().is_empty(), "no group is made by applying");
    let groups: Vec<&str> = applied.groups.iter().map(|g| g.group.as_str()).collect();
    assert_eq!(
        groups,
        ["inventory-alpha", "inventory-beta", "inventory-runtime"]
    );
    let alpha = &applied.groups[0];
    assert_eq!(alpha.config.threshold(), 2);
    assert_eq!(alpha.config.open().as_millis(), 2_000);
    assert_eq!(
        alpha.to_string(),
        "group `inventory-alpha`: `threshold = 2` (the attribute), `open_ms = 2000` \
         (`start.toml` line 4, [groups.inventory-alpha]), `probe_timeout_ms = 10000` \
         (`start.toml` line 2, [defaults])"
    );
    let beta = &applied.groups[1];
    let backoff = beta.settings.iter().find(|s| s.key == "backoff").unwrap();
    assert_eq!(
        backoff.source,
        Source::Env {
            var: "BREAKER_GROUPS__INVENTORY_BETA__BACKOFF".into()
        }
    );
    assert_eq!(beta.config.backoff(), 3.0);
}
