//! What a keyed group reports: [`KeyedMetrics`], its keys' counts summed with
//! those of the keys it evicted (`Folded`).

use crate::events::TransitionCounts;
use crate::hold::HoldCounts;
use crate::metrics::CallDurations;
use crate::metrics::Metrics;
use crate::state::State;

/// Every counter of a breaker's [`Metrics`], summed over breakers: the keys
/// held at a reading, and the evicted ones, kept so the group's sums never go
/// down.
#[derive(Clone, Copy, Default)]
pub(super) struct Folded {
    calls: u64,
    successes: u64,
    failures: u64,
    ignored: u64,
    rejected: u64,
    abandoned: u64,
    stale: u64,
    probes_succeeded: u64,
    probes_failed: u64,
    probes_reclaimed: u64,
    times_opened: u64,
    timeouts: u64,
    bulkhead_rejected: u64,
    latency_trips: u64,
    ramp_refused: u64,
    shadow_refused: u64,
    throttled: u64,
    retries: u64,
    retries_budget_exhausted: u64,
    transitions: TransitionCounts,
    holds: HoldCounts,
}

impl Folded {
    /// The successes summed.
    pub(super) fn successes(&self) -> u64 {
        self.successes
    }

    /// Adds every counter of `m`, saturating.
    ///
    /// `m` is taken apart field by field, with no `..`: a field added to
    /// [`Metrics`] does not compile here until it is summed (a counter) or
    /// named as a reading of the moment (a gauge), and each sum is read into
    /// [`KeyedMetrics`] the same way.
    pub(super) fn add(&mut self, m: &Metrics) {
        let Metrics {
            // Readings of the moment, not counts: the group reports its keys
            // by state instead, and the rest has no meaning summed.
            group: _,
            state: _,
            generation: _,
            probes_in_flight: _,
            consecutive_failures: _,
            window: _,
            retry_after: _,
            open_for: _,
            bulkhead_in_flight: _,
            latency_p99: _,
            ramp: _,
            shadow: _,
            throttle: _,
            // The group's own, read once by `metrics`.
            call_durations: _,
            // Counted by state: `KeyedMetrics::held`.
            held: _,
            holds,
            calls,
            successes,
            failures,
            ignored,
            rejected,
            abandoned,
            stale,
            probes_succeeded,
            probes_failed,
            probes_reclaimed,
            times_opened,
            timeouts,
            bulkhead_rejected,
            latency_trips,
            ramp_refused,
            shadow_refused,
            throttled,
            retries,
            retries_budget_exhausted,
            transitions,
        } = m;
        for (sum, n) in [
            (&mut self.calls, calls),
            (&mut self.successes, successes),
            (&mut self.failures, failures),
            (&mut self.ignored, ignored),
            (&mut self.rejected, rejected),
            (&mut self.abandoned, abandoned),
            (&mut self.stale, stale),
            (&mut self.probes_succeeded, probes_succeeded),
            (&mut self.probes_failed, probes_failed),
            (&mut self.probes_reclaimed, probes_reclaimed),
            (&mut self.times_opened, times_opened),
            (&mut self.timeouts, timeouts),
            (&mut self.bulkhead_rejected, bulkhead_rejected),
            (&mut self.latency_trips, latency_trips),
            (&mut self.ramp_refused, ramp_refused),
            (&mut self.shadow_refused, shadow_refused),
            (&mut self.throttled, throttled),
            (&mut self.retries, retries),
            (&mut self.retries_budget_exhausted, retries_budget_exhausted),
        ] {
            *sum = sum.saturating_add(*n);
        }
        self.transitions.add(transitions);
        self.holds.add(holds);
    }
}

