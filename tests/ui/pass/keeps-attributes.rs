#![deny(missing_docs)]
//! Docs, visibility, `#[must_use]`, `#[cfg]`, inner attributes and other
//! attributes stay as written.

use breakerbox::{circuit_breaker, CallError};

/// Documented, public, must-use, inline.
#[circuit_breaker(group = "pass-attrs")]
#[must_use = "the answer matters"]
#[inline]
pub fn answer() -> Result<u32, CallError<()>> {
    #![allow(clippy::unnecessary_wraps)]
    Ok(42)
}

/// Never compiled: the cfg is kept, so this body with a type error is removed.
#[circuit_breaker(group = "pass-attrs-cfg")]
#[cfg(any())]
pub fn gone() -> Result<u32, CallError<()>> {
    Ok("not a number")
}

#[circuit_breaker(group = "pass-attrs-crate-vis")]
pub(crate) fn crate_visible() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {
    assert_eq!(answer().unwrap(), 42);
    crate_visible().unwrap();
}
