use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", threshold = 3, ramp_ms = 0)]
fn ramps_over_nothing() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
