use std::sync::LazyLock;

use breakerbox::{circuit_breaker, CallError, ManualClock, Registry};

static TEST_REGISTRY: LazyLock<Registry> = LazyLock::new(|| Registry::with_clock(ManualClock::new()));

fn registry_of_tenant(_tenant: u32) -> &'static Registry {
    &TEST_REGISTRY
}

#[circuit_breaker(group = "pass-registry", registry = &TEST_REGISTRY)]
fn a() -> Result<(), CallError<()>> {
    Ok(())
}

#[circuit_breaker(group = "pass-registry-call", registry = registry_of_tenant(tenant))]
fn b(tenant: u32) -> Result<u32, CallError<()>> {
    Ok(tenant)
}

fn main() {
    a().unwrap();
    b(1).unwrap();
    assert!(TEST_REGISTRY.get("pass-registry").is_some());
    assert!(breakerbox::registry().get("pass-registry").is_none());
}
