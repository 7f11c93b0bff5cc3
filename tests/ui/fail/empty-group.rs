use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "  ")]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
