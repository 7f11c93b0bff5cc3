//! One breaker's side of events: the queue that delivers its transitions in
//! generation order, its own subscribers and its transition counts; and, in
//! the same box that only a breaker that has moved allocates, its hold.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use super::{
    index, Callback, Event, KeyedTransition, Subscribers, Subscription, Transition,
    TransitionCounts, STATES,
};
use crate::hold::HoldCell;
use crate::state::GEN_MASK;
use crate::sync::{AtomicPtr, AtomicU64, Mutex, OnceLock, Ordering::*};

/// Transitions whose turn has not come yet. Past this many, the earliest
/// missing one is taken for lost (a generation changed without being announced
/// would otherwise stall delivery for good), delivery moves past it, and it is
/// delivered, late, if it comes. Threads are held between a swap and its
/// announcement for microseconds; this is tens of milliseconds of transitions
/// of one breaker at full speed.
const MAX_WAITING: usize = 1 << 16;

/// One breaker's side of events: its own subscribers, the registry's it
/// inherits, the transition counts, and the queue that keeps delivery in
/// generation order. All but the inherited list is allocated by the breaker's
/// first transition or subscription, or for a keyed breaker when its registry
/// is first subscribed to: an idle breaker carries pointers here.
pub(crate) struct Hub {
    inherited: Option<Arc<Subscribers>>,
    /// The generation whose transition is delivered first.
    first: u64,
    cold: OnceLock<Box<Cold>>,
    /// A keyed breaker's key and its registry's subscribers, once they have
    /// been subscribed to (null before, and for every other breaker). Set once,
    /// from `Box::into_raw`; freed on drop.
    keyed: AtomicPtr<Keyed>,
}

/// Who a keyed breaker's transitions go to, as [`Event::KeyedTransition`]s.
struct Keyed {
    key: Arc<str>,
    subscribers: Arc<Subscribers>,
}

/// What a breaker that has moved or been subscribed to keeps for its events,
/// and its hold (a hold is a move: an idle breaker carries none of it).
struct Cold {
    own: Arc<Subscribers>,
    hold: HoldCell,
    counts: [[AtomicU64; STATES.len()]; STATES.len()],
    /// Retries made, and retries a retry budget refused: counted here, on
    /// the retry path, not in the per-thread cells every call writes.
    retries: [AtomicU64; 2],
    order: Mutex<Order>,
}

struct Order {
    /// The generation whose transition is delivered next.
    next: u64,
    /// Transitions announced before their turn.
    waiting: Vec<Transition>,
    /// Whether a thread is draining the queue (it delivers what others add).
    draining: bool,
}

