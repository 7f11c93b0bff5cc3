//! What a program can do today, before the registry reads settings itself:
//! resolve a group and give the result to `Registry::configure` before its
//! first call; the breaker then judges by the file and the variables.
#![cfg(feature = "config")]

use std::sync::LazyLock;

use breakerbox::config_file::{Patch, Settings, Source, Value};
use breakerbox::{circuit_breaker, CallError, Registry, State};

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

#[circuit_breaker(group = "search", threshold = 3, registry = &REGISTRY)]
fn search(fail: bool) -> Result<(), CallError<&'static str>> {
    if fail {
        Err(CallError::Inner("down"))
    } else {
        Ok(())
    }
}

#[test]
fn a_resolved_config_given_before_first_use_is_the_one_the_breaker_judges_by() {
    let settings = Settings::from_toml_str("[groups.search]\nthreshold = 5\n", "prod.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__SEARCH__THRESHOLD", "1")])
        .unwrap();
    // The attribute's literals, written out by hand until the integration
    // takes them from the attribute itself.
    let mut literals = Patch::new();
    literals
        .set("threshold", Value::U32(3), Source::Attribute)
        .unwrap();
    let resolved = settings.resolve("search", &literals).unwrap();
    assert_eq!(resolved.overrides.len(), 1);
    REGISTRY.configure("search", resolved.config).unwrap();

    let _ = search(true);
    // One failure opens it: the variable's threshold, not the attribute's 3.
    assert_eq!(REGISTRY.get("search").unwrap().state(), State::Open);
}
