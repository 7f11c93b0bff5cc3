//! `breaker-fleet`: fleet-wide breaker state on Redis. One instance's trip
//! opens the circuit of every instance; a probe that closes it closes all; when
//! Redis is slow or gone, every instance keeps its local breakers and rejoins
//! when it returns.
//!
//! ```no_run
//! use breaker_fleet::{AgentConfig, FleetAgent, RedisStore};
//!
//! let store = RedisStore::new("redis://127.0.0.1:6379/")?;
//! let _agent = FleetAgent::spawn(store, breakerbox::registry(), AgentConfig::new("web-1"));
//! // #[circuit_breaker] fns run exactly as before: the agent adds nothing to a call.
//! # Ok::<(), breaker_fleet::StoreError>(())
//! ```
//!
//! # How it works
//!
//! The local breaker stays authoritative for the call path: no network I/O and
//! not one instruction added to a call (which takes the locks it takes without
//! a fleet: none, unless it changes the breaker's state). A background [`Agent`] per
//! registry, on its own thread ([`FleetAgent::spawn`]) or task ([`Agent::run`]):
//!
//! - learns of local trips and closes as [`LocalEvent`]s the moment they
//!   happen, from the registry's transition events ([`RegistrySide::subscribe`]),
//!   and tells its own transitions apart by their reason (no echo);
//! - proposes each to the [`FleetStore`] as a compare-and-set on the group's
//!   *epoch* (one Lua script on Redis, timed by Redis `TIME`, so instance clocks
//!   do not matter); a proposal from a stale view loses and adopts the newer record;
//! - hears of every change by pub/sub, and reads every group each `poll_every`
//!   as the fallback for lost messages; a record whose epoch is not newer than
//!   the one held is ignored;
//! - applies a fleet open for the time remaining ([`Breaker::fleet_open`](breakerbox::fleet::FleetControl::fleet_open):
//!   refusals say [`OpenReason::Fleet`](breakerbox::OpenReason::Fleet) with a real
//!   `retry_after`), and a fleet close ([`Breaker::fleet_close`](breakerbox::fleet::FleetControl::fleet_close));
//!   a fleet open heard of before this process made the group's breaker (a
//!   `#[circuit_breaker]` fn not called yet) is held and applied, for the time
//!   it has left, at the agent's first look after the breaker is made (within
//!   `poll_every`: the calls in between are admitted);
//! - when the fleet open time is over, races for the group's probe lease (a
//!   key with an expiry): the winner's breaker goes half-open and admits its
//!   `half_open_probes` probes, so no more than that run across the fleet; the
//!   others keep refusing until the probe's close or reopen arrives, or the
//!   lease expires and passes on.
//! - shares a group-scope hold (a server asked every caller of the group to
//!   wait: a provider's quota is every instance's, not one instance's): the
//!   store keeps the group's latest hold end beside its record (no epoch: a
//!   hold is no trip), and every other instance holds its breaker for the
//!   time left ([`Breaker::fleet_group_hold`](breakerbox::fleet::FleetControl::fleet_group_hold):
//!   refusals say [`OpenReason::Held`](breakerbox::OpenReason::Held) with the
//!   group scope), counted in [`AgentStats::holds_applied`]. A key-scope hold
//!   is one key's (one tenant's quota) and stays local; a hold the agent
//!   applied is not published again.
//!
//! # Who probes, and the window
//!
//! A local breaker goes half-open by itself when its open time is over. So
//! that it does not probe before the fleet has decided who may, the agent
//! holds every instance open [`AgentConfig::lease_wait`] (200 ms) past the end
//! of the fleet's open ([`Breaker::fleet_hold`](breakerbox::fleet::FleetControl::fleet_hold),
//! which moves the end without a transition), the instance that tripped
//! included. At the end itself the agent asks the store for the lease; the
//! winner's end is moved to now and it probes at once (lazily, on its next
//! call), the losers' to the end of the lease plus `lease_wait`. The window in
//! which an instance may probe without the lease is an agent that has not
//! decided within `lease_wait` (its store call past its timeout, its thread
//! starved): it then probes alone, as it does when the store is gone. The
//! cost is that refusals on a fleet open carry a `retry_after` up to
//! `lease_wait` longer than the fleet's own time left.
//!
//! # When the store fails
//!
//! Every Redis call is bounded ([`RedisStore::timeout`], 50 ms by default). A
//! failed call is counted ([`AgentStats::store_errors`], `last_error`,
//! `stale_for`) and the agent goes on locally: local trips are kept and
//! published when the store returns, a fleet open ends on the local timer and
//! the local breaker probes alone (no lease to ask for). When Redis returns
//! without its data (a new *run*), epochs restart and instances republish what
//! is still open; a store with no record never closes a local breaker.
//!
//! # Quorum and aggregation: the trade-off
//!
//! With [`AgentConfig::quorum`] = Q > 1, a local trip is a vote; the fleet opens
//! when Q distinct instances voted within one open duration. One bad node (its
//! own network, a bad deploy) can then no longer open the circuit for everyone,
//! but a real outage is propagated only after Q instances each paid their own
//! threshold of failures: more failed calls, later protection.
//! [`Aggregation`] goes the other way: counts of every instance are summed in
//! expiring window buckets, so a failure rate spread thin over a large fleet
//! trips even if no instance saw enough calls to trip alone; the price is one
//! Redis write per group per flush, and a verdict that lags by up to one flush.
//!
//! The agent's logic takes [`LocalEvent`]s from a channel and acts through the
//! [`LocalSide`] trait, so it is tested without threads on a
//! [`ManualClock`](breakerbox::ManualClock) with a [`MemoryStore`].

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod agent;
mod local;
mod memory;
#[cfg(feature = "prometheus")]
mod prometheus;
mod redis_store;
mod server;
mod store;

