use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-patterns")]
fn sum((a, b): (u32, u32), _: u8, [c]: [u32; 1]) -> Result<u32, CallError<()>> {
    Ok(a + b + c)
}

fn main() {
    assert_eq!(sum((1, 2), 0, [3]).unwrap(), 6);
}
