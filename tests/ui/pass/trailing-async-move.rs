use std::future::Future;

use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-tail")]
fn later(x: u32) -> impl Future<Output = Result<u32, CallError<()>>> + Send {
    let doubled = x * 2;
    async move { Ok(doubled) }
}

fn main() {
    let _future = later(1);
}
