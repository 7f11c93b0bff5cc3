use breakerbox::{circuit_breaker, CallError};

trait Health {
    fn name(&self) -> &'static str;

    #[circuit_breaker(group = "pass-trait-default")]
    fn check(&self) -> Result<&'static str, CallError<()>> {
        Ok(self.name())
    }
}

struct Db;

impl Health for Db {
    fn name(&self) -> &'static str {
        "db"
    }
}

fn main() {
    assert_eq!(Db.check().unwrap(), "db");
}
