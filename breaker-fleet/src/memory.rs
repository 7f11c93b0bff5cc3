//! [`MemoryStore`]: the fleet store in one process's memory, on a clock the test
//! controls. It keeps the same protocol as Redis, so the agent's logic is tested
//! without a server, without sleeps, and with failures injected at will.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use breakerbox::clock::Clock;
use tokio::sync::mpsc;

use crate::store::{Cas, FleetState, FleetStore, GroupRecord, Notice, StoreError, Trip};

/// An in-memory [`FleetStore`] whose time is a [`Clock`] (a
/// [`ManualClock`](breakerbox::ManualClock) in tests). Clones share one store.
///
/// Faults to inject: [`set_down`](Self::set_down) (every call fails, like Redis
/// gone), [`set_delivering`](Self::set_delivering) (notices are lost, like a
/// dropped subscription), [`restart`](Self::restart) (all data lost, a new run).
///
/// ```
/// use breakerbox::ManualClock;
/// use breaker_fleet::{Cas, FleetStore, MemoryStore, Trip};
/// use std::time::Duration;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = MemoryStore::new(ManualClock::new());
/// let trip = Trip { group: "db", expected: 0, run: "", open_for: Duration::from_secs(5),
///                   origin: "a", quorum: 1 };
/// assert!(matches!(store.trip(trip.clone()).await, Ok(Cas::Applied(_))));
/// // A second trip from the same stale view loses the compare-and-set.
/// assert!(matches!(store.trip(trip).await, Ok(Cas::Lost(r)) if r.epoch == 1));
/// # });
/// ```
#[derive(Clone)]
pub struct MemoryStore {
    inner: Arc<Mutex<State>>,
    clock: Arc<dyn Clock>,
}

#[derive(Default)]
struct State {
    run: u64,
    groups: HashMap<String, GroupRecord>,
    votes: HashMap<(String, u64), (HashSet<String>, u64)>,
    leases: HashMap<(String, u64, u32), (String, u64)>,
    buckets: HashMap<(String, u64), (u64, u64)>,
    subscribers: Vec<mpsc::UnboundedSender<Notice>>,
    down: bool,
    deaf: bool,
}

impl MemoryStore {
    /// An empty store reading time from `clock`.
    pub fn new(clock: impl Clock) -> Self {
        MemoryStore {
            inner: Arc::new(Mutex::new(State {
                run: 1,
                ..State::default()
            })),
            clock: Arc::new(clock),
        }
    }

    /// Makes every call fail with [`StoreError::Unavailable`] (`true`) or work
    /// again (`false`). Subscriptions end when the store goes down.
    pub fn set_down(&self, down: bool) {
        let mut s = self.lock();
        s.down = down;
        if down {
            s.subscribers.clear();
        }
    }

    /// Whether notices reach subscribers (`false`: they are lost, polling must
    /// find the change).
    pub fn set_delivering(&self, delivering: bool) {
        self.lock().deaf = !delivering;
    }

    /// Loses every record, like a Redis restarted without persistence: a new
    /// run begins and epochs start again.
    pub fn restart(&self) {
        let mut s = self.lock();
        let run = s.run + 1;
        *s = State {
            run,
            down: s.down,
            deaf: s.deaf,
            ..State::default()
        };
    }

    /// The record of `group` now, for assertions.
    pub fn record(&self, group: &str) -> GroupRecord {
        let now = self.now_ms();
        let s = self.lock();
        current(&s, group, now)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        self.clock.now_nanos() / 1_000_000
    }

    fn up(&self) -> Result<MutexGuard<'_, State>, StoreError> {
        let s = self.lock();
        if s.down {
            return Err(StoreError::Unavailable("memory store is down".into()));
        }
        Ok(s)
    }
}

fn current(s: &State, group: &str, now: u64) -> GroupRecord {
    let run = s.run.to_string();
    let mut rec = s
        .groups
        .get(group)
        .cloned()
        .unwrap_or_else(|| GroupRecord::unknown(&run, now));
    rec.now_ms = now;
    rec
}

