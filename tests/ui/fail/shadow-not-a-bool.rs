use breakerbox::{circuit_breaker, CircuitOpen};

#[derive(Debug)]
struct Error;

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error
    }
}

#[circuit_breaker(group = "ui-shadow-number", shadow = 1)]
fn number() -> Result<(), Error> {
    Ok(())
}

#[circuit_breaker(group = "ui-shadow-text", shadow = "true")]
fn text() -> Result<(), Error> {
    Ok(())
}

fn main() {}
