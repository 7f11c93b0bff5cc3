//! One circuit breaker: the public [`Breaker`] handle, the [`Permit`] a claim
//! returns, and the state machine behind them.
//!
//! - `handle`: the public API (claims, questions, manual control);
//! - `call`, `call_future`: the call helpers that claim, run and record;
//! - `inner`: the state the handles share, with the word's load and swap;
//! - `transition`: the state machine as a pure function (`step`) of the word,
//!   an input and the readings it needs;
//! - `claim`: the thin layer that runs it on claims that find the breaker
//!   anything but plainly closed;
//! - `settle`: verdicts, timed, counted and fed to the failure policy
//!   ([`crate::policy`]), whose trip names the rule that tripped;
//! - `apply`: the swap loop for every other input, the opens under the
//!   transition lock, and `execute`, the one place a swapped-in step's counts
//!   and transition are carried out;
//! - `permit`: the permit and the classifiers that judge its error;
//! - `reconfigure`: live changes of the config;
//! - `retry`: the attempts of a retried call against the group's budget;
//! - `jitter`: the draw that spreads each open's duration and each hold's end;
//! - `hold`: holds (the server asked to wait), taken, released and asked about.
//!
//! A claim on a plain word (closed, untimed, no window, no failures to reset)
//! is a permit at once, and its success, finding the word unchanged, is one
//! count; everything else leaves that inlined path for one out-of-line step.

mod apply;
mod call;
mod call_future;
mod claim;
mod handle;
mod hold;
mod inner;
mod jitter;
pub(crate) mod permit;
mod reconfigure;
mod retry;
mod settle;
mod transition;

#[cfg(all(test, loom))]
mod loom_tests;

pub use self::handle::Breaker;
pub(crate) use self::hold::hold_deadline;
pub(crate) use self::permit::Classifier;
pub use self::permit::{OwnedPermit, Permit};
pub(crate) use self::reconfigure::check_change;
pub use self::reconfigure::PolicyChange;
pub use self::retry::{Attempts, RetryAttempts, RetryVerdict};
