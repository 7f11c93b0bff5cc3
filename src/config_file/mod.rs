//! Configuration per environment: a TOML file and `BREAKER_` variables, layered
//! over each group's attribute by one precedence rule, and validated by the
//! same [`ConfigBuilder`](crate::ConfigBuilder) the attribute uses.
//!
//! A program calls [`init`] at start-up (the file `BREAKER_CONFIG` names and
//! the `BREAKER_` variables, applied to the process-wide registry), or loads
//! [`Settings`] itself and [`apply`](Settings::apply)s them to any
//! [`Registry`](crate::Registry), before or after its groups' first calls.
//! Each group's literal layer is its declaration's
//! [explicit keys](crate::Config::explicit_keys); the attributes of the program
//! are known at start-up ([`declarations`]), so a bad composition, or a group
//! no code declares, is caught before the first call. A live registry's
//! breakers keep their state (see [`Breaker::reconfigure`](crate::Breaker::reconfigure)
//! for what applies from when, and what is refused).
//!
//! # The file
//!
//! ```toml
//! [defaults]            # every group
//! open_ms = "10s"
//!
//! [templates.flaky]     # a named set of values a group may take
//! window_ms = 60_000
//! failure_rate = 0.5
//! min_calls = 20
//!
//! [groups.search]       # one group, by the name its attribute gives
//! template = "flaky"
//! open_ms = 30_000
//! ```
//!
//! Every table takes the attribute's configuration keys ([`keys()`]), with the
//! meaning and the rules of the builder method of the same name (a duration
//! key's method is named for what it sets: `open_ms` is
//! [`open`](crate::ConfigBuilder::open)). A duration is a
//! string of parts, each a number (a decimal fraction allowed) and a unit of
//! `h`, `m`, `s`, `ms` or `us` (`"30s"`, `"250ms"`, `"1m30s"`, `"1.5s"`), from
//! the longest unit down and each unit once, that makes whole milliseconds, or
//! an integer of milliseconds, written without quotes (`open_ms = 30_000`); the
//! `BREAKER_` variables take the same spellings, and digits alone there are
//! milliseconds. An empty string, another unit, a number without its unit
//! (`"30"`, `"1m30"`), a unit repeated or out of order (`"1s1s"`, `"30s1m"`), a
//! part of a millisecond or an overflow is refused, naming the file and line
//! or the variable:
//!
//! | key | type |
//! |---|---|
//! | `threshold` | integer (`u32`) |
//! | `window_ms` | duration (`"30s"`, `"1m30s"`) or integer milliseconds (`u64`) |
//! | `window_calls` | integer (`u32`) |
//! | `failure_rate` | number (`f64`) |
//! | `min_calls` | integer (`u32`) |
//! | `slow_call_ms` | duration (`"30s"`, `"1m30s"`) or integer milliseconds (`u64`) |
//! | `slow_call_rate` | number (`f64`) |
//! | `open_ms` | duration (`"30s"`, `"1m30s"`) or integer milliseconds (`u64`) |
//! | `half_open_probes` | integer (`u32`) |
//! | `successes_to_close` | integer (`u32`) |
//! | `backoff` | number (`f64`) |
//! | `max_open_ms` | duration (`"30s"`, `"1m30s"`) or integer milliseconds (`u64`) |
//! | `probe_timeout_ms` | duration (`"30s"`, `"1m30s"`) or integer milliseconds (`u64`) |
//! | `timeout_ms` | duration (`"30s"`, `"1m30s"`) or integer milliseconds (`u64`) |
//! | `max_concurrent` | integer (`u32`) |
//! | `latency_p99_ms` | duration (`"30s"`, `"1m30s"`) or integer milliseconds (`u64`) |
//! | `ramp_ms` | duration (`"30s"`, `"1m30s"`) or integer milliseconds (`u64`) |
//! | `jitter` | number (`f64`) |
//! | `shadow` | `true` or `false` (a variable: the text `true` or `false`) |
//! | `histogram_ms` | duration (`"10s"`) or integer milliseconds (`u64`) |
//! | `throttle` | number (`f64`), at least 1.0 |
//! | `throttle_window_ms` | duration (`"2m"`) or integer milliseconds (`u64`) |
//! | `throttle_max_reject` | number (`f64`) above 0.0 and below 1.0 |
//! | `throttle_min_rps` | number (`f64`), at least 0.0 |
//! | `max_hold_ms` | duration (`"1h"`) or integer milliseconds (`u64`), whole seconds |
//! | `systemic_share` | number (`f64`), in `(0, 1]` |
//! | `max_open_keys` | number (`f64`), in `(0, 1]` |
//! | `abandoned` | `"ignore"` or `"failure"` (a variable: the word alone; `"failure"` is for client-side callers: a server-side layer sees a client's cancel as an abandoned call) |
//! | `retry` | integer (`u32`); `0` turns the group's retries off |
//! | `retry_delay_ms` | duration (`"50ms"`) or integer milliseconds (`u64`) |
//! | `retry_max_delay_ms` | duration (`"2s"`) or integer milliseconds (`u64`) |
//! | `retry_deadline_ms` | duration (`"5s"`) or integer milliseconds (`u64`) |
//! | `retry_budget_ratio` | number (`f64`) from 0.0 to 1.0 |
//! | `retry_budget_floor` | integer (`u32`) |
//!
//! `timeout_ms` and `max_concurrent` are taken for a `#[circuit_breaker]`
//! group only when its attribute names the key: the attribute builds the
//! deadline and the bulkhead into a fn only for the keys it names (so that a
//! group without them pays nothing), and [`Settings::apply`] refuses a value
//! that would never be enforced. A group made by code
//! ([`declare_group!`](crate::declare_group)) takes them: the tower layer,
//! the reqwest middleware, the tonic layer (`timeout_ms`) and the guarded
//! helpers enforce them.
//!
//! The `retry` keys tune a group's retries (see [Retries](#retries) below)
//! rather than its breaker. A
//! `[groups.NAME]` table may also say `template = "NAME"`; templates do not
//! name other templates. Integers may be written with `_`; `failure_rate`,
//! `slow_call_rate` and `backoff` take an integer or a float.
//!
//! The whole file is refused, and nothing of it applies, on: a table other
//! than these three, an unknown key (the message lists the allowed keys and
//! suggests the nearest), a `template` naming no template of the file, a value
//! of the wrong type, or a value the builder refuses whatever else is set (a
//! zero `threshold`, a `failure_rate` outside `(0, 1]`, a `backoff` below 1).
//! So is a table whose own values contradict each other, whatever the other
//! layers hold (two policy keys, `min_calls` above its own `window_calls`,
//! `max_open_ms` below its own `open_ms`), naming every value involved. Rules
//! that another layer may satisfy (a `failure_rate` needs a window, which the
//! attribute may set) are judged on each group's composed configuration by
//! [`Settings::resolve`] and [`Settings::resolve_all`].
//!
//! # Inside the application's own configuration
//!
//! With feature `serde`, [`Settings`] deserializes from any self-describing
//! serde format, so the same tables can live under a key of the app's own
//! configuration (TOML, JSON, a figment or config-rs tree) instead of a file
//! of their own. They are checked as a file is, with the same keys, durations,
//! templates, rules and messages; a message names the configuration `serde`
//! without a line ([`Settings::from_deserializer`][from_deserializer] gives it a name of your
//! choosing), and the format's own error says where the table stands. The
//! variables layer on top with [`Settings::with_env`], as over a file.
//!
#![cfg_attr(feature = "serde", doc = "```")]
#![cfg_attr(not(feature = "serde"), doc = "```ignore")]
//! use breakerbox::config_file::{Patch, Settings};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct App {
//!     listen: String,
//!     breaker: Settings,
//! }
//!
//! let app: App = toml::from_str(
//!     r#"
//!     listen = "0.0.0.0:8080"
//!
//!     [breaker.defaults]
//!     open_ms = "10s"
//!
//!     [breaker.groups.search]
//!     threshold = 3
//!     "#,
//! )?;
//! assert_eq!(app.listen, "0.0.0.0:8080");
//! let settings = app.breaker.with_env([("BREAKER_GROUPS__SEARCH__OPEN_MS", "30s")])?;
//! let search = settings.resolve("search", &Patch::new())?.config;
//! assert_eq!(search.threshold(), 3);
//! assert_eq!(search.open().as_secs(), 30);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
#![cfg_attr(
    feature = "serde",
    doc = "[from_deserializer]: Settings::from_deserializer"
)]
#![cfg_attr(
    not(feature = "serde"),
    doc = "[from_deserializer]: https://docs.rs/breakerbox/latest/breakerbox/config_file/struct.Settings.html#method.from_deserializer"
)]
//!
//! Where the app's configuration is a TOML file, hand its text and name to
//! [`Settings::from_toml_str_at`] with the key of the breaker table instead:
//! every message and source then names the file and the line of the key, as
//! for a file of its own, and the table's path as written
//! (`[breaker.groups.search]`). For a JSON file, feature `json` gives
//! [`Settings::from_json_str_at`][from_json_str_at], which does the same.
//!
#![cfg_attr(
    feature = "json",
    doc = "[from_json_str_at]: Settings::from_json_str_at"
)]
#![cfg_attr(
    not(feature = "json"),
    doc = "[from_json_str_at]: https://docs.rs/breakerbox/latest/breakerbox/config_file/struct.Settings.html#method.from_json_str_at"
)]
//!
//! ```
//! use breakerbox::config_file::{ErrorKind, Settings};
//!
//! let app = "listen = \"0.0.0.0:8080\"\n\n[breaker.groups.search]\ntreshold = 3\n";
//! let err = Settings::from_toml_str_at(app, "config.toml", "breaker").unwrap_err();
//! assert_eq!(err.kind(), ErrorKind::UnknownKey);
//! assert!(err.to_string().contains("`config.toml` line 4: [breaker.groups.search] unknown key `treshold`"));
//! ```
//!
//! # Precedence
//!
//! One rule, lowest first; each layer overrides the ones above it in this
//! table, key by key:
//!
//! | rank | layer | written as |
//! |---|---|---|
//! | 1 | crate default | the [`Config`](crate::Config) table |
//! | 2 | defaults | `[defaults]`, edited by `BREAKER_DEFAULTS__<KEY>` |
//! | 3 | the group's template | `[templates.T]`, edited by `BREAKER_TEMPLATES__<T>__<KEY>` |
//! | 4 | the attribute's literal values | `#[circuit_breaker(threshold = 3, ...)]` |
//! | 5 | the group's table | `[groups.X]` |
//! | 6 | the group's variables | `BREAKER_GROUPS__<X>__<KEY>` |
//!
//! A `BREAKER_DEFAULTS__` or `BREAKER_TEMPLATES__` variable edits the table it
//! names in place, so it overrides the file's value there but never a group's
//! own values; a `BREAKER_GROUPS__` variable overrides everything. Every
//! attribute literal that rank 5 or 6 takes away is listed in
//! [`Resolution::overrides`], with its source (file, line and table, or variable).
//!
//! **The failure policy is one choice.** `threshold` (consecutive failures),
//! `window_ms` (time window) and `window_calls` (count window) pick the policy:
//! the highest layer that sets any of them picks it, and the policy keys of
//! lower layers are dropped (a template's `window_ms` and the attribute's
//! `threshold = 3` do not mix: the attribute's wins, and a `[groups.X]
//! window_calls` would win over both). The window keys (`failure_rate`,
//! `min_calls`, `slow_call_ms`, `slow_call_rate`) of `[defaults]`, and of any
//! layer below the one that picked the consecutive policy, are dropped when
//! the group ends up with the consecutive policy: `BREAKER_DEFAULTS__MIN_CALLS=20`
//! tunes the windowed groups and leaves the others alone. Set on the group's
//! own layers under the consecutive policy, they are refused.
//!
//! # Retries
//!
//! The retry keys are the attribute's, with its meanings and rules
//! ([`RetryPolicy`](crate::RetryPolicy)): `retry` is the most attempts after
//! the first, `retry_delay_ms`, `retry_max_delay_ms` and `retry_deadline_ms` are
//! durations as above, `retry_budget_ratio` is a share of first attempts from
//! 0.0 to 1.0 and `retry_budget_floor` retries a second. They follow the
//! precedence table key by key, over the policy the group's code declares
//! (its literal layer, rank 4): `[defaults]` and the template fill the keys
//! the code leaves to their default, the group's table and variables replace
//! the code's own. `retry = 0` in a group's table (or
//! `BREAKER_GROUPS__<X>__RETRY=0`) turns the group's retries off, live: an
//! operator's switch for a dependency that retries would only bury.
//!
//! A retry is made only for a call its code says is safe to repeat. A
//! `#[circuit_breaker]` group takes the retry keys when its attribute runs a
//! retry loop: it names `retry = N` (with `idempotent = true`), or says
//! `idempotent = true` alone, a loop with no retries that configuration may
//! raise (its calls then pay the retry path's first-attempt instructions,
//! which a fn without `idempotent` does not). For a group none of whose
//! attributes does either, [`Settings::apply`] refuses a retry key from its
//! template, its table or its variables ([`ErrorKind::Unenforced`]), and
//! `[defaults]`' retry keys leave it alone; in a group of several fns, those
//! without a retry loop still run each call once. A group made by code ([`declare_group!`](crate::declare_group),
//! a tower layer's or a reqwest middleware's `retry`,
//! [`Breaker::group_retry`](crate::Breaker::group_retry)) takes the keys for
//! the code that retries; the layer and the middleware still replay only the
//! requests they hold safe to repeat, whatever the file says.
//!
//! Applied before a group's first retried call, the keys are what its retry
//! budget is made with; applied after, its calls run them from their next
//! attempt on, and the budget keeps its balance (held to the smaller of the
//! old and the new capacity: a reload never adds a retry). Settings applied later without the
//! keys return the group to its code's policy.
//!
//! ```
//! use breakerbox::config_file::Settings;
//! use breakerbox::{Config, Registry, RetryPolicy};
//!
//! static POLICY: RetryPolicy = RetryPolicy::new(2);
//! let registry = Registry::new();
//! let search = registry.breaker("search", &Config::default());
//! let retry = search.group_retry(&POLICY);
//!
//! let file = "[defaults]\nretry_budget_floor = 5\n[groups.search]\nretry = 0\n";
//! Settings::from_toml_str(file, "prod.toml")?.apply(&registry)?;
//! assert_eq!(retry.effective_policy().retries(), 0); // switched off, live
//! assert_eq!(retry.effective_policy().budget_limits(), Some((0.2, 5)));
//!
//! Settings::new().apply(&registry)?;
//! assert_eq!(retry.effective_policy(), POLICY); // back to the code's
//! # Ok::<(), breakerbox::config_file::Error>(())
//! ```
//!
//! # Variables
//!
//! - `BREAKER_CONFIG=path/to/file.toml` picks the file ([`Settings::from_env`]);
//!   unset or empty, there is no file, and variables alone apply.
//! - `BREAKER_DEFAULTS__<KEY>`, `BREAKER_TEMPLATES__<NAME>__<KEY>`,
//!   `BREAKER_GROUPS__<NAME>__<KEY>`: `__` separates the parts; the table and
//!   the key are matched ignoring case (`OPEN_MS` is `open_ms`).
//! - `<NAME>` is the group or template name as [`env_name`] spells it: ASCII
//!   letters upper-cased, digits kept, any other character (`-`, `.`, `_`)
//!   written `_`. Group `user-profile.v2` is `BREAKER_GROUPS__USER_PROFILE_V2__OPEN_MS`.
//!   A name is everything between the first and the last `__`, so it may
//!   itself hold `__`. Groups whose names differ only in case or punctuation
//!   share their variables; two such groups in one file make such a variable
//!   ambiguous, and it is refused.
//! - A template variable must name a template of the file. A group variable
//!   may name a group the file does not: it applies to the group of that
//!   name declared in code ([`Settings::undeclared`] lists those no code declares).
//!   A group made at run time (a tower layer, a reqwest middleware, a
//!   `Registry` call) is declared with [`declare_group!`](crate::declare_group),
//!   so [`init`] knows it before the group is made.
//! - A variable of the scheme that is malformed, names an unknown table or
//!   key, holds a value that does not parse or that the builder refuses, or
//!   sets a key another variable of the same table already set refuses every
//!   variable and the file, with a message naming the variable.
//! - Other `BREAKER_` variables without `__` (`BREAKER_LOG`, ...) are not
//!   this module's and are left alone. A group's `template` is chosen in the
//!   file only.
//!
//! ```
//! use breakerbox::config_file::{Patch, Settings};
//!
//! let env = [
//!     ("BREAKER_DEFAULTS__OPEN_MS", "5000"),
//!     ("BREAKER_GROUPS__SEARCH__THRESHOLD", "10"),
//! ];
//! // `with_env` layers variables over a file already read; `from_env` also
//! // reads the file `BREAKER_CONFIG` names.
//! let settings = Settings::new().with_env(env)?;
//! let search = settings.resolve("search", &Patch::new())?;
//! assert_eq!(search.config.threshold(), 10);
//! assert_eq!(search.config.open().as_millis(), 5_000);
//!
//! let bad = Settings::new().with_env([("BREAKER_GROUPS__SEARCH__OPEN_MS", "soon")]);
//! assert!(bad.unwrap_err().to_string().contains("BREAKER_GROUPS__SEARCH__OPEN_MS"));
//! # Ok::<(), breakerbox::config_file::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

