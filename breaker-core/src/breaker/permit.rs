//! The [`Permit`] a claim returns, and the [`Classifier`] that turns an error into
//! a failure or an ignored outcome.

use std::mem::ManuallyDrop;

use super::handle::Breaker;
use super::inner::Inner;
use super::transition::Verdict;
use crate::state::{State, Word};

/// Decides whether an error says something about the dependency's health.
///
/// Any `Fn(&E) -> bool` is a classifier, so a plain fn path works:
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::classify::Classifier;
///
/// #[derive(Debug)]
/// enum ApiError { BadRequest, Unavailable }
///
/// fn server_side(e: &ApiError) -> bool {
///     matches!(e, ApiError::Unavailable)
/// }
/// assert!(server_side.is_failure(&ApiError::Unavailable));
/// assert!(!server_side.is_failure(&ApiError::BadRequest));
/// ```
pub trait Classifier<E: ?Sized> {
    /// `true`: the error counts as a failure; `false`: it is ignored (neither
    /// success nor failure).
    fn is_failure(&self, error: &E) -> bool;

    /// Whose failure an error is, once [`is_failure`](Self::is_failure) said
    /// it is one: the key's ([`Scope::Key`], the default) or its whole keyed
    /// group's ([`Scope::Group`]: an expired credential, a provider-wide
    /// 5xx). Only a keyed group that judges as one (`systemic_share`,
    /// `max_open_keys`) tells them apart; every other breaker counts either
    /// as its own failure.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::classify::{Classifier, Scope};
    /// use breakerbox::{keyed::KeyedGroup, Config, State};
    ///
    /// enum ApiError { QuotaOfThisModel, CredentialExpired }
    ///
    /// struct Provider;
    /// impl Classifier<ApiError> for Provider {
    ///     fn is_failure(&self, _: &ApiError) -> bool { true }
    ///     fn scope(&self, error: &ApiError) -> Scope {
    ///         match error {
    ///             ApiError::CredentialExpired => Scope::Group,
    ///             ApiError::QuotaOfThisModel => Scope::Key,
    ///         }
    ///     }
    /// }
    ///
    /// let config = Config::builder().threshold(2).systemic_share(0.5).build().unwrap();
    /// let models = KeyedGroup::<String>::new("models", config, 100);
    /// for _ in 0..2 {
    ///     let _ = models.breaker("model-a").call_with(&Provider, || Err::<(), _>(ApiError::CredentialExpired));
    /// }
    /// assert_eq!(models.group_breaker().unwrap().state(), State::Open);
    /// assert_eq!(models.get("model-a").unwrap().state(), State::Closed, "not the model's fault");
    /// ```
    #[inline(always)]
    fn scope(&self, error: &E) -> Scope {
        let _ = error;
        Scope::Key
    }
}

/// Whose failure an error is ([`Classifier::scope`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The key's own: it counts toward the key's breaker (the default).
    Key,
    /// The whole keyed group's (a provider-wide fault): it counts toward the
    /// group's own breaker, not the key's (see
    /// [`Permit::failure_of_group`]).
    Group,
}

impl<E: ?Sized, F: Fn(&E) -> bool + ?Sized> Classifier<E> for F {
    #[inline]
    fn is_failure(&self, error: &E) -> bool {
        self(error)
    }
}

/// The default classifier: every error is a failure.
#[derive(Clone, Copy, Debug, Default)]
pub struct EveryError;

impl<E: ?Sized> Classifier<E> for EveryError {
    #[inline]
    fn is_failure(&self, _: &E) -> bool {
        true
    }
}

/// The right to make one call through a breaker. Exactly one outcome is recorded
/// per permit: [`success`](Permit::success), [`failure`](Permit::failure),
/// [`ignore`](Permit::ignore) or [`record`](Permit::record) consume it.
///
/// Dropped without a verdict, it records a failure when the thread is panicking,
/// and otherwise counts as *abandoned* (a cancelled future, a caller that gave up):
/// a probe slot it held is released and nothing else moves. "Panicking" is the
/// thread's state, not the call's: a pending guarded future dropped while an
/// unrelated panic unwinds through its task also counts as a failure.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Breaker, Config};
///
/// let breaker = Breaker::new("inventory", Config::default());
/// let permit = breaker.try_acquire().expect("a new breaker is closed");
/// let result: Result<u32, std::io::Error> = Ok(7); // the protected call
/// permit.record(&result);
/// assert_eq!(breaker.metrics().successes, 1);
/// ```
#[must_use = "a permit records an outcome: call `success`, `failure` or `record`, or the call counts as abandoned"]
pub struct Permit<'a> {
    pub(super) inner: &'a Inner,
    /// The breaker's word at the claim: its generation, and whether this is a
    /// probe (a half-open word) or a call. [Marked](Word::marked) unless the
    /// call's success needs nothing but a count when it finds this same word.
    admitted: Word,
    /// When the call was claimed, for slow-call judging; 0 when nothing times it.
    started: u64,
}

