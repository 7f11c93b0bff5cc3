use breakerbox::{circuit_breaker, CallError};

#[async_trait::async_trait]
trait Health: Sync {
    fn name(&self) -> &'static str;

    #[circuit_breaker(group = "pass-async-trait-default")]
    async fn check(&self) -> Result<&'static str, CallError<()>> {
        Ok(self.name())
    }
}

struct Db;

#[async_trait::async_trait]
impl Health for Db {
    fn name(&self) -> &'static str {
        "db"
    }
}

fn main() {
    let _future = Db.check();
}
