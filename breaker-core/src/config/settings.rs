//! The validated [`Config`] a breaker runs with, the [`FailurePolicy`] it holds and
//! the limits the builder checks against (the rules themselves are `breaker_rules`'s).

use std::time::Duration;

use breaker_rules::{Abandoned, Checked, KeySet};
pub use breaker_rules::{FailurePolicy, RateThresholds};

use crate::clock::millis_to_nanos;

/// A validated breaker configuration. Build one with [`Config::builder`](super::ConfigBuilder).
///
/// Each key is the attribute's and the file's; a duration key (`*_ms`, whole
/// milliseconds there) has a builder method that takes a [`Duration`] and a
/// getter of the same name.
///
/// | key (builder method) | default | meaning |
/// |---|---|---|
/// | `threshold` | 5 | consecutive failures that open the circuit (consecutive policy) |
/// | `window_ms` (`window`) | unset | judge the failure rate over the last `window_ms` (time window policy) |
/// | `window_calls` | unset | judge the failure rate over the last `window_calls` outcomes (count window policy) |
/// | `failure_rate` | 0.5 | share of failures in the window, in `(0, 1]`, that opens the circuit |
/// | `min_calls` | 10; a count window's size | outcomes the window must hold before it judges |
/// | `slow_call_ms` (`slow_call`) | unset | a call taking longer than this (claim to verdict) is slow |
/// | `slow_call_rate` | 1.0 with `slow_call_ms` | share of slow calls in the window that opens the circuit |
/// | `open_ms` (`open`) | 30 s | how long the circuit stays open before a probe may go |
/// | `half_open_probes` | 1 | probes in flight at once while half-open |
/// | `successes_to_close` | 1 | probe successes that close the circuit |
/// | `backoff` | 1.0 (constant) | factor the open duration grows by after each failed probe |
/// | `max_open_ms` (`max_open`) | max(`open_ms`, 300 s) | cap on the grown open duration |
/// | `probe_timeout_ms` (`probe_timeout`) | 30 s | lease of a probe; a probe in flight longer loses its slot |
/// | `timeout_ms` (`timeout`) | unset | deadline of one async call: a call that overruns it is dropped and fails |
/// | `max_concurrent` | unset | bulkhead: calls of the group in flight at once; one over the cap is refused |
/// | `latency_p99_ms` (`latency_p99`) | unset | open when the window's p99 latency is above this (needs a window) |
/// | `ramp_ms` (`ramp`) | unset | after a close, the share of calls admitted rises linearly from none to all over this |
/// | `jitter` | 0.0 | share, in `[0, 1)`, by which each open is stretched or shortened at random |
/// | `shadow` | false | shadow mode: refuse nothing, count what would have been refused (switched live) |
/// | `histogram_ms` (`histogram`) | unset | keep a call-duration histogram, buckets from 1 ms up to this, for the exporters |
/// | `systemic_share` | unset | keyed group: share of its keys failing at once that opens the whole group |
/// | `max_open_keys` | unset | keyed group: most keys open at once on their own, as a share of its keys |
/// | `throttle` | unset | adaptive throttling: refuse a share `max(0, (requests - K * accepts) / (requests + 1))` of calls, so about `K` times what the dependency accepts goes |
/// | `throttle_window_ms` (`throttle_window`) | 120 s with `throttle` | the window the throttle counts requests and accepts over |
/// | `throttle_max_reject` | 0.9 with `throttle` | the most the throttle refuses, a share in `(0, 1)` |
/// | `throttle_min_rps` | 0.0 with `throttle` | the request rate (calls a second) below which nothing is throttled |
/// | `max_hold_ms` (`max_hold`) | 1 h | the longest a server's wait holds the group; a longer one is capped |
/// | `abandoned` | `"ignore"` | what a call dropped before its verdict counts as: `"ignore"` or `"failure"` |
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::Config;
///
/// const SEARCH: Config = match Config::builder().threshold(3).open(Duration::from_secs(10)).build() {
///     Ok(config) => config,
///     Err(_) => panic!("invalid breaker config"),
/// };
/// assert_eq!(SEARCH.threshold(), 3);
/// assert!(Config::builder().threshold(0).build().is_err());
///
/// // Open when half the calls of the last 10 seconds failed, judged from 20 calls on.
/// const PAYMENTS: Config = match Config::builder()
///     .window(Duration::from_secs(10))
///     .failure_rate(0.5)
///     .min_calls(20)
///     .build()
/// {
///     Ok(config) => config,
///     Err(_) => panic!("invalid breaker config"),
/// };
/// assert_eq!(PAYMENTS.failure_rate(), Some(0.5));
/// assert_eq!(PAYMENTS.threshold(), 0); // no consecutive threshold under a window
/// ```
///
/// # Which keys were set
///
/// A config remembers which builder methods made it
/// ([`explicit_keys`](Self::explicit_keys)): a declaration's `open_ms = 30000`
/// is a value its author chose, even though it equals the default, and a
/// configuration file's template must not take it away. That record is **not
/// part of equality**: two configs that run a breaker the same way are equal,
/// so declarations that differ only in spelling out a default are not a
/// [`Conflict`](crate::Conflict).
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::Config;
///
/// let spelled = Config::builder().threshold(5).open(Duration::from_secs(30)).build().unwrap();
/// assert_eq!(spelled, Config::DEFAULT);
/// assert_eq!(spelled.explicit_keys().collect::<Vec<_>>(), ["threshold", "open_ms"]);
/// assert_eq!(Config::DEFAULT.explicit_keys().count(), 0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// What the breaker runs with.
    pub(super) checked: Checked,
    /// The builder methods called.
    pub(super) explicit: KeySet,
}

