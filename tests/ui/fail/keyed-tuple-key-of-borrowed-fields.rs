use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "hosts", key = (host, port), threshold = 3)]
fn fetch(host: &str, port: u16) -> Result<(), CallError<()>> {
    let _ = (host, port);
    Ok(())
}

fn main() {}
