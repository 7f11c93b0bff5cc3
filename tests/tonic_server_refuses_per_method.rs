//! `breakerbox::tonic::CircuitBreakerLayer::server` in front of a real tonic
//! server on 127.0.0.1: a method whose handler keeps failing is answered
//! `UNAVAILABLE` over the wire without running its handler, while the
//! server's other methods are served; a client's calls to methods that do not
//! exist, and a client's own short deadlines, open nothing.

#[path = "support/grpc.rs"]
mod grpc;

use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use breakerbox::tonic::{CircuitBreakerLayer, REFUSED_HEADER};
use breakerbox::{Config, Registry, State};
use grpc::Echo;
use tonic::client::Grpc;
use tonic::Code;

fn config() -> Config {
    Config::builder()
        .threshold(2)
        .open(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Serves `echo` on 127.0.0.1 behind a per-method layer of `registry`.
async fn serve(registry: &Registry, echo: Echo) -> std::net::SocketAddr {
    let layer = CircuitBreakerLayer::server_in(registry, "server", &config(), 100).unwrap();
    let incoming = tonic::transport::server::TcpIncoming::bind("127.0.0.1:0".parse().unwrap())
        .expect("a free port on 127.0.0.1");
    let address = incoming.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .layer(layer)
            .add_service(echo)
            .serve_with_incoming(incoming),
    );
    address
}

#[tokio::test]
async fn a_failing_method_is_refused_while_open_and_the_others_are_served() {
    let registry = Registry::new();
    let echo = Echo::default();
    let server = echo.0.clone();
    let address = serve(&registry, echo).await;
    let mut client = Grpc::with_origin(grpc::channel(address), grpc::origin(address));
    server.answer(Code::Unavailable);
    server.stream_messages.store(2, SeqCst);

    for _ in 0..2 {
        let status = grpc::unary(&mut client, "x").await.unwrap_err();
        assert!(
            status.metadata().get(REFUSED_HEADER).is_none(),
            "the handler's own answer"
        );
    }
    for _ in 0..3 {
        let refused = grpc::unary(&mut client, "x").await.unwrap_err();
        assert_eq!(refused.code(), Code::Unavailable);
        assert!(
            refused.message().starts_with("circuit `server` is open"),
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
        2,
        "a refused call never runs its handler"
    );

    let (messages, end) = grpc::stream(&mut client, "other").await;
    assert_eq!(messages, ["other 0", "other 1"]);
    end.unwrap();

    let methods = registry.keyed::<String>("server", &config(), 100).unwrap();
    assert_eq!(
        methods.get("/test.Echo/Unary").unwrap().state(),
        State::Open
    );
    assert_eq!(
        methods.get("/test.Echo/Stream").unwrap().state(),
        State::Closed
    );
}

#[tokio::test]
async fn calls_to_methods_that_do_not_exist_open_nothing() {
    let registry = Registry::new();
    let address = serve(&registry, Echo::default()).await;
    let mut client = Grpc::with_origin(grpc::channel(address), grpc::origin(address));

    for _ in 0..5 {
        client.ready().await.unwrap();
        let path = http::uri::PathAndQuery::from_static("/test.Echo/Missing");
        let status = client
            .unary::<_, String, _>(tonic::Request::new("?".to_owned()), path, grpc::Utf8Codec)
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::Unimplemented);
    }
    let methods = registry.keyed::<String>("server", &config(), 100).unwrap();
    let missing = methods.get("/test.Echo/Missing").unwrap().metrics();
    assert_eq!(
        (missing.state, missing.ignored, missing.failures),
        (State::Closed, 5, 0)
    );
}

#[tokio::test]
async fn a_clients_short_deadline_never_counts_against_the_method() {
    let registry = Registry::new();
    let echo = Echo::default();
    let server = echo.0.clone();
    server.slow_ms.store(5_000, SeqCst);
    let address = serve(&registry, echo).await;
    let mut client = Grpc::with_origin(grpc::channel(address), grpc::origin(address));

    for _ in 0..4 {
        let mut request = tonic::Request::new("hurry".to_owned());
        request.set_timeout(Duration::from_millis(1));
        let status = grpc::slow(&mut client, request).await.unwrap_err();
        assert_ne!(status.code(), Code::Ok);
        assert!(status.metadata().get(REFUSED_HEADER).is_none());
    }
    let methods = registry.keyed::<String>("server", &config(), 100).unwrap();
    let slow = methods.get("/test.Echo/Slow").unwrap().metrics();
    assert_eq!((slow.state, slow.failures), (State::Closed, 0));
}