/// Equal when they run a breaker the same way: which keys were spelled out
/// ([`Config::explicit_keys`]) does not count.
impl PartialEq for Config {
    fn eq(&self, other: &Self) -> bool {
        self.checked == other.checked
    }
}

// The consecutive count shares the breaker's state word: the rules' bound on
// `threshold` is the word's.
const _: () = assert!(breaker_rules::MAX_THRESHOLD == crate::state::MAX_FAILURES);

impl Config {
    /// The [`ConfigBuilder`](super::ConfigBuilder) methods, which are also the
    /// `#[circuit_breaker]` keys that configure a breaker, in the order
    /// [`explicit_keys`](Self::explicit_keys) lists them.
    pub const KEYS: [&'static str; breaker_rules::KEY_COUNT] = breaker_rules::NAMES;

    /// The keys whose builder method was called to make this config, in
    /// [`KEYS`](Self::KEYS) order: a declaration's literal values. Keys left
    /// to their default, or derived (a count window's `min_calls`), are not
    /// listed.
    pub fn explicit_keys(&self) -> impl Iterator<Item = &'static str> {
        self.explicit.iter()
    }

    /// Whether `key`'s builder method was called to make this config (see
    /// [`explicit_keys`](Self::explicit_keys)).
    pub fn is_explicit(&self, key: &str) -> bool {
        self.explicit.contains(key)
    }

