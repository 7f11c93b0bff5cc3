use breakerbox::{circuit_breaker, CallError, Registry};

/// A client that carries its own registry, e.g. one per tenant.
struct Client {
    registry: Registry,
}

impl Client {
    #[circuit_breaker(group = "pass-registry-self", registry = &self.registry)]
    fn get(&self, id: u32) -> Result<u32, CallError<()>> {
        Ok(id)
    }

    #[circuit_breaker(group = "pass-registry-self-async", registry = &self.registry)]
    async fn get_async(&self, id: u32) -> Result<u32, CallError<()>> {
        Ok(id)
    }
}

fn main() {
    let client = Client {
        registry: Registry::new(),
    };
    client.get(1).unwrap();
    assert!(client.registry.get("pass-registry-self").is_some());
    assert!(breakerbox::registry().get("pass-registry-self").is_none());
    drop(client.get_async(1));
}
