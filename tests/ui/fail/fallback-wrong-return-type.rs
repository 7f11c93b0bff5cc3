use breakerbox::circuit_breaker;

fn cached(_id: u32) -> Option<String> {
    None
}

#[circuit_breaker(group = "fail", fallback = cached)]
fn lookup(id: u32) -> Option<u32> {
    Some(id)
}

fn main() {}
