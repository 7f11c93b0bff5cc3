use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", open_ms = 60_000, max_open_ms = 1_000)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
