use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "hosts", key = host, key_capacity = "10k")]
fn fetch(host: &str) -> Result<(), CallError<()>> {
    let _ = host;
    Ok(())
}

#[circuit_breaker(group = "hosts", key = host, key_capacity = 1.5)]
fn fetch_again(host: &str) -> Result<(), CallError<()>> {
    let _ = host;
    Ok(())
}

fn main() {}
