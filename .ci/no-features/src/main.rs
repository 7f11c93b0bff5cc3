//! Guarded fns (plain, keyed, async) and a `declare_group!` built against
//! `breakerbox` with no feature, where the expansion's link-time declaration is
//! only a type check; run to see that they still guard.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use breakerbox::{circuit_breaker, CircuitOpen, Config, State};

#[derive(Debug)]
enum Error {
    Down,
    Open,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

const UPSTREAM: Config = match Config::builder().threshold(1).build() {
    Ok(config) => config,
    Err(_) => panic!("invalid config"),
};
breakerbox::declare_group!("nf-upstream", UPSTREAM);

#[circuit_breaker(group = "nf-plain", threshold = 1)]
fn plain(up: bool) -> Result<u32, Error> {
    if up {
        Ok(1)
    } else {
        Err(Error::Down)
    }
}

#[circuit_breaker(group = "nf-keyed", key = host, threshold = 1)]
fn keyed(host: &str, up: bool) -> Result<u32, Error> {
    let _ = host;
    if up {
        Ok(2)
    } else {
        Err(Error::Down)
    }
}

#[circuit_breaker(group = "nf-async", threshold = 1)]
async fn later(up: bool) -> Result<u32, Error> {
    if up {
        Ok(3)
    } else {
        Err(Error::Down)
    }
}

/// Polls a future that never waits to its end.
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("these futures never wait"),
    }
}

fn main() {
    assert_eq!(plain(true).unwrap(), 1);
    assert!(matches!(plain(false), Err(Error::Down)));
    assert!(matches!(plain(true), Err(Error::Open)), "threshold 1: open");

    assert!(matches!(keyed("a.example", false), Err(Error::Down)));
    assert!(matches!(keyed("a.example", true), Err(Error::Open)));
    assert_eq!(
        keyed("b.example", true).unwrap(),
        2,
        "another key, its own breaker"
    );

    assert!(matches!(ready(later(false)), Err(Error::Down)));
    assert!(matches!(ready(later(true)), Err(Error::Open)));

    let upstream = breakerbox::registry().breaker("nf-upstream", &UPSTREAM);
    assert_eq!(upstream.state(), State::Closed);
    println!("breakerbox with no feature: guarded fns and declare_group! ok");
}
