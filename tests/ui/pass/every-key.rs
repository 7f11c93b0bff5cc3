use breakerbox::{circuit_breaker, CircuitOpen};

#[derive(Debug)]
struct Error;

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error
    }
}

fn any_error(_: &Error) -> bool {
    true
}

fn cached(_q: u32) -> Result<u32, Error> {
    Ok(0)
}

#[circuit_breaker(
    group = "pass-every-key",
    threshold = 3,
    open_ms = 10_000,
    half_open_probes = 2,
    successes_to_close = 2,
    backoff = 1.5,
    max_open_ms = 60_000,
    probe_timeout_ms = 5_000,
    ramp_ms = 20_000,
    shadow = false,
    abandoned = "failure",
    fallback = cached,
    is_failure = any_error,
    registry = breakerbox::registry(),
    crate = ::breakerbox,
)]
fn every_key(q: u32) -> Result<u32, Error> {
    Ok(q)
}

fn main() {
    assert_eq!(every_key(1).unwrap(), 1);
    let b = breakerbox::registry().get("pass-every-key").unwrap();
    assert_eq!(b.config().threshold(), 3);
    assert_eq!(b.config().half_open_probes(), 2);
    assert_eq!(b.config().backoff(), 1.5);
    assert_eq!(b.config().ramp(), Some(std::time::Duration::from_secs(20)));
    assert_eq!(b.config().abandoned(), breakerbox::config::Abandoned::Failure);
}
