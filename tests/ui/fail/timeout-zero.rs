use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", timeout_ms = 0)]
async fn never_allowed() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