impl<'a> Permit<'a> {
    #[inline]
    pub(super) fn new(inner: &'a Inner, admitted: Word, started: u64) -> Self {
        Permit {
            inner,
            admitted,
            started,
        }
    }

    /// The call succeeded.
    #[inline(always)]
    pub fn success(self) {
        self.finish(Verdict::Success);
    }

    /// The call failed in a way that says the dependency is unhealthy.
    #[inline(always)]
    pub fn failure(self) {
        self.finish(Verdict::Failure);
    }

    /// The call failed in a way that says nothing about the dependency (a
    /// validation error, a 404): counted as ignored, frees a probe slot, moves nothing.
    #[inline(always)]
    pub fn ignore(self) {
        self.finish(Verdict::Ignored);
    }

    /// The call failed in a way that is its whole keyed group's, not its
    /// key's (an expired credential, a provider-wide 5xx): in a keyed group
    /// that judges as one, it counts toward the group's own breaker, as a key
    /// beginning to fail, and is ignored by the key's (counted in `ignored`);
    /// on any other breaker it is a [`failure`](Self::failure).
    #[cold]
    pub fn failure_of_group(self) {
        let verdict = self.inner.failure_of_group(self.admitted);
        self.finish(verdict);
    }

    /// The call never ran (the caller claimed and then chose not to call):
    /// counted as abandoned whatever the group's `abandoned` key says, so a
    /// probe slot it held is freed and nothing else moves. A call that ran
    /// and was given up is dropped instead, which the key may count as a
    /// failure.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{config::Abandoned, Breaker, Config};
    ///
    /// let config = Config::builder().abandoned(Abandoned::Failure).build()?;
    /// let breaker = Breaker::new("docs-give-back", config);
    /// breaker.try_acquire()?.give_back();
    /// let m = breaker.metrics();
    /// assert_eq!((m.abandoned, m.failures), (1, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cold]
    pub fn give_back(self) {
        self.finish(Verdict::Abandoned);
    }

    /// A failure of `scope`.
    #[inline(always)]
    fn failure_in(self, scope: Scope) {
        match scope {
            Scope::Key => self.failure(),
            Scope::Group => self.failure_of_group(),
        }
    }

    /// Records `Ok` as success and every `Err` as failure.
    #[inline(always)]
    pub fn record<T, E>(self, result: &Result<T, E>) {
        match result {
            Ok(_) => self.success(),
            Err(_) => self.failure(),
        }
    }

    /// Records `Ok` as success and an `Err` as failure or ignored, as `classifier` says.
    #[inline(always)]
    pub fn record_with<T, E, C>(self, result: &Result<T, E>, classifier: &C)
    where
        C: Classifier<E> + ?Sized,
    {
        // The classifier holds a reference into `result`, which costs a caller
        // that returns that `Result` a copy (see `record_owned`); `record` hands
        // the error to no one, and the attribute records by value.
        match result {
            Ok(_) => self.success(),
            Err(e) => {
                if classifier.is_failure(e) {
                    self.failure_in(classifier.scope(e))
                } else {
                    self.ignore()
                }
            }
        }
    }

    /// Records `result` as [`record_with`](Self::record_with) does and gives it
    /// back, its error passed through `wrap`: for the `call` helpers and for the
    /// attribute with a classifier. It takes the `Result` by value and moves each
    /// half on its own. Recording through a reference into a `Result` that is
    /// then moved out (a reference the classifier holds, here) made the compiler
    /// build it on the stack and copy it with one wide load over the narrower
    /// stores that wrote it: a store-forwarding stall.
    #[inline(always)]
    pub(crate) fn record_owned<T, E, F, C>(
        self,
        result: Result<T, E>,
        classifier: &C,
        wrap: impl FnOnce(E) -> F,
    ) -> Result<T, F>
    where
        C: Classifier<E> + ?Sized,
    {
        match result {
            Ok(value) => {
                self.success();
                Ok(value)
            }
            Err(error) => {
                if classifier.is_failure(&error) {
                    self.failure_in(classifier.scope(&error));
                } else {
                    self.ignore();
                }
                Err(wrap(error))
            }
        }
    }

