//! The seam between a keyed group's keys and the level above them that judges
//! the group as one: a key's breaker reports through [`GroupLevel`], which the
//! keyed layer implements, so the breaker never names the keyed layer.

use std::fmt::Debug;

use crate::sync::{AtomicUsize, Ordering::Relaxed};

/// What a key of a keyed group that judges as one (`systemic_share`,
/// `max_open_keys`) tells the level above it. Called on the key's slow paths
/// only: its verdicts past the common success, its trips and its transitions.
pub(crate) trait GroupLevel: Debug + Send + Sync {
    /// A closed key's `outcome` (failed, how long its call lasted, when it
    /// ended), whether the key had failures before it (`was_failing`), and
    /// whether it runs a window (`windowed`: every outcome is the group's
    /// too).
    fn key_outcome(&self, outcome: KeyOutcome, was_failing: bool, windowed: bool);

    /// A closed key's failure that its classifier said is the whole group's.
    fn group_failure(&self, windowed: bool);

    /// Takes a place for one more key open on its own; `false` when
    /// `max_open_keys` leaves none, and the key's trip is then the group's
    /// ([`key_past_cap`](Self::key_past_cap)).
    fn reserve_open(&self) -> bool;

    /// Gives back a place [`reserve_open`](Self::reserve_open) took for a
    /// trip that another verdict made first.
    fn release_open(&self);

    /// A key would trip past `max_open_keys`: the fault is the group's.
    fn key_past_cap(&self);

    /// A key that admitted calls on its own stopped, other than by a trip
    /// that [`reserve_open`](Self::reserve_open) made room for (forced open,
    /// open by the fleet).
    fn key_stopped(&self);

    /// A key that admitted no calls on its own admits them again; `closed`:
    /// it closed (recovered), rather than being forced closed.
    fn key_resumed(&self, closed: bool);
}

/// A closed key's call as its group level is told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyOutcome {
    /// The call failed.
    pub(crate) failed: bool,
    /// Nanos from claim to verdict on the group's clock; 0 when the key does
    /// not time its calls.
    pub(crate) lasted: u64,
    /// The clock's reading at the verdict, when it was read to time the call.
    pub(crate) ended: Option<u64>,
}

/// The keys of a keyed group that judges as one, as its group level counts
/// them: those it holds, and those not admitting calls on their own (open,
/// half-open or forced open, with the places taken for trips under way).
/// Shared by the group level, its keys and the group's own breaker, whose
/// transitions tell both numbers.
#[derive(Debug, Default)]
pub(crate) struct KeyCounts {
    /// Keys the group holds now.
    pub(crate) held: AtomicUsize,
    /// Keys not admitting calls on their own now.
    pub(crate) open: AtomicUsize,
}

impl KeyCounts {
    /// Keys not admitting calls on their own, and keys held, now.
    pub(crate) fn read(&self) -> (usize, usize) {
        (self.open.load(Relaxed), self.held.load(Relaxed))
    }
}
