//! What a breaker is told: [`Config`], built and validated by [`ConfigBuilder`].
//!
//! Every `#[circuit_breaker]` key has a builder method of the same name and meaning,
//! and the builder is `const`, so a call site's config is checked at compile time.

use std::fmt;
use std::time::Duration;

use crate::clock::millis_to_nanos;

/// The largest `threshold` a consecutive-failure policy accepts (2^20 - 1): the
/// count shares the breaker's one atomic word with its state.
pub const MAX_THRESHOLD: u32 = crate::state::MAX_FAILURES;
/// The largest `half_open_probes` and `successes_to_close` accepted.
pub const MAX_PROBES: u32 = (1 << 10) - 1;
/// The largest `window_calls` accepted: the ring keeps one byte per call.
pub const MAX_WINDOW_CALLS: u32 = 1 << 16;
/// Buckets a time window is split into: outcomes expire one bucket at a time.
pub const WINDOW_BUCKETS: u32 = 10;
/// The shortest `window_ms` accepted: one millisecond per bucket.
pub const MIN_WINDOW_MS: u64 = WINDOW_BUCKETS as u64;
/// `failure_rate` of a window policy when the builder sets none.
pub const DEFAULT_FAILURE_RATE: f64 = 0.5;
/// `min_calls` of a time window when the builder sets none (a count window
/// defaults to its `window_calls`: it judges once full).
pub const DEFAULT_MIN_CALLS: u32 = 10;

/// How a closed breaker decides to trip.
///
/// Chosen by the builder: setting `window_ms` or `window_calls` selects a window
/// policy, otherwise the consecutive policy (with `threshold`) is in force. See
/// [`ConfigBuilder`] for when to choose which.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum FailurePolicy {
    /// Trip on the `threshold`-th consecutive failure; any success resets the count.
    Consecutive {
        /// Consecutive failures that open the circuit (`3` means the third trips).
        threshold: u32,
    },
    /// Trip on the failure (or slow-call) rate of the outcomes recorded in the
    /// last `window_ms`, kept in [`WINDOW_BUCKETS`] buckets of `window_ms / 10`.
    TimeWindow {
        /// Length of the window in milliseconds.
        window_ms: u64,
        /// When the rates over the window trip.
        rates: RateThresholds,
    },
    /// Trip on the failure (or slow-call) rate of the last `window_calls`
    /// recorded outcomes.
    CountWindow {
        /// How many of the latest outcomes the window holds.
        window_calls: u32,
        /// When the rates over the window trip.
        rates: RateThresholds,
    },
}

/// When a window policy trips: once the window holds at least `min_calls`
/// outcomes, as soon as `failures / calls >= failure_rate`, or, with slow calls
/// configured, `slow_calls / calls >= slow_call_rate`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct RateThresholds {
    /// Share of failures, in `(0, 1]`, that trips.
    pub failure_rate: f64,
    /// Outcomes the window must hold before any rate is judged.
    pub min_calls: u32,
    /// A call that takes longer than this (claim to verdict, on the breaker's
    /// clock) is slow; `None` when slow calls are not judged.
    pub slow_call_ms: Option<u64>,
    /// Share of slow calls, in `(0, 1]`, that trips (only with `slow_call_ms`).
    pub slow_call_rate: f64,
}

