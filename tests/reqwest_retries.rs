//! `CircuitBreakerMiddleware::retry` in a reqwest client against real servers
//! on 127.0.0.1: idempotent methods are retried and others sent once unless
//! marked safe, a streaming body is sent once, `Retry-After` (seconds and
//! dates) is each next wait's floor, a refusal is never retried, each host's
//! attempts are that host's outcomes, and the budget bounds the load. The
//! waits run on a timer that moves the breakers' `ManualClock`: exact, and no
//! real time passes.

#[path = "support/clock_timer.rs"]
mod clock_timer;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State as AxumState;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use breakerbox::clock::Clock;
use breakerbox::reqwest::{circuit_open, CircuitBreakerMiddleware, SafeToRetry};
use breakerbox::retry::{DEFAULT_BUDGET_FLOOR, DEFAULT_BUDGET_RATIO};
use breakerbox::{Breaker, Config, ManualClock, Registry, RetryPolicy, State};
use clock_timer::ClockTimer;
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};

type Headers = &'static [(&'static str, &'static str)];
const NONE: Headers = &[];

/// A server that answers from a script, one entry per request (the last
/// entry again once the script is spent), and counts what it receives.
#[derive(Clone)]
struct Upstream {
    script: Arc<Vec<(u16, Headers)>>,
    hits: Arc<AtomicUsize>,
}

impl Upstream {
    fn hits(&self) -> usize {
        self.hits.load(SeqCst)
    }
}

async fn answer(AxumState(upstream): AxumState<Upstream>) -> Response {
    let n = upstream.hits.fetch_add(1, SeqCst);
    let (status, headers) = upstream.script[n.min(upstream.script.len() - 1)];
    let mut response = axum::http::StatusCode::from_u16(status)
        .unwrap()
        .into_response();
    for (name, value) in headers {
        response.headers_mut().insert(*name, value.parse().unwrap());
    }
    response
}

