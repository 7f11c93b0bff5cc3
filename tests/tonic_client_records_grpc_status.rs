//! `breakerbox::tonic::CircuitBreakerLayer` around a tonic `Channel`, against
//! real tonic servers on 127.0.0.1: a trailers-only `UNAVAILABLE` trips the
//! breaker, a server stream failing in its trailers after some messages trips
//! it, `INVALID_ARGUMENT` never does, a refusal never reaches the server and
//! tells gRPC's retries not to retry it, per-authority keys isolate two
//! servers, a deadline (before the answer or mid-stream) answers
//! `DEADLINE_EXCEEDED` and fails, a stream
//! dropped part-read is abandoned, and a refused connection fails.

#[path = "support/grpc.rs"]
mod grpc;

use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use breakerbox::tonic::{CircuitBreaker, CircuitBreakerLayer, REFUSED_HEADER};
use breakerbox::{Breaker, Config, Registry, State};
use grpc::{Behaviour, Echo};
use tonic::client::Grpc;
use tonic::transport::Channel;
use tonic::Code;
use tower::Layer;

fn config(threshold: u32) -> Config {
    Config::builder()
        .threshold(threshold)
        .open(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// A server with its behaviour, and a client through `layer` to it.
async fn server_and_client(
    layer: &CircuitBreakerLayer,
) -> (std::sync::Arc<Behaviour>, Grpc<CircuitBreaker<Channel>>) {
    let echo = Echo::default();
    let behaviour = echo.0.clone();
    let address = grpc::serve(echo).await;
    let client = Grpc::with_origin(layer.layer(grpc::channel(address)), grpc::origin(address));
    (behaviour, client)
}

fn group(registry: &Registry, name: &str, threshold: u32) -> (Breaker, CircuitBreakerLayer) {
    let breaker = registry.breaker(name, &config(threshold));
    let layer = CircuitBreakerLayer::for_breaker(&breaker);
    (breaker, layer)
}

#[tokio::test]
async fn trailers_only_unavailable_trips_the_breaker() {
    let registry = Registry::new();
    let (breaker, layer) = group(&registry, "unavailable", 3);
    let (server, mut client) = server_and_client(&layer).await;
    server.answer(Code::Unavailable);

    for _ in 0..3 {
        let status = grpc::unary(&mut client, "hi").await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable);
        assert!(
            status.metadata().get(REFUSED_HEADER).is_none(),
            "the server's own answer"
        );
    }
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.metrics().failures, 3);
    assert_eq!(server.unary_calls(), 3);
}

#[tokio::test]
async fn a_stream_failing_in_its_trailers_after_messages_trips_the_breaker() {
    let registry = Registry::new();
    let (breaker, layer) = group(&registry, "stream-fails", 2);
    let (server, mut client) = server_and_client(&layer).await;
    server.stream_messages.store(3, SeqCst);
    server.stream_code.store(Code::Internal as i32, SeqCst);

    for _ in 0..2 {
        let (messages, end) = grpc::stream(&mut client, "tick").await;
        assert_eq!(messages, ["tick 0", "tick 1", "tick 2"]);
        assert_eq!(end.unwrap_err().code(), Code::Internal);
    }
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.metrics().failures, 2);
    assert_eq!(breaker.metrics().successes, 0);
}

#[tokio::test]
async fn a_stream_ending_ok_in_its_trailers_is_a_success() {
    let registry = Registry::new();
    let (breaker, layer) = group(&registry, "stream-ok", 1);
    let (server, mut client) = server_and_client(&layer).await;
    server.stream_messages.store(2, SeqCst);

    let (messages, end) = grpc::stream(&mut client, "tock").await;
    assert_eq!(messages.len(), 2);
    end.unwrap();
    let metrics = breaker.metrics();
    assert_eq!((metrics.successes, metrics.failures), (1, 0));
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test]
async fn invalid_argument_never_trips_the_breaker() {
    let registry = Registry::new();
    let (breaker, layer) = group(&registry, "invalid", 1);
    let (server, mut client) = server_and_client(&layer).await;
    server.answer(Code::InvalidArgument);

    for _ in 0..20 {
        let status = grpc::unary(&mut client, "bad").await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
    }
    let metrics = breaker.metrics();
    assert_eq!(metrics.state, State::Closed);
    assert_eq!((metrics.ignored, metrics.failures), (20, 0));
    assert_eq!(server.unary_calls(), 20);
}

