use breakerbox::circuit_breaker;

#[derive(Debug)]
pub struct Error;

impl From<breakerbox::CircuitOpen> for Error {
    fn from(_: breakerbox::CircuitOpen) -> Self {
        Error
    }
}

type Result<T> = std::result::Result<T, Error>;
#[allow(dead_code)]
struct Config;
#[allow(dead_code)]
struct Permit;
#[allow(dead_code)]
const __BREAKER_CONFIG: u8 = 0;

#[circuit_breaker(group = "pass-hygiene")]
fn f(permit: u8, breaker: u8, __guard: u8, __permit: u8, __result: u8) -> Result<u8> {
    let __open = permit + breaker + __guard + __permit + __result;
    Ok(__open + __BREAKER_CONFIG)
}

fn main() {
    assert_eq!(f(1, 1, 1, 1, 1).unwrap(), 5);
}
