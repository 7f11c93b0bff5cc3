//! The contenders other than the tower layer: breakerbox's attribute, and each
//! peer configured as close to the shared policy as its API allows, through
//! its async API with the call's timeout inside the breaker.

use std::sync::Arc;
use std::time::Duration;

use breakerbox::{circuit_breaker, CircuitOpen, Config, OpenReason, TimedOut};
use hyper::body::Bytes;
use hyper::Response;
use layered::{Execute, Service as _, Stack as _};
use tower::{Layer, ServiceBuilder, ServiceExt};

use crate::harness::{status_fails, Answer, BoxError, GetError, Target};
use crate::policy::{FAILURE_RATE, MIN_CALLS, OPEN, PROBES, RATE, TIMEOUT, WINDOW};
use crate::Entry;

/// What the attribute's fn returns on a failure or a refusal.
#[derive(Debug)]
pub(crate) enum AttributeError {
    Status(u16),
    Transport,
    TimedOut,
    Open(CircuitOpen),
}

impl From<CircuitOpen> for AttributeError {
    fn from(open: CircuitOpen) -> Self {
        AttributeError::Open(open)
    }
}

impl From<TimedOut> for AttributeError {
    fn from(_: TimedOut) -> Self {
        AttributeError::TimedOut
    }
}

/// The shared classification: a `429` is no failure.
fn attribute_fails(error: &AttributeError) -> bool {
    !matches!(error, AttributeError::Status(429))
}

// The literals are the shared policy's (checked against it in `attribute`).
#[circuit_breaker(group = "outage attribute", window_ms = 1000, failure_rate = 0.5,
    min_calls = 20, open_ms = 500, half_open_probes = 1, timeout_ms = 300,
    is_failure = attribute_fails)]
async fn attribute_get(target: Target) -> Result<u16, AttributeError> {
    match target.send(target.request()).await {
        Ok(response) => {
            let status = response.status().as_u16();
            if (200..300).contains(&status) {
                Ok(status)
            } else {
                Err(AttributeError::Status(status))
            }
        }
        Err(_) => Err(AttributeError::Transport),
    }
}

/// `#[circuit_breaker]` on an async fn, in the process-wide registry; each run
/// resets its breaker.
pub(crate) fn attribute(config: &Config) -> Entry {
    assert_eq!(
        (WINDOW, FAILURE_RATE, MIN_CALLS, OPEN, PROBES, TIMEOUT),
        (
            Duration::from_millis(1000),
            0.5,
            20,
            Duration::from_millis(500),
            1,
            Duration::from_millis(300)
        ),
        "the attribute's literals follow the shared policy"
    );
    Entry {
        name: "breakerbox attribute".into(),
        config: format!(
            "{}; `timeout_ms = {}`",
            crate::describe(config),
            TIMEOUT.as_millis()
        ),
        make: Box::new(|target| {
            if let Some(breaker) = breakerbox::registry().get("outage attribute") {
                breaker.reset();
            }
            Arc::new(move || {
                let call = attribute_get(target.clone());
                Box::pin(async move {
                    match call.await {
                        Ok(status) => Answer::of_status(status),
                        Err(AttributeError::Status(status)) => Answer::of_status(status),
                        Err(AttributeError::Transport) => Answer::Failed,
                        Err(AttributeError::TimedOut) => Answer::TimedOut,
                        Err(AttributeError::Open(open)) if open.reason() == OpenReason::Ramping => {
                            Answer::Ramping
                        }
                        Err(AttributeError::Open(_)) => Answer::Refused,
                    }
                })
            })
        }),
    }
}

/// The peers' protected call: `Ok` with any status that is no failure, `Err`
/// with one that is, or with a timeout or no response.
#[derive(Debug)]
pub(crate) enum PeerError {
    Status(u16),
    Get(GetError),
    Refused,
}

async fn peer_get(target: Target) -> Result<u16, PeerError> {
    match target.get(TIMEOUT).await {
        Ok(status) if status_fails(status) => Err(PeerError::Status(status)),
        Ok(status) => Ok(status),
        Err(e) => Err(PeerError::Get(e)),
    }
}

fn peer_answer(result: Result<u16, PeerError>) -> Answer {
    match result {
        Ok(status) | Err(PeerError::Status(status)) => Answer::of_status(status),
        Err(PeerError::Get(GetError::TimedOut)) => Answer::TimedOut,
        Err(PeerError::Get(GetError::Transport(_))) => Answer::Failed,
        Err(PeerError::Refused) => Answer::Refused,
    }
}

fn window_calls() -> usize {
    (f64::from(RATE) * WINDOW.as_secs_f64()).round() as usize
}

pub(crate) fn peers() -> Vec<Entry> {
    vec![tower_resilience(), seatbelt(), failsafe(), recloser()]
}

/// The shared classification, as tower-resilience's classifier.
fn tower_resilience_fails(result: &Result<Response<Bytes>, BoxError>) -> bool {
    match result {
        Ok(response) => status_fails(response.status().as_u16()),
        Err(_) => true,
    }
}

