//! A testkit for code behind `#[circuit_breaker]`: a [`TestKit`] is a registry
//! and clock of the test's own, which the attributes its code reaches use in
//! place of the process-wide registry while it is installed, with helpers to
//! force groups, script outcomes and assert the transitions a group went
//! through.
//!
//! # Isolation
//!
//! An attribute without a `registry = ..` key asks, on every call, whether a
//! kit is installed on the running thread, and uses the kit's registry if one
//! is; production code needs no change. A kit is installed
//!
//! - for a sync test, with [`TestKit::install`] (a guard: until it drops, on
//!   this thread) or [`TestKit::run`] (for one closure);
//! - for an async test, with [`TestKit::scope`]: the future it wraps finds the
//!   kit on whichever thread polls it, so it holds on a current-thread and a
//!   multi-thread runtime alike.
//!
//! What a test starts elsewhere does not inherit the kit: wrap a spawned task
//! (`tokio::spawn(kit.scope(task))`) and install the kit in a spawned thread
//! (`let kit = kit.clone(); std::thread::spawn(move || kit.run(work))`).
//! Attributes with `registry = ..` keep the registry they name.
//!
//! The integrations take their breakers when they are built: a tower
//! [`CircuitBreakerLayer`](crate::tower::CircuitBreakerLayer) or a reqwest
//! [`CircuitBreakerMiddleware`](crate::reqwest::CircuitBreakerMiddleware)
//! made by group name while a kit is installed (an app built inside the
//! test) holds the kit's breakers, on the kit's clock, and a force the kit
//! holds for its group applies; one built before keeps the registry it took.
//!
//! Tests run in parallel without seeing each other's breakers: each kit has its
//! own registry, and `cargo test` runs each test on its own thread.
//!
//! ```
//! use breakerbox::testing::TestKit;
//! use breakerbox::{circuit_breaker, CircuitOpen, State};
//!
//! #[derive(Debug)]
//! enum PayError { Declined, Open(CircuitOpen) }
//! impl From<CircuitOpen> for PayError {
//!     fn from(open: CircuitOpen) -> Self { PayError::Open(open) }
//! }
//!
//! // Production code, as it is: no `registry = ..`.
//! #[circuit_breaker(group = "payments", threshold = 2)]
//! fn charge(ok: bool) -> Result<(), PayError> {
//!     if ok { Ok(()) } else { Err(PayError::Declined) }
//! }
//!
//! let kit = TestKit::new();
//! let _installed = kit.install();
//! let _ = charge(false);
//! let _ = charge(false);
//! assert_eq!(kit.state("payments"), Some(State::Open));
//! kit.assert_transitions("payments", &["closed -> open (tripped by consecutive_failures)"]);
//! // The process-wide registry never saw the group.
//! assert!(breakerbox::registry().get("payments").is_none());
//! ```
//!
//! # Cost
//!
//! Without feature `testing` the check does not exist: the attribute's claim
//! compiles to the call site's cached lookup alone. With it, a call while no
//! kit is installed on any thread pays one relaxed atomic load and a branch;
//! while one is installed somewhere, a thread-local read; a call under a kit
//! looks its group up in the kit's registry (a read lock and a hash). Enable the feature for tests
//! only (`[dev-dependencies] breakerbox = { version = "..", features =
//! ["testing"] }`): dev-dependency features do not reach a production build.
//!
//! # Time
//!
//! [`TestKit::new`] runs its breakers on a [`ManualClock`] that
//! [`TestKit::advance`] moves. [`TestKit::tokio`] runs them on tokio's clock
//! instead: in a test with paused time (`#[tokio::test(start_paused = true)]`),
//! `timeout_ms`, open durations, backoff and ramps all pass in virtual time, as
//! tokio's timers do, and [`TestKit::advance_tokio`] moves both at once.
//!
//! # Load
//!
//! [`FallbackLoad`] drives a fallback at a given concurrency while its group
//! is forced open and reports throughput and p50/p99 latency ([`LoadReport`]),
//! so a test can show the fallback is not the next bottleneck.

mod assert;
mod clock;
mod load;
mod replay;
mod script;
pub mod trace;

use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use breaker_core::events::{Event, Transition};
use breaker_core::{Breaker, ManualClock, Registry, State, Subscription};

