//! What a [`Config`](crate::Config) (built by the root's
//! [`ConfigBuilder`](crate::ConfigBuilder), refused with a
//! [`ConfigError`](crate::ConfigError)) selects: its [`FailurePolicy`] and
//! a rate window's [`RateThresholds`].
pub use breaker_core::config::{FailurePolicy, KeyValue, RateThresholds};
