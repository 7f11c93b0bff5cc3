//! Composes one group's layers by precedence into a validated [`Config`], and
//! lists every attribute literal the file or the environment took away.

use breaker_core::retry::RetryTuning;
use breaker_core::{Config, ConfigBuilder, ConfigError};

use super::env::env_name;
use super::error::{Error, ErrorKind};
use super::patch::{Patch, Role, Setting, Source, Value, KEYS};
use super::Settings;

/// A group's configuration, composed and validated, with what overrode its
/// attribute.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Resolution {
    /// The configuration the group's breaker should get.
    pub config: Config,
    /// Every value that went into it, with its source; keys left unset take
    /// the crate default.
    pub settings: Patch,
    /// Every attribute literal the file or the environment took away, in
    /// key-table order.
    pub overrides: Vec<Override>,
    /// What the retry keys give the group's retries, over the policy its
    /// code declares: `[defaults]` and the template fill the keys the code
    /// leaves to their default, the group's table and variables replace the
    /// code's own (see [`RetryTuning::over`]).
    pub retry: RetryTuning,
}

/// An attribute literal taken away by the file or the environment.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// The attribute's key.
    pub key: &'static str,
    /// The attribute's value.
    pub literal: Value,
    /// What took its place: the same key with another value, or, when a higher
    /// layer picked another failure policy, that layer's policy key.
    pub by: Setting,
}

impl std::fmt::Display for Override {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the attribute's `{} = {}` is overridden by {}",
            self.key, self.literal, self.by
        )
    }
}

/// A layer's place in the precedence, lowest first (crate defaults are below all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Defaults,
    Template,
    Attribute,
    Group,
    Env,
}

fn picks_policy(patch: &Patch) -> bool {
    KEYS.iter()
        .enumerate()
        .any(|(i, k)| k.role == Role::Picks && patch.at(i).is_some())
}

fn picks_window(patch: &Patch) -> bool {
    ["window_ms", "window_calls"]
        .iter()
        .any(|k| patch.get(k).is_some())
}

/// The layers, lowest first, merged key by key (see the module docs for the
/// policy rule), and the attribute literals that lost.
fn compose(layers: &[(Rank, &Patch)]) -> (Patch, Vec<Override>) {
    let chooser = layers.iter().rposition(|(_, p)| picks_policy(p));
    let windowed = chooser.is_some_and(|c| picks_window(layers[c].1));
    let chooser_setting = chooser.and_then(|c| {
        KEYS.iter()
            .enumerate()
            .filter(|(_, k)| k.role == Role::Picks)
            .find_map(|(i, _)| layers[c].1.at(i).cloned())
    });
    let kept = |layer: usize, role: Role| match role {
        Role::Picks => Some(layer) == chooser,
        Role::Window if !windowed => {
            layers[layer].0 != Rank::Defaults && chooser.is_none_or(|c| layer >= c)
        }
        _ => true,
    };
    let mut out = Patch::new();
    let mut overrides = Vec::new();
    for (index, key) in KEYS.iter().enumerate() {
        let mut winner = None;
        let mut literal = None;
        for (layer, (rank, patch)) in layers.iter().enumerate() {
            let Some(setting) = patch.at(index) else {
                continue;
            };
            if *rank == Rank::Attribute {
                literal = Some(setting.value);
            }
            if kept(layer, key.role) {
                winner = Some((layer, setting));
            }
        }
        if let Some((_, setting)) = winner {
            out.put(index, setting.value, setting.source.clone());
        }
        let Some(literal) = literal else { continue };
        let by = match winner {
            Some((layer, setting)) if layers[layer].0 > Rank::Attribute => {
                (setting.value != literal).then(|| setting.clone())
            }
            Some(_) => None,
            None => chooser_setting.clone(),
        };
        if let Some(by) = by {
            overrides.push(Override {
                key: key.name,
                literal,
                by,
            });
        }
    }
    (out, overrides)
}

/// The keys the builder's verdict `e` is about: its own key, every key its
/// message names, and every policy key when more than one is set.
fn involved<'p>(patch: &'p Patch, e: &ConfigError) -> impl Iterator<Item = &'p Setting> {
    let (key, message) = (e.key(), e.to_string());
    let picks = |s: &Setting| {
        KEYS.iter()
            .any(|k| k.name == s.key && k.role == Role::Picks)
    };
    let policies = patch.iter().filter(|s| picks(s)).count();
    patch.iter().filter(move |s| {
        s.key == key || message.contains(&format!("`{}`", s.key)) || (policies > 1 && picks(s))
    })
}

/// "`what`: the builder's rule; its values come from: each involved setting".
fn refusal(what: &str, patch: &Patch, e: ConfigError) -> Error {
    let mut from: Vec<String> = involved(patch, &e).map(|s| s.to_string()).collect();
    if from.is_empty() {
        from.push("crate defaults".to_owned());
    }
    Error::new(
        ErrorKind::Refused,
        format!("{what}: {e}; its values come from {}", from.join(", ")),
    )
}

