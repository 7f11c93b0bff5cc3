//! Builds the guarded fn from a checked [`Plan`]. Nothing here validates: every
//! decision was made in `validate`.
//!
//! Generated locals are `Span::mixed_site()` so they never meet the user's names;
//! every path is absolute, under `#krate::__private_v01`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{AttrStyle, Ident, ItemFn, ReturnType, Type};

use crate::shape::{FutureTail, Shape};
use crate::validate::{return_span, Attr, Fallback, Keyed, Plan, RetryPlan};

/// The one list of lints allowed on generated statements (never around user code,
/// except [`body_lints`] on the statement that holds the body). The `deny-warnings`
/// pass case and clippy in CI prove it is enough.
fn generated_lints() -> TokenStream {
    quote! {
        #[allow(
            unknown_lints,                    // a clippy older than one named below
            unreachable_code,                 // the fake return edge: `return` after `loop {}`
            clippy::diverging_sub_expression, // the fake return edge
            clippy::empty_loop,               // the fake return edge
            clippy::needless_return,          // the fake return edge
            clippy::let_unit_value,           // `let __result = ..` when the fn returns `()`
            clippy::used_underscore_binding   // generated locals are `__`-prefixed
        )]
    }
}

/// Lints allowed on the statement that runs the body: only ones the wrapper causes.
fn body_lints() -> TokenStream {
    quote!(#[allow(clippy::redundant_closure_call)])
}

/// The names of generated locals, hygienic so user code can neither see nor shadow them.
struct Locals {
    registry: Ident,
    breaker: Ident,
    permit: Ident,
    open: Ident,
    result: Ident,
    slot: Ident,
}

impl Locals {
    fn new() -> Self {
        let name = |n: &str| Ident::new(n, Span::mixed_site());
        Locals {
            registry: name("__registry"),
            breaker: name("__breaker"),
            permit: name("__permit"),
            open: name("__open"),
            result: name("__result"),
            slot: name("__slot"),
        }
    }
}

/// Expands one guarded fn as its [`Shape`] says.
pub(crate) fn expand(plan: Plan) -> TokenStream {
    let Plan { attr, item, shape } = plan;
    if let Some(retry) = &attr.retry {
        return expand_retry(&attr, item, retry, matches!(shape, Shape::AsyncFn));
    }
    match shape {
        Shape::Sync => expand_sync(&attr, item),
        Shape::AsyncFn => expand_async_fn(&attr, item),
        Shape::FutureTail(tail) => expand_future_tail(&attr, item, tail),
    }
}

/// Bad input still emits the item as written, so the rest of the crate and the
/// IDE keep working, followed by every error found.
pub(crate) fn unchanged(item: TokenStream, err: &syn::Error) -> TokenStream {
    let err = err.to_compile_error();
    quote!(#item #err)
}

/// Input:
/// ```text
/// #[circuit_breaker(group = "search", threshold = 3, fallback = cached)]
/// pub fn search(&self, q: &str) -> Result<Hits, Error> { body }
/// ```
/// Output:
/// ```text
/// pub fn search(&self, q: &str) -> Result<Hits, Error> {
///     /* the claim: see `claim`; an open circuit returns `Self::cached(self, q)` */
///     let __result = (move || -> Result<Hits, Error> { body })();
///     {
///         use ::breakerbox::__private_v01::{ViaAny as _, ViaFuture as _};
///         (&::breakerbox::__private_v01::NotFuture(&__result)).not_a_future(());
///     }
///     ::breakerbox::__private_v01::Outcome::new(&__result).record_every(__permit);
///     __result
/// }
/// ```
/// With `fallback_on = "failure"` the closure is not `move` (nor, in an async
/// fn, the `async` block), so the arguments outlive the body for the fallback,
/// and the record is [`record_or_answer`].
/// The closure's return annotation is the declared type (with `impl Trait` as `_`),
/// so a `return` or tail of the wrong type is reported on the user's tokens. The
/// `not_a_future` block compiles to nothing, and fails to compile when the value
/// is a future (one behind a type alias the shape check cannot read).
fn expand_sync(attr: &Attr, item: ItemFn) -> TokenStream {
    let l = Locals::new();
    let (outer, inner) = split_attrs(&item);
    let ItemFn {
        vis, sig, block, ..
    } = &item;
    let (claim, record) = guard(attr, &item, &l, false);
    let ret = match &sig.output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, ty) => erase_impl_trait(ty),
    };
    let body_lints = body_lints();
    let result = &l.result;
    let krate = &attr.krate;
    // A fallback that answers failures gets the arguments after the body ran:
    // the body borrows what it only reads, instead of taking every argument.
    let capture = (!answers_failures(attr)).then(|| quote!(move));
    // A future under a name the shape check cannot read (a type alias, a
    // `JoinHandle`) would be recorded when it is created: refuse it, on the type.
    let ret_span = return_span(sig);
    let not_future = quote_spanned! {ret_span=>
        {
            #[allow(unused_imports)] // only one of the two is picked
            use #krate::__private_v01::{ViaAny as _, ViaFuture as _};
            (&#krate::__private_v01::NotFuture(&#result)).not_a_future(());
        }
    };
    quote! {
        #(#outer)*
        #vis #sig {
            #(#inner)*
            #claim
            #body_lints
            let #result = (#capture || -> #ret #block)();
            #not_future
            #record
        }
    }
}

/// Input:
/// ```text
/// #[circuit_breaker(group = "search")]
/// async fn search(q: &str) -> Result<Hits, Error> { body }
/// ```
/// Output:
/// ```text
/// async fn search(q: &str) -> Result<Hits, Error> {
///     /* the claim, as in `expand_sync`; a fallback is `.await`ed */
///     #[allow(unused_braces)] // `body` is a tail block: on one line, a warning
///     let __result = async move {
///         if false { let __fake_return: Result<Hits, Error> = loop {}; return __fake_return; }
///         { body }
///     }
///     .await;
///     ::breakerbox::__private_v01::Outcome::new(&__result).record_every(__permit);
///     __result
/// }
/// ```
/// The fake return edge types the block as the declared return type, so `?` and
/// `return` in the body are checked against it. A dropped future drops `__permit`
/// without a verdict: abandoned.
fn expand_async_fn(attr: &Attr, item: ItemFn) -> TokenStream {
    let l = Locals::new();
    let (outer, inner) = split_attrs(&item);
    let ItemFn {
        vis, sig, block, ..
    } = &item;
    let (claim, record) = guard(attr, &item, &l, true);
    let fake_return = match &sig.output {
        ReturnType::Type(_, ty) => {
            let ty = erase_impl_trait(ty);
            let lints = generated_lints();
            let fake = Ident::new("__fake_return", Span::mixed_site());
            quote! {
                #lints
                if false {
                    let #fake: #ty = loop {};
                    return #fake;
                }
            }
        }
        ReturnType::Default => TokenStream::new(),
    };
    let result = &l.result;
    let capture = (!answers_failures(attr)).then(|| quote!(move));
    let run = run_async(
        attr,
        &l,
        quote!(async #capture { #fake_return #block }),
        return_span(sig),
    );
    quote! {
        #(#outer)*
        #vis #sig {
            #(#inner)*
            #claim
            // The body's block is the async block's tail: on one line, rustc
            // would call the user's own braces unnecessary.
            #[allow(unused_braces)]
            let #result = #run;
            #record
        }
    }
}

