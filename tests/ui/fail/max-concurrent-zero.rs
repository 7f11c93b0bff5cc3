use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", max_concurrent = 0)]
fn never_admitted() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
