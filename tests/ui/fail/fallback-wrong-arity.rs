use breakerbox::circuit_breaker;

fn cached(q: &str) -> usize {
    q.len()
}

#[circuit_breaker(group = "fail", fallback = cached)]
fn search(q: &str, limit: usize) -> usize {
    q.len() + limit
}

fn main() {}
