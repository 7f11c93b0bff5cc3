//! `CircuitBreakerLayer` around a ready, immediately answering tower service,
//! beside the same service bare, behind tower-resilience's layer, and with an
//! `Arc` clone per request (what an owned permit would add: the layer's future
//! holds a `Permit<'static>` of a `&'static` breaker instead).

use std::future::Future;
use std::hint::black_box;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};

use breakerbox::tower::{BreakerError, CircuitBreakerLayer, Errors};
use breakerbox::{classify::EveryError, Breaker};
use criterion::Criterion;
use tower::{Layer, Service};

use crate::fixtures::Work;
use crate::peers::{tower, tower_call};
use crate::{aggregate, iter_ok, poll_now, work, Clocking, CONFIG};

/// `inner` with a `Breaker` handle cloned into every response future and dropped
/// with it: the two atomic reference-count updates an owned permit costs.
#[derive(Clone)]
struct WithHandle<S> {
    inner: S,
    handle: Breaker,
}

struct HandleFuture<F> {
    future: F,
    _handle: Breaker,
}

impl<F: Future + Unpin> Future for HandleFuture<F> {
    type Output = F::Output;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        Pin::new(&mut self.future).poll(cx)
    }
}

impl<S: Service<u64>> Service<u64> for WithHandle<S>
where
    S::Future: Unpin,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = HandleFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    #[inline]
    fn call(&mut self, x: u64) -> Self::Future {
        HandleFuture {
            future: self.inner.call(x),
            _handle: self.handle.clone(),
        }
    }
}

/// `inner` with a response future as large as the layer's (the inner future, a
/// tag and three words, written per request) and no breaker: what a middleware
/// future of that size costs the caller that moves it, whatever it does.
#[derive(Clone)]
struct SameSize<S> {
    inner: S,
}

struct SameSizeFuture<F> {
    tag: u64,
    words: [usize; 3],
    future: F,
}

impl<F: Future + Unpin> Future for SameSizeFuture<F> {
    type Output = F::Output;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        if self.tag != 0 || self.words[1] == self.words[2] {
            std::process::abort();
        }
        Pin::new(&mut self.future).poll(cx)
    }
}

impl<S: Service<u64>> Service<u64> for SameSize<S>
where
    S::Future: Unpin,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = SameSizeFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    #[inline]
    fn call(&mut self, x: u64) -> Self::Future {
        let at = self as *const Self as usize;
        SameSizeFuture {
            tag: 0,
            words: [at, x as usize, at + 1],
            future: self.inner.call(x),
        }
    }
}

type Guarded = breakerbox::tower::CircuitBreaker<Work, Errors<EveryError>>;

/// One request behind a call boundary the compiler does not see through, the
/// same for every case (as a server's dispatcher is to its service): readiness,
/// the call, and its future polled where it was built.
///
/// `tower_call` awaited in the benchmark's closure measures the compiler's
/// inlining as much as the service: it inlines the bare service's state
/// machine into the loop and keeps the layer's out of line, where the response
/// future is built on the stack and copied into the state machine with loads
/// wider than the stores that wrote it (store-forwarding stalls, about 20 ns on
/// this box). Its figures are printed too, marked "awaited".
#[inline(never)]
fn request<S: Service<u64, Response = u64>>(svc: &mut S, x: u64) -> Result<u64, S::Error> {
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(ready) = svc.poll_ready(&mut cx) {
            ready?;
            break;
        }
    }
    let mut future = pin!(svc.call(x));
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

fn layered(group: &str) -> Guarded {
    let breaker = Breaker::new(group, CONFIG);
    CircuitBreakerLayer::for_breaker(&breaker)
        .classify(Errors(EveryError))
        .layer(Work)
}

fn with_handle(group: &str) -> WithHandle<Guarded> {
    let inner = layered(group);
    let handle = inner.breaker().clone();
    WithHandle { inner, handle }
}

pub(crate) fn layer(c: &mut Criterion) {
    let mut g = c.benchmark_group("tower_layer");
    let mut bare = Work;
    g.bench_function("bare call: ready service", |b| {
        iter_ok(b, || request(&mut bare, black_box(1)))
    });
    let mut same_size = SameSize { inner: Work };
    g.bench_function("reference: a future the layer's size, no breaker", |b| {
        iter_ok(b, || request(&mut same_size, black_box(1)))
    });
    let mut guarded = layered("bench-tower");
    g.bench_function("breakerbox: CircuitBreakerLayer", |b| {
        iter_ok(b, || request(&mut guarded, black_box(1)))
    });
    let mut owned = with_handle("bench-tower-arc");
    g.bench_function(
        "breakerbox: layer + Arc clone per request (owned permit)",
        |b| iter_ok(b, || request(&mut owned, black_box(1))),
    );
    let mut open = layered("bench-tower-open");
    open.breaker().force_open();
    let refused = request(&mut open, 1);
    assert!(matches!(refused, Err(BreakerError::Open(_))));
    g.bench_function("breakerbox: CircuitBreakerLayer, open (refused)", |b| {
        iter_ok(b, || request(&mut open, black_box(1)))
    });
    let mut peer = tower(work);
    g.bench_function("tower-resilience 0.14", |b| {
        iter_ok(b, || request(&mut peer, black_box(1)))
    });
    g.bench_function("awaited: bare call: ready service", |b| {
        iter_ok(b, || poll_now(tower_call(&mut bare, black_box(1))))
    });
    g.bench_function("awaited: breakerbox: CircuitBreakerLayer", |b| {
        iter_ok(b, || poll_now(tower_call(&mut guarded, black_box(1))))
    });
    g.finish();
}

/// Two threads, one breaker: the reference count of an owned permit is a second
/// cache line every request writes.
pub(crate) fn threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("tower_layer_threads");
    let n = 2;
    g.bench_function(format!("bare call: ready service x{n}"), |b| {
        b.iter_custom(|iters| {
            aggregate(n, iters, Clocking::Wall, |_| {
                let mut svc = Work;
                move |k: u64| {
                    for _ in 0..k {
                        black_box(request(&mut svc, black_box(1)).is_ok());
                    }
                }
            })
        })
    });
    let guarded = layered("bench-tower-threads");
    g.bench_function(
        format!("breakerbox: CircuitBreakerLayer, one breaker x{n}"),
        |b| {
            b.iter_custom(|iters| {
                aggregate(n, iters, Clocking::Wall, |_| {
                    let mut svc = guarded.clone();
                    move |k: u64| {
                        for _ in 0..k {
                            black_box(request(&mut svc, black_box(1)).is_ok());
                        }
                    }
                })
            })
        },
    );
    let owned = with_handle("bench-tower-threads-arc");
    g.bench_function(
        format!("breakerbox: layer + Arc clone per request, one breaker x{n}"),
        |b| {
            b.iter_custom(|iters| {
                aggregate(n, iters, Clocking::Wall, |_| {
                    let mut svc = owned.clone();
                    move |k: u64| {
                        for _ in 0..k {
                            black_box(request(&mut svc, black_box(1)).is_ok());
                        }
                    }
                })
            })
        },
    );
    g.finish();
}
