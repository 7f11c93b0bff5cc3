//! Each guarded call's verdict and outcome, recorded on the current `tracing`
//! span (feature `tracing`), for the groups that opt in.
//!
//! ```
//! use breakerbox::observe::span;
//!
//! span::record_calls_of("search", true); // or `span::record_calls(true)` for every group
//!
//! #[breakerbox::circuit_breaker(group = "search")]
//! fn search(q: &str) -> Result<u32, breakerbox::CircuitOpen> {
//!     Ok(q.len() as u32)
//! }
//!
//! // The span declares the fields it keeps (`tracing` keeps no others):
//! let request = tracing::info_span!(
//!     "request",
//!     breaker.group = tracing::field::Empty,
//!     breaker.verdict = tracing::field::Empty,
//!     breaker.outcome = tracing::field::Empty,
//!     breaker.reason = tracing::field::Empty,
//! );
//! request.in_scope(|| search("rust")).unwrap();
//! // -> request{breaker.group="search" breaker.verdict="admitted" breaker.outcome="ok"}
//! ```
//!
//! | field | value |
//! |---|---|
//! | `breaker.group` | the breaker's group |
//! | `breaker.key` | a keyed group's key, where the integration knows it |
//! | `breaker.verdict` | [`Verdict::as_str`]: `admitted`, `probe`, `refused`, `shadow_refused` |
//! | `breaker.outcome` | `refused` for a refused call; for an admitted one, what the call gave: `ok` or `error` (the attribute: the fn's `Result`), `success`, `failure` or `ignored` (an integration's classified response) |
//! | `breaker.reason` | a refused call's [`OpenReason::as_str`](crate::OpenReason::as_str): `open`, `half_open_full`, `forced_open`, `fleet_open`, `bulkhead_full`, `ramping`, `throttled` |
//!
//! `#[circuit_breaker]` records through [`admitted`], [`refused`] and
//! [`Call::ended`] (so its shadow mode's admissions read `admitted`: telling
//! them apart needs the breaker, which costs the attribute's call path an
//! instruction); a layer or middleware records the same way around its own
//! claim, with [`admitted_by`] (or [`admitted_owned`]) and the key it knows
//! (a host, a tenant). The tower layer and the reqwest middleware record
//! each call so: its verdict at the claim, or its refusal, and `success`,
//! `failure` or `ignored` when its outcome is recorded (a reqwest response
//! whose body is read later: when its head comes).
//!
//! With the `otel` feature the same keys are also set as OpenTelemetry
//! attributes (through `tracing-opentelemetry` 0.32) on a span that did not
//! declare them, so a trace shows them without any declaration.
//!
//! Off by default. Without the `tracing` feature the hooks compile to
//! nothing. With it, an attribute's call checks one relaxed load before a
//! cold recording path (and takes a read lock of the opted-in list while only
//! some groups opted in). The check comes after the permit's record and
//! reads only what the call keeps anyway (the permit's probe bit, the value
//! where the fn returns it), so while no group opted in that load and its
//! branch are all the attribute's call pays; `Breaker::call` and permits pay
//! nothing. Recording runs after the claim, outside the breaker's locks.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::RwLock;

use tracing::Span;

use crate::breaker::{OwnedPermit, Permit};
use crate::{Breaker, CircuitOpen, OpenReason, State};

/// Whose calls are recorded: [`NONE`], [`SOME`] (the groups in [`GROUPS`])
/// or [`ALL`]. One load tells a call of a group that did not opt in.
static RECORDED: AtomicU8 = AtomicU8::new(NONE);
const NONE: u8 = 0;
const SOME: u8 = 1;
const ALL: u8 = 2;
static GROUPS: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());

/// Records the calls of every group (`true`) or only of the groups named by
/// [`record_calls_of`] (`false`, the default).
pub fn record_calls(on: bool) {
    let groups = GROUPS.read().unwrap_or_else(|e| e.into_inner());
    RECORDED.store(whose(on, &groups), Relaxed);
}

