use breakerbox::circuit_breaker;

#[circuit_breaker(group = "fail")]
fn count() -> usize {
    1
}

#[circuit_breaker(group = "fail")]
fn nothing() {}

fn main() {}
