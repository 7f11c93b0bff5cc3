//! The `#[circuit_breaker]` attribute of the `breaker` crate. Use it through
//! `breaker`, whose docs hold the key reference; this crate only parses
//! (`args`), checks (`validate`) and builds tokens (`expand`).

use proc_macro::TokenStream;
use quote::quote;

mod args;
mod expand;
mod validate;

/// Puts a fn behind the circuit breaker of its `group`.
///
/// ```ignore
/// #[circuit_breaker(group = "search", threshold = 3, open_ms = 30_000, fallback = cached)]
/// async fn search(q: String) -> Result<Hits, SearchError> { /* ... */ }
/// ```
///
/// Each admitted call records one outcome (`Ok` success, `Err` failure, a panic a
/// failure, a dropped future abandoned); an open circuit skips the body and
/// returns the fallback's value or `Err(CircuitOpen.into())`. The `breaker` crate
/// docs hold the table of every key with its type, default and meaning.
#[proc_macro_attribute]
pub fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = match syn::parse::<args::Args>(args) {
        Ok(args) => args,
        Err(err) => return with_error(item.into(), err),
    };
    let item: proc_macro2::TokenStream = item.into();
    let func = match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(func) => func,
        Err(_) => {
            let mut err = not_a_fn(item.clone());
            args.errors.into_iter().for_each(|e| err.combine(e));
            return with_error(item, err);
        }
    };
    match validate::validate(args, &func) {
        Ok(plan) => expand::expand(&plan, func).into(),
        Err(err) => with_error(quote!(#func), err),
    }
}

/// Bad input still emits the item, so the rest of the crate and the IDE keep working.
fn with_error(item: proc_macro2::TokenStream, err: syn::Error) -> TokenStream {
    let err = err.to_compile_error();
    quote!(#item #err).into()
}

fn not_a_fn(item: proc_macro2::TokenStream) -> syn::Error {
    let what = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Impl(_)) | Ok(syn::Item::Trait(_)) => {
            "an impl or trait block; put it on each method inside instead"
        }
        Ok(syn::Item::Struct(_)) => "a struct",
        Ok(syn::Item::Enum(_)) => "an enum",
        Ok(syn::Item::Mod(_)) => "a module",
        Ok(_) => "this item",
        Err(_) => "a fn without a body",
    };
    let first = item
        .into_iter()
        .next()
        .map_or_else(proc_macro2::Span::call_site, |t| t.span());
    syn::Error::new(
        first,
        format!(
            "`#[circuit_breaker]` guards a fn with a body (free fn, method or associated fn), \
             not {what}"
        ),
    )
}
