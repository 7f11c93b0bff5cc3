use breakerbox::{circuit_breaker, CallError};

trait Store {
    async fn get(&self, key: u32) -> Result<u32, CallError<()>>;
}

struct Memory;

impl Store for Memory {
    #[circuit_breaker(group = "pass-native-afit")]
    async fn get(&self, key: u32) -> Result<u32, CallError<()>> {
        Ok(key)
    }
}

fn main() {
    let _future = Memory.get(1);
}
