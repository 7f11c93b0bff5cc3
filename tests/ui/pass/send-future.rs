use std::sync::Arc;

use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-send")]
async fn work(shared: Arc<String>) -> Result<usize, CallError<()>> {
    std::future::ready(()).await;
    Ok(shared.len())
}

fn require_send<T: Send + 'static>(_: T) {}

fn main() {
    require_send(work(Arc::new(String::new())));
}
