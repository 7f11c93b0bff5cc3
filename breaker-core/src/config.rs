//! What a breaker is told: [`Config`], built and validated by [`ConfigBuilder`].
//!
//! Every `#[circuit_breaker]` key has a builder method of the same name and meaning,
//! and the builder is `const`, so a call site's config is checked at compile time.

use std::fmt;
use std::time::Duration;

use crate::clock::millis_to_nanos;

/// The largest `threshold` a consecutive-failure policy accepts.
pub const MAX_THRESHOLD: u32 = (1 << 24) - 1;
/// The largest `half_open_probes` and `successes_to_close` accepted.
pub const MAX_PROBES: u32 = (1 << 10) - 1;

/// How a closed breaker decides to trip.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum FailurePolicy {
    /// Trip on the `threshold`-th consecutive failure; any success resets the count.
    Consecutive {
        /// Consecutive failures that open the circuit (`3` means the third trips).
        threshold: u32,
    },
}

/// A validated breaker configuration. Build one with [`Config::builder`].
///
/// | builder method | default | meaning |
/// |---|---|---|
/// | `threshold` | 5 | consecutive failures that open the circuit |
/// | `open_ms` | 30 000 | how long the circuit stays open before a probe may go |
/// | `half_open_probes` | 1 | probes in flight at once while half-open |
/// | `successes_to_close` | 1 | probe successes that close the circuit |
/// | `backoff` | 2.0 | factor the open duration grows by after each failed probe |
/// | `max_open_ms` | max(`open_ms`, 300 000) | cap on the grown open duration |
/// | `probe_timeout_ms` | 30 000 | lease of a probe; a probe in flight longer loses its slot |
///
/// ```
/// use breaker_core::Config;
///
/// const SEARCH: Config = match Config::builder().threshold(3).open_ms(10_000).build() {
///     Ok(config) => config,
///     Err(_) => panic!("invalid breaker config"),
/// };
/// assert_eq!(SEARCH.threshold(), 3);
/// assert!(Config::builder().threshold(0).build().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    policy: FailurePolicy,
    open_ms: u64,
    half_open_probes: u32,
    successes_to_close: u32,
    backoff: f64,
    max_open_ms: u64,
    probe_timeout_ms: u64,
}

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

    /// The failure policy of the closed state.
    pub const fn policy(&self) -> FailurePolicy {
        self.policy
    }

    /// The consecutive-failure threshold, or `0` when another policy is in use.
    pub const fn threshold(&self) -> u32 {
        match self.policy {
            FailurePolicy::Consecutive { threshold } => threshold,
        }
    }

    /// The first open duration after a trip.
    pub const fn open_duration(&self) -> Duration {
        Duration::from_millis(self.open_ms)
    }

    /// Probes allowed in flight at once while half-open.
    pub const fn half_open_probes(&self) -> u32 {
        self.half_open_probes
    }

    /// Probe successes needed to close the circuit.
    pub const fn successes_to_close(&self) -> u32 {
        self.successes_to_close
    }

    /// Growth factor of the open duration after each failed probe.
    pub const fn backoff(&self) -> f64 {
        self.backoff
    }

    /// Cap on the open duration.
    pub const fn max_open_duration(&self) -> Duration {
        Duration::from_millis(self.max_open_ms)
    }

    /// Lease of one probe: after this long in flight its slot is reclaimed.
    pub const fn probe_timeout(&self) -> Duration {
        Duration::from_millis(self.probe_timeout_ms)
    }

    pub(crate) const fn open_nanos(&self) -> u64 {
        millis_to_nanos(self.open_ms)
    }

    pub(crate) const fn max_open_nanos(&self) -> u64 {
        millis_to_nanos(self.max_open_ms)
    }

    pub(crate) const fn probe_timeout_nanos(&self) -> u64 {
        millis_to_nanos(self.probe_timeout_ms)
    }

    /// The open duration that follows a failed probe after one of `current` nanos.
    pub(crate) fn grown_open_nanos(&self, current: u64) -> u64 {
        // `as` from f64 saturates (and backoff is validated finite and >= 1).
        let grown = (current as f64 * self.backoff) as u64;
        grown.max(current).min(self.max_open_nanos()).max(self.open_nanos())
    }
}

