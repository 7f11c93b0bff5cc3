#![deny(warnings)]
#![deny(clippy::all, clippy::pedantic)]

use breakerbox::{circuit_breaker, CallError};

pub struct Svc;

impl Svc {
    /// A method.
    ///
    /// # Errors
    /// When the breaker is open.
    #[circuit_breaker(group = "pass-deny-method", threshold = 2, is_failure = retryable)]
    pub fn call(&self, x: u32) -> Result<u32, CallError<u32>> {
        Ok(x)
    }

    /// Unit-returning, with a fallback.
    #[circuit_breaker(group = "pass-deny-unit", fallback = Self::noop)]
    pub fn fire(&self) {}

    /// Does nothing.
    pub fn noop(&self) {}
}

fn retryable(e: &CallError<u32>) -> bool {
    e.is_open()
}

/// # Errors
/// When the breaker is open.
#[circuit_breaker(group = "pass-deny-async")]
pub async fn fetch(x: u32) -> Result<u32, CallError<()>> {
    Ok(x)
}

fn main() {
    let _ = Svc.call(1);
    Svc.fire();
    drop(fetch(1));
}
