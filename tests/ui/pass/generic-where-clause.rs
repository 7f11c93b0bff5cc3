use std::fmt::Debug;

use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-generic")]
fn first<'a, T, const N: usize>(items: &'a [T; N]) -> Result<&'a T, CallError<()>>
where
    T: Debug + 'a,
{
    items.first().ok_or(CallError::Inner(()))
}

fn main() {
    assert_eq!(*first(&[1, 2]).unwrap(), 1);
}
