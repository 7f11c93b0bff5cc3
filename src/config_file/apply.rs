//! Wires [`Settings`] into a [`Registry`]: the groups the attributes declare,
//! collected at link time, and [`Settings::apply`], which layers a loaded
//! configuration over them, live or before first use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use breaker_core::retry::RetryTuning;
use breaker_core::{
    ApplyConfigError, Config, DeclaredSetting, PolicyChange, Reconfigured, Registry, Resolution,
    RetryPolicy,
};

use super::error::{Error, ErrorKind};
use super::patch::{key_index, Patch, Role, Setting, Source, KEYS};
use super::Settings;

/// One `#[circuit_breaker]` declaration, submitted at link time by the code the
/// attribute generates, or by [`declare_group!`](crate::declare_group) for a
/// group made at run time (with the `config` feature only); listed by
/// [`declarations`].
#[derive(Debug)]
pub struct Declaration {
    /// The attribute's `group`.
    pub group: &'static str,
    /// The config the attribute declares, with its literal keys
    /// ([`Config::explicit_keys`]).
    pub config: &'static Config,
    /// `module_path!()` of the guarded fn (of the `declare_group!`).
    pub module: &'static str,
    /// Made by a `#[circuit_breaker]` (not a [`declare_group!`](crate::declare_group)):
    /// its calls take a bulkhead slot and race a deadline only when the
    /// attribute names `max_concurrent` and `timeout_ms`, so
    /// [`Settings::apply`] refuses those keys for it otherwise.
    pub attribute: bool,
    /// The retry policy of a `#[circuit_breaker]` that runs its fn in a retry
    /// loop (`retry = N`, or `idempotent = true` alone), whose retry literals
    /// are the group's literal layer for the retry keys. `None` for an
    /// attribute without one ([`Settings::apply`] refuses retry keys for a
    /// group no attribute of which runs one: nothing would make the retries)
    /// and for a
    /// [`declare_group!`](crate::declare_group), whose code chooses where it
    /// retries.
    pub retry: Option<&'static RetryPolicy>,
}

impl Declaration {
    /// The declaration's literal layer: its config's explicit keys and its
    /// retry policy's.
    fn literals(&self) -> Patch {
        let mut literals = Patch::from_config(self.config);
        if let Some(policy) = self.retry {
            literals.add_retry_literals(policy);
        }
        literals
    }
}

/// The keys a `#[circuit_breaker]` enforces only when it names them: the code
/// that takes a bulkhead slot and races a deadline is emitted for those alone,
/// so that a group without them pays nothing. With what each one is.
const NAMED_ONLY: [(&str, &str); 2] = [
    ("timeout_ms", "the deadline"),
    ("max_concurrent", "the bulkhead"),
];

/// Refuses a value of [`NAMED_ONLY`] that `resolved` gives a group whose
/// attribute does not name the key, and a retry key for a group none of whose
/// attributes runs a retry loop (unless it comes from `[defaults]`, which
/// tunes only the groups that retry): it would be accepted and never
/// enforced.
fn enforced(declaration: &Declaration, settings: &Patch, defaults: &Patch) -> Result<(), Error> {
    if !declaration.attribute {
        return Ok(());
    }
    if retry_declaration(declaration.group) == Some(None) {
        let from_defaults = |index: usize| defaults.at(index) == settings.at(index);
        let retry_key = KEYS
            .iter()
            .enumerate()
            .filter(|(index, key)| key.is_retry() && !from_defaults(*index))
            .find_map(|(index, key)| Some((key.name, settings.at(index)?)));
        if let Some((key, setting)) = retry_key {
            return Err(Error::new(
                ErrorKind::Unenforced,
                format!(
                    "group `{group}`: {setting} would never be enforced: the \
                     `#[circuit_breaker]` of `{group}` (in `{module}`) does not name `retry`, so \
                     its fn runs no retry loop (a call is repeated only where its code says it \
                     is safe to repeat); if the call is idempotent, add `retry = N, idempotent \
                     = true` to the attribute (or `idempotent = true` alone, for retries the \
                     configuration sets), or remove `{key}` from the configuration for this \
                     group",
                    group = declaration.group,
                    module = declaration.module,
                ),
            ));
        }
    }
    for (key, what) in NAMED_ONLY {
        let Some(setting) = settings.get(key) else {
            continue;
        };
        if declaration.config.is_explicit(key) {
            continue;
        }
        return Err(Error::new(
            ErrorKind::Unenforced,
            format!(
                "group `{group}`: {setting} would never be enforced: the \
                 `#[circuit_breaker]` of `{group}` (in `{module}`) does not name `{key}`, and \
                 the attribute builds {what} into a fn only for a key it names; add `{key} = ..` \
                 to the attribute (the file and the variables may then change its value), or \
                 remove `{key}` from the configuration for this group",
                group = declaration.group,
                module = declaration.module,
            ),
        ));
    }
    Ok(())
}

