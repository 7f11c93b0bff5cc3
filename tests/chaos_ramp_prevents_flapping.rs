//! Chaos against a real HTTP server on 127.0.0.1 that comes back with less
//! capacity than the load: after it heals it answers at most `capacity(t)`
//! requests per slice of time (warming from `BASE_CAPACITY` by
//! `CAPACITY_GROWTH` a slice) and fails the rest with 500s.
//!
//! The same load (`LOAD` calls a slice) runs twice, once on a breaker without a
//! ramp and once with `ramp_ms`:
//!
//! - without a ramp, every close hands the server the full load, which it
//!   cannot take: the breaker trips again, and the circuit flaps until the
//!   server has warmed up to the load;
//! - with a ramp, the first close admits a share of the load that rises more
//!   slowly than the server's capacity: it closes once and stays closed, and
//!   the server's request rate follows the ramp, slice by slice.
//!
//! Deterministic on a loaded machine: the breaker and the server read one
//! `ManualClock`, which the test advances a slice at a time, and the calls are
//! made one after the other, so each run is the same sequence of requests.
//! Nothing here times anything.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State as AxumState;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use breakerbox::clock::Clock;
use breakerbox::{Breaker, Config, ManualClock, OpenReason, Registry, State};

/// One slice of the manual clock: the server's capacity is per slice.
const SLICE: Duration = Duration::from_millis(100);
/// Calls the callers make in each slice.
const LOAD: u64 = 50;
/// The healed server's capacity in its first slice, and its growth a slice.
const BASE_CAPACITY: u64 = 10;
const CAPACITY_GROWTH: u64 = 1;
/// Slices the test runs after the server heals.
const SLICES: u64 = 80;
const OPEN_MS: u64 = 1_000;
const RAMP_MS: u64 = 4_000;

/// The server's side: failing or healed since a moment, and what it served.
#[derive(Default)]
struct Server {
    failing: AtomicBool,
    /// When it healed (clock nanos), once it has.
    healed_at: Mutex<Option<u64>>,
    /// Requests that reached it, and those it failed, per slice of the clock.
    by_slice: Mutex<std::collections::BTreeMap<u64, (u64, u64)>>,
}

#[derive(Clone)]
struct Upstream {
    clock: ManualClock,
    server: Arc<Server>,
}

async fn answer(AxumState(up): AxumState<Upstream>) -> StatusCode {
    let now = up.clock.now_nanos();
    let slice = now / SLICE.as_nanos() as u64;
    let mut by_slice = up.server.by_slice.lock().unwrap();
    let (requests, failed) = by_slice.entry(slice).or_default();
    *requests += 1;
    let ok = match *up.server.healed_at.lock().unwrap() {
        _ if up.server.failing.load(SeqCst) => false,
        None => true,
        Some(healed_at) => {
            let warm = (now - healed_at) / SLICE.as_nanos() as u64;
            *requests <= BASE_CAPACITY + CAPACITY_GROWTH * warm
        }
    };
    if ok {
        StatusCode::OK
    } else {
        *failed += 1;
        StatusCode::INTERNAL_SERVER_ERROR
    }
}

/// What one run saw.
#[derive(Debug, Default)]
struct Run {
    /// Closes (half-open to closed) and trips (closed to open) after the heal.
    closes: u64,
    trips: u64,
    /// Requests the server got in each slice after the heal, and how many it failed.
    requests: Vec<u64>,
    failed: u64,
    /// Calls refused by the ramp.
    ramp_refused: u64,
    /// The state at the end.
    end: Option<State>,
}

