//! The calls `#[circuit_breaker]` makes into [`observe::span`](crate::observe::span)
//! around a claim: with feature `tracing` they record the call on the current
//! span (for the groups that opt in); without it they are empty and
//! `TracedCall` has no size, so the expansion costs nothing. Not public API.

use crate::breaker::Permit;
#[cfg(feature = "tracing")]
use crate::observe::span;
use crate::{Breaker, CircuitOpen};

/// An admitted call being recorded (or not).
#[cfg(feature = "tracing")]
pub type TracedCall = span::Call;

/// Nothing to record without feature `tracing`.
#[cfg(not(feature = "tracing"))]
pub struct TracedCall;

/// Records an admission on the current span. Not public API.
#[inline(always)]
pub fn traced_admission(breaker: &Breaker, permit: &Permit<'_>) -> TracedCall {
    #[cfg(feature = "tracing")]
    return span::admitted(breaker, permit, None);
    #[cfg(not(feature = "tracing"))]
    {
        let _ = (breaker, permit);
        TracedCall
    }
}

/// Records a refusal on the current span. Not public API.
#[inline(always)]
pub fn traced_refusal(open: &CircuitOpen) {
    #[cfg(feature = "tracing")]
    span::refused(open, None);
    #[cfg(not(feature = "tracing"))]
    let _ = open;
}

/// A body's value, to record its outcome: `Traced(&value).ended(call)` finds
/// the inherent method for a `Result` (`ok` or `error`) and [`TracedAny`]'s
/// for anything else (`ok`).
pub struct Traced<'a, R>(pub &'a R);

impl<T, E> Traced<'_, Result<T, E>> {
    /// Records `ok` or `error`. Not public API.
    #[inline(always)]
    pub fn ended(&self, call: TracedCall) {
        #[cfg(feature = "tracing")]
        call.ended(if self.0.is_ok() { "ok" } else { "error" });
        #[cfg(not(feature = "tracing"))]
        let _ = call;
    }
}

/// The outcome of a body whose value is not a `Result`: `ok`.
pub trait TracedAny {
    /// Records `ok`. Not public API.
    fn ended(&self, call: TracedCall);
}

impl<R> TracedAny for Traced<'_, R> {
    #[inline(always)]
    fn ended(&self, call: TracedCall) {
        #[cfg(feature = "tracing")]
        call.ended("ok");
        #[cfg(not(feature = "tracing"))]
        let _ = call;
    }
}
