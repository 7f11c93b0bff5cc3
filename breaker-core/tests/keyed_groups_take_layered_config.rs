//! A keyed group takes the registry's configuration as an unkeyed group does:
//! a `configure`d config replaces its declaration, and `apply_config` reconfigures its
//! held keys and builds its new ones, all or nothing.

use std::sync::Arc;
use std::thread;

use breaker_core::{
    AlreadyCreated, ApplyConfigError, Config, ManualClock, Registry, Resolution, State,
};

fn threshold(n: u32) -> Config {
    Config::builder().threshold(n).build().unwrap()
}

/// Every group's threshold set to `n`, whatever it declared.
fn threshold_layer(n: u32) -> Arc<breaker_core::Resolver> {
    Arc::new(move |_group: &str, _declared: Option<&Config>| {
        Ok(Resolution {
            config: threshold(n),
            overrides: vec![format!("threshold = {n}")],
            retry: Default::default(),
        })
    })
}

#[test]
fn a_layer_reconfigures_the_keys_held_and_builds_the_new_ones() {
    let registry = Registry::with_clock(ManualClock::new());
    let hosts = registry
        .keyed::<String>("hosts", &threshold(5), 100)
        .unwrap();
    hosts.breaker("a.example").try_acquire().unwrap().failure();
    let changed = registry.apply_config(threshold_layer(2)).unwrap();
    assert_eq!(changed.len(), 1);
    assert_eq!(
        (
            changed[0].group,
            changed[0].from.threshold(),
            changed[0].to.threshold()
        ),
        ("hosts", 5, 2)
    );
    // The held key kept its count and is judged by the new threshold.
    hosts.breaker("a.example").try_acquire().unwrap().failure();
    assert_eq!(hosts.breaker("a.example").state(), State::Open);
    // A new key is built with it.
    assert_eq!(hosts.breaker("b.example").config().threshold(), 2);
    assert_eq!(
        (hosts.config().threshold(), hosts.declared().threshold()),
        (2, 5)
    );
    assert_eq!(registry.overrides()[0].group, "hosts");
}

#[test]
fn a_keyed_group_made_after_a_layer_is_built_through_it() {
    let registry = Registry::new();
    registry.apply_config(threshold_layer(7)).unwrap();
    let tenants = registry
        .keyed::<u64>("tenants", &threshold(3), 100)
        .unwrap();
    assert_eq!(tenants.config().threshold(), 7);
    assert_eq!(tenants.breaker(&1).config().threshold(), 7);
    assert_eq!(tenants.declared().threshold(), 3);
}

#[test]
fn a_configured_name_builds_its_keyed_group_and_cannot_be_configured_once_made() {
    let registry = Registry::new();
    registry.configure("shards", threshold(1)).unwrap();
    let shards = registry.keyed::<u32>("shards", &threshold(9), 100).unwrap();
    assert_eq!(shards.breaker(&4).config().threshold(), 1);
    // The declaration is what a second one is compared with.
    assert_eq!(shards.declared().threshold(), 9);
    assert!(registry.conflicts().is_empty());
    registry.keyed::<u32>("shards", &threshold(8), 100).unwrap();
    let conflict = &registry.conflicts()[0];
    assert_eq!(
        (
            conflict.holding.threshold(),
            conflict.first_declared.threshold(),
            conflict.ignored.threshold()
        ),
        (1, 9, 8)
    );
    let made = registry.keyed::<u32>("later", &threshold(2), 100).unwrap();
    assert_eq!(
        registry.configure("later", threshold(1)),
        Err(AlreadyCreated("later"))
    );
    assert_eq!(made.config().threshold(), 2);
}

#[test]
fn a_layer_that_would_change_a_keyed_groups_policy_changes_nothing() {
    let registry = Registry::new();
    let plain = registry.breaker("plain", &threshold(5));
    let hosts = registry
        .keyed::<String>("hosts", &threshold(5), 100)
        .unwrap();
    hosts.breaker("a.example");
    let to_window = Arc::new(|group: &str, declared: Option<&Config>| {
        let config = if group == "hosts" {
            Config::builder().window_calls(20).build().unwrap()
        } else {
            Config::builder()
                .threshold(declared.unwrap().threshold() + 1)
                .build()
                .unwrap()
        };
        Ok(Resolution {
            config,
            overrides: vec![],
            retry: Default::default(),
        })
    });
    let refused = registry.apply_config(to_window).unwrap_err();
    assert!(
        matches!(refused, ApplyConfigError::PolicyChange(ref change) if change.group() == "hosts")
    );
    assert_eq!(plain.config().threshold(), 5);
    assert_eq!(hosts.config().threshold(), 5);
    assert_eq!(hosts.breaker("a.example").config().threshold(), 5);
    let window = Config::builder().window_calls(20).build().unwrap();
    assert!(hosts.check_reconfigure(&window).is_err());
    assert!(hosts.check_reconfigure(&threshold(9)).is_ok());
    assert!(hosts.reconfigure(window).is_err());
    assert_eq!(hosts.config().threshold(), 5, "a check changes nothing");
    assert_eq!(hosts.key_capacity(), 100);
}

/// Groups created on other threads while a layer lands: each is built through
/// the layer or reconfigured by it; none is left on its declaration.
#[test]
fn keyed_groups_made_while_a_layer_lands_all_end_on_it() {
    for round in 0..50 {
        let registry = Arc::new(Registry::new());
        let makers: Vec<_> = (0..4)
            .map(|t| {
                let registry = Arc::clone(&registry);
                thread::spawn(move || {
                    (0..25)
                        .map(|i| {
                            let group = format!("race-{round}-{t}-{i}");
                            let keyed = registry.keyed::<u64>(&group, &threshold(3), 10).unwrap();
                            keyed.breaker(&1);
                            keyed
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        registry.apply_config(threshold_layer(11)).unwrap();
        for maker in makers {
            for keyed in maker.join().unwrap() {
                assert_eq!(keyed.config().threshold(), 11, "{}", keyed.group());
                assert_eq!(
                    keyed.breaker(&1).config().threshold(),
                    11,
                    "{}",
                    keyed.group()
                );
            }
        }
    }
}
