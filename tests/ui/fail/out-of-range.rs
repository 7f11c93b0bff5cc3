use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail", half_open_probes = 5000)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

#[circuit_breaker(group = "fail", threshold = 99999999999)]
fn g() -> Result<(), CallError<()>> {
    Ok(())
}

#[circuit_breaker(group = "fail", open_ms = -5)]
fn h() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
