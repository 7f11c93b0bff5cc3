use breakerbox::{circuit_breaker, CallError};

struct NotATimer;

#[circuit_breaker(group = "fail", timeout_ms = 100, timer = NotATimer)]
async fn timed() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
