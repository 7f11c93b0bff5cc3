use breakerbox::{circuit_breaker, CircuitOpen};

struct Error;

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error
    }
}

#[circuit_breaker(group = "charge", retry = 2)]
fn charge() -> Result<(), Error> {
    Ok(())
}

#[circuit_breaker(group = "charge-no", retry = 2, idempotent = false)]
fn charge_no() -> Result<(), Error> {
    Ok(())
}

#[circuit_breaker(group = "lonely", idempotent = true, retry_delay_ms = 10)]
fn lonely() -> Result<(), Error> {
    Ok(())
}

#[circuit_breaker(group = "promise-nothing", idempotent = false)]
fn promise_nothing() -> Result<(), Error> {
    Ok(())
}

#[circuit_breaker(group = "zero", retry = 0, idempotent = true)]
fn zero() -> Result<(), Error> {
    Ok(())
}

fn main() {}
