//! Time as a breaker reads it: the [`Clock`] trait and its default, the
//! [`MonotonicClock`]. The clock a test drives by hand is
//! [`ManualClock`](crate::ManualClock), at the root.
pub use breaker_core::clock::{Clock, MonotonicClock};
