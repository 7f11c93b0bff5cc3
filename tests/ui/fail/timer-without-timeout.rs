use breakerbox::{circuit_breaker, CallError};

struct MyTimer;

#[circuit_breaker(group = "fail", timer = MyTimer)]
async fn untimed() -> Result<(), CallError<()>> {
    Ok(())
}

// A sync fn's retries wait on the breaker's clock: no timer to name.
#[circuit_breaker(group = "fail-sync-retry", retry = 1, idempotent = true, timer = MyTimer)]
fn sync_retry() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
