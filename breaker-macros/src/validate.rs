//! The one place that decides whether an attribute and its fn make sense, and turns
//! them into a [`Plan`] that expansion follows without checking anything again.

use breaker_rules::Values;
use proc_macro2::{Literal, Span, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, ItemFn, LitStr, Pat, Path, ReturnType, Signature, Type};

use crate::args::{Args, ConfigArg, FallbackArg, KeyCapacity, RetryArg, RetryNumber};
use crate::shape::{early_return, returns_future, take_shape, Shape};

/// Everything the expansion needs, already checked.
pub(crate) struct Plan {
    /// What the statements around the body need.
    pub(crate) attr: Attr,
    /// The user's fn; for a [`Shape::FutureTail`], without its tail expression.
    pub(crate) item: ItemFn,
    pub(crate) shape: Shape,
}

/// The checked arguments: what the claim before the body and the record after it use.
pub(crate) struct Attr {
    pub(crate) krate: Path,
    /// No `crate = path` was given: `krate` is `::breakerbox`.
    pub(crate) krate_is_default: bool,
    pub(crate) group: LitStr,
    /// Builder calls for the `const` config: method name (spanned at the key) and
    /// argument (a duration's milliseconds as a `Duration`).
    pub(crate) config: Vec<(Ident, TokenStream)>,
    pub(crate) fallback: Option<Fallback>,
    pub(crate) is_failure: Option<Path>,
    /// `retry_on = path` (with `retry`): the errors retried, whether or not
    /// they count as failures.
    pub(crate) retry_on: Option<Path>,
    pub(crate) registry: Option<Expr>,
    /// `timeout_ms = ..` was written (on an async fn): its literal, the deadline
    /// when the group's effective config has none.
    pub(crate) timeout: Option<TokenTree>,
    /// The timer the deadline races: `timer = path`, or the crate's default.
    pub(crate) timer: Option<Path>,
    /// `max_concurrent = ..` was written: the expansion takes a bulkhead slot.
    pub(crate) bulkhead: bool,
    /// `key = ..` was written: one breaker per key.
    pub(crate) keyed: Option<Keyed>,
    /// `retry = N` was written (with `idempotent = true`), or `idempotent =
    /// true` alone: the body runs in a retry loop.
    pub(crate) retry: Option<RetryPlan>,
}

/// A retried fn's policy, as the literals the attribute wrote.
pub(crate) struct RetryPlan {
    /// `retry = N`; `None` for `idempotent = true` alone (no retry, unless
    /// configuration gives the group some).
    pub(crate) retries: Option<Literal>,
    /// The `RetryPolicy` builder calls of the other retry keys written
    /// (`.delay(Duration::from_millis(50))`), in table order, spanned at
    /// each literal.
    pub(crate) tuning: Vec<TokenStream>,
}

/// A keyed group's call: which key, and how many idle keys the group holds.
pub(crate) struct Keyed {
    /// The key expression, as written.
    pub(crate) key: Expr,
    /// `key_capacity`, or [`DEFAULT_MAX_KEYS`], as a literal.
    pub(crate) key_capacity: Literal,
}

/// The `key_capacity` of a keyed group that does not set it. Documented in the
/// `breakerbox` crate's key table: change both together.
pub(crate) const DEFAULT_MAX_KEYS: u64 = 10_000;

/// The fallback call: `path(args)`, or `Self::name(self, args)` in a method,
/// with why it was called last for `fallback = path(why)`.
pub(crate) struct Fallback {
    pub(crate) path: Path,
    /// `Self::` goes in front: the path is a bare name and the fn has a receiver.
    pub(crate) self_prefix: bool,
    /// The receiver goes first.
    pub(crate) receiver: bool,
    /// The fn's parameters, in order.
    pub(crate) args: Vec<Ident>,
    /// The type of each argument the fallback gets before `why` (the
    /// receiver's first), as the expected signature, with every `impl Trait`
    /// as `_`.
    pub(crate) types: Vec<TokenStream>,
    /// The type the fallback returns (the fn's value; `_` for a fn ending in a
    /// future, whose output the signature does not spell).
    pub(crate) ret: TokenStream,
    /// `fallback = path(why)`: why it was called goes last.
    pub(crate) why: bool,
    /// `fallback_on = "failure"`: timeouts and failures call it too.
    pub(crate) on_failure: bool,
    /// Where `fallback_on = "failure"` was written, for the error when the fn
    /// does not return a `Result`.
    pub(crate) on_failure_span: Span,
}

