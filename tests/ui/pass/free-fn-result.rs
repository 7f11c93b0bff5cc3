use breakerbox::{circuit_breaker, CircuitOpen};

#[derive(Debug)]
enum Error {
    Open(CircuitOpen),
}

impl From<CircuitOpen> for Error {
    fn from(open: CircuitOpen) -> Self {
        Error::Open(open)
    }
}

#[circuit_breaker(group = "pass-free-fn", threshold = 3, open_ms = 30000)]
fn search(q: &str) -> Result<usize, Error> {
    Ok(q.len())
}

fn main() {
    assert_eq!(search("abc").unwrap(), 3);
    let _ = Error::Open;
}
