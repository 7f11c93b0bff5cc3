//! The `#[circuit_breaker]` attribute of the `breakerbox` crate. Use it through
//! `breakerbox`, whose docs hold the key reference. A one-way pipeline: `args` reads
//! the tokens, `validate` checks them against the fn and makes a plan (with the
//! fn's `shape`), and `expand` builds the guarded fn from that plan.

#![forbid(unsafe_code)]

use proc_macro::TokenStream;

mod args;
mod expand;
mod shape;
mod validate;

/// Puts a fn behind the circuit breaker of its `group`.
///
/// ```text
/// #[circuit_breaker(group = "search", threshold = 3, open_ms = 30_000, fallback = cached)]
/// async fn search(q: String) -> Result<Hits, SearchError> { /* ... */ }
/// ```
///
/// Each admitted call records one outcome (`Ok` success, `Err` failure, a panic a
/// failure, a dropped future abandoned); an open circuit skips the body and
/// returns the fallback's value or `Err(CircuitOpen.into())`. With
/// `key = expr` (an expression of the fn's arguments) the group holds one breaker
/// per value of `expr`, at most about `key_capacity` idle ones. The `breakerbox` crate
/// docs hold the table of every key with its type, default and meaning.
#[proc_macro_attribute]
pub fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let plan =
        syn::parse::<args::Args>(args).and_then(|args| validate::validate(args, item.clone()));
    match plan {
        Ok(plan) => expand::expand(plan),
        Err(err) => expand::unchanged(item, &err),
    }
    .into()
}