/// Input:
/// ```text
/// #[circuit_breaker(group = "search")]
/// fn search(&self, q: String) -> Pin<Box<dyn Future<Output = Result<Hits, Error>> + Send + '_>> {
///     Box::pin(async move { body })
/// }
/// ```
/// Output (only the tail block changes; the signature and any statements before
/// the tail stay as written, and run when the future is created):
/// ```text
/// fn search(&self, q: String) -> Pin<Box<dyn Future<Output = Result<Hits, Error>> + Send + '_>> {
///     Box::pin(async move {
///         /* claim, as in `expand_async_fn` */
///         let __result = async move { body }.await;
///         Outcome::new(&__result).record_every(__permit);
///         __result
///     })
/// }
/// ```
fn expand_future_tail(attr: &Attr, mut item: ItemFn, tail: Box<FutureTail>) -> TokenStream {
    let l = Locals::new();
    let (claim, record) = guard(attr, &item, &l, true);
    let result = &l.result;
    let user_future = &tail.block;
    let run = run_async(
        attr,
        &l,
        user_future.to_token_stream(),
        return_span(&item.sig),
    );
    let wrapped = syn::Expr::Verbatim(quote_spanned! {Span::mixed_site()=>
        async move {
            #claim
            let #result = #run;
            #record
        }
    });
    item.block
        .stmts
        .push(syn::Stmt::Expr(tail.around(wrapped), None));
    item.into_token_stream()
}

/// Awaits the body's future `body`: as it is, or, with `timeout_ms`, raced
/// against the deadline, the timed-out call recorded as a failure and answered
/// with `Err(TimedOut.into())`.
///
/// Input: `timeout_ms = 250`, no `timer`. Output:
/// ```text
/// match ::breakerbox::__private_v01::within(
///     &::breakerbox::__private_v01::DefaultTimer,
///     __breaker.config().timeout().unwrap_or(::core::time::Duration::from_millis(250)),
///     body,
/// ).await {
///     Some(result) => result,
///     None => return ::breakerbox::__private_v01::Answer::err(
///         ::breakerbox::__private_v01::TimedOutInto::timed_out_into(
///             ::breakerbox::__private_v01::timed_out(&__breaker, __permit, /* the deadline */),
///         ),
///     ),
/// }
/// ```
/// With `fallback_on = "failure"` the timed-out call is answered by the
/// fallback instead, and a call shadow mode admitted in place of a refusal,
/// which the fallback never answers, runs without the deadline:
/// ```text
/// let __body = body;
/// if __permit.is_shadow_call() {
///     __body.await
/// } else {
///     match within(/* as above */, __body).await {
///         Some(result) => result,
///         None => return /* fallback_call, why = Fallback::TimedOut(..) */,
///     }
/// }
/// ```
/// The deadline is the group's effective config (a file may change it); the
/// literal only stands in when that config has none. The body's future is
/// dropped inside `within`, before the failure is recorded.
fn run_async(attr: &Attr, l: &Locals, body: TokenStream, ret_span: Span) -> TokenStream {
    let Some(literal) = &attr.timeout else {
        return quote!(#body.await);
    };
    let krate = &attr.krate;
    let Locals {
        breaker, permit, ..
    } = l;
    let timer = match &attr.timer {
        Some(path) => quote_spanned!(path.span()=> &#path),
        None => quote!(&#krate::__private_v01::DefaultTimer),
    };
    let after = Ident::new("__after", Span::mixed_site());
    // Spanned at the return type, as an open circuit's answer is, so a missing
    // `From<TimedOut>` points there.
    let answer_krate = match attr.krate_is_default {
        true => respan(krate.to_token_stream(), ret_span),
        false => krate.to_token_stream(),
    };
    let late = quote_spanned! {Span::mixed_site()=>
        #krate::__private_v01::timed_out(&#breaker, #permit, #after)
    };
    let after_of = quote_spanned! {Span::mixed_site()=>
        let #after = match #breaker.config().timeout() {
            ::core::option::Option::Some(after) => after,
            ::core::option::Option::None => ::core::time::Duration::from_millis(#literal),
        };
    };
    let raced = |body: &TokenStream, answer: TokenStream| {
        quote_spanned! {Span::mixed_site()=>
            match #krate::__private_v01::within(#timer, #after, #body).await {
                ::core::option::Option::Some(result) => result,
                ::core::option::Option::None => return #answer,
            }
        }
    };
    match &attr.fallback {
        Some(fallback) if fallback.on_failure => {
            let why = quote_spanned!(Span::mixed_site()=> #krate::__private_v01::Fallback::TimedOut(#late));
            let answer = fallback_call(attr, fallback, true, &why);
            let future = Ident::new("__body", Span::mixed_site()).into_token_stream();
            let raced = raced(&future, answer);
            quote_spanned! {Span::mixed_site()=>
                {
                    let #future = #body;
                    if #permit.is_shadow_call() {
                        #future.await
                    } else {
                        #after_of
                        #raced
                    }
                }
            }
        }
        _ => {
            let answer = quote_spanned! {ret_span=>
                #answer_krate::__private_v01::Answer::err(
                    #answer_krate::__private_v01::TimedOutInto::timed_out_into(#late),
                )
            };
            let raced = raced(&body, answer);
            quote_spanned! {Span::mixed_site()=>
                {
                    #after_of
                    #raced
                }
            }
        }
    }
}

/// The statements before the body (claim, or answer for an open circuit) and
/// after it (record the outcome, return the value): the same for every shape.
///
/// The call's verdict and how it ended (`ok` or `error`) go to
/// `observe::span` (nothing without feature `tracing`). Without `is_failure`
/// and a failure fallback, [`record`] tells it after the permit's record,
/// from the permit's probe bit and the value where it lies, so that a call no
/// one traces pays a load and a branch. With them, whose record hands the
/// value on, it is told before the record:
/// ```text
/// let __permit = {
///     use ::breakerbox::__private_v01::TracedAny as _;
///     ::breakerbox::__private_v01::Traced(&__result).ended("search", __permit)
/// };
/// ```
fn guard(attr: &Attr, item: &ItemFn, l: &Locals, is_async: bool) -> (TokenStream, TokenStream) {
    let on_open = on_open(attr, item, l, is_async);
    let (krate, result) = (&attr.krate, &l.result);
    let (group, permit) = (&attr.group, &l.permit);
    let record = record(attr, l, is_async);
    let failure_fallback = attr.fallback.as_ref().is_some_and(|f| f.on_failure);
    if attr.is_failure.is_none() && !failure_fallback {
        // `record` tells `observe::span` itself, after the permit's record.
        return (claim(attr, l, on_open, is_async), record);
    }
    let record = quote_spanned! {Span::mixed_site()=>
        let #permit = {
            #[allow(unused_imports)] // only for a value that is not a `Result`
            use #krate::__private_v01::TracedAny as _;
            #krate::__private_v01::Traced(&#result).ended(#group, #permit)
        };
        #record
    };
    (claim(attr, l, on_open, is_async), record)
}

