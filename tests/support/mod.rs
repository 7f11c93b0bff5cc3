//! What the facade's integration tests share: an isolated registry on a
//! [`ManualClock`] (so each test file drives time itself and never meets another
//! file's breakers), an error type, a [`Tally`] of a group's counts, a counting
//! allocator, a no-op poller and a way to trip a breaker. (The core crate's tests
//! have a module of the same name and job.) Beside it, `exposition.rs` is a strict
//! reader of the Prometheus text format, included by path by the tests that scrape.
#![allow(dead_code)]

use std::future::Future;
use std::sync::LazyLock;
use std::task::{Context, Poll, Waker};

pub use breakerbox::{metrics::Metrics, Breaker, ManualClock, Registry, State};

/// The clock of [`REG`].
pub static CLOCK: LazyLock<ManualClock> = LazyLock::new(ManualClock::new);

/// The registry every annotated fn of a test file names with `registry = &REG`.
pub static REG: LazyLock<Registry> = LazyLock::new(|| Registry::with_clock(CLOCK.clone()));

/// The metrics of `group` in [`REG`]; panics when no call created it yet.
pub fn metrics(group: &str) -> Metrics {
    REG.get(group)
        .unwrap_or_else(|| panic!("group `{group}` was never used"))
        .metrics()
}

/// The state of `group` in [`REG`].
pub fn state(group: &str) -> State {
    metrics(group).state
}

/// The counts of `group` in [`REG`].
pub fn tally(group: &str) -> Tally {
    Tally::of(&metrics(group))
}

/// What happened to a group's calls, by name, for assertions that read as what
/// they check: `Tally::calls(2).successes(1).failures(1)` (every count left out
/// is zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Admitted calls.
    pub calls: u64,
    pub successes: u64,
    pub failures: u64,
    /// Errors the classifier said are not failures.
    pub ignored: u64,
    /// Permits dropped without a verdict (a cancelled future).
    pub abandoned: u64,
    /// Claims refused by an open or full half-open circuit.
    pub rejected: u64,
}

impl Tally {
    /// `calls` admitted calls, and (until set) nothing else.
    pub fn calls(calls: u64) -> Tally {
        Tally {
            calls,
            ..Tally::default()
        }
    }
    pub fn successes(self, successes: u64) -> Tally {
        Tally { successes, ..self }
    }
    pub fn failures(self, failures: u64) -> Tally {
        Tally { failures, ..self }
    }
    pub fn ignored(self, ignored: u64) -> Tally {
        Tally { ignored, ..self }
    }
    pub fn abandoned(self, abandoned: u64) -> Tally {
        Tally { abandoned, ..self }
    }
    pub fn rejected(self, rejected: u64) -> Tally {
        Tally { rejected, ..self }
    }

    pub fn of(m: &Metrics) -> Tally {
        Tally {
            calls: m.calls,
            successes: m.successes,
            failures: m.failures,
            ignored: m.ignored,
            abandoned: m.abandoned,
            rejected: m.rejected,
        }
    }
}

/// Fails `breaker` `failures` times through `call` and checks that it opened.
pub fn trip(breaker: &Breaker, failures: u32) {
    for _ in 0..failures {
        let _ = breaker.call(|| Err::<(), _>(AppError::Down));
    }
    assert_eq!(breaker.state(), State::Open);
}

/// An error type that converts from `CircuitOpen`, as a fn without a fallback needs.
#[derive(Debug, PartialEq, Eq)]
pub enum AppError {
    Down,
    BadRequest,
    Open(breakerbox::CircuitOpen),
}

impl From<breakerbox::CircuitOpen> for AppError {
    fn from(open: breakerbox::CircuitOpen) -> Self {
        AppError::Open(open)
    }
}

impl AppError {
    pub fn is_open(&self) -> bool {
        matches!(self, AppError::Open(_))
    }
}

/// A body that waits for `gate`, when given one (so a test can hold the call in
/// flight, or drop it there), then fails or succeeds as `fail` says.
pub async fn after_gate(
    gate: Option<tokio::sync::oneshot::Receiver<()>>,
    fail: bool,
) -> Result<(), AppError> {
    if let Some(gate) = gate {
        let _ = gate.await;
    }
    if fail {
        Err(AppError::Down)
    } else {
        Ok(())
    }
}

/// A registry with its own clock, for a test that moves time without disturbing
/// the other tests of its file: `static R: LazyLock<Isolated> = LazyLock::new(Isolated::new);`
/// then `registry = &R` (it derefs to the registry).
pub struct Isolated {
    pub clock: ManualClock,
    pub registry: Registry,
}

impl Isolated {
    pub fn new() -> Self {
        let clock = ManualClock::new();
        Isolated {
            registry: Registry::with_clock(clock.clone()),
            clock,
        }
    }

    pub fn metrics(&self, group: &str) -> Metrics {
        self.registry
            .get(group)
            .unwrap_or_else(|| panic!("group `{group}` was never used"))
            .metrics()
    }

    pub fn tally(&self, group: &str) -> Tally {
        Tally::of(&self.metrics(group))
    }
}

impl std::ops::Deref for Isolated {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        &self.registry
    }
}

/// Polls `future` once with a no-op waker (no runtime, no allocation) and returns
/// its output; panics if it is not ready, as no body in these tests waits.
pub fn poll_ready<F: Future>(future: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match std::pin::pin!(future).poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the future waited; these bodies never do"),
    }
}

#[path = "../../breaker-core/tests/support/counting_alloc.rs"]
mod counting_alloc;
#[allow(unused_imports)] // each test binary uses some of them
pub use counting_alloc::{allocations_during, live_bytes, CountingAlloc};
