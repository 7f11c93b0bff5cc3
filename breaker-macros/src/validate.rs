//! The one place that decides whether an attribute and its fn make sense, and turns
//! them into a [`Plan`] that expansion follows without checking anything again.

use breaker_core::Config;
use proc_macro2::{Literal, Span};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, ItemFn, LitStr, Pat, Path, ReturnType, Stmt, Type, TypeParamBound};

use crate::args::{Args, Num};

/// How the body runs, which decides how the expansion wraps it.
pub(crate) enum Shape {
    /// A plain fn: the body runs in an immediately called `move` closure.
    Sync,
    /// An `async fn`: the body runs in `async move {}.await`.
    AsyncFn,
    /// A fn that ends in `async move {}`, `Box::pin(async move {})` (what
    /// `#[async_trait]` writes) or `async move {}.boxed()`: that block is wrapped, so the breaker is claimed
    /// when the future first runs, not when it is created.
    FutureTail,
}

/// The fallback call: `path(args)`, or `Self::name(self, args)` in a method.
pub(crate) struct Fallback {
    pub(crate) path: Path,
    /// `Self::` goes in front: the path is a bare name and the fn has a receiver.
    pub(crate) self_prefix: bool,
    /// The receiver goes first.
    pub(crate) receiver: bool,
    /// The fn's parameters, in order.
    pub(crate) args: Vec<Ident>,
}

/// Everything the expansion needs, already checked.
pub(crate) struct Plan {
    pub(crate) krate: Path,
    /// No `crate = path` was given: `krate` is `::breaker`.
    pub(crate) krate_is_default: bool,
    pub(crate) group: LitStr,
    /// Builder calls for the `const` config: method name (spanned at the key) and value.
    pub(crate) config: Vec<(Ident, Literal)>,
    pub(crate) fallback: Option<Fallback>,
    pub(crate) is_failure: Option<Path>,
    pub(crate) registry: Option<Expr>,
    pub(crate) shape: Shape,
}

