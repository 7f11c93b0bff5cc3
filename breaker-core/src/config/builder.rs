//! [`ConfigBuilder`]: a `const` builder with one method per `#[circuit_breaker]`
//! key, and the checks that turn it into a [`Config`] or a [`ConfigError`].

use super::error::ConfigError;
use super::settings::{Config, FailurePolicy, RateThresholds};

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
    /// One bit per method called, by its index in [`Config::KEYS`].
    explicit: u16,
    timeout_ms: Option<u64>,
    max_concurrent: Option<u32>,
    latency_p99_ms: Option<u64>,
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
            explicit: 0,
            timeout_ms: None,
            max_concurrent: None,
            latency_p99_ms: None,
        }
    }

    /// Marks the key at `index` of [`Config::KEYS`] as set by a method call.
    const fn mark(mut self, index: usize) -> Self {
        self.explicit |= 1 << index;
        self
    }

    /// Consecutive failures that open the circuit: `3` means the third trips.
    /// Selects the consecutive policy; refused together with a window key.
    pub const fn threshold(mut self, threshold: u32) -> Self {
        self.threshold = threshold;
        self.threshold_set = true;
        self.mark(0)
    }

    /// Judge the failure rate over the last `ms` milliseconds (at least
    /// [`Config::MIN_WINDOW_MS`]): selects the time window policy.
    ///
    /// The window is [`Config::WINDOW_BUCKETS`] buckets of `ms / 10`, aligned on the
    /// clock; outcomes expire a bucket at a time, lazily, on the next record or
    /// query. An outcome counts for at least nine tenths of `ms` and never for
    /// `ms` or longer: one exactly `ms` old no longer counts.
    ///
    /// On the default clock, a window of 1 s or more without `slow_call_ms` places
    /// outcomes by [the coarse reading](crate#the-coarse-reading), which lags
    /// by at most one tick: a few per cent of a bucket.
    pub const fn window_ms(mut self, ms: u64) -> Self {
        self.window_ms = Some(ms);
        self.mark(1)
    }

    /// Judge the failure rate over the last `calls` recorded outcomes (1 to
    /// [`Config::MAX_WINDOW_CALLS`]): selects the count window policy.
    pub const fn window_calls(mut self, calls: u32) -> Self {
        self.window_calls = Some(calls);
        self.mark(2)
    }

    /// Share of failures in the window, in `(0, 1]`, that opens the circuit
    /// (default [`Config::DEFAULT_FAILURE_RATE`]); `0.5` trips at 50%, not above it.
    /// Needs a window.
    pub const fn failure_rate(mut self, rate: f64) -> Self {
        self.failure_rate = Some(rate);
        self.mark(3)
    }

    /// Outcomes (successes and failures; ignored errors do not count) the window
    /// must hold before it judges; default [`Config::DEFAULT_MIN_CALLS`] for a time
    /// window and `window_calls` for a count window, which may not be exceeded.
    /// Needs a window.
    pub const fn min_calls(mut self, calls: u32) -> Self {
        self.min_calls = Some(calls);
        self.mark(4)
    }

    /// A call taking longer than `ms` milliseconds, measured from claim to
    /// verdict on the breaker's clock, is slow, whether it succeeded or failed;
    /// exactly `ms` is not slow. Needs a window; trips at `slow_call_rate`
    /// (default 1.0: every call in the window slow).
    pub const fn slow_call_ms(mut self, ms: u64) -> Self {
        self.slow_call_ms = Some(ms);
        self.mark(5)
    }

    /// Share of slow calls in the window, in `(0, 1]`, that opens the circuit,
    /// even if every call succeeded. Needs `slow_call_ms`.
    pub const fn slow_call_rate(mut self, rate: f64) -> Self {
        self.slow_call_rate = Some(rate);
        self.mark(6)
    }

    /// Milliseconds the circuit stays open before the next claim may probe.
    pub const fn open_ms(mut self, ms: u64) -> Self {
        self.open_ms = ms;
        self.mark(7)
    }

    /// Probes allowed in flight at once while half-open.
    pub const fn half_open_probes(mut self, probes: u32) -> Self {
        self.half_open_probes = probes;
        self.mark(8)
    }

    /// Probe successes that close the circuit.
    pub const fn successes_to_close(mut self, successes: u32) -> Self {
        self.successes_to_close = successes;
        self.mark(9)
    }

    /// Factor (`>= 1.0`) the open duration grows by after each failed probe;
    /// `1.0` keeps it constant.
    pub const fn backoff(mut self, factor: f64) -> Self {
        self.backoff = factor;
        self.mark(10)
    }

    /// Cap, in milliseconds, on the grown open duration. Must be `>= open_ms`.
    pub const fn max_open_ms(mut self, ms: u64) -> Self {
        self.max_open_ms = Some(ms);
        self.mark(11)
    }

    /// Milliseconds a probe may stay in flight before its slot is reclaimed and its
    /// outcome, when it finally comes, is counted as stale.
    pub const fn probe_timeout_ms(mut self, ms: u64) -> Self {
        self.probe_timeout_ms = ms;
        self.mark(12)
    }

    /// Deadline, in milliseconds, of one async call: when it passes first, the
    /// call's future is dropped, the call counts as a **failure** (and, lasting
    /// at least `ms` on the breaker's clock, as a slow call when `slow_call_ms`
    /// is below `ms`), and the caller gets a
    /// [`TimedOut`](crate::TimedOut) error.
    ///
    /// Enforced by the async helpers that take a [`Timer`](crate::Timer)
    /// ([`Breaker::call_async_guarded`](crate::Breaker::call_async_guarded)) and
    /// by `#[circuit_breaker]` on an async fn that names the key. A sync call
    /// cannot be interrupted from outside its thread, so the sync helpers ignore
    /// it and the attribute refuses it on a sync fn. Costs one timer registration
    /// per call.
    pub const fn timeout_ms(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self.mark(13)
    }

    /// Bulkhead: at most `calls` calls of the group in flight at once (probes
    /// included). A call over the cap is refused at once with
    /// [`OpenReason::BulkheadFull`](crate::OpenReason::BulkheadFull), counted in
    /// `rejected` and `bulkhead_rejected`, never as a failure of the dependency.
    ///
    /// Enforced by the guarded helpers
    /// ([`Breaker::call_guarded`](crate::Breaker::call_guarded),
    /// [`Breaker::call_async_guarded`](crate::Breaker::call_async_guarded),
    /// [`Breaker::enter`](crate::Breaker::enter)) and by `#[circuit_breaker]`
    /// when it names the key; the plain `call` helpers and `try_acquire` do not
    /// look at it, so a group without it pays nothing.
    pub const fn max_concurrent(mut self, calls: u32) -> Self {
        self.max_concurrent = Some(calls);
        self.mark(14)
    }

    /// Opens the circuit when the p99 latency of the calls in the window
    /// (successes and failures, claim to verdict on the breaker's clock) is
    /// above `ms` milliseconds, once the window holds `min_calls` of them: a
    /// dependency that answers every call, but slowly, trips. Needs `window_ms`
    /// or `window_calls`.
    ///
    /// The judgement over the window's calls is exact (p99, by nearest rank,
    /// is above `ms` exactly when more than 1% of them took longer than `ms`).
    /// The window is kept in ten buckets, as a time window is: a tenth of
    /// `window_ms`, or of `window_calls` calls (a count window's latency view
    /// then holds the last `window_calls` calls and at most a tenth more). Each
    /// bucket also keeps a fixed latency histogram (240 log-linear bins, about
    /// 1 KiB, no allocation per call) for the p99 in
    /// [`Metrics`](crate::Metrics): bins are 1 µs wide below 16 µs and at most
    /// 1/8 of their lower bound (12.5%) above, up to 2^31 µs (about 36 min);
    /// longer calls share the last bin. Each recorded call takes a short
    /// uncontended lock.
    pub const fn latency_p99_ms(mut self, ms: u64) -> Self {
        self.latency_p99_ms = Some(ms);
        self.mark(15)
    }

    /// Validates and returns the config.
    pub const fn build(self) -> Result<Config, ConfigError> {
        if self.threshold == 0 {
            return Err(ConfigError::ZeroThreshold);
        }
        if self.threshold > Config::MAX_THRESHOLD {
            return Err(ConfigError::ThresholdTooLarge);
        }
        if self.open_ms == 0 {
            return Err(ConfigError::ZeroOpen);
        }
        if self.half_open_probes == 0 {
            return Err(ConfigError::ZeroProbes);
        }
        if self.half_open_probes > Config::MAX_PROBES {
            return Err(ConfigError::TooManyProbes);
        }
        if self.successes_to_close == 0 {
            return Err(ConfigError::ZeroSuccesses);
        }
        if self.successes_to_close > Config::MAX_PROBES {
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
        if let Some(0) = self.timeout_ms {
            return Err(ConfigError::ZeroTimeout);
        }
        if let Some(0) = self.max_concurrent {
            return Err(ConfigError::ZeroMaxConcurrent);
        }
        match self.latency_p99_ms {
            Some(0) => return Err(ConfigError::ZeroLatencyP99),
            Some(_) if self.window_ms.is_none() && self.window_calls.is_none() => {
                return Err(ConfigError::LatencyP99WithoutWindow)
            }
            _ => {}
        }
        Ok(Config {
            policy,
            open_ms: self.open_ms,
            half_open_probes: self.half_open_probes,
            successes_to_close: self.successes_to_close,
            backoff: self.backoff,
            max_open_ms,
            probe_timeout_ms: self.probe_timeout_ms,
            explicit: self.explicit,
            timeout_ms: self.timeout_ms,
            max_concurrent: self.max_concurrent,
            latency_p99_ms: self.latency_p99_ms,
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
            if ms < Config::MIN_WINDOW_MS {
                return Err(ConfigError::WindowTooShort);
            }
        }
        if let Some(calls) = self.window_calls {
            if calls == 0 {
                return Err(ConfigError::ZeroWindowCalls);
            }
            if calls > Config::MAX_WINDOW_CALLS {
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
            None => Config::DEFAULT_FAILURE_RATE,
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
                        None => Config::DEFAULT_MIN_CALLS,
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