/// Builds a [`Config`]; every method is `const` and mirrors an attribute key.
#[derive(Clone, Copy, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ConfigBuilder {
    threshold: u32,
    open_ms: u64,
    half_open_probes: u32,
    successes_to_close: u32,
    backoff: f64,
    max_open_ms: Option<u64>,
    probe_timeout_ms: u64,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ConfigBuilder {
    /// A builder holding the defaults.
    pub const fn new() -> Self {
        ConfigBuilder {
            threshold: 5,
            open_ms: 30_000,
            half_open_probes: 1,
            successes_to_close: 1,
            backoff: 2.0,
            max_open_ms: None,
            probe_timeout_ms: 30_000,
        }
    }

    /// Consecutive failures that open the circuit: `3` means the third trips.
    pub const fn threshold(mut self, threshold: u32) -> Self {
        self.threshold = threshold;
        self
    }

    /// Milliseconds the circuit stays open before the next claim may probe.
    pub const fn open_ms(mut self, ms: u64) -> Self {
        self.open_ms = ms;
        self
    }

    /// Probes allowed in flight at once while half-open.
    pub const fn half_open_probes(mut self, probes: u32) -> Self {
        self.half_open_probes = probes;
        self
    }

    /// Probe successes that close the circuit.
    pub const fn successes_to_close(mut self, successes: u32) -> Self {
        self.successes_to_close = successes;
        self
    }

    /// Factor (`>= 1.0`) the open duration grows by after each failed probe;
    /// `1.0` keeps it constant.
    pub const fn backoff(mut self, factor: f64) -> Self {
        self.backoff = factor;
        self
    }

    /// Cap, in milliseconds, on the grown open duration. Must be `>= open_ms`.
    pub const fn max_open_ms(mut self, ms: u64) -> Self {
        self.max_open_ms = Some(ms);
        self
    }

    /// Milliseconds a probe may stay in flight before its slot is reclaimed and its
    /// outcome, when it finally comes, is counted as stale.
    pub const fn probe_timeout_ms(mut self, ms: u64) -> Self {
        self.probe_timeout_ms = ms;
        self
    }

    /// Validates and returns the config.
    pub const fn build(self) -> Result<Config, ConfigError> {
        if self.threshold == 0 {
            return Err(ConfigError::ZeroThreshold);
        }
        if self.threshold > MAX_THRESHOLD {
            return Err(ConfigError::ThresholdTooLarge);
        }
        if self.open_ms == 0 {
            return Err(ConfigError::ZeroOpen);
        }
        if self.half_open_probes == 0 {
            return Err(ConfigError::ZeroProbes);
        }
        if self.half_open_probes > MAX_PROBES {
            return Err(ConfigError::TooManyProbes);
        }
        if self.successes_to_close == 0 {
            return Err(ConfigError::ZeroSuccesses);
        }
        if self.successes_to_close > MAX_PROBES {
            return Err(ConfigError::TooManySuccesses);
        }
        if self.backoff.is_nan() || self.backoff.is_infinite() {
            return Err(ConfigError::BackoffNotFinite);
        }
        if self.backoff < 1.0 {
            return Err(ConfigError::BackoffBelowOne);
        }
        let max_open_ms = match self.max_open_ms {
            Some(ms) if ms < self.open_ms => return Err(ConfigError::MaxOpenBelowOpen),
            Some(ms) => ms,
            None if self.open_ms > 300_000 => self.open_ms,
            None => 300_000,
        };
        if self.probe_timeout_ms == 0 {
            return Err(ConfigError::ZeroProbeTimeout);
        }
        Ok(Config {
            policy: FailurePolicy::Consecutive {
                threshold: self.threshold,
            },
            open_ms: self.open_ms,
            half_open_probes: self.half_open_probes,
            successes_to_close: self.successes_to_close,
            backoff: self.backoff,
            max_open_ms,
            probe_timeout_ms: self.probe_timeout_ms,
        })
    }
}

/// Why a [`ConfigBuilder`] refused to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// `threshold` was 0.
    ZeroThreshold,
    /// `threshold` was above [`MAX_THRESHOLD`].
    ThresholdTooLarge,
    /// `open_ms` was 0.
    ZeroOpen,
    /// `half_open_probes` was 0.
    ZeroProbes,
    /// `half_open_probes` was above [`MAX_PROBES`].
    TooManyProbes,
    /// `successes_to_close` was 0.
    ZeroSuccesses,
    /// `successes_to_close` was above [`MAX_PROBES`].
    TooManySuccesses,
    /// `backoff` was NaN or infinite.
    BackoffNotFinite,
    /// `backoff` was below 1.0.
    BackoffBelowOne,
    /// `max_open_ms` was below `open_ms`.
    MaxOpenBelowOpen,
    /// `probe_timeout_ms` was 0.
    ZeroProbeTimeout,
}

