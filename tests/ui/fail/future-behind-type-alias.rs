use std::future::Future;
use std::pin::Pin;

use breakerbox::{circuit_breaker, CircuitOpen};

type MyFut<T> = Pin<Box<dyn Future<Output = T> + Send>>;

async fn inner() -> Result<u32, CircuitOpen> {
    Ok(1)
}

#[circuit_breaker(group = "alias", fallback = later)]
fn alias() -> MyFut<Result<u32, CircuitOpen>> {
    Box::pin(inner())
}

fn later() -> MyFut<Result<u32, CircuitOpen>> {
    Box::pin(async { Ok(0) })
}

fn main() {
    let _ = alias();
}
