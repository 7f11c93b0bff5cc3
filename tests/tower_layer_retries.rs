//! `CircuitBreakerLayer::retry` against real HTTP servers on 127.0.0.1: on an
//! axum route (the layer retries the handler) and around a reqwest client (the
//! layer retries the upstream). Attempts and waits are exact: the waits run on
//! a timer that moves the breaker's `ManualClock`, or on tokio's paused clock.

#[path = "support/clock_timer.rs"]
mod clock_timer;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::extract::State as AxumState;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use breakerbox::clock::Clock;
use breakerbox::retry::{DEFAULT_BUDGET_FLOOR, DEFAULT_BUDGET_RATIO};
use breakerbox::timeout::Timer;
use breakerbox::tower::{CircuitBreakerLayer, Cloned, IdempotentHttp};
use breakerbox::{Breaker, Config, ManualClock, RetryPolicy};
use clock_timer::ClockTimer;
use tower::{service_fn, Layer, ServiceBuilder, ServiceExt};

type Headers = &'static [(&'static str, &'static str)];

/// An upstream that answers from a script, one entry per request (the last
/// entry again once the script is spent), and counts what it receives.
#[derive(Clone)]
struct Upstream {
    script: Arc<Vec<(u16, Headers)>>,
    hits: Arc<AtomicUsize>,
}

impl Upstream {
    fn new(script: Vec<(u16, Headers)>) -> Self {
        Upstream {
            script: Arc::new(script),
            hits: Arc::default(),
        }
    }

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

fn breaker(name: &str, threshold: u32, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .threshold(threshold)
        .open(Duration::from_secs(60))
        .build()
        .unwrap();
    Breaker::with_clock(name, config, clock.clone())
}

/// Serves `upstream` on `/`, behind `breaker` retrying as `policy` says with
/// its waits on `clock`, on 127.0.0.1: the address and the timer.
async fn serve(
    (breaker, clock): (&Breaker, &ManualClock),
    policy: RetryPolicy,
    upstream: &Upstream,
) -> (SocketAddr, ClockTimer) {
    let timer = ClockTimer::new(clock);
    let layer = CircuitBreakerLayer::for_breaker(breaker)
        .retry(policy)
        .replay(IdempotentHttp)
        .timer(timer.clone());
    let app = Router::new()
        .route("/", any(answer))
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(breakerbox::axum::handle_error))
                .layer(layer),
        )
        .with_state(upstream.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, timer)
}

const NONE: Headers = &[];

#[tokio::test(flavor = "current_thread")]
async fn a_failed_attempt_is_retried_and_each_attempt_is_one_outcome() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-retry-ok", 10, &clock);
    let upstream = Upstream::new(vec![(502, NONE), (500, NONE), (200, NONE)]);
    let policy = RetryPolicy::new(3).no_budget();
    let (addr, timer) = serve((&breaker, &clock), policy, &upstream).await;

    let response = reqwest::get(format!("http://{addr}/")).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.hits(), 3, "two failures, then the answer");
    let m = breaker.metrics();
    assert_eq!((m.calls, m.failures, m.successes, m.retries), (3, 2, 1, 2));
    // Full jitter below the default backoff's doubling bounds: 50 ms, 100 ms.
    let waits = timer.waits();
    assert_eq!(waits.len(), 2);
    assert!(waits[0] <= Duration::from_millis(50), "{waits:?}");
    assert!(waits[1] <= Duration::from_millis(100), "{waits:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn attempts_stop_at_the_policy_s_retries_with_the_last_answer() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-retry-spent", 10, &clock);
    let upstream = Upstream::new(vec![(503, NONE)]);
    let (addr, timer) = serve(
        (&breaker, &clock),
        RetryPolicy::new(2).no_budget(),
        &upstream,
    )
    .await;

    let response = reqwest::get(format!("http://{addr}/")).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(upstream.hits(), 3, "one attempt and two retries");
    assert_eq!(timer.waits().len(), 2);
    assert_eq!(breaker.metrics().failures, 3);
}

