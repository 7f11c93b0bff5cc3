use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", window_calls = 100, latency_p99_ms = 0)]
fn always_too_slow() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