use std::sync::Arc;
use std::thread::JoinHandle;

pub use agent::{Agent, AgentConfig, AgentStats, Aggregation};
pub use local::{LocalEvent, LocalEventKind, LocalSide, RegistrySide};
pub use memory::MemoryStore;
#[cfg(feature = "prometheus")]
pub use prometheus::FleetCollector;
pub use redis_store::RedisStore;
pub use server::RedisServer;
pub use store::{Cas, FleetState, FleetStore, GroupRecord, Notice, StoreError, Trip};

use breakerbox::{clock::Clock, clock::MonotonicClock, events::Subscription, Registry};
use tokio::sync::{mpsc, oneshot};

/// An agent running on its own thread (with its own single-threaded tokio
/// runtime) for one registry. Dropping the handle stops it.
pub struct FleetAgent {
    stats: Arc<agent::SharedStats>,
    /// The registry's transitions, into the agent's channel.
    subscription: Option<Subscription>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FleetAgent {
    /// Starts the agent of `registry` on `store`: a thread that runs
    /// [`Agent::run`], told of local trips and closes by the registry's
    /// transition events ([`RegistrySide::subscribe`]) as they happen.
    ///
    /// # Panics
    ///
    /// If the operating system refuses to start a thread.
    pub fn spawn<S: FleetStore>(
        store: S,
        registry: &'static Registry,
        config: AgentConfig,
    ) -> Self {
        let side = RegistrySide::new(registry);
        let agent = Agent::new(store, side.clone(), MonotonicClock, config);
        let stats = agent.shared_stats();
        let (tx, rx) = mpsc::unbounded_channel();
        // A send only fails once the agent is gone; nothing is left to tell.
        let subscription = side.subscribe(move |event| {
            let _ = tx.send(event);
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("breaker-fleet".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        log::error!("breaker-fleet: no runtime ({e}); fleet state is off");
                        return;
                    }
                };
                runtime.block_on(async move {
                    tokio::select! {
                        () = agent.run(rx) => {}
                        _ = stopped => {}
                    }
                });
            })
            .expect("spawning the breaker-fleet thread");
        FleetAgent {
            stats,
            subscription: Some(subscription),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// What the agent knows of itself now: errors, staleness, what it did.
    pub fn stats(&self) -> AgentStats {
        self.stats.snapshot(MonotonicClock.now_nanos())
    }
}

impl Drop for FleetAgent {
    fn drop(&mut self) {
        drop(self.subscription.take());
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for FleetAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetAgent")
            .field("stats", &self.stats())
            .finish()
    }
}
