use std::future::Future;

use breakerbox::{circuit_breaker, CallError};

async fn inner() -> Result<(), CallError<()>> {
    Ok(())
}

#[circuit_breaker(group = "fail")]
fn f() -> impl Future<Output = Result<(), CallError<()>>> {
    inner()
}

fn main() {}
