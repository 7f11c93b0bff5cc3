use std::rc::Rc;

use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "fail")]
async fn holds_rc() -> Result<(), CallError<()>> {
    let rc = Rc::new(1);
    std::future::ready(()).await;
    drop(rc);
    Ok(())
}

fn require_send<T: Send>(_: T) {}

fn main() {
    // Send follows the body: this body holds an Rc across an await.
    require_send(holds_rc());
}
