use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", threshold = 3, latency_p99_ms = 250)]
fn p99_of_what() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
