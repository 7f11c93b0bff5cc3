//! Turns the attribute's tokens into [`Args`]: one `key = value` at a time, every
//! mistake collected (not just the first) so one build shows them all.

use breaker_rules::{Abandoned, Values};
use proc_macro2::{Literal, Span, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Lit, LitStr, Path, Token};

/// A number (or, for a switch, a `bool`) a config key takes, named by its Rust
/// type (the type of the builder method's parameter).
pub(crate) trait Number: Copy + std::str::FromStr<Err: std::fmt::Display> {
    /// The type's name, which is also the one literal suffix accepted.
    const TYPE: &'static str;
    /// What a message calls it: "an integer (u32)".
    const WHAT: &'static str;
    /// A value of this type to show in messages.
    const EXAMPLE: &'static str;
    /// Whether a float literal (`2.5`) is one.
    const FLOAT: bool = false;
    /// Whether a `true`/`false` literal is one (and nothing else is).
    const BOOL: bool = false;
    /// The value written as the expansion emits it: unsuffixed, so the builder
    /// method's parameter types it and no literal-style lint fires on it.
    fn unsuffixed(self) -> TokenTree;
    /// Whether `self` is a value at all (a float literal can overflow to infinity).
    fn is_finite(self) -> bool {
        true
    }
}

impl Number for u32 {
    const TYPE: &'static str = "u32";
    const WHAT: &'static str = "an integer (u32)";
    const EXAMPLE: &'static str = "3";
    fn unsuffixed(self) -> TokenTree {
        Literal::u32_unsuffixed(self).into()
    }
}

impl Number for u64 {
    const TYPE: &'static str = "u64";
    const WHAT: &'static str = "an integer (u64)";
    const EXAMPLE: &'static str = "30000";
    fn unsuffixed(self) -> TokenTree {
        Literal::u64_unsuffixed(self).into()
    }
}

impl Number for f64 {
    const TYPE: &'static str = "f64";
    const WHAT: &'static str = "a number (f64)";
    const EXAMPLE: &'static str = "2.0";
    const FLOAT: bool = true;
    fn unsuffixed(self) -> TokenTree {
        Literal::f64_unsuffixed(self).into()
    }
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
}

impl Number for bool {
    const TYPE: &'static str = "bool";
    const WHAT: &'static str = "a boolean (bool)";
    const EXAMPLE: &'static str = "true";
    const BOOL: bool = true;
    fn unsuffixed(self) -> TokenTree {
        Ident::new(if self { "true" } else { "false" }, Span::call_site()).into()
    }
}