pub use self::assert::Step;
pub use self::clock::TokioClock;
pub use self::load::{FallbackLoad, LoadReport};
pub use self::replay::{replay, Timeline};
pub use self::script::Script;

thread_local! {
    static INSTALLED: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// How many kits are installed on any thread: while none is, a claim skips
/// the thread-local.
static ANYWHERE: AtomicUsize = AtomicUsize::new(0);

/// The kit installed on this thread, if any: what the attribute's claim asks.
#[inline]
pub(crate) fn installed() -> Option<Arc<Shared>> {
    if ANYWHERE.load(Ordering::Relaxed) == 0 {
        return None;
    }
    INSTALLED.with_borrow(|kit| kit.clone())
}

/// Puts `kit` in the thread's slot for as long as the guard lives.
fn install(kit: Arc<Shared>) -> Installed<'static> {
    // Counted before the slot is filled, so a claim on this thread that
    // sees the slot filled also sees the count.
    ANYWHERE.fetch_add(1, Ordering::Relaxed);
    Installed {
        previous: INSTALLED.with_borrow_mut(|slot| slot.replace(kit)),
        _kit: PhantomData,
    }
}

/// A registry and clock of a test's own, with what it saw.
///
/// Cloning gives another handle to the same kit (for a spawned thread or
/// task). See [the module docs](self) for how it is installed.
#[derive(Clone, Debug)]
pub struct TestKit {
    shared: Arc<Shared>,
}

/// What a kit's handles share.
pub(crate) struct Shared {
    registry: Registry,
    clock: KitClock,
    /// Every transition of the registry's breakers, keyed ones with their key.
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Forces asked for groups no call has reached yet.
    pending: Mutex<Vec<(String, Force)>>,
    has_pending: AtomicBool,
    _subscription: Subscription,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestKit")
            .field("registry", &self.registry)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

/// The clock a kit moves: its own, or tokio's (which tokio moves).
#[derive(Clone, Debug)]
enum KitClock {
    Manual(ManualClock),
    Tokio,
}

/// One transition the kit's registry told, with the key of a keyed group's.
#[derive(Clone, Debug)]
struct Seen {
    key: Option<Arc<str>>,
    transition: Transition,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Force {
    Open,
    Closed,
}

impl Default for TestKit {
    fn default() -> Self {
        Self::new()
    }
}

impl TestKit {
    /// A kit on a [`ManualClock`] at time zero.
    pub fn new() -> Self {
        let clock = ManualClock::new();
        Self::with(Registry::with_clock(clock.clone()), KitClock::Manual(clock))
    }

    /// A kit whose breakers read tokio's clock ([`TokioClock`]): in a test
    /// with paused time their open durations, backoff and ramps pass as
    /// tokio's timers do. Create it inside the runtime.
    ///
    /// ```
    /// use breakerbox::testing::TestKit;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let kit = TestKit::tokio();
    /// let start = tokio::time::Instant::now();
    /// kit.advance_tokio(Duration::from_secs(30)).await;
    /// assert_eq!(start.elapsed(), Duration::from_secs(30));
    /// assert_eq!(kit.registry().clock_nanos(), 30_000_000_000);
    /// # }
    /// ```
    pub fn tokio() -> Self {
        Self::with(Registry::with_clock(TokioClock::new()), KitClock::Tokio)
    }

    fn with(registry: Registry, clock: KitClock) -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let subscription = registry.subscribe(move |event: &Event| {
            let seen = match event {
                Event::Transition(t) => Seen {
                    key: None,
                    transition: *t,
                },
                Event::KeyedTransition(k) => Seen {
                    key: Some(k.key.clone()),
                    transition: k.transition,
                },
                _ => return,
            };
            lock(&sink).push(seen);
        });
        TestKit {
            shared: Arc::new(Shared {
                registry,
                clock,
                seen,
                pending: Mutex::new(Vec::new()),
                has_pending: AtomicBool::new(false),
                _subscription: subscription,
            }),
        }
    }

    /// The kit's registry: what the attributes use while it is installed.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// Installs the kit on this thread until the guard drops; the kit
    /// installed before (if any) comes back then. The guard stays on its
    /// thread (it is not `Send`).
    pub fn install(&self) -> Installed<'_> {
        install(self.shared.clone())
    }

