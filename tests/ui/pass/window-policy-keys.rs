use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(
    group = "pass-time-window",
    failure_rate = 0.5,
    window_ms = 10_000,
    min_calls = 10,
    slow_call_ms = 2_000,
    slow_call_rate = 0.8
)]
fn time_window() -> Result<(), CallError<()>> {
    Ok(())
}

#[circuit_breaker(group = "pass-count-window", window_calls = 20, failure_rate = 0.25)]
fn count_window() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {
    time_window().unwrap();
    count_window().unwrap();
}
