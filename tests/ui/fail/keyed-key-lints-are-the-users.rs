// The key expression is the user's code: the lints the expansion allows on its
// own statements do not cover it, so the crate's `deny` still applies.
#![deny(unreachable_code)]

use breakerbox::{circuit_breaker, CircuitOpen};

#[derive(Debug)]
struct Error;

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error
    }
}

#[circuit_breaker(group = "lints-key", key = (panic!("no key"), host).1, threshold = 3)]
fn fetch(host: u64) -> Result<u64, Error> {
    Ok(host)
}

fn main() {
    let _ = fetch(1);
}
