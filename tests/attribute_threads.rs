//! Annotated fns raced from real threads: every admitted call is recorded exactly
//! once, and a half-open circuit lets exactly `half_open_probes` bodies run.

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Barrier, LazyLock};
use std::time::Duration;

use breakerbox::{circuit_breaker, OpenReason, State};
use support::{AppError, Isolated};

static MIXED: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "threads-mixed", registry = &MIXED, threshold = 1_000_000)]
fn mixed(n: u32) -> Result<u32, AppError> {
    match n % 4 {
        0 => Err(AppError::Down),
        1 => Err(AppError::BadRequest),
        _ => Ok(n),
    }
}

fn client_side(e: &AppError) -> bool {
    !matches!(e, AppError::BadRequest)
}

#[circuit_breaker(
    group = "threads-classified",
    registry = &MIXED,
    threshold = 1_000_000,
    is_failure = client_side
)]
fn classified(n: u32) -> Result<u32, AppError> {
    mixed(n)
}

#[test]
fn racing_threads_record_every_call_exactly_once() {
    const THREADS: u32 = 8;
    const CALLS: u32 = 2_000;
    let start = Barrier::new(THREADS as usize);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let start = &start;
            s.spawn(move || {
                start.wait();
                for i in 0..CALLS {
                    let _ = mixed(t * CALLS + i);
                    let _ = classified(t * CALLS + i);
                }
            });
        }
    });
    let total = u64::from(THREADS * CALLS);
    let m = MIXED.metrics("threads-mixed");
    assert_eq!(m.calls, total * 2, "classified calls mixed once per call");
    assert_eq!(m.successes, total);
    assert_eq!(m.failures, total);
    assert_eq!(m.ignored, 0);
    let c = MIXED.metrics("threads-classified");
    assert_eq!(c.calls, total);
    assert_eq!(c.successes, total / 2);
    assert_eq!(c.failures, total / 4);
    assert_eq!(c.ignored, total / 4);
}

static PROBE: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static BODIES: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "threads-probe", registry = &PROBE, threshold = 1, open_ms = 100)]
fn probed(fail: bool, hold: Option<&Barrier>) -> Result<(), AppError> {
    BODIES.fetch_add(1, Ordering::SeqCst);
    if let Some(hold) = hold {
        hold.wait(); // the probe stays in flight until every other thread was refused
    }
    if fail {
        Err(AppError::Down)
    } else {
        Ok(())
    }
}

#[test]
fn a_half_open_circuit_runs_exactly_one_body_among_racing_threads() {
    const THREADS: usize = 16;
    let _ = probed(true, None);
    PROBE.clock.advance(Duration::from_millis(100));
    BODIES.store(0, Ordering::SeqCst);

    let start = Barrier::new(THREADS);
    let refused_all = Barrier::new(2); // the probe's body and the last refused thread
    let refused = AtomicU32::new(0);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                start.wait();
                match probed(false, Some(&refused_all)) {
                    Ok(()) => {}
                    Err(AppError::Open(open)) => {
                        assert_eq!(open.reason(), OpenReason::HalfOpenFull);
                        if refused.fetch_add(1, Ordering::SeqCst) + 1 == THREADS as u32 - 1 {
                            refused_all.wait();
                        }
                    }
                    Err(other) => panic!("unexpected {other:?}"),
                }
            });
        }
    });
    assert_eq!(BODIES.load(Ordering::SeqCst), 1, "exactly one probe ran");
    assert_eq!(refused.load(Ordering::SeqCst), THREADS as u32 - 1);
    assert_eq!(PROBE.metrics("threads-probe").state, State::Closed);
}
