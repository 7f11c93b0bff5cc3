use breakerbox::circuit_breaker;

// An error type of another crate: `From<CircuitOpen>` cannot be implemented
// for it here, so the hint suggests wrapping it in one of this crate's.
#[circuit_breaker(group = "fail")]
fn port(text: &str) -> Result<u16, std::num::ParseIntError> {
    text.parse()
}

fn main() {}
