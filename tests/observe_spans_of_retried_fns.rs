//! A retried fn whose retry is refused carries the refusal on its span, as
//! a fn whose first claim is refused does.

#![cfg(feature = "otel")]

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::Duration;

use breakerbox::clock::Clock;
use breakerbox::observe::span;
use breakerbox::{circuit_breaker, CircuitOpen, ManualClock, Registry};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use tracing_subscriber::layer::SubscriberExt as _;

/// A manual clock during whose waits an operator forces the group open.
struct OperatorClock(ManualClock);

impl Clock for OperatorClock {
    fn now_nanos(&self) -> u64 {
        self.0.now_nanos()
    }

    fn sleep(&self, d: Duration) {
        self.0.advance(d);
        REG.force_open("spans-retried").unwrap();
    }
}

static REG: LazyLock<Registry> =
    LazyLock::new(|| Registry::with_clock(OperatorClock(ManualClock::new())));

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

// The first attempt fails; the group is forced open during the wait: the
// retry's claim is refused.
#[circuit_breaker(group = "spans-retried", threshold = 5, open_ms = 60000, retry = 2,
    idempotent = true, registry = &REG)]
fn flaky() -> Result<u32, AppError> {
    Err(AppError::Down)
}

/// The `breaker.*` attributes of each span `run` ends, by span name.
fn exported(run: impl FnOnce()) -> BTreeMap<String, BTreeMap<String, String>> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, run);
    provider.force_flush().unwrap();
    exporter
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .map(|span| {
            let fields = span
                .attributes
                .iter()
                .filter(|kv| kv.key.as_str().starts_with("breaker."))
                .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                .collect();
            (span.name.into_owned(), fields)
        })
        .collect()
}

#[test]
fn a_refused_retry_is_recorded_on_the_span() {
    span::record_calls_of("spans-retried", true);
    let spans = exported(|| {
        tracing::info_span!("retried").in_scope(|| {
            assert!(matches!(flaky(), Err(AppError::Open)));
        });
    });
    let fields = &spans["retried"];
    assert_eq!(fields["breaker.group"], "spans-retried");
    assert_eq!(fields["breaker.outcome"], "refused");
    assert_eq!(fields["breaker.reason"], "forced_open");
}
