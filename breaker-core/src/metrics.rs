//! Read-only snapshots of what breakers did: [`Metrics`] for one, [`Snapshot`]
//! for a registry, which prints as a table.

use std::fmt;
use std::ops::Deref;
use std::time::Duration;

use crate::events::TransitionCounts;
pub use crate::histogram::{CallDurations, DurationCounts};
use crate::policy::Counts;
use crate::state::State;
pub use crate::throttle::ThrottleMetrics;

/// What one breaker did, taken at one moment. Taking it changes nothing.
///
/// Counters are exact once the counting threads are quiet. An admitted call is
/// counted once, by its outcome, when it ends (a call in flight is in no counter
/// yet), so `calls == successes + failures + ignored + abandoned + stale`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metrics {
    /// The breaker's group.
    pub group: &'static str,
    /// Its state.
    pub state: State,
    /// Its generation: every transition starts a new one.
    pub generation: u64,
    /// Admitted calls that ended (closed calls and probes): the sum of the five
    /// outcomes below. Counting a call at its end, not at its claim, keeps the
    /// closed path to one count per call.
    pub calls: u64,
    /// Admitted calls that succeeded (probes included).
    pub successes: u64,
    /// Admitted calls that failed (probes included; a panic is a failure).
    pub failures: u64,
    /// Admitted calls whose error the classifier ignored.
    pub ignored: u64,
    /// Claims refused.
    pub rejected: u64,
    /// Permits dropped without a verdict and without a panic (cancelled
    /// futures), in a group whose `abandoned` key is `"ignore"` (under
    /// `"failure"` they are counted in `failures`).
    pub abandoned: u64,
    /// Outcomes that arrived after the breaker moved to another generation.
    pub stale: u64,
    /// Probes that succeeded.
    pub probes_succeeded: u64,
    /// Probes that failed (each one reopened the circuit).
    pub probes_failed: u64,
    /// Probe slots taken back from probes that overran `probe_timeout`.
    pub probes_reclaimed: u64,
    /// Times the circuit opened (trips and failed probes; not forced opens).
    pub times_opened: u64,
    /// Probes in flight now.
    pub probes_in_flight: u32,
    /// Consecutive failures counted in the current generation (0 under a window
    /// policy).
    pub consecutive_failures: u32,
    /// What the window of a window policy holds now; `None` under the
    /// consecutive policy. Empty after every transition.
    pub window: Option<WindowMetrics>,
    /// Time until a probe may go, when the breaker is refusing claims for a
    /// while (a hold in force included: the later of its end and the state's).
    pub retry_after: Option<Duration>,
    /// Transitions so far, by the state left and the state entered; counted
    /// where each is announced, never on the call path.
    pub transitions: TransitionCounts,
    /// The open duration of the current episode while open or half-open (it
    /// grows by `backoff` after each failed probe), before `jitter`: while
    /// open, `retry_after` tells when the drawn one ends; `None` otherwise.
    pub open_for: Option<Duration>,
    /// Calls that ran past `timeout_ms` and were dropped (each also counted in
    /// `failures`).
    pub timeouts: u64,
    /// Calls the bulkhead (`max_concurrent`) refused (each also counted in
    /// `rejected`, which counts every call not let through).
    pub bulkhead_rejected: u64,
    /// Calls holding a bulkhead slot now; `None` without `max_concurrent`.
    pub bulkhead_in_flight: Option<u32>,
    /// Trips made by the p99 rule (`latency_p99_ms`: more than 1% of the
    /// window's calls slower than it) while the failure rate alone would not
    /// have tripped (each also counted in `times_opened`).
    pub latency_trips: u64,
    /// The p99 latency of the successful and failed calls since the breaker
    /// was made, as the upper bound of the call-duration histogram's bucket
    /// that holds it (the buckets of `histogram_ms`, or every bucket from 1 ms
    /// to 10^8 ms without it); `None` without `latency_p99_ms` or before the
    /// first call.
    pub latency_p99: Option<Duration>,
    /// Claims a traffic ramp (`ramp_ms`) refused (each also counted in
    /// `rejected`).
    pub ramp_refused: u64,
    /// Whether the breaker is in shadow mode now (refusing nothing but a
    /// forced open).
    pub shadow: bool,
    /// Claims the breaker would have refused and admitted because it was in
    /// shadow mode (never counted in `rejected`; a ramp's in `ramp_refused`
    /// neither).
    pub shadow_refused: u64,
    /// The traffic ramp while it runs: closed, admitting a share of calls
    /// that rises to all of them; `None` otherwise (also once its length has
    /// passed, before a claim ends it).
    pub ramp: Option<RampMetrics>,
    /// The call-duration histogram (`histogram_ms`); `None` without it, and
    /// for a key of a keyed group, whose keys count in one histogram that
    /// [`KeyedMetrics::call_durations`](crate::KeyedMetrics::call_durations) reads.
    pub call_durations: Option<CallDurations>,
    /// The hold in force (the server asked to wait): its time left and scope;
    /// `None` when no hold refuses claims.
    pub held: Option<crate::Held>,
    /// Holds taken, by scope, and what became of the waits asked for.
    pub holds: crate::HoldCounts,
    /// Retries made through a [`Retry`](crate::Retry): attempts after a
    /// call's first, each also one outcome among `calls`.
    pub retries: u64,
    /// Retries a [`Retry`](crate::Retry)'s budget refused: each call ended
    /// at once with its own last error.
    pub retries_budget_exhausted: u64,
    /// Claims the adaptive throttle (`throttle`) refused (each also counted
    /// in `rejected`; in shadow mode, in `shadow_refused` instead).
    pub throttled: u64,
    /// The adaptive throttle (`throttle`): requests and accepts of its
    /// window and the share it refuses now; `None` for a group that does not
    /// throttle.
    pub throttle: Option<ThrottleMetrics>,
}

