//! Holds: the server asked every caller to wait (a `429` or `503` with
//! `Retry-After`, a gRPC `RESOURCE_EXHAUSTED` with `grpc-retry-pushback-ms`, an
//! error of the app's own). The public [`HoldScope`], [`Held`] and
//! [`HoldCounts`], and the cell a held breaker keeps its deadline in.
//!
//! A hold is not a failure and not an open circuit: it records no outcome,
//! grows no backoff and starts no generation. While it lasts every claim is
//! refused at once with [`OpenReason::Held`](crate::OpenReason::Held) and the
//! time the hold has left; the first claim after its deadline releases it. A
//! hold and an open circuit compose: the later of the two ends governs, and
//! an open circuit still needs its probe once the hold is over.
//!
//! # The release window
//!
//! A hold of `d` (capped at `max_hold_ms`) ends at `d` plus a uniformly random
//! share of at most a tenth of `d` ([`RELEASE_SPREAD`]), never past
//! `max_hold_ms`: breakers held by one answer (the keys of a group, the
//! instances of a fleet) come back spread over that window instead of in
//! lockstep. The draw comes from the breaker's generator, keyed by
//! [`Clock::jitter_seed`](crate::Clock::jitter_seed), its name and its key,
//! so a test's holds end at the same instants on every run.
//!
//! At the end of a closed breaker's hold, one call goes first: the first
//! claim after the deadline is admitted and the others are still refused as
//! held until its answer, for at most the shorter of the hold's own length
//! and `probe_timeout_ms` (the lease, after which another claim goes; a
//! refusal's `retry_after` is the lease left). Any answer but another wait ends the hold; a
//! wait holds again. So a server that asked every caller to wait receives
//! one call per breaker per hold, not one per waiting caller. An open or
//! half-open breaker's own probes play that part: its hold just ends.

use std::fmt;
use std::time::Duration;

use crate::sync::{AtomicU64, Ordering::*};

/// `nanos` rounded up to a multiple of four, saturating at the largest one:
/// the deadlines a [`HoldCell`] keeps.
pub(crate) const fn round(nanos: u64) -> u64 {
    nanos.saturating_add(3) & !3
}

/// What an answer says about waiting, read without loss by an integration
/// (`Retry-After`, `grpc-retry-pushback-ms`, an error's
/// [`RetryAfterHint`](crate::RetryAfterHint)): the integration holds its
/// breaker for [`For`](Self::For), counts [`Bad`](Self::Bad)
/// ([`Breaker::count_bad_hold`](crate::Breaker::count_bad_hold)) and judges
/// the answer as it would without it, and does nothing for
/// [`None`](Self::None).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wait {
    /// The answer asks for no wait.
    #[default]
    None,
    /// Every caller should wait this long (a wait longer than `max_hold_ms`
    /// is capped by the hold, never refused).
    For(Duration),
    /// The answer asks for a wait it does not state usably: unreadable,
    /// negative, or a date already past.
    Bad,
}

impl Wait {
    /// [`For`](Self::For) a wait above zero, [`None`](Self::None) for zero.
    pub fn of(wait: Duration) -> Wait {
        if wait.is_zero() {
            Wait::None
        } else {
            Wait::For(wait)
        }
    }
}

/// The share of a hold by which its end is spread at random: the hold of `d`
/// ends uniformly within `[d, d + d / RELEASE_SPREAD]`, never past `max_hold_ms`.
pub const RELEASE_SPREAD: u32 = 10;

/// What a hold holds back, and what a refusal by it says
/// ([`OpenReason::Held`](crate::OpenReason::Held)).
///
/// In a keyed group, a hold of one key's breaker is [`Key`](Self::Key) (one
/// tenant's quota), and [`KeyedGroup::hold`](crate::keyed::KeyedGroup::hold)
/// holds every key, those made while it lasts included, as
/// [`Group`](Self::Group) (a provider-wide quota). A breaker of its own is its
/// whole group: the scope is the label its refusals and metrics carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HoldScope {
    /// The key the answer came from.
    Key,
    /// The whole group.
    Group,
}

impl HoldScope {
    /// `"key"` or `"group"`: the label of metrics and admin JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            HoldScope::Key => "key",
            HoldScope::Group => "group",
        }
    }

    const fn bit(self) -> u64 {
        match self {
            HoldScope::Key => 0,
            HoldScope::Group => 1,
        }
    }

    const fn from_bit(bit: u64) -> HoldScope {
        if bit & 1 == 0 {
            HoldScope::Key
        } else {
            HoldScope::Group
        }
    }
}

impl fmt::Display for HoldScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A hold in force ([`Breaker::held`](crate::Breaker::held),
/// [`Metrics::held`](crate::Metrics::held)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Held {
    /// The time left until the first claim is admitted again (the release
    /// spread included).
    pub remaining: Duration,
    /// What the hold holds back.
    pub scope: HoldScope,
}

