//! The runtime of [`breakerbox`](https://docs.rs/breakerbox): a circuit breaker state
//! machine with lock-free claims, permits that record exactly one outcome, an
//! injected clock, and a registry of breakers keyed by group.
//!
//! ```
//! # use breaker_core as breakerbox;
//! use std::time::Duration;
//! use breakerbox::{CallError, Config, ManualClock, Registry, State};
//!
//! let clock = ManualClock::new();
//! let registry = Registry::with_clock(clock.clone());
//! let config = Config::builder().threshold(3).open(Duration::from_secs(30)).build()?;
//! let search = registry.breaker("search", &config);
//!
//! for _ in 0..3 {
//!     let _ = search.call(|| Err::<(), _>("upstream timed out"));
//! }
//! assert_eq!(search.state(), State::Open);
//! assert!(matches!(search.call(|| Ok::<_, &str>(())), Err(CallError::Open(_))));
//!
//! clock.advance(config.open());
//! search.call(|| Ok::<_, &str>(())).expect("the probe runs"); // the probe
//! assert_eq!(search.state(), State::Closed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The state machine
//!
//! ```text
//!             failure policy trips                  open duration elapsed
//!   CLOSED ---------------------------> OPEN ------------------------------> HALF-OPEN
//!     ^                                  ^   (checked lazily, on a claim)        |
//!     |                                  +---- a probe fails (backoff grows) ----+
//!     +-------------- `successes_to_close` probes succeed ------------------------+
//! ```
//!
//! - **Closed**: calls run; outcomes feed the failure policy. With the
//!   consecutive policy, `threshold = 3` trips on the third consecutive failure.
//! - **Open**: every claim is refused with [`CircuitOpen`]. Nothing fires on a
//!   timer: the first claim at `now >= opened_at + open_for` moves the breaker to
//!   half-open and takes the first probe slot in the same step; a claim one
//!   nanosecond earlier is refused.
//! - **Half-open**: at most `half_open_probes` probes in flight. A probe failure
//!   reopens with `opened_at = now` and `open_for` grown by `backoff` (capped by
//!   `max_open_ms`); `successes_to_close` successes close the circuit, which resets
//!   the policy and the open duration. Probes hold their slots on a lease of
//!   `probe_timeout_ms` (default 30 s) from the latest probe admission: when every
//!   slot is taken and the lease has run out, every probe in flight has overrun it,
//!   the next claim starts a new half-open episode with its slot, and the old
//!   probes' outcomes, when they come, are stale. (With `half_open_probes = 1`
//!   this is exactly one probe's own timeout; with more, a probe admitted later
//!   extends the episode's lease.)
//! - **Generations**: every transition starts a new generation. A permit remembers
//!   its own; an outcome that arrives after the breaker moved on is counted as
//!   *stale* and changes nothing.
//!
//! Questions never change a breaker: [`Breaker::state`], [`Breaker::would_admit`],
//! [`Breaker::metrics`] and the registry's inspection API are pure. Only
//! [`Breaker::try_acquire`] claims.
//!
//! # Failure policies: which one to choose
//!
//! | policy | builder keys | trips when | choose it when | trade-off |
//! |---|---|---|---|---|
//! | consecutive (default) | `threshold` | the `threshold`-th failure in a row | the dependency tends to fail hard (down, refusing) | free on success; blind to a dependency failing 80% of the time with scattered successes |
//! | time window | `window_ms`, `failure_rate`, `min_calls` | `failures / calls >= failure_rate` over the last `window_ms`, once `min_calls` are in it | traffic is steady and partial failure matters | a clock read and an atomic add per call; a quiet dependency may never reach `min_calls` |
//! | count window | `window_calls`, `failure_rate`, `min_calls` | the same rate over the last `window_calls` outcomes | traffic is low or bursty: the sample size stays fixed | old outcomes weigh as much as new ones; an atomic add per outcome in a lock-free ring |
//!
//! Either window can also trip on slowness (`slow_call_ms`, `slow_call_rate`),
//! even when every call succeeds. Which errors count at all is the classifier's
//! call: [`classify`] has ready ones for `std::io::Error` and HTTP statuses.
//! Details and defaults: [`ConfigBuilder`].
//!
//! ```
//! # use breaker_core as breakerbox;
//! use std::time::Duration;
//! use breakerbox::{Breaker, Config, State};
//!
//! // Four failures, a success, four failures: never five in a row...
//! let consecutive = Breaker::new("a", Config::builder().threshold(5).build()?);
//! // ...but half of the calls of the last minute failed.
//! let windowed = Breaker::new(
//!     "b",
//!     Config::builder().window(Duration::from_secs(60)).failure_rate(0.5).min_calls(5).build()?,
//! );
//! for failed in [true, true, true, true, false, true, true, true, true] {
//!     for breaker in [&consecutive, &windowed] {
//!         if let Ok(permit) = breaker.try_acquire() {
//!             if failed { permit.failure() } else { permit.success() }
//!         }
//!     }
//! }
//! assert_eq!(consecutive.state(), State::Closed);
//! assert_eq!(windowed.state(), State::Open);
//! # Ok::<(), breakerbox::ConfigError>(())
//! ```
//!
//! # Time
//!
//! Breakers read time from a [`Clock`] (the monotonic [`MonotonicClock`] by default,
//! a [`ManualClock`] in tests), in `u64` nanoseconds, with saturating arithmetic:
//! a clock that jumps ten years ahead, one that steps back (elapsed time counts as
//! zero, so an open circuit stays open), and durations near `u64::MAX` milliseconds
//! (they saturate at about 584 years) behave as stated and never panic. The closed
//! success path does not read the clock.
//!
//! ## The coarse reading
//!
//! Refusing a claim on an open breaker is the one hot path that needs the time,
//! and a precise read would cost more than the rest of it. On Linux the default
//! clock is `CLOCK_MONOTONIC`, and refusals (and [`Breaker::would_admit`], and
//! time windows of 1 s or more that time no call) compare
//! `CLOCK_MONOTONIC_COARSE` instead: the same clock as of the kernel's last tick,
//! read from the vDSO without touching the TSC. A coarse reading is never ahead
//! of a precise one taken at the same moment, so:
//!
//! - a claim the coarse clock finds within 20 ms (two of the longest ticks) of
//!   its deadline confirms with a precise reading before it is refused, so a
//!   caller that waits the `retry_after` it was given is admitted next time;
//!   farther off, the coarse reading refuses alone, and its `retry_after`
//!   overstates the wait by at most one tick (1-10 ms, `CONFIG_HZ`);
//! - a claim the coarse clock lets through is certainly due: a probe never goes
//!   *early*.
//!
//! Every deadline (`opened_at + open_for`, the probe lease) and every transition
//! (the probe's start, the next lease, the next `opened_at`) uses precise
//! readings, so the coarse clock only ever delays a probe, never shortens an open
//! period. Custom clocks (a [`ManualClock`] in tests) have no coarse reading:
//! both reads are the same call.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

