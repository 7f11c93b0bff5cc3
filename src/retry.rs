//! Retries beside the root's [`RetryPolicy`](crate::RetryPolicy),
//! [`Retry`](crate::Retry) and [`RetryAfterHint`](crate::RetryAfterHint):
//! the group's [`RetryBudget`], the defaults, what configuration layers
//! over a policy ([`RetryValues`], [`RetryTuning`]), and [`Attempts`], the
//! steps of a retried call for an integration that records each attempt
//! itself.
pub use breaker_core::retry::{
    RetryBudget, RetryTuning, RetryValues, DEFAULT_BUDGET_FLOOR, DEFAULT_BUDGET_RATIO,
    DEFAULT_RETRY_DELAY, DEFAULT_RETRY_MAX_DELAY,
};
pub use breaker_core::Attempts;
