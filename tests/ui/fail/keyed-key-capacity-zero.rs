use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "hosts", key = host, key_capacity = 0)]
fn fetch(host: &str) -> Result<(), CallError<()>> {
    let _ = host;
    Ok(())
}

fn main() {}
