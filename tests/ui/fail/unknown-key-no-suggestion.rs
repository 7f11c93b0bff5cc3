use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", colour = "red")]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