impl Metrics {
    /// The share of calls a claim now is admitted at, in `[0, 1]`: 1 closed
    /// or forced closed, the ramp's share while it ramps, 0 open, forced open
    /// or half-open (where only probes go); while closed, less the share the
    /// adaptive throttle refuses (`throttle`).
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, Config};
    ///
    /// let breaker = Breaker::new("maps", Config::default());
    /// assert_eq!(breaker.metrics().admitted_share(), 1.0);
    /// breaker.force_open();
    /// assert_eq!(breaker.metrics().admitted_share(), 0.0);
    /// ```
    pub fn admitted_share(&self) -> f64 {
        let throttled = match (self.state, self.throttle) {
            (State::Closed, Some(throttle)) => throttle.reject_share,
            _ => 0.0,
        };
        let share = match (self.state, self.ramp) {
            (State::Closed, Some(ramp)) => ramp.admitted_share(),
            (State::Closed | State::ForcedClosed, None) => 1.0,
            _ => 0.0,
        };
        share * (1.0 - throttled)
    }
}

/// A traffic ramp under way: the share of calls admitted rises linearly from
/// none at the close to all of them at `length`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RampMetrics {
    /// How long the ramp runs (the config's `ramp_ms` at the close).
    pub length: Duration,
    /// How far it has come.
    pub elapsed: Duration,
}

impl RampMetrics {
    /// The share of calls admitted now: `elapsed / length`, in `[0, 1)`.
    pub fn admitted_share(&self) -> f64 {
        self.elapsed.as_secs_f64() / self.length.as_secs_f64()
    }

    /// The time until every call is admitted.
    pub fn remaining(&self) -> Duration {
        self.length.saturating_sub(self.elapsed)
    }
}