/// A server on 127.0.0.1 answering `script` on `/`: its URL and its counts.
async fn serve(script: Vec<(u16, Headers)>) -> (String, Upstream) {
    let upstream = Upstream {
        script: Arc::new(script),
        hits: Arc::default(),
    };
    let app = Router::new()
        .route("/", any(answer))
        .with_state(upstream.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/"), upstream)
}

fn config(threshold: u32) -> Config {
    Config::builder()
        .threshold(threshold)
        .open(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// A client whose middleware guards with `breaker` and retries as `policy`
/// says, waiting on `breaker`'s `clock`.
fn client(
    breaker: &Breaker,
    clock: &ManualClock,
    policy: RetryPolicy,
) -> (ClientWithMiddleware, ClockTimer) {
    let timer = ClockTimer::new(clock);
    let middleware = CircuitBreakerMiddleware::for_breaker(breaker)
        .retry(policy)
        .retry_timer(timer.clone());
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    (client, timer)
}

#[tokio::test(flavor = "current_thread")]
async fn a_get_is_retried_and_each_attempt_is_one_outcome() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mw-get", config(10), clock.clone());
    let (client, timer) = client(&breaker, &clock, RetryPolicy::new(3).no_budget());
    let (url, upstream) = serve(vec![(502, NONE), (500, NONE), (200, NONE)]).await;

    let response = client.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.hits(), 3);
    let m = breaker.metrics();
    assert_eq!((m.calls, m.failures, m.successes, m.retries), (3, 2, 1, 2));
    let waits = timer.waits();
    assert_eq!(waits.len(), 2);
    assert!(waits[0] <= Duration::from_millis(50) && waits[1] <= Duration::from_millis(100));

    // Spent retries: the last answer, after exactly `retries` more attempts.
    let (url, upstream) = serve(vec![(503, NONE)]).await;
    let response = client.delete(&url).send().await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        upstream.hits(),
        4,
        "DELETE is idempotent: one attempt and three retries"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_429_with_retry_after_2_waits_2_seconds_and_is_not_a_failure() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mw-429", config(1), clock.clone());
    let (client, timer) = client(&breaker, &clock, RetryPolicy::new(2).no_budget());
    let (url, upstream) = serve(vec![(429, &[("retry-after", "2")]), (200, NONE)]).await;

    let response = client.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.hits(), 2);
    // The 429 held the breaker for 2 s and its release spread: the retry
    // waits the hold out.
    let waits = timer.waits();
    assert!(
        waits.len() == 1
            && waits[0] >= Duration::from_secs(2)
            && waits[0] <= Duration::from_millis(2_200),
        "{waits:?}"
    );
    assert!(clock.now_nanos() >= 2_000_000_000);
    let m = breaker.metrics();
    assert_eq!((m.ignored, m.failures, m.successes), (1, 0, 1));
    assert_eq!(m.holds.group, 1);
    assert_eq!(
        breaker.state(),
        State::Closed,
        "threshold 1: a 429 never counted"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_429_without_retry_after_is_not_retried() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mw-429-bare", config(10), clock.clone());
    let (client, timer) = client(&breaker, &clock, RetryPolicy::new(2).no_budget());
    let (url, upstream) = serve(vec![(429, NONE), (200, NONE)]).await;

    assert_eq!(client.get(&url).send().await.unwrap().status(), 429);
    assert_eq!(upstream.hits(), 1);
    assert!(timer.waits().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn a_503_with_a_retry_after_date_waits_until_that_date_by_the_server_s_clock() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mw-date", config(10), clock.clone());
    // A policy whose cap on a wait is above the server's 3 s.
    let policy = RetryPolicy::new(1)
        .max_delay(Duration::from_secs(5))
        .no_budget();
    let (client, timer) = client(&breaker, &clock, policy);
    let dated: Headers = &[
        ("date", "Tue, 01 Dec 2026 16:00:00 GMT"),
        ("retry-after", "Tue, 01 Dec 2026 16:00:03 GMT"),
    ];
    let (url, upstream) = serve(vec![(503, dated), (200, NONE)]).await;

    assert_eq!(client.get(&url).send().await.unwrap().status(), 200);
    assert_eq!(upstream.hits(), 2);
    let waits = timer.waits();
    assert!(
        waits.len() == 1
            && waits[0] >= Duration::from_secs(3)
            && waits[0] <= Duration::from_millis(3_300),
        "{waits:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_bad_retry_after_is_ignored_and_a_huge_one_is_not_waited_for() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mw-bad-hint", config(10), clock.clone());
    let policy = RetryPolicy::new(1)
        .delay(Duration::from_millis(10))
        .no_budget();
    let (client, timer) = client(&breaker, &clock, policy);

    let (url, upstream) = serve(vec![(503, &[("retry-after", "soon")]), (200, NONE)]).await;
    assert_eq!(client.get(&url).send().await.unwrap().status(), 200);
    assert_eq!(upstream.hits(), 2);
    assert!(
        timer.waits()[0] <= Duration::from_millis(10),
        "the backoff's draw alone"
    );

    let (url, upstream) = serve(vec![(503, &[("retry-after", "86400")]), (200, NONE)]).await;
    let response = client.get(&url).send().await.unwrap();
    assert_eq!(
        response.status(),
        503,
        "a day's wait is the caller's to decide"
    );
    assert_eq!(upstream.hits(), 1);
    assert_eq!(timer.waits().len(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_post_is_sent_once_unless_it_is_marked_safe_to_retry() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mw-post", config(10), clock.clone());
    let (client, _) = client(&breaker, &clock, RetryPolicy::new(2).no_budget());

    let (url, upstream) = serve(vec![(502, NONE), (200, NONE)]).await;
    let response = client.post(&url).body("{}").send().await.unwrap();
    assert_eq!(response.status(), 502);
    assert_eq!(upstream.hits(), 1, "POST is not idempotent");
    let response = client.patch(&url).body("{}").send().await.unwrap();
    assert_eq!(
        response.status(),
        200,
        "PATCH was sent once, and got the script's second answer"
    );

    let (url, upstream) = serve(vec![(502, NONE), (200, NONE)]).await;
    let response = client
        .post(&url)
        .header("idempotency-key", "order-7")
        .body("{}")
        .with_extension(SafeToRetry)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.hits(), 2, "marked safe: retried");
}

#[tokio::test(flavor = "current_thread")]
async fn a_streaming_body_is_sent_once() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mw-stream", config(10), clock.clone());
    let (client, timer) = client(&breaker, &clock, RetryPolicy::new(3).no_budget());
    let (url, upstream) = serve(vec![(502, NONE), (200, NONE)]).await;

    let stream = reqwest::Body::wrap(http_body_util::Full::new(&b"{\"qty\": 1}"[..]));
    let response = client.put(&url).body(stream).send().await.unwrap();
    assert_eq!(response.status(), 502, "a stream cannot be sent again");
    assert_eq!(upstream.hits(), 1);
    // The same PUT with a body in memory is retried.
    let response = client.put(&url).body("{\"qty\": 1}").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.hits(), 2);
    assert!(
        timer.waits().is_empty(),
        "the second PUT's first attempt succeeded"
    );
    assert_eq!(breaker.metrics().failures, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_refusal_is_never_retried_and_no_retry_follows_the_failure_that_opens() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mw-opens", config(2), clock.clone());
    let (client, timer) = client(&breaker, &clock, RetryPolicy::new(5).no_budget());
    let (url, upstream) = serve(vec![(502, NONE)]).await;

    let response = client.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 502);
    assert_eq!(upstream.hits(), 2, "the second failure opened the circuit");
    assert_eq!(timer.waits().len(), 1);
    assert_eq!(breaker.state(), State::Open);

    let refused = client.get(&url).send().await.unwrap_err();
    assert!(circuit_open(&refused).is_some(), "{refused}");
    assert_eq!(upstream.hits(), 2, "refused: not sent, not retried");
    assert_eq!(timer.waits().len(), 1);
    assert_eq!(breaker.metrics().rejected, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn each_host_s_attempts_are_outcomes_in_that_host_s_breaker() {
    let clock = ManualClock::new();
    let registry: &'static Registry = Box::leak(Box::new(Registry::with_clock(clock.clone())));
    let timer = ClockTimer::new(&clock);
    let middleware = CircuitBreakerMiddleware::per_host_in(registry, "mw-hosts", &config(10), 100)
        .unwrap()
        .retry(RetryPolicy::new(2).no_budget())
        .retry_timer(timer.clone());
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let (bad, bad_host) = serve(vec![(503, NONE)]).await;
    let (good, good_host) = serve(vec![(200, NONE)]).await;

    assert_eq!(client.get(&bad).send().await.unwrap().status(), 503);
    assert_eq!(client.get(&good).send().await.unwrap().status(), 200);
    assert_eq!((bad_host.hits(), good_host.hits()), (3, 1));
    let hosts = registry
        .keyed::<String>("mw-hosts", &config(10), 100)
        .unwrap();
    let key = |url: &str| {
        url.trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned()
    };
    let bad_m = hosts.get(&key(&bad)).unwrap().metrics();
    let good_m = hosts.get(&key(&good)).unwrap().metrics();
    assert_eq!((bad_m.calls, bad_m.failures, bad_m.retries), (3, 3, 2));
    assert_eq!((good_m.calls, good_m.successes, good_m.retries), (1, 1, 0));
}

const CALLS: u64 = 200;
const RETRIES: u32 = 3;

/// Offers `CALLS` GETs through a middleware on `breaker` retrying as `policy`
/// says to a server that answers every request `503`: the requests it
/// received and the seconds the breaker's clock moved.
async fn offer(breaker: &Breaker, clock: &ManualClock, policy: RetryPolicy) -> (u64, f64) {
    let (client, _) = client(breaker, clock, policy);
    let (url, upstream) = serve(vec![(503, NONE)]).await;
    for _ in 0..CALLS {
        assert_eq!(client.get(&url).send().await.unwrap().status(), 503);
    }
    (upstream.hits() as u64, clock.now_nanos() as f64 / 1e9)
}

#[tokio::test(flavor = "current_thread")]
async fn the_budget_holds_the_server_s_load_near_the_calls_and_without_it_retries_multiply_it() {
    let policy = RetryPolicy::new(RETRIES).delay(Duration::from_millis(1));

    let clock = ManualClock::new();
    let budgeted = Breaker::with_clock("mw-budgeted", config(100_000), clock.clone());
    let (with_budget, seconds) = offer(&budgeted, &clock, policy).await;
    let bound = (1.0 + DEFAULT_BUDGET_RATIO) * CALLS as f64
        + f64::from(DEFAULT_BUDGET_FLOOR) * (1.0 + seconds);
    println!("reqwest middleware with the budget: {with_budget} requests for {CALLS} calls (bound {bound:.1})");
    assert!(with_budget as f64 <= bound, "{with_budget} > {bound}");
    let m = budgeted.metrics();
    assert_eq!(
        m.calls, with_budget,
        "each request is one attempt, one outcome"
    );
    assert!(m.retries_budget_exhausted > 0, "the budget stopped retries");

    let clock = ManualClock::new();
    let unbudgeted = Breaker::with_clock("mw-unbudgeted", config(100_000), clock.clone());
    let (without, _) = offer(&unbudgeted, &clock, policy.no_budget()).await;
    println!("reqwest middleware without it: {without} requests for {CALLS} calls");
    assert_eq!(without, CALLS * u64::from(RETRIES + 1));
}

#[tokio::test(flavor = "current_thread")]
async fn the_layer_and_the_middleware_of_a_group_draw_on_its_one_budget() {
    use breakerbox::tower::{CircuitBreakerLayer, Cloned};
    use tower::{Layer, ServiceExt};

    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("mw-shared-budget", config(100), clock.clone());
    // No first attempts' share, and one retry of floor to start with.
    let policy = RetryPolicy::new(1).budget(0.0, 1);
    let (client, _) = client(&breaker, &clock, policy);
    let (url, upstream) = serve(vec![(503, NONE)]).await;

    let layer = CircuitBreakerLayer::for_breaker(&breaker)
        .retry(policy)
        .replay(Cloned)
        .timer(ClockTimer::new(&clock));
    let failing = tower::service_fn(|_: ()| async {
        Ok::<_, std::convert::Infallible>(http::Response::builder().status(503).body(()).unwrap())
    });
    let response = layer.layer(failing).oneshot(()).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        breaker.metrics().retries,
        1,
        "the layer's retry took the one token"
    );

    assert_eq!(client.get(&url).send().await.unwrap().status(), 503);
    assert_eq!(
        upstream.hits(),
        1,
        "the middleware found the group's budget spent"
    );
    assert_eq!(breaker.metrics().retries_budget_exhausted, 1);
}

#[breakerbox::circuit_breaker(group = "mw-attribute-budget", retry = 2, idempotent = true)]
fn lookup() -> Result<u32, breakerbox::CallError<std::io::Error>> {
    Ok(7)
}

#[test]
fn the_attribute_s_fns_and_the_integrations_of_a_group_share_its_retry() {
    use breakerbox::tower::CircuitBreakerLayer;

    assert_eq!(lookup().unwrap(), 7);
    let group = breakerbox::registry().get("mw-attribute-budget").unwrap();
    let made = group.made_group_retry().expect("the fn's call made it");
    let layer = CircuitBreakerLayer::new("mw-attribute-budget").retry(RetryPolicy::new(5));
    assert!(std::ptr::eq(layer.retry_budget(), made));
    assert_eq!(made.policy().retries(), 2, "the first declaration holds");
    let middleware =
        CircuitBreakerMiddleware::group("mw-attribute-budget").retry(RetryPolicy::new(5));
    assert!(std::ptr::eq(middleware.retry_budget().unwrap(), made));
}
