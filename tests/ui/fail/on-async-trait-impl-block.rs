use breakerbox::{circuit_breaker, CallError};

#[async_trait::async_trait]
trait Store {
    async fn get(&self) -> Result<(), CallError<()>>;
}

struct Db;

// The attribute guards fns: on the impl it cannot tell which method is meant.
#[circuit_breaker(group = "fail")]
#[async_trait::async_trait]
impl Store for Db {
    async fn get(&self) -> Result<(), CallError<()>> {
        Ok(())
    }
}

fn main() {}
