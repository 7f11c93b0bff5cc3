use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", window_calls = 20, slow_call_ms = 200, slow_call_rate = 0.0)]
fn never_slow_enough() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
