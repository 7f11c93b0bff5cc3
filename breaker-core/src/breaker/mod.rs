//! One circuit breaker: the public [`Breaker`] handle, the [`Permit`] a claim
//! returns, and the state machine behind them.
//!
//! - `handle`: the public API (claims, calls, questions, manual control);
//! - `inner`: the state the handles share, with the word's load and swap;
//! - `transition`: the state machine as a pure function (`step`) of the word,
//!   an input and the readings it needs;
//! - `claim`: the thin layer that runs it on claims that find the breaker
//!   anything but plainly closed;
//! - `settle`: verdicts, counted and fed to the failure policy, each trip
//!   carrying the rule that tripped it;
//! - `apply`: the swap loop for every other input, the opens under the
//!   transition lock (one `step` per attempt), and `execute`, the one place a
//!   swapped-in step's counts and transition are carried out;
//! - `permit`: the permit and the classifiers that judge its error.
//!
//! # The frames of the call paths
//!
//! The paths a call takes are laid out so that the common case of each needs
//! as few instructions as possible, and `benches/instructions.rs` (`cargo
//! bench -p breaker-benches --bench instructions`, exact counts under
//! callgrind) guards each of them; a change here quotes its table.
//!
//! - **Claim.** [`Breaker::try_acquire`] tests the word inline: a plain word
//!   (`Word::is_plain`) or one that admits untimed is a permit at once (the
//!   `permit`, `call` and `attribute` cases). Everything else goes out of
//!   line to `claim`'s `acquire_contended`, which refuses an open word before
//!   its deadline (`open`, `forced_open`) and returns in two registers
//!   (`ClaimCode`). Only the open word's refusal there takes a stack frame;
//!   the rest leave by tail calls. Claims that admit read the word again
//!   (`acquire_moving`, inlined) and go on in frames of their own: a timed
//!   closed claim in `admit_timed`, the rest in `acquire_stepping`.
//! - **Verdict.** `settle` is inlined into the permit: a success that finds
//!   the word as the claim left it only counts. Every other verdict goes out
//!   of line (`settle_slow`, cold).
//! - **Count window.** A closed verdict of a count window runs in
//!   `settle_count_window`, whose common success makes only tail calls and
//!   so needs no frame; each other case (a failure, a judgement, a trip) has
//!   a frame of its own (`count_window`).
//! - **Latency window.** A count window's closed success in a group with
//!   `latency_p99_ms` runs in `latency_count_window_success`, which
//!   `settle_slow` picks by one compare of the breaker's `verdicts` byte: the
//!   clock's reading inlined (the default clock's without asking which clock
//!   it is), the count window's success, and the latency window's common add
//!   at its cursor (which cannot trip), with no call after the read but the
//!   fill of a bucket; every other closed success or failure of such a group
//!   runs in
//!   `settle_latency_window`.
//! - **Time window.** A closed success of a time window that places by the
//!   coarse clock runs in `time_window_success`: the count, the coarse
//!   reading, and one add to the bucket the window's `hot` word names, with
//!   no division of the clock; every other closed verdict of a time window
//!   runs in `settle_time_window`.
//! - **Transitions.** Trips, probes' ends, fleet input and manual control
//!   (`apply`) are cold and out of line: they pay for the lock, the events
//!   and the log, and no call path carries their frame.

mod apply;
mod call;
mod call_future;
mod claim;
mod handle;
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
pub(crate) use self::permit::Classifier;
pub use self::permit::{OwnedPermit, Permit};
pub(crate) use self::reconfigure::check_change;
pub use self::reconfigure::PolicyChange;
pub use self::retry::{Attempts, RetryAttempts, RetryVerdict};
