//! Timers for `timeout_ms`: the tokio one (feature `tokio`), and how to plug in
//! another runtime's through [`Timer`].
//!
//! # What a deadline does
//!
//! With `timeout_ms` set, an async call races a [`Timer::sleep`] of that long.
//! When the deadline wins, the call's future is dropped (its `Drop`s run, its
//! I/O is cancelled), the call counts as a **failure** (and as a slow call, for
//! `slow_call_ms` below the deadline, and as a sample of at least the deadline
//! for `latency_p99_ms`), and the caller gets a [`TimedOut`](crate::TimedOut):
//!
//! - `#[circuit_breaker(timeout_ms = ..)]` returns `Err(E::from(timed_out))`, so
//!   the fn must return `Result<_, E>` with `E: From<TimedOut>`, also with a
//!   `fallback` that answers refusals only (the default): such a fallback
//!   answers an open circuit or a full bulkhead, not a deadline.
//! - With `fallback = .., fallback_on = "failure"` the fallback answers the
//!   timed-out call instead ([`Fallback::TimedOut`](crate::Fallback::TimedOut)),
//!   and `E` needs no `From<TimedOut>`. In shadow mode a call admitted in place
//!   of a refusal is never answered by the fallback, so under such a fallback
//!   it runs without the deadline, to its end.
//! - [`Breaker::call_async_guarded`](crate::Breaker::call_async_guarded) returns
//!   [`CallError::TimedOut`](crate::CallError::TimedOut).
//!
//! A sync fn cannot be interrupted from outside its thread: `timeout_ms` on a
//! sync fn is a compile error, and the sync helpers ignore a config's
//! `timeout_ms` (put the deadline in the blocking call itself, such as a socket
//! read timeout). The plain `call_async` and `try_acquire` ignore it too: only
//! the guarded helpers and the attribute that names the key pay for a timer.
//!
//! # Cost
//!
//! One timer registration per call when `timeout_ms` is set (with tokio, an
//! entry in the runtime's timer wheel, made on the first poll and removed when
//! the call ends), plus the race's poll of the timer each time the call is
//! polled. Nothing at all for calls without `timeout_ms`. Measured figures are
//! in the benches (`timeout_async`).
//!
//! # Order
//!
//! The bulkhead (`max_concurrent`) stands outside the breaker, the breaker
//! outside the deadline, the deadline around the call: a call over the cap
//! never claims a permit; a refused call never starts a timer; a timeout is a
//! failure the breaker counts.
//!
//! # Another runtime
//!
//! Implement [`Timer`] for a value of your runtime and name it with the
//! attribute's `timer` key (a path to a value, like a `static` or a unit
//! struct), or pass it to the guarded helpers:
//!
//! ```
//! use std::future::{pending, Pending};
//! use std::time::Duration;
//! use breakerbox::timeout::Timer;
//!
//! /// A timer for a runtime without one: deadlines never fire.
//! struct Never;
//! impl Timer for Never {
//!     type Sleep = Pending<()>;
//!     fn sleep(&self, _: Duration) -> Pending<()> {
//!         pending()
//!     }
//! }
//!
//! #[derive(Debug)]
//! enum Error { Open(breakerbox::CircuitOpen), Late(breakerbox::TimedOut) }
//! impl From<breakerbox::CircuitOpen> for Error {
//!     fn from(e: breakerbox::CircuitOpen) -> Self { Error::Open(e) }
//! }
//! impl From<breakerbox::TimedOut> for Error {
//!     fn from(e: breakerbox::TimedOut) -> Self { Error::Late(e) }
//! }
//!
//! #[breakerbox::circuit_breaker(group = "doc-timer", timeout_ms = 50, timer = Never)]
//! async fn fetch() -> Result<u32, Error> {
//!     Ok(7)
//! }
//! ```

pub use breaker_core::timeout::within;
pub use breaker_core::Timer;

/// Tokio's timer: `tokio::time::sleep`. It needs a tokio runtime with time
/// enabled (`enable_time`, or `#[tokio::main]`), and honours
/// `tokio::time::pause`, so tests can run deadlines on paused time.
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[derive(Clone, Copy, Debug, Default)]
pub struct Tokio;

#[cfg(feature = "tokio")]
impl Timer for Tokio {
    type Sleep = tokio::time::Sleep;
    fn sleep(&self, after: std::time::Duration) -> Self::Sleep {
        tokio::time::sleep(after)
    }
}

/// The timer `timeout_ms` uses without a `timer` key: [`Tokio`] with the
/// `tokio` feature.
#[cfg(feature = "tokio")]
#[doc(hidden)]
pub use self::Tokio as DefaultTimer;

/// The timer `timeout_ms` uses without a `timer` key: none without the `tokio`
/// feature, which the attribute reports at compile time.
#[cfg(not(feature = "tokio"))]
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct DefaultTimer;
