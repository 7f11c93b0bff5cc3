//! `CircuitBreakerLayer` on a real axum server on 127.0.0.1, called over real
//! sockets: it opens after `threshold` 5xx answers, refuses with `503` and
//! `Retry-After` without running the handler, probes and closes; a request whose
//! client goes away is abandoned, not failed; and a route's layer and a
//! `#[circuit_breaker]` fn of the same group share one breaker.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::extract::State as AxumState;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use breakerbox::tower::CircuitBreakerLayer;
use breakerbox::{circuit_breaker, registry, Breaker, CallError, Config, Registry, State};
use tower::ServiceBuilder;

/// A handler's answers: the status to send, and how many requests reached it.
#[derive(Clone, Default)]
struct Handler {
    status: Arc<AtomicU16>,
    hits: Arc<AtomicUsize>,
}

impl Handler {
    fn answering(status: u16) -> Self {
        let handler = Handler::default();
        handler.status.store(status, SeqCst);
        handler
    }

    fn hits(&self) -> usize {
        self.hits.load(SeqCst)
    }
}

async fn answer(AxumState(handler): AxumState<Handler>) -> StatusCode {
    handler.hits.fetch_add(1, SeqCst);
    StatusCode::from_u16(handler.status.load(SeqCst)).unwrap()
}

async fn hang(AxumState(handler): AxumState<Handler>) -> StatusCode {
    handler.hits.fetch_add(1, SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    StatusCode::OK
}

/// Serves `/` (answers as `handler` says) and `/hang` (never answers in time)
/// behind `layer`, on 127.0.0.1 on a free port.
async fn serve(layer: CircuitBreakerLayer, handler: Handler) -> SocketAddr {
    let app = Router::new()
        .route("/", get(answer))
        .route("/hang", get(hang))
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(breakerbox::axum::handle_error))
                .layer(layer),
        )
        .with_state(handler);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// What a GET answered: the status and the `Retry-After` header.
async fn get_status(client: &reqwest::Client, url: &str) -> (u16, Option<String>) {
    let response = client.get(url).send().await.unwrap();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), retry_after)
}

fn config(threshold: u32, open_ms: u64) -> Config {
    Config::builder()
        .threshold(threshold)
        .open(Duration::from_millis(open_ms))
        .build()
        .unwrap()
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_opens_after_threshold_5xx_refuses_with_503_then_probes_and_closes() {
    // Open long enough that a slow box cannot let a probe in before the refusal.
    let breaker = REGISTRY.breaker("layer-server", &config(3, 1_000));
    let handler = Handler::answering(500);
    let addr = serve(CircuitBreakerLayer::for_breaker(&breaker), handler.clone()).await;
    let url = format!("http://{addr}/");
    let client = reqwest::Client::new();

    for n in 1..=3 {
        assert_eq!(get_status(&client, &url).await, (500, None));
        assert_eq!(handler.hits(), n);
    }
    assert_eq!(breaker.state(), State::Open);

    // Open: 503 with Retry-After, and the handler does not run.
    let (status, retry_after) = get_status(&client, &url).await;
    assert_eq!(status, 503);
    let seconds: u64 = retry_after.expect("Retry-After").parse().unwrap();
    assert!((1..=2).contains(&seconds), "open_ms is 1000: {seconds}");
    assert_eq!(handler.hits(), 3, "refused without the handler");
    assert_eq!(breaker.metrics().rejected, 1);

    // Healed: once the open time has passed, a probe goes and closes it.
    handler.status.store(200, SeqCst);
    let mut answers = Vec::new();
    for _ in 0..250 {
        let (status, _) = get_status(&client, &url).await;
        answers.push(status);
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(answers.last(), Some(&200), "never probed: {answers:?}");
    assert!(answers[..answers.len() - 1].iter().all(|&s| s == 503));
    assert_eq!(handler.hits(), 4, "only the probe reached the handler");
    let m = breaker.metrics();
    assert_eq!(m.state, State::Closed);
    assert_eq!(m.probes_succeeded, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_client_goes_away_is_abandoned_not_failed() {
    let breaker = REGISTRY.breaker("layer-abandoned", &config(1, 60_000));
    let handler = Handler::answering(200);
    let addr = serve(CircuitBreakerLayer::for_breaker(&breaker), handler.clone()).await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();

    let gave_up = client.get(format!("http://{addr}/hang")).send().await;
    assert!(gave_up.unwrap_err().is_timeout());
    assert_eq!(handler.hits(), 1);
    // The server notices the closed connection and drops the handler's future.
    let mut abandoned = 0;
    for _ in 0..100 {
        abandoned = breaker.metrics().abandoned;
        if abandoned == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(abandoned, 1);
    let m = breaker.metrics();
    assert_eq!((m.failures, m.successes), (0, 0));
    assert_eq!(
        m.state,
        State::Closed,
        "threshold 1: a failure would have opened it"
    );
}

#[derive(Debug)]
enum FetchError {
    Down,
}

/// Config of the `shared-orders` group, declared by the attribute and the layer.
#[circuit_breaker(group = "shared-orders", threshold = 2, open_ms = 60_000)]
fn fetch_orders(fail: bool) -> Result<u32, CallError<FetchError>> {
    if fail {
        Err(CallError::Inner(FetchError::Down))
    } else {
        Ok(7)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_and_the_attribute_of_one_group_share_one_breaker() {
    // The attribute's first call registers the group; the layer declaring the
    // same config finds that breaker, with no conflict.
    assert_eq!(fetch_orders(false).unwrap(), 7);
    let layer = CircuitBreakerLayer::with_config("shared-orders", &config(2, 60_000));
    let in_registry: Breaker = registry().get("shared-orders").unwrap();
    assert!(layer.breaker().same_as(&in_registry));
    assert!(registry()
        .conflicts()
        .iter()
        .all(|c| c.group != "shared-orders"));

    let handler = Handler::answering(200);
    let addr = serve(layer, handler.clone()).await;
    let url = format!("http://{addr}/");
    let client = reqwest::Client::new();
    assert_eq!(get_status(&client, &url).await.0, 200);

    // Failures of the fn open the route...
    let _ = fetch_orders(true);
    let _ = fetch_orders(true);
    let (status, retry_after) = get_status(&client, &url).await;
    assert_eq!(status, 503);
    assert!(retry_after.is_some());
    assert_eq!(handler.hits(), 1);
    // ...and the route's refusal is the fn's too.
    assert!(fetch_orders(false).unwrap_err().is_open());
    assert_eq!(in_registry.metrics().successes, 2); // one by the fn, one by the route
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_layer_built_first_declares_the_config_the_attribute_then_shares() {
    let layer = CircuitBreakerLayer::with_config("shared-invoices", &config(4, 30_000));
    assert_eq!(layer.breaker().config().threshold(), 4);

    #[circuit_breaker(group = "shared-invoices", threshold = 4, open_ms = 30_000)]
    fn invoice() -> Result<(), CallError<FetchError>> {
        Ok(())
    }
    invoice().unwrap();
    assert!(layer
        .breaker()
        .same_as(&registry().get("shared-invoices").unwrap()));
    assert_eq!(layer.breaker().metrics().successes, 1);
    assert!(registry()
        .conflicts()
        .iter()
        .all(|c| c.group != "shared-invoices"));
}
