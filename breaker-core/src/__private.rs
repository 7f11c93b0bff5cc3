//! Macro-only: what `#[circuit_breaker]`'s generated code reaches through the
//! facade's versioned `__private_v01`, and the one home of the core's items that
//! exist for it. Not public API: these items may change in any release.

use std::time::Duration;

use crate::breaker::{Breaker, Permit};
use crate::error::TimedOut;

pub use crate::classify::EveryError;
pub use crate::outcome::{
    Answered, AnsweredAny, AnyOutcome, Classified, ClassifiedAny, NoClassifier, NoFailure, Outcome,
};
pub use crate::site::{CallSite, KeyedSite, SiteBreaker};

/// Records a call dropped at its deadline `after` and returns its error. Not
/// public API.
#[cold]
pub fn timed_out(breaker: &Breaker, permit: Permit<'_>, after: Duration) -> TimedOut {
    breaker.timed_out(permit, after)
}
