//! Which of the three ways a guarded fn runs its body: read once from the fn's
//! signature and tail, and kept (with the tail future taken apart) for `expand`.

use proc_macro2::{Span, TokenStream};
use syn::TypeParamBound;
use syn::{Expr, ExprAsync, ExprCall, ExprMethodCall, ItemFn, ReturnType, Stmt, Type};

/// How the body runs, which decides how the expansion wraps it.
pub(crate) enum Shape {
    /// A plain fn: the body runs in an immediately called `move` closure.
    Sync,
    /// An `async fn`: the body runs in `async move {}.await`.
    AsyncFn,
    /// A fn that ends in `async move {}`, `Box::pin(async move {})` (what
    /// `#[async_trait]` writes) or `async move {}.boxed()`: that block is wrapped,
    /// so the breaker is claimed when the future first runs, not when it is created.
    /// The tail is taken out of the fn's body; the expansion puts it back wrapped.
    FutureTail(Box<FutureTail>),
}

/// The future a fn body ends with, taken apart around its `async` block.
pub(crate) struct FutureTail {
    /// The user's `async move { .. }`.
    pub(crate) block: ExprAsync,
    /// What it sat in.
    around: Around,
}

/// The expression around a tail `async` block, with a hole where the block was.
enum Around {
    /// The block was the tail itself.
    Nothing,
    /// `Box::pin(<hole>)`: the call with its one argument taken out.
    Call(ExprCall),
    /// `<hole>.boxed()` or `.boxed_local()`: the receiver is a placeholder.
    MethodCall(ExprMethodCall),
}

impl FutureTail {
    /// The tail expression again, with `future` where the user's block was.
    pub(crate) fn around(self, future: Expr) -> Expr {
        match self.around {
            Around::Nothing => future,
            Around::Call(mut call) => {
                call.args.push(future);
                Expr::Call(call)
            }
            Around::MethodCall(mut call) => {
                *call.receiver = future;
                Expr::MethodCall(call)
            }
        }
    }
}

/// The shape of `item`. For a [`Shape::FutureTail`] the tail expression is
/// popped off `item`'s body: it lives in the shape until the expansion puts it back.
pub(crate) fn take_shape(item: &mut ItemFn) -> Shape {
    if item.sig.asyncness.is_some() {
        return Shape::AsyncFn;
    }
    match item.block.stmts.pop() {
        Some(Stmt::Expr(expr, None)) => match split_tail(expr) {
            Ok(tail) => Shape::FutureTail(tail),
            Err(expr) => {
                item.block.stmts.push(Stmt::Expr(*expr, None));
                Shape::Sync
            }
        },
        other => {
            item.block.stmts.extend(other);
            Shape::Sync
        }
    }
}

/// `expr` taken apart around its `async` block, or given back unchanged.
fn split_tail(expr: Expr) -> Result<Box<FutureTail>, Box<Expr>> {
    let tail = |block, around| Ok(Box::new(FutureTail { block, around }));
    match expr {
        Expr::Async(block) => tail(block, Around::Nothing),
        Expr::Call(mut call) if is_box_pin(&call.func) && call.args.len() == 1 => {
            match call.args.pop() {
                Some(Expr::Async(block)) => tail(block, Around::Call(call)),
                other => {
                    call.args.extend(other);
                    Err(Box::new(Expr::Call(call)))
                }
            }
        }
        Expr::MethodCall(mut call) if is_boxed(&call) => {
            let hole = Expr::Verbatim(TokenStream::new());
            match std::mem::replace(&mut *call.receiver, hole) {
                Expr::Async(block) => tail(block, Around::MethodCall(call)),
                other => {
                    *call.receiver = other;
                    Err(Box::new(Expr::MethodCall(call)))
                }
            }
        }
        other => Err(Box::new(other)),
    }
}

/// A path ending in `Box::pin`.
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

/// `.boxed()` (or `.boxed_local()`), from `futures::FutureExt`.
fn is_boxed(call: &ExprMethodCall) -> bool {
    (call.method == "boxed" || call.method == "boxed_local") && call.args.is_empty()
}

/// The first `return` of `item`'s own body (not of a closure, async block or
/// nested item in it): in a fn ending in a future, an early exit that skips it.
pub(crate) fn early_return(item: &ItemFn) -> Option<Span> {
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
pub(crate) fn returns_future(output: &ReturnType) -> bool {
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
