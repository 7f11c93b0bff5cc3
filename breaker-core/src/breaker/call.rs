//! The call helpers of [`Breaker`]: a closure or a future run under a permit,
//! with or without the guards (bulkhead, timeout) its config asks for.

use std::future::Future;

use super::call_future::{ByRef, CallFuture};
use super::handle::Breaker;
use super::permit::{Classifier, EveryError, Permit};
use crate::bulkhead::BulkheadSlot;
use crate::counters::Counter;
use crate::error::{CallError, CircuitOpen, OpenReason, TimedOut};
use crate::timeout::{within, Timer};

/// A [`BulkheadSlot`] that holds a handle to its breaker, so that it can live
/// in a value that outlives the [`Breaker`] it was taken from (a response
/// future, a spawned task); made by
/// [`Breaker::enter_bulkhead_owned`]. Freed when dropped, as a
/// `BulkheadSlot` is.
#[must_use = "the slot is freed when dropped: hold it for the whole call"]
#[derive(Debug)]
pub struct OwnedBulkheadSlot {
    /// `None` for a group without a bulkhead.
    held: Option<Breaker>,
}

impl Drop for OwnedBulkheadSlot {
    fn drop(&mut self) {
        if let Some(bulkhead) = self.held.as_ref().and_then(|b| b.bulkhead()) {
            bulkhead.leave();
        }
    }
}

impl Breaker {
    /// Runs `f` if the breaker admits it, counting every `Err` as a failure.
    /// A panic in `f` is recorded as a failure and goes on unwinding.
    #[inline]
    pub fn call<T, E, F>(&self, f: F) -> Result<T, CallError<E>>
    where
        F: FnOnce() -> Result<T, E>,
    {
        self.call_with(&EveryError, f)
    }

    /// Runs `f` if the breaker admits it; `classifier` decides which errors count.
    #[inline]
    pub fn call_with<T, E, C, F>(&self, classifier: &C, f: F) -> Result<T, CallError<E>>
    where
        C: Classifier<E> + ?Sized,
        F: FnOnce() -> Result<T, E>,
    {
        let permit = self.try_acquire()?;
        permit.record_owned(f(), classifier, CallError::Inner)
    }

