//! Every fallback form, under `#![deny(warnings)]`: refusals only and failures
//! too, with and without `why`, sync and async, free fns and methods, keyed.
#![deny(warnings)]

use std::future::{pending, Future, Pending};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breakerbox::timeout::Timer;
use breakerbox::{circuit_breaker, CircuitOpen, Fallback, TimedOut};

/// A deadline that never passes.
pub struct Never;

impl Timer for Never {
    type Sleep = Pending<()>;
    fn sleep(&self, _: Duration) -> Pending<()> {
        pending()
    }
}

fn ready<F: Future>(future: F) -> F::Output {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("these bodies never wait"),
    }
}

#[derive(Debug)]
pub enum ApiError {
    Down,
    Open(CircuitOpen),
    Late(TimedOut),
}

impl From<CircuitOpen> for ApiError {
    fn from(open: CircuitOpen) -> Self {
        ApiError::Open(open)
    }
}

impl From<TimedOut> for ApiError {
    fn from(late: TimedOut) -> Self {
        ApiError::Late(late)
    }
}

fn cached(q: &str, limit: u32) -> Result<Vec<String>, ApiError> {
    Ok(vec![format!("cached {q} {limit}")])
}

fn cached_why(q: &str, limit: u32, why: Fallback<ApiError>) -> Result<Vec<String>, ApiError> {
    match why {
        Fallback::Failed(ApiError::Down) => Ok(vec![format!("stale {q} {limit}")]),
        other => Err(ApiError::from(match other {
            Fallback::Refused(open) => open,
            _ => return Ok(Vec::new()),
        })),
    }
}

async fn cached_async(q: &str, why: Fallback<ApiError>) -> Result<Vec<String>, ApiError> {
    let _ = why.is_refused();
    Ok(vec![q.to_owned()])
}

#[circuit_breaker(group = "pass-forms-refusal", fallback = cached)]
pub fn refusal(q: &str, limit: u32) -> Result<Vec<String>, ApiError> {
    Ok(vec![format!("{q} {limit}")])
}

#[circuit_breaker(group = "pass-forms-failure", fallback = cached, fallback_on = "failure")]
pub fn failure(q: &str, limit: u32) -> Result<Vec<String>, ApiError> {
    Err(ApiError::Down).map(|()| vec![format!("{q} {limit}")])
}

#[circuit_breaker(group = "pass-forms-why", fallback = cached_why(why))]
pub fn refusal_why(q: &str, limit: u32) -> Result<Vec<String>, ApiError> {
    Ok(vec![format!("{q} {limit}")])
}

#[circuit_breaker(
    group = "pass-forms-failure-why",
    fallback = cached_why(why),
    fallback_on = "failure",
    is_failure = is_down
)]
pub fn failure_why(q: &str, limit: u32) -> Result<Vec<String>, ApiError> {
    Ok(vec![format!("{q} {limit}")])
}

fn is_down(error: &ApiError) -> bool {
    matches!(error, ApiError::Down)
}

#[circuit_breaker(
    group = "pass-forms-async",
    timeout_ms = 1_000,
    timer = Never,
    fallback = cached_async(why),
    fallback_on = "failure"
)]
pub async fn failure_async(q: &str) -> Result<Vec<String>, ApiError> {
    Ok(vec![q.to_owned()])
}

#[circuit_breaker(group = "pass-forms-keyed", key = host, fallback = cached_why(why), fallback_on = "failure")]
pub fn keyed(host: &str, limit: u32) -> Result<Vec<String>, ApiError> {
    Ok(vec![format!("{host} {limit}")])
}

pub struct Catalog;

// A free fn standing in for a method gets the receiver first too.
fn catalog_cached(
    _: &Catalog,
    q: &str,
    limit: u32,
    why: Fallback<ApiError>,
) -> Result<Vec<String>, ApiError> {
    cached_why(q, limit, why)
}

impl Catalog {
    #[circuit_breaker(group = "pass-forms-method", fallback = stale(why), fallback_on = "failure")]
    pub fn page(&self, n: u32) -> Result<Vec<String>, ApiError> {
        Ok(vec![n.to_string()])
    }

    #[circuit_breaker(group = "pass-forms-method-free", fallback = self::catalog_cached(why))]
    pub fn search(&self, q: &str, limit: u32) -> Result<Vec<String>, ApiError> {
        let _ = self;
        Ok(vec![format!("{q} {limit}")])
    }

    #[circuit_breaker(group = "pass-forms-method-async", fallback = Self::stale_async(why), fallback_on = "failure")]
    pub async fn page_async(&self, n: u32) -> Result<Vec<String>, ApiError> {
        Ok(vec![n.to_string()])
    }

    fn stale(&self, n: u32, why: Fallback<ApiError>) -> Result<Vec<String>, ApiError> {
        let _ = (self, why);
        Ok(vec![format!("stale {n}")])
    }

    async fn stale_async(&self, n: u32, why: Fallback<ApiError>) -> Result<Vec<String>, ApiError> {
        self.stale(n, why)
    }
}

fn main() {
    assert_eq!(refusal("q", 1).unwrap(), ["q 1"]);
    assert_eq!(failure("q", 1).unwrap(), ["cached q 1"]);
    assert_eq!(refusal_why("q", 1).unwrap(), ["q 1"]);
    assert_eq!(failure_why("q", 1).unwrap(), ["q 1"]);
    assert_eq!(keyed("h", 1).unwrap(), ["h 1"]);
    assert_eq!(Catalog.page(1).unwrap(), ["1"]);
    assert_eq!(Catalog.search("q", 2).unwrap(), ["q 2"]);
    assert_eq!(ready(failure_async("q")).unwrap(), ["q"]);
    assert_eq!(ready(Catalog.page_async(3)).unwrap(), ["3"]);
}
