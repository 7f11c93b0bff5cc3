use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-shared", threshold = 2)]
fn read() -> Result<(), CallError<()>> {
    Err(CallError::Inner(()))
}

#[circuit_breaker(group = "pass-shared", threshold = 2)]
fn write() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {
    let _ = read();
    let _ = read();
    assert!(write().unwrap_err().is_open(), "both sites share one breaker");
}
