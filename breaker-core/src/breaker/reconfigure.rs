//! Live reconfiguration of a [`Breaker`], and the error that refuses a change
//! it cannot make without dropping what the breaker has counted.

use breaker_rules::{Class, KeyValue, KEYS};

use super::handle::Breaker;
use crate::config::{Config, FailurePolicy};

impl Breaker {
    /// Replaces the config of this breaker while it runs, keeping its state,
    /// its generation, its counters and what its failure policy has counted.
    ///
    /// What changes, and from when:
    /// - `threshold`: judged from the next failure against the count so far (a
    ///   count already at or above the new threshold trips on that failure);
    /// - `open_ms`, `max_open_ms`: from the next trip (an open circuit keeps
    ///   the deadline it was given); `backoff` from the next failed probe;
    /// - `half_open_probes`, `successes_to_close`, `probe_timeout_ms`: from the
    ///   next claim or probe outcome (probes already in flight keep their slots
    ///   and their lease);
    /// - `jitter`: from the next trip;
    /// - a window's `failure_rate`, `min_calls`, `slow_call_ms`, `slow_call_rate`
    ///   and `latency_p99_ms`: judged from the next outcome against what the
    ///   window holds, which stays (a window already past a lowered rate trips
    ///   on its next outcome).
    ///
    /// Refused, changing nothing, when the window would have to be rebuilt,
    /// which would drop what it has counted: switching between the consecutive
    /// count and a window or between the two windows, another `window_ms` or
    /// `window_calls`, and turning `slow_call_ms` or `latency_p99_ms` on or off
    /// (claims time calls, and the window judges slowness, only for a group
    /// that has them). Such a change takes a restart (or a new group).
    ///
    /// Refused as well: any change of `max_concurrent`, `timeout_ms`,
    /// `histogram_ms` or `throttle_window_ms`, and turning `throttle` on or off
    /// (its window reads unset without it).
    /// `throttle`, `throttle_max_reject` and `throttle_min_rps` change live,
    /// judged from the next claim against what the throttle's window holds. The bulkhead, whether calls are timed out and the
    /// histogram's buckets (and whether claims read the clock for it) are built
    /// with the breaker; a reload that changed them would report success while
    /// the breaker kept the old ones.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, Config, State};
    ///
    /// let breaker = Breaker::new("ledger", Config::builder().threshold(5).build().unwrap());
    /// breaker.try_acquire().unwrap().failure();
    /// breaker.try_acquire().unwrap().failure();
    /// breaker.reconfigure(Config::builder().threshold(3).build().unwrap()).unwrap();
    /// assert_eq!(breaker.metrics().consecutive_failures, 2); // kept
    /// breaker.try_acquire().unwrap().failure(); // the third, judged by the new threshold
    /// assert_eq!(breaker.state(), State::Open);
    ///
    /// let window = Config::builder().window_calls(20).build().unwrap();
    /// assert!(breaker.reconfigure(window).is_err());
    /// assert_eq!(breaker.config().threshold(), 3);
    /// ```
    pub fn reconfigure(&self, config: Config) -> Result<(), PolicyChange> {
        self.check_reconfigure(&config)?;
        // The transition lock makes the config and the window's tuning one
        // change: of two reconfigurations at once, the window judges by the
        // config that stays. (The check needs no lock: what it compares is
        // fixed for the breaker's life.)
        let _one_at_a_time = self.inner.transition.lock();
        // A reload that changes the mode applies it at once; one that keeps it
        // leaves a mode switched live as it is.
        if config.shadow() != self.config().shadow() {
            self.set_shadow(config.shadow());
        }
        self.inner.config.set(config);
        self.inner.hot.policy.retune(&config);
        Ok(())
    }

    /// Whether [`reconfigure`](Self::reconfigure) would take `config`.
    pub fn check_reconfigure(&self, config: &Config) -> Result<(), PolicyChange> {
        check_change(self.group(), self.config(), config)
    }
}