/// Claims a permit, or leaves the fn with `on_open` when the circuit refuses.
///
/// Input: `group = "search", threshold = 3`, no `registry`. Output:
/// ```text
/// let __breaker = {
///     const __BREAKER_CONFIG: ::breakerbox::__private_v01::Config =
///         match ::breakerbox::__private_v01::Config::builder().threshold(3).build() {
///             Ok(config) => config,
///             Err(_) => panic!(..), // unreachable: checked when the attribute expanded
///         };
///     ::breakerbox::__private_v01::declare!(@by true, "search", __BREAKER_CONFIG); // `inventory`, feature `config`
///     static __BREAKER_SITE: ::breakerbox::__private_v01::CallSite =
///         ::breakerbox::__private_v01::CallSite::new();
///     // `__BREAKER_SITE.global(..)`, or with feature `testing` the test's registry
///     ::breakerbox::__private_v01::site(&__BREAKER_SITE, "search", &__BREAKER_CONFIG)
/// };
/// let __permit = match __breaker.try_acquire() {
///     Ok(permit) => permit,
///     Err(__open) => {
///         let __open = ::breakerbox::__private_v01::traced_refusal(__open); // `observe::span`
///         return /* on_open */;
///     }
/// };
/// ```
/// With `registry = &REG`, a binding comes first and the site looks up in it:
/// ```text
/// let __registry: &::breakerbox::__private_v01::Registry = &REG;
/// let __breaker = { /* as above */ __BREAKER_SITE.breaker(__registry, "search", &__BREAKER_CONFIG) };
/// ```
/// With `key = host` (a keyed group; `key_capacity = 500`, else the default 10 000),
/// the site caches the group, and every call finds its key's breaker in it (an
/// owned handle, dropped at the end of the call); the group is declared for
/// config files as an unkeyed one is:
/// ```text
/// let __breaker = {
///     let breaker_key = &(host);
///     let found = {
///         const __BREAKER_CONFIG: ::breakerbox::__private_v01::Config = /* as above */;
///         ::breakerbox::__private_v01::declare!(@by true, "search", __BREAKER_CONFIG);
///         static __BREAKER_SITE: ::breakerbox::__private_v01::KeyedSite =
///             ::breakerbox::__private_v01::KeyedSite::new();
///         ::breakerbox::__private_v01::keyed_site(&__BREAKER_SITE, "search", &__BREAKER_CONFIG, 500, breaker_key)
///     };
///     found
/// };
/// ```
/// (The key is the user's code: its statement carries no allowed lints, only
/// `let found` does. `breaker_key` is hygienic but located at `host`, so a key
/// type that is no `AsKey` is reported on the key expression. The borrow ends
/// with the block: the body may still move `host`. With `registry = &REG`,
/// `__BREAKER_SITE.breaker(__registry, "search", &__BREAKER_CONFIG, 500, breaker_key)`.)
///
/// With `max_concurrent`, a bulkhead slot is taken before the permit (the
/// bulkhead stands outside the breaker) and held to the end of the call:
/// ```text
/// let __slot = match __breaker.enter_bulkhead() {
///     Ok(slot) => slot,
///     Err(__open) => return /* on_open: the reason is `BulkheadFull` */,
/// };
/// ```
/// The items sit in their own block so they can never shadow a name the body uses;
/// each generated statement carries the [`generated_lints`] allow-list, and no
/// user expression sits under it.
fn claim(attr: &Attr, l: &Locals, on_open: TokenStream, is_async: bool) -> TokenStream {
    let krate = &attr.krate;
    let Locals {
        registry,
        breaker,
        permit,
        open,
        slot,
        ..
    } = l;
    let group = &attr.group;
    let lints = generated_lints();
    // With `max_concurrent`: a bulkhead slot, outside the breaker, refused like
    // an open circuit. The slot lives to the end of the fn (or future): every
    // way out frees it.
    let bulkhead = attr.bulkhead.then(|| {
        quote_spanned! {Span::mixed_site()=>
            #lints
            let #slot = match #breaker.enter_bulkhead() {
                ::core::result::Result::Ok(slot) => slot,
                ::core::result::Result::Err(#open) => return #on_open,
            };
        }
    });
    // Without a `registry` key the site caches the process-wide registry's
    // breaker directly: no registry to fetch or compare on later calls.
    let registry_binding = attr.registry.as_ref().map(|expr| {
        quote_spanned! {Span::mixed_site()=>
            #lints
            let #registry: &#krate::__private_v01::Registry = #expr;
        }
    });
    let registry_arg = attr
        .registry
        .as_ref()
        .map(|_| quote_spanned!(Span::mixed_site()=> #registry,));
    // Without `registry`, the facade's `site` (or `keyed_site`) asks the site
    // for the process-wide breaker: the place where feature `testing` puts a
    // test's own registry, compiled in by the facade's feature, not this crate's.
    let lookup = |site_fn: TokenStream, args: TokenStream| match &attr.registry {
        Some(_) => quote_spanned!(Span::mixed_site()=> __BREAKER_SITE.breaker(#registry_arg #args)),
        None => quote_spanned! {Span::mixed_site()=>
            #krate::__private_v01::#site_fn(&__BREAKER_SITE, #args)
        },
    };
    // A keyed site caches its group and looks its key up on every call; the
    // key is borrowed, spanned at the user's expression so a key type that is
    // no `AsKey` is reported there.
    let (site_type, site_lookup) = match &attr.keyed {
        None => (
            quote_spanned!(Span::mixed_site()=> CallSite),
            lookup(
                quote_spanned!(Span::mixed_site()=> site),
                quote_spanned!(Span::mixed_site()=> #group, &__BREAKER_CONFIG),
            ),
        ),
        Some(Keyed { key, key_capacity }) => {
            // Hygienic, but located at the user's expression, where a key type
            // that is no `AsKey` is reported.
            let key = Ident::new("breaker_key", Span::mixed_site().located_at(key.span()));
            (
                quote_spanned!(Span::mixed_site()=> KeyedSite),
                lookup(
                    quote_spanned!(Span::mixed_site()=> keyed_site),
                    quote_spanned!(Span::mixed_site()=> #group, &__BREAKER_CONFIG, #key_capacity, #key),
                ),
            )
        }
    };
    // A retried fn's declaration carries its policy, the `static` of
    // `expand_retry` (an item of the fn's body, so in scope here).
    let retry_policy = attr.retry.as_ref().map(|_| {
        let declared = Ident::new("__BREAKER_RETRY", Span::mixed_site());
        quote_spanned!(Span::mixed_site()=> , retry #declared)
    });
    let methods = attr.config.iter().map(|(m, _)| m);
    let values = attr.config.iter().map(|(_, v)| v);
    let find = quote_spanned! {Span::mixed_site()=>
        {
            const __BREAKER_CONFIG: #krate::__private_v01::Config =
                match #krate::__private_v01::Config::builder() #(.#methods(#values))* .build() {
                    ::core::result::Result::Ok(config) => config,
                    ::core::result::Result::Err(_) => {
                        ::core::panic!("#[circuit_breaker] checked this config when it expanded")
                    }
                };
            // The link-time group list (`config_file::declarations`); without
            // the `config` feature, a type check of the config and nothing more.
            #krate::__private_v01::declare!(@by true, #group, __BREAKER_CONFIG #retry_policy);
            static __BREAKER_SITE: #krate::__private_v01::#site_type =
                #krate::__private_v01::#site_type::new();
            #site_lookup
        }
    };
    // A keyed claim borrows the user's key expression in a statement of its own,
    // outside the lints allowed on generated code (they must never cover user
    // code), and inside the block that finds the breaker, so the borrow ends
    // there: the body may still move the arguments the key was made from.
    let find_breaker = match &attr.keyed {
        None => quote_spanned! {Span::mixed_site()=>
            #lints
            let #breaker = #find;
        },
        Some(Keyed { key, .. }) => {
            let name = Ident::new("breaker_key", Span::mixed_site().located_at(key.span()));
            let key = quote_spanned!(key.span()=> &(#key));
            quote_spanned! {Span::mixed_site()=>
                let #breaker = {
                    let #name = #key;
                    #lints
                    let found = #find;
                    found
                };
            }
        }
    };
    let bare_name = bare_fallback_name(attr, is_async);
    quote_spanned! {Span::mixed_site()=>
        #bare_name
        #registry_binding
        #find_breaker
        #bulkhead
        #lints
        let #permit = match #breaker.try_acquire() {
            ::core::result::Result::Ok(permit) => permit,
            ::core::result::Result::Err(#open) => {
                let #open = #krate::__private_v01::traced_refusal(#open);
                return #on_open;
            }
        };
    }
}

/// For a bare fallback name in a method (`fallback = cached`, which calls
/// `Self::cached`): a check, compiled to nothing, that the module has no fn
/// `cached` of the very signature the fallback must have. Such a fn is the
/// fallback meant (or one a reader could take for it): the error asks for
/// `self::cached` or `Self::cached`. A module item of that name and another
/// signature (or none) is no error.
///
/// Input: `fallback = cached` in `fn f(&self, q: &str) -> u32`. Output:
/// ```text
/// if false {
///     #[diagnostic::on_unimplemented(message = "..", label = "write `fallback = self::cached` ..")]
///     trait BareFallbackName { fn check(&self) {} }
///     impl<T: ::breakerbox::__private_v01::IsOtherSignature> BareFallbackName for T {}
///     const cached: ::breakerbox::__private_v01::NotInModule = ::breakerbox::__private_v01::NotInModule;
///     {
///         use self::*; // the module's `cached`, if it has one, before the `const`
///         use ::breakerbox::__private_v01::{ViaAnySignature as _, ViaSignature as _, ..};
///         let found = (&::breakerbox::__private_v01::Pick::<_, (&Self, &str,), u32>::new(cached)).fallback();
///         <_ as BareFallbackName>::check(&(&::breakerbox::__private_v01::Signature(found)).signature());
///     }
/// }
/// ```
/// In the inner block, the glob import of the module is found before the
/// `const` of the block around it, so `cached` is the module's when it has
/// one. `.signature()` is `SameSignature` for a fn of the expected signature
/// (which implements no `BareFallbackName`: the error) and `OtherSignature`
/// for anything else.
fn bare_fallback_name(attr: &Attr, is_async: bool) -> Option<TokenStream> {
    let fallback = attr.fallback.as_ref().filter(|f| f.self_prefix)?;
    let krate = &attr.krate;
    let name = &fallback.path.segments.first()?.ident;
    let span = name.span();
    let message = format!(
        "`fallback = {name}` in a method calls `Self::{name}`, and this module has a fn \
         `{name}` of the fallback's signature too"
    );
    let label = format!(
        "write `fallback = self::{name}` to call the module's fn, or `fallback = Self::{name}` \
         to call the associated one"
    );
    let (_, _, pick) = expected_signature(attr, fallback, is_async);
    // A `_` in the expected signature (an `impl Trait` parameter, the `E` of a
    // refusal's `why`, a future's output) would be left to infer when the
    // module's item does not match: the check reads it as `()`, and so finds
    // no match where the signature is not written out.
    let pick = infer_as_unit(pick);
    let lints = generated_lints();
    Some(quote_spanned! {span=>
        #lints
        if false {
            #[diagnostic::on_unimplemented(message = #message, label = #label)]
            trait BareFallbackName {
                fn check(&self) {}
            }
            #[diagnostic::do_not_recommend]
            impl<T: #krate::__private_v01::IsOtherSignature> BareFallbackName for T {}
            // Named as the fallback; unused when the module has the name.
            #[allow(non_upper_case_globals, dead_code)]
            const #name: #krate::__private_v01::NotInModule = #krate::__private_v01::NotInModule;
            {
                #[allow(unused_imports)] // the module's: used when it has the name
                use self::*;
                #[allow(unused_imports)] // only two of the four are picked
                use #krate::__private_v01::{
                    ViaAnySignature as _, ViaOtherSignature as _, ViaSameSignature as _,
                    ViaSignature as _,
                };
                let found = (&#krate::__private_v01::#pick::new(#name)).fallback();
                <_ as BareFallbackName>::check(
                    &(&#krate::__private_v01::Signature(found)).signature(),
                );
            }
        }
    })
}

/// `tokens` with every `_` (outside the turbofish's own leading ones: those
/// are the `Pick`'s fallback and future) replaced by `()`.
fn infer_as_unit(tokens: TokenStream) -> TokenStream {
    fn replace(tokens: TokenStream) -> TokenStream {
        tokens
            .into_iter()
            .map(|tt| match tt {
                proc_macro2::TokenTree::Ident(i) if i == "_" => {
                    let unit = proc_macro2::Group::new(
                        proc_macro2::Delimiter::Parenthesis,
                        TokenStream::new(),
                    );
                    proc_macro2::TokenTree::Group(unit)
                }
                proc_macro2::TokenTree::Group(g) => {
                    let mut group = proc_macro2::Group::new(g.delimiter(), replace(g.stream()));
                    group.set_span(g.span());
                    proc_macro2::TokenTree::Group(group)
                }
                other => other,
            })
            .collect()
    }
    // `Pick::<_, (..), R>` / `AsyncPick::<_, _, (..), R>`: keep the leading
    // `_`s, which the path and its future fill in.
    let mut out = TokenStream::new();
    let mut leading = true;
    for tt in tokens {
        match &tt {
            proc_macro2::TokenTree::Ident(i) if i == "_" && leading => out.extend([tt]),
            proc_macro2::TokenTree::Punct(p)
                if leading && matches!(p.as_char(), ',' | '<' | ':') =>
            {
                out.extend([tt])
            }
            proc_macro2::TokenTree::Ident(_) if leading && out.is_empty() => out.extend([tt]),
            _ => {
                leading = false;
                out.extend(replace(TokenStream::from(tt)));
            }
        }
    }
    out
}

/// What the fn returns when the circuit refuses: the fallback's value, spanned at the
/// fallback path so every mismatch points there, or `Err(From::from(open))`,
/// spanned at the return type.
///
/// Input → output: `fallback = cached` in `fn f(&self, q: &str)` → `Self::cached(self, q)`
/// (`.await`ed when async); `fallback = cache::get` in `fn f(q: &str)` →
/// `cache::get(q)`; no fallback →
/// `::breakerbox::__private_v01::Answer::err(::breakerbox::__private_v01::OpenInto::open_into(__open))`.
fn on_open(attr: &Attr, item: &ItemFn, l: &Locals, is_async: bool) -> TokenStream {
    let krate = &attr.krate;
    let open = &l.open;
    let Some(fallback) = &attr.fallback else {
        let span = return_span(&item.sig);
        // The default path is re-spanned so a missing `From<CircuitOpen>` points at the
        // return type; a user's `crate = path` keeps its own spans.
        let krate = match attr.krate_is_default {
            true => respan(krate.to_token_stream(), span),
            false => krate.to_token_stream(),
        };
        return quote_spanned! {span=>
            #krate::__private_v01::Answer::err(#krate::__private_v01::OpenInto::open_into(#open))
        };
    };
    let why = quote_spanned!(Span::mixed_site()=> #krate::__private_v01::Fallback::Refused(#open));
    fallback_call(attr, fallback, is_async, &why)
}

/// Whether the fn's fallback answers timeouts and failures too.
fn answers_failures(attr: &Attr) -> bool {
    attr.fallback.as_ref().is_some_and(|f| f.on_failure)
}

/// The signature the attribute expects of the fallback: the `FallbackFnN`
/// (or `AsyncFallbackFnN`) trait's name, its parameter types (`why`'s last),
/// and the `Pick` (`AsyncPick`) type that checks a path against them.
fn expected_signature(
    attr: &Attr,
    fallback: &Fallback,
    is_async: bool,
) -> (Ident, Vec<TokenStream>, TokenStream) {
    let krate = &attr.krate;
    let span = fallback.path.span();
    let ret = &fallback.ret;
    // `why`'s type: a refusal fallback's `E` is its own (nothing it is told
    // names one); a failure fallback's is the fn's error type.
    let why_type = fallback.why.then(|| match fallback.on_failure {
        true => quote_spanned! {span=>
            #krate::__private_v01::Fallback<<#ret as #krate::__private_v01::Answer>::Error>
        },
        false => quote_spanned!(span=> #krate::__private_v01::Fallback<_>),
    });
    let types: Vec<_> = fallback.types.iter().cloned().chain(why_type).collect();
    let check = Ident::new(
        &match is_async {
            true => format!("AsyncFallbackFn{}", types.len()),
            false => format!("FallbackFn{}", types.len()),
        },
        span,
    );
    let pick = match is_async {
        true => quote_spanned!(span=> AsyncPick::<_, _, (#(#types,)*), #ret>),
        false => quote_spanned!(span=> Pick::<_, (#(#types,)*), #ret>),
    };
    (check, types, pick)
}

/// The fallback's call, `why` passed last for `fallback = path(why)`: through
/// the facade's `FallbackFnN` (`AsyncFallbackFnN` for an async fn), whose
/// parameters are the signature the attribute expects, so a fallback of
/// another signature (another arity included) is one error at the path that
/// writes the expected one out. Every token is spanned at the fallback path.
///
/// Input: `fallback = cached(why)` in `fn f(&self, q: &str) -> Result<Hits, Error>`.
/// Output:
/// ```text
/// <_ as ::breakerbox::__private_v01::FallbackFn3<&Self, &str, _, Result<Hits, Error>>>::call(
///     {
///         use ::breakerbox::__private_v01::{ViaAnySignature as _, ViaSignature as _};
///         (&::breakerbox::__private_v01::Pick::<_, (&Self, &str, _,), Result<Hits, Error>>::new(
///             Self::cached,
///         ))
///         .fallback()
///     },
///     self, q, /* why */
/// )
/// ```
/// `.fallback()` is the path checked (`Checked`) when it has that signature,
/// else the path itself, which implements no `FallbackFn3`: the error. In an
/// async fn, `AsyncPick::<_, _, (..), ..>` and `AsyncFallbackFn3`, `.await`ed.
fn fallback_call(
    attr: &Attr,
    fallback: &Fallback,
    is_async: bool,
    why: &TokenStream,
) -> TokenStream {
    let krate = &attr.krate;
    let span = fallback.path.span();
    let path = &fallback.path;
    let prefix = fallback.self_prefix.then(|| quote_spanned!(span=> Self::));
    let receiver = fallback.receiver.then(|| quote_spanned!(span=> self,));
    let args = fallback
        .args
        .iter()
        .map(|a| Ident::new(&a.to_string(), span));
    let why = fallback.why.then_some(why);
    let ret = &fallback.ret;
    let (check, types, pick) = expected_signature(attr, fallback, is_async);
    let wait = is_async.then(|| quote_spanned!(span=> .await));
    // A mismatch is reported at the `_`: the fallback's name (`cached_hits`
    // in `Self::cached_hits`).
    let at_name = path.segments.last().map_or(span, |s| s.ident.span());
    let infer = quote_spanned!(at_name=> _);
    quote_spanned! {span=>
        <#infer as #krate::__private_v01::#check<#(#types,)* #ret>>::call(
            {
                #[allow(unused_imports)] // only one of the two is picked
                use #krate::__private_v01::{ViaAnySignature as _, ViaSignature as _};
                (&#krate::__private_v01::#pick::new(#prefix #path)).fallback()
            },
            #receiver #(#args,)* #why
        ) #wait
    }
}

/// Records the one outcome of a run body and returns its value.
///
/// Input: no `is_failure`. Output (the verdict and `ok` or `error` told to
/// `observe::span` after the record):
/// ```text
/// let __probe = __permit.is_probe();
/// ::breakerbox::__private_v01::Outcome::new(&__result).record_every(__permit);
/// {
///     use ::breakerbox::__private_v01::TracedAny as _;
///     ::breakerbox::__private_v01::Traced(&__result).after("search", __probe)
/// };
/// __result
/// ```
/// `record_every` is inherent on `Result` returns (`Err` is a failure) and
/// reached by auto-deref for every other type (a success); so is `after`.
///
/// Input: `is_failure = server_side`. Output:
/// ```text
/// {
///     use ::breakerbox::__private_v01::ClassifiedAny as _;
///     ::breakerbox::__private_v01::Classified(__result).record(__permit, &server_side)
/// }
/// ```
/// `Classified::record` is inherent on `Result` returns and gives the value
/// back; for any other type the trait's `record` is found, whose bound fails with
/// "`is_failure` only applies to a fn returning `Result<_, E>`". By value, so
/// no reference into the value keeps it off the fn's return slot.
fn record(attr: &Attr, l: &Locals, is_async: bool) -> TokenStream {
    let krate = &attr.krate;
    let Locals { permit, result, .. } = l;
    let lints = generated_lints();
    if let Some(fallback) = attr.fallback.as_ref().filter(|f| f.on_failure) {
        return record_or_answer(attr, l, fallback, is_async);
    }
    match &attr.is_failure {
        None => {
            let group = &attr.group;
            let probe = Ident::new("__probe", Span::mixed_site());
            quote_spanned! {Span::mixed_site()=>
                #lints
                let #probe = #permit.is_probe();
                #lints
                #krate::__private_v01::Outcome::new(&#result).record_every(#permit);
                {
                    #[allow(unused_imports)] // only for a value that is not a `Result`
                    use #krate::__private_v01::TracedAny as _;
                    #krate::__private_v01::Traced(&#result).after(#group, #probe)
                };
                #result
            }
        }
        Some(path) => {
            let record = quote_spanned!(path.span()=> record(#permit, &#path));
            quote_spanned! {Span::mixed_site()=>
                {
                    #[allow(unused_imports)] // only for a return type that is not a `Result`
                    use #krate::__private_v01::ClassifiedAny as _;
                    #krate::__private_v01::Classified(#result).#record
                }
            }
        }
    }
}

/// Records the one outcome of a run body, then answers a failure with the
/// fallback (`fallback_on = "failure"`): the outcome is recorded before the
/// fallback runs, so its value is never counted.
///
/// Input: `fallback = cached(why), fallback_on = "failure"`, no `is_failure`.
/// Output:
/// ```text
/// match {
///     use ::breakerbox::__private_v01::AnsweredAny as _;
///     ::breakerbox::__private_v01::Answered(__result).failed(__permit, &::breakerbox::__private_v01::EveryError)
/// } {
///     Ok(value) => value, // a success, or an error `is_failure` ignores
///     Err(error) => /* fallback_call: cached(q, Fallback::Failed(error)) */,
/// }
/// ```
/// `Answered::failed` is inherent on `Result` returns; for any other type the
/// trait's is found, whose bound fails with "`fallback_on = "failure"` only
/// applies to a fn returning `Result<_, E>`".
fn record_or_answer(attr: &Attr, l: &Locals, fallback: &Fallback, is_async: bool) -> TokenStream {
    let krate = &attr.krate;
    let Locals { permit, result, .. } = l;
    // Without `is_failure`, the default classifier is spanned at `"failure"`
    // too: the bound that refuses a fn not returning a `Result` is on it, and
    // rustc reports it where the argument is.
    let span = fallback.on_failure_span;
    let classifier = match (&attr.is_failure, attr.krate_is_default) {
        (Some(path), _) => quote_spanned!(path.span()=> &#path),
        (None, true) => {
            let krate = respan(krate.to_token_stream(), span);
            quote_spanned!(span=> &#krate::__private_v01::EveryError)
        }
        (None, false) => quote_spanned!(Span::mixed_site()=> &#krate::__private_v01::EveryError),
    };
    // Spanned at `"failure"`, where a fn not returning a `Result` is reported.
    let failed = quote_spanned!(fallback.on_failure_span=> failed(#permit, #classifier));
    let error = Ident::new("__error", Span::mixed_site());
    let why = quote_spanned!(Span::mixed_site()=> #krate::__private_v01::Fallback::Failed(#error));
    let answer = fallback_call(attr, fallback, is_async, &why);
    let lints = generated_lints();
    quote_spanned! {Span::mixed_site()=>
        #lints
        match {
            #[allow(unused_imports)] // only for a return type that is not a `Result`
            use #krate::__private_v01::AnsweredAny as _;
            #krate::__private_v01::Answered(#result).#failed
        } {
            ::core::result::Result::Ok(value) => value,
            #[allow(unused_variables)] // a fallback without `why` drops the error
            ::core::result::Result::Err(#error) => #answer,
        }
    }
}

/// `tokens` with every span set to `span`, so an error about them points there.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// Outer attributes go on the fn; inner ones (`#![...]`) open its body.
fn split_attrs(item: &ItemFn) -> (Vec<&syn::Attribute>, Vec<&syn::Attribute>) {
    item.attrs
        .iter()
        .partition(|a| matches!(a.style, AttrStyle::Outer))
}

/// The declared return type with every `impl Trait` turned into `_`, for the
/// closure's return annotation.
pub(crate) fn erase_impl_trait(ty: &Type) -> TokenStream {
    struct Erase;
    impl VisitMut for Erase {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            if let Type::ImplTrait(t) = ty {
                *ty = Type::Infer(syn::TypeInfer {
                    attrs: Vec::new(),
                    underscore_token: syn::Token![_](t.span()),
                });
            } else {
                syn::visit_mut::visit_type_mut(self, ty);
            }
        }
    }
    let mut ty = ty.clone();
    Erase.visit_type_mut(&mut ty);
    ty.into_token_stream()
}

/// A retried fn (`retry = N`, sync or async): the breaker found (and the
/// bulkhead slot taken) once for the call, then one claim, one run of the
/// body and one verdict per attempt.
///
/// Input:
/// ```text
/// #[circuit_breaker(group = "search", retry = 2, idempotent = true)]
/// fn search(q: &str) -> Result<Hits, Error> { body }
/// ```
/// Output:
/// ```text
/// fn search(q: &str) -> Result<Hits, Error> {
///     /* the claim, as in `claim`: the first attempt's permit */
///     static __BREAKER_RETRY: ::breakerbox::__private_v01::RetryPolicy =
///         ::breakerbox::__private_v01::RetryPolicy::new(2);
///     // The group's one budget, made by its first retried call.
///     let __retry = ::breakerbox::__private_v01::group_retry(&__breaker, &__BREAKER_RETRY);
///     let mut __attempts = ::breakerbox::__private_v01::retry_start(&__breaker, __retry);
///     let mut __permit = __permit;
///     let __result = loop {
///         let __result = (|| -> Result<Hits, Error> { body })();
///         let __hint = match &__result {
///             Err(error) => (&::breakerbox::__private_v01::Hint(error)).hint(),
///             Ok(_) => None,
///         };
///         match ::breakerbox::__private_v01::retry_verdict(
///             &__breaker, __retry, &mut __attempts, __permit, __result,
///             &::breakerbox::__private_v01::EveryError, __hint,
///         ) {
///             RetryVerdict::Done(result) => break result,
///             RetryVerdict::Again(delay) => ::breakerbox::__private_v01::retry_sleep(&__breaker, delay),
///         }
///         __permit = match __breaker.try_acquire() {
///             Ok(permit) => permit,
///             Err(__open) => return /* on_open: the fallback runs once */,
///         };
///     };
///     __result
/// }
/// ```
/// The claim's declaration names the policy for configuration files:
/// `declare!(@by true, "search", __BREAKER_CONFIG, retry __BREAKER_RETRY)`.
/// `idempotent = true` without `retry` expands the same loop with the policy
/// `::breakerbox::__private_v01::no_retries()` (no retry, unless a file
/// gives the group some).
/// `retry_delay_ms`, `retry_max_delay_ms`, `retry_deadline_ms`,
/// `retry_budget_ratio` and `retry_budget_floor` add `.backoff(..)`,
/// `.cap(..)`, `.deadline(..)`, `.budget_ratio(..)` and `.budget_floor(..)` to
/// the policy. In an
/// `async fn` the body is `async { body }.await` (raced against `timeout_ms`
/// when set: a timed-out attempt is retried as a failure, through
/// `retry_timed_out`) and the wait is the timer's (`timer`, or the default).
/// With `retry_on = is_retryable` the verdict is
/// `retry_verdict_on(.., __result, &EveryError, &is_retryable, __hint)`:
/// `is_retryable` decides which errors are retried, the classifier which
/// count as failures (a `429` retried after its wait, and ignored).
/// With `fallback_on = "failure"` the last result goes through
/// `retry_failed`, whose `Err` is the failure the fallback answers. The
/// closure and the async block are not `move`: each attempt borrows the
/// arguments, so a body that moves one out does not compile.
fn expand_retry(attr: &Attr, item: ItemFn, retry: &RetryPlan, is_async: bool) -> TokenStream {
    let l = Locals::new();
    let krate = &attr.krate;
    let (outer, inner) = split_attrs(&item);
    let ItemFn {
        vis, sig, block, ..
    } = &item;
    let on_open = on_open(attr, &item, &l, is_async);
    // The first attempt's claim is the fn's claim as without `retry`; each
    // retry claims again at the bottom of the loop.
    let first = claim(attr, &l, on_open.clone(), is_async);
    let Locals {
        breaker,
        permit,
        open,
        result,
        ..
    } = &l;
    let lints = generated_lints();
    let ret_span = return_span(sig);
    let attempts = Ident::new("__attempts", Span::mixed_site());
    let hint = Ident::new("__hint", Span::mixed_site());
    let site = Ident::new("__retry", Span::mixed_site());
    let declared = Ident::new("__BREAKER_RETRY", Span::mixed_site());
    let policy = retry_policy(attr, retry);
    let classifier = match &attr.is_failure {
        Some(path) => quote_spanned!(path.span()=> &#path),
        None => quote_spanned!(Span::mixed_site()=> &#krate::__private_v01::EveryError),
    };
    let timer = match &attr.timer {
        Some(path) => quote_spanned!(path.span()=> &#path),
        None => quote!(&#krate::__private_v01::DefaultTimer),
    };
    // `retry_on = path` decides which errors are retried, apart from which
    // count as failures; without it, a failure is retried.
    let verdict = match &attr.retry_on {
        Some(path) => quote_spanned! {path.span()=>
            #krate::__private_v01::retry_verdict_on(
                &#breaker, #site, &mut #attempts, #permit, #result, #classifier, &#path, #hint,
            )
        },
        None => quote_spanned! {Span::mixed_site()=>
            #krate::__private_v01::retry_verdict(
                &#breaker, #site, &mut #attempts, #permit, #result, #classifier, #hint,
            )
        },
    };
    // Each retry's claim, refused like the first, its refusal told to
    // `observe::span` as the first one's is.
    let reclaim = quote_spanned! {Span::mixed_site()=>
        #permit = match #breaker.try_acquire() {
            ::core::result::Result::Ok(permit) => permit,
            ::core::result::Result::Err(#open) => {
                let #open = #krate::__private_v01::traced_refusal(#open);
                return #on_open;
            }
        };
    };
    let run = if is_async {
        let wait = RetryWait {
            attempts: &attempts,
            site: &site,
            timer: &timer,
            reclaim: &reclaim,
        };
        retry_attempt_async(attr, &l, &wait, &item, ret_span)
    } else {
        let ret = match &sig.output {
            ReturnType::Default => quote!(()),
            ReturnType::Type(_, ty) => erase_impl_trait(ty),
        };
        let body_lints = body_lints();
        quote! {
            #body_lints
            let #result = (|| -> #ret #block)();
        }
    };
    let delay = Ident::new("__delay", Span::mixed_site());
    let again = if is_async {
        quote_spanned!(Span::mixed_site()=> #krate::__private_v01::retry_wait(#timer, #delay).await)
    } else {
        quote_spanned!(Span::mixed_site()=> #krate::__private_v01::retry_sleep(&#breaker, #delay))
    };
    // Spanned at the return type: a fn that returns no `Result` is told there.
    let hint_of = quote_spanned! {ret_span=>
        match &#result {
            ::core::result::Result::Err(error) => {
                #[allow(unused_imports)] // only one of the two is picked
                use #krate::__private_v01::{ViaHint as _, ViaNoHint as _};
                (&#krate::__private_v01::Hint(error)).hint()
            }
            ::core::result::Result::Ok(_) => ::core::option::Option::None,
        }
    };
    // With a failure fallback, whether the last attempt was a call shadow
    // mode admitted in place of a refusal, which the fallback never answers.
    let shadow = Ident::new("__shadow", Span::mixed_site());
    let (answer, last_shadow) = match attr.fallback.as_ref().filter(|f| f.on_failure) {
        None => (
            quote_spanned!(Span::mixed_site()=> #result),
            TokenStream::new(),
        ),
        Some(fallback) => {
            let error = Ident::new("__error", Span::mixed_site());
            let why = quote_spanned!(Span::mixed_site()=> #krate::__private_v01::Fallback::Failed(#error));
            let call = fallback_call(attr, fallback, is_async, &why);
            let answer = quote_spanned! {Span::mixed_site()=>
                match #krate::__private_v01::retry_failed(#result, #classifier, #shadow) {
                    ::core::result::Result::Ok(value) => value,
                    #[allow(unused_variables)] // a fallback without `why` drops the error
                    ::core::result::Result::Err(#error) => #call,
                }
            };
            let last_shadow =
                quote_spanned!(Span::mixed_site()=> #shadow = #permit.is_shadow_call(););
            (answer, last_shadow)
        }
    };
    let shadow_decl = match last_shadow.is_empty() {
        true => TokenStream::new(),
        false => quote_spanned!(Span::mixed_site()=> let mut #shadow = false;),
    };
    quote! {
        #(#outer)*
        #vis #sig {
            #(#inner)*
            #first
            #lints
            static #declared: #krate::__private_v01::RetryPolicy = #policy;
            #lints
            let #site = #krate::__private_v01::group_retry(&#breaker, &#declared);
            #lints
            let mut #attempts = #krate::__private_v01::retry_start(&#breaker, #site);
            #lints
            let mut #permit = #permit;
            #shadow_decl
            #[allow(unused_braces)]
            let #result = loop {
                #run
                let #hint = #hint_of;
                #last_shadow
                match #verdict {
                    #krate::__private_v01::RetryVerdict::Done(#result) => break #result,
                    #krate::__private_v01::RetryVerdict::Again(#delay) => #again,
                }
                #reclaim
            };
            #answer
        }
    }
}

/// The `RetryPolicy` a retried fn's keys make, as a `const` expression.
fn retry_policy(attr: &Attr, retry: &RetryPlan) -> TokenStream {
    let krate = &attr.krate;
    let start = match &retry.retries {
        Some(retries) => quote!(#krate::__private_v01::RetryPolicy::new(#retries)),
        None => quote!(#krate::__private_v01::no_retries()),
    };
    let tuning = &retry.tuning;
    quote!(#start #(#tuning)*)
}

/// What the wait after a timed-out attempt names: the loop's state, the
/// group's `Retry`, the timer and the next claim.
struct RetryWait<'a> {
    attempts: &'a Ident,
    site: &'a Ident,
    timer: &'a TokenStream,
    reclaim: &'a TokenStream,
}

/// One attempt of a retried `async fn`: the body awaited in an async block
/// that borrows the arguments, raced against `timeout_ms` when set.
fn retry_attempt_async(
    attr: &Attr,
    l: &Locals,
    wait: &RetryWait<'_>,
    item: &ItemFn,
    ret_span: Span,
) -> TokenStream {
    let RetryWait {
        attempts,
        site,
        timer,
        reclaim,
    } = wait;
    let krate = &attr.krate;
    let Locals {
        breaker,
        permit,
        result,
        ..
    } = l;
    let fake_return = match &item.sig.output {
        ReturnType::Type(_, ty) => {
            let ty = erase_impl_trait(ty);
            let lints = generated_lints();
            let fake = Ident::new("__fake_return", Span::mixed_site());
            quote! {
                #lints
                if false {
                    let #fake: #ty = loop {};
                    return #fake;
                }
            }
        }
        ReturnType::Default => TokenStream::new(),
    };
    let block = &item.block;
    let body = quote!(async { #fake_return #block });
    let Some(literal) = &attr.timeout else {
        return quote!(let #result = #body.await;);
    };
    let after = Ident::new("__after", Span::mixed_site());
    let late = Ident::new("__late", Span::mixed_site());
    let answer_krate = match attr.krate_is_default {
        true => respan(krate.to_token_stream(), ret_span),
        false => krate.to_token_stream(),
    };
    let on_failure = attr.fallback.as_ref().filter(|f| f.on_failure);
    let answer = match on_failure {
        Some(fallback) => {
            let why = quote_spanned!(Span::mixed_site()=> #krate::__private_v01::Fallback::TimedOut(#late));
            fallback_call(attr, fallback, true, &why)
        }
        None => quote_spanned! {ret_span=>
            #answer_krate::__private_v01::Answer::err(
                #answer_krate::__private_v01::TimedOutInto::timed_out_into(#late),
            )
        },
    };
    let future = Ident::new("__body", Span::mixed_site());
    let raced = quote_spanned! {Span::mixed_site()=>
        match #krate::__private_v01::within(#timer, #after, #future).await {
            ::core::option::Option::Some(result) => result,
            ::core::option::Option::None => {
                match #krate::__private_v01::retry_timed_out(&#breaker, #site, &mut #attempts, #permit, #after) {
                    ::core::result::Result::Ok(delay) => {
                        #krate::__private_v01::retry_wait(#timer, delay).await;
                        #reclaim
                        continue;
                    }
                    ::core::result::Result::Err(#late) => return #answer,
                }
            }
        }
    };
    // Under a failure fallback, an attempt shadow mode admits in place of a
    // refusal runs without the deadline, as without `retry` (see `run_async`).
    let run = match on_failure {
        Some(_) => quote_spanned! {Span::mixed_site()=>
            if #permit.is_shadow_call() {
                #future.await
            } else {
                #raced
            }
        },
        None => raced,
    };
    quote_spanned! {Span::mixed_site()=>
        let #after = match #breaker.config().timeout() {
            ::core::option::Option::Some(after) => after,
            ::core::option::Option::None => ::core::time::Duration::from_millis(#literal),
        };
        let #future = #body;
        let #result = #run;
    }
}