impl Hub {
    /// A hub for a breaker in `generation`, told also to `inherited` (its
    /// registry's subscribers).
    pub(crate) fn new(generation: u64, inherited: Option<Arc<Subscribers>>) -> Self {
        Hub {
            inherited,
            first: generation.wrapping_add(1) & GEN_MASK,
            cold: OnceLock::new(),
            keyed: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Whether [`name_key`](Self::name_key) has named this breaker.
    pub(crate) fn is_named(&self) -> bool {
        !self.keyed.load(Acquire).is_null()
    }

    /// Tells this keyed breaker's transitions to `subscribers` (its registry's)
    /// from now on, as `key`'s. Once: a breaker already named keeps its name.
    pub(crate) fn name_key(&self, key: impl FnOnce() -> Arc<str>, subscribers: &Arc<Subscribers>) {
        if self.is_named() {
            return;
        }
        let keyed = Box::into_raw(Box::new(Keyed {
            key: key(),
            subscribers: Arc::clone(subscribers),
        }));
        let swapped = self
            .keyed
            .compare_exchange(std::ptr::null_mut(), keyed, AcqRel, Acquire);
        if swapped.is_err() {
            // SAFETY: `keyed` is from `Box::into_raw` above and was not published.
            drop(unsafe { Box::from_raw(keyed) });
        }
    }

    fn cold(&self) -> &Cold {
        self.cold.get_or_init(|| {
            Box::new(Cold {
                own: Arc::default(),
                hold: HoldCell::default(),
                counts: Default::default(),
                retries: Default::default(),
                order: Mutex::new(Order {
                    next: self.first,
                    waiting: Vec::new(),
                    draining: false,
                }),
            })
        })
    }

    /// The breaker's hold cell, allocated with the rest on first use: what a
    /// hold writes before it publishes the held word.
    pub(crate) fn hold(&self) -> &HoldCell {
        &self.cold().hold
    }

    /// The breaker's hold cell, if it was ever held (or allocated otherwise):
    /// what the claims of a held word read (the hold that published the word
    /// allocated it).
    pub(crate) fn started_hold(&self) -> Option<&HoldCell> {
        self.cold.get().map(|cold| &cold.hold)
    }

    pub(crate) fn subscribe(&self, callback: Callback) -> Subscription {
        self.cold().own.add(callback, false)
    }

    pub(crate) fn counts(&self) -> TransitionCounts {
        let mut counts = TransitionCounts::default();
        if let Some(cold) = self.cold.get() {
            for (row, atomics) in counts.0.iter_mut().zip(&cold.counts) {
                for (count, atomic) in row.iter_mut().zip(atomics) {
                    *count = atomic.load(Relaxed);
                }
            }
        }
        counts
    }

    /// Counts `t` and delivers it in its generation's turn. The caller holds no
    /// lock of the breaker or the registry.
    #[cold]
    pub(crate) fn tell(&self, t: Transition) {
        let cold = self.cold();
        cold.counts[index(t.from)][index(t.to)].fetch_add(1, Relaxed);
        let mut order = cold.order.lock();
        order.waiting.push(t);
        if order.draining {
            return;
        }
        order.draining = true;
        loop {
            let turn = order.next;
            // How far ahead of the turn each waiting transition is; "behind"
            // (more than half the range ahead) only after a skip.
            let ahead = |t: &Transition| t.generation.wrapping_sub(turn) & GEN_MASK;
            let at = match order.waiting.iter().position(|w| ahead(w) == 0) {
                Some(at) => Some(at),
                None => match order.waiting.iter().position(|w| ahead(w) > GEN_MASK / 2) {
                    Some(late) => Some(late),
                    None if order.waiting.len() > MAX_WAITING => {
                        (0..order.waiting.len()).min_by_key(|&i| ahead(&order.waiting[i]))
                    }
                    None => None,
                },
            };
            let Some(at) = at else {
                order.draining = false;
                return;
            };
            let t = order.waiting.swap_remove(at);
            if ahead(&t) <= GEN_MASK / 2 {
                order.next = t.generation.wrapping_add(1) & GEN_MASK;
            }
            drop(order);
            // Each subscriber's panic is caught inside; this catches a panicking
            // log backend, so the queue is never left marked as draining.
            let _ = catch_unwind(AssertUnwindSafe(|| self.deliver(t)));
            order = cold.order.lock();
        }
    }

    /// Counts a retry made (`true`) or one a retry budget refused (`false`).
    /// The first allocates the breaker's cold part, once in its life, if no
    /// subscriber, hold or transition did.
    pub(crate) fn count_retry(&self, made: bool) {
        self.cold().retries[usize::from(!made)].fetch_add(1, Relaxed);
    }

    /// Retries made through a `Retry` on this breaker.
    pub(crate) fn retries(&self) -> u64 {
        self.cold
            .get()
            .map_or(0, |cold| cold.retries[0].load(Relaxed))
    }

    /// Retries a retry budget refused on this breaker.
    pub(crate) fn retries_budget_exhausted(&self) -> u64 {
        self.cold
            .get()
            .map_or(0, |cold| cold.retries[1].load(Relaxed))
    }

    /// Delivers `event`, no transition, to this breaker's subscribers and its
    /// registry's (a keyed breaker's: to those told keys, once it is named
    /// for them), at once. The caller holds no lock.
    #[cold]
    pub(crate) fn tell_other(&self, event: &Event) {
        if let Some(cold) = self.cold.get() {
            cold.own.deliver(event);
        }
        if let Some(inherited) = &self.inherited {
            inherited.deliver(event);
        }
        if let Some(keyed) = self.keyed() {
            keyed.subscribers.deliver_keyed(event);
        }
    }

    /// A keyed breaker's key and registry subscribers, once it is named.
    fn keyed(&self) -> Option<&Keyed> {
        let keyed = self.keyed.load(Acquire);
        // SAFETY: published once from `Box::into_raw` (`name_key`), freed
        // only by `drop`, which `&self` outlives.
        (!keyed.is_null()).then(|| unsafe { &*keyed })
    }

    fn deliver(&self, t: Transition) {
        let event = Event::Transition(t);
        if let Some(cold) = self.cold.get() {
            cold.own.deliver(&event);
        }
        if let Some(inherited) = &self.inherited {
            inherited.deliver(&event);
        }
        if let Some(keyed) = self.keyed() {
            if keyed.subscribers.wants_keys() {
                keyed
                    .subscribers
                    .deliver(&Event::KeyedTransition(KeyedTransition {
                        key: Arc::clone(&keyed.key),
                        transition: t,
                    }));
            }
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        // Exclusive here (`&mut self`): no other access to order against.
        let keyed = self.keyed.load(Relaxed);
        if !keyed.is_null() {
            // SAFETY: from `Box::into_raw` in `name_key`, published once, and
            // no `&self` outlives this `&mut self`.
            drop(unsafe { Box::from_raw(keyed) });
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::events::TransitionReason;
    use crate::state::State;

    fn transition(generation: u64, from: State, to: State) -> Transition {
        Transition {
            group: "loom",
            from,
            to,
            reason: TransitionReason::Reset,
            generation,
            open_for: None,
            retry_after: None,
            ramp: None,
            keys_open: None,
        }
    }

    /// A fresh hub's first two transitions, made at once: both threads meet
    /// the one `Cold` the first initialisation publishes, so each is counted
    /// once.
    #[test]
    fn loom_two_first_transitions_share_the_hub_they_initialise() {
        loom::model(|| {
            let hub = Arc::new(Hub::new(0, None));
            let first = {
                let hub = hub.clone();
                loom::thread::spawn(move || hub.tell(transition(1, State::Closed, State::Open)))
            };
            let second = {
                let hub = hub.clone();
                loom::thread::spawn(move || hub.tell(transition(2, State::Open, State::HalfOpen)))
            };
            first.join().unwrap();
            second.join().unwrap();
            let counts = hub.counts();
            assert_eq!(counts.get(State::Closed, State::Open), 1);
            assert_eq!(counts.get(State::Open, State::HalfOpen), 1);
            assert_eq!(counts.total(), 2);
        });
    }

    /// A subscription and the first transition initialise the hub at once:
    /// the transition is counted once, and told to the subscriber at most
    /// once (not at all if it subscribed after the delivery).
    #[test]
    fn loom_a_subscription_racing_the_first_transition_shares_its_hub() {
        loom::model(|| {
            let hub = Arc::new(Hub::new(0, None));
            let seen = Arc::new(AtomicUsize::new(0));
            let subscriber = {
                let (hub, seen) = (hub.clone(), seen.clone());
                loom::thread::spawn(move || {
                    let sink = seen.clone();
                    hub.subscribe(Box::new(move |_| {
                        sink.fetch_add(1, Relaxed);
                    }))
                    .detach();
                })
            };
            let teller = {
                let hub = hub.clone();
                loom::thread::spawn(move || hub.tell(transition(1, State::Closed, State::Open)))
            };
            subscriber.join().unwrap();
            teller.join().unwrap();
            assert_eq!(hub.counts().total(), 1);
            assert!(seen.load(Relaxed) <= 1);
        });
    }
}
