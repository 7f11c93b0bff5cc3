//! A configuration read back key by key ([`Config::value`],
//! [`RetryPolicy::value`]), made from the tables of keys: what the admin
//! JSON and the loader's record of a declaration show.

use breaker_rules::{KeyValue, RetryValues};

use super::settings::Config;
use crate::retry::RetryPolicy;

impl Config {
    /// The value `key` (one of [`Config::KEYS`]) runs with: its default when
    /// not set, `None` when it means nothing under this configuration
    /// (`threshold` under a window, the rates under the consecutive policy) or
    /// is off (`timeout_ms` unset), and for a key of no table. A duration is
    /// in whole milliseconds.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, KeyValue};
    ///
    /// let config = Config::builder().threshold(3).shadow(true).build().unwrap();
    /// assert_eq!(config.value("threshold"), Some(KeyValue::U32(3)));
    /// assert_eq!(config.value("open_ms"), Some(KeyValue::U64(30_000)));
    /// assert_eq!(config.value("shadow"), Some(KeyValue::Bool(true)));
    /// assert_eq!(config.value("window_ms"), None);
    /// ```
    pub fn value(&self, key: &str) -> Option<KeyValue> {
        self.checked.values().get(key)
    }

    /// Every key of [`Config::KEYS`] with [its value](Self::value), in table
    /// order.
    pub fn values(&self) -> impl Iterator<Item = (&'static str, Option<KeyValue>)> + '_ {
        let values = self.checked.values();
        Config::KEYS
            .into_iter()
            .map(move |key| (key, values.get(key)))
    }
}

/// Every key of the table has a getter named after its builder method: a key
/// without one fails to build here.
macro_rules! getters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty $(as $method:ident)?, $role:ident, $class:ident;)*) => {
        const _: () = {
            #[allow(dead_code)]
            fn every_key_has_a_getter(config: &Config) {
                $(let _ = getter!(config, $name $(as $method)?);)*
            }
        };
    };
}

macro_rules! getter {
    ($config:ident, $name:ident as $method:ident) => {
        $config.$method()
    };
    ($config:ident, $name:ident) => {
        $config.$name()
    };
}

breaker_rules::config_keys!(getters);

impl RetryPolicy {
    /// The value the retry key `key` (one of
    /// [`RETRY_KEYS`](breaker_rules::RETRY_KEYS)) runs with; `None` for a key
    /// that is off (no deadline, no budget) and for a key of no table. A
    /// duration is in whole milliseconds.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::{KeyValue, RetryPolicy};
    ///
    /// let policy = RetryPolicy::new(2).max_delay(Duration::from_secs(1));
    /// assert_eq!(policy.value("retry"), Some(KeyValue::U32(2)));
    /// assert_eq!(policy.value("retry_max_delay_ms"), Some(KeyValue::U64(1_000)));
    /// assert_eq!(policy.value("retry_deadline_ms"), None);
    /// ```
    pub fn value(&self, key: &str) -> Option<KeyValue> {
        self.key_values().get(key)
    }

    /// The retry keys that make this policy, each with its value. Every retry
    /// key is named here, so a key added to the table without its value read
    /// back fails to build.
    pub(crate) fn key_values(&self) -> RetryValues {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let budget = self.budget_limits();
        RetryValues {
            retry: Some(self.retries()),
            retry_delay_ms: Some(ms(self.first_delay())),
            retry_max_delay_ms: Some(ms(self.delay_cap())),
            retry_deadline_ms: self.overall_deadline().map(ms),
            retry_budget_ratio: budget.map(|(ratio, _)| ratio),
            retry_budget_floor: budget.map(|(_, floor)| floor),
        }
    }
}

/// Every retry key names a `RetryPolicy` builder method: a key without one
/// fails to build here.
macro_rules! retry_methods {
    ($($(#[$doc:meta])* $name:ident: $ty:ty as $method:ident, $role:ident, $class:ident;)*) => {
        const _: () = {
            #[allow(dead_code)]
            fn every_retry_key_has_a_builder_method() {
                $(let _ = RetryPolicy::$method;)*
            }
        };
    };
}

breaker_rules::retry_keys!(retry_methods);
