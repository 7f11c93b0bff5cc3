//! `CircuitBreakerMiddleware` records a successful head's outcome at the end of
//! its body: an upstream that sends a `200` head and stalls mid-body fails and
//! trips the breaker; a body dropped unread is the head's success, one dropped
//! part-read is abandoned, one read to its end a success.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::LazyLock;
use std::time::Duration;

use breakerbox::reqwest::{circuit_open, CircuitBreakerMiddleware};
use breakerbox::{Config, Registry, State};
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

/// A server on 127.0.0.1 that answers every request with a `200` head of
/// `content-length: 1000` and ten bytes of body, and then sends nothing more
/// until the client hangs up; or, when `whole`, with the whole body.
fn stalling_upstream(whole: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buffer = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let body = if whole { 1000 } else { 10 };
                let mut answer = b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n".to_vec();
                answer.resize(answer.len() + body, b'x');
                if stream.write_all(&answer).is_err() {
                    return;
                }
                // Stalls: the rest never comes; returns when the client hangs up.
                while matches!(stream.read(&mut buffer), Ok(n) if n > 0) {}
            });
        }
    });
    addr
}

fn config() -> Config {
    Config::builder()
        .threshold(3)
        .open(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn client(middleware: CircuitBreakerMiddleware, timeout: Option<Duration>) -> ClientWithMiddleware {
    let mut builder = reqwest::Client::builder();
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    ClientBuilder::new(builder.build().unwrap())
        .with(middleware)
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_stalls_mid_body_fails_and_opens_the_breaker() {
    let addr = stalling_upstream(false);
    let middleware =
        CircuitBreakerMiddleware::per_host_in(&REGISTRY, "body-stalls", &config(), 100).unwrap();
    let url = format!("http://{addr}/").parse().unwrap();
    let breaker = middleware.breaker_for(&url).unwrap();
    let client = client(middleware, Some(Duration::from_millis(150)));
    let mut refused = 0;
    for _ in 0..5 {
        match client.get(format!("http://{addr}/")).send().await {
            Ok(response) => {
                assert_eq!(response.status(), 200);
                let body = response.bytes().await;
                assert!(body.is_err(), "the body never completes");
            }
            Err(error) => {
                assert!(circuit_open(&error).is_some(), "{error}");
                refused += 1;
            }
        }
    }
    let m = breaker.metrics();
    assert_eq!((m.successes, m.failures), (0, 3));
    assert_eq!(m.state, State::Open);
    assert_eq!(refused, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_dropped_unread_is_a_success_and_one_dropped_part_read_is_abandoned() {
    let addr = stalling_upstream(false);
    let group = REGISTRY.breaker("body-dropped", &config());
    let client = client(CircuitBreakerMiddleware::for_breaker(&group), None);

    let response = client.get(format!("http://{addr}/")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let m = group.metrics();
    assert_eq!((m.successes, m.failures, m.abandoned), (0, 0, 0), "not yet");
    drop(response);
    assert_eq!(group.metrics().successes, 1, "the head's verdict");

    let mut response = client.get(format!("http://{addr}/")).send().await.unwrap();
    let first = response.chunk().await.unwrap().unwrap();
    assert_eq!(first.len(), 10);
    drop(response);
    let m = group.metrics();
    assert_eq!((m.successes, m.failures, m.abandoned), (1, 0, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_read_to_its_end_is_a_success_and_keeps_the_url() {
    let addr = stalling_upstream(true);
    let group = REGISTRY.breaker("body-whole", &config());
    let client = client(CircuitBreakerMiddleware::for_breaker(&group), None);
    let response = client
        .get(format!("http://{addr}/path"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.url().as_str(), format!("http://{addr}/path"));
    assert_eq!(response.content_length(), Some(1000));
    assert_eq!(response.remote_addr(), Some(addr));
    let body = response.bytes().await.unwrap();
    assert_eq!(body.len(), 1000);
    let m = group.metrics();
    assert_eq!((m.successes, m.failures, m.abandoned), (1, 0, 0));
}