/// A validated breaker configuration. Build one with [`Config::builder`].
///
/// | builder method | default | meaning |
/// |---|---|---|
/// | `threshold` | 5 | consecutive failures that open the circuit (consecutive policy) |
/// | `window_ms` | unset | judge the failure rate over the last `window_ms` (time window policy) |
/// | `window_calls` | unset | judge the failure rate over the last `window_calls` outcomes (count window policy) |
/// | `failure_rate` | 0.5 | share of failures in the window, in `(0, 1]`, that opens the circuit |
/// | `min_calls` | 10; a count window's size | outcomes the window must hold before it judges |
/// | `slow_call_ms` | unset | a call taking longer than this (claim to verdict) is slow |
/// | `slow_call_rate` | 1.0 with `slow_call_ms` | share of slow calls in the window that opens the circuit |
/// | `open_ms` | 30 000 | how long the circuit stays open before a probe may go |
/// | `half_open_probes` | 1 | probes in flight at once while half-open |
/// | `successes_to_close` | 1 | probe successes that close the circuit |
/// | `backoff` | 2.0 | factor the open duration grows by after each failed probe |
/// | `max_open_ms` | max(`open_ms`, 300 000) | cap on the grown open duration |
/// | `probe_timeout_ms` | 30 000 | lease of a probe; a probe in flight longer loses its slot |
///
/// ```
/// use breaker_core::Config;
///
/// const SEARCH: Config = match Config::builder().threshold(3).open_ms(10_000).build() {
///     Ok(config) => config,
///     Err(_) => panic!("invalid breaker config"),
/// };
/// assert_eq!(SEARCH.threshold(), 3);
/// assert!(Config::builder().threshold(0).build().is_err());
///
/// // Open when half the calls of the last 10 seconds failed, judged from 20 calls on.
/// const PAYMENTS: Config = match Config::builder()
///     .window_ms(10_000)
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
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    policy: FailurePolicy,
    open_ms: u64,
    half_open_probes: u32,
    successes_to_close: u32,
    backoff: f64,
    max_open_ms: u64,
    probe_timeout_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

impl Config {
    /// The configuration every unset builder method falls back to.
    pub const DEFAULT: Config = match ConfigBuilder::new().build() {
        Ok(config) => config,
        Err(_) => panic!("the default config is valid"),
    };

    /// Starts a builder holding the defaults.
    pub const fn builder() -> ConfigBuilder {
        ConfigBuilder::new()
    }

    /// The failure policy of the closed state.
    pub const fn policy(&self) -> FailurePolicy {
        self.policy
    }

    /// The consecutive-failure threshold, or `0` under a window policy, which
    /// trips on [`failure_rate`](Self::failure_rate) instead.
    pub const fn threshold(&self) -> u32 {
        match self.policy {
            FailurePolicy::Consecutive { threshold } => threshold,
            FailurePolicy::TimeWindow { .. } | FailurePolicy::CountWindow { .. } => 0,
        }
    }

    /// The rate thresholds of a window policy; `None` under the consecutive policy.
    pub const fn rates(&self) -> Option<RateThresholds> {
        match self.policy {
            FailurePolicy::Consecutive { .. } => None,
            FailurePolicy::TimeWindow { rates, .. } | FailurePolicy::CountWindow { rates, .. } => {
                Some(rates)
            }
        }
    }

    /// The length of a time window; `None` under any other policy.
    pub const fn window_duration(&self) -> Option<Duration> {
        match self.policy {
            FailurePolicy::TimeWindow { window_ms, .. } => Some(Duration::from_millis(window_ms)),
            _ => None,
        }
    }

