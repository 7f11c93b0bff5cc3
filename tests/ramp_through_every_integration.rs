//! The traffic ramp after a close (`ramp_ms`) through every way a call reaches a
//! breaker: the attribute (its fallback answers a ramp's refusals; without one
//! the caller gets `CircuitOpen` saying `Ramping`), the tower layer under axum
//! (`503` with `Retry-After`) and the reqwest middleware, each on a manual
//! clock, so the counts admitted are exact.

mod support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::extract::State as AxumState;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use breakerbox::reqwest::{circuit_open, CircuitBreakerMiddleware};
use breakerbox::tower::CircuitBreakerLayer;
use breakerbox::{circuit_breaker, Breaker, Config, ManualClock, OpenReason, Registry, State};
use reqwest_middleware::ClientBuilder;
use support::{AppError, Isolated};
use tower::ServiceBuilder;

static WITH_FALLBACK: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static WITHOUT_FALLBACK: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(
    group = "ramp-fallback", registry = &WITH_FALLBACK,
    threshold = 1, open_ms = 1_000, ramp_ms = 10_000, fallback = cached
)]
fn lookup(fail: bool) -> Result<&'static str, AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok("fresh")
    }
}

fn cached(_: bool) -> Result<&'static str, AppError> {
    Ok("cached")
}

#[circuit_breaker(
    group = "ramp-refuse", registry = &WITHOUT_FALLBACK,
    threshold = 1, open_ms = 1_000, ramp_ms = 10_000
)]
fn fetch(fail: bool) -> Result<&'static str, AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok("fresh")
    }
}

#[test]
fn the_attributes_fallback_answers_the_calls_the_ramp_refuses() {
    let clock = &WITH_FALLBACK.clock;
    assert_eq!(lookup(true), Err(AppError::Down)); // trips
    assert_eq!(lookup(false), Ok("cached"));
    clock.advance(Duration::from_secs(1));
    assert_eq!(lookup(false), Ok("fresh"), "the probe closes the circuit");
    clock.advance(Duration::from_millis(2_500)); // a quarter of the ramp
    let fresh = (0..100).filter(|_| lookup(false) == Ok("fresh")).count();
    assert_eq!(fresh, 25);
    let m = WITH_FALLBACK.metrics("ramp-fallback");
    assert_eq!(m.state, State::Closed);
    assert_eq!(m.ramp_refused, 75);
    assert_eq!(m.rejected, 1 + 75, "the open's refusal and the ramp's");
    assert_eq!(m.successes, 1 + 25, "a fallback's answer is no success");
    clock.advance(Duration::from_millis(7_500));
    let fresh = (0..100).filter(|_| lookup(false) == Ok("fresh")).count();
    assert_eq!(fresh, 100, "the ramp ran its length");
}

#[test]
fn without_a_fallback_the_caller_is_told_ramping_and_when_to_come_back() {
    let clock = &WITHOUT_FALLBACK.clock;
    assert_eq!(fetch(true), Err(AppError::Down));
    clock.advance(Duration::from_secs(1));
    assert_eq!(fetch(false), Ok("fresh"));
    clock.advance(Duration::from_millis(1_000)); // 10%
    let Err(AppError::Open(open)) = fetch(false) else {
        panic!("10% of the traffic: the first call is refused");
    };
    assert_eq!(open.reason(), OpenReason::Ramping);
    assert_eq!(open.group(), "ramp-refuse");
    let retry_after = open.retry_after().expect("a ramp says when");
    assert!(retry_after > Duration::ZERO && retry_after <= Duration::from_secs(9));
    clock.advance(retry_after);
    assert_eq!(fetch(false), Ok("fresh"), "admitted at its retry_after");
}

/// The share admitted a quarter of the way through the ramp, and the ramp's
/// config: what the HTTP tests below drive.
fn ramped() -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_millis(1_000))
        .ramp(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// A handler that answers `status` and counts the requests that reach it.
#[derive(Clone, Default)]
struct Upstream {
    status: Arc<std::sync::atomic::AtomicU16>,
    hits: Arc<AtomicUsize>,
}

async fn answer(AxumState(up): AxumState<Upstream>) -> StatusCode {
    up.hits.fetch_add(1, SeqCst);
    StatusCode::from_u16(up.status.load(SeqCst)).unwrap()
}

/// Serves `up` on 127.0.0.1, behind `layer` when there is one.
async fn serve(up: Upstream, layer: Option<CircuitBreakerLayer>) -> SocketAddr {
    let mut app = Router::new().route("/", get(answer));
    if let Some(layer) = layer {
        app = app.layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(breakerbox::axum::handle_error))
                .layer(layer),
        );
    }
    let app = app.with_state(up);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// Trips `breaker` through `request` (the upstream answers 500), lets the
/// open time pass on `clock`, heals the upstream and closes with one probe.
async fn trip_and_heal<F, Fut>(breaker: &Breaker, clock: &ManualClock, up: &Upstream, request: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    up.status.store(500, SeqCst);
    request().await;
    assert_eq!(breaker.state(), State::Open);
    clock.advance(Duration::from_secs(1));
    up.status.store(200, SeqCst);
    request().await;
    assert_eq!(breaker.state(), State::Closed);
    assert!(breaker.metrics().ramp.is_some(), "ramping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axum_answers_the_ramps_refusals_with_503_and_retry_after() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let breaker = registry.breaker("ramp-axum", &ramped());
    let up = Upstream::default();
    let layer = CircuitBreakerLayer::for_breaker(&breaker);
    let url = format!("http://{}/", serve(up.clone(), Some(layer)).await);
    let client = reqwest::Client::new();
    let get = || async { client.get(&url).send().await.unwrap() };
    trip_and_heal(&breaker, &clock, &up, || async {
        get().await;
    })
    .await;
    let hits = up.hits.load(SeqCst);
    clock.advance(Duration::from_millis(2_500));
    let mut ok = 0;
    for _ in 0..40 {
        let response = get().await;
        match response.status().as_u16() {
            200 => ok += 1,
            503 => {
                let seconds: u64 = response.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(seconds <= 8, "at most the ramp's time left: {seconds}");
                let body = response.text().await.unwrap();
                assert!(body.contains("ramping"), "{body}");
            }
            other => panic!("answered {other}"),
        }
    }
    assert_eq!(ok, 10, "a quarter of 40 requests");
    assert_eq!(
        up.hits.load(SeqCst) - hits,
        10,
        "only those reached the handler"
    );
    assert_eq!(breaker.metrics().ramp_refused, 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reqwest_middleware_refuses_with_ramping_without_sending() {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let breaker = registry.breaker("ramp-reqwest", &ramped());
    let up = Upstream::default();
    let url = format!("http://{}/", serve(up.clone(), None).await);
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(CircuitBreakerMiddleware::for_breaker(&breaker))
        .build();
    let send = || async { client.get(&url).send().await };
    trip_and_heal(&breaker, &clock, &up, || async {
        let _ = send().await;
    })
    .await;
    let hits = up.hits.load(SeqCst);
    clock.advance(Duration::from_millis(5_000));
    let mut sent = 0;
    for _ in 0..40 {
        match send().await {
            Ok(response) => {
                assert_eq!(response.status(), 200);
                sent += 1;
            }
            Err(error) => {
                let open = circuit_open(&error).expect("a refusal");
                assert_eq!(open.reason(), OpenReason::Ramping);
                assert!(open.retry_after().is_some());
            }
        }
    }
    assert_eq!(sent, 20, "half of 40 requests");
    assert_eq!(
        up.hits.load(SeqCst) - hits,
        20,
        "the refused were never sent"
    );
}
