use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", throttle = 2.0, throttle_max_reject = 1.0)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
