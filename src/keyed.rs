//! Keyed breakers: a group of one breaker per key ([`KeyedGroup`]), its
//! summed [`KeyedMetrics`], and the [`WrongKeyType`] refusal. A key's type
//! implements [`AsKey`](crate::AsKey), at the root; the
//! [crate overview](crate#keyed-breakers) says how keys behave.
//!
//! A keyed group may also judge as one (`systemic_share`, `max_open_keys`;
//! see [`KeyedGroup::group_breaker`]). Their values are shares in `(0, 1]`;
//! anything else is a compile error in the attribute:
//!
//! ```compile_fail
//! #[breakerbox::circuit_breaker(group = "docs-share", key = host, systemic_share = 1.5)]
//! fn call(host: &str) -> Result<(), breakerbox::CallError<()>> {
//!     let _ = host;
//!     Ok(())
//! }
//! ```
//!
//! ```compile_fail
//! #[breakerbox::circuit_breaker(group = "docs-cap", key = host, max_open_keys = 0.0)]
//! fn call(host: &str) -> Result<(), breakerbox::CallError<()>> {
//!     let _ = host;
//!     Ok(())
//! }
//! ```
//!
//! ```
//! #[breakerbox::circuit_breaker(group = "docs-judged", key = host, systemic_share = 0.5, max_open_keys = 0.2)]
//! fn call(host: &str) -> Result<(), breakerbox::CallError<()>> {
//!     let _ = host;
//!     Ok(())
//! }
//! assert!(call("a.example").is_ok());
//! ```
pub use breaker_core::keyed::{KeyedGroup, KeyedMetrics, WrongKeyType};
