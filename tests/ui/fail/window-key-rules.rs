use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", failure_rate = 0.5)]
fn rate_without_window() -> Result<(), CallError<()>> {
    Ok(())
}

#[circuit_breaker(group = "fail", window_ms = 10_000, window_calls = 10)]
fn two_windows() -> Result<(), CallError<()>> {
    Ok(())
}

#[circuit_breaker(group = "fail", threshold = 3, window_calls = 10)]
fn threshold_and_window() -> Result<(), CallError<()>> {
    Ok(())
}

#[circuit_breaker(group = "fail", window_calls = 10, failure_rate = 1.5)]
fn rate_above_one() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
