use std::future::Future;
use std::pin::Pin;

use breakerbox::circuit_breaker;

#[circuit_breaker(group = "early-return")]
fn early(x: u32) -> Pin<Box<dyn Future<Output = Result<u32, breakerbox::CircuitOpen>> + Send>> {
    if x == 0 {
        return Box::pin(async { Ok(0) });
    }
    Box::pin(async move { Ok(x) })
}

fn main() {
    let _ = early(1);
}