    /// Runs `f` with the kit installed on this thread.
    ///
    /// ```
    /// use breakerbox::testing::TestKit;
    /// use breakerbox::{circuit_breaker, CircuitOpen};
    ///
    /// #[circuit_breaker(group = "mail")]
    /// fn send() -> Result<(), CircuitOpen> { Ok(()) }
    ///
    /// let kit = TestKit::new();
    /// let worker = kit.clone();
    /// std::thread::spawn(move || worker.run(|| send())).join().unwrap().unwrap();
    /// assert_eq!(kit.registry().get("mail").unwrap().metrics().successes, 1);
    /// ```
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        let _installed = self.install();
        f()
    }

    /// `future`, with the kit installed on whichever thread polls it, for as
    /// long as each poll lasts.
    ///
    /// ```
    /// use breakerbox::testing::TestKit;
    /// use breakerbox::{circuit_breaker, CircuitOpen};
    ///
    /// #[circuit_breaker(group = "search")]
    /// async fn search() -> Result<u32, CircuitOpen> { Ok(3) }
    ///
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    /// # async fn main() {
    /// let kit = TestKit::new();
    /// let task = tokio::spawn(kit.scope(async { search().await }));
    /// assert_eq!(task.await.unwrap(), Ok(3));
    /// assert_eq!(kit.registry().get("search").unwrap().metrics().successes, 1);
    /// # }
    /// ```
    pub fn scope<F: Future>(&self, future: F) -> Scoped<F> {
        Scoped {
            kit: self.shared.clone(),
            future,
        }
    }

    /// Moves the kit's clock forward by `by`.
    ///
    /// # Panics
    ///
    /// On a kit made by [`tokio`](Self::tokio), whose time tokio keeps: use
    /// [`advance_tokio`](Self::advance_tokio).
    pub fn advance(&self, by: Duration) {
        match &self.shared.clock {
            KitClock::Manual(clock) => clock.advance(by),
            KitClock::Tokio => {
                panic!(
                    "TestKit::tokio() reads tokio's clock: move it with `advance_tokio(..).await`"
                )
            }
        }
    }

    /// Moves tokio's paused time forward by `by` (`tokio::time::advance`),
    /// and with it the kit's clock: the kit's own on a kit made by
    /// [`new`](Self::new), tokio's itself on one made by
    /// [`tokio`](Self::tokio). Timers due by then fire.
    ///
    /// # Panics
    ///
    /// Outside a current-thread runtime with paused time, as
    /// `tokio::time::advance` does.
    pub async fn advance_tokio(&self, by: Duration) {
        if let KitClock::Manual(clock) = &self.shared.clock {
            clock.advance(by);
        }
        tokio::time::advance(by).await;
    }

    /// The kit's time, in nanoseconds from its origin.
    pub fn now_nanos(&self) -> u64 {
        self.shared.registry.clock_nanos()
    }

    /// The state of `group`'s breaker in the kit's registry, `None` before
    /// any call reached it. Pure.
    pub fn state(&self, group: &str) -> Option<State> {
        self.shared.registry.get(group).map(|b| b.state())
    }

    /// Forces `group` open: every call is refused (and its fallback answers)
    /// until [`reset`](Self::reset). A group no call reached yet is forced
    /// when the first call reaches it, created from the attribute's config.
    pub fn force_open(&self, group: &str) {
        self.force(group, Force::Open);
    }

    /// Forces `group` closed: every call runs and nothing trips until
    /// [`reset`](Self::reset). As [`force_open`](Self::force_open) for a group
    /// not reached yet.
    pub fn force_closed(&self, group: &str) {
        self.force(group, Force::Closed);
    }

    /// Resets `group` to closed with its counts cleared, and drops a force
    /// still waiting for its first call.
    pub fn reset(&self, group: &str) {
        lock(&self.shared.pending).retain(|(g, _)| g != group);
        if let Some(breaker) = self.shared.registry.get(group) {
            breaker.reset();
        }
    }

    fn force(&self, group: &str, force: Force) {
        match self.shared.registry.get(group) {
            Some(breaker) => apply(&breaker, force),
            None => {
                let mut pending = lock(&self.shared.pending);
                pending.retain(|(g, _)| g != group);
                pending.push((group.to_owned(), force));
                self.shared.has_pending.store(true, Ordering::Release);
            }
        }
    }

    /// Forces the breaker of `key` in the keyed group `group` open (the key's
    /// own, never a group level's: `KeyedGroup::own_breaker`), or returns
    /// `false` when no call reached the group yet (or its key type is not
    /// `K`).
    pub fn force_key_open<K, Q>(&self, group: &str, key: &Q) -> bool
    where
        K: std::hash::Hash + Eq + Send + Sync + 'static + std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        match self.shared.registry.get_keyed::<K>(group) {
            Ok(Some(keyed)) => {
                keyed.own_breaker(key).force_open();
                true
            }
            _ => false,
        }
    }

    /// A [`Recorder`](trace::Recorder) of `group` in the kit's registry, on
    /// the kit's clock, keeping at most `capacity` samples.
    pub fn recorder(&self, group: &str, capacity: usize) -> trace::Recorder {
        let weak = Arc::downgrade(&self.shared);
        trace::Recorder::on(
            &self.shared.registry,
            group,
            capacity,
            Arc::new(move || weak.upgrade().map_or(0, |k| k.registry.clock_nanos())),
        )
    }

    /// Every transition `group`'s breaker went through in the kit's registry,
    /// oldest first (a keyed group's, of every key).
    pub fn transitions(&self, group: &str) -> Vec<Transition> {
        lock(&self.shared.seen)
            .iter()
            .filter(|s| s.transition.group == group)
            .map(|s| s.transition)
            .collect()
    }

    /// The transitions of `key`'s breaker in the keyed group `group`, oldest
    /// first. The key is matched by its text ([`KeyedTransition::key`](breaker_core::events::KeyedTransition::key)).
    pub fn key_transitions(&self, group: &str, key: &str) -> Vec<Transition> {
        lock(&self.shared.seen)
            .iter()
            .filter(|s| s.transition.group == group && s.key.as_deref() == Some(key))
            .map(|s| s.transition)
            .collect()
    }
}

