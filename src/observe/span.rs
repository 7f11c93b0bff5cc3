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
//! // -> request{breaker.group="search" breaker.verdict="admitted" breaker.outcome="success"}
//! ```
//!
//! | field | value |
//! |---|---|
//! | `breaker.group` | the breaker's group |
//! | `breaker.key` | a keyed group's key, where an integration records it ([`record_key`]) |
//! | `breaker.verdict` | [`Verdict::as_str`]: `admitted`, `probe`, `shadow_refused` (admitted by shadow mode in place of a refusal), `refused`, `held` (a hold refused it), `throttled` (the adaptive throttle refused it) |
//! | `breaker.outcome` | `refused` for a call that did not run; for an admitted one, how its permit recorded it: `success`, `failure`, `ignored` (an error the classifier ignores, a server's wait), `abandoned` (dropped without a verdict: a cancelled future, a caller that gave up) |
//! | `breaker.reason` | a refused call's [`OpenReason::as_str`](crate::OpenReason::as_str): `open`, `half_open_full`, `forced_open`, `fleet_open`, `bulkhead_full`, `ramping`, `throttled`, `held`, `group_open` (the keyed group is open as one) |
//!
//! The breaker records them itself, for every way of calling through it:
//! `#[circuit_breaker]`, [`Breaker::call`](crate::Breaker::call), a permit,
//! the tower layer, the reqwest middleware, the tonic layer, or a layer
//! written outside this crate on the public API. The verdict is recorded at
//! the claim, on the span current there; the outcome when the permit
//! records, on the span current then (the same span for a sync call or a
//! future polled inside one span; a future dropped half-way records
//! `abandoned` on the span current where it is dropped, which an
//! [`Instrumented`](tracing::instrument::Instrumented) future enters for its drop).
//!
//! With the `otel` feature the same keys are also set as OpenTelemetry
//! attributes (through `tracing-opentelemetry` 0.32) on a span that did not
//! declare them, so a trace shows them without any declaration.
//!
//! Off by default, and free when off: a recorded group's breakers carry a
//! flag in the word every claim loads already, so their claims and verdicts
//! leave the fast paths and record on the cold ones, while the breakers of
//! every other group take the same instructions as without the feature.
//! Recording runs outside the breaker's locks. Opting in or out reaches the
//! breakers made before as well as after: with the feature, each breaker is
//! listed by its address while it lives (a breaker made or dropped takes that
//! list's lock once).

use breaker_core::__private::trace::{self as hook, Noted};
use tracing::Span;

use crate::{Breaker, OpenReason};

/// Records the calls of every group (`true`) or only of the groups named by
/// [`record_calls_of`] (`false`, the default).
pub fn record_calls(on: bool) {
    hook::install(noted);
    hook::record_calls(on);
}

/// Records the calls of `group` (`true`), or stops (`false`).
pub fn record_calls_of(group: &'static str, on: bool) {
    hook::install(noted);
    hook::record_calls_of(group, on);
}

/// Whether the calls of `group` are recorded.
pub fn records(group: &str) -> bool {
    hook::records(group)
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
    /// Refused by a hold (the server asked to wait): the call did not run.
    Held,
    /// Refused by the adaptive throttle: the call did not run.
    Throttled,
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
            Verdict::Held => "held",
            Verdict::Throttled => "throttled",
            Verdict::ShadowRefused => "shadow_refused",
        }
    }

    /// The verdict of a claim refused for `reason`.
    const fn of_refusal(reason: OpenReason) -> Verdict {
        match reason {
            OpenReason::Held(_) => Verdict::Held,
            OpenReason::Throttled => Verdict::Throttled,
            _ => Verdict::Refused,
        }
    }
}

/// Records `key` as `breaker.key` on the current span if the calls of
/// `breaker` are recorded: for an integration that knows the key of a keyed
/// group's call (a host, an authority, a method). One load of the breaker's
/// word while they are not.
#[inline]
pub fn record_key(breaker: &Breaker, key: &str) {
    if hook::is_traced(breaker) {
        set_key(key);
    }
}

#[cold]
#[inline(never)]
fn set_key(key: &str) {
    set(&Span::current(), "breaker.key", key);
}

/// The hook the breakers of a recorded group tell, on the thread of the call.
fn noted(group: &'static str, noted: Noted) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    match noted {
        Noted::Admitted { probe, shadow } => {
            let verdict = match (probe, shadow) {
                (true, _) => Verdict::Probe,
                (false, true) => Verdict::ShadowRefused,
                (false, false) => Verdict::Admitted,
            };
            set(&span, "breaker.group", group);
            set(&span, "breaker.verdict", verdict.as_str());
        }
        Noted::Refused(reason) => {
            set(&span, "breaker.group", group);
            set(
                &span,
                "breaker.verdict",
                Verdict::of_refusal(reason).as_str(),
            );
            set(&span, "breaker.outcome", "refused");
            set(&span, "breaker.reason", reason.as_str());
        }
        Noted::Ended(ended) => set(&span, "breaker.outcome", ended.as_str()),
    }
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
