//! The retry keys ([`RETRY_KEYS`]): the attribute's, the file's and the
//! variables', with the rule their values obey. They configure a group's
//! retry policy, not its breaker, so they stand apart from [`KEYS`](crate::KEYS).

use crate::error::ConfigError;
use crate::keys::{KeyInfo, Role, Ty};

/// How many retry keys there are.
pub const RETRY_KEY_COUNT: usize = 6;

/// Every retry key, in the order every list of them follows: its name, the
/// `RetryPolicy` builder method it stands for (`retry` is `RetryPolicy::new`),
/// its type (a `u64` is a duration in whole milliseconds) and its role (each
/// applies under every failure policy).
pub const RETRY_KEYS: [KeyInfo; RETRY_KEY_COUNT] = [
    retry_key("retry", "new", Ty::U32),
    retry_key("retry_backoff_ms", "backoff", Ty::U64),
    retry_key("retry_cap_ms", "cap", Ty::U64),
    retry_key("retry_deadline_ms", "deadline", Ty::U64),
    retry_key("retry_budget_ratio", "budget_ratio", Ty::F64),
    retry_key("retry_budget_floor", "budget_floor", Ty::U32),
];

const fn retry_key(name: &'static str, method: &'static str, ty: Ty) -> KeyInfo {
    KeyInfo {
        name,
        method,
        ty,
        role: Role::Any,
    }
}

/// The rule of `retry_budget_ratio`: a share of first attempts, in `[0, 1]`
/// (NaN refused). Every other retry key takes any value of its type.
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
        }
        for good in [0.0, 0.2, 1.0] {
            assert!(check_retry_budget_ratio(good).is_ok(), "{good}");
        }
    }
}
