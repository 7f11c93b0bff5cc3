#![deny(warnings)]
#![deny(clippy::all, clippy::pedantic)]

use std::net::IpAddr;
use std::sync::Arc;

use breakerbox::{circuit_breaker, AsKey, CallError};

/// A user's own key type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard(u16);

impl AsKey for Shard {
    type Owned = Shard;
    type Lookup = Shard;
    fn lookup(&self) -> &Shard {
        self
    }
    fn to_owned_key(&self) -> Shard {
        *self
    }
}

pub struct Client {
    host: Arc<str>,
}

impl Client {
    /// Keyed by a field of the receiver, with a fallback.
    #[circuit_breaker(group = "pass-keyed-method", key = self.host, fallback = cached)]
    pub fn get(&self, path: &str) -> String {
        format!("{}{path}", self.host)
    }

    /// The fallback.
    pub fn cached(&self, _path: &str) -> String {
        String::new()
    }

    /// Async, keyed by an expression of two arguments.
    ///
    /// # Errors
    /// When the key's breaker is open.
    #[circuit_breaker(group = "pass-keyed-async", key = (ip, port), key_capacity = 50_000, timeout_ms = 100)]
    pub async fn connect(&self, ip: IpAddr, port: u16) -> Result<(), CallError<()>> {
        let _ = (ip, port, &self.host);
        Ok(())
    }
}

/// # Errors
/// When the key's breaker is open.
#[circuit_breaker(group = "pass-keyed-shard", key = Shard(id % 8), threshold = 2, max_concurrent = 4)]
pub fn shard(id: u16) -> Result<u16, CallError<()>> {
    Ok(id)
}

/// # Errors
/// When the key's breaker is open.
#[circuit_breaker(group = "pass-keyed-tail", key = tenant)]
pub fn boxed(tenant: String) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), CallError<()>>> + Send>> {
    Box::pin(async move {
        let _ = tenant;
        Ok(())
    })
}

fn main() {
    let client = Client { host: Arc::from("a.example") };
    assert_eq!(client.get("/x"), "a.example/x");
    assert_eq!(shard(9).unwrap(), 9);
    let _ = client.connect(IpAddr::from([127, 0, 0, 1]), 80);
    let _ = boxed("t".to_owned());
}
