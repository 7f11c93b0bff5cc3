//! [`check`]: the rules a configuration obeys, and the [`Checked`] configuration
//! it makes of the [`Values`] set, with every default filled in.

use std::num::{NonZeroU32, NonZeroU64, NonZeroU8};

use crate::choice::Abandoned;
use crate::error::ConfigError;
use crate::keys::Values;
use crate::policy::{FailurePolicy, RateThresholds};

/// The largest `threshold` a consecutive-failure policy accepts (2^20 - 1): the
/// count shares the breaker's one atomic word with its state.
pub const MAX_THRESHOLD: u32 = (1 << 20) - 1;
/// The largest `half_open_probes` and `successes_to_close` accepted.
pub const MAX_PROBES: u32 = (1 << 10) - 1;
/// The largest `window_calls` accepted: the ring keeps one byte per call.
pub const MAX_WINDOW_CALLS: u32 = 1 << 16;
/// Buckets a time window is split into: outcomes expire one bucket at a time.
pub const WINDOW_BUCKETS: u32 = 10;
/// The shortest `window_ms` accepted: one millisecond per bucket.
pub const MIN_WINDOW_MS: u64 = WINDOW_BUCKETS as u64;
/// `failure_rate` of a window policy when none is set.
pub const DEFAULT_FAILURE_RATE: f64 = 0.5;
/// The largest `histogram_ms` accepted (a day): its buckets, 1, 2.5 and 5
/// times each power of ten of milliseconds, end at 10^8 ms.
pub const MAX_HISTOGRAM_MS: u64 = 86_400_000;
/// The largest `max_hold_ms` accepted: 65,535 seconds (about 18 hours). The
/// key takes whole seconds, in milliseconds as every duration key.
pub const MAX_HOLD_MS: u64 = u16::MAX as u64 * 1_000;
/// `min_calls` of a time window when none is set (a count window defaults to
/// its `window_calls`: it judges once full).
pub const DEFAULT_MIN_CALLS: u32 = 10;
/// `throttle_window_ms` when none is set: the two minutes of the SRE book's
/// client-side throttling.
pub const DEFAULT_THROTTLE_WINDOW_MS: u64 = 120_000;
/// `throttle_max_reject` when none is set: one call in ten always goes.
pub const DEFAULT_THROTTLE_MAX_REJECT: f64 = 0.9;

const DEFAULT_THRESHOLD: u32 = 5;
const DEFAULT_OPEN_MS: u64 = 30_000;
const DEFAULT_PROBES: u32 = 1;
const DEFAULT_SUCCESSES: u32 = 1;
const DEFAULT_BACKOFF: f64 = 1.0;
/// The cap on a grown open duration when `max_open_ms` is not set (or
/// `open_ms`, when that is longer).
const DEFAULT_MAX_OPEN_MS: u64 = 300_000;
const DEFAULT_PROBE_TIMEOUT_MS: u64 = 30_000;
/// The longest hold when `max_hold_ms` is not set: an hour.
const DEFAULT_MAX_HOLD_MS: u64 = 3_600_000;