/// How many holds a breaker took, and what became of the waits it was asked
/// for ([`Metrics::holds`](crate::Metrics::holds)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HoldCounts {
    /// Holds of scope [`HoldScope::Key`] asked for (one that an earlier,
    /// later-ending hold covered included).
    pub key: u64,
    /// Holds of scope [`HoldScope::Group`] asked for.
    pub group: u64,
    /// Holds asked for longer than `max_hold_ms`, held for `max_hold_ms`.
    pub capped: u64,
    /// Holds released by hand before their deadline
    /// ([`Breaker::release_hold`](crate::Breaker::release_hold)).
    pub released: u64,
    /// Waits a server asked for that were not taken as a hold: unreadable,
    /// negative, or past ([`Breaker::count_bad_hold`](crate::Breaker::count_bad_hold)).
    pub bad: u64,
}

/// The hold's deadline and scope, read together: what a claim on a held word
/// compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HoldUntil {
    /// Clock nanos at which the hold ends (0: none was ever set), or, while
    /// `probing`, at which the lease of the call that ends it runs out.
    pub(crate) until: u64,
    pub(crate) scope: HoldScope,
    /// The hold's deadline passed and one call was let through to end it:
    /// the others wait for its answer (see [the release window](self#the-release-window)).
    pub(crate) probing: bool,
}

/// Where a breaker that was ever held keeps its hold: one word for the
/// deadline, whether one call is ending it, and the scope (the deadline's
/// nanos rounded up to a multiple of four, bit 1 the probe, bit 0 the
/// scope), so a claim reads them at once, and the counts. Written under the
/// breaker's transition lock, before the word's hold bit that publishes it.
#[derive(Debug, Default)]
pub(crate) struct HoldCell {
    packed: AtomicU64,
    /// How long the hold in force was taken for (nanos): the longest lease
    /// of the call let through at its end.
    length: AtomicU64,
    /// Indexed by `Count`.
    counts: [AtomicU64; 5],
}

/// The counts a [`HoldCell`] keeps.
#[derive(Clone, Copy)]
pub(crate) enum Count {
    Key = 0,
    Group = 1,
    Capped = 2,
    Released = 3,
    Bad = 4,
}

impl HoldCell {
    pub(crate) fn get(&self) -> HoldUntil {
        let packed = self.packed.load(Acquire);
        HoldUntil {
            until: packed & !3,
            scope: HoldScope::from_bit(packed),
            probing: packed & 2 != 0,
        }
    }

    /// Stores a hold ending at `until` (rounded up to a multiple of four
    /// nanos, saturating); `probing`: the lease of the call that ends it.
    pub(crate) fn set(&self, until: u64, scope: HoldScope, probing: bool) {
        let packed = round(until) | (u64::from(probing) << 1) | scope.bit();
        self.packed.store(packed, Release);
    }

    /// Records that the hold in force was taken for `nanos`.
    pub(crate) fn set_length(&self, nanos: u64) {
        self.length.store(nanos, Relaxed);
    }

    /// How long the hold in force was taken for (nanos).
    pub(crate) fn length(&self) -> u64 {
        self.length.load(Relaxed)
    }

    pub(crate) fn count(&self, count: Count) {
        self.counts[count as usize].fetch_add(1, Relaxed);
    }

    pub(crate) fn counts(&self) -> HoldCounts {
        let get = |count: Count| self.counts[count as usize].load(Relaxed);
        HoldCounts {
            key: get(Count::Key),
            group: get(Count::Group),
            capped: get(Count::Capped),
            released: get(Count::Released),
            bad: get(Count::Bad),
        }
    }
}

impl HoldCounts {
    /// Adds every count of `other`, saturating: a keyed group's sum.
    pub(crate) fn add(&mut self, other: &HoldCounts) {
        for (sum, n) in [
            (&mut self.key, other.key),
            (&mut self.group, other.group),
            (&mut self.capped, other.capped),
            (&mut self.released, other.released),
            (&mut self.bad, other.bad),
        ] {
            *sum = sum.saturating_add(n);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_and_its_scope_come_back_together() {
        let cell = HoldCell::default();
        for (until, scope) in [
            (7, HoldScope::Group),
            (8, HoldScope::Key),
            (u64::MAX, HoldScope::Group),
        ] {
            for probing in [false, true] {
                cell.set(until, scope, probing);
                let back = cell.get();
                assert_eq!((back.scope, back.probing), (scope, probing));
                assert!(back.until >= until.min(u64::MAX - 3));
                assert!(back.until <= until.saturating_add(3));
            }
        }
    }
}
