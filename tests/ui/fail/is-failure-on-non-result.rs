use breakerbox::circuit_breaker;

fn never(_: &u32) -> bool {
    false
}

fn zero() -> u32 {
    0
}

#[circuit_breaker(group = "fail", fallback = zero, is_failure = never)]
fn count() -> u32 {
    1
}

fn main() {}
