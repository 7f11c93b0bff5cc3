//! The tower layer holds its breaker as tower's `ConcurrencyLimitLayer` holds
//! its semaphore: a shared handle in the layer, its services and each call in
//! flight. When the last of them and the breaker's own handle are dropped, the
//! breaker is freed; building layers leaks nothing. One test in this binary, so
//! the process-wide count of live bytes sees no other test's allocations.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::task::{Context, Poll};

use breakerbox::tower::{CircuitBreakerLayer, Cloned, Errors};
use breakerbox::{Breaker, Config, RetryPolicy};
use tower::{Layer, Service};

mod support;

use support::{live_bytes, poll_ready, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

#[derive(Clone, Copy)]
struct Echo;

impl Service<u32> for Echo {
    type Response = u32;
    type Error = Infallible;
    type Future = Ready<Result<u32, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, x: u32) -> Self::Future {
        ready(Ok(x))
    }
}

/// A breaker of its own, a layer and a retrying layer for it, a service of
/// each and one request through each; everything dropped at the end.
fn layers_for_a_new_breaker() {
    let breaker = Breaker::new("tower-holds", Config::default());
    let layer = CircuitBreakerLayer::for_breaker(&breaker).classify(Errors(|_: &Infallible| true));
    let mut service = layer.layer(Echo);
    assert_eq!(poll_ready(service.call(7)).unwrap(), 7);
    let retrying = layer.clone().retry(RetryPolicy::new(1)).replay(Cloned);
    let mut service = retrying.layer(Echo);
    assert_eq!(poll_ready(service.call(8)).unwrap(), 8);
    assert_eq!(breaker.metrics().successes, 2);
}

#[test]
fn dropping_layers_and_their_breaker_frees_the_breaker() {
    // The first round makes what lives for the process (interned names, the
    // thread's counter slot).
    layers_for_a_new_breaker();
    let before = live_bytes();
    for _ in 0..100 {
        layers_for_a_new_breaker();
    }
    let grown = live_bytes() - before;
    assert!(
        grown < 1_024,
        "{grown} bytes still live after 100 breakers and their layers were dropped"
    );
}
