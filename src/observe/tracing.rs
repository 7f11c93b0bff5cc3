//! Transitions, conflicts and spent retry budgets as structured [`tracing`] events (feature `tracing`).
//!
//! ```
//! // With a `tracing` subscriber installed (tracing-subscriber's `fmt()`, say):
//! breakerbox::observe::tracing::subscribe(breakerbox::registry()).detach();
//! breakerbox::registry().breaker("search", &breakerbox::Config::default()).force_open();
//! // -> WARN breaker: circuit transition group="search" from="closed" to="forced_open" ...
//! ```
//!
//! Each event has target `breakerbox` and these fields:
//!
//! | field | value |
//! |---|---|
//! | `group` | the breaker's group |
//! | `key` | a keyed group's breaker only: its key ([`KeyedTransition::key`](crate::events::KeyedTransition::key): `a.example`, `7`) |
//! | `from`, `to` | [`State::as_str`](crate::State::as_str) of the states left and entered |
//! | `reason` | [`TransitionReason::as_str`]: `tripped`, `open_elapsed`, `probe_failed`, `probes_succeeded`, `lease_reclaimed`, `forced_open`, `forced_closed`, `reset`, `fleet_open`, `fleet_close` |
//! | `cause` | with `tripped` only: [`TripCause::as_str`](crate::events::TripCause::as_str): `consecutive_failures`, `failure_rate`, `slow_call_rate` or `latency_p99` |
//! | `probes` | with `lease_reclaimed` only: slots taken back |
//! | `generation` | the generation entered |
//! | `open_for_ms`, `retry_after_ms` | on entering `open` only |
//!
//! Entering `open` or `forced_open` and reclaiming a lease are `WARN`; the other
//! transitions `INFO`. A [`Conflict`](crate::resolve::Conflict) is a `WARN` event with
//! `group`, `source` and the conflict as its message. A retry its budget
//! refused ([`Event::RetryBudgetExhausted`]) is a `WARN` event with `group` and
//! `retry` (1 for a call's first retry).
//!
//! The events come from a registry subscriber, on the slow paths that change a
//! breaker's generation, after its locks are released; nothing here runs on the
//! call path. No span is opened around guarded calls: a span costs every call
//! something even with no `tracing` subscriber installed at all.

use tracing::{info, warn};

use crate::{
    events::Event, events::Subscription, events::Transition, events::TransitionReason,
    resolve::ConfigSource, Registry, State,
};

/// Emits every transition and conflict of `registry`'s breakers as a `tracing`
/// event, until the [`Subscription`] is dropped (or [`detach`](Subscription::detach)ed).
pub fn subscribe(registry: &Registry) -> Subscription {
    registry.subscribe(emit)
}

/// Emits `event` as a `tracing` event: the subscriber [`subscribe`] installs, to
/// pass to [`Breaker::subscribe`](crate::Breaker::subscribe) for a standalone
/// breaker.
pub fn emit(event: &Event) {
    match event {
        Event::Transition(t) => transition(t, None),
        Event::KeyedTransition(k) => transition(&k.transition, Some(&k.key)),
        Event::Conflict(c) => warn!(
            target: "breakerbox",
            group = c.group,
            source = match c.source {
                ConfigSource::Explicit => "explicit",
                ConfigSource::Declared => "declared",
                ConfigSource::Default => "default",
            },
            "{c}"
        ),
        Event::RetryBudgetExhausted(e) => warn!(
            target: "breakerbox",
            group = e.group,
            retry = e.retry,
            "retry budget of {} spent: retry {} not made, the call returned its own error",
            e.group,
            e.retry
        ),
        // `Event` is non-exhaustive: kinds added later are not traced here yet.
        _ => {}
    }
}

/// One transition's event; `key` for a keyed group's breaker.
fn transition(t: &Transition, key: Option<&str>) {
    let cause = match t.reason {
        TransitionReason::Tripped(cause) => Some(cause.as_str()),
        _ => None,
    };
    let probes = match t.reason {
        TransitionReason::LeaseReclaimed { probes } => Some(probes),
        _ => None,
    };
    let open_for_ms = t.open_for.map(|d| d.as_millis() as u64);
    let retry_after_ms = t.retry_after.map(|d| d.as_millis() as u64);
    let loud = matches!(t.to, State::Open | State::ForcedOpen)
        || matches!(t.reason, TransitionReason::LeaseReclaimed { .. });
    // One macro per level: a `tracing` event's level is part of its callsite.
    macro_rules! transition {
        ($level:ident) => {
            $level!(
                target: "breakerbox",
                group = t.group,
                key,
                from = t.from.as_str(),
                to = t.to.as_str(),
                reason = t.reason.as_str(),
                cause,
                probes,
                generation = t.generation,
                open_for_ms,
                retry_after_ms,
                "circuit transition"
            )
        };
    }
    if loud {
        transition!(warn);
    } else {
        transition!(info);
    }
}
