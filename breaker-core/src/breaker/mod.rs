//! One circuit breaker: the public [`Breaker`] handle, the [`Permit`] a claim
//! returns, and the state machine behind them.
//!
//! - `handle`: the public API (claims, calls, questions, manual control);
//! - `inner`: the state the handles share, with the word's load and swap;
//! - `transition`: the state machine as a pure function of the word, an input
//!   and the readings it needs;
//! - `claim`: the thin layer that runs it on claims that find the breaker
//!   anything but plainly closed;
//! - `settle`: verdicts, counted and fed to the failure policy;
//! - `apply`: the swap loop for every other input, the transitions that write
//!   more than the word, and the one place a transition is published;
//! - `permit`: the permit and the classifiers that judge its error.

mod apply;
mod call;
mod call_future;
mod claim;
mod handle;
mod inner;
mod permit;
mod reconfigure;
mod settle;
mod transition;

#[cfg(all(test, loom))]
mod loom_tests;

pub use self::handle::Breaker;
pub use self::permit::{Classifier, EveryError, OwnedPermit, Permit};
pub(crate) use self::reconfigure::check_change;
pub use self::reconfigure::PolicyChange;
