//! The adaptive throttle (`throttle`) against a real HTTP server on 127.0.0.1
//! that can take 40% of the requests offered and answers `503` to the rest,
//! through the reqwest middleware, on a manual clock: the requests reaching it
//! settle at `K` times what it accepts, with no hard open, and all go again
//! within one window of the heal. The same server, in the same run, against a
//! plain breaker of each policy, for the numbers side by side.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State as AxumState;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use breakerbox::reqwest::{circuit_open, CircuitBreakerMiddleware};
use breakerbox::{Breaker, Config, ManualClock, OpenReason, Registry, State};
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};

/// Calls offered each simulated second.
const PER_SECOND: u64 = 50;
const WINDOW: Duration = Duration::from_secs(10);
const K: f64 = 2.0;

/// The server's capacity, in tokens: the test adds `share` of a token for
/// every request it offers (so the server can take that share of the load,
/// spread evenly, with a burst of five), and a request that finds a whole
/// token is answered `200`, any other `503`.
#[derive(Clone)]
struct Upstream {
    /// Thousandths of a token.
    tokens: Arc<AtomicU64>,
    share: Arc<Mutex<f64>>,
    reached: Arc<AtomicU64>,
    accepted: Arc<AtomicU64>,
}

impl Upstream {
    fn new(share: f64) -> Self {
        Upstream {
            tokens: Arc::default(),
            share: Arc::new(Mutex::new(share)),
            reached: Arc::default(),
            accepted: Arc::default(),
        }
    }

    fn offered(&self) {
        let add = (*self.share.lock().unwrap() * 1_000.0) as u64;
        let tokens = self.tokens.load(SeqCst);
        self.tokens.store((tokens + add).min(5_000), SeqCst);
    }

    fn heal(&self) {
        *self.share.lock().unwrap() = 1.0;
    }
}

