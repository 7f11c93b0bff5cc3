use std::future::Future;
use std::pin::Pin;

use breakerbox::{circuit_breaker, CallError};

type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

struct Client;

impl Client {
    #[circuit_breaker(group = "pass-box-pin")]
    fn get<'a>(&'a self, path: &'a str) -> BoxFut<'a, Result<usize, CallError<()>>> {
        Box::pin(async move { Ok(path.len()) })
    }
}

fn main() {
    let client = Client;
    let _future = client.get("/health");
}