    /// Awaits `future` if the breaker admits it, counting every `Err` as a failure.
    /// The claim is made on the first poll; dropping the returned future before it
    /// completes counts as abandoned and releases any probe slot.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, Config};
    ///
    /// # async fn lookup() -> Result<u32, std::io::Error> { Ok(7) }
    /// # async fn run() {
    /// let breaker = Breaker::new("dns", Config::default());
    /// assert_eq!(breaker.call_async(lookup()).await.unwrap(), 7);
    /// # }
    /// ```
    // Not an `async fn`: its state machine moved `future` from the argument slot
    // to the awaited one on every call (see `call_future`).
    #[inline]
    pub fn call_async<'a, T, E, Fut>(
        &'a self,
        future: Fut,
    ) -> impl Future<Output = Result<T, CallError<E>>> + use<'a, T, E, Fut>
    where
        Fut: Future<Output = Result<T, E>>,
    {
        CallFuture::new(self, EveryError, future)
    }

    /// [`call_async`](Self::call_async) with a classifier.
    #[inline]
    pub fn call_async_with<'a, T, E, C, Fut>(
        &'a self,
        classifier: &'a C,
        future: Fut,
    ) -> impl Future<Output = Result<T, CallError<E>>> + use<'a, T, E, C, Fut>
    where
        C: Classifier<E> + ?Sized,
        Fut: Future<Output = Result<T, E>>,
    {
        CallFuture::new(self, ByRef(classifier), future)
    }

    /// Takes a place in the group's bulkhead (`max_concurrent`), held until the
    /// [`BulkheadSlot`] is dropped; refused at once with
    /// [`OpenReason::BulkheadFull`] when every place is taken (counted in
    /// `rejected` and `bulkhead_rejected`, never as a failure). Without
    /// `max_concurrent`, always a slot that holds nothing.
    ///
    /// The bulkhead stands outside the breaker: take the slot first, then
    /// [`try_acquire`](Self::try_acquire), so a probe holds a place like any call.
    #[inline]
    pub fn enter_bulkhead(&self) -> Result<BulkheadSlot<'_>, CircuitOpen> {
        let inner = &*self.inner;
        let Some(bulkhead) = &inner.guards.bulkhead else {
            return Ok(BulkheadSlot::free());
        };
        match bulkhead.try_enter() {
            Some(slot) => Ok(slot),
            None => Err(self.bulkhead_full()),
        }
    }

    /// [`enter_bulkhead`](Self::enter_bulkhead), for a slot that holds its
    /// own handle to this breaker: an integration's response future keeps it
    /// to the end of the call.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, Config, OpenReason};
    ///
    /// let breaker = Breaker::new("docs-owned-slot", Config::builder().max_concurrent(1).build()?);
    /// let slot = breaker.enter_bulkhead_owned()?;
    /// assert_eq!(breaker.enter_bulkhead().unwrap_err().reason(), OpenReason::BulkheadFull);
    /// drop(slot);
    /// assert!(breaker.enter_bulkhead().is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn enter_bulkhead_owned(&self) -> Result<OwnedBulkheadSlot, CircuitOpen> {
        let held = self.enter_bulkhead()?.keep();
        Ok(OwnedBulkheadSlot {
            held: held.then(|| self.clone()),
        })
    }

    /// The group's bulkhead, if it has one.
    pub(crate) fn bulkhead(&self) -> Option<&crate::bulkhead::Bulkhead> {
        self.inner.guards.bulkhead.as_ref()
    }

    #[cold]
    fn bulkhead_full(&self) -> CircuitOpen {
        let inner = &*self.inner;
        inner.counters.bump(crate::counters::Counter::Rejected);
        inner.counters.bump(Counter::BulkheadRejected);
        CircuitOpen::new(inner.name, OpenReason::BulkheadFull, None)
    }

    /// [`call`](Self::call) inside the group's bulkhead: a call over
    /// `max_concurrent` is refused with [`OpenReason::BulkheadFull`] and `f`
    /// does not run. `timeout_ms` does not apply: a sync call cannot be
    /// interrupted from outside its thread.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, CallError, Config, OpenReason};
    ///
    /// let breaker = Breaker::new("files", Config::builder().max_concurrent(1).build()?);
    /// let inner = breaker.clone();
    /// let nested = breaker
    ///     .call_in_bulkhead(|| {
    ///         // The one slot is held by this call: a second one is refused.
    ///         Ok::<_, ()>(inner.call_in_bulkhead(|| Ok::<_, ()>(())))
    ///     })
    ///     .unwrap();
    /// assert!(matches!(nested, Err(CallError::Open(o)) if o.reason() == OpenReason::BulkheadFull));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn call_in_bulkhead<T, E, F>(&self, f: F) -> Result<T, CallError<E>>
    where
        F: FnOnce() -> Result<T, E>,
    {
        self.call_in_bulkhead_with(&EveryError, f)
    }

    /// [`call_in_bulkhead`](Self::call_in_bulkhead) with a classifier.
    #[inline]
    pub fn call_in_bulkhead_with<T, E, C, F>(&self, classifier: &C, f: F) -> Result<T, CallError<E>>
    where
        C: Classifier<E> + ?Sized,
        F: FnOnce() -> Result<T, E>,
    {
        let _slot = self.enter_bulkhead()?;
        let permit = self.try_acquire()?;
        permit.record_owned(f(), classifier, CallError::Inner)
    }

    /// Awaits `future` with everything the group's config asks for, in this
    /// order: the bulkhead (`max_concurrent`) outside the breaker, the breaker
    /// outside the deadline (`timeout_ms`, raced on `timer`), the deadline
    /// around the call.
    ///
    /// A call that overruns the deadline is dropped, counted as a failure (and
    /// a slow call), and answered with [`CallError::TimedOut`]. Its bulkhead slot
    /// is freed on every way out: completion, timeout, panic, or this future
    /// being dropped. Without `timeout_ms` no timer is made.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::future::{pending, ready, Ready};
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, CallError, Config, State, timeout::Timer};
    ///
    /// struct AlreadyDue; // a timer whose every deadline has passed
    /// impl Timer for AlreadyDue {
    ///     type Sleep = Ready<()>;
    ///     fn sleep(&self, _: Duration) -> Ready<()> { ready(()) }
    /// }
    ///
    /// let config = Config::builder().threshold(1).timeout(Duration::from_millis(100)).build()?;
    /// let breaker = Breaker::new("hangs", config);
    /// # let rt = tokio::runtime::Builder::new_current_thread().build()?;
    /// # rt.block_on(async {
    /// let hung = breaker.call_async_guarded(&AlreadyDue, pending::<Result<(), ()>>()).await;
    /// assert!(matches!(hung, Err(CallError::TimedOut(_))));
    /// # });
    /// assert_eq!(breaker.state(), State::Open); // a timeout is a failure
    /// assert_eq!(breaker.metrics().timeouts, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn call_async_guarded<T, E, Tm, Fut>(
        &self,
        timer: &Tm,
        future: Fut,
    ) -> Result<T, CallError<E>>
    where
        Tm: Timer + ?Sized,
        Fut: Future<Output = Result<T, E>>,
    {
        self.call_async_guarded_with(timer, &EveryError, future)
            .await
    }

    /// [`call_async_guarded`](Self::call_async_guarded) with a classifier (a
    /// timeout is a failure whatever it says).
    pub async fn call_async_guarded_with<T, E, C, Tm, Fut>(
        &self,
        timer: &Tm,
        classifier: &C,
        future: Fut,
    ) -> Result<T, CallError<E>>
    where
        C: Classifier<E> + ?Sized,
        Tm: Timer + ?Sized,
        Fut: Future<Output = Result<T, E>>,
    {
        let _slot = self.enter_bulkhead()?;
        let permit = self.try_acquire()?;
        let Some(after) = self.inner.config().timeout() else {
            return permit.record_owned(future.await, classifier, CallError::Inner);
        };
        match within(timer, after, future).await {
            Some(result) => permit.record_owned(result, classifier, CallError::Inner),
            None => Err(CallError::TimedOut(self.timed_out(permit, after))),
        }
    }

    /// Records a call dropped at its deadline `after` and returns its error
    /// (the expansion reaches it through `__private::timed_out`).
    #[cold]
    pub(crate) fn timed_out(&self, permit: Permit<'_>, after: std::time::Duration) -> TimedOut {
        let inner = &*self.inner;
        inner.counters.bump(Counter::Timeouts);
        permit.timed_out(u64::try_from(after.as_nanos()).unwrap_or(u64::MAX));
        TimedOut::new(inner.name, after)
    }
}
