//! A gRPC call through the tonic layer carries its breaker's group and key,
//! its verdict and its outcome on its span, as a call through the tower
//! layer does: a call answered `OK` is a success, `UNAVAILABLE` a failure, a
//! refused call `refused` with its reason, a call after a pushback `held`,
//! and a call whose future is dropped half-way `abandoned`.

#![cfg(all(feature = "otel", feature = "tonic"))]

use std::convert::Infallible;

use breakerbox::observe::span;
use breakerbox::tonic::CircuitBreakerLayer;
use breakerbox::{Config, Registry};
use futures::FutureExt as _;
use tower::{service_fn, Layer, Service, ServiceExt};

#[path = "support/spans.rs"]
mod spans;

use spans::{exported, fields};

/// Answers trailers-only with the `grpc-status` in the request's path
/// (`/svc/14`), asks every caller to wait a minute with `8`, and never
/// answers `/svc/hang`.
async fn server(request: http::Request<String>) -> Result<http::Response<String>, Infallible> {
    let status = request.uri().path().trim_start_matches("/svc/").to_owned();
    if status == "hang" {
        std::future::pending::<()>().await;
    }
    let mut answer = http::Response::builder()
        .header("content-type", "application/grpc")
        .header("grpc-status", status.as_str());
    if status == "8" {
        answer = answer.header("grpc-retry-pushback-ms", "60000");
    }
    Ok(answer.body(String::new()).unwrap())
}

fn request(authority: &str, status: &str) -> http::Request<String> {
    let uri = format!("http://{authority}/svc/{status}");
    http::Request::builder()
        .uri(uri)
        .body(String::new())
        .unwrap()
}

#[test]
fn grpc_calls_carry_their_group_key_verdict_and_outcome_on_their_spans() {
    let registry = Registry::new();
    let config = Config::builder().threshold(2).build().unwrap();
    span::record_calls_of("spans-grpc", true);
    let layer =
        CircuitBreakerLayer::per_authority_in(&registry, "spans-grpc", &config, 10).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let call = |authority: &str, status: &str| {
        let service = layer.layer(service_fn(server));
        let _ = runtime.block_on(service.oneshot(request(authority, status)));
    };
    let spans = exported(|| {
        tracing::info_span!("ok").in_scope(|| call("a.example:50051", "0"));
        tracing::info_span!("failed").in_scope(|| call("a.example:50051", "14"));
        tracing::info_span!("tripping").in_scope(|| call("a.example:50051", "14"));
        tracing::info_span!("refused").in_scope(|| call("a.example:50051", "0"));
        tracing::info_span!("pushed_back").in_scope(|| call("b.example:50051", "8"));
        tracing::info_span!("held").in_scope(|| call("b.example:50051", "0"));
    });
    let group = ("breaker.group", "spans-grpc");
    let a = ("breaker.key", "a.example:50051");
    let b = ("breaker.key", "b.example:50051");
    let admitted = ("breaker.verdict", "admitted");
    assert_eq!(
        spans["ok"],
        fields(&[group, a, admitted, ("breaker.outcome", "success")])
    );
    assert_eq!(
        spans["failed"],
        fields(&[group, a, admitted, ("breaker.outcome", "failure")])
    );
    assert_eq!(
        spans["refused"],
        fields(&[
            group,
            a,
            ("breaker.verdict", "refused"),
            ("breaker.outcome", "refused"),
            ("breaker.reason", "open"),
        ])
    );
    assert_eq!(
        spans["pushed_back"],
        fields(&[group, b, admitted, ("breaker.outcome", "ignored")])
    );
    assert_eq!(
        spans["held"],
        fields(&[
            group,
            b,
            ("breaker.verdict", "held"),
            ("breaker.outcome", "refused"),
            ("breaker.reason", "held"),
        ])
    );
}

#[test]
fn a_grpc_call_dropped_half_way_records_abandoned_on_its_span() {
    let registry = Registry::new();
    let breaker = registry.breaker("spans-grpc-dropped", &Config::default());
    span::record_calls_of("spans-grpc-dropped", true);
    let layer = CircuitBreakerLayer::for_breaker(&breaker);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let spans = exported(|| {
        tracing::info_span!("dropped").in_scope(|| {
            let mut service = layer.layer(service_fn(server));
            let ready = service.ready().now_or_never();
            assert!(matches!(ready, Some(Ok(_))));
            let mut call = Box::pin(service.call(request("a.example:50051", "hang")));
            assert!(
                call.as_mut().now_or_never().is_none(),
                "the server never answers"
            );
        });
    });
    assert_eq!(
        spans["dropped"],
        fields(&[
            ("breaker.group", "spans-grpc-dropped"),
            ("breaker.verdict", "admitted"),
            ("breaker.outcome", "abandoned"),
        ])
    );
    assert_eq!(breaker.metrics().abandoned, 1);
}
