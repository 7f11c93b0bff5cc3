use breakerbox::{circuit_breaker, CallError};

fn cached(q: &str) -> usize {
    q.len()
}

// One parameter short, in a sync free fn.
#[circuit_breaker(group = "fail", fallback = cached)]
fn search(q: &str, limit: usize) -> usize {
    q.len() + limit
}

async fn cached_async(q: &str, _limit: usize, _extra: bool) -> usize {
    q.len()
}

// One parameter too many, in an async fn.
#[circuit_breaker(group = "fail", fallback = cached_async)]
async fn search_async(q: &str, limit: usize) -> usize {
    q.len() + limit
}

struct Index;

impl Index {
    // A method's fallback gets the receiver first: this one forgot it.
    #[circuit_breaker(group = "fail", fallback = Self::cached_hits)]
    fn hits(&self, q: &str) -> usize {
        q.len()
    }

    fn cached_hits(q: &str) -> usize {
        q.len()
    }
}

fn cached_host(host: &str, _path: &str) -> Result<String, CallError<String>> {
    Ok(host.to_owned())
}

// A keyed fn's fallback gets every argument, the key's included.
#[circuit_breaker(group = "fail-keyed", key = host, fallback = cached_host)]
fn fetch(host: &str) -> Result<String, CallError<String>> {
    Ok(host.to_owned())
}

fn main() {}