#[tokio::test(flavor = "current_thread")]
async fn a_503_with_retry_after_makes_the_next_wait_at_least_that_long() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-retry-after", 10, &clock);
    let upstream = Upstream::new(vec![(503, &[("retry-after", "2")]), (200, NONE)]);
    let (addr, timer) = serve(
        (&breaker, &clock),
        RetryPolicy::new(1).no_budget(),
        &upstream,
    )
    .await;

    let response = reqwest::get(format!("http://{addr}/")).await.unwrap();
    assert_eq!(response.status(), 200);
    // The answer held the breaker for 2 s and its release spread (at most a
    // tenth more): the retry waits the hold out, never less than asked.
    let waits = timer.waits();
    assert_eq!(waits.len(), 1);
    assert!(
        waits[0] >= Duration::from_secs(2) && waits[0] <= Duration::from_millis(2_200),
        "{waits:?}"
    );
    assert_eq!(clock.now_nanos(), waits[0].as_nanos() as u64);
    let m = breaker.metrics();
    assert_eq!(
        (m.failures, m.ignored, m.successes, m.holds.group),
        (0, 1, 1, 1)
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_429_is_retried_only_when_it_says_when_and_is_never_a_failure() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-429", 1, &clock);
    let upstream = Upstream::new(vec![
        (429, &[("retry-after", "3")]),
        (429, NONE),
        (200, NONE),
    ]);
    // A policy whose cap on a wait is above the server's 3 s.
    let policy = RetryPolicy::new(3)
        .max_delay(Duration::from_secs(5))
        .no_budget();
    let (addr, timer) = serve((&breaker, &clock), policy, &upstream).await;

    let response = reqwest::get(format!("http://{addr}/")).await.unwrap();
    assert_eq!(response.status(), 429, "the second 429 has no Retry-After");
    assert_eq!(upstream.hits(), 2);
    let waits = timer.waits();
    assert!(
        waits.len() == 1 && waits[0] >= Duration::from_secs(3),
        "the hold waited out: {waits:?}"
    );
    let m = breaker.metrics();
    assert_eq!(
        (m.ignored, m.failures),
        (2, 0),
        "threshold 1, and still closed"
    );
    assert_eq!(breaker.state(), breakerbox::State::Closed);
}

#[tokio::test(flavor = "current_thread")]
async fn a_retry_after_longer_than_the_limit_returns_the_answer_at_once() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-retry-after-huge", 10, &clock);
    let upstream = Upstream::new(vec![(503, &[("retry-after", "3600")]), (200, NONE)]);
    let (addr, timer) = serve(
        (&breaker, &clock),
        RetryPolicy::new(3).no_budget(),
        &upstream,
    )
    .await;

    let response = reqwest::get(format!("http://{addr}/")).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        response.headers()["retry-after"],
        "3600",
        "for the caller to honour"
    );
    assert_eq!(upstream.hits(), 1);
    assert!(timer.waits().is_empty());
    assert_eq!(breaker.metrics().retries, 0);
}

#[tokio::test(flavor = "current_thread")]
async fn a_post_or_a_request_with_a_body_is_sent_once() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-post", 10, &clock);
    let upstream = Upstream::new(vec![(502, NONE), (200, NONE)]);
    let (addr, timer) = serve(
        (&breaker, &clock),
        RetryPolicy::new(3).no_budget(),
        &upstream,
    )
    .await;
    let client = reqwest::Client::new();

    let post = client.post(format!("http://{addr}/")).send().await.unwrap();
    assert_eq!(post.status(), 502);
    assert_eq!(upstream.hits(), 1, "POST is not idempotent");
    let put = client
        .put(format!("http://{addr}/"))
        .body("{\"qty\": 1}")
        .send()
        .await
        .unwrap();
    assert_eq!(
        put.status(),
        200,
        "the script's second answer: PUT was sent once"
    );
    assert_eq!(upstream.hits(), 2);
    assert!(timer.waits().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn a_refusal_is_never_retried_and_no_retry_follows_the_failure_that_opens() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-opens", 2, &clock);
    let upstream = Upstream::new(vec![(502, NONE)]);
    let (addr, timer) = serve(
        (&breaker, &clock),
        RetryPolicy::new(5).no_budget(),
        &upstream,
    )
    .await;

    // Two failures trip the breaker: the call ends with the second.
    let response = reqwest::get(format!("http://{addr}/")).await.unwrap();
    assert_eq!(response.status(), 502);
    assert_eq!(upstream.hits(), 2);
    assert_eq!(
        timer.waits().len(),
        1,
        "no wait after the failure that opened"
    );
    assert_eq!(breaker.state(), breakerbox::State::Open);

    // Open: refused at once, never retried, the handler not run.
    let refused = reqwest::get(format!("http://{addr}/")).await.unwrap();
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(upstream.hits(), 2);
    assert_eq!(timer.waits().len(), 1);
    assert_eq!(breaker.metrics().rejected, 1);
}

/// A timer during whose wait an operator isolates the dependency.
#[derive(Clone)]
struct ForcesOpen(Breaker);

