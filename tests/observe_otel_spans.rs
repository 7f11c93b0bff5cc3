//! A guarded call's verdict and outcome on its span, as a trace sees it: with
//! `tracing-opentelemetry` and the SDK's in-memory span exporter, a refused
//! call's span carries `breaker.outcome = refused` and its reason, an admitted
//! call's its verdict and outcome; a group that did not opt in records nothing;
//! a span that declared the fields gets them as `tracing` fields.

#![cfg(feature = "otel")]

use std::collections::BTreeMap;
use std::sync::LazyLock;

use std::time::Duration;

use breakerbox::observe::span;
use breakerbox::{circuit_breaker, Breaker, CircuitOpen, Config, ManualClock, Registry};

#[path = "support/spans.rs"]
mod spans;

use spans::{exported, fields};

static REG: LazyLock<Registry> = LazyLock::new(Registry::new);
static CLOCK: LazyLock<ManualClock> = LazyLock::new(ManualClock::new);
static TIMED: LazyLock<Registry> = LazyLock::new(|| Registry::with_clock(CLOCK.clone()));

#[derive(Debug)]
enum AppError {
    Down,
    Open,
}

impl From<CircuitOpen> for AppError {
    fn from(_: CircuitOpen) -> Self {
        AppError::Open
    }
}

#[circuit_breaker(group = "spans-traced", threshold = 1, open_ms = 60000, registry = &REG)]
fn traced(ok: bool) -> Result<u32, AppError> {
    if ok {
        Ok(1)
    } else {
        Err(AppError::Down)
    }
}

#[circuit_breaker(group = "spans-probe", threshold = 1, open_ms = 1000, registry = &TIMED)]
fn probed(ok: bool) -> Result<u32, AppError> {
    if ok {
        Ok(1)
    } else {
        Err(AppError::Down)
    }
}

#[circuit_breaker(group = "spans-untraced", registry = &REG)]
fn untraced() -> Result<u32, AppError> {
    Ok(1)
}

#[circuit_breaker(group = "spans-async", registry = &REG)]
async fn traced_async() -> Result<u32, AppError> {
    Ok(7)
}

#[test]
fn refused_and_admitted_calls_carry_their_verdict_and_outcome_on_their_spans() {
    span::record_calls_of("spans-traced", true);
    let spans = exported(|| {
        tracing::info_span!("admitted").in_scope(|| traced(true).unwrap());
        tracing::info_span!("tripping").in_scope(|| traced(false).unwrap_err());
        tracing::info_span!("refused").in_scope(|| traced(true).unwrap_err());
    });
    let group = ("breaker.group", "spans-traced");
    assert_eq!(
        spans["admitted"],
        fields(&[
            group,
            ("breaker.verdict", "admitted"),
            ("breaker.outcome", "ok")
        ])
    );
    assert_eq!(
        spans["tripping"],
        fields(&[
            group,
            ("breaker.verdict", "admitted"),
            ("breaker.outcome", "error")
        ])
    );
    assert_eq!(
        spans["refused"],
        fields(&[
            group,
            ("breaker.verdict", "refused"),
            ("breaker.outcome", "refused"),
            ("breaker.reason", "open"),
        ])
    );
}

#[test]
fn a_group_that_did_not_opt_in_records_nothing() {
    let spans = exported(|| {
        tracing::info_span!("quiet").in_scope(|| untraced().unwrap());
    });
    assert_eq!(spans["quiet"], BTreeMap::new());
}

#[test]
fn an_async_call_records_on_the_span_it_runs_in() {
    span::record_calls_of("spans-async", true);
    let spans = exported(|| {
        let span = tracing::info_span!("async");
        let _entered = span.enter();
        assert_eq!(futures::executor::block_on(traced_async()).unwrap(), 7);
    });
    assert_eq!(
        spans["async"],
        fields(&[
            ("breaker.group", "spans-async"),
            ("breaker.verdict", "admitted"),
            ("breaker.outcome", "ok"),
        ])
    );
}

#[test]
fn a_half_open_probe_is_recorded_as_a_probe() {
    span::record_calls_of("spans-probe", true);
    let spans = exported(|| {
        probed(false).unwrap_err();
        CLOCK.advance(Duration::from_secs(1));
        tracing::info_span!("probe").in_scope(|| probed(true).unwrap());
    });
    assert_eq!(
        spans["probe"],
        fields(&[
            ("breaker.group", "spans-probe"),
            ("breaker.verdict", "probe"),
            ("breaker.outcome", "ok"),
        ])
    );
}

#[test]
fn an_integration_records_shadow_mode_admissions_and_its_key() {
    span::record_calls_of("spans-shadow", true);
    let config = Config::builder().threshold(1).build().unwrap();
    let breaker = Breaker::new("spans-shadow", config);
    breaker.set_shadow(true);
    breaker.try_acquire().unwrap().failure();
    let spans = exported(|| {
        tracing::info_span!("shadow").in_scope(|| {
            let permit = breaker.try_acquire().expect("shadow mode refuses nothing");
            span::admitted_by(&breaker, &permit, Some("a.example")).ended("success");
            permit.success();
        });
    });
    assert_eq!(
        spans["shadow"],
        fields(&[
            ("breaker.group", "spans-shadow"),
            ("breaker.key", "a.example"),
            ("breaker.verdict", "shadow_refused"),
            ("breaker.outcome", "success"),
        ])
    );
}