/// What the window of a rate policy holds at one moment: outcomes (ignored errors
/// and abandoned calls are not outcomes), failures and slow calls among them.
///
/// The rates are `None` while the window is empty, never a sentinel.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Breaker, Config};
///
/// let config = Config::builder().window_calls(4).build()?;
/// let breaker = Breaker::new("geo", config);
/// let window = breaker.metrics().window.expect("a window policy");
/// assert_eq!(window.failure_rate(), None); // nothing recorded yet
///
/// breaker.try_acquire()?.success();
/// breaker.try_acquire()?.failure();
/// let window = breaker.metrics().window.unwrap();
/// assert_eq!(window.calls, 2);
/// assert_eq!(window.failures, 1);
/// assert_eq!(window.failure_rate(), Some(0.5));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WindowMetrics {
    /// Outcomes in the window: successes and failures.
    pub calls: u64,
    /// Failures among them.
    pub failures: u64,
    /// Slow calls among them, successes and failures alike (0 unless
    /// `slow_call_ms` is set).
    pub slow_calls: u64,
}

impl WindowMetrics {
    /// `failures / calls`, or `None` while the window is empty.
    pub fn failure_rate(&self) -> Option<f64> {
        rate(self.failures, self.calls)
    }

    /// `slow_calls / calls`, or `None` while the window is empty.
    pub fn slow_call_rate(&self) -> Option<f64> {
        rate(self.slow_calls, self.calls)
    }
}

fn rate(part: u64, calls: u64) -> Option<f64> {
    (calls > 0).then(|| part as f64 / calls as f64)
}

impl From<Counts> for WindowMetrics {
    fn from(counts: Counts) -> Self {
        WindowMetrics {
            calls: counts.calls,
            failures: counts.failures,
            slow_calls: counts.slow,
        }
    }
}

/// The metrics of every breaker in a registry, sorted by group. Prints as a table:
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Config, Registry};
///
/// let registry = Registry::new();
/// registry.breaker("search", &Config::default()).call(|| Ok::<_, ()>(1)).unwrap();
/// let table = registry.snapshot().to_string();
/// assert!(table.starts_with("group"));
/// assert!(table.contains("search"));
/// // The last column: failures / outcomes in the window of a window policy.
/// let rated = Config::builder().window_calls(10).build().unwrap();
/// registry.breaker("geo", &rated).call(|| Err::<(), _>("down")).unwrap_err();
/// let table = registry.snapshot().to_string();
/// assert!(table.lines().any(|l| l.starts_with("geo") && l.ends_with("1/1")));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot(pub(crate) Vec<Metrics>);

impl Snapshot {
    /// The metrics of `group`, if the registry had it.
    pub fn group(&self, group: &str) -> Option<&Metrics> {
        self.0.iter().find(|m| m.group == group)
    }
}

impl Deref for Snapshot {
    type Target = [Metrics];
    fn deref(&self) -> &[Metrics] {
        &self.0
    }
}

impl IntoIterator for Snapshot {
    type Item = Metrics;
    type IntoIter = std::vec::IntoIter<Metrics>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl fmt::Display for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .0
            .iter()
            .map(|m| m.group.len())
            .max()
            .unwrap_or(0)
            .max("group".len());
        writeln!(
            f,
            "{:<width$}  {:<13}  {:>7}  {:>7}  {:>7}  {:>7}  {:>8}  {:>9}  {:>5}  {:>6}  {:>13}",
            "group",
            "state",
            "calls",
            "ok",
            "failed",
            "ignored",
            "rejected",
            "abandoned",
            "stale",
            "opened",
            "window failed"
        )?;
        for m in &self.0 {
            writeln!(
                f,
                "{:<width$}  {:<13}  {:>7}  {:>7}  {:>7}  {:>7}  {:>8}  {:>9}  {:>5}  {:>6}  {:>13}",
                m.group,
                m.state.as_str(),
                m.calls,
                m.successes,
                m.failures,
                m.ignored,
                m.rejected,
                m.abandoned,
                m.stale,
                m.times_opened,
                match m.window {
                    Some(w) => format!("{}/{}", w.failures, w.calls),
                    None => "-".to_owned(),
                }
            )?;
        }
        Ok(())
    }
}
