#![deny(warnings)]
#![deny(clippy::all, clippy::pedantic)]

use breakerbox::{circuit_breaker, CallError};

/// Safe to repeat, and retried only as a configuration file says.
///
/// # Errors
/// When the call failed or the breaker refused.
#[circuit_breaker(group = "pass-idempotent", idempotent = true)]
pub fn lookup(key: &str) -> Result<usize, CallError<std::io::Error>> {
    Ok(key.len())
}

/// The same, async: its waits, if a file gives it retries, are the timer's.
///
/// # Errors
/// When the call failed or the breaker refused.
#[circuit_breaker(group = "pass-idempotent-async", idempotent = true,
    timer = breakerbox::timeout::Tokio)]
pub async fn fetch(key: String) -> Result<usize, CallError<std::io::Error>> {
    Ok(key.len())
}

fn main() {
    assert_eq!(lookup("abc").unwrap(), 3);
    let _ = fetch(String::new());
}
