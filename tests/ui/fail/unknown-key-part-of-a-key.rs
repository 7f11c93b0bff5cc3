use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", timeout = 100)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