    /// The largest `threshold` a consecutive-failure policy accepts (2^20 - 1): the
    /// count shares the breaker's one atomic word with its state.
    pub const MAX_THRESHOLD: u32 = breaker_rules::MAX_THRESHOLD;
    /// The largest `half_open_probes` and `successes_to_close` accepted.
    pub const MAX_PROBES: u32 = breaker_rules::MAX_PROBES;
    /// The largest `window_calls` accepted: the ring keeps one byte per call.
    pub const MAX_WINDOW_CALLS: u32 = breaker_rules::MAX_WINDOW_CALLS;
    /// Buckets a time window is split into: outcomes expire one bucket at a time.
    pub const WINDOW_BUCKETS: u32 = breaker_rules::WINDOW_BUCKETS;
    /// The shortest `window_ms` accepted: one millisecond per bucket.
    pub const MIN_WINDOW_MS: u64 = breaker_rules::MIN_WINDOW_MS;
    /// The largest `histogram_ms` accepted (a day): its buckets end at 10^8 ms.
    pub const MAX_HISTOGRAM_MS: u64 = breaker_rules::MAX_HISTOGRAM_MS;
    /// The largest `max_hold_ms` accepted (65,535 s, about 18 h); the key
    /// takes whole seconds.
    pub const MAX_HOLD_MS: u64 = breaker_rules::MAX_HOLD_MS;
    /// `failure_rate` of a window policy when the builder sets none.
    pub const DEFAULT_FAILURE_RATE: f64 = breaker_rules::DEFAULT_FAILURE_RATE;
    /// `min_calls` of a time window when the builder sets none (a count window
    /// defaults to its `window_calls`: it judges once full).
    pub const DEFAULT_MIN_CALLS: u32 = breaker_rules::DEFAULT_MIN_CALLS;
    /// `throttle_window_ms` of a throttled group when the builder sets none.
    pub const DEFAULT_THROTTLE_WINDOW_MS: u64 = breaker_rules::DEFAULT_THROTTLE_WINDOW_MS;
    /// `throttle_max_reject` of a throttled group when the builder sets none.
    pub const DEFAULT_THROTTLE_MAX_REJECT: f64 = breaker_rules::DEFAULT_THROTTLE_MAX_REJECT;

    /// The failure policy of the closed state.
    pub const fn policy(&self) -> FailurePolicy {
        self.checked.policy
    }

    /// The consecutive-failure threshold, or `0` under a window policy, which
    /// trips on [`failure_rate`](Self::failure_rate) instead.
    pub const fn threshold(&self) -> u32 {
        match self.checked.policy {
            FailurePolicy::Consecutive { threshold } => threshold,
            _ => 0,
        }
    }

    /// The rate thresholds of a window policy; `None` under the consecutive policy.
    pub const fn rates(&self) -> Option<RateThresholds> {
        match self.checked.policy {
            FailurePolicy::TimeWindow { rates, .. } | FailurePolicy::CountWindow { rates, .. } => {
                Some(rates)
            }
            _ => None,
        }
    }

    /// The length of a time window; `None` under any other policy.
    pub const fn window(&self) -> Option<Duration> {
        match self.checked.policy {
            FailurePolicy::TimeWindow { window_ms, .. } => Some(Duration::from_millis(window_ms)),
            _ => None,
        }
    }

    /// The size of a count window; `None` under any other policy.
    pub const fn window_calls(&self) -> Option<u32> {
        match self.checked.policy {
            FailurePolicy::CountWindow { window_calls, .. } => Some(window_calls),
            _ => None,
        }
    }

    /// The failure rate that trips a window policy; `None` under the consecutive policy.
    pub const fn failure_rate(&self) -> Option<f64> {
        match self.rates() {
            Some(rates) => Some(rates.failure_rate),
            None => None,
        }
    }

    /// Outcomes a window must hold before it judges; `None` under the consecutive policy.
    pub const fn min_calls(&self) -> Option<u32> {
        match self.rates() {
            Some(rates) => Some(rates.min_calls),
            None => None,
        }
    }

    /// Calls longer than this are slow; `None` when slow calls are not judged.
    pub const fn slow_call(&self) -> Option<Duration> {
        match self.rates() {
            Some(RateThresholds {
                slow_call_ms: Some(ms),
                ..
            }) => Some(Duration::from_millis(ms)),
            _ => None,
        }
    }

    /// The slow-call rate that trips; `None` when slow calls are not judged.
    pub const fn slow_call_rate(&self) -> Option<f64> {
        match self.rates() {
            Some(RateThresholds {
                slow_call_ms: Some(_),
                slow_call_rate,
                ..
            }) => Some(slow_call_rate),
            _ => None,
        }
    }

