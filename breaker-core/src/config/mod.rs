//! What a breaker is told: [`Config`], built and validated by [`ConfigBuilder`],
//! or refused with a [`ConfigError`].
//!
//! Every `#[circuit_breaker]` key has a builder method of the same name and meaning,
//! all made from one table of keys and judged by one set of rules (`breaker_rules`),
//! and the builder is `const`, so a call site's config is checked at compile time.

mod builder;
mod settings;
#[cfg(test)]
mod tests;
mod values;

pub use self::builder::ConfigBuilder;
pub use self::settings::{Config, FailurePolicy, RateThresholds};
pub use breaker_rules::{Abandoned, ConfigError, KeyValue};
