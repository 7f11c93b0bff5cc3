//! Reconfiguring a keyed group: every key's breaker and the keys to come.

use std::hash::Hash;

use super::Shared;
use crate::breaker::{check_change, PolicyChange};
use crate::config::Config;
use crate::retry::RetryTuning;

impl<K: Hash + Eq> Shared<K> {
    pub(super) fn check_reconfigure(&self, config: &Config) -> Result<(), PolicyChange> {
        check_change(self.group, &self.config.lock(), config)
    }

    /// See [`KeyedGroup::reconfigure`](crate::KeyedGroup::reconfigure). Checked and applied under the writer
    /// lock, so no key is created meanwhile.
    pub(super) fn reconfigure(&self, config: Config) -> Result<Config, PolicyChange> {
        let _writer = self.writer.lock();
        self.check_reconfigure(&config)?;
        if let Some(judge) = &self.judge {
            judge
                .breaker()
                .reconfigure(config)
                .expect("the group's own breaker runs its group's policy and fixed keys");
        }
        for (_, entry) in self.map.pin().iter() {
            // A key's breaker runs its group's policy and fixed keys (its own
            // handle's `reconfigure` cannot change them), so the check above
            // answers for every key.
            entry
                .breaker
                .reconfigure(config)
                .expect("a key runs its group's policy and fixed keys");
        }
        // Last: the group's config changes once every key runs it.
        Ok(std::mem::replace(&mut *self.config.lock(), config))
    }

    /// Layers `tuning` over the group's retry declaration: the one `Retry`
    /// every key draws on, made or to be made.
    pub(super) fn tune_retry(&self, tuning: &RetryTuning) {
        self.retry.tune(tuning, self.clock.now());
    }

    /// See [`KeyedGroup::set_shadow`](crate::KeyedGroup::set_shadow). Under
    /// the writer lock, as a reconfiguration: no key is created meanwhile, and
    /// the keys to come start in the mode set. The group's own breaker (a
    /// group that judges as one) switches with its keys. Each key's config says the
    /// mode too, as the group's does, so that a later reconfiguration of the
    /// group finds every key in one mode and moves them together.
    pub(super) fn set_shadow(&self, on: bool) {
        let _writer = self.writer.lock();
        // The group's own breaker too: open as one, it is what every key's
        // lookup hands out.
        if let Some(judge) = &self.judge {
            let breaker = judge.breaker();
            breaker
                .reconfigure(breaker.config().with_shadow(on))
                .expect("the group's own config with another mode changes no fixed key");
        }
        for (_, entry) in self.map.pin().iter() {
            let config = entry.breaker.config().with_shadow(on);
            entry
                .breaker
                .reconfigure(config)
                .expect("a key's own config with another mode changes no fixed key");
        }
        let mut config = self.config.lock();
        *config = config.with_shadow(on);
    }
}
