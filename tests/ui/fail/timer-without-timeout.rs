use breakerbox::{circuit_breaker, CallError};

struct MyTimer;

#[circuit_breaker(group = "fail", timer = MyTimer)]
async fn untimed() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