/// The most arguments a fallback takes (the receiver and `why` included): the
/// facade's `FallbackFn0` to `FallbackFn8`.
const MAX_FALLBACK_ARGS: usize = 8;

/// Checks `args` against `item` (the tokens the attribute sits on); every
/// problem found is in the returned error.
pub(crate) fn validate(args: Args, item: TokenStream) -> Result<Plan, syn::Error> {
    // A key written but unreadable has its own error: nothing that follows from
    // its absence is reported as well.
    let unreadable_group = args.unreadable("group");
    let unreadable_fallback = args.unreadable("fallback");
    let unreadable_key = args.unreadable("key");
    let config_complete = args.config_complete();
    let Args {
        group,
        config,
        fallback,
        fallback_on,
        is_failure,
        retry_on,
        registry,
        krate,
        timer,
        key,
        key_capacity,
        retry,
        idempotent,
        mut errors,
        ..
    } = args;
    let timeout_key = config
        .iter()
        .find(|arg| arg.key == "timeout_ms")
        .map(|arg| (arg.key.clone(), arg.value.literal.clone()));
    let bulkhead = config.iter().any(|arg| arg.key == "max_concurrent");
    let mut item = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(item) => item,
        Err(_) => {
            let mut err = not_a_fn(item);
            errors.into_iter().for_each(|e| err.combine(e));
            return Err(err);
        }
    };

    let group = check_group(group);
    if let (Err(err), false) = (&group, unreadable_group) {
        errors.push(err.clone());
    }
    let krate_path: Path = krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::breakerbox));
    let config = check_config(config, config_complete, &krate_path, &mut errors);
    if let Some(key) = &key {
        check_tuple_key(key, &item.sig, &mut errors);
    }
    let keyed = check_keyed(key, key_capacity, unreadable_key, &mut errors);
    check_signature(&item, &mut errors);

    let sig = &item.sig;
    let ret_span = return_span(sig);
    let returns_impl = match &sig.output {
        ReturnType::Type(_, ty) => matches!(**ty, Type::ImplTrait(_)),
        ReturnType::Default => false,
    };
    let receiver = sig.receiver().is_some();

    let shape = take_shape(&mut item);
    let mut opaque_future = false;
    match &shape {
        Shape::FutureTail(_) => {
            if let Some(span) = early_return(&item) {
                errors.push(syn::Error::new(
                    span,
                    "`#[circuit_breaker]` guards the future this fn ends with, and this `return` \
                     hands back another one the breaker never sees: move the early exit inside \
                     the final `async move { ... }` block",
                ));
            }
        }
        Shape::Sync if returns_future(&item.sig.output) => {
            opaque_future = true;
            errors.push(syn::Error::new(
                ret_span,
                "`#[circuit_breaker]` cannot see into this future: end the body with \
                 `async move { ... }` or `Box::pin(async move { ... })`, or make it an `async fn`",
            ));
        }
        Shape::Sync | Shape::AsyncFn => {}
    }
    if let (Shape::Sync, Some((key, _)), false) = (&shape, &timeout_key, opaque_future) {
        errors.push(syn::Error::new(
            key.span(),
            "`timeout_ms` needs an async fn: a sync call cannot be interrupted from outside its \
             thread, so no deadline could end it; make the fn `async`, or set the deadline in \
             the blocking call itself (a socket or client timeout)",
        ));
    }
    // A retried async fn (`retry`, or `idempotent = true` alone: a retry loop
    // configuration may give retries) waits its backoff on the timer, with or
    // without a deadline.
    let retry_loop = retry[RETRY].is_some() || idempotent.as_ref().is_some_and(|flag| flag.value);
    let async_retry = retry_loop && matches!(shape, Shape::AsyncFn);
    if let (Some(path), None, false) = (&timer, &timeout_key, async_retry) {
        let message = if retry_loop {
            "`timer` is the clock of `timeout_ms` and of an async fn's `retry` waits, and a \
             sync fn's retries wait on the breaker's clock: remove `timer`, or make the fn \
             `async`"
        } else {
            "`timer` is the clock of `timeout_ms` and of an async fn's `retry` waits, and \
             neither is set: add `timeout_ms = ..` (or, on an async fn, `retry = N`), or \
             remove `timer`"
        };
        errors.push(syn::Error::new(path.span(), message));
    }

    if let (Some(path), false) = (&retry_on, retry[RETRY].is_some()) {
        errors.push(syn::Error::new_spanned(
            path,
            "`retry_on` says which errors `retry` repeats, and `retry` is not set: add              `retry = N` (with `idempotent = true`), or remove `retry_on`",
        ));
    }
    let retry = check_retry(retry, idempotent, &shape, &mut errors);

    // The value the fn hands back is its declared return type (not a future's output).
    let returns_value = matches!(shape, Shape::Sync | Shape::AsyncFn);
    let impl_trait_value = returns_value && returns_impl && !opaque_future;
    let on_failure_span = fallback_on
        .as_ref()
        .map_or_else(Span::call_site, LitStr::span);
    let on_failure = check_fallback_on(
        fallback_on,
        fallback.is_some(),
        unreadable_fallback,
        &mut errors,
    );
    if let (true, Shape::FutureTail(_)) = (on_failure, &shape) {
        errors.push(syn::Error::new(
            ret_span,
            "`fallback_on = \"failure\"` calls the fallback with the arguments after the call \
             has run, and this fn's `async move` block takes them: make it an `async fn`, or \
             answer refusals only (remove `fallback_on`)",
        ));
    }
    let fallback = match fallback {
        Some(FallbackArg { path, why }) => {
            if impl_trait_value {
                errors.push(syn::Error::new(
                    path.span(),
                    "a `fallback` cannot stand in for a fn returning `impl Trait`: its \
                     `impl Trait` would be another type; return a concrete type instead",
                ));
            }
            let args = named_params(&item.sig, &mut errors);
            let self_prefix = receiver && path.leading_colon.is_none() && path.segments.len() == 1;
            let types = param_types(&item.sig);
            let count = types.len() + usize::from(why.is_some());
            if count > MAX_FALLBACK_ARGS {
                errors.push(syn::Error::new(
                    path.span(),
                    format!(
                        "a fallback takes at most {MAX_FALLBACK_ARGS} arguments (the receiver \
                         and `why` included), and this one would take {}: group the \
                         parameters in a struct",
                        count
                    ),
                ));
            }
            let ret = match (&shape, &item.sig.output) {
                (Shape::FutureTail(_), _) => quote::quote!(_),
                (_, ReturnType::Default) => quote::quote!(()),
                (_, ReturnType::Type(_, ty)) => crate::expand::erase_impl_trait(ty),
            };
            Some(Fallback {
                path,
                self_prefix,
                receiver,
                args,
                types,
                ret,
                why: why.is_some(),
                on_failure,
                on_failure_span,
            })
        }
        None => {
            if impl_trait_value && !unreadable_fallback {
                errors.push(syn::Error::new(
                    ret_span,
                    "without `fallback`, a `#[circuit_breaker]` fn must return `Result<_, E>` \
                     with `E: From<CircuitOpen>`, not `impl Trait`; return a `Result` or add \
                     `fallback = path`",
                ));
            }
            None
        }
    };

    if let Some(err) = errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        return Err(err);
    }
    Ok(Plan {
        attr: Attr {
            krate_is_default: krate.is_none(),
            krate: krate_path,
            group: group?,
            config,
            fallback,
            is_failure,
            retry_on,
            registry,
            timeout: timeout_key.map(|(_, literal)| literal),
            timer,
            bulkhead,
            keyed,
            retry,
        },
        item,
        shape,
    })
}