mod apply;
mod duration;
mod env;
mod error;
mod file;
#[cfg(feature = "json")]
mod json;
mod patch;
mod resolve;

pub use apply::{declarations, declared_groups, init, Applied, Declaration, GroupSettings};
pub use env::{env_name, CONFIG_VAR, PREFIX};
pub use error::{Error, ErrorKind};
pub use patch::{keys, Patch, SetError, Setting, Source, Value};
pub use resolve::{Override, Resolution};

/// A loaded configuration: the file's tables with the variables' edits, each
/// value checked. Resolve a group's [`Config`](crate::Config) with
/// [`resolve`](Self::resolve).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    file: Option<Arc<Path>>,
    defaults: Patch,
    templates: BTreeMap<String, Patch>,
    groups: BTreeMap<String, FileGroup>,
    /// `BREAKER_GROUPS__<NAME>__` variables, by `<NAME>` upper-cased.
    env_groups: BTreeMap<String, Patch>,
}

/// The pairs as owned strings, to read twice (the file variable, then the rest).
fn owned<K: Into<String>, V: Into<String>>(
    vars: impl IntoIterator<Item = (K, V)>,
) -> Vec<(String, String)> {
    vars.into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
}

/// A `[groups.NAME]` table.
#[derive(Clone, Debug, PartialEq)]
struct FileGroup {
    template: Option<String>,
    patch: Patch,
    /// The table's header, for "no code declares this group".
    source: Source,
}