#[tokio::test]
async fn a_refusal_never_reaches_the_server_and_tells_retries_not_to_retry() {
    let registry = Registry::new();
    let (breaker, layer) = group(&registry, "refusal", 1);
    let (server, mut client) = server_and_client(&layer).await;
    server.answer(Code::Unavailable);

    assert_eq!(
        grpc::unary(&mut client, "trip").await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(breaker.state(), State::Open);
    for _ in 0..5 {
        let refused = grpc::unary(&mut client, "again").await.unwrap_err();
        assert_eq!(refused.code(), Code::Unavailable);
        assert!(
            refused
                .message()
                .starts_with("circuit `refusal` is open; retry after"),
            "{}",
            refused.message()
        );
        assert_eq!(
            refused.metadata().get("grpc-retry-pushback-ms").unwrap(),
            "-1"
        );
        assert_eq!(refused.metadata().get(REFUSED_HEADER).unwrap(), "open");
    }
    assert_eq!(
        server.unary_calls(),
        1,
        "refused calls never reach the handler"
    );
    assert_eq!(breaker.metrics().rejected, 5);

    breaker.force_open();
    let forced = grpc::unary(&mut client, "forced").await.unwrap_err();
    assert_eq!(
        forced.metadata().get(REFUSED_HEADER).unwrap(),
        "forced_open"
    );
    assert_eq!(server.unary_calls(), 1);
}

#[tokio::test]
async fn per_authority_keys_isolate_two_servers() {
    let registry = Registry::new();
    let layer =
        CircuitBreakerLayer::per_authority_in(&registry, "backends", &config(2), 100).unwrap();
    let (sick, mut to_sick) = server_and_client(&layer).await;
    let (well, mut to_well) = server_and_client(&layer).await;
    sick.answer(Code::Unavailable);

    for _ in 0..2 {
        grpc::unary(&mut to_sick, "x").await.unwrap_err();
    }
    for _ in 0..3 {
        assert_eq!(grpc::unary(&mut to_well, "fine").await.unwrap(), "fine");
    }
    let refused = grpc::unary(&mut to_sick, "x").await.unwrap_err();
    assert_eq!(refused.metadata().get(REFUSED_HEADER).unwrap(), "open");
    assert_eq!(sick.unary_calls(), 2);
    assert_eq!(well.unary_calls(), 3);

    let keys = registry
        .keyed::<String>("backends", &config(2), 100)
        .unwrap();
    let mut states: Vec<_> = keys.keys().into_iter().map(|(_, state)| state).collect();
    states.sort_by_key(|state| state.as_str());
    assert_eq!(states, [State::Closed, State::Open]);
}

#[tokio::test]
async fn a_call_past_the_groups_timeout_answers_deadline_exceeded_and_fails() {
    let registry = Registry::new();
    let config = Config::builder()
        .threshold(1)
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let breaker = registry.breaker("deadline", &config);
    let layer = CircuitBreakerLayer::for_breaker(&breaker);
    let (server, mut client) = server_and_client(&layer).await;
    server.slow_ms.store(30_000, SeqCst);

    // The request asks for longer: the group's shorter deadline holds.
    let mut request = tonic::Request::new("wait".to_owned());
    request.set_timeout(Duration::from_secs(60));
    let status = grpc::slow(&mut client, request).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded);
    assert_eq!(breaker.metrics().failures, 1);
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(server.slow_calls.load(SeqCst), 1);
}

#[tokio::test]
async fn a_stream_stalling_past_the_deadline_ends_with_deadline_exceeded_and_fails() {
    let registry = Registry::new();
    let config = Config::builder()
        .threshold(1)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let breaker = registry.breaker("stalled", &config);
    let layer = CircuitBreakerLayer::for_breaker(&breaker);
    let (server, mut client) = server_and_client(&layer).await;
    server.stream_messages.store(2, SeqCst);
    server.stream_stall_ms.store(30_000, SeqCst);

    let (messages, end) = grpc::stream(&mut client, "slow").await;
    assert_eq!(messages, ["slow 0", "slow 1"]);
    assert_eq!(end.unwrap_err().code(), Code::DeadlineExceeded);
    assert_eq!(breaker.metrics().failures, 1);
    assert_eq!(breaker.state(), State::Open);
}

#[tokio::test]
async fn a_call_within_its_deadline_succeeds() {
    let registry = Registry::new();
    let config = Config::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let breaker = registry.breaker("in-time", &config);
    let layer = CircuitBreakerLayer::for_breaker(&breaker);
    let (_server, mut client) = server_and_client(&layer).await;

    let request = tonic::Request::new("quick".to_owned());
    assert_eq!(grpc::slow(&mut client, request).await.unwrap(), "quick");
    assert_eq!(breaker.metrics().successes, 1);
}

#[tokio::test]
async fn a_stream_dropped_part_read_is_abandoned() {
    let registry = Registry::new();
    let (breaker, layer) = group(&registry, "dropped", 1);
    let (server, mut client) = server_and_client(&layer).await;
    server.stream_messages.store(3, SeqCst);
    server.stream_code.store(Code::Unavailable as i32, SeqCst);

    client.ready().await.unwrap();
    let path = http::uri::PathAndQuery::from_static("/test.Echo/Stream");
    let answer = client
        .server_streaming(tonic::Request::new("one".to_owned()), path, grpc::Utf8Codec)
        .await
        .unwrap();
    let mut stream = answer.into_inner();
    assert_eq!(stream.message().await.unwrap().unwrap(), "one 0");
    assert_eq!(
        breaker.metrics().calls,
        0,
        "nothing recorded before the trailers"
    );
    drop(stream);

    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.abandoned, metrics.failures, metrics.successes),
        (1, 0, 0)
    );
    assert_eq!(metrics.state, State::Closed);
}

#[tokio::test]
async fn a_refused_connection_is_a_failure() {
    let registry = Registry::new();
    let (breaker, layer) = group(&registry, "no-server", 2);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = closed.local_addr().unwrap();
    drop(closed);
    let mut client = Grpc::with_origin(layer.layer(grpc::channel(address)), grpc::origin(address));

    for _ in 0..2 {
        assert_eq!(
            grpc::unary(&mut client, "x").await.unwrap_err().code(),
            Code::Unavailable
        );
    }
    assert_eq!(breaker.metrics().failures, 2);
    let refused = grpc::unary(&mut client, "x").await.unwrap_err();
    assert_eq!(refused.metadata().get(REFUSED_HEADER).unwrap(), "open");
}
