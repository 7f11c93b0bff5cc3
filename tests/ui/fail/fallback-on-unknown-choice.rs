use breakerbox::{circuit_breaker, CallError};

fn cached(id: u32) -> Result<u32, CallError<()>> {
    Ok(id)
}

#[circuit_breaker(group = "fail", fallback = cached, fallback_on = "errors")]
fn lookup(id: u32) -> Result<u32, CallError<()>> {
    Ok(id)
}

fn main() {}