impl Settings {
    /// No file and no variables: every group resolves to its attribute's values.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the TOML `text` of the file named `path` (the name goes into
    /// sources and messages only).
    ///
    /// ```
    /// use breakerbox::config_file::{ErrorKind, Settings};
    ///
    /// let err = Settings::from_toml_str("[defaults]\ntreshold = 3\n", "staging.toml").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::UnknownKey);
    /// assert!(err.to_string().contains("`staging.toml` line 2: [defaults] unknown key `treshold` (did you mean `threshold`?);"));
    /// ```
    pub fn from_toml_str(text: &str, path: impl AsRef<Path>) -> Result<Self, Error> {
        file::parse(text, Arc::from(path.as_ref()))
    }

    /// Reads the breaker tables that stand under the dotted key `at` of the
    /// TOML `text` of the file named `path`: the app's own configuration file,
    /// with `[breaker.defaults]` and `[breaker.groups.NAME]` beside the app's
    /// tables for `at = "breaker"`. The app's other tables are not read (the
    /// text must still be TOML). Messages and sources name the file and the
    /// line of each key, and each table as written. A file without the table
    /// `at` configures nothing.
    ///
    /// ```
    /// use breakerbox::config_file::{Patch, Settings};
    ///
    /// let app = "[server]\nlisten = \"0.0.0.0:8080\"\n\n[breaker.groups.search]\nthreshold = 3\n";
    /// let settings = Settings::from_toml_str_at(app, "config.toml", "breaker")?;
    /// let search = settings.resolve("search", &Patch::new())?;
    /// assert_eq!(search.config.threshold(), 3);
    /// assert_eq!(
    ///     search.settings.get("threshold").unwrap().to_string(),
    ///     "`threshold = 3` (`config.toml` line 5, [breaker.groups.search])"
    /// );
    /// # Ok::<(), breakerbox::config_file::Error>(())
    /// ```
    pub fn from_toml_str_at(text: &str, path: impl AsRef<Path>, at: &str) -> Result<Self, Error> {
        file::parse_at(text, Arc::from(path.as_ref()), at)
    }

