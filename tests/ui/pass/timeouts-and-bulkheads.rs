#![deny(warnings)]

use std::future::{pending, Future, Pending};
use std::pin::Pin;
use std::time::Duration;

use breakerbox::{circuit_breaker, CallError, timeout::Timer};

type R = Result<u32, CallError<()>>;

fn is_send<T: Send>(t: T) -> T {
    t
}

/// Every guard on an async fn, with a fallback for refusals.
#[circuit_breaker(
    group = "pass-guards-all",
    window_ms = 10_000,
    min_calls = 20,
    latency_p99_ms = 250,
    max_concurrent = 8,
    timeout_ms = 100,
    fallback = zero
)]
pub async fn all(x: u32) -> R {
    Ok(x)
}

async fn zero(_x: u32) -> R {
    Ok(0)
}

/// A bulkhead on a sync fn.
#[circuit_breaker(group = "pass-guards-sync", max_concurrent = 2)]
pub fn sync_capped(x: u32) -> R {
    Ok(x)
}

/// A trailing async block and a boxed future, with a deadline.
#[circuit_breaker(group = "pass-guards-tail", timeout_ms = 100)]
pub fn tail(x: u32) -> impl Future<Output = R> {
    async move { Ok(x) }
}

#[circuit_breaker(group = "pass-guards-boxed", timeout_ms = 100, max_concurrent = 1)]
pub fn boxed(x: u32) -> Pin<Box<dyn Future<Output = R> + Send>> {
    Box::pin(async move { Ok(x) })
}

/// Another runtime's timer.
pub struct Never;
impl Timer for Never {
    type Sleep = Pending<()>;
    fn sleep(&self, _: Duration) -> Pending<()> {
        pending()
    }
}

#[circuit_breaker(group = "pass-guards-timer", timeout_ms = 100, timer = Never)]
pub async fn own_timer(x: u32) -> R {
    Ok(x)
}

struct S;

#[async_trait::async_trait]
trait Svc {
    async fn call(&self) -> R;
}

#[async_trait::async_trait]
impl Svc for S {
    #[circuit_breaker(group = "pass-guards-async-trait", timeout_ms = 100, max_concurrent = 4)]
    async fn call(&self) -> R {
        Ok(1)
    }
}

fn main() {
    drop(is_send(all(1)));
    drop(sync_capped(1));
    drop(is_send(tail(1)));
    drop(boxed(1));
    drop(own_timer(1));
    drop(S.call());
}
