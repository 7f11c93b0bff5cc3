use breakerbox::{circuit_breaker, CallError, Fallback};

fn cached(id: u32, _why: Fallback<()>) -> Result<u32, CallError<()>> {
    Ok(id)
}

#[circuit_breaker(group = "fail", fallback = cached(reason))]
fn lookup(id: u32) -> Result<u32, CallError<()>> {
    Ok(id)
}

fn main() {}
