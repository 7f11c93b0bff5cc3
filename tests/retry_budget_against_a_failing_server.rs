//! A real HTTP server on 127.0.0.1 that answers every request `503`: with
//! retries under the default budget, the requests it receives stay within
//! `(1 + ratio) × calls offered + floor × (1 + seconds)`, and none arrive while
//! the circuit is open; without the budget the same retries multiply the load.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use breakerbox::clock::Clock;
use breakerbox::retry::{DEFAULT_BUDGET_FLOOR, DEFAULT_BUDGET_RATIO};
use breakerbox::{Breaker, CallError, Config, ManualClock, Retry, RetryAfterHint, RetryPolicy};

/// A server that counts each request it reads and answers it `503`.
fn failing_server() -> (SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let count = received.clone();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            // The request line and headers, up to the blank line.
            while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
                line.clear();
            }
            count.fetch_add(1, SeqCst);
            let _ = stream.write_all(
                b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    (addr, received)
}

#[derive(Debug)]
struct Status(u16);

impl RetryAfterHint for Status {}

/// One `GET /` on a connection of its own: the response's status code.
fn get(addr: SocketAddr) -> Result<(), Status> {
    let mut stream = TcpStream::connect(addr).expect("the server listens");
    stream
        .write_all(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let code = response[9..12].parse().unwrap();
    match code {
        200..=299 => Ok(()),
        _ => Err(Status(code)),
    }
}

const CALLS: u64 = 200;
const RETRIES: u32 = 3;

/// Offers `CALLS` calls through `breaker` with `retry`: the requests the
/// server received, and the seconds the breaker's clock moved.
fn offer(breaker: &Breaker, clock: &ManualClock, retry: &Retry) -> (u64, f64) {
    let (addr, received) = failing_server();
    for _ in 0..CALLS {
        let out = breaker.call_retrying(retry, || get(addr));
        assert!(matches!(out, Err(CallError::Inner(Status(503)))), "{out:?}");
    }
    (received.load(SeqCst), clock.now_nanos() as f64 / 1e9)
}

fn never_trips() -> Config {
    Config::builder().threshold(100_000).build().unwrap()
}

#[test]
fn the_budget_holds_the_load_near_the_calls_offered_and_without_it_retries_multiply_it() {
    let policy = RetryPolicy::new(RETRIES).delay(Duration::from_millis(1));

    let clock = ManualClock::new();
    let budgeted = Breaker::with_clock("budgeted", never_trips(), clock.clone());
    let (with_budget, seconds) = offer(&budgeted, &clock, &Retry::new(policy));
    let bound = (1.0 + DEFAULT_BUDGET_RATIO) * CALLS as f64
        + f64::from(DEFAULT_BUDGET_FLOOR) * (1.0 + seconds);
    println!("with the budget: {with_budget} requests for {CALLS} calls (bound {bound:.1})");
    assert!(with_budget as f64 <= bound, "{with_budget} > {bound}");
    let m = budgeted.metrics();
    assert_eq!(
        m.calls, with_budget,
        "each request is one attempt, one outcome"
    );
    assert!(m.retries_budget_exhausted > 0, "the budget stopped retries");

    let clock = ManualClock::new();
    let unbudgeted = Breaker::with_clock("unbudgeted", never_trips(), clock.clone());
    let (without, _) = offer(&unbudgeted, &clock, &Retry::new(policy.no_budget()));
    println!("without it: {without} requests for {CALLS} calls");
    assert_eq!(without, CALLS * u64::from(RETRIES + 1));
}

#[test]
fn no_request_reaches_the_server_while_the_circuit_is_open() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .threshold(5)
        .open(Duration::from_secs(60))
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("trips", config, clock.clone());
    let retry = Retry::new(RetryPolicy::new(RETRIES).delay(Duration::from_millis(1)));
    let (addr, received) = failing_server();
    let mut refused = 0;
    for _ in 0..CALLS {
        if let Err(CallError::Open(_)) = breaker.call_retrying(&retry, || get(addr)) {
            refused += 1;
        }
    }
    // Five failed attempts trip the breaker; then every call is refused.
    assert_eq!(received.load(SeqCst), 5);
    assert_eq!(refused, CALLS - 2, "two calls made the five attempts");
    assert!(clock.now_nanos() < 60_000_000_000, "still open");
}
