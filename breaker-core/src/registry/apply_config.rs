//! Layered configuration: [`Registry::apply_config`], what it took away
//! ([`Registry::overrides`]) and the groups it resolved before their first
//! call ([`Registry::pending_groups`]).

use std::sync::Arc;

use crate::config::Config;

use super::reports::Note;
use super::{
    ApplyConfigError, DeclarationOverride, DeclaredGroup, DeclaredSetting, Reconfigured, Registry,
    Resolver,
};

impl Registry {
    /// Records what layered configuration took from `group`'s declaration; the
    /// log lines go to `notes`, for after the locks.
    pub(super) fn overridden(
        &self,
        group: &'static str,
        details: Vec<String>,
        notes: &mut Vec<Note>,
    ) {
        let mut overrides = self.overrides.lock();
        for detail in details {
            // Told once: a group reported before it was made (see
            // `report_overrides`) is resolved again when it is made.
            if overrides
                .iter()
                .any(|o| o.group == group && o.detail == detail)
            {
                continue;
            }
            overrides.push(DeclarationOverride {
                group,
                detail: detail.clone(),
            });
            notes.push(Note::DeclarationOverride(group, detail));
        }
    }

    /// Layers `resolver` over every group's declaration: every live breaker is
    /// [reconfigured](crate::Breaker::reconfigure) at once, keeping its state,
    /// and so is every keyed group, its keys held and to come
    /// ([`KeyedGroup::reconfigure`](crate::KeyedGroup::reconfigure)); every
    /// group created later is built through it. A group's retries take the
    /// resolution's [`retry`](crate::Resolution::retry) the same way: a group's
    /// [`Retry`](crate::Retry) made already runs it from its next attempt on
    /// (its budget's balance kept), one made later is made with it. Replaces the resolver of an
    /// earlier call, and the [`overrides`](Self::overrides) it reported.
    ///
    /// All or nothing: when the resolver refuses a live group, or would change
    /// a live breaker's (or keyed group's) failure policy, nothing changes and
    /// the error says why. Returns the live breakers and keyed groups whose
    /// config changed, sorted by group.
    ///
    /// ```
    /// # mod breakerbox { pub use breaker_core::*; pub mod resolve { pub use breaker_core::Resolution; } }
    /// use std::time::Duration;
    /// use std::sync::Arc;
    /// use breakerbox::{resolve::Resolution, Config, Registry};
    ///
    /// let registry = Registry::new();
    /// let declared = Config::builder().threshold(3).build().unwrap();
    /// let search = registry.breaker("search", &declared);
    /// // Every group's open duration from elsewhere (a file, say).
    /// registry
    ///     .apply_config(Arc::new(|_group: &str, declared: Option<&Config>| {
    ///         let threshold = declared.map_or(5, Config::threshold);
    ///         let config = Config::builder().threshold(threshold).open(Duration::from_secs(5)).build();
    ///         Ok(Resolution { config: config.map_err(|e| e.to_string())?, overrides: vec![], retry: Default::default() })
    ///     }))
    ///     .unwrap();
    /// assert_eq!(search.config().open().as_millis(), 5_000);
    /// assert_eq!(registry.breaker_or_default("later").config().open().as_millis(), 5_000);
    /// ```
    pub fn apply_config(
        &self,
        resolver: Arc<Resolver>,
    ) -> Result<Vec<Reconfigured>, ApplyConfigError> {
        let mut groups = self.groups.write();
        let mut live: Vec<_> = groups.breakers.iter().collect();
        live.sort_unstable_by_key(|(name, _)| **name);
        let mut plan = Vec::with_capacity(live.len());
        for (&name, entry) in live {
            let base = groups.configured.get(name).or(entry.declared.as_ref());
            let resolution = resolver(name, base).map_err(|message| ApplyConfigError::Refused {
                group: name,
                message,
            })?;
            entry
                .breaker
                .check_reconfigure(&resolution.config)
                .map_err(ApplyConfigError::PolicyChange)?;
            plan.push((entry.breaker.clone(), resolution));
        }
        // Keyed groups are created under the groups' read lock (see
        // `creating_keyed`): none appears while this holds the write lock.
        let mut keyed_plan = Vec::new();
        for (name, keyed) in self.keyed_groups().all() {
            let base = groups
                .configured
                .get(name)
                .copied()
                .unwrap_or(keyed.declared());
            let resolution =
                resolver(name, Some(&base)).map_err(|message| ApplyConfigError::Refused {
                    group: name,
                    message,
                })?;
            keyed
                .check_reconfigure(&resolution.config)
                .map_err(ApplyConfigError::PolicyChange)?;
            keyed_plan.push((name, keyed, resolution));
        }
        // Nothing can fail from here on: a keyed group reconfigured by hand
        // meanwhile kept its policy and fixed keys, which is all the checks
        // above read.
        self.overrides.lock().clear();
        self.declared.lock().clear();
        let mut changed = Vec::new();
        let mut notes = Vec::new();
        for (breaker, resolution) in plan {
            let from = *breaker.config();
            self.overridden(breaker.group(), resolution.overrides, &mut notes);
            breaker
                .reconfigure(resolution.config)
                .expect("checked above, under the same lock");
            breaker.tune_retry(&resolution.retry);
            if from != resolution.config {
                changed.push(Reconfigured {
                    group: breaker.group(),
                    from,
                    to: resolution.config,
                });
            }
        }
        for (group, keyed, resolution) in keyed_plan {
            self.overridden(group, resolution.overrides, &mut notes);
            let from = keyed
                .reconfigure(resolution.config)
                .expect("checked above; no reconfiguration changes a policy");
            keyed.tune_retry(&resolution.retry);
            if from != resolution.config {
                changed.push(Reconfigured {
                    group,
                    from,
                    to: resolution.config,
                });
            }
        }
        changed.sort_by_key(|c| c.group);
        groups.resolver = Some(resolver);
        drop(groups);
        self.say(notes);
        Ok(changed)
    }

