// Edition 2021: an unsafe fn's body is an unsafe context, also once wrapped.
#![allow(unsafe_op_in_unsafe_fn)]

use breakerbox::{circuit_breaker, CallError};

/// # Safety
/// `p` is valid.
#[circuit_breaker(group = "pass-unsafe-context")]
unsafe fn read(p: *const u8) -> Result<u8, CallError<()>> {
    Ok(*p)
}

fn main() {
    let x = 3u8;
    assert_eq!(unsafe { read(&x) }.unwrap(), 3);
}
