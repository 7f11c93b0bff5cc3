//! `CircuitBreakerMiddleware` in a reqwest client against real servers on
//! 127.0.0.1: per host, a failing host's breaker trips and refuses without
//! sending while a healthy host's stays closed, and hosts past `max_hosts` are
//! forgotten when idle but never while open; per group, every host shares one
//! breaker; 4xx answers are ignored; a cancelled request is abandoned.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::extract::State as AxumState;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use breakerbox::reqwest::{circuit_open, CircuitBreakerMiddleware};
use breakerbox::{Config, OpenReason, Registry, State};
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};

#[derive(Clone, Default)]
struct Host {
    status: Arc<AtomicU16>,
    hits: Arc<AtomicUsize>,
}

impl Host {
    fn hits(&self) -> usize {
        self.hits.load(SeqCst)
    }
}

async fn answer(AxumState(host): AxumState<Host>) -> StatusCode {
    host.hits.fetch_add(1, SeqCst);
    StatusCode::from_u16(host.status.load(SeqCst)).unwrap()
}

async fn hang(AxumState(host): AxumState<Host>) -> StatusCode {
    host.hits.fetch_add(1, SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    StatusCode::OK
}

/// A server on 127.0.0.1 on a free port, answering `status` on `/` and never
/// in time on `/hang`.
async fn host(status: u16) -> (SocketAddr, Host) {
    let host = Host::default();
    host.status.store(status, SeqCst);
    let app = Router::new()
        .route("/", get(answer))
        .route("/hang", get(hang))
        .with_state(host.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, host)
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

fn config() -> Config {
    Config::builder()
        .threshold(3)
        .open(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn client(middleware: CircuitBreakerMiddleware) -> ClientWithMiddleware {
    ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_host_a_failing_host_trips_and_a_healthy_one_does_not() {
    let (bad, bad_host) = host(502).await;
    let (good, good_host) = host(200).await;
    let client = client(
        CircuitBreakerMiddleware::per_host_in(&REGISTRY, "per-host", &config(), 100).unwrap(),
    );
    let (bad_url, good_url) = (format!("http://{bad}/"), format!("http://{good}/"));

    for _ in 0..3 {
        let response = client.get(&bad_url).send().await.unwrap();
        assert_eq!(response.status(), 502);
        let response = client.get(&good_url).send().await.unwrap();
        assert_eq!(response.status(), 200);
    }
    let hosts = REGISTRY
        .keyed::<String>("per-host", &config(), 100)
        .unwrap();
    let bad_breaker = hosts.get(&bad.to_string()).unwrap();
    let good_breaker = hosts.get(&good.to_string()).unwrap();
    assert_eq!(hosts.metrics().keys, 2);
    let port = bad.port().to_string();
    assert!(
        !REGISTRY.groups().iter().any(|g| g.contains(&port)),
        "hosts are keys, not groups: nothing interned per host"
    );
    assert_eq!(bad_breaker.state(), State::Open);
    assert_eq!(good_breaker.state(), State::Closed);
    assert!(!bad_breaker.same_as(&good_breaker));

    // The failing host is left alone; the healthy one still answers.
    for _ in 0..5 {
        let refused = client.get(&bad_url).send().await.unwrap_err();
        let open = circuit_open(&refused).expect("a refusal");
        assert_eq!(open.group(), "per-host");
        assert_eq!(open.reason(), OpenReason::Open);
        assert!(open.retry_after().is_some());
        assert_eq!(client.get(&good_url).send().await.unwrap().status(), 200);
    }
    assert_eq!(bad_host.hits(), 3, "refused requests were not sent");
    assert_eq!(good_host.hits(), 8);
    assert_eq!(bad_breaker.metrics().rejected, 5);
    assert_eq!(good_breaker.metrics().successes, 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_group_for_every_host_ignores_4xx_and_fails_on_refused_connections() {
    let group = REGISTRY.breaker("per-group", &config());
    let client = client(CircuitBreakerMiddleware::for_breaker(&group));
    let (addr, host) = host(404).await;
    for _ in 0..5 {
        let response = client.get(format!("http://{addr}/")).send().await.unwrap();
        assert_eq!(response.status(), 404);
    }
    assert_eq!(group.metrics().ignored, 5);
    assert_eq!(group.state(), State::Closed);

    // A port nobody listens on: connection refused, three times, trips the group.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nobody = closed.local_addr().unwrap();
    drop(closed);
    for _ in 0..3 {
        let error = client
            .get(format!("http://{nobody}/"))
            .send()
            .await
            .unwrap_err();
        assert!(circuit_open(&error).is_none(), "{error}");
    }
    assert_eq!(group.state(), State::Open);
    let refused = client
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap_err();
    assert!(
        circuit_open(&refused).is_some(),
        "one group: every host is refused"
    );
    assert_eq!(host.hits(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_times_out_in_the_caller_is_abandoned() {
    let group = REGISTRY.breaker("per-group-abandoned", &config());
    let client = client(CircuitBreakerMiddleware::for_breaker(&group));
    let (addr, _) = host(200).await;
    let request = client.get(format!("http://{addr}/hang")).send();
    let gave_up = tokio::time::timeout(Duration::from_millis(100), request).await;
    assert!(gave_up.is_err(), "the caller's timeout fired");
    let m = group.metrics();
    assert_eq!((m.abandoned, m.failures, m.successes), (1, 0, 0));
}

#[test]
fn a_group_declared_by_the_middleware_is_the_registry_entry_of_that_group() {
    let middleware = CircuitBreakerMiddleware::with_config("mw-declared", &config());
    let url = "http://127.0.0.1:1/".parse().unwrap();
    let breaker = middleware.breaker_for(&url).unwrap();
    assert!(breaker.same_as(&breakerbox::registry().get("mw-declared").unwrap()));
    assert_eq!(breaker.config(), &config());
    // One group: every host's requests go through it.
    let other = "http://example.invalid:8080/".parse().unwrap();
    assert!(breaker.same_as(&middleware.breaker_for(&other).unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_host_keeps_at_most_about_max_hosts_idle_hosts_and_never_forgets_an_open_one() {
    let registry: &'static Registry = Box::leak(Box::new(Registry::new()));
    let middleware = CircuitBreakerMiddleware::per_host_in(registry, "bounded", &config(), 4);
    let client = client(middleware.unwrap());
    let (bad, _) = host(503).await;
    for _ in 0..3 {
        client.get(format!("http://{bad}/")).send().await.unwrap();
    }
    let hosts = registry.keyed::<String>("bounded", &config(), 4).unwrap();
    assert_eq!(hosts.get(&bad.to_string()).unwrap().state(), State::Open);

    // Twenty more hosts, each asked twice: the idle ones are evicted as new ones come.
    for _ in 0..20 {
        let (good, good_host) = host(200).await;
        for _ in 0..2 {
            let response = client.get(format!("http://{good}/")).send().await.unwrap();
            assert_eq!(response.status(), 200);
        }
        assert_eq!(good_host.hits(), 2);
    }
    let m = hosts.metrics();
    assert!(m.keys <= 5, "{} hosts held for max_hosts = 4", m.keys);
    assert!(m.evictions >= 16, "{} evictions", m.evictions);
    assert_eq!(m.successes, 40, "evicted hosts' counts are kept");
    // The open host was never evicted: it still refuses without sending.
    assert_eq!(hosts.get(&bad.to_string()).unwrap().state(), State::Open);
    let refused = client
        .get(format!("http://{bad}/"))
        .send()
        .await
        .unwrap_err();
    assert!(circuit_open(&refused).is_some());
}
