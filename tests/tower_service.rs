//! `CircuitBreaker`, the tower service, on a manual clock and without a runtime:
//! readiness asks and never claims, an open circuit is ready at once and refuses
//! without the inner service, and every way a call ends records one outcome
//! (a response by its status, a panic as a failure, a drop as abandoned, or as
//! a failure in a group with `abandoned = "failure"`).

use std::convert::Infallible;
use std::future::{pending, ready, Future, Ready};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breakerbox::tower::{BoxError, BreakerError, CircuitBreakerLayer, Errors, Verdict};
use breakerbox::{
    classify::EveryError, config::Abandoned, Breaker, CircuitOpen, Config, ManualClock, OpenReason,
    State,
};
use tower::{Layer, Service, ServiceExt};

const OPEN: Duration = Duration::from_millis(1_000);

fn breaker(group: &str, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .threshold(2)
        .open(Duration::from_millis(OPEN.as_millis() as u64))
        .build()
        .unwrap();
    Breaker::with_clock(group, config, clock.clone())
}

/// An HTTP-shaped upstream that answers `status` at once, counts the calls that
/// reach it and the polls of its readiness, and is ready only while `ready`.
#[derive(Clone, Default)]
struct Upstream {
    status: Arc<AtomicU16>,
    ready: Arc<AtomicBool>,
    calls: Arc<AtomicUsize>,
    polls: Arc<AtomicUsize>,
}

impl Upstream {
    fn answering(status: u16) -> Self {
        let upstream = Upstream::default();
        upstream.status.store(status, SeqCst);
        upstream.ready.store(true, SeqCst);
        upstream
    }
}

impl Service<()> for Upstream {
    type Response = http::Response<()>;
    type Error = Infallible;
    type Future = Ready<Result<http::Response<()>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.polls.fetch_add(1, SeqCst);
        if self.ready.load(SeqCst) {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending // a real service would keep the waker; nothing here wakes
        }
    }

    fn call(&mut self, (): ()) -> Self::Future {
        assert!(self.ready.load(SeqCst), "called without being ready");
        self.calls.fetch_add(1, SeqCst);
        let status = self.status.load(SeqCst);
        ready(Ok(http::Response::builder()
            .status(status)
            .body(())
            .unwrap()))
    }
}

fn cx() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

fn poll_ready<S: Service<R>, R>(svc: &mut S) -> Poll<Result<(), S::Error>> {
    svc.poll_ready(&mut cx())
}

/// Polls `future` with a no-op waker until it is ready.
fn poll_now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx()) {
            return output;
        }
    }
}

/// Readiness, then the call, to completion; the status, or the refusal.
fn request<S>(svc: &mut S) -> Result<u16, CircuitOpen>
where
    S: Service<(), Response = http::Response<()>, Error = BreakerError<Infallible>>,
{
    assert!(matches!(poll_ready(svc), Poll::Ready(Ok(()))));
    match poll_now(svc.call(())) {
        Ok(response) => Ok(response.status().as_u16()),
        Err(BreakerError::Open(open)) => Err(open),
        Err(BreakerError::Inner(never)) => match never {},
        Err(BreakerError::TimedOut(late)) => panic!("no deadline here: {late}"),
    }
}

#[test]
fn fifth_hundreds_fail_fours_are_ignored_and_the_second_failure_opens() {
    let clock = ManualClock::new();
    let upstream = Upstream::answering(200);
    let mut svc =
        CircuitBreakerLayer::for_breaker(&breaker("svc-classify", &clock)).layer(upstream.clone());
    assert_eq!(request(&mut svc), Ok(200));
    upstream.status.store(404, SeqCst);
    assert_eq!(request(&mut svc), Ok(404));
    upstream.status.store(503, SeqCst);
    assert_eq!(request(&mut svc), Ok(503));
    upstream.status.store(429, SeqCst);
    assert_eq!(request(&mut svc), Ok(429)); // ignored: the failure count stays at one
    assert_eq!(svc.breaker().state(), State::Closed);
    upstream.status.store(500, SeqCst);
    assert_eq!(request(&mut svc), Ok(500)); // the second failure in a row trips
    let m = svc.breaker().metrics();
    assert_eq!((m.successes, m.failures, m.ignored), (1, 2, 2));
    assert_eq!(m.state, State::Open);

    let calls = upstream.calls.load(SeqCst);
    let open = request(&mut svc).unwrap_err();
    assert_eq!(open.reason(), OpenReason::Open);
    assert_eq!(open.retry_after(), Some(OPEN));
    assert_eq!(
        upstream.calls.load(SeqCst),
        calls,
        "refused without the upstream"
    );
    assert_eq!(svc.breaker().metrics().rejected, 1);
}