/// A configuration that obeys every rule, with every default filled in: what a
/// breaker runs with.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Checked {
    /// The failure policy of the closed state.
    pub policy: FailurePolicy,
    /// The first open duration after a trip.
    pub open_ms: u64,
    /// Probes in flight at once while half-open.
    pub half_open_probes: u32,
    /// Probe successes that close the circuit.
    pub successes_to_close: u32,
    /// Growth factor of the open duration after each failed probe.
    pub backoff: f64,
    /// Cap on the grown open duration.
    pub max_open_ms: u64,
    /// Lease of one probe.
    pub probe_timeout_ms: u64,
    /// Deadline of one async call, when calls are timed out (never zero, so the
    /// field is as small as a `u64`).
    pub timeout_ms: Option<NonZeroU64>,
    /// The bulkhead's cap, when calls are capped (never zero: the option
    /// is as small as a `u32`, which keeps a breaker's config in its layout).
    pub max_concurrent: Option<NonZeroU32>,
    /// The p99 latency above which the window trips, when latency is judged
    /// (never zero).
    pub latency_p99_ms: Option<NonZeroU64>,
    /// How long traffic ramps back in after the circuit closes, when it ramps
    /// (never zero: a `NonZeroU64` keeps the field as small as a `u64`).
    pub ramp_ms: Option<NonZeroU64>,
    /// Share by which each open duration is stretched or shortened at random.
    pub jitter: f64,
    /// Whether the breaker starts in shadow mode: admitting what it would refuse.
    pub shadow: bool,
    /// The longest call duration the call-duration histogram places in a
    /// bucket of its own, when the group keeps one (never zero).
    pub histogram_ms: Option<NonZeroU64>,
    /// In a keyed group, the share of its keys failing at once that opens
    /// the whole group, when the group judges as one, in whole percent
    /// (never zero: a byte keeps a breaker's config in its layout).
    pub systemic_share: Option<NonZeroU8>,
    /// In a keyed group, the most keys open at once on their own, as a share
    /// of the keys it holds, in whole percent, when capped (never zero).
    pub max_open_keys: Option<NonZeroU8>,
    /// The longest a hold lasts, in whole seconds (`max_hold_ms` / 1000, at
    /// most [`MAX_HOLD_MS`]: 16 bits keep a breaker's config in its layout).
    pub max_hold_secs: u16,
    /// Client-side adaptive throttling, when the group throttles.
    pub throttle: Option<ThrottleRules>,
    /// What a call dropped before its verdict counts as.
    pub abandoned: Abandoned,
}

/// The numbers of a group's adaptive throttling (the `throttle*` keys), checked.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct ThrottleRules {
    /// The multiplier `K` (`throttle`), at least 1.
    pub k: f64,
    /// The window requests and accepts are counted over (never zero: the
    /// option stays as small as the four numbers).
    pub window_ms: NonZeroU64,
    /// The most the throttle refuses, in `(0, 1)`.
    pub max_reject: f64,
    /// The request rate (per second) below which nothing is throttled.
    pub min_rps: f64,
}

