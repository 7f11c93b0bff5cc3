//! Macro-only: what `#[circuit_breaker]`'s generated code reaches through the
//! facade's own `__private`. Not API: these items may change in any release.

pub use crate::outcome::{AnyOutcome, Classified, ClassifiedAny, NoClassifier, Outcome};
pub use crate::site::{CallSite, KeyedSite, SiteBreaker};