#[doc(hidden)]
pub mod __private;
mod breaker;
mod bulkhead;
pub mod classify;
pub mod clock;
pub mod config;
mod conflict;
mod counters;
mod error;
pub mod events;
pub mod fleet;
mod guards;
mod histogram;
pub mod hold;
pub mod keyed;
mod level;
pub mod metrics;
mod names;
mod outcome;
mod policy;
mod ramp;
mod registry;
pub mod retry;
mod site;
mod state;
mod sync;
mod throttle;
pub mod timeout;
#[cfg(feature = "trace")]
mod trace;

pub use crate::breaker::{Attempts, Breaker, OwnedBulkheadSlot, OwnedPermit, Permit, PolicyChange};
pub use crate::bulkhead::BulkheadSlot;
pub use crate::classify::{Classifier, EveryError};
pub use crate::clock::{Clock, ManualClock, MonotonicClock};
pub use crate::config::{
    Abandoned, Config, ConfigBuilder, ConfigError, FailurePolicy, KeyValue, RateThresholds,
};
pub use crate::conflict::{ConfigSource, Conflict};
pub use crate::error::{CallError, CircuitOpen, Fallback, OpenReason, TimedOut};
pub use crate::events::{
    Event, HoldReleased, HoldStarted, KeyedTransition, RetryBudgetExhausted, Subscription,
    ThrottleChange, Transition, TransitionCounts, TransitionReason, TripCause,
};
pub use crate::hold::{Held, HoldCounts, HoldScope};
pub use crate::keyed::{AsKey, KeyedGroup, KeyedMetrics, WrongKeyType};
pub use crate::metrics::{
    CallDurations, DurationCounts, Metrics, RampMetrics, Snapshot, WindowMetrics,
};
pub use crate::registry::{
    registry, AlreadyCreated, ApplyConfigError, DeclarationOverride, DeclaredGroup,
    DeclaredSetting, Reconfigured, Registry, Resolution, Resolver, UnknownGroup,
};
pub use crate::retry::{Retry, RetryAfterHint, RetryBudget, RetryPolicy};
pub use crate::state::State;
pub use crate::throttle::ThrottleMetrics;
pub use crate::timeout::Timer;
