use std::future::Future;
use std::pin::Pin;

use breakerbox::{circuit_breaker, CallError};

async fn cached(id: u32) -> Result<u32, CallError<()>> {
    Ok(id)
}

#[circuit_breaker(group = "fail", fallback = cached, fallback_on = "failure")]
fn lookup(id: u32) -> Pin<Box<dyn Future<Output = Result<u32, CallError<()>>> + Send>> {
    Box::pin(async move { Ok(id) })
}

fn main() {}
