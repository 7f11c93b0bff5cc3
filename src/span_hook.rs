//! The calls `#[circuit_breaker]` makes into [`observe::span`](crate::observe::span):
//! with feature `tracing` they record the call on the current span (for the
//! groups that opt in); without it they are empty and inlined, so the
//! expansion costs nothing. Not public API.

use crate::breaker::Permit;
#[cfg(feature = "tracing")]
use crate::observe::span;
use crate::CircuitOpen;

/// Records a refusal on the current span, and gives it back (by value: the
/// refusal is not made to live at an address). Not public API.
#[inline(always)]
pub fn traced_refusal(open: CircuitOpen) -> CircuitOpen {
    #[cfg(feature = "tracing")]
    span::refused(&open, None);
    open
}

/// A body's value, to record the call's verdict and outcome before the
/// permit records it: `Traced(&value).ended(breaker, permit)` finds the
/// inherent method for a `Result` (`ok` or `error`) and [`TracedAny`]'s for
/// anything else (`ok`). The permit goes through by value, and comes back.
pub struct Traced<'a, R>(pub &'a R);

impl<T, E> Traced<'_, Result<T, E>> {
    /// Records the verdict and `ok` or `error`. Not public API.
    #[inline(always)]
    pub fn ended<'p>(&self, group: &'static str, permit: Permit<'p>) -> Permit<'p> {
        #[cfg(feature = "tracing")]
        span::admitted(group, &permit, None).ended(if self.0.is_ok() { "ok" } else { "error" });
        #[cfg(not(feature = "tracing"))]
        let _ = group;
        permit
    }
}

/// The outcome of a body whose value is not a `Result`: `ok`.
pub trait TracedAny {
    /// Records the verdict and `ok`. Not public API.
    fn ended<'p>(&self, group: &'static str, permit: Permit<'p>) -> Permit<'p>;
}

impl<R> TracedAny for Traced<'_, R> {
    #[inline(always)]
    fn ended<'p>(&self, group: &'static str, permit: Permit<'p>) -> Permit<'p> {
        #[cfg(feature = "tracing")]
        span::admitted(group, &permit, None).ended("ok");
        #[cfg(not(feature = "tracing"))]
        let _ = group;
        permit
    }
}
