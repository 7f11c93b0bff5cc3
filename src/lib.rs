//! `breaker`: a circuit breaker in front of any function.

pub use breaker_core::*;

#[doc(hidden)]
pub mod __private {
    pub use breaker_core::{CallSite, SiteBreaker};
}