#[test]
fn readiness_asks_and_never_claims_so_a_ready_service_may_go_uncalled() {
    let clock = ManualClock::new();
    let upstream = Upstream::answering(500);
    let layer = CircuitBreakerLayer::for_breaker(&breaker("svc-ready", &clock));
    let mut svc = layer.layer(upstream.clone());
    let _ = request(&mut svc);
    let _ = request(&mut svc);
    assert_eq!(layer.breaker().state(), State::Open);
    clock.advance(OPEN); // a claim now would be the probe
    let before = layer.breaker().metrics();
    for _ in 0..100 {
        let mut ready = layer.layer(upstream.clone());
        assert!(matches!(poll_ready(&mut ready), Poll::Ready(Ok(()))));
        // dropped ready, never called
    }
    let after = layer.breaker().metrics();
    assert_eq!(
        after.state,
        State::Open,
        "readiness must not move the breaker"
    );
    assert_eq!(after.probes_in_flight, 0);
    assert_eq!(
        (after.calls, after.rejected),
        (before.calls, before.rejected)
    );

    upstream.status.store(200, SeqCst);
    assert_eq!(request(&mut svc), Ok(200)); // the call is the probe, and closes it
    assert_eq!(layer.breaker().state(), State::Closed);
}

#[test]
fn an_open_circuit_is_ready_at_once_without_asking_the_inner_service() {
    let clock = ManualClock::new();
    let b = breaker("svc-fail-fast", &clock);
    b.force_open();
    let upstream = Upstream::default(); // never ready
    let mut svc = CircuitBreakerLayer::for_breaker(&b).layer(upstream.clone());
    assert!(matches!(poll_ready(&mut svc), Poll::Ready(Ok(()))));
    assert_eq!(upstream.polls.load(SeqCst), 0);
    let open = request(&mut svc).unwrap_err();
    assert_eq!(open.reason(), OpenReason::ForcedOpen);
    assert_eq!(upstream.calls.load(SeqCst), 0);

    b.reset();
    assert!(
        poll_ready(&mut svc).is_pending(),
        "closed: the inner readiness counts"
    );
    assert_eq!(upstream.polls.load(SeqCst), 1);
}

