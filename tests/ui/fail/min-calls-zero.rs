use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", window_ms = 10_000, min_calls = 0)]
fn judged_on_nothing() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
