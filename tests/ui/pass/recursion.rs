use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-recursion", threshold = 50)]
fn depth(n: u32) -> Result<u32, CallError<()>> {
    if n == 0 {
        Ok(0)
    } else {
        Ok(1 + depth(n - 1)?)
    }
}

fn main() {
    assert_eq!(depth(10).unwrap(), 10);
}
