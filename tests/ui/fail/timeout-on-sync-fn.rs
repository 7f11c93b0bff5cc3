use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", timeout_ms = 500)]
fn blocking_read() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