impl Shared {
    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Called with each breaker a call reaches under the kit: applies a
    /// force that waited for it.
    #[inline]
    pub(crate) fn reached(&self, breaker: &Breaker) {
        if self.has_pending.load(Ordering::Acquire) {
            self.reached_pending(breaker);
        }
    }

    #[cold]
    fn reached_pending(&self, breaker: &Breaker) {
        // Forced with the list locked and before the flag clears, so that a
        // call racing this one either waits here or, past the flag, finds
        // the breaker forced: no call of the group runs before its force.
        let mut pending = lock(&self.pending);
        if let Some(at) = pending.iter().position(|(g, _)| g == breaker.group()) {
            let (_, force) = pending.remove(at);
            apply(breaker, force);
            if pending.is_empty() {
                self.has_pending.store(false, Ordering::Release);
            }
        }
    }
}

fn apply(breaker: &Breaker, force: Force) {
    match force {
        Force::Open => breaker.force_open(),
        Force::Closed => breaker.force_closed(),
    }
}

/// A mutex whose holder panicked still holds what it held: the kit's lists
/// stay readable after a failed assertion.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The kit installed on this thread, until dropped ([`TestKit::install`]).
#[must_use = "the kit is installed only while the guard lives"]
#[derive(Debug)]
pub struct Installed<'k> {
    previous: Option<Arc<Shared>>,
    /// Borrows the kit, and is neither `Send` nor `Sync`: it belongs to the
    /// thread whose slot it filled.
    _kit: PhantomData<(&'k TestKit, *const ())>,
}

impl Drop for Installed<'_> {
    fn drop(&mut self) {
        let previous = self.previous.take();
        // The thread's slot is taken by a guard of its own thread; after
        // the thread-local is gone (a guard dropped in a thread's exit) there
        // is nothing to restore.
        let _ = INSTALLED.try_with(|slot| *slot.borrow_mut() = previous);
        ANYWHERE.fetch_sub(1, Ordering::Relaxed);
    }
}

pin_project_lite::pin_project! {
    /// A future with a kit installed during each of its polls ([`TestKit::scope`]).
    #[must_use = "futures do nothing unless polled"]
    #[derive(Debug)]
    pub struct Scoped<F> {
        kit: Arc<Shared>,
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        // Restored by the guard, also when the poll panics.
        let _installed = install(this.kit.clone());
        this.future.poll(cx)
    }
}