/// Whether a breaker of `group` running `now` may run `config` instead (see
/// [`Breaker::reconfigure`]).
pub(crate) fn check_change(
    group: &'static str,
    now: &Config,
    config: &Config,
) -> Result<(), PolicyChange> {
    let from = now.policy();
    let to = config.policy();
    let same_kind = crate::policy::retunable(from, to);
    if !same_kind {
        return Err(PolicyChange {
            group,
            policies: Box::new([from, to]),
            fixed: None,
        });
    }
    // What the table classes `Fixed` is laid out with the breaker, and for a
    // `Bound` key whether it is set: neither may change while it runs.
    let fixed = KEYS.iter().find_map(|key| {
        let (was, asked) = (now.value(key.name), config.value(key.name));
        let changed = match key.class {
            Class::Live => false,
            Class::Bound => was.is_some() != asked.is_some(),
            Class::Fixed => was != asked,
        };
        changed.then_some(FixedKey {
            key: key.name,
            was,
            asked,
        })
    });
    match fixed {
        None => Ok(()),
        Some(fixed) => Err(PolicyChange {
            group,
            policies: Box::new([from, to]),
            fixed: Some(Box::new(fixed)),
        }),
    }
}

/// [`Breaker::reconfigure`] was asked to change the failure policy of a live
/// breaker in a way that would drop what it has counted, or a key laid out
/// when the breaker was built: a key the table of keys classes fixed
/// (`max_concurrent`, `timeout_ms`, `histogram_ms`, ...), or whether a key it
/// classes bound is set (`latency_p99_ms`).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyChange {
    group: &'static str,
    /// The policy it runs and the one asked for (boxed: errors stay small).
    policies: Box<[FailurePolicy; 2]>,
    /// The fixed key asked to change, if that is what was refused.
    fixed: Option<Box<FixedKey>>,
}

/// A key fixed at construction, its value and the one asked for.
#[derive(Clone, Debug, PartialEq)]
struct FixedKey {
    key: &'static str,
    was: Option<KeyValue>,
    asked: Option<KeyValue>,
}

impl PolicyChange {
    /// The breaker's group.
    pub fn group(&self) -> &'static str {
        self.group
    }

    /// The policy the breaker runs.
    pub fn from(&self) -> FailurePolicy {
        self.policies[0]
    }

    /// The policy asked for.
    pub fn to(&self) -> FailurePolicy {
        self.policies[1]
    }

    /// The key fixed at construction that was asked to change (one the table
    /// of keys classes fixed, or a bound one set or cleared: `"max_concurrent"`,
    /// `"timeout_ms"`, `"latency_p99_ms"`, ...); `None` when the failure policy
    /// was what was refused.
    pub fn key(&self) -> Option<&'static str> {
        self.fixed.as_ref().map(|fixed| fixed.key)
    }
}

impl std::fmt::Display for PolicyChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(fixed) = &self.fixed {
            let show = |value: Option<KeyValue>| match value {
                Some(KeyValue::U32(v)) => v.to_string(),
                Some(KeyValue::U64(v)) => v.to_string(),
                Some(KeyValue::F64(v)) => v.to_string(),
                Some(KeyValue::Bool(v)) => v.to_string(),
                Some(KeyValue::Choice(word)) => format!("\"{word}\""),
                None => "unset".to_owned(),
            };
            return write!(
                f,
                "group `{}` is live with `{}` {}; a live reconfiguration cannot \
                 change it to {} (it is laid out with the breaker, as the bulkhead, the \
                 window's slow-call rule, the call-duration histogram and call timing \
                 are): restart to apply it",
                self.group,
                fixed.key,
                show(fixed.was),
                show(fixed.asked)
            );
        }
        write!(
            f,
            "group `{}` is live with {}; a live reconfiguration \
             may change the consecutive `threshold`, a window's rates and \
             `min_calls`, and the open, half-open and probe keys, but not run {} \
             (another policy, window size, or slow-call judging turned on or off \
             would drop what the breaker has counted): restart to apply it",
            self.group,
            self.from(),
            self.to()
        )
    }
}