#[test]
fn a_circuit_that_admits_after_readiness_refused_still_refuses_and_frees_the_probe() {
    let clock = ManualClock::new();
    let b = breaker("svc-race", &clock);
    let upstream = Upstream::answering(500);
    let mut svc = CircuitBreakerLayer::for_breaker(&b).layer(upstream.clone());
    let _ = request(&mut svc);
    let _ = request(&mut svc);
    upstream.ready.store(false, SeqCst);
    let calls = upstream.calls.load(SeqCst);

    assert!(matches!(poll_ready(&mut svc), Poll::Ready(Ok(())))); // open: refusing
    clock.advance(OPEN); // ... and now a claim would be admitted as the probe
    let refused = poll_now(svc.call(()));
    assert!(matches!(refused, Err(BreakerError::Open(_))));
    assert_eq!(
        upstream.calls.load(SeqCst),
        calls,
        "the unready upstream was not called"
    );
    let m = b.metrics();
    assert_eq!(m.abandoned, 1, "the probe claimed in the race was given up");
    assert_eq!(m.probes_in_flight, 0);

    upstream.ready.store(true, SeqCst);
    upstream.status.store(200, SeqCst);
    assert_eq!(request(&mut svc), Ok(200));
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn the_probe_given_back_after_readiness_refused_is_no_failure_when_abandoned_counts_as_failure() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .threshold(2)
        .open(OPEN)
        .abandoned(Abandoned::Failure)
        .build()
        .unwrap();
    let b = Breaker::with_clock("svc-race-failure", config, clock.clone());
    let upstream = Upstream::answering(500);
    let mut svc = CircuitBreakerLayer::for_breaker(&b).layer(upstream.clone());
    let _ = request(&mut svc);
    let _ = request(&mut svc);
    upstream.ready.store(false, SeqCst);
    let failures = b.metrics().failures;

    assert!(matches!(poll_ready(&mut svc), Poll::Ready(Ok(())))); // open: refusing
    clock.advance(OPEN); // ... and now a claim would be admitted as the probe
    assert!(matches!(poll_now(svc.call(())), Err(BreakerError::Open(_))));
    let m = b.metrics();
    assert_eq!(
        (m.failures, m.abandoned),
        (failures, 1),
        "the probe never ran: abandoned, not a failure"
    );
    assert_eq!(m.probes_in_flight, 0);
    assert_eq!(b.state(), State::HalfOpen, "the circuit did not reopen");

    upstream.ready.store(true, SeqCst);
    upstream.status.store(200, SeqCst);
    assert_eq!(request(&mut svc), Ok(200));
    assert_eq!(b.state(), State::Closed);
}

/// An upstream whose answer never comes, or that panics when polled.
#[derive(Clone, Copy)]
enum Stuck {
    Forever,
    Panics,
}

impl Service<()> for Stuck {
    type Response = u32;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<u32, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, (): ()) -> Self::Future {
        match self {
            Stuck::Forever => Box::pin(pending()),
            Stuck::Panics => Box::pin(async { panic!("upstream bug") }),
        }
    }
}

#[test]
fn a_dropped_response_future_is_abandoned_and_frees_its_probe_slot() {
    let clock = ManualClock::new();
    let b = breaker("svc-dropped", &clock);
    let mut svc = CircuitBreakerLayer::for_breaker(&b)
        .classify(Errors(EveryError))
        .layer(Stuck::Forever);
    for _ in 0..3 {
        assert!(poll_ready(&mut svc).is_ready());
        let mut future = Box::pin(svc.call(()));
        assert!(future.as_mut().poll(&mut cx()).is_pending());
        drop(future);
    }
    let m = b.metrics();
    assert_eq!((m.abandoned, m.failures, m.successes), (3, 0, 0));
    assert_eq!(m.state, State::Closed);

    // A dropped probe frees its slot: the next call is the probe.
    b.force_open();
    b.reset();
    b.try_acquire().unwrap().failure();
    b.try_acquire().unwrap().failure();
    clock.advance(OPEN);
    assert!(poll_ready(&mut svc).is_ready());
    drop(svc.call(()));
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(b.metrics().probes_in_flight, 0);
    assert!(b.would_admit());
}

#[test]
fn a_dropped_response_future_is_a_failure_in_a_group_counting_abandoned_calls() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .threshold(2)
        .abandoned(Abandoned::Failure)
        .build()
        .unwrap();
    let b = Breaker::with_clock("svc-dropped-fails", config, clock.clone());
    let mut svc = CircuitBreakerLayer::for_breaker(&b)
        .classify(Errors(EveryError))
        .layer(Stuck::Forever);
    for _ in 0..2 {
        assert!(poll_ready(&mut svc).is_ready());
        let mut future = Box::pin(svc.call(()));
        assert!(future.as_mut().poll(&mut cx()).is_pending());
        drop(future);
    }
    let m = b.metrics();
    assert_eq!((m.abandoned, m.failures), (0, 2));
    assert_eq!(m.state, State::Open, "the second dropped call trips it");
}

