//! The closed path's instructions with and without a fleet agent attached:
//! `cargo run -p breaker-fleet --example closed_path_ir --release`.
//!
//! Runs itself under `valgrind --tool=callgrind --separate-threads=yes` with N
//! and 2N calls of a `#[circuit_breaker]` fn (closed, succeeding), once alone and
//! once with a [`FleetAgent`] subscribed to the same registry (its own thread), and
//! prints `(Ir(2N) - Ir(N)) / N` of the calling thread: what one more call costs.
//! The agent's own work is on its thread and is not counted against the call.

use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use breaker_fleet::{AgentConfig, FleetAgent, MemoryStore};
use breakerbox::{circuit_breaker, clock::MonotonicClock};

#[derive(Debug)]
struct Failed;

impl From<breakerbox::CircuitOpen> for Failed {
    fn from(_: breakerbox::CircuitOpen) -> Self {
        Failed
    }
}

#[circuit_breaker(group = "ir-fleet", threshold = 3, open_ms = 3_600_000)]
fn guarded(x: u64) -> Result<u64, Failed> {
    Ok(black_box(x).wrapping_mul(3))
}

const N: u64 = 200_000;

fn child(n: u64, with_agent: bool) {
    let _ = guarded(0); // create the group before the agent starts
    let agent = with_agent.then(|| {
        let store = MemoryStore::new(MonotonicClock);
        FleetAgent::spawn(store, breakerbox::registry(), AgentConfig::new("ir"))
    });
    if agent.is_some() {
        std::thread::sleep(Duration::from_millis(20)); // the agent is running
    }
    let mut sum = 0u64;
    for i in 0..n {
        sum = sum.wrapping_add(guarded(i).unwrap_or(0));
    }
    black_box(sum);
    if let Some(agent) = &agent {
        // The agent really ran beside the calls: it read the store.
        assert!(agent.stats().connected, "the agent never ran");
    }
    drop(agent);
}

/// Instructions of the main thread of one callgrind run.
fn main_thread_ir(n: u64, with_agent: bool, dir: &std::path::Path) -> u64 {
    let exe = std::env::current_exe().expect("own path");
    let out = dir.join(format!("cg-{n}-{with_agent}"));
    let status = Command::new("valgrind")
        .args(["--tool=callgrind", "--separate-threads=yes", "-q"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(&exe)
        .env("BREAKER_FLEET_IR", format!("{n},{}", u8::from(with_agent)))
        .status()
        .expect("running valgrind");
    assert!(status.success(), "callgrind run failed");
    // Thread 1 is the main thread: `<file>-01`.
    let text = std::fs::read_to_string(format!("{}-01", out.display())).expect("callgrind output");
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("a totals line")
}

fn main() {
    if let Ok(spec) = std::env::var("BREAKER_FLEET_IR") {
        let (n, agent) = spec.split_once(',').expect("n,agent");
        child(n.parse().expect("n"), agent == "1");
        return;
    }
    if Command::new("valgrind").arg("--version").output().is_err() {
        eprintln!("closed_path_ir: valgrind is not on PATH; nothing measured");
        std::process::exit(1);
    }
    let dir = std::env::temp_dir().join(format!("breaker-fleet-ir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    println!("| attribute, closed, success | instructions per call |");
    println!("|---|---:|");
    for with_agent in [false, true] {
        let one = main_thread_ir(N, with_agent, &dir);
        let two = main_thread_ir(2 * N, with_agent, &dir);
        let per_call = (two as f64 - one as f64) / N as f64;
        let label = if with_agent {
            "with a fleet agent"
        } else {
            "alone"
        };
        println!("| {label} | {per_call:.1} |");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
