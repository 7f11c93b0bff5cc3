use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", fallback_on = "failure")]
fn lookup(id: u32) -> Result<u32, CallError<()>> {
    Ok(id)
}

fn main() {}
