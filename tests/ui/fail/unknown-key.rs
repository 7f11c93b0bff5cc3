use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", treshold = 3)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