impl ConfigError {
    /// The builder method (and `#[circuit_breaker]` key) whose value was refused.
    ///
    /// ```
    /// use breaker_core::Config;
    ///
    /// let err = Config::builder().half_open_probes(0).build().unwrap_err();
    /// assert_eq!(err.key(), "half_open_probes");
    /// ```
    pub const fn key(&self) -> &'static str {
        match self {
            ConfigError::ZeroThreshold | ConfigError::ThresholdTooLarge => "threshold",
            ConfigError::ZeroOpen => "open_ms",
            ConfigError::ZeroProbes | ConfigError::TooManyProbes => "half_open_probes",
            ConfigError::ZeroSuccesses | ConfigError::TooManySuccesses => "successes_to_close",
            ConfigError::BackoffNotFinite | ConfigError::BackoffBelowOne => "backoff",
            ConfigError::MaxOpenBelowOpen => "max_open_ms",
            ConfigError::ZeroProbeTimeout => "probe_timeout_ms",
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            ConfigError::ZeroThreshold => "`threshold` must be at least 1",
            ConfigError::ThresholdTooLarge => "`threshold` must be at most 16777215",
            ConfigError::ZeroOpen => "`open_ms` must be at least 1",
            ConfigError::ZeroProbes => "`half_open_probes` must be at least 1",
            ConfigError::TooManyProbes => "`half_open_probes` must be at most 1023",
            ConfigError::ZeroSuccesses => "`successes_to_close` must be at least 1",
            ConfigError::TooManySuccesses => "`successes_to_close` must be at most 1023",
            ConfigError::BackoffNotFinite => "`backoff` must be a finite number",
            ConfigError::BackoffBelowOne => "`backoff` must be at least 1.0",
            ConfigError::MaxOpenBelowOpen => "`max_open_ms` must be at least `open_ms`",
            ConfigError::ZeroProbeTimeout => "`probe_timeout_ms` must be at least 1",
        };
        f.write_str(msg)
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_documented_values() {
        let c = Config::default();
        assert_eq!(c.threshold(), 5);
        assert_eq!(c.open_duration(), Duration::from_secs(30));
        assert_eq!(c.half_open_probes(), 1);
        assert_eq!(c.successes_to_close(), 1);
        assert_eq!(c.backoff(), 2.0);
        assert_eq!(c.max_open_duration(), Duration::from_secs(300));
        assert_eq!(c.probe_timeout(), Duration::from_secs(30));
    }

    #[test]
    fn invalid_values_are_typed_errors_not_panics() {
        let b = Config::builder;
        assert_eq!(b().threshold(0).build(), Err(ConfigError::ZeroThreshold));
        assert_eq!(
            b().threshold(MAX_THRESHOLD + 1).build(),
            Err(ConfigError::ThresholdTooLarge)
        );
        assert_eq!(b().open_ms(0).build(), Err(ConfigError::ZeroOpen));
        assert_eq!(b().half_open_probes(0).build(), Err(ConfigError::ZeroProbes));
        assert_eq!(
            b().half_open_probes(MAX_PROBES + 1).build(),
            Err(ConfigError::TooManyProbes)
        );
        assert_eq!(b().successes_to_close(0).build(), Err(ConfigError::ZeroSuccesses));
        assert_eq!(
            b().successes_to_close(MAX_PROBES + 1).build(),
            Err(ConfigError::TooManySuccesses)
        );
        assert_eq!(b().backoff(0.5).build(), Err(ConfigError::BackoffBelowOne));
        assert_eq!(b().backoff(f64::NAN).build(), Err(ConfigError::BackoffNotFinite));
        assert_eq!(
            b().backoff(f64::INFINITY).build(),
            Err(ConfigError::BackoffNotFinite)
        );
        assert_eq!(
            b().open_ms(10_000).max_open_ms(9_999).build(),
            Err(ConfigError::MaxOpenBelowOpen)
        );
        assert_eq!(b().probe_timeout_ms(0).build(), Err(ConfigError::ZeroProbeTimeout));
    }

    #[test]
    fn long_open_without_a_cap_is_not_cut_short_by_the_default_cap() {
        let c = Config::builder().open_ms(600_000).build().unwrap();
        assert_eq!(c.max_open_duration(), Duration::from_secs(600));
    }

    #[test]
    fn backoff_grows_to_the_cap_and_saturates_near_u64_max() {
        let c = Config::builder()
            .open_ms(1_000)
            .backoff(3.0)
            .max_open_ms(5_000)
            .build()
            .unwrap();
        assert_eq!(c.grown_open_nanos(1_000_000_000), 3_000_000_000);
        assert_eq!(c.grown_open_nanos(3_000_000_000), 5_000_000_000);
        let huge = Config::builder().open_ms(u64::MAX).build().unwrap();
        assert_eq!(huge.grown_open_nanos(huge.open_nanos()), u64::MAX);
    }
}