/// Refuses a table whose own values contradict each other, whatever the other
/// layers say: two policy keys (`window_ms` with `window_calls` or with
/// `threshold`), or a rule between keys all set in it (`min_calls` above
/// `window_calls`, `max_open_ms` below `open_ms`). A rule that another layer
/// may satisfy (`failure_rate` without a window) waits for the group's
/// composed configuration.
pub(crate) fn check_table(what: &str, patch: &Patch) -> Result<(), Error> {
    let Err(e) = patch.apply(ConfigBuilder::new()).build() else {
        return Ok(());
    };
    let policies = KEYS
        .iter()
        .filter(|k| k.role == Role::Picks && patch.get(k.name).is_some())
        .count();
    let message = e.to_string();
    let named: Vec<&str> = KEYS
        .iter()
        .map(|k| k.name)
        .filter(|k| *k == e.key() || message.contains(&format!("`{k}`")))
        .collect();
    let all_here = named.len() >= 2 && named.iter().all(|k| patch.get(k).is_some());
    if policies > 1 || all_here {
        return Err(refusal(&format!("{what} contradicts itself"), patch, e));
    }
    Ok(())
}

impl Settings {
    /// Composes `group`'s configuration, lowest first: crate default <
    /// `[defaults]` < its template < `literals` (its attribute's values) <
    /// `[groups.<group>]` < its `BREAKER_GROUPS__` variables, and validates the
    /// result with [`ConfigBuilder::build`]. A group the file does not name
    /// gets the defaults, its literals and its variables.
    ///
    /// ```
    /// use breakerbox::config_file::{Patch, Settings, Source, Value};
    ///
    /// let file = "[defaults]\nopen_ms = 10_000\n[groups.search]\nthreshold = 4\n";
    /// let settings = Settings::from_toml_str(file, "breaker.toml")?
    ///     .with_env([("BREAKER_GROUPS__SEARCH__OPEN_MS", "5000")])?;
    /// let mut literals = Patch::new();
    /// literals.set("threshold", Value::U32(3), Source::Attribute).unwrap();
    ///
    /// let search = settings.resolve("search", &literals)?;
    /// assert_eq!(search.config.threshold(), 4);
    /// assert_eq!(search.config.open().as_millis(), 5_000);
    /// assert_eq!(search.overrides[0].to_string(),
    ///     "the attribute's `threshold = 3` is overridden by `threshold = 4` \
    ///      (`breaker.toml` line 4, [groups.search])");
    /// # Ok::<(), breakerbox::config_file::Error>(())
    /// ```
    pub fn resolve(&self, group: &str, literals: &Patch) -> Result<Resolution, Error> {
        let empty = Patch::new();
        let file = self.groups.get(group);
        let template = file
            .and_then(|g| g.template.as_ref())
            .and_then(|t| self.templates.get(t))
            .unwrap_or(&empty);
        let layers = [
            (Rank::Defaults, &self.defaults),
            (Rank::Template, template),
            (Rank::Attribute, literals),
            (Rank::Group, file.map_or(&empty, |g| &g.patch)),
            (
                Rank::Env,
                self.env_groups.get(&env_name(group)).unwrap_or(&empty),
            ),
        ];
        let (settings, overrides) = compose(&layers);
        let config = settings
            .apply(ConfigBuilder::new())
            .build()
            .map_err(|e| refusal(&format!("group `{group}`"), &settings, e))?;
        let retry = RetryTuning {
            fallback: Patch::retry_values(&[layers[0].1, layers[1].1]),
            overriding: Patch::retry_values(&[layers[3].1, layers[4].1]),
        };
        Ok(Resolution {
            config,
            settings,
            overrides,
            retry,
        })
    }

    /// Resolves every `(group, literals)` declared, all or nothing: the first
    /// group whose composed configuration the builder refuses refuses them all.
    pub fn resolve_all<'a>(
        &self,
        declared: impl IntoIterator<Item = (&'a str, &'a Patch)>,
    ) -> Result<Vec<(String, Resolution)>, Error> {
        declared
            .into_iter()
            .map(|(group, literals)| Ok((group.to_owned(), self.resolve(group, literals)?)))
            .collect()
    }

    /// The groups the file or the variables configure that none of `declared`
    /// is (by exact name for the file, by [`env_name`] for variables), each with
    /// where it was named: a typo in a group name, caught at start-up.
    pub fn undeclared<'a>(
        &self,
        declared: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Vec<(String, Source)> {
        let mut out = Vec::new();
        for (name, group) in &self.groups {
            if !declared.clone().into_iter().any(|d| d == name) {
                out.push((name.clone(), group.source.clone()));
            }
        }
        for (form, patch) in &self.env_groups {
            let Some(first) = patch.iter().next() else {
                continue;
            };
            if !declared.clone().into_iter().any(|d| env_name(d) == *form) {
                out.push((form.clone(), first.source.clone()));
            }
        }
        out
    }
}