    /// The first open duration after a trip.
    pub const fn open(&self) -> Duration {
        Duration::from_millis(self.checked.open_ms)
    }

    /// Probes allowed in flight at once while half-open.
    pub const fn half_open_probes(&self) -> u32 {
        self.checked.half_open_probes
    }

    /// Probe successes needed to close the circuit.
    pub const fn successes_to_close(&self) -> u32 {
        self.checked.successes_to_close
    }

    /// Growth factor of the open duration after each failed probe.
    pub const fn backoff(&self) -> f64 {
        self.checked.backoff
    }

    /// Cap on the open duration.
    pub const fn max_open(&self) -> Duration {
        Duration::from_millis(self.checked.max_open_ms)
    }

    /// Lease of one probe: after this long in flight its slot is reclaimed.
    pub const fn probe_timeout(&self) -> Duration {
        Duration::from_millis(self.checked.probe_timeout_ms)
    }

    /// The deadline of one async call run with a timer; `None` when calls are not
    /// timed out. A sync call cannot be interrupted: see
    /// [`ConfigBuilder::timeout`](super::ConfigBuilder::timeout).
    pub const fn timeout(&self) -> Option<Duration> {
        match self.checked.timeout_ms {
            Some(ms) => Some(Duration::from_millis(ms.get())),
            None => None,
        }
    }

    /// The bulkhead's cap: calls of the group in flight at once; `None` when uncapped.
    pub const fn max_concurrent(&self) -> Option<u32> {
        match self.checked.max_concurrent {
            Some(cap) => Some(cap.get()),
            None => None,
        }
    }

    /// The p99 latency above which the window trips; `None` when latency is not judged.
    pub const fn latency_p99(&self) -> Option<Duration> {
        match self.checked.latency_p99_ms {
            Some(ms) => Some(Duration::from_millis(ms.get())),
            None => None,
        }
    }

    /// How long traffic ramps back in after the circuit closes; `None` when
    /// the circuit closes to every call at once. See
    /// [`ConfigBuilder::ramp`](super::ConfigBuilder::ramp) for the curve.
    pub const fn ramp(&self) -> Option<Duration> {
        match self.checked.ramp_ms {
            Some(ms) => Some(Duration::from_millis(ms.get())),
            None => None,
        }
    }

    /// The ramp in nanos; `None` without one.
    pub(crate) const fn ramp_nanos(&self) -> Option<u64> {
        match self.checked.ramp_ms {
            Some(ms) => Some(millis_to_nanos(ms.get())),
            None => None,
        }
    }

    /// Share by which each open duration is stretched or shortened at random
    /// (0.0: never).
    pub const fn jitter(&self) -> f64 {
        self.checked.jitter
    }

    /// Whether a breaker of this config starts in shadow mode (see
    /// [`ConfigBuilder::shadow`](super::ConfigBuilder::shadow)); a running
    /// breaker tells its live mode in [`Metrics::shadow`](crate::Metrics::shadow).
    pub const fn shadow(&self) -> bool {
        self.checked.shadow
    }

    /// This config with shadow mode `on`, every other key as it is.
    pub(crate) const fn with_shadow(mut self, on: bool) -> Config {
        self.checked.shadow = on;
        self
    }

    /// The longest call duration the call-duration histogram gives a bucket
    /// of its own; `None` when the group keeps no histogram.
    pub const fn histogram(&self) -> Option<Duration> {
        match self.checked.histogram_ms {
            Some(ms) => Some(Duration::from_millis(ms.get())),
            None => None,
        }
    }

    /// In a keyed group, the share of its keys failing at once that opens
    /// the whole group; `None` when the group judges its keys one by one
    /// (see [`ConfigBuilder::systemic_share`](super::ConfigBuilder::systemic_share)).
    /// Kept to a whole percent.
    pub const fn systemic_share(&self) -> Option<f64> {
        share(self.checked.systemic_share)
    }

