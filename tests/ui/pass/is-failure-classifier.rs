use breakerbox::{circuit_breaker, CircuitOpen};

#[derive(Debug)]
enum HttpError {
    Status(u16),
    Open,
}

impl From<CircuitOpen> for HttpError {
    fn from(_: CircuitOpen) -> Self {
        HttpError::Open
    }
}

fn server_side(e: &HttpError) -> bool {
    matches!(e, HttpError::Status(500..) | HttpError::Open)
}

#[circuit_breaker(group = "pass-classifier", is_failure = server_side)]
fn get(status: u16) -> Result<(), HttpError> {
    if status >= 400 {
        Err(HttpError::Status(status))
    } else {
        Ok(())
    }
}

fn main() {
    let _ = get(404);
}
