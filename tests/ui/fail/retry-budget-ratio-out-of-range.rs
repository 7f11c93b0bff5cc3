use breakerbox::{circuit_breaker, CircuitOpen};

struct Error;

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error
    }
}

#[circuit_breaker(group = "over", retry = 2, idempotent = true, retry_budget_ratio = 1.5)]
fn over() -> Result<(), Error> {
    Ok(())
}

#[circuit_breaker(group = "under", retry = 2, idempotent = true, retry_budget_ratio = -0.1)]
fn under() -> Result<(), Error> {
    Ok(())
}

fn main() {}
