//! What a registry reports: conflicting declarations, values layered
//! configuration took away, the errors of its operations, and the notes a
//! locked section leaves to say (said by `notes`).

use std::fmt;

use crate::breaker::PolicyChange;
use crate::config::Config;
use crate::conflict::Conflict;
use crate::retry::RetryTuning;

/// What a section under the registry's locks leaves to say once they are
/// released (see [`Registry::say`](super::Registry::say)).
pub(super) enum Note {
    Conflict(Box<Conflict>),
    DeclarationOverride(&'static str, String),
    Refused(&'static str, String),
}

/// Turns a group's declaration into the config it runs with: given the group
/// and the config its code declared (`None` when the group is used without a
/// declaration), the layered config, or why it cannot have one. Called under
/// the registry's locks (its write lock, or its read lock and its keyed
/// groups' lock while a keyed group is made): it must not use the registry.
pub type Resolver = dyn Fn(&str, Option<&Config>) -> Result<Resolution, String> + Send + Sync;

/// What a [`Resolver`] made of one group's declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolution {
    /// The config the group's breaker runs with.
    pub config: Config,
    /// Each declared value the layers took away, said with its source
    /// (listed by [`Registry::overrides`](super::Registry::overrides)).
    pub overrides: Vec<String>,
    /// What the layers give the group's retries over the policy its code
    /// declares ([`RetryTuning::NONE`]: nothing). The group's
    /// [`Retry`](crate::Retry) is made with it, or takes it live; a group
    /// whose code never retries makes no retry for it.
    pub retry: RetryTuning,
}

/// A value of a group's declaration that layered configuration took away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclarationOverride {
    /// The group.
    pub group: &'static str,
    /// What was overridden, and by what (from the [`Resolution`]).
    pub detail: String,
}

impl fmt::Display for DeclarationOverride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "group `{}`: {}", self.group, self.detail)
    }
}

/// A group the code (or a configuration file) declares, as layered
/// configuration resolves it before its first call: what its breaker will run
/// with, and each value set with where it came from. A configuration loader
/// reports it ([`Registry::report_declared`](super::Registry::report_declared));
/// [`Registry::pending_groups`](super::Registry::pending_groups) lists it until
/// the group is made.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclaredGroup {
    /// The group.
    pub group: &'static str,
    /// The config its breaker will be made with.
    pub config: Config,
    /// Every value set, in key-table order; the keys not listed are at their
    /// defaults.
    pub settings: Vec<DeclaredSetting>,
}

/// One value of a [`DeclaredGroup`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredSetting {
    /// The key (`threshold`, `open_ms`, a retry key).
    pub key: &'static str,
    /// The value, as the configuration writes it.
    pub value: String,
    /// Where it came from (`the attribute`, `` `prod.toml` line 2, [groups.search] ``).
    pub source: String,
}

impl fmt::Display for DeclaredSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{} = {}` ({})", self.key, self.value, self.source)
    }
}

/// [`Registry::apply_config`](super::Registry::apply_config) refused a configuration; nothing of it was applied.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ApplyConfigError {
    /// The resolver refused a live group's declaration.
    Refused {
        /// The group.
        group: &'static str,
        /// The resolver's reason.
        message: String,
    },
    /// The new config would change a live breaker's failure policy.
    PolicyChange(PolicyChange),
}

impl fmt::Display for ApplyConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApplyConfigError::Refused { group, message } => {
                write!(f, "group `{group}`: {message}; nothing was applied")
            }
            ApplyConfigError::PolicyChange(change) => write!(f, "{change}; nothing was applied"),
        }
    }
}

impl std::error::Error for ApplyConfigError {}

/// A live breaker, or a keyed group (all its keys), whose config
/// [`Registry::apply_config`](super::Registry::apply_config) replaced. A keyed and an unkeyed
/// group of one name are listed once each.
#[derive(Clone, Debug, PartialEq)]
pub struct Reconfigured {
    /// The group.
    pub group: &'static str,
    /// The config it ran with.
    pub from: Config,
    /// The config it runs with now.
    pub to: Config,
}

/// A registry operation named a group it does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownGroup(pub String);

impl fmt::Display for UnknownGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no breaker for group `{}` in this registry", self.0)
    }
}

impl std::error::Error for UnknownGroup {}

/// [`Registry::configure`](super::Registry::configure) came after the group's breaker was created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlreadyCreated(pub &'static str);

impl fmt::Display for AlreadyCreated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "group `{}` is already in use; configure it before its first call",
            self.0
        )
    }
}

impl std::error::Error for AlreadyCreated {}
