#![deny(warnings)]

use std::future::Future;
use std::pin::Pin;

use breakerbox::{circuit_breaker, CallError};

type R = Result<u32, CallError<()>>;

/// Async, with a fallback.
#[circuit_breaker(group = "pass-deny-async-fallback", fallback = zero)]
pub async fn with_fallback(x: u32) -> R {
    Ok(x)
}

async fn zero(_x: u32) -> R {
    Ok(0)
}

/// Bodies written on one line: the wrapper must not make the user's braces
/// look unnecessary.
#[circuit_breaker(group = "pass-deny-one-line")]
pub async fn one_line(x: u32) -> R { Ok(x) }

#[circuit_breaker(group = "pass-deny-one-line-fallback", fallback = zero)]
pub async fn one_line_fallback(x: u32) -> R { Ok(x + 1) }

/// A trailing async block.
#[circuit_breaker(group = "pass-deny-tail")]
pub fn tail(x: u32) -> impl Future<Output = R> {
    async move { Ok(x) }
}

/// A boxed future.
#[circuit_breaker(group = "pass-deny-boxed")]
pub fn boxed(x: u32) -> Pin<Box<dyn Future<Output = R> + Send>> {
    Box::pin(async move { Ok(x) })
}

/// A unit async fn.
#[circuit_breaker(group = "pass-deny-unit-async", fallback = nothing)]
pub async fn unit() {}

async fn nothing() {}

#[async_trait::async_trait]
trait Svc {
    async fn call(&self) -> R;
}

struct S;

#[async_trait::async_trait]
impl Svc for S {
    #[circuit_breaker(group = "pass-deny-async-trait")]
    async fn call(&self) -> R {
        Ok(1)
    }
}

fn main() {
    drop(with_fallback(1));
    drop(one_line(1));
    drop(one_line_fallback(1));
    drop(tail(1));
    drop(boxed(1));
    drop(unit());
    drop(S.call());
}