    /// The size of a count window; `None` under any other policy.
    pub const fn window_calls(&self) -> Option<u32> {
        match self.policy {
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
    pub const fn open_duration(&self) -> Duration {
        Duration::from_millis(self.open_ms)
    }

    /// Probes allowed in flight at once while half-open.
    pub const fn half_open_probes(&self) -> u32 {
        self.half_open_probes
    }

    /// Probe successes needed to close the circuit.
    pub const fn successes_to_close(&self) -> u32 {
        self.successes_to_close
    }

    /// Growth factor of the open duration after each failed probe.
    pub const fn backoff(&self) -> f64 {
        self.backoff
    }

    /// Cap on the open duration.
    pub const fn max_open_duration(&self) -> Duration {
        Duration::from_millis(self.max_open_ms)
    }

    /// Lease of one probe: after this long in flight its slot is reclaimed.
    pub const fn probe_timeout(&self) -> Duration {
        Duration::from_millis(self.probe_timeout_ms)
    }

    pub(crate) const fn open_nanos(&self) -> u64 {
        millis_to_nanos(self.open_ms)
    }

    pub(crate) const fn max_open_nanos(&self) -> u64 {
        millis_to_nanos(self.max_open_ms)
    }

    pub(crate) const fn probe_timeout_nanos(&self) -> u64 {
        millis_to_nanos(self.probe_timeout_ms)
    }

    /// The open duration that follows a failed probe after one of `current` nanos.
    pub(crate) fn grown_open_nanos(&self, current: u64) -> u64 {
        // `as` from f64 saturates (and backoff is validated finite and >= 1).
        let grown = (current as f64 * self.backoff) as u64;
        grown
            .max(current)
            .min(self.max_open_nanos())
            .max(self.open_nanos())
    }
}

/// Builds a [`Config`]; every method is `const` and mirrors an attribute key.
///
/// # Choosing a failure policy
///
/// - **Consecutive** (`threshold`, the default): trips on the `threshold`-th
///   failure in a row. Costs nothing on success (no clock read, no write) and reacts
///   fast to a dependency that is hard down. Blind spot: a dependency failing 80% of
///   the time with scattered successes never trips it, since every success resets
///   the count.
/// - **Time window** (`window_ms`, with `failure_rate`, `min_calls`): judges the
///   share of failures in the last `window_ms`. Catches partial outages whatever the
///   traffic pattern, and forgets old failures by age, so a quiet service is judged
///   on recent calls only. Costs a clock read per call and a few atomic adds per
///   outcome; needs `min_calls` outcomes in the window before it judges, so a
///   low-traffic dependency may never be judged (lower `min_calls` or use a count
///   window).
/// - **Count window** (`window_calls`): judges the share of failures in the last
///   `window_calls` outcomes, however old. The sample size is fixed, so low and
///   bursty traffic are judged alike; but an outcome from an hour ago weighs as
///   much as one from a second ago. Each outcome takes a short uncontended
///   critical section (a few nanoseconds) to update the ring.
/// - **Slow calls** (`slow_call_ms`, `slow_call_rate`) ride on either window: a
///   dependency that answers, but too slowly, trips the breaker even when every
///   call succeeds.
///
/// Mixing `threshold` with a window key is refused: the two policies judge
/// differently and the builder will not guess which one was meant.
///
/// ```
/// use breaker_core::{Config, ConfigError};
///
/// let by_count = Config::builder().window_calls(50).failure_rate(0.2).build()?;
/// assert_eq!(by_count.min_calls(), Some(50)); // judges once the ring is full
///
/// let slow = Config::builder().window_ms(60_000).slow_call_ms(2_000).build()?;
/// assert_eq!(slow.slow_call_rate(), Some(1.0)); // all calls slow: open
///
/// let both = Config::builder().window_ms(10_000).window_calls(100).build();
/// assert_eq!(both, Err(ConfigError::BothWindows));
/// # Ok::<(), ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ConfigBuilder {
    threshold: u32,
    threshold_set: bool,
    window_ms: Option<u64>,
    window_calls: Option<u32>,
    failure_rate: Option<f64>,
    min_calls: Option<u32>,
    slow_call_ms: Option<u64>,
    slow_call_rate: Option<f64>,
    open_ms: u64,
    half_open_probes: u32,
    successes_to_close: u32,
    backoff: f64,
    max_open_ms: Option<u64>,
    probe_timeout_ms: u64,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ConfigBuilder {
    /// A builder holding the defaults.
    pub const fn new() -> Self {
        ConfigBuilder {
            threshold: 5,
            threshold_set: false,
            window_ms: None,
            window_calls: None,
            failure_rate: None,
            min_calls: None,
            slow_call_ms: None,
            slow_call_rate: None,
            open_ms: 30_000,
            half_open_probes: 1,
            successes_to_close: 1,
            backoff: 2.0,
            max_open_ms: None,
            probe_timeout_ms: 30_000,
        }
    }

    /// Consecutive failures that open the circuit: `3` means the third trips.
    /// Selects the consecutive policy; refused together with a window key.
    pub const fn threshold(mut self, threshold: u32) -> Self {
        self.threshold = threshold;
        self.threshold_set = true;
        self
    }

    /// Judge the failure rate over the last `ms` milliseconds (at least
    /// [`MIN_WINDOW_MS`]): selects the time window policy.
    ///
    /// The window is [`WINDOW_BUCKETS`] buckets of `ms / 10`, aligned on the
    /// clock; outcomes expire a bucket at a time, lazily, on the next record or
    /// query. An outcome counts for at least nine tenths of `ms` and never for
    /// `ms` or longer: one exactly `ms` old no longer counts.
    ///
    /// On the default clock, a window of 1 s or more without `slow_call_ms` places
    /// outcomes by the kernel's coarse monotonic reading, which costs a few
    /// nanoseconds instead of a precise read and lags it by at most one tick (a
    /// few milliseconds, a few per cent of a bucket).
    pub const fn window_ms(mut self, ms: u64) -> Self {
        self.window_ms = Some(ms);
        self
    }

    /// Judge the failure rate over the last `calls` recorded outcomes (1 to
    /// [`MAX_WINDOW_CALLS`]): selects the count window policy.
    pub const fn window_calls(mut self, calls: u32) -> Self {
        self.window_calls = Some(calls);
        self
    }

    /// Share of failures in the window, in `(0, 1]`, that opens the circuit
    /// (default [`DEFAULT_FAILURE_RATE`]); `0.5` trips at 50%, not above it.
    /// Needs a window.
    pub const fn failure_rate(mut self, rate: f64) -> Self {
        self.failure_rate = Some(rate);
        self
    }

    /// Outcomes (successes and failures; ignored errors do not count) the window
    /// must hold before it judges; default [`DEFAULT_MIN_CALLS`] for a time
    /// window and `window_calls` for a count window, which may not be exceeded.
    /// Needs a window.
    pub const fn min_calls(mut self, calls: u32) -> Self {
        self.min_calls = Some(calls);
        self
    }

    /// A call taking longer than `ms` milliseconds, measured from claim to
    /// verdict on the breaker's clock, is slow, whether it succeeded or failed;
    /// exactly `ms` is not slow. Needs a window; trips at `slow_call_rate`
    /// (default 1.0: every call in the window slow).
    pub const fn slow_call_ms(mut self, ms: u64) -> Self {
        self.slow_call_ms = Some(ms);
        self
    }

    /// Share of slow calls in the window, in `(0, 1]`, that opens the circuit,
    /// even if every call succeeded. Needs `slow_call_ms`.
    pub const fn slow_call_rate(mut self, rate: f64) -> Self {
        self.slow_call_rate = Some(rate);
        self
    }

    /// Milliseconds the circuit stays open before the next claim may probe.
    pub const fn open_ms(mut self, ms: u64) -> Self {
        self.open_ms = ms;
        self
    }

    /// Probes allowed in flight at once while half-open.
    pub const fn half_open_probes(mut self, probes: u32) -> Self {
        self.half_open_probes = probes;
        self
    }

    /// Probe successes that close the circuit.
    pub const fn successes_to_close(mut self, successes: u32) -> Self {
        self.successes_to_close = successes;
        self
    }

    /// Factor (`>= 1.0`) the open duration grows by after each failed probe;
    /// `1.0` keeps it constant.
    pub const fn backoff(mut self, factor: f64) -> Self {
        self.backoff = factor;
        self
    }

    /// Cap, in milliseconds, on the grown open duration. Must be `>= open_ms`.
    pub const fn max_open_ms(mut self, ms: u64) -> Self {
        self.max_open_ms = Some(ms);
        self
    }

    /// Milliseconds a probe may stay in flight before its slot is reclaimed and its
    /// outcome, when it finally comes, is counted as stale.
    pub const fn probe_timeout_ms(mut self, ms: u64) -> Self {
        self.probe_timeout_ms = ms;
        self
    }

    /// Validates and returns the config.
    pub const fn build(self) -> Result<Config, ConfigError> {
        if self.threshold == 0 {
            return Err(ConfigError::ZeroThreshold);
        }
        if self.threshold > MAX_THRESHOLD {
            return Err(ConfigError::ThresholdTooLarge);
        }
        if self.open_ms == 0 {
            return Err(ConfigError::ZeroOpen);
        }
        if self.half_open_probes == 0 {
            return Err(ConfigError::ZeroProbes);
        }
        if self.half_open_probes > MAX_PROBES {
            return Err(ConfigError::TooManyProbes);
        }
        if self.successes_to_close == 0 {
            return Err(ConfigError::ZeroSuccesses);
        }
        if self.successes_to_close > MAX_PROBES {
            return Err(ConfigError::TooManySuccesses);
        }
        if self.backoff.is_nan() || self.backoff.is_infinite() {
            return Err(ConfigError::BackoffNotFinite);
        }
        if self.backoff < 1.0 {
            return Err(ConfigError::BackoffBelowOne);
        }
        let max_open_ms = match self.max_open_ms {
            Some(ms) if ms < self.open_ms => return Err(ConfigError::MaxOpenBelowOpen),
            Some(ms) => ms,
            None if self.open_ms > 300_000 => self.open_ms,
            None => 300_000,
        };
        if self.probe_timeout_ms == 0 {
            return Err(ConfigError::ZeroProbeTimeout);
        }
        let policy = match self.policy() {
            Ok(policy) => policy,
            Err(e) => return Err(e),
        };
        Ok(Config {
            policy,
            open_ms: self.open_ms,
            half_open_probes: self.half_open_probes,
            successes_to_close: self.successes_to_close,
            backoff: self.backoff,
            max_open_ms,
            probe_timeout_ms: self.probe_timeout_ms,
        })
    }
}

impl ConfigBuilder {
    /// The failure policy the window keys select, validated.
    const fn policy(&self) -> Result<FailurePolicy, ConfigError> {
        if let Some(rate) = self.failure_rate {
            if !valid_rate(rate) {
                return Err(ConfigError::FailureRateOutOfRange);
            }
        }
        if let Some(rate) = self.slow_call_rate {
            if !valid_rate(rate) {
                return Err(ConfigError::SlowCallRateOutOfRange);
            }
            if self.slow_call_ms.is_none() {
                return Err(ConfigError::SlowCallRateWithoutSlowCall);
            }
        }
        if let Some(0) = self.min_calls {
            return Err(ConfigError::ZeroMinCalls);
        }
        if let Some(0) = self.slow_call_ms {
            return Err(ConfigError::ZeroSlowCall);
        }
        if let Some(ms) = self.window_ms {
            if ms < MIN_WINDOW_MS {
                return Err(ConfigError::WindowTooShort);
            }
        }
        if let Some(calls) = self.window_calls {
            if calls == 0 {
                return Err(ConfigError::ZeroWindowCalls);
            }
            if calls > MAX_WINDOW_CALLS {
                return Err(ConfigError::WindowCallsTooLarge);
            }
        }
        let windowed = self.window_ms.is_some() || self.window_calls.is_some();
        if !windowed {
            if self.failure_rate.is_some() {
                return Err(ConfigError::FailureRateWithoutWindow);
            }
            if self.min_calls.is_some() {
                return Err(ConfigError::MinCallsWithoutWindow);
            }
            if self.slow_call_ms.is_some() {
                return Err(ConfigError::SlowCallWithoutWindow);
            }
            return Ok(FailurePolicy::Consecutive {
                threshold: self.threshold,
            });
        }
        if self.window_ms.is_some() && self.window_calls.is_some() {
            return Err(ConfigError::BothWindows);
        }
        if self.threshold_set {
            return Err(ConfigError::ThresholdWithWindow);
        }
        let failure_rate = match self.failure_rate {
            Some(rate) => rate,
            None => DEFAULT_FAILURE_RATE,
        };
        let slow_call_rate = match self.slow_call_rate {
            Some(rate) => rate,
            None => 1.0,
        };
        match (self.window_ms, self.window_calls) {
            (Some(window_ms), _) => Ok(FailurePolicy::TimeWindow {
                window_ms,
                rates: RateThresholds {
                    failure_rate,
                    min_calls: match self.min_calls {
                        Some(calls) => calls,
                        None => DEFAULT_MIN_CALLS,
                    },
                    slow_call_ms: self.slow_call_ms,
                    slow_call_rate,
                },
            }),
            (None, Some(window_calls)) => {
                let min_calls = match self.min_calls {
                    Some(calls) if calls > window_calls => {
                        return Err(ConfigError::MinCallsAboveWindow)
                    }
                    Some(calls) => calls,
                    None => window_calls,
                };
                Ok(FailurePolicy::CountWindow {
                    window_calls,
                    rates: RateThresholds {
                        failure_rate,
                        min_calls,
                        slow_call_ms: self.slow_call_ms,
                        slow_call_rate,
                    },
                })
            }
            (None, None) => Ok(FailurePolicy::Consecutive {
                threshold: self.threshold,
            }),
        }
    }
}

/// A rate in `(0, 1]`; NaN is not.
const fn valid_rate(rate: f64) -> bool {
    rate > 0.0 && rate <= 1.0
}

/// Why a [`ConfigBuilder`] refused to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// `threshold` was 0.
    ZeroThreshold,
    /// `threshold` was above [`MAX_THRESHOLD`].
    ThresholdTooLarge,
    /// `open_ms` was 0.
    ZeroOpen,
    /// `half_open_probes` was 0.
    ZeroProbes,
    /// `half_open_probes` was above [`MAX_PROBES`].
    TooManyProbes,
    /// `successes_to_close` was 0.
    ZeroSuccesses,
    /// `successes_to_close` was above [`MAX_PROBES`].
    TooManySuccesses,
    /// `backoff` was NaN or infinite.
    BackoffNotFinite,
    /// `backoff` was below 1.0.
    BackoffBelowOne,
    /// `max_open_ms` was below `open_ms`.
    MaxOpenBelowOpen,
    /// `probe_timeout_ms` was 0.
    ZeroProbeTimeout,
    /// `failure_rate` was not in `(0, 1]` (or was NaN).
    FailureRateOutOfRange,
    /// `failure_rate` was set without `window_ms` or `window_calls`.
    FailureRateWithoutWindow,
    /// Both `window_ms` and `window_calls` were set.
    BothWindows,
    /// `threshold` was set together with a window key.
    ThresholdWithWindow,
    /// `window_ms` was below [`MIN_WINDOW_MS`] (0 included).
    WindowTooShort,
    /// `window_calls` was 0.
    ZeroWindowCalls,
    /// `window_calls` was above [`MAX_WINDOW_CALLS`].
    WindowCallsTooLarge,
    /// `min_calls` was 0.
    ZeroMinCalls,
    /// `min_calls` was above `window_calls`, so the window could never judge.
    MinCallsAboveWindow,
    /// `min_calls` was set without `window_ms` or `window_calls`.
    MinCallsWithoutWindow,
    /// `slow_call_ms` was 0 (every call would be slow).
    ZeroSlowCall,
    /// `slow_call_ms` (or `slow_call_rate`) was set without a window.
    SlowCallWithoutWindow,
    /// `slow_call_rate` was not in `(0, 1]` (or was NaN).
    SlowCallRateOutOfRange,
    /// `slow_call_rate` was set without `slow_call_ms`.
    SlowCallRateWithoutSlowCall,
}

impl ConfigError {
    /// The builder method (and `#[circuit_breaker]` key) whose value was refused.
    ///
    /// ```
    /// use breaker_core::Config;
    ///
    /// let err = Config::builder().half_open_probes(0).build().unwrap_err();
    /// assert_eq!(err.key(), "half_open_probes");
    /// ```
    pub const fn key(&self) -> &'static str {
        match self {
            ConfigError::ZeroThreshold | ConfigError::ThresholdTooLarge => "threshold",
            ConfigError::ZeroOpen => "open_ms",
            ConfigError::ZeroProbes | ConfigError::TooManyProbes => "half_open_probes",
            ConfigError::ZeroSuccesses | ConfigError::TooManySuccesses => "successes_to_close",
            ConfigError::BackoffNotFinite | ConfigError::BackoffBelowOne => "backoff",
            ConfigError::MaxOpenBelowOpen => "max_open_ms",
            ConfigError::ZeroProbeTimeout => "probe_timeout_ms",
            ConfigError::FailureRateOutOfRange | ConfigError::FailureRateWithoutWindow => {
                "failure_rate"
            }
            ConfigError::BothWindows
            | ConfigError::ZeroWindowCalls
            | ConfigError::WindowCallsTooLarge => "window_calls",
            ConfigError::ThresholdWithWindow => "threshold",
            ConfigError::WindowTooShort => "window_ms",
            ConfigError::ZeroMinCalls
            | ConfigError::MinCallsAboveWindow
            | ConfigError::MinCallsWithoutWindow => "min_calls",
            ConfigError::ZeroSlowCall | ConfigError::SlowCallWithoutWindow => "slow_call_ms",
            ConfigError::SlowCallRateOutOfRange | ConfigError::SlowCallRateWithoutSlowCall => {
                "slow_call_rate"
            }
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            ConfigError::ZeroThreshold => "`threshold` must be at least 1",
            ConfigError::ThresholdTooLarge => "`threshold` must be at most 1048575",
            ConfigError::ZeroOpen => "`open_ms` must be at least 1",
            ConfigError::ZeroProbes => "`half_open_probes` must be at least 1",
            ConfigError::TooManyProbes => "`half_open_probes` must be at most 1023",
            ConfigError::ZeroSuccesses => "`successes_to_close` must be at least 1",
            ConfigError::TooManySuccesses => "`successes_to_close` must be at most 1023",
            ConfigError::BackoffNotFinite => "`backoff` must be a finite number",
            ConfigError::BackoffBelowOne => "`backoff` must be at least 1.0",
            ConfigError::MaxOpenBelowOpen => "`max_open_ms` must be at least `open_ms`",
            ConfigError::ZeroProbeTimeout => "`probe_timeout_ms` must be at least 1",
            ConfigError::FailureRateOutOfRange => {
                "`failure_rate` must be above 0.0 and at most 1.0 (0.5 trips at 50% failures)"
            }
            ConfigError::FailureRateWithoutWindow => {
                "`failure_rate` needs a window: add `window_ms` or `window_calls`"
            }
            ConfigError::BothWindows => {
                "set either `window_ms` (a time window) or `window_calls` (a count window), not both"
            }
            ConfigError::ThresholdWithWindow => {
                "`threshold` counts consecutive failures and a window judges `failure_rate`: remove `threshold` or the window"
            }
            ConfigError::WindowTooShort => {
                "`window_ms` must be at least 10 (one millisecond per bucket)"
            }
            ConfigError::ZeroWindowCalls => "`window_calls` must be at least 1",
            ConfigError::WindowCallsTooLarge => "`window_calls` must be at most 65536",
            ConfigError::ZeroMinCalls => "`min_calls` must be at least 1",
            ConfigError::MinCallsAboveWindow => {
                "`min_calls` must be at most `window_calls`, or the window never judges"
            }
            ConfigError::MinCallsWithoutWindow => {
                "`min_calls` needs a window: add `window_ms` or `window_calls`"
            }
            ConfigError::ZeroSlowCall => "`slow_call_ms` must be at least 1",
            ConfigError::SlowCallWithoutWindow => {
                "`slow_call_ms` needs a window: add `window_ms` or `window_calls`"
            }
            ConfigError::SlowCallRateOutOfRange => {
                "`slow_call_rate` must be above 0.0 and at most 1.0"
            }
            ConfigError::SlowCallRateWithoutSlowCall => {
                "`slow_call_rate` needs `slow_call_ms`, the duration above which a call is slow"
            }
        };
        f.write_str(msg)
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_documented_values() {
        let c = Config::default();
        assert_eq!(c.threshold(), 5);
        assert_eq!(c.open_duration(), Duration::from_secs(30));
        assert_eq!(c.half_open_probes(), 1);
        assert_eq!(c.successes_to_close(), 1);
        assert_eq!(c.backoff(), 2.0);
        assert_eq!(c.max_open_duration(), Duration::from_secs(300));
        assert_eq!(c.probe_timeout(), Duration::from_secs(30));
    }