/// The index of `retry` in the retry table.
const RETRY: usize = breaker_rules::index_of(&breaker_rules::RETRY_NAMES, "retry");

/// `retry = N` and its keys: a fn is retried only when it says its call is
/// safe to repeat (`idempotent = true`), by an `async fn` or a sync one.
fn check_retry(
    mut keys: [Option<RetryArg>; breaker_rules::RETRY_KEY_COUNT],
    idempotent: Option<syn::LitBool>,
    shape: &Shape,
    errors: &mut Vec<syn::Error>,
) -> Option<RetryPlan> {
    let retry = keys[RETRY].take();
    let tuning = keys
        .into_iter()
        .enumerate()
        .filter_map(|(i, arg)| Some((i, arg?)));
    let Some(retry) = retry else {
        // The whole-number keys, then the ratios.
        let (whole, ratios): (Vec<_>, Vec<_>) = tuning
            .map(|(_, arg)| arg)
            .partition(|arg| matches!(arg.value, RetryNumber::Whole(_)));
        for key in whole.iter().chain(&ratios).map(|arg| &arg.key) {
            errors.push(syn::Error::new(
                key.span(),
                format!(
                    "`{key}` tunes `retry`, which is not set: add `retry = N`, or remove `{key}`"
                ),
            ));
        }
        let flag = idempotent?;
        if !flag.value {
            errors.push(syn::Error::new(
                flag.span(),
                "`idempotent = false` says the call is not safe to repeat, which a fn without \
                 `retry` never does: remove `idempotent`",
            ));
            return None;
        }
        // `idempotent = true` alone: a retry loop with no retries, which a
        // configuration file or a variable may raise.
        if let Shape::FutureTail(_) = shape {
            errors.push(syn::Error::new(
                flag.span(),
                "`idempotent = true` runs the body in a retry loop, and a fn ending in \
                 `async move { .. }` hands back one future: make it an `async fn`",
            ));
        }
        return Some(RetryPlan {
            retries: None,
            tuning: Vec::new(),
        });
    };
    match &idempotent {
        Some(flag) if flag.value => {}
        Some(flag) => errors.push(syn::Error::new(
            flag.span(),
            "`retry` repeats the call, and `idempotent = false` says it is not safe to repeat: \
             remove `retry`, or make the call idempotent and write `idempotent = true`",
        )),
        None => errors.push(syn::Error::new(
            retry.key.span(),
            "`retry` repeats the call, which is safe only for an idempotent operation: say so \
             with `idempotent = true` beside `retry`, or remove `retry`",
        )),
    }
    if retry.value == RetryNumber::Whole(0) || retry_value(RETRY, &retry).is_none() {
        errors.push(out_of_range(&retry));
    }
    if let Shape::FutureTail(_) = shape {
        errors.push(syn::Error::new(
            retry.key.span(),
            "`retry` runs the body again for each attempt, and a fn ending in `async move { .. }` \
             hands back one future: make it an `async fn`",
        ));
    }
    let mut calls = Vec::new();
    for (index, arg) in tuning {
        let info = breaker_rules::RETRY_KEYS[index];
        let Some(value) = retry_value(index, &arg) else {
            errors.push(out_of_range(&arg));
            continue;
        };
        // The rule of the key, judged alone: no retry rule joins two keys.
        let mut alone = breaker_rules::RetryValues::EMPTY;
        alone.set(info.name, value);
        if let Err(err) = breaker_rules::check_retry(&alone) {
            errors.push(refused(&arg, err));
            continue;
        }
        let literal = &arg.literal;
        let method = Ident::new(info.method, literal.span());
        let value = match info.ty {
            breaker_rules::Ty::U64 => {
                quote::quote_spanned!(literal.span()=> ::core::time::Duration::from_millis(#literal))
            }
            _ => quote::ToTokens::into_token_stream(literal.clone()),
        };
        calls.push(quote::quote_spanned!(literal.span()=> .#method(#value)));
    }
    Some(RetryPlan {
        retries: Some(retry.literal),
        tuning: calls,
    })
}

/// The value of the retry key at `index` as its type holds it; `None` for a
/// whole number out of its type's range.
fn retry_value(index: usize, arg: &RetryArg) -> Option<breaker_rules::KeyValue> {
    use breaker_rules::{KeyValue, Ty};
    match (breaker_rules::RETRY_KEYS[index].ty, arg.value) {
        (Ty::U32, RetryNumber::Whole(v)) => u32::try_from(v).ok().map(KeyValue::U32),
        (Ty::U64, RetryNumber::Whole(v)) => Some(KeyValue::U64(v)),
        (Ty::F64, RetryNumber::Ratio(v)) => Some(KeyValue::F64(v)),
        _ => None,
    }
}

/// A whole number out of its retry key's range, in the key's words.
fn out_of_range(arg: &RetryArg) -> syn::Error {
    let key = &arg.key;
    let message = match key.to_string().as_str() {
        "retry" => "`retry` is the most attempts after the first, from 1 to 4294967295: write \
                    `retry = 2`, or remove `retry` for none"
            .to_owned(),
        "retry_budget_floor" => "`retry_budget_floor` is the retries a second allowed whatever \
                                 the traffic, from 0 to 4294967295: write `retry_budget_floor = 5`"
            .to_owned(),
        _ => format!("`{key}` is out of range: write a value from 0 to 4294967295"),
    };
    syn::Error::new(arg.literal.span(), message)
}

/// A retry key's value its rule refuses, in the key's words.
fn refused(arg: &RetryArg, err: breaker_rules::ConfigError) -> syn::Error {
    let message = match err {
        breaker_rules::ConfigError::RetryBudgetRatioOutOfRange => {
            "`retry_budget_ratio` is the share of first attempts that may be retried, from \
             0.0 to 1.0: write `retry_budget_ratio = 0.1` for one retry per ten calls"
                .to_owned()
        }
        _ => format!("`{} = {}` is refused: {err}", arg.key, arg.literal),
    };
    syn::Error::new(arg.literal.span(), message)
}

/// The group name, or why there is none.
fn check_group(group: Option<LitStr>) -> syn::Result<LitStr> {
    match group {
        None => Err(syn::Error::new(
            Span::call_site(),
            "missing `group`: name the breaker this fn is guarded by, like \
             `#[circuit_breaker(group = \"search\")]`",
        )),
        Some(g) if g.value().trim().is_empty() => Err(syn::Error::new(
            g.span(),
            "`group` is empty: give the breaker a name, like `group = \"search\"`",
        )),
        Some(g) => Ok(g),
    }
}

/// A tuple key names a parameter that is a reference (`key = (host, port)` with
/// `host: &str`): a key is borrowed for the call only, and a tuple key must own
/// its fields, so rustc would refuse the borrow over the whole attribute. Said
/// here instead, at the field, with the two ways out.
fn check_tuple_key(key: &Expr, sig: &Signature, errors: &mut Vec<syn::Error>) {
    let Expr::Tuple(tuple) = key else { return };
    let borrowed = |name: &Ident| {
        sig.inputs.iter().find_map(|input| match input {
            FnArg::Typed(pat) => match (&*pat.pat, &*pat.ty) {
                (Pat::Ident(p), Type::Reference(ty)) if p.ident == *name => Some(ty),
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
    };
    for field in &tuple.elems {
        let Expr::Path(path) = field else { continue };
        let Some(name) = path.path.get_ident() else {
            continue;
        };
        let Some(ty) = borrowed(name) else { continue };
        let ty = quote::ToTokens::to_token_stream(ty)
            .to_string()
            .replace("& ", "&");
        errors.push(syn::Error::new(
            name.span(),
            format!(
                "a tuple key owns its fields, and `{name}` is a `{ty}` the call only borrows: \
                 write `{name}.to_owned()` in the tuple, or key by `{name}` alone (a single \
                 borrowed key is looked up without a copy)"
            ),
        ));
    }
}

/// `key` and `key_capacity`: a keyed group's call, or why not. `key_capacity` without
/// `key` is an error unless `key` was written but unreadable (it has its own).
fn check_keyed(
    key: Option<Expr>,
    key_capacity: Option<KeyCapacity>,
    unreadable_key: bool,
    errors: &mut Vec<syn::Error>,
) -> Option<Keyed> {
    if let Some(KeyCapacity {
        value: 0, literal, ..
    }) = &key_capacity
    {
        errors.push(syn::Error::new(
            literal.span(),
            "`key_capacity = 0` is refused: a keyed group holds at least one key; write the most \
             idle keys to keep, like `key_capacity = 10000`",
        ));
    }
    match (key, key_capacity) {
        (Some(key), key_capacity) => Some(Keyed {
            key,
            key_capacity: key_capacity
                .map_or_else(|| Literal::u64_unsuffixed(DEFAULT_MAX_KEYS), |m| m.literal),
        }),
        (None, Some(key_capacity)) => {
            if !unreadable_key {
                errors.push(syn::Error::new(
                    key_capacity.key.span(),
                    "`key_capacity` bounds a keyed group, and this fn has no `key`: add \
                     `key = <an expression of the fn's arguments>`, like `key = host`, or \
                     remove `key_capacity`",
                ));
            }
            None
        }
        (None, None) => None,
    }
}

/// `fallback_on`: whether the fallback answers failures too (`"failure"`) or
/// refusals only (`"refusal"`, the default).
fn check_fallback_on(
    fallback_on: Option<LitStr>,
    has_fallback: bool,
    unreadable_fallback: bool,
    errors: &mut Vec<syn::Error>,
) -> bool {
    let Some(on) = fallback_on else {
        return false;
    };
    if !has_fallback && !unreadable_fallback {
        errors.push(syn::Error::new(
            on.span(),
            "`fallback_on` says when the fallback is called, and there is no `fallback`: add \
             `fallback = path`, or remove `fallback_on`",
        ));
    }
    match on.value().as_str() {
        "failure" => true,
        "refusal" => false,
        other => {
            errors.push(syn::Error::new(
                on.span(),
                format!(
                    "`fallback_on = \"{other}\"` is not a choice: write `fallback_on = \
                     \"refusal\"` (refusals only, the default) or `fallback_on = \"failure\"` \
                     (refusals, timeouts and the errors the classifier counts as failures)"
                ),
            ));
            false
        }
    }
}

/// The numeric keys as builder calls for the expansion, after the rules the
/// runtime's builder applies (`breaker_rules::check`) have judged them: one
/// source of truth for what a valid config is.
/// Unless a config key could not be read: then the builder would judge a config
/// the user did not write.
fn check_config(
    config: Vec<ConfigArg>,
    complete: bool,
    krate: &Path,
    errors: &mut Vec<syn::Error>,
) -> Vec<(Ident, TokenStream)> {
    let mut values = Values::EMPTY;
    for arg in &config {
        (arg.value.apply)(&mut values);
    }
    if let (Err(err), true) = (breaker_rules::check(&values), complete) {
        let culprit = config.iter().rev().find(|arg| arg.key == err.key());
        errors.push(match culprit {
            Some(ConfigArg { key, value }) => {
                let mut written = Literal::string("");
                written.set_span(value.literal.span());
                syn::Error::new_spanned(
                    quote::quote!(#key = #written),
                    format!("`{key} = {}` is refused: {err}", value.literal),
                )
            }
            None => syn::Error::new(
                Span::call_site(),
                format!("this config is refused: {err}; set `{}` to fit", err.key()),
            ),
        });
    }
    config
        .into_iter()
        .map(|arg| {
            let literal = arg.value.literal;
            if let Some([ty, variant]) = arg.value.variant {
                let (ty, variant) = (
                    Ident::new(ty, literal.span()),
                    Ident::new(variant, literal.span()),
                );
                return (
                    arg.key,
                    quote::quote_spanned!(literal.span()=> #krate::__private_v01::#ty::#variant),
                );
            }
            match arg.value.duration_method {
                Some(method) => (
                    Ident::new(method, arg.key.span()),
                    quote::quote_spanned!(literal.span()=> ::core::time::Duration::from_millis(#literal)),
                ),
                None => (arg.key, quote::ToTokens::into_token_stream(literal)),
            }
        })
        .collect()
}

/// What no guarded fn may be: `#[track_caller]`, `const`, variadic, `-> !`.
fn check_signature(item: &ItemFn, errors: &mut Vec<syn::Error>) {
    let sig = &item.sig;
    if let Some(attr) = item
        .attrs
        .iter()
        .find(|a| a.path().is_ident("track_caller"))
    {
        // The body runs inside a closure or an async block, where the caller's
        // location is lost: keeping the attribute would silently lie.
        errors.push(syn::Error::new_spanned(
            attr,
            "`#[circuit_breaker]` cannot keep `#[track_caller]`: the body runs inside a \
             wrapper, so `Location::caller()` would name the wrapper; remove `#[track_caller]`",
        ));
    }
    if let Some(c) = &sig.constness {
        errors.push(syn::Error::new(
            c.span,
            "`#[circuit_breaker]` cannot guard a `const fn`: a breaker is runtime state; \
             remove `const`",
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new(
            v.span(),
            "`#[circuit_breaker]` cannot guard a variadic fn; wrap it in a fn with fixed parameters",
        ));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        if matches!(**ty, Type::Never(_)) {
            errors.push(syn::Error::new(
                ty.span(),
                "`#[circuit_breaker]` cannot guard a fn returning `!`: it never returns an \
                 outcome to record; return `Result<_, E>` instead",
            ));
        }
    }
}

/// The names of `sig`'s parameters, which a fallback is called with.
fn named_params(sig: &Signature, errors: &mut Vec<syn::Error>) -> Vec<Ident> {
    let mut args = Vec::new();
    for input in &sig.inputs {
        if let FnArg::Typed(pat) = input {
            match &*pat.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                    args.push(p.ident.clone());
                }
                other => errors.push(syn::Error::new(
                    other.span(),
                    "with `fallback`, every parameter needs a plain name (the fallback \
                     gets the same arguments); bind this one to a name and destructure \
                     it in the body",
                )),
            }
        }
    }
    args
}

/// The types of the arguments a fallback gets, the receiver's first: as
/// written, with every `impl Trait` as `_` (it cannot be named in the body).
fn param_types(sig: &Signature) -> Vec<TokenStream> {
    sig.inputs
        .iter()
        .map(|input| match input {
            FnArg::Receiver(receiver) => match &receiver.kind {
                syn::ReceiverKind::Reference(_, lifetime, mutability) => {
                    quote::quote!(&#lifetime #mutability Self)
                }
                syn::ReceiverKind::Typed(_, ty) => crate::expand::erase_impl_trait(ty),
                _ => quote::quote!(Self),
            },
            FnArg::Typed(pat) => crate::expand::erase_impl_trait(&pat.ty),
        })
        .collect()
}

/// Where an error about the return type points: the type, or the fn's name.
pub(crate) fn return_span(sig: &Signature) -> Span {
    match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => sig.ident.span(),
    }
}

/// Whether `tokens` (an item syn keeps verbatim) is a fn signature ending in `;`.
fn declares_fn(tokens: &proc_macro2::TokenStream) -> bool {
    let tokens: Vec<_> = tokens.clone().into_iter().collect();
    let has_fn = tokens
        .iter()
        .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "fn"));
    let ends_with_semi =
        matches!(tokens.last(), Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == ';');
    has_fn && ends_with_semi
}

/// Why the attribute cannot go on `item`, which is not a fn with a body.
fn not_a_fn(item: proc_macro2::TokenStream) -> syn::Error {
    let names_async_trait = |attrs: &[syn::Attribute]| {
        attrs.iter().any(|a| {
            a.path()
                .segments
                .last()
                .is_some_and(|s| s.ident == "async_trait")
        })
    };
    let parsed = syn::parse2::<syn::Item>(item.clone());
    let what = match &parsed {
        Ok(syn::Item::Impl(i)) if names_async_trait(&i.attrs) => {
            "an `#[async_trait]` impl block; keep `#[async_trait]` on the impl and put \
             `#[circuit_breaker]` on the method inside"
        }
        Ok(syn::Item::Impl(_)) | Ok(syn::Item::Trait(_)) => {
            "an impl or trait block; put it on each method inside instead"
        }
        Ok(syn::Item::Struct(_)) => "a struct",
        Ok(syn::Item::Enum(_)) => "an enum",
        Ok(syn::Item::Mod(_)) => "a module",
        Ok(syn::Item::Verbatim(tokens)) if declares_fn(tokens) => {
            "a fn declaration without a body; put it on the fn that implements it"
        }
        Ok(_) => "this item",
        Err(_) => "a fn without a body",
    };
    // Point at the item's keyword, past any attributes.
    let first = match &parsed {
        Ok(syn::Item::Impl(i)) => i.impl_token.span,
        Ok(syn::Item::Trait(t)) => t.trait_token.span,
        Ok(syn::Item::Struct(s)) => s.struct_token.span,
        Ok(syn::Item::Enum(e)) => e.enum_token.span,
        Ok(syn::Item::Mod(m)) => m.mod_token.span,
        _ => item
            .into_iter()
            .next()
            .map_or_else(proc_macro2::Span::call_site, |t| t.span()),
    };
    syn::Error::new(
        first,
        format!(
            "`#[circuit_breaker]` guards a fn with a body (free fn, method or associated fn), \
             not {what}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(attr: &str) -> Vec<String> {
        let args: Args = syn::parse_str(attr).unwrap();
        let item = quote::quote!(
            fn f() -> Result<(), E> {
                Ok(())
            }
        );
        match validate(args, item) {
            Ok(_) => Vec::new(),
            Err(err) => err.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn a_group_written_but_unreadable_is_not_also_missing() {
        for attr in [
            r#"group = search"#,
            r#"group: "a""#,
            r#""a""#,
            r#"grop = "a""#,
        ] {
            let errors = errors(attr);
            assert_eq!(errors.len(), 1, "{attr}: {errors:?}");
            assert!(!errors[0].contains("missing `group`"), "{attr}: {errors:?}");
        }
        assert_eq!(
            errors("threshold = 3").len(),
            1,
            "a group never written is missing"
        );
        assert!(errors("threshold = 3")[0].contains("missing `group`"));
    }

    #[test]
    fn an_unreadable_config_key_leaves_the_others_unjudged() {
        let errors = errors(r#"group = "a", window_ms = "10s", failure_rate = 0.5"#);
        assert_eq!(
            errors,
            ["`window_ms` takes an integer (u64) literal, like `window_ms = 30000`"]
        );
        // Readable, the same config is judged.
        let errors = super::tests::errors(r#"group = "a", failure_rate = 0.5"#);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("needs a window"), "{errors:?}");
    }
}
