#![deny(unused_must_use)]

use breakerbox::{circuit_breaker, CallError};

fn zero() -> u64 {
    0
}

#[circuit_breaker(group = "fail", fallback = zero)]
#[must_use = "the answer matters"]
fn answer() -> u64 {
    42
}

#[circuit_breaker(group = "fail")]
fn fallible() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {
    answer();
    fallible();
}