inventory::collect!(Declaration);

/// The literal layer of `group`: the explicit keys of the config its code
/// declared (an attribute's literals, or the config a
/// [`Registry::breaker`] call made it with) and its attributes' retry keys.
fn group_literals(group: &str, declared: Option<&Config>) -> Patch {
    let mut literals = declared.map(Patch::from_config).unwrap_or_default();
    if let Some(Some(policy)) = retry_declaration(group) {
        literals.add_retry_literals(policy);
    }
    literals
}

/// How `group`'s attributes retry: `None` when no attribute declares it (a
/// group of code, which takes every retry key), `Some(None)` when its
/// attributes run no retry loop, else a retried one's policy: one that sets
/// retry keys (`retry = N`, ..) before one of `idempotent = true` alone.
fn retry_declaration(group: &str) -> Option<Option<&'static RetryPolicy>> {
    let mut attributes = declarations()
        .filter(|d| d.attribute && d.group == group)
        .peekable();
    attributes.peek()?;
    let retried: Vec<&'static RetryPolicy> = attributes.filter_map(|d| d.retry).collect();
    Some(
        retried
            .iter()
            .copied()
            .find(|policy| policy.explicit_keys().next().is_some())
            .or_else(|| retried.first().copied()),
    )
}

/// Every `#[circuit_breaker]` and [`declare_group!`](crate::declare_group) of
/// the program (all the crates linked in), in no particular order: known
/// before any of them runs, so a group the configuration names and no code
/// declares is caught at start-up.
///
/// Collected with [`inventory`](https://docs.rs/inventory): each attribute
/// registers a static from a constructor the platform runs before `main`; a
/// program built without the `config` feature registers nothing and pays
/// nothing.
pub fn declarations() -> impl Iterator<Item = &'static Declaration> {
    inventory::iter::<Declaration>.into_iter()
}

/// The groups [`declarations`] name, sorted, each once.
pub fn declared_groups() -> Vec<&'static str> {
    let mut groups: Vec<_> = declarations().map(|d| d.group).collect();
    groups.sort_unstable();
    groups.dedup();
    groups
}

/// What [`Settings::apply`] did.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Applied {
    /// Live breakers and keyed groups whose config changed (their state,
    /// generation and counts are kept, each key's too), sorted by group.
    pub reconfigured: Vec<Reconfigured>,
    /// Groups the file or the variables configure that no code declares and the
    /// registry does not hold: most likely a typo. Reported, not refused: one
    /// file may serve several programs.
    pub undeclared: Vec<(String, Source)>,
    /// Every group its code declares or the registry holds, sorted by name,
    /// with the configuration it runs (a group not yet called: from its first
    /// call) and each value's source: the effective configuration at
    /// start-up. Each is also logged at `info`.
    pub groups: Vec<GroupSettings>,
}

