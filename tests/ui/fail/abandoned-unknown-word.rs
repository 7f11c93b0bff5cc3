use breakerbox::{circuit_breaker, CircuitOpen};

#[circuit_breaker(group = "fail", abandoned = "fail")]
async fn lookup(id: u32) -> Result<u32, CircuitOpen> {
    Ok(id)
}

fn main() {}
