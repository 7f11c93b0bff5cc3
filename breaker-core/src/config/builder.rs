//! [`ConfigBuilder`]: a `const` builder with one method per `#[circuit_breaker]`
//! key, and the checks that turn it into a [`Config`] or a [`ConfigError`].

use std::time::Duration;

use breaker_rules::{Abandoned, Values};

use super::settings::Config;
use super::ConfigError;

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

impl Config {
    /// The configuration every unset builder method falls back to.
    pub const DEFAULT: Config = match ConfigBuilder::new().build() {
        Ok(config) => config,
        Err(_) => panic!("the default config is valid"),
    };

    /// Starts a builder holding the defaults.
    pub const fn builder() -> ConfigBuilder {
        ConfigBuilder::new()
    }
}

/// Builds a [`Config`]; every method is `const` and mirrors an attribute key.
///
/// # Choosing a failure policy
///
/// - **Consecutive** (`threshold`, the default): trips on the `threshold`-th
///   failure in a row. Costs nothing on success (no clock read, no write) and reacts
///   fast to a dependency that is hard down. Blind spot: a dependency failing 80% of
///   the time with scattered successes never trips it, since every success resets
///   the count.
/// - **Time window** (`window_ms`, with `failure_rate`, `min_calls`): judges the
///   share of failures in the last `window_ms`. Catches partial outages whatever the
///   traffic pattern, and forgets old failures by age, so a quiet service is judged
///   on recent calls only. Costs a clock read per call and a few atomic adds per
///   outcome; needs `min_calls` outcomes in the window before it judges, so a
///   low-traffic dependency may never be judged (lower `min_calls` or use a count
///   window).
/// - **Count window** (`window_calls`): judges the share of failures in the last
///   `window_calls` outcomes, however old. The sample size is fixed, so low and
///   bursty traffic are judged alike; but an outcome from an hour ago weighs as
///   much as one from a second ago. Each outcome takes a short uncontended
///   critical section (a few nanoseconds) to update the ring.
/// - **Slow calls** (`slow_call_ms`, `slow_call_rate`) ride on either window: a
///   dependency that answers, but too slowly, trips the breaker even when every
///   call succeeds.
///
/// Mixing `threshold` with a window key is refused: the two policies judge
/// differently and the builder will not guess which one was meant.
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::{Config, ConfigError};
///
/// let by_count = Config::builder().window_calls(50).failure_rate(0.2).build()?;
/// assert_eq!(by_count.min_calls(), Some(50)); // judges once the ring is full
///
/// let slow = Config::builder().window(Duration::from_secs(60)).slow_call(Duration::from_secs(2)).build()?;
/// assert_eq!(slow.slow_call_rate(), Some(1.0)); // all calls slow: open
///
/// let both = Config::builder().window(Duration::from_secs(10)).window_calls(100).build();
/// assert_eq!(both, Err(ConfigError::BothWindows));
/// # Ok::<(), ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ConfigBuilder {
    /// The value of each method called; the rest keep their defaults.
    values: Values,
    /// The first duration key given a part of a millisecond, which the rules
    /// (in whole milliseconds) cannot hold.
    fraction: Option<&'static str>,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// One method per key of the table ([`breaker_rules::config_keys!`]), with the
/// docs the table gives it; a duration key's method takes a [`Duration`].
macro_rules! methods {
    ($($(#[$doc:meta])* $name:ident: $ty:tt $(as $method:ident)?, $role:ident, $class:ident;)*) => {
        impl ConfigBuilder {
            $(
                method!($(#[$doc])* $name: $ty $(as $method)?);
            )*
        }
    };
}

/// One builder method: a duration's, held in whole milliseconds, or a number's.
macro_rules! method {
    ($(#[$doc:meta])* $name:ident: u64 as $method:ident) => {
        $(#[$doc])*
        pub const fn $method(mut self, value: Duration) -> Self {
            self.values.$name = Some(whole_millis(value));
            if value.subsec_nanos() % 1_000_000 != 0 && self.fraction.is_none() {
                self.fraction = Some(stringify!($name));
            }
            self
        }
    };
    ($(#[$doc:meta])* $name:ident: $ty:ty) => {
        $(#[$doc])*
        pub const fn $name(mut self, value: $ty) -> Self {
            self.values.$name = Some(value);
            self
        }
    };
}

breaker_rules::config_keys!(methods);

/// `value` in milliseconds, the part below one dropped (the builder refuses it),
/// saturating at `u64::MAX`.
const fn whole_millis(value: Duration) -> u64 {
    let millis = value.as_millis();
    if millis > u64::MAX as u128 {
        u64::MAX
    } else {
        millis as u64
    }
}

impl ConfigBuilder {
    /// A builder holding the defaults.
    pub const fn new() -> Self {
        ConfigBuilder {
            values: Values::EMPTY,
            fraction: None,
        }
    }

    /// A builder holding `values`, as if each had been given by its method.
    #[cfg(test)]
    pub(crate) const fn from_values(values: Values) -> Self {
        ConfigBuilder {
            values,
            fraction: None,
        }
    }

    /// Validates and returns the config, by the rules the `#[circuit_breaker]`
    /// attribute and the configuration loader apply too.
    ///
    /// A duration with a part of a millisecond is refused
    /// ([`ConfigError::NotWholeMillis`]): durations are kept in whole
    /// milliseconds, as the attribute and the file write them.
    pub const fn build(self) -> Result<Config, ConfigError> {
        if let Some(key) = self.fraction {
            return Err(ConfigError::NotWholeMillis(key));
        }
        match breaker_rules::check(&self.values) {
            Ok(checked) => Ok(Config {
                checked,
                explicit: self.values.set_keys(),
            }),
            Err(e) => Err(e),
        }
    }
}
