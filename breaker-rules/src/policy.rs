//! [`FailurePolicy`]: how a closed breaker decides to trip, and the
//! [`RateThresholds`] of a window policy.

/// How a closed breaker decides to trip.
///
/// Chosen by [`check`](crate::check): setting `window_ms` or `window_calls`
/// selects a window policy, otherwise the consecutive policy (with `threshold`)
/// is in force. The docs of `ConfigBuilder` say when to choose which.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum FailurePolicy {
    /// Trip on the `threshold`-th consecutive failure; any success resets the count.
    Consecutive {
        /// Consecutive failures that open the circuit (`3` means the third trips).
        threshold: u32,
    },
    /// Trip on the failure (or slow-call) rate of the outcomes recorded in the
    /// last `window_ms`, kept in [`WINDOW_BUCKETS`](crate::WINDOW_BUCKETS) buckets of `window_ms / 10`.
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

/// In words, with the keys that make it: "consecutive failures (`threshold =
/// 5`)", "a count window (`window_calls = 20`, `failure_rate = 0.5`,
/// `min_calls = 20`)".
impl core::fmt::Display for FailurePolicy {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (kind, size, rates) = match self {
            FailurePolicy::Consecutive { threshold } => {
                return write!(f, "consecutive failures (`threshold = {threshold}`)")
            }
            FailurePolicy::TimeWindow { window_ms, rates } => {
                ("a time window", ("window_ms", *window_ms), rates)
            }
            FailurePolicy::CountWindow {
                window_calls,
                rates,
            } => (
                "a count window",
                ("window_calls", u64::from(*window_calls)),
                rates,
            ),
        };
        write!(
            f,
            "{kind} (`{} = {}`, `failure_rate = {:?}`, `min_calls = {}`",
            size.0, size.1, rates.failure_rate, rates.min_calls
        )?;
        if let Some(ms) = rates.slow_call_ms {
            write!(
                f,
                ", `slow_call_ms = {ms}`, `slow_call_rate = {:?}`",
                rates.slow_call_rate
            )?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_reads_as_the_keys_that_make_it() {
        let count = FailurePolicy::CountWindow {
            window_calls: 20,
            rates: RateThresholds {
                failure_rate: 0.5,
                min_calls: 20,
                slow_call_ms: Some(300),
                slow_call_rate: 1.0,
            },
        };
        assert_eq!(
            count.to_string(),
            "a count window (`window_calls = 20`, `failure_rate = 0.5`, `min_calls = 20`, \
             `slow_call_ms = 300`, `slow_call_rate = 1.0`)"
        );
        let consecutive = FailurePolicy::Consecutive { threshold: 5 };
        assert_eq!(
            consecutive.to_string(),
            "consecutive failures (`threshold = 5`)"
        );
    }
}
