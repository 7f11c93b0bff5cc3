//! One circuit breaker: the public [`Breaker`] handle, the [`Permit`] a claim
//! returns, and the state machine behind them.
//!
//! - `handle`: the public API (claims, calls, questions, manual control);
//! - `inner`: the state the handles share, with the word's load and swap;
//! - `claim`: claims that find the breaker anything but plainly closed;
//! - `settle`: verdicts, fed to the failure policy;
//! - `transition`: the transitions that write more than the word;
//! - `permit`: the permit and the classifiers that judge its error.

mod claim;
mod handle;
mod inner;
mod permit;
mod settle;
mod transition;

pub use self::handle::Breaker;
pub use self::permit::{Classifier, EveryError, Permit};
