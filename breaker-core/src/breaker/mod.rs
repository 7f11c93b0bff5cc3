//! One circuit breaker: the public [`Breaker`] handle, the [`Permit`] a claim
//! returns, and the state machine behind them.
//!
//! A `Breaker` is a handle on an `Inner`, the state its clones share. Both
//! types' methods are split by what drives them, one file each, below the
//! module that defines the type:
//!
//! | file | `impl Breaker` | `impl Inner` |
//! |---|---|---|
//! | `handle` | the type; making one, the claim, the pure questions, manual control | |
//! | `call`, `call_future` | the call helpers: claim, run, record | |
//! | `permit` | the owned claim (`try_acquire_owned`), beside the permits | |
//! | `reconfigure` | live changes of the config | |
//! | `retry` | the attempts of a retried call against the group's budget | |
//! | `hold` | holds (the server asked to wait): taken, released, asked about | |
//! | `inner` | | the type and its layout; the word's load and swap, the pure questions, metrics |
//! | `claim` | | claims that find the word anything but plainly closed |
//! | `settle` | | verdicts: timed, counted, fed to the failure policy ([`crate::policy`]) |
//! | `level` | | a judged key's outcomes told to its keyed group's level, and its trips bounded by it |
//! | `trace` | whose calls are recorded on spans, and the trace bit that says so, set live (feature `trace`) | claims and verdicts of a traced word, told to the span hook |
//! | `apply` | | every other input (trips, opens, closes, forcing, the fleet's), and `execute`, the one place a swapped-in step's counts and transition are carried out |
//!
//! Below them all, `transition` is the state machine as a pure function
//! (`step`) of the word, an input and the readings it needs (its table of
//! cases in `transition/tests.rs`), and `jitter` the draw that spreads each
//! open's duration and each hold's end; `loom_tests` races the word under loom.
//!
//! The breaker's state is in `Inner`: the word, the open's and the lease's
//! deadlines, the open duration and the traffic ramp a close starts
//! ([`crate::ramp`]). A hold's deadline and scope are kept in the box a breaker
//! allocates on its first move, beside its events ([`crate::events`]'s hub).
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
mod level;
pub(crate) mod permit;
mod reconfigure;
mod retry;
mod settle;
#[cfg(feature = "trace")]
mod trace;
mod transition;

#[cfg(all(test, loom))]
mod loom_tests;

pub use self::call::OwnedBulkheadSlot;
pub use self::handle::Breaker;
pub(crate) use self::hold::hold_deadline;
pub(crate) use self::permit::{Classifier, Scope};
pub use self::permit::{OwnedPermit, Permit};
pub(crate) use self::reconfigure::check_change;
pub use self::reconfigure::PolicyChange;
pub use self::retry::{Attempts, RetryAttempts, RetryVerdict};
#[cfg(feature = "trace")]
pub(crate) use self::trace::enlist;
#[cfg(feature = "trace")]
pub use self::trace::{is_traced, record_calls, record_calls_of, records};