impl std::error::Error for PolicyChange {}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use breaker_rules::{Class, KeyValue, Role, Values, KEYS};

    use crate::config::ConfigBuilder;
    use crate::{Breaker, Config, Registry, Resolution};

    fn with_threshold(threshold: u32) -> Config {
        Config::builder().threshold(threshold).build().unwrap()
    }

    /// A count window with `key` set to `value` (or left unset), when the
    /// rules take that.
    fn window_with(key: &str, value: Option<KeyValue>) -> Option<Config> {
        let mut values = Values {
            window_calls: Some(20),
            ..Values::EMPTY
        };
        if let Some(value) = value {
            values.set(key, value);
        }
        ConfigBuilder::from_values(values).build().ok()
    }

    /// Two values of a key's type.
    fn samples(like: KeyValue) -> [KeyValue; 2] {
        match like {
            KeyValue::U32(_) => [KeyValue::U32(2), KeyValue::U32(3)],
            KeyValue::U64(_) => [KeyValue::U64(100), KeyValue::U64(200)],
            KeyValue::F64(_) => [KeyValue::F64(0.5), KeyValue::F64(0.75)],
            KeyValue::Bool(_) => [KeyValue::Bool(true), KeyValue::Bool(false)],
            KeyValue::Choice(_) => [KeyValue::Choice("failure"), KeyValue::Choice("ignore")],
        }
    }

    /// The keys a live breaker keeps are the table's classes, key by key: a
    /// key added as fixed or bound is refused without a list to add it to.
    #[test]
    fn a_live_change_is_judged_by_the_class_the_table_gives_each_key() {
        let mut judged = 0;
        for key in KEYS.iter().filter(|k| k.role != Role::Picks) {
            let ty = match key.ty {
                breaker_rules::Ty::U32 => KeyValue::U32(0),
                breaker_rules::Ty::U64 => KeyValue::U64(0),
                breaker_rules::Ty::F64 => KeyValue::F64(0.0),
                breaker_rules::Ty::Bool => KeyValue::Bool(false),
                breaker_rules::Ty::Choice(words) => KeyValue::Choice(words[0]),
            };
            let [one, other] = samples(ty);
            let (Some(set), Some(reset)) = (
                window_with(key.name, Some(one)),
                window_with(key.name, Some(other)),
            ) else {
                continue;
            };
            let unset = window_with(key.name, None).unwrap();
            let breaker = Breaker::new("db", set);
            // Refused: `Some` with the key named, or with `None` when the
            // window's keys refused it as a change of policy.
            let refused = |to: &Config| breaker.check_reconfigure(to).err().map(|e| e.key());
            let named = |key: &'static str| Some(Some(key));
            let (cleared, changed) = match key.class {
                Class::Live => (None, None),
                Class::Bound => (named(key.name), None),
                Class::Fixed => (named(key.name), named(key.name)),
            };
            if set.value(key.name) != unset.value(key.name) {
                let refusal = refused(&unset);
                assert!(
                    refusal == cleared || (cleared.is_some() && refusal == Some(None)),
                    "{key:?} cleared: {refusal:?}"
                );
            }
            assert_eq!(refused(&reset), changed, "{key:?} changed");
            judged += 1;
        }
        assert!(judged > 10, "{judged} keys judged");
    }

    /// Each config published is kept until the breaker drops: a reload that
    /// changes nothing, applied again and again, must not grow that list.
    #[test]
    fn an_identical_config_is_not_published_again() {
        let breaker = Breaker::new("db", with_threshold(3));
        for _ in 0..100 {
            breaker.reconfigure(with_threshold(3)).unwrap();
        }
        assert_eq!(breaker.inner.config.published(), 1);
        breaker.reconfigure(with_threshold(4)).unwrap();
        assert_eq!(breaker.inner.config.published(), 2);
        assert_eq!(breaker.config().threshold(), 4);
    }

    /// `==` leaves out which keys were spelled out, which the config file
    /// reads back: a config that differs only there is still published.
    #[test]
    fn a_config_that_differs_only_in_its_explicit_keys_is_published() {
        let breaker = Breaker::new("db", Config::DEFAULT);
        let spelled = Config::builder()
            .threshold(Config::DEFAULT.threshold())
            .build()
            .unwrap();
        assert_eq!(spelled, Config::DEFAULT);
        breaker.reconfigure(spelled).unwrap();
        assert_eq!(breaker.inner.config.published(), 2);
        assert!(breaker.config().is_explicit("threshold"));
    }

    #[test]
    fn repeated_identical_layers_publish_nothing() {
        let registry = Registry::new();
        let breaker = registry.breaker("search", &with_threshold(3));
        for _ in 0..100 {
            let changed = registry
                .apply_config(Arc::new(|_: &str, _: Option<&Config>| {
                    Ok(Resolution {
                        config: Config::builder()
                            .threshold(5)
                            .open(std::time::Duration::from_secs(5))
                            .build()
                            .unwrap(),
                        overrides: vec![],
                        retry: Default::default(),
                    })
                }))
                .unwrap();
            assert!(changed.len() <= 1);
        }
        assert_eq!(breaker.inner.config.published(), 2, "the first layer only");
        assert_eq!(breaker.config().threshold(), 5);
    }
}
