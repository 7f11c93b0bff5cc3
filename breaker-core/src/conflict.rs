//! A conflict between two declarations of one group: what a registry records
//! and tells its subscribers when call sites disagree on a group's config.

use std::fmt;

use crate::config::Config;

/// Where the config a breaker runs with came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// Set with [`Registry::configure`](crate::Registry::configure) before the group's first use.
    Explicit,
    /// Declared by the first call site that used the group.
    Declared,
    /// The defaults: the group was first touched by
    /// [`Registry::breaker_or_default`](crate::Registry::breaker_or_default), before any call site declared a config.
    Default,
}

/// Two call sites declared different configs for one group.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    /// The group.
    pub group: &'static str,
    /// The config the breaker runs with.
    pub holding: Config,
    /// Where `holding` came from.
    pub source: ConfigSource,
    /// The first declared config (equal to `holding` unless the group was
    /// configured explicitly).
    pub first_declared: Config,
    /// The declaration that differed from `first_declared` and was not applied.
    pub ignored: Config,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "group `{}` declared with two configs; the breaker keeps {:?} ({}); ignored {:?}",
            self.group,
            self.holding,
            match self.source {
                ConfigSource::Explicit => "set explicitly",
                ConfigSource::Declared => "first declaration",
                ConfigSource::Default => "defaults: the group was used before any declaration",
            },
            self.ignored
        )
    }
}
