//! Each peer's closest equivalent of every `breakerbox` case: a consecutive-failure
//! policy where the peer has one (failsafe, tower-resilience), a ring of the last
//! three calls at a 100% error rate where it has not (recloser), an open duration
//! of one hour, and the same protected `work` function.

use std::future::Future;
use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use recloser::{AsyncRecloser, Recloser};
use tower::Service;
use tower_resilience_circuitbreaker::{CircuitBreakerError, CircuitBreakerLayer};

use crate::{aggregate, fail, iter_ok, poll_now, work, work_async, BenchError, Clocking, FAR};

type Group<'a> = BenchmarkGroup<'a, WallTime>;

fn open_for() -> Duration {
    Duration::from_millis(FAR)
}

fn failsafe(
) -> impl failsafe::CircuitBreaker + failsafe::futures::CircuitBreaker + Clone + Send + Sync + 'static
{
    let backoff = failsafe::backoff::constant(open_for());
    let policy = failsafe::failure_policy::consecutive_failures(3, backoff);
    failsafe::Config::new().failure_policy(policy).build()
}

fn recloser() -> Recloser {
    Recloser::custom()
        .error_rate(1.0)
        .closed_len(3)
        .open_wait(open_for())
        .build()
}

/// A tower service that answers with `inner` ([`work`] or [`fail`]), behind the
/// peer's breaker. Generic, not a fn pointer: the call stays direct.
pub(crate) fn tower<F>(
    inner: F,
) -> impl Service<
    u64,
    Response = u64,
    Error = CircuitBreakerError<BenchError>,
    Future = impl Future<Output = Result<u64, CircuitBreakerError<BenchError>>> + Send,
> + Clone
       + Send
       + 'static
where
    F: Fn(u64) -> Result<u64, BenchError> + Copy + Send + 'static,
{
    let layer = CircuitBreakerLayer::builder()
        .consecutive_failures(3)
        .wait_duration_in_open(open_for())
        .build()
        .expect("valid tower config");
    layer.layer_fn(tower::service_fn(move |x: u64| async move { inner(x) }))
}

/// One tower call: readiness, then the call's future, polled to completion.
#[inline(always)]
pub(crate) async fn tower_call<S>(svc: &mut S, x: u64) -> Result<u64, S::Error>
where
    S: Service<u64, Response = u64>,
{
    std::future::poll_fn(|cx| svc.poll_ready(cx)).await?;
    svc.call(x).await
}

pub(crate) fn closed_success(g: &mut Group<'_>) {
    let fs = failsafe();
    g.bench_function("failsafe 1.3", |b| {
        iter_ok(b, || {
            failsafe::CircuitBreaker::call(&fs, || work(black_box(1)))
        })
    });
    let rc = recloser();
    g.bench_function("recloser 1.4", |b| {
        iter_ok(b, || rc.call(|| work(black_box(1))))
    });
    let mut tw = tower(work);
    g.bench_function("tower-resilience 0.14 (async only)", |b| {
        iter_ok(b, || poll_now(tower_call(&mut tw, black_box(1))))
    });
}

pub(crate) fn closed_success_async(g: &mut Group<'_>) {
    let fs = failsafe();
    g.bench_function("failsafe 1.3", |b| {
        iter_ok(b, || {
            poll_now(failsafe::futures::CircuitBreaker::call(
                &fs,
                work_async(black_box(1)),
            ))
        })
    });
    let rc = AsyncRecloser::from(recloser());
    g.bench_function("recloser 1.4", |b| {
        iter_ok(b, || poll_now(rc.call(work_async(black_box(1)))))
    });
    let mut tw = tower(work);
    g.bench_function("tower-resilience 0.14", |b| {
        iter_ok(b, || poll_now(tower_call(&mut tw, black_box(1))))
    });
}

pub(crate) fn open_rejection(g: &mut Group<'_>) {
    let fs = failsafe();
    for _ in 0..3 {
        let _ = failsafe::CircuitBreaker::call(&fs, || fail(1));
    }
    assert!(!failsafe::CircuitBreaker::is_call_permitted(&fs));
    g.bench_function("failsafe 1.3", |b| {
        iter_ok(b, || {
            failsafe::CircuitBreaker::call(&fs, || work(black_box(1)))
        })
    });
    let rc = recloser();
    for _ in 0..10 {
        let _ = rc.call(|| fail(1));
    }
    assert!(matches!(
        rc.call(|| work(1)),
        Err(recloser::Error::Rejected)
    ));
    g.bench_function("recloser 1.4", |b| {
        iter_ok(b, || rc.call(|| work(black_box(1))))
    });
    let mut tw = tower(fail);
    for _ in 0..3 {
        let _ = poll_now(tower_call(&mut tw, 1));
    }
    assert!(matches!(
        poll_now(tower_call(&mut tw, 1)),
        Err(CircuitBreakerError::OpenCircuit)
    ));
    g.bench_function("tower-resilience 0.14 (async only)", |b| {
        iter_ok(b, || poll_now(tower_call(&mut tw, black_box(1))))
    });
}

pub(crate) fn threads(g: &mut Group<'_>, n: usize, clocking: Clocking) {
    let sfx = clocking.suffix();
    let fs = failsafe();
    g.bench_function(format!("failsafe 1.3: one breaker x{n}{sfx}"), |b| {
        b.iter_custom(|iters| {
            aggregate(n, iters, clocking, |_| {
                let fs = fs.clone();
                move |k: u64| {
                    for _ in 0..k {
                        let r = failsafe::CircuitBreaker::call(&fs, || work(black_box(1)));
                        black_box(r.is_ok());
                    }
                }
            })
        })
    });
    let rc = recloser();
    g.bench_function(format!("recloser 1.4: one breaker x{n}{sfx}"), |b| {
        b.iter_custom(|iters| {
            aggregate(n, iters, clocking, |_| {
                let rc = &rc;
                move |k: u64| {
                    for _ in 0..k {
                        black_box(rc.call(|| work(black_box(1))).is_ok());
                    }
                }
            })
        })
    });
    // Under contention the peer waits on a tokio timer, so each thread drives its
    // calls on its own single-threaded runtime; waiting on a timer burns no CPU
    // time, so this peer is timed on the wall clock only.
    if clocking != Clocking::Wall {
        return;
    }
    let tw = tower(work);
    g.bench_function(format!("tower-resilience 0.14: one breaker x{n}"), |b| {
        b.iter_custom(|iters| {
            aggregate(n, iters, clocking, |_| {
                let mut tw = tw.clone();
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .build()
                    .expect("a runtime");
                move |k: u64| {
                    rt.block_on(async {
                        for _ in 0..k {
                            black_box(tower_call(&mut tw, black_box(1)).await.is_ok());
                        }
                    })
                }
            })
        })
    });
}
