//! What the span tests share: the `breaker.*` attributes of the spans a run
//! ends, as OpenTelemetry exports them through `tracing-opentelemetry`.
#![allow(dead_code)]

use std::collections::BTreeMap;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use tracing_subscriber::layer::SubscriberExt as _;

/// The `breaker.*` attributes of each span `run` ends, by span name.
pub fn exported(run: impl FnOnce()) -> BTreeMap<String, BTreeMap<String, String>> {
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

pub fn fields(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
