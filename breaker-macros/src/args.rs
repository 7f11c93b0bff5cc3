//! Turns the attribute's tokens into [`Args`]: one `key = value` at a time, every
//! mistake collected (not just the first) so one build shows them all.

use breaker_core::ConfigBuilder;
use proc_macro2::{Span, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Lit, LitStr, Path, Token};

mod kw {
    syn::custom_keyword!(group);
    syn::custom_keyword!(fallback);
    syn::custom_keyword!(is_failure);
    syn::custom_keyword!(registry);
}

/// The Rust type a numeric key takes: the type of its builder method's parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumTy {
    U32,
    U64,
    F64,
}

/// A parsed numeric value, already checked against its key's [`NumTy`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Num {
    U32(u32),
    U64(u64),
    F64(f64),
}

impl Num {
    fn u32(self) -> u32 {
        match self {
            Num::U32(v) => v,
            _ => unreachable!("the key table pairs each key with its type"),
        }
    }
    fn u64(self) -> u64 {
        match self {
            Num::U64(v) => v,
            _ => unreachable!("the key table pairs each key with its type"),
        }
    }
    fn f64(self) -> f64 {
        match self {
            Num::F64(v) => v,
            _ => unreachable!("the key table pairs each key with its type"),
        }
    }
}

/// One attribute key that maps 1:1 onto a `Config` builder method of the same name.
pub(crate) struct ConfigKey {
    pub(crate) name: &'static str,
    pub(crate) ty: NumTy,
    /// Calls the builder method; the expansion emits the same call in a `const`.
    pub(crate) apply: fn(ConfigBuilder, Num) -> ConfigBuilder,
}

/// The config keys: adding a builder method to the attribute is one row here.
macro_rules! config_keys {
    ($($name:ident: $ty:ident => $get:ident,)*) => {
        pub(crate) const CONFIG_KEYS: &[ConfigKey] = &[$(
            ConfigKey {
                name: stringify!($name),
                ty: NumTy::$ty,
                apply: |builder, value| builder.$name(value.$get()),
            },
        )*];
    };
}

config_keys! {
    threshold: U32 => u32,
    failure_rate: F64 => f64,
    window_ms: U64 => u64,
    window_calls: U32 => u32,
    min_calls: U32 => u32,
    slow_call_ms: U64 => u64,
    slow_call_rate: F64 => f64,
    open_ms: U64 => u64,
    half_open_probes: U32 => u32,
    successes_to_close: U32 => u32,
    backoff: F64 => f64,
    max_open_ms: U64 => u64,
    probe_timeout_ms: U64 => u64,
}

/// Keys that are not builder methods.
const OTHER_KEYS: &[&str] = &["group", "fallback", "is_failure", "registry", "crate"];

/// Every key, in the order the error message lists them.
pub(crate) fn all_keys() -> impl Iterator<Item = &'static str> {
    OTHER_KEYS[..1]
        .iter()
        .copied()
        .chain(CONFIG_KEYS.iter().map(|k| k.name))
        .chain(OTHER_KEYS[1..].iter().copied())
}

/// A numeric key as written: the key (for spans), its table row, and its value.
pub(crate) struct ConfigArg {
    pub(crate) key: Ident,
    pub(crate) row: &'static ConfigKey,
    pub(crate) value: Num,
    pub(crate) span: Span,
}

