use breakerbox::{circuit_breaker, CircuitOpen};

struct Error;

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error
    }
}

#[circuit_breaker(group = "no-retry", retry_budget_ratio = 0.1, retry_budget_floor = 5)]
fn no_retry() -> Result<(), Error> {
    Ok(())
}

#[circuit_breaker(group = "not-idempotent", retry = 2, retry_budget_floor = 5)]
fn not_idempotent() -> Result<(), Error> {
    Ok(())
}

fn main() {}
