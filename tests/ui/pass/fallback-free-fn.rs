use breakerbox::circuit_breaker;

fn stale(q: &str, limit: usize) -> Vec<String> {
    vec![format!("stale {q}"); limit.min(1)]
}

#[circuit_breaker(group = "pass-fallback", fallback = stale)]
fn search(q: &str, limit: usize) -> Vec<String> {
    vec![q.to_owned(); limit]
}

fn main() {
    assert_eq!(search("x", 2).len(), 2);
}
