use std::error::Error;

use breakerbox::circuit_breaker;

#[circuit_breaker(group = "pass-boxed-error")]
fn parse(s: &str) -> Result<u32, Box<dyn Error + Send + Sync>> {
    Ok(s.parse()?)
}

fn main() {
    assert_eq!(parse("7").unwrap(), 7);
}
