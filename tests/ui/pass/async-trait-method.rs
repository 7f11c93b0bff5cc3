use breakerbox::{circuit_breaker, CallError};

#[async_trait::async_trait]
trait Store {
    async fn load(&self, key: String) -> Result<String, CallError<()>>;
}

struct Db;

#[async_trait::async_trait]
impl Store for Db {
    #[circuit_breaker(group = "pass-async-trait")]
    async fn load(&self, key: String) -> Result<String, CallError<()>> {
        Ok(key)
    }
}

fn is_send<T: Send>(_: &T) {}

fn main() {
    let db = Db;
    let future = db.load("k".into());
    is_send(&future);
}