fn write(s: &mut State, group: &str, rec: GroupRecord) {
    s.groups.insert(group.to_owned(), rec.clone());
    if s.deaf {
        return;
    }
    let notice = Notice {
        group: group.to_owned(),
        record: rec,
    };
    s.subscribers.retain(|tx| tx.send(notice.clone()).is_ok());
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl FleetStore for MemoryStore {
    async fn trip(&self, trip: Trip<'_>) -> Result<Cas, StoreError> {
        let now = self.now_ms();
        let mut s = self.up()?;
        let rec = current(&s, trip.group, now);
        // Epochs compare within a run; a proposer from an older run may only
        // open a group the new run holds closed.
        let fresh = if trip.run == rec.run {
            rec.epoch == trip.expected
        } else {
            rec.state == FleetState::Closed
        };
        if !fresh {
            return Ok(Cas::Lost(rec));
        }
        if trip.quorum > 1 {
            let key = (trip.group.to_owned(), rec.epoch);
            let entry = s.votes.entry(key.clone()).or_default();
            if entry.1 <= now {
                entry.0.clear();
            }
            entry.0.insert(trip.origin.to_owned());
            entry.1 = now.saturating_add(ms(trip.open_for).max(1));
            let votes = u32::try_from(entry.0.len()).unwrap_or(u32::MAX);
            if votes < trip.quorum {
                return Ok(Cas::Voted {
                    votes,
                    quorum: trip.quorum,
                    record: rec,
                });
            }
            s.votes.remove(&key);
        }
        let new = GroupRecord {
            run: rec.run,
            epoch: rec.epoch + 1,
            state: FleetState::Open,
            until_ms: now.saturating_add(ms(trip.open_for)),
            now_ms: now,
            origin: trip.origin.to_owned(),
            ..rec
        };
        write(&mut s, trip.group, new.clone());
        Ok(Cas::Applied(new))
    }

    async fn close(
        &self,
        group: &str,
        run: &str,
        expected: u64,
        origin: &str,
    ) -> Result<Cas, StoreError> {
        let now = self.now_ms();
        let mut s = self.up()?;
        let rec = current(&s, group, now);
        if rec.run != run || rec.epoch != expected || rec.state != FleetState::Open {
            return Ok(Cas::Lost(rec));
        }
        let new = GroupRecord {
            run: rec.run,
            epoch: rec.epoch + 1,
            state: FleetState::Closed,
            until_ms: 0,
            now_ms: now,
            origin: origin.to_owned(),
            ..rec
        };
        write(&mut s, group, new.clone());
        Ok(Cas::Applied(new))
    }

    async fn hold(
        &self,
        group: &str,
        hold_for: Duration,
        origin: &str,
    ) -> Result<GroupRecord, StoreError> {
        let now = self.now_ms();
        let mut s = self.up()?;
        let mut rec = current(&s, group, now);
        let until = now.saturating_add(ms(hold_for));
        if until > rec.hold_until_ms {
            rec.hold_until_ms = until;
            rec.hold_origin = origin.to_owned();
            write(&mut s, group, rec.clone());
        }
        Ok(rec)
    }

    async fn read(&self, groups: &[String]) -> Result<Vec<GroupRecord>, StoreError> {
        let now = self.now_ms();
        let s = self.up()?;
        Ok(groups.iter().map(|g| current(&s, g, now)).collect())
    }

    async fn acquire_probe(
        &self,
        group: &str,
        epoch: u64,
        slots: u32,
        lease: Duration,
        origin: &str,
    ) -> Result<bool, StoreError> {
        let now = self.now_ms();
        let mut s = self.up()?;
        for slot in 0..slots.max(1) {
            let key = (group.to_owned(), epoch, slot);
            match s.leases.get(&key) {
                Some((holder, until)) if *until > now => {
                    if holder == origin {
                        return Ok(true);
                    }
                }
                _ => {
                    let until = now.saturating_add(ms(lease).max(1));
                    s.leases.insert(key, (origin.to_owned(), until));
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    async fn add_counts(
        &self,
        group: &str,
        window: Duration,
        calls: u64,
        failures: u64,
    ) -> Result<(u64, u64), StoreError> {
        let now = self.now_ms();
        let width = ms(window).max(1);
        let bucket = now / width;
        let mut s = self.up()?;
        // Buckets older than the previous one have expired.
        s.buckets.retain(|(_, b), _| b.saturating_add(1) >= bucket);
        let cur = s.buckets.entry((group.to_owned(), bucket)).or_default();
        cur.0 = cur.0.saturating_add(calls);
        cur.1 = cur.1.saturating_add(failures);
        let (c, f) = *cur;
        let (pc, pf) = bucket
            .checked_sub(1)
            .and_then(|p| s.buckets.get(&(group.to_owned(), p)).copied())
            .unwrap_or_default();
        Ok((c.saturating_add(pc), f.saturating_add(pf)))
    }

    async fn subscribe(&self) -> Result<mpsc::UnboundedReceiver<Notice>, StoreError> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.up()?.subscribers.push(tx);
        Ok(rx)
    }
}
