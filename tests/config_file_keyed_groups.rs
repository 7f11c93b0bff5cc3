//! A config file and `BREAKER_` variables configure a keyed group as they do an
//! unkeyed one: its attribute is declared at link time, and applying the
//! settings reconfigures its keys, held and new.
#![cfg(feature = "config")]

use breakerbox::circuit_breaker;
use breakerbox::config_file::{declared_groups, Settings};
use breakerbox::{registry, CircuitOpen, State};

#[derive(Debug)]
enum FetchError {
    Open,
    Down,
}

impl From<CircuitOpen> for FetchError {
    fn from(_: CircuitOpen) -> Self {
        FetchError::Open
    }
}

#[circuit_breaker(group = "cfg-keyed-upstream", key = host, key_capacity = 100, threshold = 5)]
fn fetch(host: &str, up: bool) -> Result<u32, FetchError> {
    if up {
        Ok(200)
    } else {
        Err(FetchError::Down)
    }
}

#[test]
fn a_file_reconfigures_a_keyed_attributes_keys() {
    assert!(declared_groups().contains(&"cfg-keyed-upstream"));
    // One failure at the attribute's threshold of 5.
    assert!(matches!(fetch("a.example", false), Err(FetchError::Down)));
    let file = "[groups.cfg-keyed-upstream]\nthreshold = 3\n";
    let settings = Settings::from_toml_str(file, "prod.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__CFG_KEYED_UPSTREAM__THRESHOLD", "2")])
        .unwrap();
    let applied = settings.apply(registry()).unwrap();
    assert!(applied.undeclared.is_empty(), "{:?}", applied.undeclared);
    let changed: Vec<_> = applied
        .reconfigured
        .iter()
        .filter(|c| c.group == "cfg-keyed-upstream")
        .map(|c| (c.from.threshold(), c.to.threshold()))
        .collect();
    assert_eq!(changed, [(5, 2)]);
    // The second failure trips the key held, by the variable's threshold.
    assert!(matches!(fetch("a.example", false), Err(FetchError::Down)));
    assert!(matches!(fetch("a.example", true), Err(FetchError::Open)));
    let hosts = registry()
        .get_keyed::<String>("cfg-keyed-upstream")
        .unwrap()
        .unwrap();
    assert_eq!(hosts.breaker("a.example").state(), State::Open);
    // A new key runs it too; the attribute's literal is what was overridden.
    assert_eq!(fetch("b.example", true).unwrap(), 200);
    assert_eq!(hosts.breaker("b.example").config().threshold(), 2);
    assert_eq!(hosts.declared().threshold(), 5);
    assert!(registry()
        .overrides()
        .iter()
        .any(|o| o.group == "cfg-keyed-upstream" && o.detail.contains("threshold = 5")));
}
