//! A bad file, a bad variable or a configuration a live breaker cannot take
//! applies nothing: live configs, the overrides listed and the groups created
//! later are as they were, and the error says why.
#![cfg(feature = "config")]

use breakerbox::config_file::{ErrorKind, Settings};
use breakerbox::{circuit_breaker, CircuitOpen, Config, Registry};

#[derive(Debug)]
struct Failed;

impl From<CircuitOpen> for Failed {
    fn from(_: CircuitOpen) -> Self {
        Failed
    }
}

#[circuit_breaker(group = "orders", threshold = 3, registry = reg)]
fn orders(reg: &Registry, fail: bool) -> Result<(), Failed> {
    if fail {
        Err(Failed)
    } else {
        Ok(())
    }
}

#[circuit_breaker(group = "stock", window_calls = 20, registry = reg)]
fn stock(reg: &Registry) -> Result<(), Failed> {
    Ok(())
}

#[circuit_breaker(group = "pool", max_concurrent = 2, registry = reg)]
fn pool(reg: &Registry) -> Result<(), Failed> {
    Ok(())
}

/// A live registry with a first configuration applied: `orders` at
/// threshold 4 (one failure counted), `stock` used once.
fn live() -> Registry {
    let registry = Registry::new();
    Settings::from_toml_str("[groups.orders]\nthreshold = 4\n", "good.toml")
        .unwrap()
        .apply(&registry)
        .unwrap();
    orders(&registry, true).unwrap_err();
    stock(&registry).unwrap();
    registry
}

/// What must not move when a configuration is refused.
fn observed(registry: &Registry) -> (Vec<Config>, Vec<String>, u32) {
    let configs = ["orders", "stock"].map(|g| *registry.get(g).unwrap().config());
    let overrides = registry.overrides().iter().map(|o| o.to_string()).collect();
    let failures = registry
        .get("orders")
        .unwrap()
        .metrics()
        .consecutive_failures;
    (configs.to_vec(), overrides, failures)
}

/// A group created after a refusal is built by the settings applied before it.
fn later_is_built_by_the_first_settings(registry: &Registry) {
    registry
        .configure(
            "orders-later",
            Config::builder().threshold(3).build().unwrap(),
        )
        .unwrap();
    let later = registry.breaker_or_default("orders-later");
    assert_eq!(
        later.config().threshold(),
        3,
        "no [groups.orders-later]: the declaration holds"
    );
    assert_eq!(
        later.config().open().as_millis(),
        30_000,
        "the refused file's [defaults] did not reach groups created after it"
    );
}

#[test]
fn a_file_with_an_unknown_key_is_refused_before_it_reaches_the_registry() {
    let err = Settings::from_toml_str("[groups.orders]\ntreshold = 9\n", "bad.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownKey);
    assert!(err
        .to_string()
        .contains("`bad.toml` line 2: [groups.orders] unknown key `treshold`"));
}

#[test]
fn a_bad_variable_names_itself_and_its_key() {
    let err = Settings::new()
        .with_env([("BREAKER_GROUPS__ORDERS__THRESHOLD", "0")])
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("BREAKER_GROUPS__ORDERS__THRESHOLD"),
        "{message}"
    );
    assert!(message.contains("threshold"), "{message}");
}

#[test]
fn a_composition_the_builder_refuses_applies_nothing_live_or_later() {
    let registry = live();
    let before = observed(&registry);
    // `min_calls` needs a window; `orders` declares the consecutive policy.
    let bad = Settings::from_toml_str(
        "[defaults]\nopen_ms = 1_000\n[groups.orders]\nmin_calls = 5\n",
        "bad.toml",
    )
    .unwrap();
    let err = bad.apply(&registry).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    let message = err.to_string();
    assert!(message.contains("min_calls"), "{message}");
    assert!(message.contains("bad.toml"), "{message}");
    assert_eq!(observed(&registry), before);
    later_is_built_by_the_first_settings(&registry);
    assert_eq!(
        registry.get("orders").unwrap().config().open().as_millis(),
        30_000,
        "the [defaults] of the refused file did not apply either"
    );
}

#[test]
fn changing_a_live_breakers_failure_policy_is_refused_and_applies_nothing() {
    let registry = live();
    let before = observed(&registry);
    let switch = Settings::from_toml_str(
        "[defaults]\nopen_ms = 1_000\n[groups.orders]\nwindow_ms = 60_000\n",
        "switch.toml",
    )
    .unwrap();
    let err = switch.apply(&registry).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LivePolicyChange);
    assert!(err.to_string().contains("group `orders`"), "{err}");
    assert_eq!(observed(&registry), before);
    later_is_built_by_the_first_settings(&registry);

    let resize =
        Settings::from_toml_str("[groups.stock]\nwindow_calls = 50\n", "resize.toml").unwrap();
    assert_eq!(
        resize.apply(&registry).unwrap_err().kind(),
        ErrorKind::LivePolicyChange
    );
    assert_eq!(observed(&registry), before);
}

#[test]
fn a_refused_composition_of_a_group_not_yet_used_is_caught_at_start_up() {
    // `stock` is declared (a window) but not used in this registry yet: its
    // composition is still judged, from the link-time list of declarations.
    let registry = Registry::new();
    // Alone, `min_calls = 30` is fine; over the attribute's `window_calls = 20` it is not.
    let bad = Settings::from_toml_str("[groups.stock]\nmin_calls = 30\n", "bad.toml").unwrap();
    let err = bad.apply(&registry).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("group `stock`"), "{message}");
    assert!(
        message.contains("declared in `config_file_apply_refuses`"),
        "{message}"
    );
    stock(&registry).unwrap();
    assert_eq!(
        registry.get("stock").unwrap().config().window_calls(),
        Some(20)
    );
}

