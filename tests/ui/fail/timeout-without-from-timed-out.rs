use breakerbox::{circuit_breaker, CircuitOpen};

#[derive(Debug)]
struct Error;

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error
    }
}

// The fallback answers refusals only: a timeout still needs `From<TimedOut>`.
#[circuit_breaker(group = "fail", timeout_ms = 100, fallback = cached)]
async fn fetch(id: u32) -> Result<u32, Error> {
    Ok(id)
}

async fn cached(_id: u32) -> Result<u32, Error> {
    Ok(0)
}

fn main() {}
