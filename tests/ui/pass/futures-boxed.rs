use futures::future::{BoxFuture, FutureExt, LocalBoxFuture};

use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-futures-boxed")]
fn boxed(x: u32) -> BoxFuture<'static, Result<u32, CallError<()>>> {
    async move { Ok(x) }.boxed()
}

#[circuit_breaker(group = "pass-futures-boxed-local")]
fn boxed_local(x: u32) -> LocalBoxFuture<'static, Result<u32, CallError<()>>> {
    async move { Ok(x) }.boxed_local()
}

fn main() {
    assert_eq!(futures::executor::block_on(boxed(1)).unwrap(), 1);
    assert_eq!(futures::executor::block_on(boxed_local(2)).unwrap(), 2);
    assert_eq!(breakerbox::registry().get("pass-futures-boxed").unwrap().metrics().successes, 1);
}
