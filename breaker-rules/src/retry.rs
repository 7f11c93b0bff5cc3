//! The table of retry keys, [`retry_keys!`], and their rule, [`check_retry`]:
//! the attribute's, the file's and the variables' keys of a group's retry
//! policy. They configure the group's retries, not its breaker, so they stand
//! apart from [`KEYS`](crate::KEYS), in [`RETRY_KEYS`](crate::RETRY_KEYS).

use crate::error::ConfigError;
use crate::keys::RetryValues;

/// The table of retry keys, in the order every list of them follows, in the
/// grammar of [`config_keys!`](crate::config_keys): the docs, then `name:
/// type as method, role, class;`. The method is the `RetryPolicy` builder
/// method the key stands for (`retry` is `RetryPolicy::new`); a `u64` is a
/// duration in whole milliseconds, which the method takes as a `Duration`.
/// Each key applies under every failure policy, and a group's retry policy
/// takes a new value from its next attempt on.
///
/// Adding a retry key is one entry here, and the compiler asks for the rest:
/// its rule in [`check_retry`] (which takes [`RetryValues`] apart field by
/// field), the builder method it names, and its value read back from a policy.
#[macro_export]
macro_rules! retry_keys {
    ($callback:ident) => {
        $callback! {
            /// Attempts after the first, at most.
            retry: u32 as new, Any, Live;
            /// The upper end of the first retry's delay, doubled for each
            /// retry after it.
            retry_delay_ms: u64 as delay, Any, Live;
            /// The cap on a backed-off delay.
            retry_max_delay_ms: u64 as max_delay, Any, Live;
            /// No wait that would end later than this after the first attempt.
            retry_deadline_ms: u64 as deadline, Any, Live;
            /// The share of the group's first attempts its budget lets retry,
            /// in `[0, 1]`.
            retry_budget_ratio: f64 as budget_ratio, Any, Live;
            /// The retries a second the group's budget allows whatever the
            /// traffic.
            retry_budget_floor: u32 as budget_floor, Any, Live;
        }
    };
}

/// Judges the retry keys set: `Ok`, or the first rule they break (each
/// [`ConfigError`] names its key).
///
/// ```
/// use breaker_rules::{check_retry, RetryValues};
///
/// let ok = RetryValues { retry: Some(2), retry_budget_ratio: Some(0.1), ..RetryValues::EMPTY };
/// assert!(check_retry(&ok).is_ok());
/// let bad = RetryValues { retry_budget_ratio: Some(1.5), ..RetryValues::EMPTY };
/// assert_eq!(check_retry(&bad).unwrap_err().key(), "retry_budget_ratio");
/// ```
pub const fn check_retry(values: &RetryValues) -> Result<(), ConfigError> {
    // Every key is named here, so a key added to the table without a rule
    // fails to build; the ones without a rule say so.
    let RetryValues {
        // Any number of retries, 0 included: a file turns a group's off with 0.
        retry: _,
        // Any duration: 0 retries at once, `u64::MAX` saturates.
        retry_delay_ms: _,
        retry_max_delay_ms: _,
        retry_deadline_ms: _,
        retry_budget_ratio,
        // Any number a second.
        retry_budget_floor: _,
    } = *values;
    if let Some(ratio) = retry_budget_ratio {
        if let Err(e) = check_retry_budget_ratio(ratio) {
            return Err(e);
        }
    }
    Ok(())
}

/// The rule of `retry_budget_ratio`: a share of first attempts, in `[0, 1]`
/// (NaN refused).
///
/// ```
/// use breaker_rules::check_retry_budget_ratio;
///
/// assert!(check_retry_budget_ratio(0.1).is_ok());
/// assert_eq!(check_retry_budget_ratio(1.5).unwrap_err().key(), "retry_budget_ratio");
/// ```
pub const fn check_retry_budget_ratio(ratio: f64) -> Result<(), ConfigError> {
    if ratio >= 0.0 && ratio <= 1.0 {
        Ok(())
    } else {
        Err(ConfigError::RetryBudgetRatioOutOfRange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Ty, RETRY_KEYS};

    #[test]
    fn every_retry_duration_key_is_in_milliseconds() {
        for key in RETRY_KEYS {
            assert_eq!(key.ty == Ty::U64, key.name.ends_with("_ms"), "{key:?}");
            assert!(key.name.starts_with("retry"), "{key:?}");
        }
    }

    #[test]
    fn a_ratio_outside_zero_to_one_is_refused() {
        for bad in [-0.01, 1.01, f64::NAN, f64::INFINITY] {
            assert!(check_retry_budget_ratio(bad).is_err(), "{bad}");
            let values = RetryValues {
                retry_budget_ratio: Some(bad),
                ..RetryValues::EMPTY
            };
            assert!(check_retry(&values).is_err(), "{bad}");
        }
        for good in [0.0, 0.2, 1.0] {
            assert!(check_retry_budget_ratio(good).is_ok(), "{good}");
        }
    }
}