    /// Whether this permit holds a half-open probe slot.
    pub fn is_probe(&self) -> bool {
        self.admitted.state() == State::HalfOpen
    }

    /// Whether shadow mode admitted this call in place of a refusal: the
    /// breaker would have refused it (open, half-open with every probe slot
    /// taken, held back by a ramp). Its outcome is counted and moves the
    /// breaker no more than a refused claim would (a ramp's call is judged
    /// as any closed call), and a fallback does not answer it: the call's
    /// own value is the caller's answer, as it would be without a breaker.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Breaker, Config};
    ///
    /// let config = Config::builder().threshold(1).shadow(true).build().unwrap();
    /// let breaker = Breaker::new("docs-shadow-call", config);
    /// let call = breaker.try_acquire().unwrap();
    /// assert!(!call.is_shadow_call());
    /// call.failure(); // opens
    /// let call = breaker.try_acquire().expect("shadow mode refuses nothing");
    /// assert!(call.is_shadow_call());
    /// call.failure();
    /// ```
    pub fn is_shadow_call(&self) -> bool {
        self.admitted.is_shadow_call()
    }

    /// The generation of the breaker this permit was admitted in.
    pub fn generation(&self) -> u64 {
        self.admitted.generation()
    }

    /// The call ran past its deadline of `after_nanos` and was dropped: a
    /// failure that lasted at least the deadline on the breaker's clock, so a
    /// slow call (and a latency sample at the deadline) however the breaker's
    /// clock and the timer disagree (see `Inner::settle_timed_out`).
    pub(crate) fn timed_out(self, after_nanos: u64) {
        let this = ManuallyDrop::new(self);
        this.inner
            .settle_timed_out(this.admitted, this.started, after_nanos);
    }

    #[inline(always)]
    fn finish(self, verdict: Verdict) {
        let this = ManuallyDrop::new(self);
        this.inner.settle(this.admitted, this.started, verdict);
    }

    /// Settles a call whose answer was a server's wait: ignored by the failure
    /// policy, and a reject for the adaptive throttle (the dependency did not
    /// take the call).
    pub(super) fn settle_held(mut self) {
        self.admitted = self.inner.throttle_rejected(self.admitted);
        self.finish(Verdict::Ignored);
    }
}

/// A [`Permit`] that holds a handle to its breaker, so that it can live in a
/// value that outlives the [`Breaker`] it was claimed from (a response body
/// read after the request returned, a spawned task). It records exactly as a
/// `Permit` does, dropped without a verdict included; holding it costs a
/// reference count, which a `Permit` does not.
///
/// ```
/// # mod breakerbox { pub use breaker_core::*; pub mod breaker { pub use breaker_core::OwnedPermit; } }
/// use breakerbox::{breaker::OwnedPermit, Breaker, Config};
///
/// fn claim(breaker: Breaker) -> OwnedPermit {
///     breaker.try_acquire_owned().expect("a new breaker is closed")
/// }
/// let breaker = Breaker::new("docs-owned", Config::default());
/// claim(breaker.clone()).failure();
/// assert_eq!(breaker.metrics().failures, 1);
/// ```
#[must_use = "a permit records an outcome: call `success`, `failure` or `ignore`, or the call counts as abandoned"]
pub struct OwnedPermit {
    /// Dropped by `finish` or `drop`, whichever records.
    breaker: ManuallyDrop<Breaker>,
    admitted: Word,
    started: u64,
}

impl Breaker {
    /// Claims as [`try_acquire`](Self::try_acquire) does, for a permit that
    /// holds its own handle to this breaker.
    ///
    /// # Errors
    ///
    /// [`CircuitOpen`](crate::CircuitOpen) when the breaker refuses.
    #[inline]
    pub fn try_acquire_owned(&self) -> Result<OwnedPermit, crate::CircuitOpen> {
        let permit = ManuallyDrop::new(self.try_acquire()?);
        Ok(OwnedPermit {
            breaker: ManuallyDrop::new(self.clone()),
            admitted: permit.admitted,
            started: permit.started,
        })
    }
}

impl OwnedPermit {
    /// The call succeeded.
    #[inline(always)]
    pub fn success(self) {
        self.finish(Verdict::Success);
    }

    /// The call failed in a way that says the dependency is unhealthy.
    #[inline(always)]
    pub fn failure(self) {
        self.finish(Verdict::Failure);
    }

    /// The call failed in a way that says nothing about the dependency:
    /// counted as ignored, frees a probe slot, moves nothing.
    #[inline(always)]
    pub fn ignore(self) {
        self.finish(Verdict::Ignored);
    }