    /// In a keyed group, the most keys open at once on their own, as a share
    /// of the keys it holds; `None` without a cap (see
    /// [`ConfigBuilder::max_open_keys`](super::ConfigBuilder::max_open_keys)).
    /// Kept to a whole percent.
    pub const fn max_open_keys(&self) -> Option<f64> {
        share(self.checked.max_open_keys)
    }

    /// Whether a keyed group of this config also judges as one.
    pub(crate) const fn judges_group(&self) -> bool {
        self.checked.systemic_share.is_some() || self.checked.max_open_keys.is_some()
    }

    /// The adaptive throttle's multiplier `K`; `None` when the group does not
    /// throttle (see [`ConfigBuilder::throttle`](super::ConfigBuilder::throttle)).
    pub const fn throttle(&self) -> Option<f64> {
        match self.checked.throttle {
            Some(t) => Some(t.k),
            None => None,
        }
    }

    /// The window the throttle counts requests and accepts over; `None`
    /// without a throttle.
    pub const fn throttle_window(&self) -> Option<Duration> {
        match self.checked.throttle {
            Some(t) => Some(Duration::from_millis(t.window_ms.get())),
            None => None,
        }
    }

    /// The most the throttle refuses, a share in `(0, 1)`; `None` without a
    /// throttle.
    pub const fn throttle_max_reject(&self) -> Option<f64> {
        match self.checked.throttle {
            Some(t) => Some(t.max_reject),
            None => None,
        }
    }

    /// The request rate (calls a second) below which nothing is throttled;
    /// `None` without a throttle.
    pub const fn throttle_min_rps(&self) -> Option<f64> {
        match self.checked.throttle {
            Some(t) => Some(t.min_rps),
            None => None,
        }
    }

    /// The throttle's numbers, checked; `None` without a throttle.
    pub(crate) const fn throttle_rules(&self) -> Option<breaker_rules::ThrottleRules> {
        self.checked.throttle
    }

    /// The longest a hold lasts (see
    /// [`ConfigBuilder::max_hold`](super::ConfigBuilder::max_hold)).
    pub const fn max_hold(&self) -> Duration {
        Duration::from_secs(self.checked.max_hold_secs as u64)
    }

    /// What a call dropped before its verdict counts as (see
    /// [`ConfigBuilder::abandoned`](super::ConfigBuilder::abandoned)).
    pub const fn abandoned(&self) -> Abandoned {
        self.checked.abandoned
    }

    /// The longest a hold lasts, in nanos.
    pub(crate) const fn max_hold_nanos(&self) -> u64 {
        millis_to_nanos(self.checked.max_hold_secs as u64 * 1_000)
    }

    pub(crate) const fn open_nanos(&self) -> u64 {
        millis_to_nanos(self.checked.open_ms)
    }

    pub(crate) const fn max_open_nanos(&self) -> u64 {
        millis_to_nanos(self.checked.max_open_ms)
    }

    pub(crate) const fn probe_timeout_nanos(&self) -> u64 {
        millis_to_nanos(self.checked.probe_timeout_ms)
    }

    /// The open duration that follows a failed probe after one of `current` nanos.
    pub(crate) fn grown_open_nanos(&self, current: u64) -> u64 {
        // `as` from f64 saturates (and backoff is validated finite and >= 1).
        let grown = (current as f64 * self.checked.backoff) as u64;
        grown
            .max(current)
            .min(self.max_open_nanos())
            .max(self.open_nanos())
    }
}

/// A share kept in whole percent, as an `f64` again.
const fn share(percent: Option<std::num::NonZeroU8>) -> Option<f64> {
    match percent {
        Some(p) => Some(p.get() as f64 / 100.0),
        None => None,
    }
}
