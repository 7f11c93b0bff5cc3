//! The shared store's contract: what the agent asks of Redis (or of the
//! in-memory stand-in), and the records and notices it gets back.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc;

/// Where the fleet says a group stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FleetState {
    /// Some instance tripped: every instance refuses until `until_ms`, then the
    /// fleet probes.
    Open,
    /// Closed (or never tripped).
    Closed,
}

impl FleetState {
    /// `"open"` or `"closed"`, as stored.
    pub const fn as_str(self) -> &'static str {
        match self {
            FleetState::Open => "open",
            FleetState::Closed => "closed",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "open" => Some(FleetState::Open),
            "closed" => Some(FleetState::Closed),
            _ => None,
        }
    }
}

/// One group's fleet record, as the store returned it at one moment.
///
/// Times are the *store's* milliseconds (Redis `TIME`), so instance clocks never
/// have to agree: an instance only uses `until_ms - now_ms`, the time left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRecord {
    /// The store's incarnation. A store that lost its data (a Redis restart
    /// without persistence) starts a new run, and epochs start again at 0;
    /// epochs are compared within one run only.
    pub run: String,
    /// Bumped by every accepted trip and close. A notice with an epoch at or
    /// below the one an instance already holds is stale and ignored.
    pub epoch: u64,
    /// Open or closed.
    pub state: FleetState,
    /// Store time (ms) when the fleet open ends; 0 when closed.
    pub until_ms: u64,
    /// Store time (ms) when this record was read or written.
    pub now_ms: u64,
    /// The instance that wrote this epoch (empty for a group never written).
    pub origin: String,
    /// Store time (ms) when the group's hold ends (a server asked every
    /// caller to wait, and the wait is the whole group's: a provider's
    /// quota); 0 when never held. Kept apart from the epochs: a hold is no
    /// trip, and a later one replaces an earlier one.
    pub hold_until_ms: u64,
    /// The instance that took that hold (empty when never held).
    pub hold_origin: String,
}

impl GroupRecord {
    /// A group the store has never seen: closed at epoch 0.
    pub fn unknown(run: &str, now_ms: u64) -> Self {
        GroupRecord {
            run: run.to_owned(),
            epoch: 0,
            state: FleetState::Closed,
            until_ms: 0,
            now_ms,
            origin: String::new(),
            hold_until_ms: 0,
            hold_origin: String::new(),
        }
    }

    /// Time left of the group's hold, as of `now_ms` (zero when none).
    pub fn hold_remaining(&self) -> Duration {
        Duration::from_millis(self.hold_until_ms.saturating_sub(self.now_ms))
    }

    /// Time left of the fleet open, as of `now_ms` (zero when closed or over).
    pub fn remaining(&self) -> Duration {
        match self.state {
            FleetState::Open => Duration::from_millis(self.until_ms.saturating_sub(self.now_ms)),
            FleetState::Closed => Duration::ZERO,
        }
    }
}

/// A change of one group, pushed by the store to every subscribed instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// The group.
    pub group: String,
    /// Its new record.
    pub record: GroupRecord,
}

/// What a compare-and-set on a group's epoch did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cas {
    /// The expected epoch matched: the record is the new one (already published).
    Applied(GroupRecord),
    /// Another instance moved first: nothing was written; this is the current record.
    Lost(GroupRecord),
    /// A quorum is configured and this trip was a vote: `votes` of `quorum`
    /// instances have tripped in this episode; the fleet stays as it is.
    Voted {
        /// Distinct instances that voted for this episode so far.
        votes: u32,
        /// Votes needed.
        quorum: u32,
        /// The current (unchanged) record.
        record: GroupRecord,
    },
}

/// A trip to propose: a compare-and-set on `expected_epoch`.
#[derive(Clone, Debug)]
pub struct Trip<'a> {
    /// The group.
    pub group: &'a str,
    /// The epoch the proposer last saw; the trip is refused if the store moved on.
    pub expected: u64,
    /// The run that epoch belongs to.
    pub run: &'a str,
    /// How long the fleet should stay open from the store's now.
    pub open_for: Duration,
    /// The proposing instance.
    pub origin: &'a str,
    /// Instances that must vote before the fleet opens (1: no quorum).
    pub quorum: u32,
}

/// Why the store did not answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// No answer within the call's timeout.
    Timeout,
    /// The store refused or the connection failed.
    Unavailable(String),
    /// An answer the agent could not read.
    Protocol(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Timeout => f.write_str("fleet store timed out"),
            StoreError::Unavailable(e) => write!(f, "fleet store unavailable: {e}"),
            StoreError::Protocol(e) => write!(f, "fleet store answered nonsense: {e}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// The shared store of fleet state. Every method is one short round trip that
/// must return (or fail) within a bounded time; the agent never retries inside
/// a call, it retries on its next tick.
///
/// Implementations: [`MemoryStore`](crate::MemoryStore) (tests, one process) and
/// [`RedisStore`](crate::RedisStore).
pub trait FleetStore: Send + Sync + 'static {
    /// Proposes a trip: if the group's epoch in the run is still
    /// `trip.expected` (or the store's run is not `trip.run`, and the group is
    /// closed), writes `Open` at `expected + 1` until `now + open_for` and
    /// notifies subscribers. With `quorum > 1`, records a vote instead until
    /// `quorum` distinct instances voted for this episode.
    fn trip(&self, trip: Trip<'_>) -> impl Future<Output = Result<Cas, StoreError>> + Send;

    /// Proposes a close of the open episode at `expected` (a probe succeeded):
    /// writes `Closed` at `expected + 1` if the epoch still matches, and notifies.
    fn close(
        &self,
        group: &str,
        run: &str,
        expected: u64,
        origin: &str,
    ) -> impl Future<Output = Result<Cas, StoreError>> + Send;

    /// The current records of `groups` (the polling fallback, and rejoining).
    fn read(
        &self,
        groups: &[String],
    ) -> impl Future<Output = Result<Vec<GroupRecord>, StoreError>> + Send;

    /// Tries to take one of `slots` fleet probe leases of the open episode
    /// `epoch`, for `lease`. `Ok(true)`: this instance may probe.
    fn acquire_probe(
        &self,
        group: &str,
        epoch: u64,
        slots: u32,
        lease: Duration,
        origin: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Adds outcome counts to the group's current window bucket (buckets
    /// expire) and returns the totals of the current and the previous bucket:
    /// `(calls, failures)` across the fleet.
    fn add_counts(
        &self,
        group: &str,
        window: Duration,
        calls: u64,
        failures: u64,
    ) -> impl Future<Output = Result<(u64, u64), StoreError>> + Send;

    /// Shares a group-scope hold: the group's hold ends `hold_for` from the
    /// store's now unless it ends later already; a new end is written with
    /// `origin` and notified (as a record whose epoch is unchanged). Returns
    /// the group's record after it.
    fn hold(
        &self,
        group: &str,
        hold_for: Duration,
        origin: &str,
    ) -> impl Future<Output = Result<GroupRecord, StoreError>> + Send;

    /// Subscribes to notices. The receiver ends when the subscription is lost;
    /// the agent then relies on polling and subscribes again later.
    fn subscribe(
        &self,
    ) -> impl Future<Output = Result<mpsc::UnboundedReceiver<Notice>, StoreError>> + Send;
}
