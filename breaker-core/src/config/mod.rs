//! What a breaker is told: [`Config`], built and validated by [`ConfigBuilder`],
//! or refused with a [`ConfigError`].
//!
//! Every `#[circuit_breaker]` key has a builder method of the same name and meaning,
//! and the builder is `const`, so a call site's config is checked at compile time.

mod builder;
mod error;
mod settings;
#[cfg(test)]
mod tests;

pub use self::builder::ConfigBuilder;
pub use self::error::ConfigError;
pub use self::settings::{Config, FailurePolicy, RateThresholds};