/// What a keyed group did: its keys' counts summed (evicted keys included) and
/// how many keys it holds in each state. Taking it changes nothing.
///
/// Every counter of a key's [`Metrics`] has its sum here, under the same name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyedMetrics {
    /// The group.
    pub group: &'static str,
    /// Keys held now.
    pub keys: usize,
    /// The most idle keys the group holds (see [`KeyedGroup`](crate::KeyedGroup)).
    pub key_capacity: usize,
    /// Keys held now that are open (forced open included).
    pub open: usize,
    /// Keys held now that are half-open.
    pub half_open: usize,
    /// Keys whose calls a hold refuses now (the server asked to wait), in
    /// any state.
    pub held: usize,
    /// Breakers evicted so far.
    pub evictions: u64,
    /// As [`Metrics::calls`], summed over every key the group ever held.
    pub calls: u64,
    /// As [`Metrics::successes`], summed likewise.
    pub successes: u64,
    /// As [`Metrics::failures`], summed likewise.
    pub failures: u64,
    /// As [`Metrics::ignored`], summed likewise.
    pub ignored: u64,
    /// As [`Metrics::rejected`], summed likewise (bulkhead refusals included).
    pub rejected: u64,
    /// As [`Metrics::abandoned`], summed likewise.
    pub abandoned: u64,
    /// As [`Metrics::stale`], summed likewise.
    pub stale: u64,
    /// As [`Metrics::probes_succeeded`], summed likewise.
    pub probes_succeeded: u64,
    /// As [`Metrics::probes_failed`], summed likewise.
    pub probes_failed: u64,
    /// As [`Metrics::probes_reclaimed`], summed likewise.
    pub probes_reclaimed: u64,
    /// As [`Metrics::times_opened`], summed likewise.
    pub times_opened: u64,
    /// As [`Metrics::timeouts`], summed likewise (each also in `failures`).
    pub timeouts: u64,
    /// As [`Metrics::bulkhead_rejected`], summed likewise (each also in
    /// `rejected`).
    pub bulkhead_rejected: u64,
    /// As [`Metrics::latency_trips`], summed likewise (each also in
    /// `times_opened`).
    pub latency_trips: u64,
    /// As [`Metrics::ramp_refused`], summed likewise (each also in `rejected`).
    pub ramp_refused: u64,
    /// As [`Metrics::shadow_refused`], summed likewise (none in `rejected`).
    pub shadow_refused: u64,
    /// As [`Metrics::throttled`], summed likewise (each also in `rejected`):
    /// every key throttles on its own.
    pub throttled: u64,
    /// As [`Metrics::retries`], summed likewise.
    pub retries: u64,
    /// As [`Metrics::retries_budget_exhausted`], summed likewise (the keys
    /// of one `Retry` share its budget).
    pub retries_budget_exhausted: u64,
    /// As [`Metrics::transitions`], summed likewise, pair by pair.
    pub transitions: TransitionCounts,
    /// As [`Metrics::holds`], summed likewise, count by count.
    pub holds: HoldCounts,
    /// The group's call-duration histogram (`histogram_ms`), which all its
    /// keys count in (evicted ones included); `None` without it.
    pub call_durations: Option<CallDurations>,
    /// The group's own breaker, when the group judges as one
    /// (`systemic_share`, `max_open_keys`; see
    /// [`KeyedGroup::group_breaker`](crate::KeyedGroup::group_breaker)); `None`
    /// when its keys judge alone. Its `state` is the group's ("systemic" when
    /// not closed), its `rejected` the calls refused for the whole group, its
    /// probes the group's; none of its counts are in the sums above. Under a
    /// window policy its successes and failures are its keys' outcomes it
    /// judged.
    pub group_level: Option<Metrics>,
}

impl KeyedMetrics {
    /// Whether the group is open as one (its own breaker open, half-open or
    /// forced open): every key's call is refused for the group.
    pub fn is_systemic(&self) -> bool {
        self.group_level
            .as_ref()
            .is_some_and(|m| !matches!(m.state, State::Closed | State::ForcedClosed))
    }
}

/// What a keyed group reports ([`KeyedGroup::metrics`](super::KeyedGroup::metrics)):
/// `evicted`'s sums (the keys it evicted) plus those of the keys it holds,
/// each one's `Metrics` in `held`, and its keys by state. The caller keeps
/// the evictions from moving while `held` is walked (see `sweep`).
pub(super) fn keyed_metrics(
    group: &'static str,
    key_capacity: usize,
    evictions: u64,
    evicted: Folded,
    held_keys: impl Iterator<Item = Metrics>,
    call_durations: Option<CallDurations>,
    group_level: Option<Metrics>,
) -> KeyedMetrics {
    let mut sums = evicted;
    let (mut keys, mut open, mut half_open, mut held) = (0, 0, 0, 0);
    for m in held_keys {
        keys += 1;
        held += usize::from(m.held.is_some());
        match m.state {
            State::Open | State::ForcedOpen => open += 1,
            State::HalfOpen => half_open += 1,
            State::Closed | State::ForcedClosed => {}
        }
        sums.add(&m);
    }
    // Every sum, by name: no `..`, as in `Folded::add`.
    let Folded {
        calls,
        successes,
        failures,
        ignored,
        rejected,
        abandoned,
        stale,
        probes_succeeded,
        probes_failed,
        probes_reclaimed,
        times_opened,
        timeouts,
        bulkhead_rejected,
        latency_trips,
        ramp_refused,
        shadow_refused,
        throttled,
        retries,
        retries_budget_exhausted,
        transitions,
        holds,
    } = sums;
    KeyedMetrics {
        group,
        keys,
        key_capacity,
        open,
        half_open,
        held,
        evictions,
        calls,
        successes,
        failures,
        ignored,
        rejected,
        abandoned,
        stale,
        probes_succeeded,
        probes_failed,
        probes_reclaimed,
        times_opened,
        timeouts,
        bulkhead_rejected,
        latency_trips,
        ramp_refused,
        shadow_refused,
        throttled,
        retries,
        retries_budget_exhausted,
        transitions,
        holds,
        call_durations,
        group_level,
    }
}
