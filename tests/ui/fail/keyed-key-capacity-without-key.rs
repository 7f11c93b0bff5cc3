use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "hosts", key_capacity = 100)]
fn fetch(host: &str) -> Result<(), CallError<()>> {
    let _ = host;
    Ok(())
}

fn main() {}
