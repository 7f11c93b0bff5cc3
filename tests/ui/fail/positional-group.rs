use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker("search", threshold = 3)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