/// Records the calls of `group` (`true`), or stops (`false`).
pub fn record_calls_of(group: &'static str, on: bool) {
    let mut groups = GROUPS.write().unwrap_or_else(|e| e.into_inner());
    groups.retain(|g| *g != group);
    if on {
        groups.push(group);
    }
    RECORDED.store(whose(RECORDED.load(Relaxed) == ALL, &groups), Relaxed);
}

fn whose(all: bool, groups: &[&'static str]) -> u8 {
    match (all, groups.is_empty()) {
        (true, _) => ALL,
        (false, false) => SOME,
        (false, true) => NONE,
    }
}

/// Whether any group's calls are recorded: one relaxed load.
#[inline(always)]
pub(crate) fn any_recorded() -> bool {
    RECORDED.load(Relaxed) != NONE
}

/// Whether the calls of `group` are recorded.
#[inline]
pub fn records(group: &str) -> bool {
    match RECORDED.load(Relaxed) {
        NONE => false,
        ALL => true,
        _ => GROUPS
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&group),
    }
}

/// What a claim decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Admitted by a closed (or forced closed, or ramping) breaker.
    Admitted,
    /// Admitted as a half-open probe.
    Probe,
    /// Refused: the call did not run.
    Refused,
    /// Admitted by shadow mode, which the breaker would have refused.
    ShadowRefused,
}

impl Verdict {
    /// The value of `breaker.verdict`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Admitted => "admitted",
            Verdict::Probe => "probe",
            Verdict::Refused => "refused",
            Verdict::ShadowRefused => "shadow_refused",
        }
    }
}

/// An admitted call being recorded (or not): [`ended`](Self::ended) records
/// its outcome. A call dropped without one (cancelled, timed out) keeps its
/// verdict and no outcome. (The attribute records both when the body has
/// returned: a call it drops records nothing.)
#[derive(Debug)]
#[must_use = "a call's outcome is recorded by `ended`"]
pub struct Call {
    recorded: bool,
}

impl Call {
    /// A call that records nothing.
    pub const fn off() -> Self {
        Call { recorded: false }
    }

    /// Records `outcome` (`ok`, `error`, `success`, `failure`, `ignored`) as
    /// `breaker.outcome` on the current span, which is the span the call was
    /// admitted in when it ends where it started (a sync call, or a future
    /// polled inside one span).
    #[inline(always)]
    pub fn ended(self, outcome: &'static str) {
        if self.recorded {
            set_outcome(outcome);
        }
    }
}

/// Records a claim of `group` that `permit` admitted on the current span,
/// with `key` and its verdict (`admitted` or `probe`), if the group is
/// recorded. [`admitted_by`] tells a shadow mode's admission apart too.
#[inline(always)]
pub fn admitted(group: &'static str, permit: &Permit<'_>, key: Option<&str>) -> Call {
    if RECORDED.load(Relaxed) == NONE {
        return Call::off();
    }
    record_admission(group, permit, None, key)
}

/// As [`admitted`], for a claim of `breaker`: a claim its shadow mode
/// admitted while the breaker would have refused it is `shadow_refused`.
#[inline(always)]
pub fn admitted_by(breaker: &Breaker, permit: &Permit<'_>, key: Option<&str>) -> Call {
    if RECORDED.load(Relaxed) == NONE {
        return Call::off();
    }
    record_admission(breaker.group(), permit, Some(breaker), key)
}

/// Records `outcome` as `breaker.outcome` on the current span if `group` is
/// recorded: for a layer that keeps no [`Call`] from its claim to its end.
#[inline(always)]
pub fn ended_in(group: &str, outcome: &'static str) {
    if RECORDED.load(Relaxed) != NONE {
        record_outcome(group, outcome);
    }
}

/// [`ended_in`], past the one load that tells nothing is recorded.
#[cold]
#[inline(never)]
fn record_outcome(group: &str, outcome: &'static str) {
    if records(group) {
        set_outcome(outcome);
    }
}