    #[test]
    fn invalid_values_are_typed_errors_not_panics() {
        let b = Config::builder;
        assert_eq!(b().threshold(0).build(), Err(ConfigError::ZeroThreshold));
        assert_eq!(
            b().threshold(MAX_THRESHOLD + 1).build(),
            Err(ConfigError::ThresholdTooLarge)
        );
        assert_eq!(b().open_ms(0).build(), Err(ConfigError::ZeroOpen));
        assert_eq!(
            b().half_open_probes(0).build(),
            Err(ConfigError::ZeroProbes)
        );
        assert_eq!(
            b().half_open_probes(MAX_PROBES + 1).build(),
            Err(ConfigError::TooManyProbes)
        );
        assert_eq!(
            b().successes_to_close(0).build(),
            Err(ConfigError::ZeroSuccesses)
        );
        assert_eq!(
            b().successes_to_close(MAX_PROBES + 1).build(),
            Err(ConfigError::TooManySuccesses)
        );
        assert_eq!(b().backoff(0.5).build(), Err(ConfigError::BackoffBelowOne));
        assert_eq!(
            b().backoff(f64::NAN).build(),
            Err(ConfigError::BackoffNotFinite)
        );
        assert_eq!(
            b().backoff(f64::INFINITY).build(),
            Err(ConfigError::BackoffNotFinite)
        );
        assert_eq!(
            b().open_ms(10_000).max_open_ms(9_999).build(),
            Err(ConfigError::MaxOpenBelowOpen)
        );
        assert_eq!(
            b().probe_timeout_ms(0).build(),
            Err(ConfigError::ZeroProbeTimeout)
        );
    }

    #[test]
    fn long_open_without_a_cap_is_not_cut_short_by_the_default_cap() {
        let c = Config::builder().open_ms(600_000).build().unwrap();
        assert_eq!(c.max_open_duration(), Duration::from_secs(600));
    }

    #[test]
    fn backoff_grows_to_the_cap_and_saturates_near_u64_max() {
        let c = Config::builder()
            .open_ms(1_000)
            .backoff(3.0)
            .max_open_ms(5_000)
            .build()
            .unwrap();
        assert_eq!(c.grown_open_nanos(1_000_000_000), 3_000_000_000);
        assert_eq!(c.grown_open_nanos(3_000_000_000), 5_000_000_000);
        let huge = Config::builder().open_ms(u64::MAX).build().unwrap();
        assert_eq!(huge.grown_open_nanos(huge.open_nanos()), u64::MAX);
    }
}
