use breakerbox::circuit_breaker;

fn cached(id: u32) -> u32 {
    id
}

#[circuit_breaker(group = "fail", fallback = cached, fallback_on = "failure")]
fn lookup(id: u32) -> u32 {
    id
}

fn main() {}
