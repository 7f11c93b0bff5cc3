use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", throttle = 0.5)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