/// Runs the scenario on a breaker with `config`.
async fn run(config: Config) -> Run {
    let clock = ManualClock::new();
    let registry = Registry::with_clock(clock.clone());
    let breaker = registry.breaker("chaos-ramp", &config);
    let server = Arc::new(Server::default());
    let app = Router::new().route("/", get(answer)).with_state(Upstream {
        clock: clock.clone(),
        server: server.clone(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let client = reqwest::Client::new();
    let call = |breaker: Breaker| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            let Ok(permit) = breaker.try_acquire() else {
                return;
            };
            let ok = client.get(&url).send().await.unwrap().status().is_success();
            if ok {
                permit.success();
            } else {
                permit.failure();
            }
        }
    };

    // Healthy, then failing until the breaker opens.
    for _ in 0..LOAD {
        call(breaker.clone()).await;
    }
    assert_eq!(breaker.metrics().failures, 0);
    server.failing.store(true, SeqCst);
    while breaker.state() == State::Closed {
        call(breaker.clone()).await;
    }
    // It heals a slice later (so that its slices count only what came after),
    // with little capacity.
    clock.advance(SLICE);
    *server.healed_at.lock().unwrap() = Some(clock.now_nanos());
    server.failing.store(false, SeqCst);
    let before = breaker.metrics().transitions;
    let first_slice = clock.now_nanos() / SLICE.as_nanos() as u64;
    for _ in 0..SLICES {
        for _ in 0..LOAD {
            call(breaker.clone()).await;
        }
        clock.advance(SLICE);
    }
    let m = breaker.metrics();
    let by_slice = server.by_slice.lock().unwrap();
    Run {
        closes: m.transitions.get(State::HalfOpen, State::Closed)
            - before.get(State::HalfOpen, State::Closed),
        trips: m.transitions.get(State::Closed, State::Open)
            - before.get(State::Closed, State::Open),
        requests: (first_slice..first_slice + SLICES)
            .map(|s| by_slice.get(&s).map_or(0, |&(n, _)| n))
            .collect(),
        failed: by_slice.range(first_slice..).map(|(_, &(_, f))| f).sum(),
        ramp_refused: m.ramp_refused,
        end: Some(m.state),
    }
}

fn builder() -> breakerbox::ConfigBuilder {
    Config::builder()
        .threshold(5)
        .open(Duration::from_millis(OPEN_MS))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_ramp_the_circuit_flaps_and_with_one_it_closes_once_and_stays_closed() {
    let flapping = run(builder().build().unwrap()).await;
    println!("without a ramp: {flapping:?}");
    // Each close hands the cold server the full load: it trips again.
    assert!(flapping.closes >= 3, "{flapping:?}");
    assert!(flapping.trips >= 2, "{flapping:?}");
    assert!(flapping.failed > 0);
    assert_eq!(flapping.ramp_refused, 0);

    let ramped = run(builder()
        .ramp(Duration::from_millis(RAMP_MS))
        .build()
        .unwrap())
    .await;
    println!("with a {RAMP_MS} ms ramp: {ramped:?}");
    assert_eq!(ramped.closes, 1, "{ramped:?}");
    assert_eq!(ramped.trips, 0, "{ramped:?}");
    assert_eq!(
        ramped.failed, 0,
        "the server never got more than it could take"
    );
    assert_eq!(ramped.end, Some(State::Closed));
    assert!(ramped.ramp_refused > 0);

    // The server's rate follows the ramp: from the close (the probe's slice,
    // after the open time) the requests of slice k of the ramp are LOAD * k /
    // (RAMP_MS / SLICE) to within one, then the full load.
    let close = ramped
        .requests
        .iter()
        .position(|&n| n > 0)
        .expect("the probe went");
    assert_eq!(
        ramped.requests[close], 1,
        "the probe, then the ramp's share of 0"
    );
    let ramp_slices = RAMP_MS / SLICE.as_millis() as u64;
    for (k, &n) in ramped.requests[close..].iter().enumerate() {
        let k = k as u64;
        let expected = if k == 0 {
            1
        } else if k < ramp_slices {
            LOAD * k / ramp_slices
        } else {
            LOAD
        };
        assert!(
            n.abs_diff(expected) <= 1,
            "slice {k} of the ramp: {n} requests, the ramp says {expected}: {:?}",
            ramped.requests
        );
    }
    assert!(
        close as u64 + ramp_slices < SLICES,
        "the run covers the whole ramp"
    );
}

#[test]
fn a_refused_call_of_the_ramp_says_ramping() {
    let clock = ManualClock::new();
    let config = builder()
        .ramp(Duration::from_millis(RAMP_MS))
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("chaos-reason", config, clock.clone());
    for _ in 0..5 {
        breaker.try_acquire().unwrap().failure();
    }
    clock.advance(Duration::from_millis(OPEN_MS));
    breaker.try_acquire().unwrap().success();
    assert_eq!(
        breaker.try_acquire().map(drop).unwrap_err().reason(),
        OpenReason::Ramping
    );
}