    /// As [`Permit::failure_of_group`]: a failure of the whole keyed group.
    #[cold]
    pub fn failure_of_group(self) {
        let verdict = self.breaker.inner.failure_of_group(self.admitted);
        self.finish(verdict);
    }

    /// As [`Permit::give_back`]: the call never ran; counted as abandoned
    /// whatever the group's `abandoned` key says.
    #[cold]
    pub fn give_back(self) {
        self.finish(Verdict::Abandoned);
    }

    /// As [`Permit::is_shadow_call`]: whether shadow mode admitted this call
    /// in place of a refusal.
    #[inline]
    pub fn is_shadow_call(&self) -> bool {
        self.admitted.is_shadow_call()
    }

    /// As [`Permit::is_probe`]: whether this permit holds a half-open probe
    /// slot.
    #[inline]
    pub fn is_probe(&self) -> bool {
        self.admitted.state() == State::HalfOpen
    }

    /// The breaker this permit was claimed from.
    #[inline]
    pub fn breaker(&self) -> &Breaker {
        &self.breaker
    }

    /// The call ran past its deadline `after` and was dropped (drop it first):
    /// recorded as a timed-out call is everywhere (a failure, a slow call,
    /// counted in `timeouts`), and its error returned. For an integration
    /// that races the group's [`timeout`](crate::Config::timeout) on a timer
    /// of its own.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, Config, State};
    ///
    /// let breaker = Breaker::new("docs-owned-late", Config::builder().threshold(1).build()?);
    /// let late = breaker.try_acquire_owned()?.timed_out(Duration::from_millis(200));
    /// assert_eq!(late.group(), "docs-owned-late");
    /// assert_eq!(breaker.metrics().timeouts, 1);
    /// assert_eq!(breaker.state(), State::Open);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn timed_out(self, after: std::time::Duration) -> crate::TimedOut {
        let mut this = ManuallyDrop::new(self);
        let inner = &this.breaker.inner;
        inner.counters.bump(crate::counters::Counter::Timeouts);
        let nanos = u64::try_from(after.as_nanos()).unwrap_or(u64::MAX);
        inner.settle_timed_out(this.admitted, this.started, nanos);
        let late = crate::TimedOut::new(inner.name, after);
        // SAFETY: `this` is never dropped (`ManuallyDrop`) nor used again, so
        // its breaker is dropped once, here.
        unsafe { ManuallyDrop::drop(&mut this.breaker) };
        late
    }

    #[inline(always)]
    /// As [`Permit::settle_held`].
    pub(super) fn settle_held(mut self) {
        self.admitted = self.breaker.inner.throttle_rejected(self.admitted);
        self.finish(Verdict::Ignored);
    }

    fn finish(self, verdict: Verdict) {
        let mut this = ManuallyDrop::new(self);
        this.breaker
            .inner
            .settle(this.admitted, this.started, verdict);
        // SAFETY: `this` is never dropped (`ManuallyDrop`) nor used again, so
        // its breaker is dropped once, here.
        unsafe { ManuallyDrop::drop(&mut this.breaker) }
    }
}

impl std::fmt::Debug for OwnedPermit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedPermit")
            .field("group", &self.breaker.group())
            .finish_non_exhaustive()
    }
}

impl Drop for OwnedPermit {
    #[inline]
    fn drop(&mut self) {
        dropped(&self.breaker.inner, self.admitted, self.started);
        // SAFETY: dropped once: `finish`, the only other place that drops it,
        // keeps the permit from being dropped.
        unsafe { ManuallyDrop::drop(&mut self.breaker) }
    }
}

impl std::fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permit")
            .field("generation", &self.generation())
            .field("probe", &self.is_probe())
            .field("shadow_call", &self.is_shadow_call())
            .finish_non_exhaustive()
    }
}

impl Drop for Permit<'_> {
    /// Inlined, handing the fields on by value: a drop that took the permit's
    /// address would keep whatever holds it (a response future, say) in memory
    /// in the caller, and the copies of it would stall on store forwarding.
    #[inline(always)]
    fn drop(&mut self) {
        dropped(self.inner, self.admitted, self.started);
    }
}

/// A permit dropped without a verdict: a failure while a panic unwinds, and
/// otherwise abandoned, which the group's `abandoned` key may count as a
/// failure too.
#[cold]
#[inline(never)]
fn dropped(inner: &Inner, admitted: Word, started: u64) {
    let verdict = if std::thread::panicking() {
        Verdict::Failure
    } else {
        inner.abandoned_verdict()
    };
    inner.settle(admitted, started, verdict);
}