impl Settings {
    /// Layers these settings over every group of `registry`, by the
    /// precedence of the module docs, with each group's declaration as the
    /// literal layer: the [`configure`](Registry::configure)d config if any,
    /// else its attribute's (or the config a hand-made
    /// [`Registry::breaker`] call declares).
    ///
    /// Live breakers are reconfigured at once and keep their state, generation
    /// and counts (see [`Breaker::reconfigure`](crate::Breaker::reconfigure) for
    /// what changes from when); groups created later are built through the
    /// settings. Every attribute literal the file or a variable takes away is
    /// listed by [`Registry::overrides`], with its source, from this call on:
    /// for the live groups and for every group the code declares, made yet
    /// or not.
    ///
    /// All or nothing: refused, with nothing applied, when the composed
    /// configuration of a declared group (every attribute of the program, from
    /// [`declarations`], and every live group) is refused by the builder; when
    /// it gives a `#[circuit_breaker]` group `timeout_ms` or `max_concurrent`
    /// and the attribute does not name that key (the attribute builds the
    /// deadline and the bulkhead only into fns that name them, so the value
    /// would never be enforced: name the key in the attribute, and the file
    /// may then change its value); when it gives a `#[circuit_breaker]` group
    /// without a retry loop a retry key other than from `[defaults]` (see the
    /// module docs: a retry is made only where code says the call is safe to
    /// repeat); or when it would change the failure policy of a live breaker.
    /// Applying again replaces what an earlier call applied.
    ///
    /// A group's retries take the retry keys over the policy its code
    /// declares, before its first retried call (its retry budget is made with
    /// them) or after (from its next attempt on, with the budget's balance
    /// kept); applying settings without them returns it to its code's policy.
    ///
    /// ```
    /// use breakerbox::config_file::Settings;
    /// use breakerbox::{Config, Registry};
    ///
    /// let registry = Registry::new();
    /// let declared = Config::builder().threshold(3).build().unwrap();
    /// let search = registry.breaker("search", &declared);
    ///
    /// let file = "[groups.search]\nthreshold = 10\nopen_ms = 5_000\n";
    /// let settings = Settings::from_toml_str(file, "prod.toml")?;
    /// let applied = settings.apply(&registry)?;
    /// assert_eq!(applied.reconfigured[0].group, "search");
    /// assert_eq!(search.config().threshold(), 10);
    /// assert_eq!(
    ///     registry.overrides()[0].to_string(),
    ///     "group `search`: the attribute's `threshold = 3` is overridden by \
    ///      `threshold = 10` (`prod.toml` line 2, [groups.search])"
    /// );
    ///
    /// let window = Settings::from_toml_str("[groups.search]\nwindow_calls = 20\n", "prod.toml")?;
    /// assert!(window.apply(&registry).is_err()); // a live policy change
    /// assert_eq!(search.config().threshold(), 10); // nothing applied
    /// # Ok::<(), breakerbox::config_file::Error>(())
    /// ```
    pub fn apply(&self, registry: &Registry) -> Result<Applied, Error> {
        // Every declaration the code holds, checked before anything changes:
        // a bad composition is refused at start-up, not at a group's first call.
        for declaration in declarations() {
            let resolved = self
                .resolve(declaration.group, &declaration.literals())
                .map_err(|e| {
                    Error::new(
                        e.kind(),
                        format!("{} (declared in `{}`)", e.message(), declaration.module),
                    )
                })?;
            enforced(declaration, &resolved.settings, &self.defaults)?;
        }
        let settings = Arc::new(self.clone());
        // The declaration the registry composed each group with: a refused
        // live change is explained, and each group's settings listed, from
        // the same layers.
        let composed = Arc::new(Mutex::new(HashMap::<String, Option<Config>>::new()));
        let seen = Arc::clone(&composed);
        let resolver = move |group: &str, declared: Option<&Config>| {
            seen.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(group.to_owned(), declared.copied());
            let literals = group_literals(group, declared);
            let retried = retry_declaration(group);
            let resolved = settings
                .resolve(group, &literals)
                .map_err(|e| e.message().to_owned())?;
            Ok(Resolution {
                config: resolved.config,
                overrides: resolved.overrides.iter().map(|o| o.to_string()).collect(),
                // A group whose attributes run no retry loop makes no retry:
                // its slot is not made for `[defaults]`' retry keys.
                retry: match retried {
                    Some(None) => RetryTuning::NONE,
                    _ => resolved.retry,
                },
            })
        };
        let reconfigured = registry
            .apply_config(Arc::new(resolver))
            .map_err(|e| match e {
                ApplyConfigError::Refused { message, .. } => {
                    Error::new(ErrorKind::Refused, message)
                }
                ApplyConfigError::PolicyChange(change) => {
                    let composed = composed.lock().unwrap_or_else(PoisonError::into_inner);
                    let declared = composed.get(change.group()).copied().flatten();
                    self.live_change(&change, declared.as_ref())
                }
                other => Error::new(ErrorKind::Refused, other.to_string()),
            })?;
        self.report_pending(registry);
        let mut known = declared_groups();
        known.extend(registry.groups());
        known.extend(registry.keyed_names());
        known.sort_unstable();
        known.dedup();
        let undeclared = self.undeclared(known.iter().copied());
        for (group, source) in &undeclared {
            log::warn!("breakerbox: the configuration names group `{group}` ({source}), which no code declares");
        }
        let composed = composed.lock().unwrap_or_else(PoisonError::into_inner);
        let groups: Vec<GroupSettings> = known
            .iter()
            .filter_map(|&group| {
                let literals = match composed.get(group) {
                    Some(declared) => group_literals(group, declared.as_ref()),
                    None => declarations().find(|d| d.group == group)?.literals(),
                };
                let resolved = self.resolve(group, &literals).ok()?;
                let by_attribute = declarations().any(|d| d.group == group && d.attribute);
                let settings = resolved.settings.iter().cloned().map(|mut setting| {
                    if setting.source == Source::Attribute && !by_attribute {
                        setting.source = Source::Code;
                    }
                    setting
                });
                Some(GroupSettings {
                    group: group.to_owned(),
                    config: resolved.config,
                    settings: settings.collect(),
                })
            })
            .collect();
        for group in &groups {
            log::info!("breakerbox: {group}");
        }
        self.report_declared(registry, &groups);
        Ok(Applied {
            reconfigured,
            undeclared,
            groups,
        })
    }
}

