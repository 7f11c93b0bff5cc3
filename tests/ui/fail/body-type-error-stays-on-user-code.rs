use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail")]
fn f() -> Result<u32, CallError<()>> {
    Ok("not a number")
}

#[circuit_breaker(group = "fail")]
async fn g() -> Result<u32, CallError<()>> {
    if true {
        return Ok("early");
    }
    Ok(1)
}

fn main() {}
