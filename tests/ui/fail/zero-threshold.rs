use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", threshold = 0)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