impl Settings {
    /// Tells `registry` how these settings resolve each group not made yet:
    /// the groups the code declares (`groups`) and those only the file names,
    /// listed by [`Registry::pending_groups`] (and the admin router) until
    /// their first call.
    fn report_declared(&self, registry: &Registry, groups: &[GroupSettings]) {
        let keyed = registry.keyed_names();
        let made = |group: &str| keyed.contains(&group) || registry.get(group).is_some();
        let named_only = self
            .groups
            .keys()
            .filter(|name| !groups.iter().any(|g| g.group == **name))
            .filter_map(|name| {
                let resolved = self.resolve(name, &Patch::new()).ok()?;
                let settings: Vec<Setting> = resolved.settings.iter().cloned().collect();
                Some((name.as_str(), resolved.config, settings))
            })
            .collect::<Vec<_>>();
        let declared = groups
            .iter()
            .map(|g| (g.group.as_str(), g.config, g.settings.clone()));
        for (group, config, settings) in declared.chain(named_only) {
            if made(group) {
                continue;
            }
            let settings = settings
                .iter()
                .map(|s| DeclaredSetting {
                    key: s.key,
                    value: s.value.to_string(),
                    source: s.source.to_string(),
                })
                .collect();
            registry.report_declared(group, config, settings);
        }
    }

    /// Lists in [`Registry::overrides`] what these settings take from the
    /// declaration of each group the code declares and has not made yet, as
    /// its first call will: an operator sees every override at start-up.
    fn report_pending(&self, registry: &Registry) {
        let keyed = registry.keyed_names();
        let mut reported: Vec<&str> = Vec::new();
        for declaration in declarations() {
            let group = declaration.group;
            if reported.contains(&group) || keyed.contains(&group) || registry.get(group).is_some()
            {
                continue;
            }
            reported.push(group);
            let literals = group_literals(group, Some(declaration.config));
            if let Ok(resolved) = self.resolve(group, &literals) {
                let overrides = resolved.overrides.iter().map(|o| o.to_string()).collect();
                registry.report_overrides(group, overrides);
            }
        }
    }
}

