use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", crate = not_a_crate::breaker)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
