use breakerbox::circuit_breaker;

fn cached(id: u32) -> Option<u32> {
    Some(id)
}

#[circuit_breaker(group = "fail", fallback = cached)]
async fn lookup(id: u32) -> Option<u32> {
    Some(id)
}

fn main() {}
