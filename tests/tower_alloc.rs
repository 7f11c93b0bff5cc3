//! A request through `CircuitBreakerLayer` allocates nothing: readiness, the
//! call, the response future and its outcome, closed, open and half-open, and a
//! response future dropped before it finishes. Counted exactly by a counting
//! global allocator that counts only the calling thread's allocations (the same
//! allocator as `alloc_per_call.rs`, from `support`).

use std::convert::Infallible;
use std::future::{ready, Future, Ready};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breakerbox::tower::{BreakerError, CircuitBreakerLayer, Errors};
use breakerbox::{classify::EveryError, Breaker, Config, ManualClock, State};
use tower::{Layer, Service};

mod support;

use support::{allocations_during, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// One request: readiness, then the call's future, polled to completion with a
/// no-op waker (no runtime, no allocation).
fn request<S: Service<R>, R>(svc: &mut S, req: R) -> Result<S::Response, S::Error> {
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        match svc.poll_ready(&mut cx) {
            Poll::Ready(Ok(())) => break,
            Poll::Ready(Err(e)) => return Err(e),
            Poll::Pending => {}
        }
    }
    let mut future = pin!(svc.call(req));
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

const CALLS: u64 = 1_000;
const OPEN: Duration = Duration::from_secs(60);

fn breaker(group: &str, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .threshold(3)
        .open(Duration::from_millis(OPEN.as_millis() as u64))
        .build()
        .unwrap();
    Breaker::with_clock(group, config, clock.clone())
}

/// A ready service that answers at once: `Ok(x)`, or `Err(())` for odd `x`.
#[derive(Clone, Copy)]
struct Echo;

impl Service<u64> for Echo {
    type Response = u64;
    type Error = ();
    type Future = Ready<Result<u64, ()>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, x: u64) -> Self::Future {
        ready(if x % 2 == 0 { Ok(x) } else { Err(()) })
    }
}

#[test]
fn the_counter_sees_allocations() {
    assert_eq!(allocations_during(|| drop(Box::new(7u64))), 1);
}

#[test]
fn closed_requests_through_the_layer_allocate_nothing() {
    let clock = ManualClock::new();
    let b = breaker("alloc-tower-closed", &clock);
    let layer = CircuitBreakerLayer::for_breaker(&b).classify(Errors(EveryError));
    let mut svc = layer.layer(Echo);
    assert_eq!(request(&mut svc, 2), Ok(2));

    let n = allocations_during(|| {
        for i in 0..CALLS {
            // One failure in ten: never three in a row.
            let x = if i % 10 == 9 { 1 } else { 2 * i };
            let result = request(&mut svc, x);
            assert_eq!(result.is_ok(), x % 2 == 0);
        }
    });
    assert_eq!(n, 0);
    let m = b.metrics();
    assert_eq!(m.state, State::Closed);
    assert_eq!(m.successes + m.failures, CALLS + 1);
}

#[test]
fn http_responses_through_the_layer_allocate_nothing() {
    let clock = ManualClock::new();
    let b = breaker("alloc-tower-http", &clock);
    let statuses = [200u16, 404, 503, 201];
    let upstream = tower::service_fn(|code: u16| {
        let mut response = http::Response::new(());
        *response.status_mut() = http::StatusCode::from_u16(code).unwrap();
        ready(Ok::<_, Infallible>(response))
    });
    let mut svc = CircuitBreakerLayer::for_breaker(&b).layer(upstream);
    // The first outcome this thread counts on a breaker allocates its counter
    // cells (a breaker holds none while idle); from then on, nothing.
    assert_eq!(request(&mut svc, 200).unwrap().status(), 200);
    let n = allocations_during(|| {
        for i in 0..CALLS as usize {
            let code = statuses[i % statuses.len()];
            assert_eq!(request(&mut svc, code).unwrap().status(), code);
        }
    });
    assert_eq!(n, 0);
    let m = b.metrics();
    assert_eq!(
        (m.successes, m.ignored, m.failures),
        (CALLS / 2 + 1, CALLS / 4, CALLS / 4)
    );
}

#[test]
fn refusals_probes_and_dropped_futures_allocate_nothing() {
    let clock = ManualClock::new();
    let b = breaker("alloc-tower-cycle", &clock);
    let layer = CircuitBreakerLayer::for_breaker(&b).classify(Errors(EveryError));
    let mut svc = layer.layer(Echo);
    let cycle = |svc: &mut _| {
        for _ in 0..3 {
            assert_eq!(request(svc, 1), Err(BreakerError::Inner(())));
        }
        assert!(matches!(request(svc, 2), Err(BreakerError::Open(_))));
        // A dropped response future: abandoned.
        let mut ready_svc = layer.layer(Echo);
        clock.advance(OPEN);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(ready_svc.poll_ready(&mut cx).is_ready());
        drop(ready_svc.call(2)); // the probe, given up
        assert_eq!(request(svc, 2), Ok(2)); // the next probe closes it
        assert_eq!(b.state(), State::Closed);
    };
    cycle(&mut svc); // every path once on this thread first
    let n = allocations_during(|| {
        for _ in 0..CALLS / 10 {
            cycle(&mut svc);
        }
    });
    assert_eq!(n, 0);
    let m = b.metrics();
    assert_eq!(m.times_opened, 1 + CALLS / 10);
    assert_eq!(m.abandoned, 1 + CALLS / 10);
}
