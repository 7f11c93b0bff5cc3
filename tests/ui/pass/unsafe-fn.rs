use breakerbox::{circuit_breaker, CallError};

/// # Safety
/// `p` is valid.
#[circuit_breaker(group = "pass-unsafe")]
unsafe fn read(p: *const u8) -> Result<u8, CallError<()>> {
    Ok(unsafe { *p })
}

fn main() {
    let x = 1u8;
    assert_eq!(unsafe { read(&x) }.unwrap(), 1);
}