/// The type of a config key's value: a [`Number`] or a word of a choice.
pub(crate) trait KeyType: Copy + 'static {
    /// A value of this type to show in messages.
    const EXAMPLE: &'static str;
    /// Reads the value of `key` and the literal the expansion writes for it,
    /// spanned at the user's; for a word, also the path of its variant from
    /// the crate's `__private` module (`Abandoned::Failure`).
    fn read_value(
        input: ParseStream<'_>,
        key: &Ident,
        example: &str,
    ) -> syn::Result<(Self, TokenTree, Option<[&'static str; 2]>)>;
}

macro_rules! number_key_type {
    ($($ty:ty),*) => {$(
        impl KeyType for $ty {
            const EXAMPLE: &'static str = <$ty as Number>::EXAMPLE;
            fn read_value(
                input: ParseStream<'_>,
                key: &Ident,
                example: &str,
            ) -> syn::Result<(Self, TokenTree, Option<[&'static str; 2]>)> {
                let (value, span) = read_number::<$ty>(input, key, example)?;
                let mut literal = value.unsuffixed();
                literal.set_span(span);
                Ok((value, literal, None))
            }
        }
    )*};
}

number_key_type!(u32, u64, f64, bool);

impl KeyType for Abandoned {
    const EXAMPLE: &'static str = "\"failure\"";
    fn read_value(
        input: ParseStream<'_>,
        key: &Ident,
        example: &str,
    ) -> syn::Result<(Self, TokenTree, Option<[&'static str; 2]>)> {
        let written = LitStr::read(input, key, example)?;
        let word = written.value();
        let Some(value) = Abandoned::from_word(&word) else {
            let words: Vec<String> = Abandoned::WORDS
                .iter()
                .map(|w| format!("`\"{w}\"`"))
                .collect();
            return Err(syn::Error::new(
                written.span(),
                format!(
                    "`{key}` takes one of {}; `\"{word}\"` is none of them, write `{key} = {example}`",
                    words.join(" or ")
                ),
            ));
        };
        let variant = match value {
            Abandoned::Ignore => "Ignore",
            Abandoned::Failure => "Failure",
        };
        let mut literal = Literal::string(&word);
        literal.set_span(written.span());
        Ok((value, literal.into(), Some(["Abandoned", variant])))
    }
}

/// A config key's value, ready for both of its uses.
pub(crate) struct ConfigValue {
    /// The value as the expansion writes it, spanned at the user's literal
    /// (a word as its string, which `variant` says how to write).
    pub(crate) literal: TokenTree,
    /// The type and variant, in the crate's `__private` module, of a word.
    pub(crate) variant: Option<[&'static str; 2]>,
    /// The builder method of a duration key (`open_ms` is `open`),
    /// which takes the milliseconds as a `Duration`; `None` for a number key,
    /// whose method is the key.
    pub(crate) duration_method: Option<&'static str>,
    /// Sets the key's value, so `validate` can check it with the runtime's own
    /// rules.
    pub(crate) apply: Box<dyn Fn(&mut Values)>,
}

impl ConfigValue {
    fn read<N: KeyType>(
        input: ParseStream<'_>,
        key: &Ident,
        example: &str,
        duration_method: Option<&'static str>,
        set: fn(&mut Values, N),
    ) -> syn::Result<Self> {
        let (value, literal, variant) = N::read_value(input, key, example)?;
        Ok(ConfigValue {
            literal,
            variant,
            duration_method,
            apply: Box::new(move |values| set(values, value)),
        })
    }
}

/// One attribute key that maps 1:1 onto a `Config` builder method of the same name.
pub(crate) struct ConfigKey {
    pub(crate) name: &'static str,
    /// A value to show in messages.
    example: &'static str,
    read: fn(ParseStream<'_>, &Ident, &str) -> syn::Result<ConfigValue>,
}

/// The config keys, from the table of keys ([`breaker_rules::config_keys!`]):
/// each key's name, the type of its literal and, for a duration, its builder
/// method.
macro_rules! config_keys {
    ($($(#[$doc:meta])* $name:ident: $ty:ty $(as $method:ident)?, $role:ident, $class:ident;)*) => {
        pub(crate) const CONFIG_KEYS: &[ConfigKey] = &[$(
            ConfigKey {
                name: stringify!($name),
                example: <$ty as KeyType>::EXAMPLE,
                read: |input, key, example| {
                    let method = duration_method!($name $(as $method)?);
                    ConfigValue::read::<$ty>(input, key, example, method, |values, value| {
                        values.$name = Some(value);
                    })
                },
            },
        )*];
    };
}

/// The builder method of a duration key, named after `as` in the table.
macro_rules! duration_method {
    ($name:ident as $method:ident) => {
        Some(stringify!($method))
    };
    ($name:ident) => {
        None
    };
}

breaker_rules::config_keys!(config_keys);

/// A key that is not a builder method: its name, and how its value is read.
struct OtherKey {
    name: &'static str,
    read: fn(&mut Args, Ident, ParseStream<'_>) -> syn::Result<()>,
}

/// The keys that are not builder methods: the field of [`Args`] each one sets
/// (its type says how the value is read) and an example value for messages.
macro_rules! other_keys {
    ($($name:literal => $field:ident, like $example:literal,)*) => {
        const OTHER_KEYS: &[OtherKey] = &[$(
            OtherKey {
                name: $name,
                read: |args, key, input| args.set(key, input, $example, |a| &mut a.$field),
            },
        )*];
    };
}

other_keys! {
    "group" => group, like "\"search\"",
    "fallback" => fallback, like "cached_search",
    "fallback_on" => fallback_on, like "\"failure\"",
    "is_failure" => is_failure, like "is_server_error",
    "retry_on" => retry_on, like "is_retryable",
    "registry" => registry, like "&REGISTRY",
    "crate" => krate, like "::my_reexport::breakerbox",
    "timer" => timer, like "MY_TIMER",
    "key" => key, like "host",
    "key_capacity" => key_capacity, like "10000",
    "idempotent" => idempotent, like "true",
}

/// The retry keys, from their table ([`breaker_rules::retry_keys!`]): each
/// key's name and how its value is read (a whole number, or a ratio).
macro_rules! retry_keys {
    ($($(#[$doc:meta])* $name:ident: $ty:tt as $method:ident, $role:ident, $class:ident;)*) => {
        const RETRY_KEYS: [OtherKey; breaker_rules::RETRY_KEY_COUNT] = [$(
            OtherKey {
                name: stringify!($name),
                read: |args, key, input| {
                    let index = breaker_rules::index_of(&breaker_rules::RETRY_NAMES, stringify!($name));
                    args.set_retry(key, input, index, retry_read!($ty))
                },
            },
        )*];
    };
}

/// How a retry key's value is read: every whole number as a `u64` (`validate`
/// says when one is out of its key's range), a ratio as an `f64`.
macro_rules! retry_read {
    (u32) => {
        RetryNumber::whole
    };
    (u64) => {
        RetryNumber::whole
    };
    (f64) => {
        RetryNumber::ratio
    };
}

breaker_rules::retry_keys!(retry_keys);

/// A correct value of the retry key `name`, for messages.
fn retry_example(name: &str) -> &'static str {
    match name {
        "retry" => "2",
        "retry_delay_ms" => "50",
        "retry_max_delay_ms" => "2000",
        "retry_deadline_ms" => "5000",
        "retry_budget_ratio" => "0.1",
        "retry_budget_floor" => "5",
        _ => "1",
    }
}

/// Every key, in the order the error message lists them: `group`, the
/// breaker's keys, the other keys, then `retry`, `idempotent` (the promise
/// `retry` needs) and the keys that tune `retry`.
pub(crate) fn all_keys() -> impl Iterator<Item = &'static str> {
    let others = OTHER_KEYS.iter().map(|k| k.name);
    let (idempotent, others) = (others.clone().filter(|k| *k == "idempotent"), others);
    let retry = RETRY_KEYS.iter().map(|k| k.name);
    others
        .clone()
        .take(1)
        .chain(CONFIG_KEYS.iter().map(|k| k.name))
        .chain(others.skip(1).filter(|k| *k != "idempotent"))
        .chain(retry.clone().take(1))
        .chain(idempotent)
        .chain(retry.skip(1))
}

/// A numeric key as written: the key (for spans) and its value.
pub(crate) struct ConfigArg {
    pub(crate) key: Ident,
    pub(crate) value: ConfigValue,
}

/// What `#[circuit_breaker(...)]` said, plus every mistake found while reading it.
#[derive(Default)]
pub(crate) struct Args {
    pub(crate) group: Option<LitStr>,
    pub(crate) config: Vec<ConfigArg>,
    pub(crate) fallback: Option<FallbackArg>,
    /// `fallback_on = "refusal" | "failure"`, as written.
    pub(crate) fallback_on: Option<LitStr>,
    pub(crate) is_failure: Option<Path>,
    /// `retry_on = path`: which errors are retried, apart from which count
    /// as failures.
    pub(crate) retry_on: Option<Path>,
    pub(crate) registry: Option<Expr>,
    pub(crate) krate: Option<Path>,
    pub(crate) timer: Option<Path>,
    /// `key = expr`: one breaker per value of `expr`.
    pub(crate) key: Option<Expr>,
    pub(crate) key_capacity: Option<KeyCapacity>,
    /// `idempotent = true`: the promise `retry` needs.
    pub(crate) idempotent: Option<syn::LitBool>,
    /// The retry keys written (`retry = N`, `retry_delay_ms`, ...), by
    /// their index in [`breaker_rules::RETRY_KEYS`].
    pub(crate) retry: [Option<RetryArg>; breaker_rules::RETRY_KEY_COUNT],
    /// Keys read so far, for "set at most once".
    seen: Vec<Ident>,
    /// Keys written whose `= value` could not be read.
    unreadable: Vec<&'static str>,
    pub(crate) errors: Vec<syn::Error>,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut args = Args::default();
        while !input.is_empty() {
            if let Err(err) = args.parse_one(input) {
                args.errors.push(err);
                skip_to_comma(input);
            }
            if input.is_empty() {
                break;
            }
            if let Err(err) = input.parse::<Token![,]>() {
                args.errors.push(err);
                skip_to_comma(input);
                let _ = input.parse::<Option<Token![,]>>();
            }
        }
        Ok(args)
    }
}

impl Args {
    /// Reads one `key = value`. A key written but not readable (its `=` or its
    /// value is wrong, or it is misspelt as a known key) is remembered in
    /// `unreadable`, so that `validate` reports nothing that follows from its
    /// absence: one mistake, one error.
    fn parse_one(&mut self, input: ParseStream<'_>) -> syn::Result<()> {
        if input.peek(LitStr) {
            // A bare name: the group without its key.
            let name: LitStr = input.parse()?;
            self.unreadable.push("group");
            return Err(syn::Error::new(
                name.span(),
                format!("expected `key = value`: write `group = {}`", name.token()),
            ));
        }
        if !input.peek(Ident::peek_any) {
            return Err(syn::Error::new(
                input.span(),
                "expected `key = value`, like `group = \"search\"`; the keys are listed in \
                 the `breakerbox` crate docs",
            ));
        }
        let key = input.call(Ident::parse_any)?;
        let name = key.to_string();
        let others = OTHER_KEYS.iter().chain(&RETRY_KEYS);
        let (known, read) = if let Some(row) = others.clone().find(|k| k.name == name) {
            (row.name, (row.read)(self, key, input))
        } else if let Some(row) = CONFIG_KEYS.iter().find(|k| k.name == name) {
            (row.name, self.set_config(key, row, input))
        } else if let Some(now) = breaker_rules::renamed(&name) {
            self.unreadable.push(now);
            return Err(syn::Error::new(
                key.span(),
                format!("`{name}` is renamed to `{now}`: write `{now} = ..`"),
            ));
        } else {
            let meant = suggest(&name);
            self.unreadable.extend(meant);
            return Err(unknown_key(&key, meant));
        };
        if read.is_err() {
            self.unreadable.push(known);
        }
        read
    }

    /// Reads the `= value` of a key that is a builder method.
    fn set_config(
        &mut self,
        key: Ident,
        row: &'static ConfigKey,
        input: ParseStream<'_>,
    ) -> syn::Result<()> {
        expect_eq(input, &key, row.example)?;
        let value = (row.read)(input, &key, row.example)?;
        if self.first_time(&key) {
            self.config.push(ConfigArg { key, value });
        }
        Ok(())
    }

    /// Reads the `= value` of the retry key at `index` of the retry table.
    fn set_retry(
        &mut self,
        key: Ident,
        input: ParseStream<'_>,
        index: usize,
        read: fn(ParseStream<'_>, &Ident, &str) -> syn::Result<(RetryNumber, Literal)>,
    ) -> syn::Result<()> {
        let example = retry_example(breaker_rules::RETRY_NAMES[index]);
        expect_eq(input, &key, example)?;
        let (value, literal) = read(input, &key, example)?;
        if self.first_time(&key) {
            self.retry[index] = Some(RetryArg {
                key,
                value,
                literal,
            });
        }
        Ok(())
    }

    /// Whether `key` was written but could not be read.
    pub(crate) fn unreadable(&self, key: &str) -> bool {
        self.unreadable.contains(&key)
    }

    /// Whether every config key written was read: only then does the builder's
    /// verdict on them mean anything (with one missing, `failure_rate` would be
    /// refused for want of a window the user did write, `max_open_ms` judged
    /// against a default `open_ms`).
    pub(crate) fn config_complete(&self) -> bool {
        !self
            .unreadable
            .iter()
            .any(|key| CONFIG_KEYS.iter().any(|row| row.name == *key))
    }

    /// Reads the `= value` of a key that is not a builder method into its `slot`.
    fn set<T: Value>(
        &mut self,
        key: Ident,
        input: ParseStream<'_>,
        example: &str,
        slot: fn(&mut Args) -> &mut Option<T>,
    ) -> syn::Result<()> {
        expect_eq(input, &key, example)?;
        let value = T::read(input, &key, example)?;
        if self.first_time(&key) {
            *slot(self) = Some(value);
        }
        Ok(())
    }

    /// The one "set at most once" check every key goes through.
    fn first_time(&mut self, key: &Ident) -> bool {
        if let Some(first) = self.seen.iter().find(|seen| *seen == key) {
            let mut err = syn::Error::new(
                key.span(),
                format!("`{key}` is set twice; remove one (each key may be set at most once)"),
            );
            err.combine(syn::Error::new(
                first.span(),
                format!("`{key}` first set here"),
            ));
            self.errors.push(err);
            return false;
        }
        self.seen.push(key.clone());
        true
    }
}

/// A value a key that is not a builder method takes, read from after its `=`.
trait Value: Sized {
    /// Reads the value of `key`; `example` is a correct value, for messages.
    fn read(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<Self>;
}

impl Value for LitStr {
    fn read(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<Self> {
        let wrong = |span| {
            syn::Error::new(
                span,
                format!("`{key}` takes a string literal, like `{key} = {example}`"),
            )
        };
        if input.peek(Ident::peek_any) {
            // A name without its quotes.
            let name = input.call(Ident::parse_any)?;
            return Err(syn::Error::new(
                name.span(),
                format!("`{key}` takes a string literal: write `{key} = \"{name}\"`"),
            ));
        }
        match input.parse::<Lit>() {
            Ok(Lit::Str(s)) => Ok(s),
            Ok(other) => Err(wrong(other.span())),
            Err(_) => Err(wrong(input.span())),
        }
    }
}

impl Value for Path {
    fn read(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<Self> {
        if input.peek(Lit) {
            let lit: Lit = input.parse()?;
            return Err(syn::Error::new(
                lit.span(),
                format!(
                    "`{key}` takes a path, not a literal: write it unquoted, like \
                     `{key} = {example}`"
                ),
            ));
        }
        input.parse::<Path>().map_err(|_| {
            syn::Error::new(
                input.span(),
                format!("`{key}` takes a path, like `{key} = {example}`"),
            )
        })
    }
}

/// `fallback = path` or `fallback = path(why)` as written.
pub(crate) struct FallbackArg {
    pub(crate) path: Path,
    /// `(why)` follows the path: the fallback gets why it was called as one
    /// more, last, argument.
    pub(crate) why: Option<Ident>,
}

impl Value for FallbackArg {
    fn read(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<Self> {
        let path = Path::read(input, key, example)?;
        if !input.peek(syn::token::Paren) {
            return Ok(FallbackArg { path, why: None });
        }
        let content;
        let parens = syn::parenthesized!(content in input);
        let why = match content.parse::<Ident>() {
            Ok(why) if why == "why" && content.is_empty() => why,
            _ => {
                return Err(syn::Error::new(
                    parens.span.join(),
                    format!(
                        "`{key} = path(why)` is the one form with parentheses: it passes why \
                         the fallback was called (a `breakerbox::Fallback<E>`) as its last \
                         argument; write `{key} = {}(why)`, or `{key} = {}` for the same \
                         arguments alone",
                        quote::ToTokens::to_token_stream(&path),
                        quote::ToTokens::to_token_stream(&path),
                    )
                    .replace(" :: ", "::"),
                ))
            }
        };
        Ok(FallbackArg {
            path,
            why: Some(why),
        })
    }
}

impl Value for syn::LitBool {
    fn read(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<Self> {
        match input.parse::<Lit>() {
            Ok(Lit::Bool(b)) => Ok(b),
            Ok(other) => Err(syn::Error::new(
                other.span(),
                format!("`{key}` takes `true` or `false`, like `{key} = {example}`"),
            )),
            Err(_) => Err(syn::Error::new(
                input.span(),
                format!("`{key}` takes `true` or `false`, like `{key} = {example}`"),
            )),
        }
    }
}

/// `key_capacity = N` as written: the key (for spans) and the value.
pub(crate) struct KeyCapacity {
    pub(crate) key: Ident,
    pub(crate) value: u64,
    /// The value as the expansion writes it (unsuffixed: a `usize` parameter
    /// types it), spanned at the user's literal.
    pub(crate) literal: Literal,
}

impl Value for KeyCapacity {
    fn read(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<Self> {
        let (value, span) = read_number::<u64>(input, key, example)?;
        let mut literal = Literal::u64_unsuffixed(value);
        literal.set_span(span);
        Ok(KeyCapacity {
            key: key.clone(),
            value,
            literal,
        })
    }
}

/// A retry key's value as read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RetryNumber {
    /// A whole number, before its key's range is judged.
    Whole(u64),
    /// A ratio.
    Ratio(f64),
}

impl RetryNumber {
    /// Reads a whole-number literal: the value, and the literal the expansion
    /// writes (unsuffixed, spanned at the user's).
    fn whole(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<(Self, Literal)> {
        let (value, span) = read_number::<u64>(input, key, example)?;
        let mut literal = Literal::u64_unsuffixed(value);
        literal.set_span(span);
        Ok((RetryNumber::Whole(value), literal))
    }

    /// Reads a number literal as a ratio.
    fn ratio(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<(Self, Literal)> {
        let (value, span) = read_number::<f64>(input, key, example)?;
        let mut literal = Literal::f64_unsuffixed(value);
        literal.set_span(span);
        Ok((RetryNumber::Ratio(value), literal))
    }
}

/// A retry key as written: the key (for spans), its value and the literal
/// the expansion writes, spanned at the user's.
pub(crate) struct RetryArg {
    pub(crate) key: Ident,
    pub(crate) value: RetryNumber,
    pub(crate) literal: Literal,
}

impl Value for Expr {
    fn read(input: ParseStream<'_>, _: &Ident, _: &str) -> syn::Result<Self> {
        input.parse()
    }
}

/// The key `name` (not a key) most likely stands for: a typo a few edits away,
/// or a part of a key (`open`, `timeout`, `fallback_fn`).
fn suggest(name: &str) -> Option<&'static str> {
    let close = |k: &str, d: usize| {
        d <= (k.len() / 3).max(1) || (name.len() >= 4 && (k.contains(name) || name.contains(k)))
    };
    all_keys()
        .map(|k| (edit_distance(name, k), k))
        .filter(|(d, k)| close(k, *d))
        // A key the name contains (`fallback` in `fallback_fn`) before one a
        // few edits away.
        .min_by_key(|(d, k)| (!name.contains(k), *d))
        .map(|(_, k)| k)
}

fn unknown_key(key: &Ident, meant: Option<&str>) -> syn::Error {
    let expected = all_keys()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let suggestion = meant
        .map(|k| format!("did you mean `{k}`? "))
        .unwrap_or_default();
    syn::Error::new(
        key.span(),
        format!("unknown key `{key}`; {suggestion}expected one of {expected}"),
    )
}

/// The `=` after `key`. Without it (`threshold: 3`), the error shows the
/// `key = value` to write, with the value the user wrote when there is one.
fn expect_eq(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<()> {
    // `=>` and `==` start with an `=` too.
    if input.peek(Token![=]) && !input.peek(Token![=>]) && !input.peek(Token![==]) {
        input.parse::<Token![=]>()?;
        return Ok(());
    }
    let written = written_value(input);
    let value = if written.is_empty() {
        example
    } else {
        &written
    };
    Err(syn::Error::new(
        input.span(),
        format!("expected `=` after `{key}`: write `{key} = {value}`"),
    ))
}

/// The tokens up to the next `,`, without the punctuation that stands where
/// `=` should (`:`, `=>`), as written: the value a `key: value` meant.
fn written_value(input: ParseStream<'_>) -> String {
    let mut tokens = Vec::new();
    let _ = input.fork().step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            match &tt {
                TokenTree::Punct(p) if p.as_char() == ',' => break,
                TokenTree::Punct(_) if tokens.is_empty() => {}
                _ => tokens.push(tt),
            }
            rest = next;
        }
        Ok(((), rest))
    });
    let mut text = String::new();
    let mut word_before = false;
    for tt in tokens {
        let word = matches!(tt, TokenTree::Ident(_) | TokenTree::Literal(_));
        if word && word_before {
            text.push(' ');
        }
        text.push_str(&tt.to_string());
        word_before = word;
    }
    text
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diag
            } else {
                1 + diag.min(above).min(row[j])
            };
            diag = above;
        }
    }
    row[b.len()]
}

/// Skips the rest of a broken `key = value` so the next key can still be read.
fn skip_to_comma(input: ParseStream<'_>) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if matches!(&tt, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    });
}

/// Reads a number literal of type `N`, and the span of the literal.
fn read_number<N: Number>(
    input: ParseStream<'_>,
    key: &Ident,
    example: &str,
) -> syn::Result<(N, Span)> {
    let (what, suffix) = (N::WHAT, N::TYPE);
    let wrong = |span: Span| {
        syn::Error::new(
            span,
            format!("`{key}` takes {what} literal, like `{key} = {example}`"),
        )
    };
    if input.peek(Token![-]) {
        let minus: Token![-] = input.parse()?;
        let _ = input.parse::<Lit>();
        return Err(syn::Error::new(
            minus.span,
            format!("`{key}` cannot be negative; write a value like `{key} = {example}`"),
        ));
    }
    let lit: Lit = input.parse().map_err(|_| wrong(input.span()))?;
    let span = lit.span();
    let (digits, found) = match &lit {
        Lit::Bool(b) if N::BOOL => (if b.value { "true" } else { "false" }, ""),
        _ if N::BOOL => return Err(wrong(span)),
        Lit::Int(i) => (i.base10_digits(), i.suffix()),
        Lit::Float(f) if N::FLOAT => (f.base10_digits(), f.suffix()),
        _ => return Err(wrong(span)),
    };
    if !found.is_empty() && found != suffix {
        return Err(syn::Error::new(
            span,
            format!("`{key}` takes {what}; drop the `{found}` suffix"),
        ));
    }
    let out_of_range = |reason: &dyn std::fmt::Display| {
        syn::Error::new(
            span,
            format!("`{key}` is out of range for {suffix} ({reason}); use a smaller value"),
        )
    };
    match digits.parse::<N>() {
        Ok(value) if value.is_finite() => Ok((value, span)),
        Ok(_) => Err(out_of_range(&"it is infinite")),
        Err(e) => Err(out_of_range(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_letter_typo_is_suggested() {
        let err = unknown_key(
            &Ident::new("treshold", Span::call_site()),
            suggest("treshold"),
        );
        assert!(
            err.to_string().contains("did you mean `threshold`?"),
            "{err}"
        );
    }

    #[test]
    fn a_part_of_a_key_suggests_the_nearest_key_containing_it() {
        for (typed, meant) in [
            ("open", "open_ms"),
            ("timeout", "timeout_ms"),
            ("probe_timeout", "probe_timeout_ms"),
            ("concurrent", "max_concurrent"),
            ("probes", "half_open_probes"),
            ("fallback_fn", "fallback"),
            ("window", "window_ms"),
        ] {
            let err = unknown_key(&Ident::new(typed, Span::call_site()), suggest(typed));
            let want = format!("did you mean `{meant}`?");
            assert!(err.to_string().contains(&want), "{typed}: {err}");
        }
    }

    #[test]
    fn an_unrelated_word_gets_no_suggestion_but_the_list() {
        let err = unknown_key(&Ident::new("colour", Span::call_site()), suggest("colour"));
        let msg = err.to_string();
        assert!(!msg.contains("did you mean"), "{msg}");
        assert!(
            msg.contains("expected one of `group`, `threshold`, "),
            "{msg}"
        );
        for key in ["open_ms", "window_ms", "fallback", "registry", "crate"] {
            assert!(msg.contains(&format!("`{key}`")), "{msg}");
        }
    }

    #[test]
    fn every_error_of_one_attribute_is_kept() {
        let args: Args =
            syn::parse_str(r#"treshold = 3, group = 1, open_ms = "x", group = "a", group = "b""#)
                .unwrap();
        assert_eq!(args.errors.len(), 4);
        assert_eq!(args.group.unwrap().value(), "a");
    }

    #[test]
    fn a_float_too_large_for_f64_is_out_of_range_not_a_panic() {
        // `1e400` parses to infinity, which no literal can be written as.
        let args: Args = syn::parse_str("backoff = 1e400").unwrap();
        assert_eq!(args.errors.len(), 1);
        let msg = args.errors[0].to_string();
        assert!(msg.contains("`backoff` is out of range for f64"), "{msg}");
    }

    fn messages(args: &Args) -> Vec<String> {
        args.errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_colon_for_an_eq_sign_says_key_eq_value_with_the_value_written() {
        let args: Args = syn::parse_str(
            r#"threshold: 3, group: "a", fallback => self::cached, backoff == 2.0, open_ms"#,
        )
        .unwrap();
        assert_eq!(
            messages(&args),
            [
                "expected `=` after `threshold`: write `threshold = 3`",
                r#"expected `=` after `group`: write `group = "a"`"#,
                "expected `=` after `fallback`: write `fallback = self::cached`",
                "expected `=` after `backoff`: write `backoff = 2.0`",
                "expected `=` after `open_ms`: write `open_ms = 30000`",
            ]
        );
        assert!(args.unreadable("group") && args.unreadable("fallback"));
        assert!(!args.config_complete());
    }

    #[test]
    fn an_unquoted_group_is_one_error_that_shows_the_quotes() {
        let args: Args = syn::parse_str("group = search").unwrap();
        assert_eq!(
            messages(&args),
            [r#"`group` takes a string literal: write `group = "search"`"#]
        );
        assert!(args.unreadable("group"));
    }

    #[test]
    fn a_misspelt_key_counts_as_the_key_it_suggests() {
        let args: Args = syn::parse_str(r#"grop = "a", windw_ms = 10, colour = 1"#).unwrap();
        assert_eq!(args.errors.len(), 3);
        assert!(args.unreadable("group"));
        assert!(!args.config_complete(), "windw_ms stands for window_ms");
        let args: Args = syn::parse_str(r#"colour = 1"#).unwrap();
        assert!(args.config_complete(), "colour is no key at all");
    }
}
