//! Shared by the `attribute_*` tests: an isolated registry on a [`ManualClock`],
//! so each test file drives time itself and never meets another file's breakers.
#![allow(dead_code)]

use std::sync::LazyLock;

pub use breaker::{ManualClock, Metrics, Registry, State};

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

/// An error type that converts from `CircuitOpen`, as a fn without a fallback needs.
#[derive(Debug, PartialEq, Eq)]
pub enum AppError {
    Down,
    BadRequest,
    Open(breaker::CircuitOpen),
}

impl From<breaker::CircuitOpen> for AppError {
    fn from(open: breaker::CircuitOpen) -> Self {
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
}

impl std::ops::Deref for Isolated {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        &self.registry
    }
}
