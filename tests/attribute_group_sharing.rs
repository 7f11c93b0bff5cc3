//! Call sites naming one group share one breaker; a second site declaring another
//! config is reported as a conflict and gets the first one's breaker; config set
//! on the registry first wins; one site used against two registries keeps their
//! breakers apart.

mod support;

use std::sync::LazyLock;

use breakerbox::{circuit_breaker, Config, State};
use support::{state, AppError, Isolated, REG};

#[circuit_breaker(group = "shared", registry = &REG, threshold = 2)]
fn read(fail: bool) -> Result<(), AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(())
    }
}

#[circuit_breaker(group = "shared", registry = &REG, threshold = 2)]
fn write() -> Result<(), AppError> {
    Ok(())
}

#[test]
fn two_sites_of_one_group_trip_and_refuse_together() {
    let _ = read(true);
    assert_eq!(state("shared"), State::Closed);
    let _ = read(true);
    assert_eq!(state("shared"), State::Open);
    assert!(
        write().unwrap_err().is_open(),
        "write shares read's breaker"
    );
    let m = REG.get("shared").unwrap().metrics();
    assert_eq!(m.failures, 2);
    assert_eq!(m.rejected, 1);
}

#[circuit_breaker(group = "conflicted", registry = &REG, threshold = 2)]
fn first_declaration() -> Result<(), AppError> {
    Ok(())
}

#[circuit_breaker(group = "conflicted", registry = &REG, threshold = 9)]
fn second_declaration() -> Result<(), AppError> {
    Ok(())
}

#[test]
fn a_different_declaration_for_one_group_is_reported_and_the_first_holds() {
    first_declaration().unwrap();
    second_declaration().unwrap();
    let breaker = REG.get("conflicted").unwrap();
    assert_eq!(
        breaker.config().threshold(),
        2,
        "the first declaration holds"
    );
    let conflicts = REG.conflicts();
    assert!(
        conflicts.iter().any(|c| c.group == "conflicted"),
        "{conflicts:?}"
    );
    assert!(!conflicts.iter().any(|c| c.group == "shared"));
}

static CONFIGURED: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "configured", registry = &CONFIGURED, threshold = 50)]
fn declared_lenient(fail: bool) -> Result<(), AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(())
    }
}

#[test]
fn config_set_on_the_registry_before_first_use_wins_over_the_attribute() {
    let strict = Config::builder().threshold(1).build().unwrap();
    CONFIGURED.configure("configured", strict).unwrap();
    let _ = declared_lenient(true);
    assert_eq!(CONFIGURED.metrics("configured").state, State::Open);
}

static TENANT_A: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static TENANT_B: LazyLock<Isolated> = LazyLock::new(Isolated::new);

fn tenant(id: u8) -> &'static breakerbox::Registry {
    if id == 0 {
        &TENANT_A
    } else {
        &TENANT_B
    }
}

#[circuit_breaker(group = "per-tenant", registry = tenant(id), threshold = 1)]
fn per_tenant(id: u8, fail: bool) -> Result<(), AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(())
    }
}

#[test]
fn one_site_against_two_registries_keeps_their_breakers_apart() {
    per_tenant(1, false).unwrap();
    let _ = per_tenant(0, true);
    assert_eq!(TENANT_A.metrics("per-tenant").state, State::Open);
    assert_eq!(TENANT_B.metrics("per-tenant").state, State::Closed);
    per_tenant(1, false).expect("tenant B is unaffected");
    assert!(per_tenant(0, false).unwrap_err().is_open());
    assert_eq!(TENANT_B.metrics("per-tenant").successes, 2);
}
