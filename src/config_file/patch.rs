//! The configuration keys (one table), their values, where each value came from,
//! and [`Patch`]: one layer of values that applies onto a [`ConfigBuilder`].

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use breaker_core::config::KeyValue;
use breaker_core::retry::{RetryPolicy, RetryValues};
use breaker_core::{Abandoned, Config, ConfigBuilder, ConfigError};
use breaker_rules::RETRY_KEY_COUNT;

use super::duration::parse_millis;

pub(crate) use breaker_rules::{Role, Ty};

/// One row of the key table: a `ConfigBuilder` or `RetryPolicy` method and
/// its attribute key.
#[derive(Clone, Copy)]
pub(crate) struct Key {
    pub(crate) name: &'static str,
    pub(crate) ty: Ty,
    pub(crate) role: Role,
    set: Set,
}

/// What a key's value sets.
#[derive(Clone, Copy)]
enum Set {
    /// A breaker's configuration key: its `ConfigBuilder` method.
    Config(fn(ConfigBuilder, Value) -> ConfigBuilder),
    /// A retry key: its value goes to the group's [`RetryValues`].
    Retry,
}

/// The loader's view of the table of keys ([`breaker_rules::config_keys!`]):
/// the TOML parser, the variable parser and [`Patch::apply`] all read it.
macro_rules! keys {
    ($($(#[$doc:meta])* $name:ident: $ty:ty $(as $method:ident)?, $role:ident, $class:ident;)*) => {
        const CONFIG_KEYS: [Key; breaker_rules::KEY_COUNT] = [$(
            Key {
                name: stringify!($name),
                ty: <$ty as FromValue>::TY,
                role: Role::$role,
                set: Set::Config(setter!($name $(as $method)?)),
            },
        )*];
    };
}

/// A key's [`Key::set`]: a duration's builder method takes the milliseconds as
/// a `Duration`.
macro_rules! setter {
    ($name:ident as $method:ident) => {
        |builder, value| builder.$method(Duration::from_millis(value.get()))
    };
    ($name:ident) => {
        |builder, value| builder.$name(value.get())
    };
}

breaker_rules::config_keys!(keys);

/// The loader's view of the table of retry keys ([`breaker_rules::retry_keys!`]).
macro_rules! retry_keys {
    ($($(#[$doc:meta])* $name:ident: $ty:ty as $method:ident, $role:ident, $class:ident;)*) => {
        const RETRY_KEYS: [Key; RETRY_KEY_COUNT] = [$(
            Key {
                name: stringify!($name),
                ty: <$ty as FromValue>::TY,
                role: Role::$role,
                set: Set::Retry,
            },
        )*];
    };
}

breaker_rules::retry_keys!(retry_keys);

const KEY_COUNT: usize = breaker_rules::KEY_COUNT + RETRY_KEY_COUNT;

/// Every key a file table or a variable may set: the breaker's, then the
/// retry keys.
pub(crate) const KEYS: [Key; KEY_COUNT] = {
    let mut all = [CONFIG_KEYS[0]; KEY_COUNT];
    let mut i = 0;
    while i < CONFIG_KEYS.len() {
        all[i] = CONFIG_KEYS[i];
        i += 1;
    }
    let mut j = 0;
    while j < RETRY_KEYS.len() {
        all[i + j] = RETRY_KEYS[j];
        j += 1;
    }
    all
};

impl Key {
    /// Whether it is a retry key.
    pub(crate) fn is_retry(&self) -> bool {
        matches!(self.set, Set::Retry)
    }
}

/// The names of every key a file table or a variable may set, in table order:
/// the `#[circuit_breaker]` keys that configure a breaker (all but `group`,
/// `fallback`, `is_failure`, `registry`, `crate` and the like), then the
/// retry keys (`retry`, `retry_delay_ms`, `retry_max_delay_ms`,
/// `retry_deadline_ms`, `retry_budget_ratio`, `retry_budget_floor`; not
/// `idempotent`, which only code may say).
pub fn keys() -> impl Iterator<Item = &'static str> {
    KEYS.iter().map(|k| k.name)
}

pub(crate) fn key_index(name: &str) -> Option<usize> {
    KEYS.iter().position(|k| k.name == name)
}

/// Builders in which a single value is judged alone: a value is refused where
/// it stands when every one of them refuses it (a `failure_rate` needs a window,
/// a `max_open_ms` a short enough `open_ms`, a `throttle_max_reject` the
/// throttle: some layer may bring those).
const ALONE: [fn() -> ConfigBuilder; 6] = [
    ConfigBuilder::new,
    || ConfigBuilder::new().open(Duration::from_millis(1)),
    // A window without a slow-call rule, for `latency_p99_ms`, which is one.
    || ConfigBuilder::new().window_calls(Config::MAX_WINDOW_CALLS),
    || {
        ConfigBuilder::new()
            .window_calls(Config::MAX_WINDOW_CALLS)
            .slow_call(Duration::from_millis(u64::MAX))
    },
    || {
        ConfigBuilder::new()
            .window(Duration::from_millis(u64::MAX))
            .slow_call(Duration::from_millis(u64::MAX))
    },
    // The throttle, for the keys that tune it.
    || ConfigBuilder::new().throttle(1.0),
];

/// The builder's verdict on `value` for the key at `index`, with nothing else
/// known: `Err` when no other layer could make it acceptable.
pub(crate) fn check_alone(index: usize, value: Value) -> Result<(), ConfigError> {
    let key = &KEYS[index];
    let set = match key.set {
        Set::Config(set) => set,
        // The retry keys' one rule; each other takes any value of its type.
        Set::Retry => {
            let mut alone = breaker_rules::RetryValues::EMPTY;
            alone.set(key.name, value.into());
            return breaker_rules::check_retry(&alone);
        }
    };
    let mut refusals = Vec::with_capacity(ALONE.len());
    for base in ALONE {
        match set(base(), value).build() {
            Ok(_) => return Ok(()),
            Err(e) => refusals.push(e),
        }
    }
    // Every builder refused it: say why in the words of the key's own rule.
    let about_key = refusals.iter().find(|e| e.key() == key.name);
    Err(*about_key.unwrap_or(&refusals[0]))
}

/// What the key at `index` takes, for "takes ..." messages: its type, and for a
/// whole number the range the rules accept when nothing else is set (found by
/// asking them, so a message never offers a value [`check_alone`] refuses).
pub(crate) fn takes(index: usize) -> String {
    let accepted = |v: u64| {
        let value = match KEYS[index].ty {
            Ty::U32 => Value::U32(u32::try_from(v).unwrap_or(u32::MAX)),
            Ty::U64 => Value::U64(v),
            Ty::F64 => Value::F64(v as f64),
            Ty::Bool => Value::Bool(v != 0),
            Ty::Choice(words) => Value::Choice(words[0]),
        };
        check_alone(index, value).is_ok()
    };
    let (max, ty) = match KEYS[index].ty {
        Ty::U32 => (u64::from(u32::MAX), "u32"),
        Ty::U64 => (u64::MAX, "u64"),
        Ty::F64 => return "a number (f64), like 0.5 or 2".to_owned(),
        Ty::Bool => return "a boolean, `true` or `false`".to_owned(),
        Ty::Choice(words) => return format!("one of {}", quoted_words(words)),
    };
    let duration = KEYS[index].ty == Ty::U64;
    // The values the rules accept alone are one range: find its ends.
    let Some(low) = (0..=max.min(64)).find(|&v| accepted(v)) else {
        return format!("a whole number ({ty})");
    };
    let takes = |range: String| match duration {
        true => format!(
            "a duration like \"30s\", \"250ms\" or \"1m30s\" (units `h`, `m`, `s`, `ms`, \
             `us`), or whole milliseconds: {range}"
        ),
        false => range,
    };
    let (mut ok, mut bad) = (low, max);
    if accepted(max) {
        ok = max;
    } else {
        while bad - ok > 1 {
            let mid = ok + (bad - ok) / 2;
            if accepted(mid) {
                ok = mid;
            } else {
                bad = mid;
            }
        }
    }
    takes(format!("a whole number from {low} to {ok} ({ty})"))
}

/// `words` as a file writes them: `"ignore"` or `"failure"`.
pub(crate) fn quoted_words(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A configuration value, typed as its builder method takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A `u32` key (`threshold`, `window_calls`, `min_calls`, ...).
    U32(u32),
    /// A `u64` key (the `*_ms` keys).
    U64(u64),
    /// An `f64` key (`failure_rate`, `slow_call_rate`, `backoff`).
    F64(f64),
    /// A `bool` key (`shadow`).
    Bool(bool),
    /// A word of a key that takes one of a few (`abandoned`: `"ignore"` or
    /// `"failure"`).
    Choice(&'static str),
}

impl From<KeyValue> for Value {
    fn from(value: KeyValue) -> Self {
        match value {
            KeyValue::U32(v) => Value::U32(v),
            KeyValue::U64(v) => Value::U64(v),
            KeyValue::F64(v) => Value::F64(v),
            KeyValue::Bool(v) => Value::Bool(v),
            KeyValue::Choice(v) => Value::Choice(v),
        }
    }
}

impl From<Value> for KeyValue {
    fn from(value: Value) -> Self {
        match value {
            Value::U32(v) => KeyValue::U32(v),
            Value::U64(v) => KeyValue::U64(v),
            Value::F64(v) => KeyValue::F64(v),
            Value::Bool(v) => KeyValue::Bool(v),
            Value::Choice(v) => KeyValue::Choice(v),
        }
    }
}

/// Reads a [`Value`] as its key's type; the key table pairs each key with it.
trait FromValue {
    const TY: Ty;
    fn from_value(value: Value) -> Self;
}

impl FromValue for u32 {
    const TY: Ty = Ty::U32;
    fn from_value(value: Value) -> Self {
        match value {
            Value::U32(v) => v,
            _ => unreachable!("a Patch holds each value as its key's type"),
        }
    }
}

impl FromValue for u64 {
    const TY: Ty = Ty::U64;
    fn from_value(value: Value) -> Self {
        match value {
            Value::U64(v) => v,
            _ => unreachable!("a Patch holds each value as its key's type"),
        }
    }
}

impl FromValue for f64 {
    const TY: Ty = Ty::F64;
    fn from_value(value: Value) -> Self {
        match value {
            Value::F64(v) => v,
            _ => unreachable!("a Patch holds each value as its key's type"),
        }
    }
}

impl FromValue for bool {
    const TY: Ty = Ty::Bool;
    fn from_value(value: Value) -> Self {
        match value {
            Value::Bool(v) => v,
            _ => unreachable!("a Patch holds each value as its key's type"),
        }
    }
}

impl FromValue for Abandoned {
    const TY: Ty = Ty::Choice(Abandoned::WORDS);
    fn from_value(value: Value) -> Self {
        match value {
            Value::Choice(word) => Abandoned::from_word(word)
                .expect("a Patch holds each value as its key's type, a word of its choice"),
            _ => unreachable!("a Patch holds each value as its key's type"),
        }
    }
}

impl Value {
    fn get<T: FromValue>(self) -> T {
        T::from_value(self)
    }

    fn ty(self) -> Ty {
        match self {
            Value::U32(_) => Ty::U32,
            Value::U64(_) => Ty::U64,
            Value::F64(_) => Ty::F64,
            Value::Bool(_) => Ty::Bool,
            // `abandoned` is the one key of words.
            Value::Choice(_) => Ty::Choice(Abandoned::WORDS),
        }
    }

    /// Reads `text` as a value of `ty`: decimal digits for counts (`_`
    /// between digits allowed, as in TOML), a duration (`"30s"`, `"1m30s"`)
    /// or whole milliseconds for the `*_ms` keys, any `f64` literal for
    /// numbers, `true` or `false` for a switch, one of its words for a choice.
    pub(crate) fn parse(ty: Ty, text: &str) -> Option<Value> {
        let text = text.trim();
        let digits = || {
            let ok = !text.starts_with('_') && !text.ends_with('_') && !text.contains("__");
            ok.then(|| text.replace('_', ""))
        };
        match ty {
            Ty::U32 => digits()?.parse().ok().map(Value::U32),
            Ty::U64 => parse_millis(text).ok().map(Value::U64),
            Ty::F64 => text.parse().ok().map(Value::F64),
            Ty::Bool => match text {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            Ty::Choice(words) => words.iter().find(|w| **w == text).map(|w| Value::Choice(w)),
        }
    }

    /// Converts a TOML integer, `None` when out of the type's range.
    pub(crate) fn from_integer(ty: Ty, v: i128) -> Option<Value> {
        match ty {
            Ty::U32 => u32::try_from(v).ok().map(Value::U32),
            Ty::U64 => u64::try_from(v).ok().map(Value::U64),
            Ty::F64 => Some(Value::F64(v as f64)),
            Ty::Bool | Ty::Choice(_) => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::U32(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v:?}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Choice(v) => write!(f, "\"{v}\""),
        }
    }
}

/// Where a value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// A key in a configuration file.
    File {
        /// The file, as it was named (by `BREAKER_CONFIG` or the caller).
        path: Arc<Path>,
        /// The table: `defaults`, `templates.NAME` or `groups.NAME`.
        table: String,
        /// The line of the key, from 1.
        line: usize,
    },
    /// A key of a table deserialized with serde (feature `serde`), from a
    /// format whose lines the loader does not see.
    Serde {
        /// The configuration, as it was named
        /// ([`Settings::from_deserializer`](super::Settings) names it; the
        /// `Deserialize` impl names it `serde`).
        name: Arc<Path>,
        /// The table: `defaults`, `templates.NAME` or `groups.NAME`.
        table: String,
    },
    /// An environment variable, by its name.
    Env {
        /// The variable, e.g. `BREAKER_GROUPS__SEARCH__OPEN_MS`.
        var: String,
    },
    /// The `#[circuit_breaker]` attribute of the group (the literal layer).
    Attribute,
    /// The config the code made the group with
    /// ([`Registry::breaker`](crate::Registry::breaker), a keyed group's,
    /// [`declare_group!`](crate::declare_group)): the literal layer of a
    /// group no attribute declares, as [`GroupSettings`](super::GroupSettings)
    /// lists it.
    Code,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File { path, table, line } => {
                write!(f, "`{}` line {line}, [{table}]", path.display())
            }
            Source::Serde { name, table } => write!(f, "`{}`, [{table}]", name.display()),
            Source::Env { var } => write!(f, "variable `{var}`"),
            Source::Attribute => f.write_str("the attribute"),
            Source::Code => f.write_str("the code"),
        }
    }
}

/// One value with its key and source.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// The key, one of [`keys()`].
    pub key: &'static str,
    /// The value, typed as the key's builder method takes it.
    pub value: Value,
    /// Where it was written.
    pub source: Source,
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{} = {}` ({})", self.key, self.value, self.source)
    }
}

/// Why [`Patch::set`] refused a value.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SetError {
    /// No key of that name; `fallback`, `is_failure`, `registry`, `crate` and
    /// `group` are not configuration keys.
    UnknownKey,
    /// The value is not of the key's type (`open_ms` takes a `u64`).
    WrongType,
    /// The builder refuses the value whatever else is set.
    Refused(ConfigError),
}

impl fmt::Display for SetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetError::UnknownKey => write!(
                f,
                "not a configuration key; keys: {}",
                keys().collect::<Vec<_>>().join(", ")
            ),
            SetError::WrongType => f.write_str("the value is not of the key's type"),
            SetError::Refused(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SetError {}

/// One layer of configuration: each key set or not, each set value with its
/// [`Source`]. Layers compose by precedence (see the module docs); a patch
/// applies onto a [`ConfigBuilder`] with [`apply`](Self::apply).
///
/// ```
/// use breakerbox::config_file::{Patch, Source, Value};
/// use breakerbox::Config;
///
/// let mut literals = Patch::new();
/// literals.set("threshold", Value::U32(3), Source::Attribute).unwrap();
/// let config = literals.apply(Config::builder()).build().unwrap();
/// assert_eq!(config.threshold(), 3);
/// assert!(literals.set("treshold", Value::U32(3), Source::Attribute).is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    values: [Option<Setting>; KEY_COUNT],
}

impl Default for Patch {
    fn default() -> Self {
        Patch {
            values: std::array::from_fn(|_| None),
        }
    }
}

impl Patch {
    /// A patch that sets nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` to `value`, replacing what it held. Refused when the key is
    /// unknown, the value is not of the key's type, or the builder refuses the
    /// value whatever else is set (a zero `threshold`, a `failure_rate` of 1.5).
    pub fn set(&mut self, key: &str, value: Value, source: Source) -> Result<(), SetError> {
        let index = key_index(key).ok_or(SetError::UnknownKey)?;
        if KEYS[index].ty != value.ty() {
            return Err(SetError::WrongType);
        }
        check_alone(index, value).map_err(SetError::Refused)?;
        self.put(index, value, source);
        Ok(())
    }

    /// Sets an already checked value.
    pub(crate) fn put(&mut self, index: usize, value: Value, source: Source) {
        self.values[index] = Some(Setting {
            key: KEYS[index].name,
            value,
            source,
        });
    }

    pub(crate) fn at(&self, index: usize) -> Option<&Setting> {
        self.values[index].as_ref()
    }

    /// The value set for `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.at(key_index(key)?)
    }

    /// Every value set, in key-table order.
    pub fn iter(&self) -> impl Iterator<Item = &Setting> {
        self.values.iter().flatten()
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.values.iter().all(Option::is_none)
    }

    /// The literal layer of a declaration: every key `config`'s builder was
    /// told ([`Config::explicit_keys`]), with the value it holds, from
    /// [`Source::Attribute`]. A literal equal to the default is kept, so it
    /// still ranks above `[defaults]` and templates.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::config_file::{Patch, Value};
    /// use breakerbox::Config;
    ///
    /// let declared = Config::builder().threshold(3).open(Duration::from_secs(30)).build().unwrap();
    /// let literals = Patch::from_config(&declared);
    /// assert_eq!(literals.get("open_ms").unwrap().value, Value::U64(30_000));
    /// assert!(literals.get("backoff").is_none());
    /// ```
    pub fn from_config(config: &Config) -> Patch {
        let mut patch = Patch::new();
        for key in config.explicit_keys() {
            if let (Some(index), Some(value)) = (key_index(key), config.value(key)) {
                patch.put(index, value.into(), Source::Attribute);
            }
        }
        patch
    }

    /// The retry literals of a declaration: every retry key `policy`'s
    /// builder was told ([`RetryPolicy::explicit_keys`]), with the value it
    /// holds, from [`Source::Attribute`].
    pub(crate) fn add_retry_literals(&mut self, policy: &RetryPolicy) {
        for key in policy.explicit_keys() {
            if let (Some(index), Some(value)) = (key_index(key), policy.value(key)) {
                self.put(index, value.into(), Source::Attribute);
            }
        }
    }

    /// Calls the builder method of every configuration key set, in key-table
    /// order (the retry keys configure no breaker: see
    /// [`Resolution::retry`](super::Resolution::retry)).
    pub fn apply(&self, builder: ConfigBuilder) -> ConfigBuilder {
        KEYS.iter()
            .zip(&self.values)
            .fold(builder, |builder, (key, setting)| {
                match (key.set, setting) {
                    (Set::Config(set), Some(setting)) => set(builder, setting.value),
                    _ => builder,
                }
            })
    }

    /// The retry keys set in `layers`, a later layer's value over an
    /// earlier one's.
    pub(crate) fn retry_values(layers: &[&Patch]) -> RetryValues {
        let mut values = breaker_rules::RetryValues::EMPTY;
        for patch in layers {
            for (key, setting) in KEYS.iter().zip(&patch.values) {
                if let (Set::Retry, Some(setting)) = (key.set, setting) {
                    values.set(key.name, setting.value.into());
                }
            }
        }
        tuning_values(values)
    }
}

