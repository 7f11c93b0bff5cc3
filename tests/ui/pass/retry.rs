#![deny(warnings)]
#![deny(clippy::all, clippy::pedantic)]

use std::time::Duration;

use breakerbox::{circuit_breaker, CallError, Fallback, RetryAfterHint};

#[derive(Debug)]
pub struct Busy(Duration);

impl RetryAfterHint for Busy {
    fn retry_after(&self) -> Option<Duration> {
        Some(self.0)
    }
}

/// Retried, with a server-directed delay.
///
/// # Errors
/// When every attempt failed or the breaker refused.
#[circuit_breaker(group = "pass-retry", retry = 2, idempotent = true, retry_delay_ms = 10,
    retry_max_delay_ms = 100, retry_deadline_ms = 1000)]
pub fn lookup(key: &str) -> Result<usize, CallError<Busy>> {
    Ok(key.len())
}

/// Retried async, with a deadline per attempt and a failure fallback.
///
/// # Errors
/// Never: the fallback answers.
#[circuit_breaker(group = "pass-retry-async", retry = 1, idempotent = true, timeout_ms = 50,
    fallback = cached(why), fallback_on = "failure")]
pub async fn fetch(key: String, n: u32) -> Result<u32, std::io::Error> {
    Ok(u32::try_from(key.len()).unwrap_or(n))
}

async fn cached(_key: String, n: u32, _why: Fallback<std::io::Error>) -> Result<u32, std::io::Error> {
    Ok(n)
}

pub struct Svc;

impl Svc {
    /// A retried method whose error tells no delay.
    ///
    /// # Errors
    /// When every attempt failed.
    #[circuit_breaker(group = "pass-retry-method", retry = 3, idempotent = true, key = id)]
    pub fn get(&self, id: u64) -> Result<u64, CallError<String>> {
        Ok(id)
    }
}

fn main() {
    let _ = lookup("x");
    drop(fetch(String::new(), 1));
    let _ = Svc.get(1);
}
