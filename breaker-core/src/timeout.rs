//! Deadlines for async calls: the [`Timer`] a runtime provides, and the race
//! between a call and its deadline.
//!
//! The core owns no timer: the facade's `tokio` feature provides one, and any
//! runtime plugs its own in by implementing [`Timer`]. Setting `timeout_ms`
//! costs one timer registration (and its cancellation) per call; a group
//! without it never creates a timer.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

/// A runtime's sleep, for call deadlines.
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::future::{pending, Pending};
/// use std::time::Duration;
/// use breakerbox::timeout::Timer;
///
/// /// A timer that never fires: calls run to completion, however long.
/// struct Never;
///
/// impl Timer for Never {
///     type Sleep = Pending<()>;
///     fn sleep(&self, _: Duration) -> Self::Sleep {
///         pending()
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `Timer`: `timeout_ms` needs one to race calls against",
    label = "enable the `tokio` feature of `breakerbox`, or name a value implementing `breakerbox::timeout::Timer` with `timer = path`"
)]
pub trait Timer {
    /// The future that completes once `after` has passed.
    type Sleep: Future<Output = ()>;

    /// A future completing after `after`, measured from its creation (or, for
    /// timers that register lazily, its first poll: immediately before the
    /// call is first polled, here).
    fn sleep(&self, after: Duration) -> Self::Sleep;
}

impl<T: Timer + ?Sized> Timer for &T {
    type Sleep = T::Sleep;
    fn sleep(&self, after: Duration) -> Self::Sleep {
        (**self).sleep(after)
    }
}

/// Runs `future` until it completes or `after` passes, whichever is first;
/// `None` when the deadline won, in which case `future` has been dropped
/// before this returns. The call is polled before the deadline each time, so a
/// call ready at the deadline's instant wins.
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::future::{pending, ready, Pending, Ready};
/// use std::time::Duration;
/// use breakerbox::{timeout::within, timeout::Timer};
///
/// struct AlreadyDue;
/// impl Timer for AlreadyDue {
///     type Sleep = Ready<()>;
///     fn sleep(&self, _: Duration) -> Ready<()> {
///         ready(())
///     }
/// }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// let late = within(&AlreadyDue, Duration::from_millis(5), pending::<u32>()).await;
/// assert_eq!(late, None);
/// let ready_first = within(&AlreadyDue, Duration::from_millis(5), ready(7)).await;
/// assert_eq!(ready_first, Some(7));
/// # });
/// ```
pub async fn within<T, F>(timer: &T, after: Duration, future: F) -> Option<F::Output>
where
    T: Timer + ?Sized,
    F: Future,
{
    let mut future = pin!(future);
    let mut deadline = pin!(timer.sleep(after));
    // Both are locals of this fn: they are dropped when it returns, before the
    // caller sees `None`.
    poll_fn(|cx| {
        if let Poll::Ready(value) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(value));
        }
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}
