use breakerbox::circuit_breaker;

async fn cached(id: u32) -> Option<u32> {
    Some(id)
}

#[circuit_breaker(group = "fail", fallback = cached)]
fn lookup(id: u32) -> Option<u32> {
    Some(id)
}

fn main() {}
