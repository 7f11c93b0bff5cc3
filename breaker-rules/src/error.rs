//! [`ConfigError`]: which rule a configuration breaks, and which key to fix.

use std::fmt;

/// Which rule of [`check`](crate::check) a configuration breaks: why a
/// `ConfigBuilder` refused to build, an attribute value is a compile error, or
/// a configuration file is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// `threshold` was 0.
    ZeroThreshold,
    /// `threshold` was above [`MAX_THRESHOLD`](crate::MAX_THRESHOLD).
    ThresholdTooLarge,
    /// `open_ms` was 0.
    ZeroOpen,
    /// `half_open_probes` was 0.
    ZeroProbes,
    /// `half_open_probes` was above [`MAX_PROBES`](crate::MAX_PROBES).
    TooManyProbes,
    /// `successes_to_close` was 0.
    ZeroSuccesses,
    /// `successes_to_close` was above [`MAX_PROBES`](crate::MAX_PROBES).
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
    /// `window_ms` was below [`MIN_WINDOW_MS`](crate::MIN_WINDOW_MS) (0 included).
    WindowTooShort,
    /// `window_calls` was 0.
    ZeroWindowCalls,
    /// `window_calls` was above [`MAX_WINDOW_CALLS`](crate::MAX_WINDOW_CALLS).
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
    /// `timeout_ms` is 0.
    ZeroTimeout,
    /// `max_concurrent` is 0.
    ZeroMaxConcurrent,
    /// `latency_p99_ms` is 0.
    ZeroLatencyP99,
    /// `latency_p99_ms` without a window to judge it over.
    LatencyP99WithoutWindow,
    /// `latency_p99_ms` beside `slow_call_ms`: both set the slow-call rule.
    LatencyP99WithSlowCall,
    /// `ramp_ms` is 0.
    ZeroRamp,
    /// A duration key (named) was given a part of a millisecond: durations are
    /// kept in whole milliseconds.
    NotWholeMillis(&'static str),
    /// `jitter` was not in `[0, 1)` (or was NaN).
    JitterOutOfRange,
    /// `histogram_ms` was 0 or above [`MAX_HISTOGRAM_MS`](crate::MAX_HISTOGRAM_MS).
    HistogramOutOfRange,
    /// `retry_budget_ratio` was not in `[0, 1]` (or was NaN).
    RetryBudgetRatioOutOfRange,
    /// `systemic_share` was not in `(0, 1]` (or was NaN).
    SystemicShareOutOfRange,
    /// `max_open_keys` was not in `(0, 1]` (or was NaN).
    MaxOpenKeysOutOfRange,
    /// `throttle` was below 1.0, infinite or NaN.
    ThrottleBelowOne,
    /// `throttle_window_ms` was below [`MIN_WINDOW_MS`](crate::MIN_WINDOW_MS) (0 included).
    ThrottleWindowTooShort,
    /// `throttle_max_reject` was not in `(0, 1)` (or was NaN).
    ThrottleMaxRejectOutOfRange,
    /// `throttle_min_rps` was negative, infinite or NaN.
    ThrottleMinRpsOutOfRange,
    /// A `throttle_*` key (named) was set without `throttle`.
    ThrottleKeyWithoutThrottle(&'static str),
    /// `max_hold_ms` is not a whole number of seconds from 1 s to
    /// [`MAX_HOLD_MS`](crate::MAX_HOLD_MS).
    MaxHoldOutOfRange,
}

impl ConfigError {
    /// The `#[circuit_breaker]` key (and file key) whose value was refused; a
    /// duration's builder method has a name of its own
    /// ([`KeyInfo::method`](crate::KeyInfo::method): `open_ms` is `open`).
    ///
    /// ```
    /// use breakerbox::Config;
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
            ConfigError::ZeroTimeout => "timeout_ms",
            ConfigError::ZeroMaxConcurrent => "max_concurrent",
            ConfigError::ZeroLatencyP99
            | ConfigError::LatencyP99WithoutWindow
            | ConfigError::LatencyP99WithSlowCall => "latency_p99_ms",
            ConfigError::ZeroRamp => "ramp_ms",
            ConfigError::NotWholeMillis(key) => key,
            ConfigError::JitterOutOfRange => "jitter",
            ConfigError::HistogramOutOfRange => "histogram_ms",
            ConfigError::RetryBudgetRatioOutOfRange => "retry_budget_ratio",
            ConfigError::SystemicShareOutOfRange => "systemic_share",
            ConfigError::MaxOpenKeysOutOfRange => "max_open_keys",
            ConfigError::ThrottleBelowOne => "throttle",
            ConfigError::ThrottleWindowTooShort => "throttle_window_ms",
            ConfigError::ThrottleMaxRejectOutOfRange => "throttle_max_reject",
            ConfigError::ThrottleMinRpsOutOfRange => "throttle_min_rps",
            ConfigError::ThrottleKeyWithoutThrottle(key) => key,
            ConfigError::MaxHoldOutOfRange => "max_hold_ms",
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            ConfigError::NotWholeMillis(key) => {
                return write!(f, "`{key}` must be a whole number of milliseconds");
            }
            ConfigError::ThrottleKeyWithoutThrottle(key) => {
                return write!(
                    f,
                    "`{key}` tunes adaptive throttling: add `throttle` (the multiplier K, 2.0 sends about twice what the dependency accepts)"
                );
            }
            ConfigError::ThrottleBelowOne => {
                "`throttle` must be a finite number of at least 1.0 (2.0 sends about twice what the dependency accepts)"
            }
            ConfigError::ThrottleWindowTooShort => {
                "`throttle_window_ms` must be at least 10 (one millisecond per bucket)"
            }
            ConfigError::ThrottleMaxRejectOutOfRange => {
                "`throttle_max_reject` must be above 0.0 and below 1.0 (0.9 lets one call in ten go)"
            }
            ConfigError::ThrottleMinRpsOutOfRange => {
                "`throttle_min_rps` must be a finite number of at least 0.0 (calls a second)"
            }
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
            ConfigError::ZeroTimeout => {
                "`timeout_ms` must be at least 1 (leave it out for calls without a deadline)"
            }
            ConfigError::ZeroMaxConcurrent => {
                "`max_concurrent` must be at least 1 (leave it out for no cap)"
            }
            ConfigError::ZeroLatencyP99 => "`latency_p99_ms` must be at least 1",
            ConfigError::JitterOutOfRange => {
                "`jitter` must be at least 0.0 and below 1.0 (0.2 opens for 80% to 120% of the duration)"
            }
            ConfigError::LatencyP99WithoutWindow => {
                "`latency_p99_ms` needs a window to judge p99 over: add `window_ms` or `window_calls` (and `min_calls`)"
            }
            ConfigError::LatencyP99WithSlowCall => {
                "`latency_p99_ms` and `slow_call_ms` both set the slow-call rule: `latency_p99_ms = X` is `slow_call_ms = X` tripping when more than 1% of the window's calls are slower; keep one"
            }
            ConfigError::HistogramOutOfRange => {
                "`histogram_ms` must be 1 to 86400000 (a day): the longest call duration with a bucket of its own, 10000 for 1 ms to 10 s"
            }
            ConfigError::RetryBudgetRatioOutOfRange => {
                "`retry_budget_ratio` must be from 0.0 to 1.0: the share of first attempts that may be retried (0.1 for one retry per ten calls)"
            }
            ConfigError::SystemicShareOutOfRange => {
                "`systemic_share` must be above 0.0 and at most 1.0: the share of a keyed group's keys failing at once that opens the group (0.5 for half of them)"
            }
            ConfigError::MaxOpenKeysOutOfRange => {
                "`max_open_keys` must be above 0.0 and at most 1.0: the share of a keyed group's keys that may be open at once on their own (0.2 for a fifth)"
            }
            ConfigError::ZeroRamp => {
                "`ramp_ms` must be at least 1 (leave it out to close to every call at once)"
            }
            ConfigError::MaxHoldOutOfRange => {
                "`max_hold_ms` must be whole seconds from 1000 to 65535000 (about 18 h): the longest a server's wait holds the group (default 3600000, an hour)"
            }
        };
        f.write_str(msg)
    }
}

impl std::error::Error for ConfigError {}
