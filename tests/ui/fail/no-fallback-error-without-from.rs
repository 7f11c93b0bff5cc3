use breakerbox::circuit_breaker;

#[derive(Debug)]
pub struct ParseError;

#[circuit_breaker(group = "fail")]
fn parse() -> Result<u32, ParseError> {
    Ok(1)
}

fn main() {}