    /// Records what layered configuration takes from the declaration of
    /// `group`, a group declared by code that has not been made yet, so that
    /// [`overrides`](Self::overrides) lists it from the start (a configuration
    /// loader calls it after [`apply_config`](Self::apply_config) for every
    /// group it knows to be declared). Making the group later lists nothing
    /// twice; the next `apply_config` replaces it, as it replaces every
    /// override.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::Registry;
    ///
    /// let registry = Registry::new();
    /// registry.report_overrides("search", vec!["`threshold = 3` is overridden by `threshold = 10`".into()]);
    /// assert_eq!(registry.overrides()[0].group, "search");
    /// ```
    pub fn report_overrides(&self, group: &str, overrides: Vec<String>) {
        let mut notes = Vec::new();
        self.overridden(crate::names::intern(group), overrides, &mut notes);
        self.say(notes);
    }

    /// Records how layered configuration resolves `group`, a group
    /// declared by code (or named by a configuration file) that has not been
    /// made yet, so that [`pending_groups`](Self::pending_groups) lists it
    /// from the start (a configuration loader calls it after
    /// [`apply_config`](Self::apply_config) for every group it knows). Replaces
    /// an earlier report of the group; the next `apply_config` clears them all.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Config, DeclaredSetting, Registry};
    ///
    /// let registry = Registry::new();
    /// let config = Config::builder().threshold(3).build().unwrap();
    /// let threshold = DeclaredSetting {
    ///     key: "threshold",
    ///     value: "3".into(),
    ///     source: "the attribute".into(),
    /// };
    /// registry.report_declared("search", config, vec![threshold]);
    /// assert_eq!(registry.pending_groups()[0].group, "search");
    /// registry.breaker("search", &config);
    /// assert!(registry.pending_groups().is_empty()); // made: listed with the breakers
    /// ```
    pub fn report_declared(&self, group: &str, config: Config, settings: Vec<DeclaredSetting>) {
        let declared = DeclaredGroup {
            group: crate::names::intern(group),
            config,
            settings,
        };
        let mut all = self.declared.lock();
        all.retain(|d| d.group != declared.group);
        all.push(declared);
    }

    /// The groups reported with [`report_declared`](Self::report_declared)
    /// that have no breaker and no keyed group yet, sorted by group: each
    /// one's configuration as its first call will make it, with the source of
    /// each value.
    pub fn pending_groups(&self) -> Vec<DeclaredGroup> {
        // Copied out first: `apply_config` takes this lock under the groups'.
        let mut pending = self.declared.lock().clone();
        let keyed = self.keyed_names();
        pending.retain(|d| !keyed.contains(&d.group) && self.get(d.group).is_none());
        pending.sort_by_key(|d| d.group);
        pending
    }

    /// Every declared value that layered configuration ([`apply_config`](Self::apply_config))
    /// took away, with its source: for the live groups as of the last `apply_config`,
    /// then for each group created since, in that order.
    pub fn overrides(&self) -> Vec<DeclarationOverride> {
        self.overrides.lock().clone()
    }
}
