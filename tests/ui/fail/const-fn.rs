use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail")]
const fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
