//! A real HTTP server on 127.0.0.1 that answers `429` with `Retry-After: 5`,
//! called by 500 concurrent callers through the reqwest middleware: the
//! server receives one request per hold, not one per caller; no failure is
//! recorded and no open backoff grows; every refused caller's `retry_after`
//! lies within the hold; and breakers held by one answer each (the hosts of a
//! per-host group) come back spread over the documented release window.
//! The breakers run on a `ManualClock`, so the holds pass without real time.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State as AxumState;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use breakerbox::hold::HoldScope;
use breakerbox::reqwest::{circuit_open, CircuitBreakerMiddleware};
use breakerbox::{Breaker, Config, ManualClock, OpenReason, Registry, State};
use reqwest_middleware::ClientBuilder;

const CALLERS: usize = 500;
const HOLD: Duration = Duration::from_secs(5);
/// The longest a hold of `HOLD` lasts: its release spread adds a tenth at most.
const LONGEST: Duration = Duration::from_millis(5_500);

/// A server whose first `limited` answers are `429` with `Retry-After: 5`,
/// then `200`; it counts what it receives.
#[derive(Clone)]
struct Quota {
    limited: usize,
    hits: Arc<AtomicUsize>,
}

async fn answer(AxumState(quota): AxumState<Quota>) -> Response {
    let n = quota.hits.fetch_add(1, SeqCst);
    if n < quota.limited {
        let mut response = axum::http::StatusCode::TOO_MANY_REQUESTS.into_response();
        response
            .headers_mut()
            .insert("retry-after", "5".parse().unwrap());
        response
    } else {
        "ok".into_response()
    }
}

async fn serve(limited: usize) -> (String, Quota) {
    let quota = Quota {
        limited,
        hits: Arc::default(),
    };
    let app = Router::new()
        .route("/", any(answer))
        .with_state(quota.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/"), quota)
}

/// What one round of concurrent callers met.
#[derive(Default, Debug)]
struct Round {
    answered: Vec<u16>,
    held: Vec<Duration>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_hundred_callers_send_one_request_per_hold_and_record_no_failure() {
    let clock = ManualClock::new().with_jitter_seed(39);
    let config = Config::builder().threshold(1).backoff(2.0).build().unwrap();
    let breaker = Breaker::with_clock("quota-429", config, clock.clone());
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(CircuitBreakerMiddleware::for_breaker(&breaker))
        .build();
    let (url, quota) = serve(3).await;

    // The first caller meets the quota: the group is held.
    let first = client.get(&url).send().await.unwrap();
    assert_eq!(first.status(), 429);
    let mut holds = 1;

    let mut rounds = Vec::new();
    for _ in 0..60 {
        let mut callers = Vec::with_capacity(CALLERS);
        for _ in 0..CALLERS {
            let (client, url) = (client.clone(), url.clone());
            callers.push(tokio::spawn(async move { client.get(&url).send().await }));
        }
        let mut round = Round::default();
        for caller in callers {
            match caller.await.unwrap() {
                Ok(response) => round.answered.push(response.status().as_u16()),
                Err(error) => {
                    let open = circuit_open(&error).expect("only refusals fail");
                    assert_eq!(open.reason(), OpenReason::Held(HoldScope::Group));
                    round
                        .held
                        .push(open.retry_after().expect("a hold tells its time"));
                }
            }
        }
        holds += round.answered.iter().filter(|&&s| s == 429).count();
        let done = round.answered.contains(&200);
        rounds.push(round);
        if done {
            break;
        }
        clock.advance(Duration::from_millis(500));
    }

    // One request per hold: the first caller's 429, then at the end of each
    // hold the one caller let through first (two more 429s, then a 200, which
    // released the hold for the callers of its round still to come); every
    // other caller was refused without a request.
    assert_eq!(holds, 3);
    let summary: Vec<(usize, usize)> = rounds
        .iter()
        .map(|r| (r.answered.len(), r.held.len()))
        .collect();
    for round in &rounds[..rounds.len() - 1] {
        assert!(
            round.answered.len() <= 1,
            "(answered, held) per round: {summary:?}"
        );
    }
    let last = rounds.last().unwrap();
    assert!(last.answered.iter().all(|&s| s == 200), "{summary:?}");
    assert_eq!(quota.hits.load(SeqCst), 3 + last.answered.len());
    let refused: Vec<Duration> = rounds.iter().flat_map(|r| r.held.iter().copied()).collect();
    assert!(refused.len() >= 20 * CALLERS);
    assert!(
        refused.iter().all(|d| !d.is_zero() && *d <= LONGEST),
        "every retry_after within the hold"
    );

    // No failure, no trip, no backoff: a wait is not an outage.
    let m = breaker.metrics();
    assert_eq!((m.failures, m.times_opened, m.state), (0, 0, State::Closed));
    assert_eq!(m.open_for, None);
    assert_eq!(m.holds.group, 3);
    assert_eq!(m.ignored, 3);
    let after = client.get(&url).send().await.unwrap();
    assert_eq!(after.status(), 200, "released for everyone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_held_by_one_answer_each_come_back_spread_over_the_release_window() {
    const HOSTS: usize = 24;
    let clock = ManualClock::new().with_jitter_seed(7);
    let registry = Registry::with_clock(clock.clone());
    let middleware =
        CircuitBreakerMiddleware::per_host_in(&registry, "quota-hosts", &Config::default(), HOSTS)
            .unwrap();
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let mut servers = Vec::new();
    for _ in 0..HOSTS {
        servers.push(serve(1).await);
    }
    for (url, _) in &servers {
        assert_eq!(client.get(url).send().await.unwrap().status(), 429);
    }
    let mut ends = Vec::new();
    for (url, _) in &servers {
        let error = client.get(url).send().await.unwrap_err();
        let open = circuit_open(&error).unwrap();
        assert_eq!(open.reason(), OpenReason::Held(HoldScope::Key));
        ends.push(open.retry_after().unwrap());
    }
    assert!(ends.iter().all(|d| *d >= HOLD && *d <= LONGEST), "{ends:?}");
    let (earliest, latest) = (ends.iter().min().unwrap(), ends.iter().max().unwrap());
    assert!(
        *latest - *earliest >= Duration::from_millis(250),
        "spread over the window, not in lockstep: {ends:?}"
    );

    // Each host comes back at its own end: one request each.
    clock.advance(*earliest);
    let back: usize = servers
        .iter()
        .map(|(_, quota)| quota.hits.load(SeqCst))
        .sum();
    assert_eq!(back, HOSTS);
    for (url, quota) in &servers {
        let _ = client.get(url).send().await;
        assert!(quota.hits.load(SeqCst) <= 2);
    }
    let came_back = servers
        .iter()
        .filter(|(_, quota)| quota.hits.load(SeqCst) == 2)
        .count();
    assert!(
        (1..HOSTS).contains(&came_back),
        "at the earliest end only some hosts are due: {came_back}"
    );
}