/// Judges `values` by every rule: the configuration they make, or the first
/// rule they break (each [`ConfigError`] names its key).
///
/// Every key of [`Values`] is named here, so a key added to the table without
/// a rule fails to build.
///
/// ```
/// use breaker_rules::{check, ConfigError, Values};
///
/// let three = Values { threshold: Some(3), ..Values::EMPTY };
/// assert_eq!(check(&three).unwrap().open_ms, 30_000);
/// let zero = Values { open_ms: Some(0), ..Values::EMPTY };
/// assert_eq!(check(&zero), Err(ConfigError::ZeroOpen));
/// ```
pub const fn check(values: &Values) -> Result<Checked, ConfigError> {
    let Values {
        threshold,
        window_ms,
        window_calls,
        failure_rate,
        min_calls,
        slow_call_ms,
        slow_call_rate,
        open_ms,
        half_open_probes,
        successes_to_close,
        backoff,
        max_open_ms,
        probe_timeout_ms,
        timeout_ms,
        max_concurrent,
        latency_p99_ms,
        ramp_ms,
        jitter,
        shadow,
        histogram_ms,
        systemic_share,
        max_open_keys,
        throttle,
        throttle_window_ms,
        throttle_max_reject,
        throttle_min_rps,
        max_hold_ms,
        abandoned,
    } = *values;
    let window = PolicyKeys {
        threshold,
        window_ms,
        window_calls,
        failure_rate,
        min_calls,
        slow_call_ms,
        slow_call_rate,
    };
    let threshold = or_u32(threshold, DEFAULT_THRESHOLD);
    let open_ms = or_u64(open_ms, DEFAULT_OPEN_MS);
    let half_open_probes = or_u32(half_open_probes, DEFAULT_PROBES);
    let successes_to_close = or_u32(successes_to_close, DEFAULT_SUCCESSES);
    let backoff = match backoff {
        Some(factor) => factor,
        None => DEFAULT_BACKOFF,
    };
    let probe_timeout_ms = or_u64(probe_timeout_ms, DEFAULT_PROBE_TIMEOUT_MS);
    if threshold == 0 {
        return Err(ConfigError::ZeroThreshold);
    }
    if threshold > MAX_THRESHOLD {
        return Err(ConfigError::ThresholdTooLarge);
    }
    if open_ms == 0 {
        return Err(ConfigError::ZeroOpen);
    }
    if half_open_probes == 0 {
        return Err(ConfigError::ZeroProbes);
    }
    if half_open_probes > MAX_PROBES {
        return Err(ConfigError::TooManyProbes);
    }
    if successes_to_close == 0 {
        return Err(ConfigError::ZeroSuccesses);
    }
    if successes_to_close > MAX_PROBES {
        return Err(ConfigError::TooManySuccesses);
    }
    if backoff.is_nan() || backoff.is_infinite() {
        return Err(ConfigError::BackoffNotFinite);
    }
    if backoff < 1.0 {
        return Err(ConfigError::BackoffBelowOne);
    }
    let max_open_ms = match max_open_ms {
        Some(ms) if ms < open_ms => return Err(ConfigError::MaxOpenBelowOpen),
        Some(ms) => ms,
        None if open_ms > DEFAULT_MAX_OPEN_MS => open_ms,
        None => DEFAULT_MAX_OPEN_MS,
    };
    if probe_timeout_ms == 0 {
        return Err(ConfigError::ZeroProbeTimeout);
    }
    let policy = match policy(&window, threshold) {
        Ok(policy) => policy,
        Err(e) => return Err(e),
    };
    if let Some(0) = timeout_ms {
        return Err(ConfigError::ZeroTimeout);
    }
    if let Some(0) = max_concurrent {
        return Err(ConfigError::ZeroMaxConcurrent);
    }
    match latency_p99_ms {
        Some(0) => return Err(ConfigError::ZeroLatencyP99),
        Some(_) if window.window_ms.is_none() && window.window_calls.is_none() => {
            return Err(ConfigError::LatencyP99WithoutWindow)
        }
        // The p99 rule is the slow-call rule at a rate of 1%: one group has one.
        Some(_) if values.slow_call_ms.is_some() => {
            return Err(ConfigError::LatencyP99WithSlowCall)
        }
        _ => {}
    }
    let ramp_ms = match ramp_ms {
        Some(ms) => match NonZeroU64::new(ms) {
            Some(ms) => Some(ms),
            None => return Err(ConfigError::ZeroRamp),
        },
        None => None,
    };
    let jitter = match jitter {
        Some(share) if share.is_nan() || share < 0.0 || share >= 1.0 => {
            return Err(ConfigError::JitterOutOfRange)
        }
        Some(share) => share,
        None => 0.0,
    };
    if let Some(ms) = histogram_ms {
        if ms == 0 || ms > MAX_HISTOGRAM_MS {
            return Err(ConfigError::HistogramOutOfRange);
        }
    }
    let systemic_share = match systemic_share {
        Some(share) if !is_share(share) => return Err(ConfigError::SystemicShareOutOfRange),
        Some(share) => Some(percent(share)),
        None => None,
    };
    let max_open_keys = match max_open_keys {
        Some(share) if !is_share(share) => return Err(ConfigError::MaxOpenKeysOutOfRange),
        Some(share) => Some(percent(share)),
        None => None,
    };
    let throttle = match throttle_rules(
        throttle,
        throttle_window_ms,
        throttle_max_reject,
        throttle_min_rps,
    ) {
        Ok(throttle) => throttle,
        Err(e) => return Err(e),
    };
    let max_hold_secs = match or_u64(max_hold_ms, DEFAULT_MAX_HOLD_MS) {
        ms if ms == 0 || ms > MAX_HOLD_MS || ms % 1_000 != 0 => {
            return Err(ConfigError::MaxHoldOutOfRange)
        }
        ms => (ms / 1_000) as u16,
    };
    Ok(Checked {
        systemic_share,
        max_open_keys,
        throttle,
        jitter,
        histogram_ms: non_zero(histogram_ms),
        policy,
        open_ms,
        half_open_probes,
        successes_to_close,
        backoff,
        max_open_ms,
        probe_timeout_ms,
        timeout_ms: non_zero(timeout_ms),
        max_concurrent: match max_concurrent {
            Some(cap) => NonZeroU32::new(cap),
            None => None,
        },
        latency_p99_ms: non_zero(latency_p99_ms),
        ramp_ms,
        // Any value is a mode: nothing to refuse.
        shadow: matches!(shadow, Some(true)),
        max_hold_secs,
        // Either word is a policy: nothing to refuse.
        abandoned: match abandoned {
            Some(abandoned) => abandoned,
            None => Abandoned::Ignore,
        },
    })
}