/// What `#[circuit_breaker(...)]` said, plus every mistake found while reading it.
#[derive(Default)]
pub(crate) struct Args {
    pub(crate) group: Option<LitStr>,
    pub(crate) config: Vec<ConfigArg>,
    pub(crate) fallback: Option<Path>,
    pub(crate) is_failure: Option<Path>,
    pub(crate) registry: Option<Expr>,
    pub(crate) krate: Option<Path>,
    /// Keys seen so far, for "set at most once".
    seen: Vec<Ident>,
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
    fn parse_one(&mut self, input: ParseStream<'_>) -> syn::Result<()> {
        let lookahead = input.lookahead1();
        if lookahead.peek(kw::group) {
            let key = input.parse::<kw::group>()?;
            let key = Ident::new("group", key.span);
            input.parse::<Token![=]>()?;
            let value = parse_lit_str(input, &key)?;
            if self.first_time(&key) {
                self.group = Some(value);
            }
        } else if lookahead.peek(kw::fallback) {
            let key = Ident::new("fallback", input.parse::<kw::fallback>()?.span);
            input.parse::<Token![=]>()?;
            let value = parse_path(input, &key, "fallback = cached_search")?;
            if self.first_time(&key) {
                self.fallback = Some(value);
            }
        } else if lookahead.peek(kw::is_failure) {
            let key = Ident::new("is_failure", input.parse::<kw::is_failure>()?.span);
            input.parse::<Token![=]>()?;
            let value = parse_path(input, &key, "is_failure = is_server_error")?;
            if self.first_time(&key) {
                self.is_failure = Some(value);
            }
        } else if lookahead.peek(kw::registry) {
            let key = Ident::new("registry", input.parse::<kw::registry>()?.span);
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            if self.first_time(&key) {
                self.registry = Some(value);
            }
        } else if lookahead.peek(Token![crate]) {
            let key = Ident::new("crate", input.parse::<Token![crate]>()?.span);
            input.parse::<Token![=]>()?;
            let value = parse_path(input, &key, "crate = ::my_reexport::breaker")?;
            if self.first_time(&key) {
                self.krate = Some(value);
            }
        } else if input.peek(Ident::peek_any) {
            let key = input.call(Ident::parse_any)?;
            let name = key.to_string();
            let Some(row) = CONFIG_KEYS.iter().find(|k| k.name == name) else {
                return Err(unknown_key(&key));
            };
            input.parse::<Token![=]>()?;
            let (value, span) = parse_num(input, &key, row.ty)?;
            if self.first_time(&key) {
                self.config.push(ConfigArg {
                    key,
                    row,
                    value,
                    span,
                });
            }
        } else {
            let _ = lookahead; // its "expected one of" would leave out the numeric keys
            return Err(syn::Error::new(
                input.span(),
                "expected `key = value`, like `group = \"search\"`; the keys are listed in \
                 the `breaker` crate docs",
            ));
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

fn unknown_key(key: &Ident) -> syn::Error {
    let name = key.to_string();
    let expected = all_keys()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    // A typo (a few edits away) or a part of a key (`open`, `timeout`, `fallback_fn`).
    let close = |k: &str, d: usize| {
        d <= (k.len() / 3).max(1) || (name.len() >= 4 && (k.contains(&*name) || name.contains(k)))
    };
    let suggestion = all_keys()
        .map(|k| (edit_distance(&name, k), k))
        .filter(|(d, k)| close(k, *d))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| format!("did you mean `{k}`? "))
        .unwrap_or_default();
    syn::Error::new(
        key.span(),
        format!("unknown key `{name}`; {suggestion}expected one of {expected}"),
    )
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

fn parse_lit_str(input: ParseStream<'_>, key: &Ident) -> syn::Result<LitStr> {
    match input.parse::<Lit>() {
        Ok(Lit::Str(s)) => Ok(s),
        Ok(other) => Err(syn::Error::new(
            other.span(),
            format!("`{key}` takes a string literal, like `{key} = \"search\"`"),
        )),
        Err(_) => Err(syn::Error::new(
            input.span(),
            format!("`{key}` takes a string literal, like `{key} = \"search\"`"),
        )),
    }
}

fn parse_path(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<Path> {
    if input.peek(Lit) {
        let lit: Lit = input.parse()?;
        return Err(syn::Error::new(
            lit.span(),
            format!("`{key}` takes a path, not a literal: write it unquoted, like `{example}`"),
        ));
    }
    input.parse::<Path>().map_err(|_| {
        syn::Error::new(
            input.span(),
            format!("`{key}` takes a path, like `{example}`"),
        )
    })
}

fn parse_num(input: ParseStream<'_>, key: &Ident, ty: NumTy) -> syn::Result<(Num, Span)> {
    let (what, example, suffix) = match ty {
        NumTy::U32 => ("an integer (u32)", "3", "u32"),
        NumTy::U64 => ("an integer (u64)", "30000", "u64"),
        NumTy::F64 => ("a number (f64)", "2.0", "f64"),
    };
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
    let check_suffix = |found: &str| {
        if found.is_empty() || found == suffix {
            Ok(())
        } else {
            Err(syn::Error::new(
                span,
                format!("`{key}` takes {what}; drop the `{found}` suffix"),
            ))
        }
    };
    let out_of_range = |e: syn::Error| {
        syn::Error::new(
            span,
            format!("`{key}` is out of range for {suffix} ({e}); use a smaller value"),
        )
    };
    let value = match (ty, &lit) {
        (NumTy::U32, Lit::Int(i)) => {
            check_suffix(i.suffix())?;
            Num::U32(i.base10_parse().map_err(out_of_range)?)
        }
        (NumTy::U64, Lit::Int(i)) => {
            check_suffix(i.suffix())?;
            Num::U64(i.base10_parse().map_err(out_of_range)?)
        }
        (NumTy::F64, Lit::Int(i)) => {
            check_suffix(i.suffix())?;
            Num::F64(i.base10_parse().map_err(out_of_range)?)
        }
        (NumTy::F64, Lit::Float(f)) => {
            check_suffix(f.suffix())?;
            Num::F64(f.base10_parse().map_err(out_of_range)?)
        }
        _ => return Err(wrong(span)),
    };
    Ok((value, span))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_letter_typo_is_suggested() {
        let err = unknown_key(&Ident::new("treshold", Span::call_site()));
        assert!(
            err.to_string().contains("did you mean `threshold`?"),
            "{err}"
        );
    }

    #[test]
    fn a_part_of_a_key_suggests_the_nearest_key_containing_it() {
        for (typed, meant) in [
            ("open", "open_ms"),
            ("timeout", "probe_timeout_ms"),
            ("probes", "half_open_probes"),
            ("fallback_fn", "fallback"),
            ("window", "window_ms"),
        ] {
            let err = unknown_key(&Ident::new(typed, Span::call_site()));
            let want = format!("did you mean `{meant}`?");
            assert!(err.to_string().contains(&want), "{typed}: {err}");
        }
    }

    #[test]
    fn an_unrelated_word_gets_no_suggestion_but_the_list() {
        let err = unknown_key(&Ident::new("colour", Span::call_site()));
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
}
