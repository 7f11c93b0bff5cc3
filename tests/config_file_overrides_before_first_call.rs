//! `Settings::apply` lists what a file takes from each declared group's
//! attribute at once, before the group's first call, and the first call
//! lists nothing twice.

#![cfg(feature = "config")]

use std::sync::LazyLock;

use breakerbox::config_file::Settings;
use breakerbox::{circuit_breaker, CircuitOpen, Registry};

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

#[circuit_breaker(group = "overrides-early", threshold = 3, registry = &REGISTRY)]
fn lookup(id: u32) -> Result<u32, CircuitOpen> {
    Ok(id)
}

#[test]
fn a_declared_group_lists_its_overrides_before_its_first_call() {
    let file = "[groups.overrides-early]\nthreshold = 10\n";
    Settings::from_toml_str(file, "prod.toml")
        .unwrap()
        .apply(&REGISTRY)
        .unwrap();
    assert!(REGISTRY.get("overrides-early").is_none(), "not called yet");
    let listed: Vec<String> = REGISTRY
        .overrides()
        .iter()
        .filter(|o| o.group == "overrides-early")
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        listed,
        [
            "group `overrides-early`: the attribute's `threshold = 3` is overridden by \
          `threshold = 10` (`prod.toml` line 2, [groups.overrides-early])"
        ]
    );

    lookup(1).unwrap();
    assert_eq!(
        REGISTRY
            .get("overrides-early")
            .unwrap()
            .config()
            .threshold(),
        10
    );
    let after_call = REGISTRY
        .overrides()
        .iter()
        .filter(|o| o.group == "overrides-early")
        .count();
    assert_eq!(after_call, 1, "the first call lists nothing twice");
}