impl Checked {
    /// The keys that make this configuration, each with the value the breaker
    /// runs with: defaults filled in, a count window's `min_calls` derived, and
    /// `None` for a key that means nothing here (`threshold` under a window,
    /// the rates under the consecutive policy, an unset option). [`check`] of
    /// them gives this configuration back.
    ///
    /// Every field of `Checked` is read here, so a field added without its
    /// key's value fails to build.
    ///
    /// ```
    /// use breaker_rules::{check, Values};
    ///
    /// let set = Values { window_calls: Some(20), shadow: Some(true), ..Values::EMPTY };
    /// let checked = check(&set).unwrap();
    /// let values = checked.values();
    /// assert_eq!(values.min_calls, Some(20)); // a count window judges once full
    /// assert_eq!(values.shadow, Some(true));
    /// assert_eq!(values.threshold, None);
    /// assert_eq!(check(&values), Ok(checked));
    /// ```
    pub const fn values(&self) -> Values {
        let Checked {
            policy,
            open_ms,
            half_open_probes,
            successes_to_close,
            backoff,
            max_open_ms,
            probe_timeout_ms,
            timeout_ms,
            max_concurrent,
            latency_p99_ms,
            ramp_ms,
            jitter,
            shadow,
            histogram_ms,
            systemic_share,
            max_open_keys,
            throttle,
            max_hold_secs,
            abandoned,
        } = *self;
        let (threshold, window_ms, window_calls, rates) = match policy {
            FailurePolicy::Consecutive { threshold } => (Some(threshold), None, None, None),
            FailurePolicy::TimeWindow { window_ms, rates } => {
                (None, Some(window_ms), None, Some(rates))
            }
            FailurePolicy::CountWindow {
                window_calls,
                rates,
            } => (None, None, Some(window_calls), Some(rates)),
        };
        let (failure_rate, min_calls, slow_call_ms, slow_call_rate) = match rates {
            Some(RateThresholds {
                failure_rate,
                min_calls,
                slow_call_ms,
                slow_call_rate,
            }) => (
                Some(failure_rate),
                Some(min_calls),
                slow_call_ms,
                match slow_call_ms {
                    Some(_) => Some(slow_call_rate),
                    None => None,
                },
            ),
            None => (None, None, None, None),
        };
        Values {
            threshold,
            window_ms,
            window_calls,
            failure_rate,
            min_calls,
            slow_call_ms,
            slow_call_rate,
            open_ms: Some(open_ms),
            half_open_probes: Some(half_open_probes),
            successes_to_close: Some(successes_to_close),
            backoff: Some(backoff),
            max_open_ms: Some(max_open_ms),
            probe_timeout_ms: Some(probe_timeout_ms),
            timeout_ms: get_u64(timeout_ms),
            max_concurrent: match max_concurrent {
                Some(cap) => Some(cap.get()),
                None => None,
            },
            latency_p99_ms: get_u64(latency_p99_ms),
            ramp_ms: get_u64(ramp_ms),
            jitter: Some(jitter),
            shadow: Some(shadow),
            histogram_ms: get_u64(histogram_ms),
            systemic_share: share(systemic_share),
            max_open_keys: share(max_open_keys),
            throttle: match throttle {
                Some(t) => Some(t.k),
                None => None,
            },
            throttle_window_ms: match throttle {
                Some(t) => Some(t.window_ms.get()),
                None => None,
            },
            throttle_max_reject: match throttle {
                Some(t) => Some(t.max_reject),
                None => None,
            },
            throttle_min_rps: match throttle {
                Some(t) => Some(t.min_rps),
                None => None,
            },
            max_hold_ms: Some(max_hold_secs as u64 * 1_000),
            abandoned: Some(abandoned),
        }
    }
}