fn tower_resilience() -> Entry {
    use tower_resilience_circuitbreaker::{
        CircuitBreakerError, CircuitBreakerLayer, SlidingWindowType,
    };
    Entry {
        name: "tower-resilience 0.14".into(),
        config: format!(
            "time-based window {} ms, failure rate threshold {FAILURE_RATE}, minimum calls \
             {MIN_CALLS}, wait in open {} ms (constant), {PROBES} call(s) permitted half-open; \
             tower timeout {} ms",
            WINDOW.as_millis(),
            OPEN.as_millis(),
            TIMEOUT.as_millis()
        ),
        make: Box::new(|target| {
            let layer = CircuitBreakerLayer::builder()
                .failure_rate_threshold(FAILURE_RATE)
                .sliding_window_type(SlidingWindowType::TimeBased)
                .sliding_window_duration(WINDOW)
                .minimum_number_of_calls(MIN_CALLS as usize)
                .wait_duration_in_open(OPEN)
                .permitted_calls_in_half_open(PROBES as usize)
                .failure_classifier(tower_resilience_fails)
                .build()
                .expect("a valid tower-resilience config");
            let client = target.clone();
            let inner = ServiceBuilder::new()
                .timeout(TIMEOUT)
                .service_fn(move |request| client.send(request));
            let service = layer.layer(inner);
            Arc::new(move || {
                let call = service.clone().oneshot(target.request());
                Box::pin(async move {
                    match call.await {
                        Ok(response) => Answer::of_status(response.status().as_u16()),
                        Err(CircuitBreakerError::OpenCircuit) => Answer::Refused,
                        Err(CircuitBreakerError::Inner(e))
                            if e.is::<tower::timeout::error::Elapsed>() =>
                        {
                            Answer::TimedOut
                        }
                        Err(CircuitBreakerError::Inner(_)) => Answer::Failed,
                    }
                })
            })
        }),
    }
}

fn seatbelt() -> Entry {
    use seatbelt::breaker::{Breaker, HalfOpenMode};
    use seatbelt::{RecoveryInfo, ResilienceContext};
    Entry {
        name: "seatbelt 0.11".into(),
        config: format!(
            "sampling duration {} ms, failure threshold {FAILURE_RATE}, min throughput \
             {MIN_CALLS}, break {} ms (constant), quick half-open (one probe); timeout {} ms \
             inside",
            WINDOW.as_millis(),
            OPEN.as_millis(),
            TIMEOUT.as_millis()
        ),
        make: Box::new(|target| {
            let clock = tick::Clock::new_tokio();
            let context = ResilienceContext::new(&clock);
            let service = (
                Breaker::layer("outage", &context)
                    .recovery_with(|result: &Result<u16, PeerError>, _| match result {
                        Ok(_) => RecoveryInfo::never(),
                        Err(_) => RecoveryInfo::retry(),
                    })
                    .rejected_input_error(|_, _| PeerError::Refused)
                    .failure_threshold(FAILURE_RATE as f32)
                    .min_throughput(MIN_CALLS)
                    .sampling_duration(WINDOW)
                    .break_duration(OPEN)
                    .half_open_mode(HalfOpenMode::quick()),
                Execute::new(peer_get),
            )
                .into_service();
            let service = Arc::new(service);
            Arc::new(move || {
                let (service, target) = (service.clone(), target.clone());
                Box::pin(async move { peer_answer(service.execute(target).await) })
            })
        }),
    }
}

fn failsafe() -> Entry {
    use failsafe::futures::CircuitBreaker as _;
    Entry {
        name: "failsafe 1.3".into(),
        config: format!(
            "success rate over a {} ms window at least {} with {MIN_CALLS} requests, constant \
             backoff {} ms (half-open admits every call); timeout {} ms inside",
            WINDOW.as_millis(),
            1.0 - FAILURE_RATE,
            OPEN.as_millis(),
            TIMEOUT.as_millis()
        ),
        make: Box::new(|target| {
            let policy = failsafe::failure_policy::success_rate_over_time_window(
                1.0 - FAILURE_RATE,
                MIN_CALLS,
                WINDOW,
                failsafe::backoff::constant(OPEN),
            );
            let breaker = failsafe::Config::new().failure_policy(policy).build();
            Arc::new(move || {
                let call = breaker.call(peer_get(target.clone()));
                Box::pin(async move {
                    match call.await {
                        Ok(status) => peer_answer(Ok(status)),
                        Err(failsafe::Error::Inner(e)) => peer_answer(Err(e)),
                        Err(failsafe::Error::Rejected) => Answer::Refused,
                    }
                })
            })
        }),
    }
}

fn recloser() -> Entry {
    use recloser::{AsyncRecloser, Recloser};
    Entry {
        name: "recloser 1.4".into(),
        config: format!(
            "count ring of the last {} calls (a window's worth), error rate {FAILURE_RATE}, open \
             {} ms (constant), half-open ring of {PROBES} call(s); timeout {} ms inside",
            window_calls(),
            OPEN.as_millis(),
            TIMEOUT.as_millis()
        ),
        make: Box::new(|target| {
            let recloser = AsyncRecloser::from(
                Recloser::custom()
                    .error_rate(FAILURE_RATE as f32)
                    .closed_len(window_calls())
                    .half_open_len(PROBES as usize)
                    .open_wait(OPEN)
                    .build(),
            );
            Arc::new(move || {
                let call = recloser.call(peer_get(target.clone()));
                Box::pin(async move {
                    match call.await {
                        Ok(status) => peer_answer(Ok(status)),
                        Err(recloser::Error::Inner(e)) => peer_answer(Err(e)),
                        Err(recloser::Error::Rejected) => Answer::Refused,
                    }
                })
            })
        }),
    }
}
