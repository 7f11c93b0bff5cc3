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

/// Bad input still emits the item, so the rest of the crate and the IDE keep working.
fn with_error(item: proc_macro2::TokenStream, err: syn::Error) -> TokenStream {
    let err = err.to_compile_error();
    quote!(#item #err).into()
}

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
