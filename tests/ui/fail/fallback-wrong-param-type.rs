use breakerbox::circuit_breaker;

fn cached(id: String) -> u32 {
    id.len() as u32
}

#[circuit_breaker(group = "fail", fallback = cached)]
fn lookup(id: u32) -> u32 {
    id
}

fn main() {}
