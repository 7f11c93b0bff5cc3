//! Measures fleet propagation: `cargo run -p breaker-fleet --example lag --release`.
//!
//! Starts its own `redis-server` (free loopback port, persistence off) and three
//! instances in this process, each with its own registry, agent thread and Redis
//! connections (in one process so one monotonic clock times them all). Then, for
//! each mode (pub/sub on; subscription dropped, polling only), `TRIPS` times:
//! instance `a` trips (three failures); the lag is the time from the trip to the
//! first refusal on `b` and on `c`; the trip's divergence window is the time
//! until both refuse. Then `a` is reset by hand (a close, as a probe's would be
//! published), and the close's divergence window is the time until both admit.
//! Each time is taken before the call that makes the transition (the third
//! failure, the reset), since the agent hears of it inside that call.

use std::time::{Duration, Instant};

use breaker_fleet::{AgentConfig, FleetAgent, RedisServer, RedisStore};
use breakerbox::{Breaker, Config, Registry};

const TRIPS: usize = 200;
const DEADLINE: Duration = Duration::from_secs(5);

struct Instance {
    breaker: Breaker,
    agent: FleetAgent,
}

fn instance(name: &str, url: &str, prefix: &str, config: &AgentConfig) -> Instance {
    let registry: &'static Registry = Box::leak(Box::new(Registry::new()));
    let group = Config::builder()
        .threshold(3)
        .open(Duration::from_secs(60))
        .build()
        .expect("valid");
    let breaker = registry.breaker("dep", &group);
    let store = RedisStore::new(url).expect("url").prefix(prefix);
    let mut config = config.clone();
    config.instance = name.to_owned();
    Instance {
        breaker,
        agent: FleetAgent::spawn(store, registry, config),
    }
}

/// Waits until every follower's `would_admit()` equals `admit`; the time each
/// took from `start`, or `None` past the deadline.
fn converge(start: Instant, followers: &[&Breaker], admit: bool) -> Option<Vec<Duration>> {
    let mut at = vec![None; followers.len()];
    while at.iter().any(Option::is_none) {
        for (k, b) in followers.iter().enumerate() {
            if at[k].is_none() && b.would_admit() == admit {
                at[k] = Some(start.elapsed());
            }
        }
        if start.elapsed() > DEADLINE {
            return None;
        }
        // Two cores may be all there is: sleep, not spin, between looks, so
        // the agents (and redis-server) get the CPU when they wake. A spinning
        // observer made itself the tail it measured: the woken agent waited
        // for a time slice, 10-16 ms at p99. Looks are 50 µs apart at best.
        std::thread::sleep(Duration::from_micros(50));
    }
    Some(at.into_iter().flatten().collect())
}

struct Series(Vec<Duration>);

impl Series {
    fn pct(&mut self, p: f64) -> Duration {
        self.0.sort_unstable();
        let k = ((self.0.len() as f64 - 1.0) * p).round() as usize;
        self.0[k.min(self.0.len() - 1)]
    }

    fn line(&mut self, what: &str) {
        println!(
            "  {what:<28} n={:<4} p50={:>9.3?} p99={:>9.3?} max={:>9.3?}",
            self.0.len(),
            self.pct(0.50),
            self.pct(0.99),
            self.pct(1.0)
        );
    }
}

fn measure(url: &str, mode: &str, config: AgentConfig) {
    let prefix = format!("lag:{mode}");
    let fleet: Vec<Instance> = ["a", "b", "c"]
        .iter()
        .map(|n| instance(n, url, &prefix, &config))
        .collect();
    // Let the agents connect and subscribe.
    let ready = Instant::now();
    while !fleet.iter().all(|i| {
        let s = i.agent.stats();
        s.connected && (s.subscribed || !config.pubsub)
    }) {
        assert!(ready.elapsed() < DEADLINE, "agents never connected");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));

    let (a, followers) = (&fleet[0].breaker, [&fleet[1].breaker, &fleet[2].breaker]);
    let mut lag = Series(Vec::new());
    let mut trip_window = Series(Vec::new());
    let mut close_window = Series(Vec::new());
    let mut missed = 0;
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..TRIPS {
        // A random phase against the agents' poll timers (xorshift).
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let phase = u64::try_from(config.poll_every.as_micros())
            .unwrap_or(1)
            .max(1);
        std::thread::sleep(Duration::from_micros(seed % phase));
        // The clock starts before the call whose failure trips: the trip is
        // told to the agent inside that call, which may be all the agent needs
        // to publish it before the call returns.
        for _ in 0..2 {
            if let Ok(permit) = a.try_acquire() {
                permit.failure();
            }
        }
        let tripped = Instant::now();
        if let Ok(permit) = a.try_acquire() {
            permit.failure();
        }
        match converge(tripped, &followers, false) {
            Some(each) => {
                trip_window.0.push(*each.iter().max().unwrap());
                lag.0.extend(each);
            }
            None => missed += 1,
        }
        let closed = Instant::now();
        a.reset();
        match converge(closed, &followers, true) {
            Some(each) => close_window.0.push(*each.iter().max().unwrap()),
            None => missed += 1,
        }
    }
    println!(
        "{mode} (poll every {:?}, pub/sub {}):",
        config.poll_every,
        if config.pubsub { "on" } else { "off" }
    );
    lag.line("trip -> first refusal");
    trip_window.line("divergence window (trip)");
    close_window.line("divergence window (close)");
    let errors: u64 = fleet.iter().map(|i| i.agent.stats().store_errors).sum();
    println!("  missed (> {DEADLINE:?}): {missed}, store errors: {errors}");
}

fn main() {
    if !RedisServer::available() {
        eprintln!("lag: redis-server is not on PATH (apt-get install -y redis-server)");
        std::process::exit(1);
    }
    let server = RedisServer::start().expect("starting redis-server");
    let url = server.url();
    println!("{TRIPS} trips, 1 origin + 2 followers, redis-server on {url}");

    measure(&url, "pubsub", AgentConfig::new(""));

    let mut polling = AgentConfig::new("");
    polling.pubsub = false;
    polling.poll_every = Duration::from_millis(50);
    measure(&url, "polling", polling);
}
