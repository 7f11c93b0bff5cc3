use breakerbox::{circuit_breaker, CallError};

fn cached(name: String) -> Result<usize, CallError<()>> {
    Ok(name.len())
}

// A failure fallback gets the arguments after the call: a body may not move one away.
#[circuit_breaker(group = "fail", fallback = cached, fallback_on = "failure")]
fn consume(name: String) -> Result<usize, CallError<()>> {
    let owned: String = name;
    Ok(owned.len())
}

fn main() {}