    /// Reads the breaker tables that stand under the dotted key `at` of the
    /// JSON `text` of the file named `path` (feature `json`): the app's own
    /// configuration file, with `"defaults"` and `"groups"` inside its
    /// `"breaker"` object for `at = "breaker"` (the whole document for an empty
    /// `at`). The app's other members are not read (the text must still be
    /// JSON). The tables are checked as a TOML file's are, and messages and
    /// sources name the file and the line of each key, and each table by its
    /// path of keys (`[breaker.groups.search]`). A file without the object
    /// `at` configures nothing.
    ///
    /// ```
    /// use breakerbox::config_file::{ErrorKind, Patch, Settings};
    ///
    /// let app = r#"{
    ///   "listen": "0.0.0.0:8080",
    ///   "breaker": {
    ///     "groups": { "search": { "threshold": 3 } }
    ///   }
    /// }"#;
    /// let settings = Settings::from_json_str_at(app, "config.json", "breaker")?;
    /// let search = settings.resolve("search", &Patch::new())?;
    /// assert_eq!(
    ///     search.settings.get("threshold").unwrap().to_string(),
    ///     "`threshold = 3` (`config.json` line 4, [breaker.groups.search])"
    /// );
    ///
    /// let typo = app.replace("threshold", "treshold");
    /// let err = Settings::from_json_str_at(&typo, "config.json", "breaker").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::UnknownKey);
    /// assert!(err.to_string().contains("`config.json` line 4: [breaker.groups.search] unknown key `treshold`"));
    /// # Ok::<(), breakerbox::config_file::Error>(())
    /// ```
    #[cfg(feature = "json")]
    #[cfg_attr(docsrs, doc(cfg(feature = "json")))]
    pub fn from_json_str_at(text: &str, path: impl AsRef<Path>, at: &str) -> Result<Self, Error> {
        json::parse_at(text, Arc::from(path.as_ref()), at)
    }