/// A share kept in whole percent, as an `f64` again.
const fn share(percent: Option<NonZeroU8>) -> Option<f64> {
    match percent {
        Some(p) => Some(p.get() as f64 / 100.0),
        None => None,
    }
}

/// A share in `(0, 1]` in whole percent, to the nearest, and at least one.
const fn percent(share: f64) -> NonZeroU8 {
    match NonZeroU8::new((share * 100.0 + 0.5) as u8) {
        Some(p) => p,
        None => NonZeroU8::MIN,
    }
}

/// Whether `share` is in `(0, 1]` (NaN is not).
const fn is_share(share: f64) -> bool {
    share > 0.0 && share <= 1.0
}

/// The throttle's keys, checked: `None` when `throttle` is unset (and then no
/// other `throttle_*` key may be).
const fn throttle_rules(
    k: Option<f64>,
    window_ms: Option<u64>,
    max_reject: Option<f64>,
    min_rps: Option<f64>,
) -> Result<Option<ThrottleRules>, ConfigError> {
    // Each value by its own rule first, so a bad one is named for what is
    // wrong with it, with or without `throttle` beside it.
    let window_ms = match window_ms {
        Some(ms) if ms < MIN_WINDOW_MS => return Err(ConfigError::ThrottleWindowTooShort),
        Some(ms) => Some(ms),
        None => None,
    };
    let max_reject = match max_reject {
        Some(cap) if !(cap > 0.0 && cap < 1.0) => {
            return Err(ConfigError::ThrottleMaxRejectOutOfRange)
        }
        cap => cap,
    };
    let min_rps = match min_rps {
        Some(rps) if rps.is_nan() || rps < 0.0 || rps.is_infinite() => {
            return Err(ConfigError::ThrottleMinRpsOutOfRange)
        }
        rps => rps,
    };
    let Some(k) = k else {
        if window_ms.is_some() {
            return Err(ConfigError::ThrottleKeyWithoutThrottle(
                "throttle_window_ms",
            ));
        }
        if max_reject.is_some() {
            return Err(ConfigError::ThrottleKeyWithoutThrottle(
                "throttle_max_reject",
            ));
        }
        if min_rps.is_some() {
            return Err(ConfigError::ThrottleKeyWithoutThrottle("throttle_min_rps"));
        }
        return Ok(None);
    };
    if k.is_nan() || k < 1.0 || k.is_infinite() {
        return Err(ConfigError::ThrottleBelowOne);
    }
    let window_ms = match window_ms {
        Some(ms) => ms,
        None => DEFAULT_THROTTLE_WINDOW_MS,
    };
    let Some(window_ms) = NonZeroU64::new(window_ms) else {
        return Err(ConfigError::ThrottleWindowTooShort);
    };
    Ok(Some(ThrottleRules {
        k,
        window_ms,
        max_reject: match max_reject {
            Some(cap) => cap,
            None => DEFAULT_THROTTLE_MAX_REJECT,
        },
        min_rps: match min_rps {
            Some(rps) => rps,
            None => 0.0,
        },
    }))
}

const fn get_u64(value: Option<NonZeroU64>) -> Option<u64> {
    match value {
        Some(v) => Some(v.get()),
        None => None,
    }
}

