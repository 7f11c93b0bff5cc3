//! What a [`Config`](crate::Config) (built by the root's
//! [`ConfigBuilder`](crate::ConfigBuilder), refused with a
//! [`ConfigError`](crate::ConfigError)) selects: its [`FailurePolicy`], a
//! rate window's [`RateThresholds`], and what an [`Abandoned`] call counts as.
pub use breaker_core::config::{Abandoned, FailurePolicy, KeyValue, RateThresholds};
