use breakerbox::{circuit_breaker, Fallback};

#[derive(Debug)]
pub struct ApiError;

impl From<breakerbox::CircuitOpen> for ApiError {
    fn from(_: breakerbox::CircuitOpen) -> Self {
        ApiError
    }
}

// `(why)` passes why as one more, last, argument: `cached` lacks it.
fn cached(_q: &str, _limit: u32) -> Result<Vec<String>, ApiError> {
    Ok(Vec::new())
}

#[circuit_breaker(group = "fail", fallback = cached(why), fallback_on = "failure")]
fn search(q: &str, limit: u32) -> Result<Vec<String>, ApiError> {
    Ok(vec![format!("{q} {limit}")])
}

// `why` is a `Fallback` of the fn's own error type.
fn stale(_q: &str, _why: Fallback<String>) -> Result<Vec<String>, ApiError> {
    Ok(Vec::new())
}

#[circuit_breaker(group = "fail", fallback = stale(why), fallback_on = "failure")]
fn find(q: &str) -> Result<Vec<String>, ApiError> {
    Ok(vec![q.to_owned()])
}

fn main() {}