/// As [`admitted_by`], for an [`OwnedPermit`], which knows its breaker and
/// whether shadow mode admitted it: what a layer or middleware calls.
#[inline(always)]
pub fn admitted_owned(permit: &OwnedPermit, key: Option<&str>) -> Call {
    if RECORDED.load(Relaxed) == NONE {
        return Call::off();
    }
    record_owned(permit, key)
}

/// [`admitted_owned`], past the one load that tells nothing is recorded.
#[cold]
#[inline(never)]
fn record_owned(permit: &OwnedPermit, key: Option<&str>) -> Call {
    let verdict = if permit.is_probe() {
        Verdict::Probe
    } else if permit.is_shadow_call() {
        Verdict::ShadowRefused
    } else {
        Verdict::Admitted
    };
    admitted_as(permit.breaker().group(), verdict, key)
}

fn verdict(permit: &Permit<'_>, breaker: Option<&Breaker>) -> Verdict {
    let refusing = |b: &Breaker| !matches!(b.state(), State::Closed | State::ForcedClosed);
    if permit.is_probe() {
        Verdict::Probe
    } else if breaker.is_some_and(|b| b.is_shadow() && refusing(b)) {
        Verdict::ShadowRefused
    } else {
        Verdict::Admitted
    }
}

/// [`admitted`], past the one load that tells nothing is recorded.
#[cold]
#[inline(never)]
fn record_admission(
    group: &'static str,
    permit: &Permit<'_>,
    breaker: Option<&Breaker>,
    key: Option<&str>,
) -> Call {
    admitted_as(group, verdict(permit, breaker), key)
}

/// Records an admitted claim of `group` with its `verdict` on the current
/// span, if the group is recorded: for a caller that knows the verdict
/// without a permit at hand.
#[cold]
#[inline(never)]
pub(crate) fn admitted_as(group: &'static str, verdict: Verdict, key: Option<&str>) -> Call {
    if !records(group) {
        return Call::off();
    }
    let span = Span::current();
    set(&span, "breaker.group", group);
    if let Some(key) = key {
        set(&span, "breaker.key", key);
    }
    set(&span, "breaker.verdict", verdict.as_str());
    Call { recorded: true }
}

/// Records a refused claim on the current span: its group, `key`, the
/// verdict and outcome `refused`, and the reason, if its group is recorded.
#[inline(always)]
pub fn refused(open: &CircuitOpen, key: Option<&str>) {
    if RECORDED.load(Relaxed) != NONE {
        record_refusal(open, key);
    }
}

/// [`refused`], past the one load that tells nothing is recorded.
#[cold]
#[inline(never)]
fn record_refusal(open: &CircuitOpen, key: Option<&str>) {
    refused_as(open.group(), open.reason(), key);
}

/// Records a refused claim of `group` for `reason` on the current span, if
/// the group is recorded.
#[cold]
#[inline(never)]
pub(crate) fn refused_as(group: &'static str, reason: OpenReason, key: Option<&str>) {
    if !records(group) {
        return;
    }
    let span = Span::current();
    set(&span, "breaker.group", group);
    if let Some(key) = key {
        set(&span, "breaker.key", key);
    }
    set(&span, "breaker.verdict", Verdict::Refused.as_str());
    set(&span, "breaker.outcome", "refused");
    set(&span, "breaker.reason", reason.as_str());
}

#[cold]
#[inline(never)]
fn set_outcome(outcome: &'static str) {
    set(&Span::current(), "breaker.outcome", outcome);
}

/// Records `value` as the field `name` of `span` if it declared one; with the
/// `otel` feature, as an OpenTelemetry attribute of the span otherwise.
fn set(span: &Span, name: &'static str, value: &str) {
    if span.field(name).is_some() {
        span.record(name, value);
        return;
    }
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        span.set_attribute(name, value.to_owned());
    }
}