#[test]
fn changing_a_live_breakers_bulkhead_or_timing_is_refused_and_applies_nothing() {
    let registry = live();
    let before = observed(&registry);
    pool(&registry).unwrap();
    for (toml, key) in [
        ("[groups.pool]\nmax_concurrent = 4\n", "max_concurrent"),
        ("[groups.stock]\nlatency_p99_ms = 50\n", "latency_p99_ms"),
    ] {
        let err = Settings::from_toml_str(toml, "fixed.toml")
            .unwrap()
            .apply(&registry)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LivePolicyChange, "{key}: {err}");
        assert!(err.to_string().contains(key), "{key}: {err}");
        assert_eq!(observed(&registry), before, "{key}");
    }
}

#[test]
fn a_live_change_of_a_windows_rate_is_applied() {
    let registry = live();
    Settings::from_toml_str("[groups.stock]\nfailure_rate = 0.9\n", "rate.toml")
        .unwrap()
        .apply(&registry)
        .unwrap();
    let stock = registry.get("stock").unwrap();
    assert_eq!(stock.config().failure_rate(), Some(0.9));
    assert_eq!(stock.config().window_calls(), Some(20));
}

#[test]
fn a_refused_live_change_names_its_file_line_and_key_in_words() {
    let registry = live();
    let before = observed(&registry);
    let err = Settings::from_toml_str(
        "[defaults]\nopen_ms = 2_000\n[groups.stock]\nslow_call_ms = 300\n",
        "rate.toml",
    )
    .unwrap()
    .apply(&registry)
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LivePolicyChange);
    let message = err.to_string();
    for part in [
        "group `stock` is live with a count window (`window_calls = 20`, `failure_rate = 0.5`, \
         `min_calls = 20`)",
        "`slow_call_ms = 300` (`rate.toml` line 4, [groups.stock]) would make it a count window \
         (`window_calls = 20`, `failure_rate = 0.5`, `min_calls = 20`, `slow_call_ms = 300`, \
         `slow_call_rate = 1.0`)",
        "restart to apply it",
    ] {
        assert!(message.contains(part), "missing {part:?} in: {message}");
    }
    // Words, not Debug dumps of the policies.
    for dump in ["CountWindow", "RateThresholds", "{"] {
        assert!(!message.contains(dump), "{dump:?} in: {message}");
    }
    assert!(
        !message.contains("open_ms"),
        "open_ms may change live: {message}"
    );
    assert_eq!(observed(&registry), before);

    let err = Settings::new()
        .with_env([("BREAKER_GROUPS__STOCK__WINDOW_CALLS", "50")])
        .unwrap()
        .apply(&registry)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`window_calls = 50` (variable `BREAKER_GROUPS__STOCK__WINDOW_CALLS`)"),
        "{err}"
    );
}

#[test]
fn a_refused_change_of_a_live_bulkhead_names_its_file_line() {
    let registry = live();
    pool(&registry).unwrap();
    let err = Settings::from_toml_str("[groups.pool]\nmax_concurrent = 4\n", "fixed.toml")
        .unwrap()
        .apply(&registry)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LivePolicyChange);
    let message = err.to_string();
    assert!(
        message.contains(
            "group `pool` is live, and `max_concurrent = 4` (`fixed.toml` line 2, [groups.pool]) \
             would change its `max_concurrent`"
        ),
        "{message}"
    );
    assert_eq!(
        registry.get("pool").unwrap().config().max_concurrent(),
        Some(2)
    );
}

#[test]
fn a_refused_live_change_of_a_code_made_breaker_names_its_file_line_and_key() {
    // Made by code, not by an attribute: its own config is the declaration
    // the file's values compose with.
    let registry = Registry::new();
    let by_count = Config::builder().window_calls(20).build().unwrap();
    let inventory = registry.breaker("inventory", &by_count);
    let err = Settings::from_toml_str("[groups.inventory]\nslow_call_ms = 300\n", "rate.toml")
        .unwrap()
        .apply(&registry)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LivePolicyChange);
    let message = err.to_string();
    assert!(
        message.contains(
            "`slow_call_ms = 300` (`rate.toml` line 2, [groups.inventory]) would make it"
        ),
        "{message}"
    );
    assert!(!message.contains("the configuration would"), "{message}");
    assert_eq!(inventory.config().slow_call(), None, "nothing applied");

    let capped = Config::builder()
        .window_calls(20)
        .max_concurrent(2)
        .build()
        .unwrap();
    let quota = registry.breaker("quota", &capped);
    let err = Settings::from_toml_str(
        "[groups.quota]\nmax_concurrent = 4\nmin_calls = 10\n",
        "fixed.toml",
    )
    .unwrap()
    .apply(&registry)
    .unwrap_err();
    assert!(
        err.to_string().contains(
            "`max_concurrent = 4` (`fixed.toml` line 2, [groups.quota]) would change its \
             `max_concurrent`"
        ),
        "{err}"
    );
    assert_eq!(quota.config().max_concurrent(), Some(2));
}
