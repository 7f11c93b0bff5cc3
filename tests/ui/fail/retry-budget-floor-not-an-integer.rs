use breakerbox::{circuit_breaker, CircuitOpen};

struct Error;

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error
    }
}

#[circuit_breaker(group = "half", retry = 2, idempotent = true, retry_budget_floor = 2.5)]
fn half() -> Result<(), Error> {
    Ok(())
}

#[circuit_breaker(group = "huge", retry = 2, idempotent = true, retry_budget_floor = 5000000000)]
fn huge() -> Result<(), Error> {
    Ok(())
}

fn main() {}