async fn answer(AxumState(up): AxumState<Upstream>) -> StatusCode {
    up.reached.fetch_add(1, SeqCst);
    let tokens = up.tokens.load(SeqCst);
    if tokens >= 1_000 {
        up.tokens.store(tokens - 1_000, SeqCst);
        up.accepted.fetch_add(1, SeqCst);
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

async fn serve(up: Upstream) -> SocketAddr {
    let app = Router::new().route("/", get(answer)).with_state(up);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// What a stretch of traffic did, from the caller's side and the server's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Tally {
    offered: u64,
    reached: u64,
    successes: u64,
    refused: u64,
    throttled: u64,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.offered += other.offered;
        self.reached += other.reached;
        self.successes += other.successes;
        self.refused += other.refused;
        self.throttled += other.throttled;
    }
}

/// One group's client against its own server.
struct Run {
    breaker: Breaker,
    clock: ManualClock,
    up: Upstream,
    client: ClientWithMiddleware,
    url: String,
}

impl Run {
    async fn new(group: &str, config: Config) -> Run {
        let clock = ManualClock::new();
        let registry = Registry::with_clock(clock.clone());
        let breaker = registry.breaker(group, &config);
        let up = Upstream::new(0.4);
        let url = format!("http://{}/", serve(up.clone()).await);
        let client = ClientBuilder::new(reqwest::Client::new())
            .with(CircuitBreakerMiddleware::for_breaker(&breaker))
            .build();
        Run {
            breaker,
            clock,
            up,
            client,
            url,
        }
    }

    /// Offers `PER_SECOND` requests a second for `seconds` seconds; one tally
    /// a second.
    async fn drive(&self, seconds: u64) -> Vec<Tally> {
        let mut out = Vec::new();
        for _ in 0..seconds {
            let reached = self.up.reached.load(SeqCst);
            let mut second = Tally::default();
            for _ in 0..PER_SECOND {
                self.up.offered();
                second.offered += 1;
                match self.client.get(&self.url).send().await {
                    Ok(response) if response.status() == 200 => second.successes += 1,
                    Ok(response) => assert_eq!(response.status(), 503),
                    Err(error) => {
                        let open = circuit_open(&error).expect("a refusal");
                        second.refused += 1;
                        if open.reason() == OpenReason::Throttled {
                            second.throttled += 1;
                        }
                    }
                }
            }
            second.reached = self.up.reached.load(SeqCst) - reached;
            out.push(second);
            self.clock.advance(Duration::from_secs(1));
        }
        out
    }
}

fn total(seconds: &[Tally]) -> Tally {
    let mut sum = Tally::default();
    for s in seconds {
        sum.add(*s);
    }
    sum
}

fn throttled() -> Config {
    Config::builder()
        .throttle(K)
        .throttle_window(WINDOW)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_group_sends_k_times_what_the_server_accepts_and_never_opens() {
    let run = Run::new("throttled", throttled()).await;
    let seconds = run.drive(60).await;
    // Settled: the last window.
    let window = WINDOW.as_secs() as usize;
    let last = total(&seconds[seconds.len() - window..]);
    let accepted = last.successes;
    let ratio = last.reached as f64 / accepted as f64;
    println!("throttled, last window: {last:?}; reached / accepted = {ratio:.3}");
    assert!((ratio - K).abs() <= 0.05 * K, "{ratio:.3}");
    assert_eq!(
        last.refused, last.throttled,
        "every refusal is the throttle's"
    );
    let m = run.breaker.metrics();
    assert_eq!(
        (m.state, m.times_opened),
        (State::Closed, 0),
        "no hard open"
    );

    // The server heals: within one window every request goes again.
    run.up.heal();
    let healed = run.drive(2 * WINDOW.as_secs()).await;
    let free_from = healed
        .iter()
        .position(|s| s.throttled == 0)
        .expect("throttling stops");
    println!("after the heal: {:?}", &healed[..=free_from]);
    assert!(free_from < window, "throttled {free_from} s after the heal");
    for second in &healed[window..] {
        assert_eq!((second.reached, second.successes), (PER_SECOND, PER_SECOND));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_server_against_plain_breakers_and_a_throttled_group() {
    let plain_count = Run::new("plain-consecutive", Config::default()).await;
    let plain_window = Run::new(
        "plain-window",
        Config::builder()
            .window(WINDOW)
            .failure_rate(0.5)
            .min_calls(20)
            .open(Duration::from_secs(5))
            .build()
            .unwrap(),
    )
    .await;
    let throttled = Run::new("throttled", throttled()).await;
    let mut rows = Vec::new();
    for (name, run) in [
        ("plain breaker (threshold 5)", &plain_count),
        ("plain breaker (failure_rate 0.5 over 10 s)", &plain_window),
        ("throttled group (throttle = 2.0, 10 s)", &throttled),
    ] {
        let seconds = run.drive(60).await;
        let sum = total(&seconds);
        let m = run.breaker.metrics();
        println!(
            "{name:<45} offered {:>5}  reached the server {:>5}  caller successes {:>5}  refused {:>5}  opened {:>2}",
            sum.offered, sum.reached, sum.successes, sum.refused, m.times_opened
        );
        rows.push((sum, m.times_opened));
    }
    let [(count, count_opened), (window, window_opened), (thr, thr_opened)] = rows[..] else {
        unreachable!()
    };
    // The server could take 40% of what was offered.
    let capacity = count.offered as f64 * 0.4;
    // The consecutive count never sees five failures in a row: everything
    // goes, and 60% of it is turned away by the server.
    assert_eq!((count.reached, count_opened), (count.offered, 0));
    // The window trips on the 60% and cuts off what the server would take.
    assert!(window_opened > 0);
    assert!((window.successes as f64) < 0.8 * capacity, "{window:?}");
    // The throttle gets as much through as the server can take, sends it
    // a fifth less than the plain count, and never opens.
    assert_eq!(thr_opened, 0);
    assert!(thr.successes as f64 >= 0.95 * capacity, "{thr:?}");
    assert!(thr.successes > window.successes);
    assert!(
        (thr.reached as f64) < 0.85 * count.reached as f64,
        "{thr:?}"
    );
}
