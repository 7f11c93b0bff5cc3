//! A call through the tower layer carries its verdict and outcome on its
//! span, as a call of the attribute does: an admitted call its classified
//! outcome, a refused one `refused` and its reason, a call past its group's
//! deadline `failure`.

#![cfg(all(feature = "otel", feature = "tower", feature = "tokio"))]

use std::convert::Infallible;
use std::time::Duration;

use breakerbox::observe::span;
use breakerbox::tower::CircuitBreakerLayer;
use breakerbox::{Config, Registry};
use tower::{service_fn, Layer, ServiceExt};

#[path = "support/spans.rs"]
mod spans;

use spans::{exported, fields};

/// Answers `status`, or sleeps past every deadline for `0`.
async fn upstream(status: u16) -> Result<http::Response<()>, Infallible> {
    if status == 0 {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    let mut response = http::Response::new(());
    *response.status_mut() = http::StatusCode::from_u16(status.max(200)).unwrap();
    Ok(response)
}

#[test]
fn tower_layer_calls_carry_their_verdict_and_outcome_on_their_spans() {
    let registry = Registry::new();
    let config = Config::builder().threshold(2).build().unwrap();
    let breaker = registry.breaker("spans-tower", &config);
    let layer = CircuitBreakerLayer::for_breaker(&breaker);
    span::record_calls_of("spans-tower", true);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let call = |status: u16| {
        let service = layer.layer(service_fn(upstream));
        let _ = runtime.block_on(service.oneshot(status));
    };
    let spans = exported(|| {
        tracing::info_span!("ok").in_scope(|| call(200));
        tracing::info_span!("ignored").in_scope(|| call(404));
        tracing::info_span!("failed").in_scope(|| call(503));
        tracing::info_span!("tripping").in_scope(|| call(503));
        tracing::info_span!("refused").in_scope(|| call(200));
    });
    let group = ("breaker.group", "spans-tower");
    let admitted = ("breaker.verdict", "admitted");
    assert_eq!(
        spans["ok"],
        fields(&[group, admitted, ("breaker.outcome", "success")])
    );
    assert_eq!(
        spans["ignored"],
        fields(&[group, admitted, ("breaker.outcome", "ignored")])
    );
    assert_eq!(
        spans["failed"],
        fields(&[group, admitted, ("breaker.outcome", "failure")])
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
fn a_tower_call_past_its_deadline_records_a_failure_on_its_span() {
    let registry = Registry::new();
    let config = Config::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let breaker = registry.breaker("spans-tower-late", &config);
    let layer = CircuitBreakerLayer::for_breaker(&breaker);
    span::record_calls_of("spans-tower-late", true);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let spans = exported(|| {
        tracing::info_span!("late").in_scope(|| {
            let service = layer.layer(service_fn(upstream));
            let answer = runtime.block_on(service.oneshot(0));
            assert!(matches!(
                answer,
                Err(breakerbox::tower::BreakerError::TimedOut(_))
            ));
        });
    });
    assert_eq!(
        spans["late"],
        fields(&[
            ("breaker.group", "spans-tower-late"),
            ("breaker.verdict", "admitted"),
            ("breaker.outcome", "failure"),
        ])
    );
}
