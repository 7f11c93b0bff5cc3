use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", throttle_window_ms = 60_000)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