/// One group's configuration as applied settings compose it: what its
/// breaker runs with (a group not yet called: from its first call) and every
/// value its declaration and the configuration set, each with its source.
///
/// ```
/// use breakerbox::config_file::Settings;
/// use breakerbox::{Config, Registry};
///
/// let registry = Registry::new();
/// registry.breaker("search", &Config::builder().threshold(3).build().unwrap());
/// let applied = Settings::from_toml_str("[groups.search]\nopen_ms = \"5s\"\n", "prod.toml")?
///     .apply(&registry)?;
/// let search = applied.groups.iter().find(|g| g.group == "search").unwrap();
/// assert_eq!(search.config.open().as_secs(), 5);
/// assert_eq!(
///     search.to_string(),
///     "group `search`: `threshold = 3` (the code), \
///      `open_ms = 5000` (`prod.toml` line 2, [groups.search])"
/// );
/// # Ok::<(), breakerbox::config_file::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GroupSettings {
    /// The group.
    pub group: String,
    /// What its breaker runs with.
    pub config: Config,
    /// Every value set, in key-table order, each with where it came from;
    /// the keys not listed are at their defaults.
    pub settings: Vec<Setting>,
}

/// `group `search`: `threshold = 3` (the attribute), `open_ms = 5000`
/// (`prod.toml` line 2, [groups.search])`, or `group `search`: every key at
/// its default`.
impl std::fmt::Display for GroupSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "group `{}`: ", self.group)?;
        if self.settings.is_empty() {
            return f.write_str("every key at its default");
        }
        for (i, setting) in self.settings.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{setting}")?;
        }
        Ok(())
    }
}

impl Settings {
    /// Why a live breaker cannot take these settings, in words: the group, what
    /// it runs, and every file line or variable that asks for the change, as
    /// composed over `declared`, the config its code declared.
    fn live_change(&self, change: &PolicyChange, declared: Option<&Config>) -> Error {
        let group = change.group();
        let literals = group_literals(group, declared);
        let settings = self
            .resolve(group, &literals)
            .map(|r| r.settings)
            .unwrap_or_default();
        let loaded = |s: &&Setting| !matches!(s.source, Source::Attribute);
        let message = match change.key() {
            Some(key) => {
                let by = settings
                    .get(key)
                    .filter(loaded)
                    .map_or_else(|| format!("leaving `{key}` unset"), ToString::to_string);
                format!(
                    "group `{group}` is live, and {by} would change its `{key}`, which is built \
                     with the breaker (as the bulkhead, the latency window and the call timing \
                     are): restart to apply it"
                )
            }
            None => {
                let policy_key =
                    |s: &&Setting| key_index(s.key).is_some_and(|i| KEYS[i].role != Role::Any);
                let by: Vec<String> = settings
                    .iter()
                    .filter(policy_key)
                    .filter(loaded)
                    .map(ToString::to_string)
                    .collect();
                let by = if by.is_empty() {
                    "the configuration".to_owned()
                } else {
                    by.join(", ")
                };
                format!(
                    "group `{group}` is live with {}, and {by} would make it {}: a live \
                     reconfiguration keeps what the breaker has counted, so it may change \
                     `threshold`, a window's rates, `min_calls`, `slow_call_ms` and \
                     `latency_p99_ms`, and the open, half-open and probe keys, but not the \
                     failure policy, the window's size, or whether slow calls or p99 latency \
                     are judged; restart to apply it",
                    change.from(),
                    change.to()
                )
            }
        };
        Error::new(ErrorKind::LivePolicyChange, message)
    }
}

/// Reads `BREAKER_CONFIG` and the `BREAKER_` variables of the process and
/// applies them to the process-wide [`registry()`](crate::registry()): what a
/// program calls at start-up. See [`Settings::from_process_env`] and
/// [`Settings::apply`].
///
/// ```no_run
/// // First thing in `main`:
/// if let Err(refused) = breakerbox::config_file::init() {
///     eprintln!("{refused}");
///     std::process::exit(2);
/// }
/// ```
pub fn init() -> Result<Applied, Error> {
    Settings::from_process_env()?.apply(crate::registry())
}
