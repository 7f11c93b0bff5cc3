use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", threshold = "3", open_ms = 1.5, backoff = "2")]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