/// Checks `args` against `item`; every problem found is in the returned error.
pub(crate) fn validate(args: Args, item: &ItemFn) -> Result<Plan, syn::Error> {
    let Args {
        group,
        config,
        fallback,
        is_failure,
        registry,
        krate,
        errors,
        ..
    } = args;
    let mut errors = errors;

    let group = match group {
        None => {
            errors.push(syn::Error::new(
                Span::call_site(),
                "missing `group`: name the breaker this fn is guarded by, like \
                 `#[circuit_breaker(group = \"search\")]`",
            ));
            None
        }
        Some(g) if g.value().trim().is_empty() => {
            errors.push(syn::Error::new(
                g.span(),
                "`group` is empty: give the breaker a name, like `group = \"search\"`",
            ));
            None
        }
        Some(g) => Some(g),
    };

    let literals: Vec<(Ident, Literal)> = config
        .iter()
        .map(|arg| {
            let mut lit = match arg.value {
                Num::U32(v) => Literal::u32_unsuffixed(v),
                Num::U64(v) => Literal::u64_unsuffixed(v),
                Num::F64(v) => Literal::f64_unsuffixed(v),
            };
            lit.set_span(arg.span);
            (arg.key.clone(), lit)
        })
        .collect();
    // Numbers are checked by the runtime's own builder: one source of truth.
    let builder = config
        .iter()
        .fold(Config::builder(), |b, arg| (arg.row.apply)(b, arg.value));
    if let Err(err) = builder.build() {
        let culprit = config.iter().rev().find(|arg| arg.key == err.key());
        errors.push(match culprit {
            Some(arg) => {
                let key = &arg.key;
                let mut written = Literal::string("");
                written.set_span(arg.span);
                syn::Error::new_spanned(
                    quote::quote!(#key = #written),
                    format!("`{} = {}` is refused: {err}", arg.key, num_text(arg.value)),
                )
            }
            None => syn::Error::new(
                Span::call_site(),
                format!("this config is refused: {err}; set `{}` to fit", err.key()),
            ),
        });
    }
    let config = literals;

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

    let ret_span = match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => sig.ident.span(),
    };
    let mut opaque_future = false;
    let shape = if sig.asyncness.is_some() {
        Shape::AsyncFn
    } else if future_tail(item).is_some() {
        if let Some(span) = early_return(item) {
            errors.push(syn::Error::new(
                span,
                "`#[circuit_breaker]` guards the future this fn ends with, and this `return` \
                 hands back another one the breaker never sees: move the early exit inside \
                 the final `async move { ... }` block",
            ));
        }
        Shape::FutureTail
    } else if returns_future(&sig.output) {
        opaque_future = true;
        errors.push(syn::Error::new(
            ret_span,
            "`#[circuit_breaker]` cannot see into this future: end the body with \
             `async move { ... }` or `Box::pin(async move { ... })`, or make it an `async fn`",
        ));
        Shape::Sync
    } else {
        Shape::Sync
    };

    let returns_impl = match &sig.output {
        ReturnType::Type(_, ty) => matches!(**ty, Type::ImplTrait(_)),
        ReturnType::Default => false,
    };
    // The value the fn hands back is its declared return type (not a future's output).
    let returns_value = matches!(shape, Shape::Sync | Shape::AsyncFn);
    let receiver = sig.receiver().is_some();
    let fallback = match fallback {
        Some(path) => {
            if returns_value && returns_impl && !opaque_future {
                errors.push(syn::Error::new(
                    path.span(),
                    "a `fallback` cannot stand in for a fn returning `impl Trait`: its \
                     `impl Trait` would be another type; return a concrete type instead",
                ));
            }
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
            let self_prefix = receiver && path.leading_colon.is_none() && path.segments.len() == 1;
            Some(Fallback {
                path,
                self_prefix,
                receiver,
                args,
            })
        }
        None => {
            if returns_value && returns_impl && !opaque_future {
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

    let combined = errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    });
    if let Some(err) = combined {
        return Err(err);
    }
    Ok(Plan {
        krate_is_default: krate.is_none(),
        krate: krate.unwrap_or_else(|| syn::parse_quote!(::breaker)),
        group: group.expect("a missing group is an error above"),
        config,
        fallback,
        is_failure,
        registry,
        shape,
    })
}

fn num_text(value: Num) -> String {
    match value {
        Num::U32(v) => v.to_string(),
        Num::U64(v) => v.to_string(),
        Num::F64(v) => format!("{v:?}"),
    }
}

/// The fn body's tail `async {}` block: bare, inside `Box::pin(...)`, or before
/// `.boxed()`.
pub(crate) fn future_tail(item: &ItemFn) -> Option<&Expr> {
    match item.block.stmts.last()? {
        Stmt::Expr(expr, None) => async_block_in(expr),
        _ => None,
    }
}

/// Same as [`future_tail`], for editing the block in place.
pub(crate) fn future_tail_mut(item: &mut ItemFn) -> Option<&mut Expr> {
    match item.block.stmts.last_mut()? {
        Stmt::Expr(expr, None) => async_block_in_mut(expr),
        _ => None,
    }
}

fn is_box_pin(func: &Expr) -> bool {
    let Expr::Path(p) = func else { return false };
    let names: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    matches!(names.as_slice(), [.., b, pin] if b == "Box" && pin == "pin")
}

fn async_block_in(expr: &Expr) -> Option<&Expr> {
    match expr {
        Expr::Async(_) => Some(expr),
        Expr::Call(call) if is_box_pin(&call.func) && call.args.len() == 1 => {
            matches!(call.args[0], Expr::Async(_)).then(|| &call.args[0])
        }
        Expr::MethodCall(call) if is_boxed(call) => Some(&call.receiver),
        _ => None,
    }
}

/// `async move { .. }.boxed()` (or `.boxed_local()`), from `futures::FutureExt`.
fn is_boxed(call: &syn::ExprMethodCall) -> bool {
    (call.method == "boxed" || call.method == "boxed_local")
        && call.args.is_empty()
        && matches!(*call.receiver, Expr::Async(_))
}

fn async_block_in_mut(expr: &mut Expr) -> Option<&mut Expr> {
    match expr {
        Expr::Async(_) => Some(expr),
        Expr::Call(call) if is_box_pin(&call.func) && call.args.len() == 1 => {
            if matches!(call.args[0], Expr::Async(_)) {
                Some(&mut call.args[0])
            } else {
                None
            }
        }
        Expr::MethodCall(call) if is_boxed(call) => Some(&mut call.receiver),
        _ => None,
    }
}

/// The first `return` of `item`'s own body (not of a closure, async block or
/// nested item in it): in a fn ending in a future, an early exit that skips it.
fn early_return(item: &ItemFn) -> Option<Span> {
    use syn::visit::Visit;

    struct FirstReturn(Option<Span>);
    impl<'ast> Visit<'ast> for FirstReturn {
        fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
            self.0.get_or_insert(r.return_token.span);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }

    let mut first = FirstReturn(None);
    first.visit_block(&item.block);
    first.0
}

/// Whether the declared return type is a future the macro would need to see into:
/// `impl Future`, `Pin<Box<dyn Future>>`, `BoxFuture`, `LocalBoxFuture`.
fn returns_future(output: &ReturnType) -> bool {
    let ReturnType::Type(_, ty) = output else {
        return false;
    };
    type_is_future(ty)
}

fn type_is_future(ty: &Type) -> bool {
    let names_future = |bounds: &syn::punctuated::Punctuated<TypeParamBound, syn::Token![+]>| {
        bounds.iter().any(|b| match b {
            TypeParamBound::Trait(t) => t
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "Future" || s.ident == "IntoFuture"),
            _ => false,
        })
    };
    match ty {
        Type::ImplTrait(t) => names_future(&t.bounds),
        Type::TraitObject(t) => names_future(&t.bounds),
        Type::Paren(t) => type_is_future(&t.elem),
        Type::Group(t) => type_is_future(&t.elem),
        Type::Path(p) => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            if last.ident == "BoxFuture" || last.ident == "LocalBoxFuture" {
                return true;
            }
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return false;
            };
            (last.ident == "Pin" || last.ident == "Box")
                && args.args.iter().any(|a| match a {
                    syn::GenericArgument::Type(t) => type_is_future(t),
                    _ => false,
                })
        }
        _ => false,
    }
}
