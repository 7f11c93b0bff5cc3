use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", key = host, systemic_share = 1.5)]
fn share_above_one(host: &str) -> Result<(), CallError<()>> {
    let _ = host;
    Ok(())
}

#[circuit_breaker(group = "fail-cap", key = host, max_open_keys = 0.0)]
fn no_key_may_open(host: &str) -> Result<(), CallError<()>> {
    let _ = host;
    Ok(())
}

fn main() {}
