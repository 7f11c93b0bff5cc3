use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", registry = "global")]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
