use breaker::circuit_breaker;

#[circuit_breaker(group = "fail")]
fn read() -> Result<Vec<u8>, std::io::Error> {
    Ok(Vec::new())
}

fn main() {}