    /// Reads the breaker tables (`defaults`, `templates`, `groups`) from any
    /// self-describing serde format, naming the configuration `name` in
    /// messages and sources (feature `serde`). The tables are checked as a
    /// file's are, with the same keys, duration strings, templates and
    /// messages, which name `name` without a line. Layer the variables over
    /// the result with [`with_env`](Self::with_env).
    ///
    /// ```
    /// use breakerbox::config_file::{ErrorKind, Settings};
    ///
    /// let json = r#"{ "groups": { "search": { "open_ms": "soon" } } }"#;
    /// let mut de = serde_json::Deserializer::from_str(json);
    /// let err = Settings::from_deserializer(&mut de, "config.json").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::WrongType);
    /// assert!(err.to_string().contains(": `config.json`: [groups.search] open_ms = \"soon\""));
    /// ```
    #[cfg(feature = "serde")]
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn from_deserializer<'de, D>(deserializer: D, name: impl AsRef<Path>) -> Result<Self, Error>
    where
        D: serde::Deserializer<'de>,
    {
        let name: Arc<Path> = Arc::from(name.as_ref());
        let table =
            <toml::Table as serde::Deserialize>::deserialize(deserializer).map_err(|e| {
                Error::new(
                    ErrorKind::Syntax,
                    format!(
                        "`{}` is not a table of breaker settings: {e}",
                        name.display()
                    ),
                )
            })?;
        file::from_table(&table, name)
    }

