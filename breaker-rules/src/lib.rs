//! The configuration keys of a `breakerbox` circuit breaker and the rules their
//! values obey. Use them through `breakerbox`: this crate is the one source of
//! truth that its runtime builder (`breakerbox::ConfigBuilder`), its
//! `#[circuit_breaker]` attribute and its configuration loader share.
//!
//! - [`config_keys!`] is the table of keys: each key's name, type, role in
//!   choosing the failure policy, whether a live breaker takes a new value, and
//!   the docs of its builder method. Every list of keys (the builder's methods
//!   and getters, [`Values`], [`NAMES`], [`KEYS`], the attribute's parser, the
//!   loader's key table, the admin JSON) is generated from it.
//! - [`retry_keys!`] is the table of a group's retry keys, in the same form:
//!   [`RetryValues`], [`RETRY_KEYS`] and the lists of the attribute and the
//!   loader come from it. They configure no breaker, so they are not in
//!   [`KEYS`].
//! - [`check`] is the rules: it turns the [`Values`] a builder, an attribute or a
//!   file set into a [`Checked`] configuration, or refuses them with a
//!   [`ConfigError`] naming the key to fix. It is `const`, so a configuration
//!   written in code is checked at compile time. [`Checked::values`] reads a
//!   configuration back as the keys that make it; [`check_retry`] is the retry
//!   keys' rule.
//! - [`renamed`] gives the key a former name stands for, so the attribute
//!   and the loader answer it with the name to write.
//!
//! The crate has no dependencies, so the attribute can check its values at
//! expansion time without building the runtime for the host.

#![forbid(unsafe_code)]

mod choice;
mod error;
mod keys;
mod policy;
mod renamed;
mod retry;
mod rules;

pub use crate::choice::{Abandoned, UnknownWord};
pub use crate::error::ConfigError;
pub use crate::keys::{
    index_of, retry_key_bit, Class, KeyInfo, KeySet, KeyValue, RetryValues, Role, Ty, Values, KEYS,
    KEY_COUNT, NAMES, RETRY_KEYS, RETRY_KEY_COUNT, RETRY_NAMES,
};
pub use crate::policy::{FailurePolicy, RateThresholds};
pub use crate::renamed::{renamed, RENAMED};
pub use crate::retry::{check_retry, check_retry_budget_ratio};
pub use crate::rules::{
    check, Checked, ThrottleRules, DEFAULT_FAILURE_RATE, DEFAULT_MIN_CALLS,
    DEFAULT_THROTTLE_MAX_REJECT, DEFAULT_THROTTLE_WINDOW_MS, MAX_HISTOGRAM_MS, MAX_HOLD_MS,
    MAX_PROBES, MAX_THRESHOLD, MAX_WINDOW_CALLS, MIN_WINDOW_MS, WINDOW_BUCKETS,
};