/// The keys that choose and tune the failure policy.
struct PolicyKeys {
    threshold: Option<u32>,
    window_ms: Option<u64>,
    window_calls: Option<u32>,
    failure_rate: Option<f64>,
    min_calls: Option<u32>,
    slow_call_ms: Option<u64>,
    slow_call_rate: Option<f64>,
}

/// `value` as a `NonZeroU64`, for a value the rules above refused when zero.
const fn non_zero(value: Option<u64>) -> Option<NonZeroU64> {
    match value {
        Some(v) => NonZeroU64::new(v),
        None => None,
    }
}

const fn or_u32(value: Option<u32>, default: u32) -> u32 {
    match value {
        Some(v) => v,
        None => default,
    }
}

const fn or_u64(value: Option<u64>, default: u64) -> u64 {
    match value {
        Some(v) => v,
        None => default,
    }
}

/// The failure policy the window keys select, validated.
const fn policy(values: &PolicyKeys, threshold: u32) -> Result<FailurePolicy, ConfigError> {
    if let Some(rate) = values.failure_rate {
        if !valid_rate(rate) {
            return Err(ConfigError::FailureRateOutOfRange);
        }
    }
    if let Some(rate) = values.slow_call_rate {
        if !valid_rate(rate) {
            return Err(ConfigError::SlowCallRateOutOfRange);
        }
        if values.slow_call_ms.is_none() {
            return Err(ConfigError::SlowCallRateWithoutSlowCall);
        }
    }
    if let Some(0) = values.min_calls {
        return Err(ConfigError::ZeroMinCalls);
    }
    if let Some(0) = values.slow_call_ms {
        return Err(ConfigError::ZeroSlowCall);
    }
    if let Some(ms) = values.window_ms {
        if ms < MIN_WINDOW_MS {
            return Err(ConfigError::WindowTooShort);
        }
    }
    if let Some(calls) = values.window_calls {
        if calls == 0 {
            return Err(ConfigError::ZeroWindowCalls);
        }
        if calls > MAX_WINDOW_CALLS {
            return Err(ConfigError::WindowCallsTooLarge);
        }
    }
    let windowed = values.window_ms.is_some() || values.window_calls.is_some();
    if !windowed {
        if values.failure_rate.is_some() {
            return Err(ConfigError::FailureRateWithoutWindow);
        }
        if values.min_calls.is_some() {
            return Err(ConfigError::MinCallsWithoutWindow);
        }
        if values.slow_call_ms.is_some() {
            return Err(ConfigError::SlowCallWithoutWindow);
        }
        return Ok(FailurePolicy::Consecutive { threshold });
    }
    if values.window_ms.is_some() && values.window_calls.is_some() {
        return Err(ConfigError::BothWindows);
    }
    if values.threshold.is_some() {
        return Err(ConfigError::ThresholdWithWindow);
    }
    let failure_rate = match values.failure_rate {
        Some(rate) => rate,
        None => DEFAULT_FAILURE_RATE,
    };
    let slow_call_rate = match values.slow_call_rate {
        Some(rate) => rate,
        None => 1.0,
    };
    match (values.window_ms, values.window_calls) {
        (Some(window_ms), _) => Ok(FailurePolicy::TimeWindow {
            window_ms,
            rates: RateThresholds {
                failure_rate,
                min_calls: or_u32(values.min_calls, DEFAULT_MIN_CALLS),
                slow_call_ms: values.slow_call_ms,
                slow_call_rate,
            },
        }),
        (None, Some(window_calls)) => {
            let min_calls = match values.min_calls {
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
                    slow_call_ms: values.slow_call_ms,
                    slow_call_rate,
                },
            })
        }
        (None, None) => Ok(FailurePolicy::Consecutive { threshold }),
    }
}

/// A rate in `(0, 1]`; NaN is not.
const fn valid_rate(rate: f64) -> bool {
    rate > 0.0 && rate <= 1.0
}
