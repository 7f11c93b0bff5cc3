//! One fleet instance as a process, driven line by line on stdin: the tests
//! start three of these on one `redis-server`. Also a hands-on demo:
//!
//! ```text
//! breaker-fleet-node --redis redis://127.0.0.1:6379/ --name a
//! fail | ok | state | stats | wait-refuse <ms> | wait-admit <ms> | quit
//! ```
//!
//! The group is `dep` (threshold 3, `--open-ms`, one probe).

use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use breaker_fleet::{AgentConfig, FleetAgent, RedisStore};
use breakerbox::{registry, Config};

fn main() {
    let mut url = "redis://127.0.0.1:6379/".to_owned();
    let mut name = format!("node-{}", std::process::id());
    let mut prefix = "breaker:fleet".to_owned();
    let mut open_ms = 2_000;
    let mut config = AgentConfig::new("");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage(&arg));
        match arg.as_str() {
            "--redis" => url = value(),
            "--name" => name = value(),
            "--prefix" => prefix = value(),
            "--open-ms" => open_ms = value().parse().unwrap_or_else(|_| usage("--open-ms")),
            "--poll-ms" => {
                let ms = value().parse().unwrap_or_else(|_| usage("--poll-ms"));
                config.poll_every = Duration::from_millis(ms);
            }
            "--no-pubsub" => config.pubsub = false,
            other => usage(other),
        }
    }
    config.instance = name;
    config.probe_lease = Duration::from_secs(2);

    let group = Config::builder()
        .threshold(3)
        .open(Duration::from_millis(open_ms))
        .half_open_probes(1)
        .build()
        .expect("a valid config");
    registry()
        .configure("dep", group)
        .expect("configured before first use");
    let breaker = registry().breaker_or_default("dep");
    let store = RedisStore::new(&url)
        .expect("a redis:// url")
        .prefix(prefix);
    let agent = FleetAgent::spawn(store, registry(), config);

    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let mut words = line.split_whitespace();
        let reply = match (
            words.next(),
            words.next().and_then(|w| w.parse::<u64>().ok()),
        ) {
            (Some(verdict @ ("ok" | "fail")), _) => match breaker.try_acquire() {
                Ok(permit) if verdict == "ok" => {
                    permit.success();
                    "admitted".to_owned()
                }
                Ok(permit) => {
                    permit.failure();
                    "admitted".to_owned()
                }
                Err(open) => format!("refused {}", open.reason().as_str()),
            },
            (Some("state"), _) => format!("state {} {}", breaker.state(), breaker.would_admit()),
            (Some("stats"), _) => {
                let s = agent.stats();
                format!(
                    "stats connected={} errors={} rejoins={} subscribed={} trips={} closes={} opens_applied={}",
                    s.connected,
                    s.store_errors,
                    s.rejoins,
                    s.subscribed,
                    s.trips_published,
                    s.closes_published,
                    s.opens_applied
                )
            }
            (Some(wait @ ("wait-refuse" | "wait-admit")), Some(ms)) => {
                let want_admit = wait == "wait-admit";
                let start = Instant::now();
                let deadline = start + Duration::from_millis(ms);
                loop {
                    if breaker.would_admit() == want_admit {
                        break format!("{wait} {}", start.elapsed().as_micros());
                    }
                    if Instant::now() > deadline {
                        break "timeout".to_owned();
                    }
                    std::hint::spin_loop();
                }
            }
            (Some("quit"), _) | (None, _) => break,
            (Some(other), _) => format!("unknown {other}"),
        };
        let _ = writeln!(out, "{reply}");
        let _ = out.flush();
    }
}

fn usage(arg: &str) -> ! {
    eprintln!(
        "breaker-fleet-node: bad argument {arg:?}\n\
         usage: breaker-fleet-node [--redis URL] [--name NAME] [--prefix P] \
         [--open-ms N] [--poll-ms N] [--no-pubsub]"
    );
    std::process::exit(2)
}
