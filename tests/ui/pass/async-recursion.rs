use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-async-recursion", threshold = 100)]
async fn countdown(n: u32) -> Result<u32, CallError<()>> {
    if n == 0 {
        return Ok(0);
    }
    Ok(1 + Box::pin(countdown(n - 1)).await?)
}

fn main() {
    let _future = countdown(3);
}
