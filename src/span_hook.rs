//! The calls `#[circuit_breaker]` makes into [`observe::span`](crate::observe::span):
//! with feature `tracing` they record the call on the current span (for the
//! groups that opt in) past one relaxed load; without it they are empty and
//! inlined, so the expansion costs nothing. Not public API.

use crate::breaker::Permit;
#[cfg(feature = "tracing")]
use crate::observe::span;
use crate::CircuitOpen;

/// Records a refusal on the current span, and gives it back (by value: the
/// refusal is not made to live at an address). Not public API.
#[inline(always)]
pub fn traced_refusal(open: CircuitOpen) -> CircuitOpen {
    #[cfg(feature = "tracing")]
    if span::any_recorded() {
        refused(&open);
    }
    open
}

/// A body's value, to record the call's verdict and outcome: after the
/// permit recorded, `Traced(&value).after(group, probe)` with the permit's
/// probe bit; before, `Traced(&value).ended(group, permit)`, where the
/// permit goes through by value and comes back. Each finds the inherent
/// method for a `Result` (`ok` or `error`) and [`TracedAny`]'s for anything
/// else (`ok`). Neither gives the permit an address: one kept in memory for
/// the recording path would cost every call, recorded or not.
pub struct Traced<'a, R>(pub &'a R);

impl<T, E> Traced<'_, Result<T, E>> {
    /// Records the verdict and `ok` or `error`, after the permit recorded. Not public API.
    #[inline(always)]
    pub fn after(&self, group: &'static str, probe: bool) {
        #[cfg(feature = "tracing")]
        if span::any_recorded() {
            ended(group, probe, outcome(self.0));
        }
        #[cfg(not(feature = "tracing"))]
        let _ = (group, probe);
    }

    /// Records the verdict and `ok` or `error`. Not public API.
    #[inline(always)]
    pub fn ended<'p>(&self, group: &'static str, permit: Permit<'p>) -> Permit<'p> {
        #[cfg(feature = "tracing")]
        if span::any_recorded() {
            ended(group, permit.is_probe(), outcome(self.0));
        }
        #[cfg(not(feature = "tracing"))]
        let _ = group;
        permit
    }
}

/// `ok` or `error`: what a body's `Result` says.
#[cfg(feature = "tracing")]
#[inline(always)]
fn outcome<T, E>(result: &Result<T, E>) -> &'static str {
    if result.is_ok() {
        "ok"
    } else {
        "error"
    }
}

/// The outcome of a body whose value is not a `Result`: `ok`.
pub trait TracedAny {
    /// Records the verdict and `ok`, after the permit recorded. Not public API.
    fn after(&self, group: &'static str, probe: bool);

    /// Records the verdict and `ok`. Not public API.
    fn ended<'p>(&self, group: &'static str, permit: Permit<'p>) -> Permit<'p>;
}

impl<R> TracedAny for Traced<'_, R> {
    #[inline(always)]
    fn after(&self, group: &'static str, probe: bool) {
        #[cfg(feature = "tracing")]
        if span::any_recorded() {
            ended(group, probe, "ok");
        }
        #[cfg(not(feature = "tracing"))]
        let _ = (group, probe);
    }

    #[inline(always)]
    fn ended<'p>(&self, group: &'static str, permit: Permit<'p>) -> Permit<'p> {
        #[cfg(feature = "tracing")]
        if span::any_recorded() {
            ended(group, permit.is_probe(), "ok");
        }
        #[cfg(not(feature = "tracing"))]
        let _ = group;
        permit
    }
}

/// The refusal's record, past the one load that tells something is recorded.
#[cfg(feature = "tracing")]
#[cold]
#[inline(never)]
fn refused(open: &CircuitOpen) {
    span::refused(open, None);
}

/// The admitted call's record, past that same load.
#[cfg(feature = "tracing")]
#[cold]
#[inline(never)]
fn ended(group: &'static str, probe: bool, outcome: &'static str) {
    let verdict = match probe {
        true => span::Verdict::Probe,
        false => span::Verdict::Admitted,
    };
    span::admitted_as(group, verdict, None).ended(outcome);
}
