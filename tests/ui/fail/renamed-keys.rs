use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", retry = 2, idempotent = true, retry_backoff_ms = 5, retry_cap_ms = 50)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

#[circuit_breaker(group = "fail-keyed", key = host, max_keys = 100)]
fn g(host: &str) -> Result<(), CallError<()>> {
    let _ = host;
    Ok(())
}

fn main() {}
