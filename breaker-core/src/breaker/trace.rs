//! Whose calls are recorded on spans (feature `trace`): the choice, the list
//! of live breakers it reaches, each breaker's trace bit set and cleared
//! live, and a traced word's claims and verdicts told to the span hook
//! ([`crate::trace`]).

use std::collections::HashSet;

use parking_lot::{const_mutex, Mutex};

use super::claim::{ClaimCode, Claimed};
use super::handle::Breaker;
use super::inner::Inner;
use super::transition::Verdict;
use crate::state::{State, Word};
use crate::trace::{tell, Ended, Noted};

impl Inner {
    /// Sets the word's trace bit to `on`, whatever the word does meanwhile.
    fn set_traced(&self, on: bool) {
        let mut word = self.word();
        while word.is_traced() != on {
            match self.cas(word, word.with_traced(on)) {
                Ok(()) => return,
                Err(seen) => word = seen,
            }
        }
    }
}

/// A breaker leaves the list as it drops, before its fields do.
impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(breakers) = RECORDED.lock().breakers.as_mut() {
            breakers.remove(&Listed::of(self));
        }
    }
}

/// A live breaker's address in the list.
#[derive(PartialEq, Eq, Hash)]
struct Listed(usize);

impl Listed {
    fn of(inner: &Inner) -> Listed {
        Listed(std::ptr::from_ref(inner) as usize)
    }

    /// The breaker at this address.
    ///
    /// # Safety
    ///
    /// Only under the list's lock: a breaker in the list is alive, or drops
    /// and waits in its `Drop` for the lock to leave the list, its fields
    /// still whole.
    unsafe fn get(&self) -> &Inner {
        // SAFETY: as the caller promises, the breaker is alive or waits for
        // the lock the caller holds, before anything of it is dropped.
        unsafe { &*(self.0 as *const Inner) }
    }
}

/// Whose calls are recorded, and every breaker alive (by address: each
/// leaves as it drops), so that a change reaches the breakers made before
/// it. One lock: a breaker made while the choice changes takes the choice
/// made before or after, and is listed.
struct Recorded {
    all: bool,
    groups: Vec<&'static str>,
    breakers: Option<HashSet<Listed>>,
}

static RECORDED: Mutex<Recorded> = const_mutex(Recorded {
    all: false,
    groups: Vec::new(),
    breakers: None,
});

impl Recorded {
    fn records(&self, group: &str) -> bool {
        self.all || self.groups.contains(&group)
    }

    /// Sets every live breaker's trace bit as the choice says.
    fn apply(&self) {
        for listed in self.breakers.iter().flatten() {
            // SAFETY: under the list's lock (`self` is behind it).
            let inner = unsafe { listed.get() };
            inner.set_traced(self.records(inner.name));
        }
    }
}

/// Records the calls of every group (`true`), or only of the groups named by
/// [`record_calls_of`] (`false`, the default).
pub fn record_calls(on: bool) {
    let mut recorded = RECORDED.lock();
    recorded.all = on;
    recorded.apply();
}

/// Records the calls of `group` (`true`), or stops (`false`).
pub fn record_calls_of(group: &'static str, on: bool) {
    let mut recorded = RECORDED.lock();
    recorded.groups.retain(|g| *g != group);
    if on {
        recorded.groups.push(group);
    }
    recorded.apply();
}

/// Whether the calls of `group` are recorded.
pub fn records(group: &str) -> bool {
    RECORDED.lock().records(group)
}

/// Whether the calls of `breaker` are recorded: one load of its word.
#[inline]
pub fn is_traced(breaker: &Breaker) -> bool {
    breaker.inner.word().is_traced()
}

/// Lists a new breaker, and sets its trace bit if its group is recorded.
pub(crate) fn enlist(breaker: &Breaker) {
    let inner = &*breaker.inner;
    let mut recorded = RECORDED.lock();
    recorded
        .breakers
        .get_or_insert_with(HashSet::default)
        .insert(Listed::of(inner));
    if recorded.records(inner.name) {
        inner.set_traced(true);
    }
}

impl Inner {
    /// A claim on a traced word, told to the hook once decided: admitted or
    /// refused as the word's other flags say.
    #[cold]
    #[inline(never)]
    pub(super) fn acquire_traced(&self, word: Word) -> ClaimCode {
        let code = if word.admits_outright() {
            let started = if word.is_timed() { self.clock.now() } else { 0 };
            ClaimCode::admitted(word.marked(), started)
        } else {
            self.acquire_flagged(word)
        };
        let noted = match code.get() {
            Claimed::Admitted { word, .. } => Noted::Admitted {
                probe: word.state() == State::HalfOpen,
                shadow: word.is_shadow_call(),
            },
            Claimed::Refused { reason, .. } => Noted::Refused(reason),
        };
        tell(self.name, noted);
        code
    }

    /// The verdict of a permit claimed on a traced word, told to the hook.
    #[cold]
    #[inline(never)]
    pub(super) fn settled_traced(&self, verdict: Verdict) {
        let ended = match verdict {
            Verdict::Success => Ended::Success,
            Verdict::Failure => Ended::Failure,
            Verdict::Ignored => Ended::Ignored,
            Verdict::Abandoned => Ended::Abandoned,
        };
        tell(self.name, Noted::Ended(ended));
    }
}