impl Timer for ForcesOpen {
    type Sleep = std::future::Ready<()>;

    fn sleep(&self, _: Duration) -> Self::Sleep {
        self.0.force_open();
        std::future::ready(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_retry_refused_after_its_wait_ends_the_call_with_the_refusal() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-refused-after-wait", 10, &clock);
    let attempts = Arc::new(AtomicUsize::new(0));
    let seen = attempts.clone();
    let service = service_fn(move |_: http::Request<String>| {
        seen.fetch_add(1, SeqCst);
        let failed = http::Response::builder().status(502).body(()).unwrap();
        async { Ok::<_, std::convert::Infallible>(failed) }
    });
    let layer = CircuitBreakerLayer::for_breaker(&breaker)
        .retry(RetryPolicy::new(3).no_budget())
        .timer(ForcesOpen(breaker.clone()));
    let error = layer
        .layer(service)
        .oneshot(http::Request::new(String::new()))
        .await
        .unwrap_err();
    let open = error.open().expect("the refusal, not the 502");
    assert_eq!(open.reason(), breakerbox::OpenReason::ForcedOpen);
    assert_eq!(attempts.load(SeqCst), 1, "the refused retry was not sent");
    assert_eq!(breaker.metrics().rejected, 1);
}

/// A classifier whose failures ask for a delay before the next attempt
/// (`retry_after`) without asking every caller to wait (no hold).
#[derive(Clone)]
struct FailsWithDelay;

impl<B, E> breakerbox::tower::Classify<http::Response<B>, E> for FailsWithDelay {
    fn classify(&self, result: Result<&http::Response<B>, &E>) -> breakerbox::tower::Verdict {
        breakerbox::tower::HttpResponses.classify(result)
    }

    fn retry_after(&self, result: Result<&http::Response<B>, &E>) -> Option<Duration> {
        breakerbox::tower::HttpResponses.retry_after(result)
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_default_timer_waits_the_servers_delay_on_tokio_s_clock() {
    let breaker = Breaker::new("layer-tokio-timer", Config::default());
    let attempts = Arc::new(AtomicUsize::new(0));
    let seen = attempts.clone();
    let service = service_fn(move |_: http::Request<String>| {
        let n = seen.fetch_add(1, SeqCst);
        async move {
            let response = match n {
                0 => http::Response::builder()
                    .status(503)
                    .header("retry-after", "2"),
                _ => http::Response::builder().status(200),
            };
            Ok::<_, std::convert::Infallible>(response.body(()).unwrap())
        }
    });
    let layer = CircuitBreakerLayer::for_breaker(&breaker)
        .classify(FailsWithDelay)
        .retry(RetryPolicy::new(1));
    let started = tokio::time::Instant::now();
    let response = layer
        .layer(service)
        .oneshot(http::Request::new(String::new()))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(attempts.load(SeqCst), 2);
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(2), "{waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
}

const CALLS: u64 = 200;
const RETRIES: u32 = 3;

/// Offers `CALLS` calls through a layer on `breaker` retrying as `policy`
/// says around a reqwest client of a server that answers every request `503`:
/// the requests it received and the seconds the breaker's clock moved.
async fn offer(breaker: &Breaker, clock: &ManualClock, policy: RetryPolicy) -> (u64, f64) {
    let upstream = Upstream::new(vec![(503, NONE)]);
    let app = Router::new()
        .route("/", any(answer))
        .with_state(upstream.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let client = reqwest::Client::new();
    let url = format!("http://{addr}/");
    let upstream_call = service_fn(move |_: ()| {
        let request = client.get(&url).send();
        async move {
            let answer = request.await?;
            Ok::<_, reqwest::Error>(
                http::Response::builder()
                    .status(answer.status())
                    .body(())
                    .unwrap(),
            )
        }
    });
    let layer = CircuitBreakerLayer::for_breaker(breaker)
        .retry(policy)
        .replay(Cloned)
        .timer(ClockTimer::new(clock));
    let service = layer.layer(upstream_call);
    for _ in 0..CALLS {
        let response = service.clone().oneshot(()).await.unwrap();
        assert_eq!(response.status(), 503);
    }
    (upstream.hits() as u64, clock.now_nanos() as f64 / 1e9)
}

#[tokio::test(flavor = "current_thread")]
async fn the_budget_holds_the_upstream_s_load_near_the_calls_and_without_it_retries_multiply_it() {
    let policy = RetryPolicy::new(RETRIES).delay(Duration::from_millis(1));

    let clock = ManualClock::new();
    let budgeted = breaker("layer-budgeted", 100_000, &clock);
    let (with_budget, seconds) = offer(&budgeted, &clock, policy).await;
    let bound = (1.0 + DEFAULT_BUDGET_RATIO) * CALLS as f64
        + f64::from(DEFAULT_BUDGET_FLOOR) * (1.0 + seconds);
    println!(
        "tower layer with the budget: {with_budget} requests for {CALLS} calls (bound {bound:.1})"
    );
    assert!(with_budget as f64 <= bound, "{with_budget} > {bound}");
    let m = budgeted.metrics();
    assert_eq!(
        m.calls, with_budget,
        "each request is one attempt, one outcome"
    );
    assert!(m.retries_budget_exhausted > 0, "the budget stopped retries");

    let clock = ManualClock::new();
    let unbudgeted = breaker("layer-unbudgeted", 100_000, &clock);
    let (without, _) = offer(&unbudgeted, &clock, policy.no_budget()).await;
    println!("tower layer without it: {without} requests for {CALLS} calls");
    assert_eq!(without, CALLS * u64::from(RETRIES + 1));
}

/// A request that cannot be cloned: a one-shot channel's sender, say.
struct Ticket(#[allow(dead_code)] tokio::sync::oneshot::Sender<()>);

#[tokio::test(flavor = "current_thread")]
async fn a_request_the_replay_declines_is_sent_once() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-declined", 10, &clock);
    let attempts = Arc::new(AtomicUsize::new(0));
    let seen = attempts.clone();
    let service = service_fn(move |_: Ticket| {
        seen.fetch_add(1, SeqCst);
        async { Err::<(), _>(std::io::Error::other("reset")) }
    });
    let timer = ClockTimer::new(&clock);
    let layer = CircuitBreakerLayer::for_breaker(&breaker)
        .classify(breakerbox::tower::Errors(breakerbox::classify::EveryError))
        .retry(RetryPolicy::new(3).no_budget())
        .replay(|_: &Ticket| None)
        .timer(timer.clone());
    let (sender, _receiver) = tokio::sync::oneshot::channel();
    let error = layer
        .layer(service)
        .oneshot(Ticket(sender))
        .await
        .unwrap_err();
    assert!(
        error.into_inner().is_some(),
        "the inner error, not a refusal"
    );
    assert_eq!(attempts.load(SeqCst), 1);
    assert!(timer.waits().is_empty());
    let m = breaker.metrics();
    assert_eq!((m.failures, m.retries), (1, 0));
}

#[tokio::test(flavor = "current_thread")]
async fn by_default_a_get_is_retried_and_a_post_is_sent_once() {
    let clock = ManualClock::new();
    let breaker = breaker("layer-methods", 100, &clock);
    let attempts = Arc::new(AtomicUsize::new(0));
    let seen = attempts.clone();
    let service = service_fn(move |_: http::Request<String>| {
        seen.fetch_add(1, SeqCst);
        let failed = http::Response::builder().status(502).body(()).unwrap();
        async { Ok::<_, std::convert::Infallible>(failed) }
    });
    let layer = CircuitBreakerLayer::for_breaker(&breaker)
        .retry(RetryPolicy::new(2).no_budget())
        .timer(ClockTimer::new(&clock));
    let service = layer.layer(service);
    let get = http::Request::get("/orders/7").body(String::new()).unwrap();
    let answer = service.clone().oneshot(get).await.unwrap();
    assert_eq!(
        (answer.status().as_u16(), attempts.swap(0, SeqCst)),
        (502, 3)
    );
    let post = http::Request::post("/orders")
        .body(String::from("{}"))
        .unwrap();
    let answer = service.clone().oneshot(post).await.unwrap();
    assert_eq!(
        (answer.status().as_u16(), attempts.swap(0, SeqCst)),
        (502, 1),
        "a POST is sent once"
    );
    // Said safe to repeat, it is retried.
    let cloned = CircuitBreakerLayer::for_breaker(&breaker)
        .retry(RetryPolicy::new(2).no_budget())
        .replay(Cloned)
        .timer(ClockTimer::new(&clock))
        .layer(service_fn({
            let seen = attempts.clone();
            move |_: http::Request<String>| {
                seen.fetch_add(1, SeqCst);
                let failed = http::Response::builder().status(502).body(()).unwrap();
                async { Ok::<_, std::convert::Infallible>(failed) }
            }
        }));
    let post = http::Request::post("/orders")
        .body(String::from("{}"))
        .unwrap();
    cloned.oneshot(post).await.unwrap();
    assert_eq!(attempts.load(SeqCst), 3);
}
