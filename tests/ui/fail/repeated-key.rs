use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", threshold = 3, open_ms = 100, threshold = 4)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
