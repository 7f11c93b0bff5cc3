use breakerbox::{circuit_breaker, Fallback};

#[derive(Debug)]
pub struct ApiError;

impl From<breakerbox::CircuitOpen> for ApiError {
    fn from(_: breakerbox::CircuitOpen) -> Self {
        ApiError
    }
}

// Another return type, from an async fallback of an async fn.
async fn cached(_q: &str, _why: Fallback<ApiError>) -> Option<Vec<String>> {
    None
}

#[circuit_breaker(group = "fail", fallback = cached(why), fallback_on = "failure")]
async fn search(q: &str) -> Result<Vec<String>, ApiError> {
    Ok(vec![q.to_owned()])
}

fn main() {}
