use breakerbox::circuit_breaker;

fn cached(_pair: (u32, u32)) -> u32 {
    0
}

#[circuit_breaker(group = "fail", fallback = cached)]
fn sum((a, b): (u32, u32)) -> u32 {
    a + b
}

fn main() {}