    /// Reads the TOML file at `path`: at most 1 MiB of it. A larger file (or
    /// something endless, `/dev/zero` say) is refused with
    /// [`ErrorKind::Io`] once 1 MiB has been read, as is a file that is not UTF-8.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// use breakerbox::config_file::{ErrorKind, Settings};
    ///
    /// let err = Settings::from_file("/dev/zero").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Io);
    /// assert!(err.to_string().contains("`/dev/zero` is larger than 1 MiB"));
    /// # }
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        use std::io::Read as _;
        /// What a configuration file may hold.
        const MAX_BYTES: u64 = 1 << 20;
        let path = path.as_ref();
        let cannot_read = |e: std::io::Error| {
            Error::new(
                ErrorKind::Io,
                format!("cannot read `{}`: {e}", path.display()),
            )
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_BYTES + 1).read_to_end(&mut bytes))
            .map_err(cannot_read)?;
        if bytes.len() as u64 > MAX_BYTES {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "`{}` is larger than 1 MiB, the most a configuration file may hold; \
                     it was not read past that",
                    path.display()
                ),
            ));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            cannot_read(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                e.utf8_error(),
            ))
        })?;
        Self::from_toml_str(&text, path)
    }

    /// Layers the scheme's variables among `vars` over these settings (see the
    /// module docs); `BREAKER_CONFIG` and variables of other names are skipped.
    /// The first bad variable refuses them all.
    pub fn with_env<K, V>(mut self, vars: impl IntoIterator<Item = (K, V)>) -> Result<Self, Error>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let vars = owned(vars);
        env::apply(&mut self, &vars)?;
        Ok(self)
    }

    /// The file `BREAKER_CONFIG` names among `vars` (none when unset or empty),
    /// with the other variables of the scheme layered over it. Tests pass their
    /// own pairs; a program passes the process environment, as
    /// [`from_process_env`](Self::from_process_env) does.
    pub fn from_env<K, V>(vars: impl IntoIterator<Item = (K, V)>) -> Result<Self, Error>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let vars = owned(vars);
        let file = vars
            .iter()
            .rev()
            .find(|(k, _)| k == CONFIG_VAR)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty());
        let settings = match file {
            Some(path) => Self::from_file(path).map_err(|e| {
                Error::new(
                    e.kind(),
                    format!("{} (the file `{CONFIG_VAR}` names)", e.message()),
                )
            })?,
            None => Self::new(),
        };
        settings.with_env(vars)
    }

    /// [`from_env`](Self::from_env) over the process environment. A name or
    /// value that is not UTF-8 is read lossily (and a `BREAKER_` value so read
    /// is refused by its key's parser).
    pub fn from_process_env() -> Result<Self, Error> {
        Self::from_env(std::env::vars_os().map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        }))
    }

    /// Refuses the first table whose own values contradict each other
    /// (see `resolve::check_table`).
    fn check_tables(&self) -> Result<(), Error> {
        resolve::check_table("[defaults]", &self.defaults)?;
        for (name, patch) in &self.templates {
            resolve::check_table(&format!("[templates.{name}]"), patch)?;
        }
        for (name, group) in &self.groups {
            resolve::check_table(&format!("[groups.{name}]"), &group.patch)?;
        }
        for (name, patch) in &self.env_groups {
            resolve::check_table(&format!("the variables of group `{name}`"), patch)?;
        }
        Ok(())
    }

    /// The file these settings were read from, if any.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// `[defaults]`, with its variables' edits.
    pub fn defaults(&self) -> &Patch {
        &self.defaults
    }

    /// A `[templates.NAME]` table, with its variables' edits.
    pub fn template(&self, name: &str) -> Option<&Patch> {
        self.templates.get(name)
    }

    /// The names of the file's `[groups.NAME]` tables.
    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.groups.keys().map(String::as_str)
    }
}

/// The breaker tables inside an application's own configuration, in any
/// self-describing serde format (feature `serde`); messages and sources name
/// them `serde`. A refusal reaches the caller as the format's own error,
/// carrying the message; [`Settings::from_deserializer`] names the tables
/// otherwise and returns the [`Error`] itself, with its [`ErrorKind`].
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> serde::Deserialize<'de> for Settings {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_deserializer(deserializer, "serde").map_err(serde::de::Error::custom)
    }
}
