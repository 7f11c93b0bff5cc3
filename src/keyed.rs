//! Keyed breakers: a group of one breaker per key ([`KeyedGroup`]), its
//! summed [`KeyedMetrics`], and the [`WrongKeyType`] refusal. A key's type
//! implements [`AsKey`](crate::AsKey), at the root; the
//! [crate overview](crate#keyed-breakers) says how keys behave.
pub use breaker_core::keyed::{KeyedGroup, KeyedMetrics, WrongKeyType};
