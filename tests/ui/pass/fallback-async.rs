use breakerbox::circuit_breaker;

async fn from_cache(key: String) -> Option<String> {
    Some(key)
}

#[circuit_breaker(group = "pass-fallback-async", fallback = from_cache)]
async fn lookup(key: String) -> Option<String> {
    Some(key.to_uppercase())
}

fn main() {
    let _future = lookup("k".into());
}