#[test]
fn a_panic_while_polled_is_a_failure() {
    let clock = ManualClock::new();
    let b = breaker("svc-panic", &clock);
    let mut svc = CircuitBreakerLayer::for_breaker(&b)
        .classify(Errors(EveryError))
        .layer(Stuck::Panics);
    for _ in 0..2 {
        assert!(poll_ready(&mut svc).is_ready());
        let future = svc.call(());
        assert!(catch_unwind(AssertUnwindSafe(|| poll_now(future))).is_err());
    }
    let m = b.metrics();
    assert_eq!(m.failures, 2);
    assert_eq!(m.state, State::Open);
}

#[test]
fn a_panic_caught_above_the_layer_is_a_failure_when_the_future_is_dropped_later() {
    // What tower-http's `CatchPanicLayer` does: the response future stays where
    // it is, only its poll runs under `catch_unwind`, and the future is dropped
    // after the unwind has ended.
    let clock = ManualClock::new();
    let b = breaker("svc-caught-panic", &clock);
    let mut svc = CircuitBreakerLayer::for_breaker(&b)
        .classify(Errors(EveryError))
        .layer(Stuck::Panics);
    for _ in 0..2 {
        assert!(poll_ready(&mut svc).is_ready());
        let mut future = Box::pin(svc.call(()));
        let polled = catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx())));
        assert!(polled.is_err(), "the upstream panics");
        drop(future);
    }
    let m = b.metrics();
    assert_eq!((m.failures, m.abandoned), (2, 0));
    assert_eq!(m.state, State::Open);
}

#[tokio::test]
async fn in_a_box_error_stack_refusals_downcast_to_circuit_open_and_inner_errors_to_their_own() {
    let clock = ManualClock::new();
    let b = breaker("svc-box", &clock);
    let failing = tower::service_fn(|(): ()| async {
        Err::<u32, BoxError>(Box::new(std::io::Error::other("reset")))
    });
    // The breaker under tower's timeout, over a service whose error is a
    // BoxError: unwrapped into the BoxError the timeout needs.
    let mut svc = tower::ServiceBuilder::new()
        .timeout(Duration::from_secs(60))
        .map_err(BreakerError::into_box_error)
        .layer(CircuitBreakerLayer::for_breaker(&b).classify(Errors(EveryError)))
        .service(failing);
    for _ in 0..2 {
        let error = svc.ready().await.unwrap().call(()).await.unwrap_err();
        assert!(error.is::<std::io::Error>(), "{error}");
    }
    let error = svc.ready().await.unwrap().call(()).await.unwrap_err();
    let open = error.downcast_ref::<CircuitOpen>().expect("a refusal");
    assert_eq!(open.group(), "svc-box");
}

#[test]
fn layers_and_services_share_one_breaker_and_a_clone_is_not_ready() {
    let clock = ManualClock::new();
    let b = breaker("svc-clone", &clock);
    let layer = CircuitBreakerLayer::for_breaker(&b);
    let again = CircuitBreakerLayer::for_breaker(&b.clone());
    assert!(layer.breaker().same_as(again.breaker()));
    assert!(layer.breaker().same_as(&b));
    let svc = layer.layer(Upstream::answering(200));
    assert!(svc.clone().breaker().same_as(&b));
}

/// A user's own rule: here a 404 means the upstream lost its data.
fn not_found_fails(result: Result<&http::Response<()>, &Infallible>) -> Verdict {
    match result {
        Ok(r) if r.status() == 404 => Verdict::Failure,
        Ok(r) => breakerbox::tower::status_verdict(r.status().as_u16()),
        Err(never) => match *never {},
    }
}

#[test]
fn a_users_classifier_decides_instead_of_the_status_rule() {
    let clock = ManualClock::new();
    let b = breaker("svc-own-classifier", &clock);
    let upstream = Upstream::answering(404);
    let mut svc = CircuitBreakerLayer::for_breaker(&b)
        .classify(not_found_fails)
        .layer(upstream.clone());
    assert_eq!(request(&mut svc), Ok(404));
    assert_eq!(request(&mut svc), Ok(404));
    let m = b.metrics();
    assert_eq!((m.failures, m.ignored), (2, 0));
    assert_eq!(m.state, State::Open);
}