/// The retry keys' values as a [`RetryTuning`](breaker_core::retry::RetryTuning)
/// layer takes them. Every retry key is named here, so a key added to the
/// table without its place in the tuning fails to build.
fn tuning_values(values: breaker_rules::RetryValues) -> RetryValues {
    let breaker_rules::RetryValues {
        retry,
        retry_delay_ms,
        retry_max_delay_ms,
        retry_deadline_ms,
        retry_budget_ratio,
        retry_budget_floor,
    } = values;
    let duration = |ms: Option<u64>| ms.map(Duration::from_millis);
    RetryValues {
        retries: retry,
        delay: duration(retry_delay_ms),
        max_delay: duration(retry_max_delay_ms),
        deadline: duration(retry_deadline_ms),
        budget_ratio: retry_budget_ratio,
        budget_floor: retry_budget_floor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of `key`'s type that some builder of [`ALONE`] accepts, and that builder.
    fn accepted(index: usize) -> (Value, ConfigBuilder) {
        let Set::Config(set) = KEYS[index].set else {
            panic!("`{}` configures no breaker", KEYS[index].name);
        };
        // 20 s for a key that takes whole seconds (`max_hold_ms`).
        let candidates = match KEYS[index].ty {
            Ty::U32 => [Value::U32(20), Value::U32(7), Value::U32(20)],
            Ty::U64 => [Value::U64(20), Value::U64(7), Value::U64(20_000)],
            Ty::F64 => [Value::F64(0.25), Value::F64(3.0), Value::F64(0.25)],
            Ty::Bool => [Value::Bool(true), Value::Bool(false), Value::Bool(true)],
            Ty::Choice(words) => [
                Value::Choice(words[1]),
                Value::Choice(words[0]),
                Value::Choice(words[1]),
            ],
        };
        for value in candidates {
            for base in ALONE {
                let builder = set(base(), value);
                if builder.build().is_ok() {
                    return (value, builder);
                }
            }
        }
        panic!("no value of `{}` is accepted", KEYS[index].name);
    }

    #[test]
    fn every_key_of_the_table_reads_back_from_a_config_that_set_it() {
        for (index, key) in KEYS.iter().enumerate().filter(|(_, k)| !k.is_retry()) {
            let (value, builder) = accepted(index);
            let literals = Patch::from_config(&builder.build().unwrap());
            let read = literals.get(key.name).map(|s| s.value);
            assert_eq!(read, Some(value), "`{}`", key.name);
        }
    }

    #[test]
    fn the_range_a_message_offers_is_the_one_the_rules_accept() {
        let range = |key| takes(key_index(key).unwrap());
        assert_eq!(range("threshold"), "a whole number from 1 to 1048575 (u32)");
        assert_eq!(
            range("window_ms"),
            "a duration like \"30s\", \"250ms\" or \"1m30s\" (units `h`, `m`, `s`, `ms`, `us`), \
             or whole milliseconds: a whole number from 10 to 18446744073709551615 (u64)"
        );
        assert_eq!(
            range("window_calls"),
            "a whole number from 1 to 65536 (u32)"
        );
        assert_eq!(
            range("half_open_probes"),
            "a whole number from 1 to 1023 (u32)"
        );
        assert_eq!(range("backoff"), "a number (f64), like 0.5 or 2");
        assert_eq!(range("retry"), "a whole number from 0 to 4294967295 (u32)");
    }

    #[test]
    fn every_retry_literal_a_policy_was_built_with_reads_back() {
        let policy = RetryPolicy::new(2)
            .delay(Duration::from_millis(7))
            .max_delay(Duration::from_millis(70))
            .deadline(Duration::from_secs(1))
            .budget(0.25, 3);
        let mut literals = Patch::new();
        literals.add_retry_literals(&policy);
        let read: Vec<_> = literals.iter().map(|s| (s.key, s.value)).collect();
        assert_eq!(
            read,
            [
                ("retry", Value::U32(2)),
                ("retry_delay_ms", Value::U64(7)),
                ("retry_max_delay_ms", Value::U64(70)),
                ("retry_deadline_ms", Value::U64(1_000)),
                ("retry_budget_ratio", Value::F64(0.25)),
                ("retry_budget_floor", Value::U32(3)),
            ]
        );
        let values = Patch::retry_values(&[&literals]);
        assert_eq!(values.retries, Some(2));
        assert_eq!(values.budget_floor, Some(3));
        assert!(Patch::new().apply(Config::builder()).build().is_ok());
        assert_eq!(
            literals.apply(Config::builder()).build().unwrap(),
            Config::DEFAULT,
            "retry keys configure no breaker"
        );
    }
}
