//! The outage bench: every contender (no breaker, breakerbox three ways, and
//! the peers) on every scenario of [`harness`], against a real HTTP server on
//! 127.0.0.1, with the same offered load, timeout and policy; then breakerbox's
//! defaults, each changed alone, on the dead and the hanging server.
//!
//! Prints its tables; with `BREAKER_BENCH_README=write` it also writes the
//! `outage` and `outage_defaults` regions of `benches/README.md` and the
//! pictures `benches/outage-<scenario>.svg`. `BREAKER_OUTAGE_QUICK=1` halves
//! every phase, for a look at the harness, not for figures.

#[path = "../readme.rs"]
mod readme;

mod harness;
mod layer;
mod peers;
mod svg;

use std::fmt::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use breakerbox::{Breaker, Config, ConfigBuilder, RetryPolicy};

use harness::{Contender, Run, Scale, Scenario, Target};

/// The policy every contender is configured with, as far as its API allows.
pub(crate) mod policy {
    use std::time::Duration;

    /// Offered calls per second.
    pub const RATE: u32 = 250;
    /// The failure-rate window.
    pub const WINDOW: Duration = Duration::from_secs(1);
    /// The share of failures in the window that opens the circuit.
    pub const FAILURE_RATE: f64 = 0.5;
    /// Outcomes the window holds before it judges.
    pub const MIN_CALLS: u32 = 20;
    /// The (first) open duration.
    pub const OPEN: Duration = Duration::from_millis(500);
    /// Probes in flight at once while half-open.
    pub const PROBES: u32 = 1;
    /// Each call's timeout, inside the breaker.
    pub const TIMEOUT: Duration = Duration::from_millis(300);
}

fn scale() -> Scale {
    let quick = std::env::var_os("BREAKER_OUTAGE_QUICK").is_some();
    let secs = |s: f64| Duration::from_secs_f64(if quick { s / 2.0 } else { s });
    Scale {
        rate: policy::RATE,
        warm: secs(1.0),
        outage: secs(4.0),
        after: secs(4.0),
        timeout: policy::TIMEOUT,
        service: Duration::from_millis(5),
    }
}

/// The CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the clock id is a constant.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// A contender of the tables: its name, its configuration in words, and how a
/// run builds it (afresh, so no run inherits another's state).
pub(crate) struct Entry {
    pub name: String,
    pub config: String,
    pub make: Box<dyn Fn(Target) -> Contender>,
}

/// breakerbox's config for the shared policy, before any default is changed.
fn shared_config() -> ConfigBuilder {
    Config::builder()
        .window(policy::WINDOW)
        .failure_rate(policy::FAILURE_RATE)
        .min_calls(policy::MIN_CALLS)
        .open(policy::OPEN)
        .half_open_probes(policy::PROBES)
}

fn describe(config: &Config) -> String {
    let mut text = format!(
        "time window {} ms, failure rate {}, min calls {}, open {} ms, {} probe(s), backoff {}, \
         cap {} ms, jitter {}",
        config.window().map_or(0, |w| w.as_millis()),
        config.failure_rate().unwrap_or(0.0),
        config.min_calls().unwrap_or(0),
        config.open().as_millis(),
        config.half_open_probes(),
        config.backoff(),
        config.max_open().as_millis(),
        config.jitter(),
    );
    if let Some(ramp) = config.ramp() {
        let _ = write!(text, ", ramp {} ms", ramp.as_millis());
    }
    text
}

fn layer_entry(name: &str, config: Config, retry: Option<RetryPolicy>) -> Entry {
    let mut text = describe(&config);
    let _ = write!(text, "; tower timeout {} ms", policy::TIMEOUT.as_millis());
    if let Some(policy) = &retry {
        let _ = write!(
            text,
            "; {} retries, waits from {} ms doubling up to {} ms",
            policy.retries(),
            policy.first_delay().as_millis(),
            policy.delay_cap().as_millis()
        );
        if let Some((ratio, floor)) = policy.budget_limits() {
            let _ = write!(
                text,
                ", under the group's budget ({}% of calls plus {floor} a second)",
                ratio * 100.0
            );
        }
    }
    let group: &'static str = Box::leak(format!("outage {name}").into_boxed_str());
    Entry {
        name: name.to_owned(),
        config: text,
        make: Box::new(move |target| {
            let breaker = Breaker::new(group, config);
            layer::contender(target, &breaker, policy::TIMEOUT, retry)
        }),
    }
}

fn entries() -> Vec<Entry> {
    let config = shared_config().build().expect("a valid config");
    let ramped = shared_config()
        .ramp(Duration::from_secs(1))
        .build()
        .expect("a valid config");
    let mut entries = vec![
        Entry {
            name: "no breaker".into(),
            config: format!(
                "the client's timeout only ({} ms)",
                policy::TIMEOUT.as_millis()
            ),
            make: Box::new(|target| {
                std::sync::Arc::new(move || {
                    let get = target.get(policy::TIMEOUT);
                    Box::pin(async move {
                        match get.await {
                            Ok(status) => harness::Answer::of_status(status),
                            Err(harness::GetError::TimedOut) => harness::Answer::TimedOut,
                            Err(harness::GetError::Transport(_)) => harness::Answer::Failed,
                        }
                    })
                })
            }),
        },
        peers::attribute(&config),
        layer_entry("breakerbox tower layer", config, None),
        layer_entry(
            "breakerbox layer, ramp + retries",
            ramped,
            Some(RetryPolicy::new(2)),
        ),
    ];
    entries.extend(peers::peers());
    entries
}

/// The study of the defaults: breakerbox's tower layer with one value changed
/// at a time from the crate's defaults (the shared window policy kept).
fn variants() -> Vec<Entry> {
    let variant = |name: &str, build: &dyn Fn(ConfigBuilder) -> ConfigBuilder| {
        let config = build(shared_config()).build().expect("a valid config");
        layer_entry(name, config, None)
    };
    vec![
        variant("defaults", &|b| b),
        variant("backoff 1.0", &|b| b.backoff(1.0)),
        variant("backoff 1.5", &|b| b.backoff(1.5)),
        variant("backoff 2.0, cap 4x open", &|b| {
            b.max_open(policy::OPEN * 4)
        }),
        variant("backoff 1.0, jitter 0.2", &|b| b.backoff(1.0).jitter(0.2)),
        variant("backoff 1.0, 3 probes", &|b| {
            b.backoff(1.0).half_open_probes(3)
        }),
        variant("backoff 1.0, ramp 1 s", &|b| {
            b.backoff(1.0).ramp(Duration::from_secs(1))
        }),
    ]
}

/// The requests a breaker that follows the shared policy exactly lets through
/// during the outage: the failures its window needs to trip (the failure rate
/// of a window's worth of offered calls, at least `min_calls`), the calls sent
/// while the first failures wait out their timeout when the server hangs, and
/// one probe per open period.
fn ideal(scenario: Scenario, scale: &Scale) -> Option<f64> {
    let rate = f64::from(scale.rate);
    let trip = (rate * policy::WINDOW.as_secs_f64() * policy::FAILURE_RATE)
        .ceil()
        .max(f64::from(policy::MIN_CALLS));
    let probes = f64::from(policy::PROBES)
        * (scale.outage.as_secs_f64() / policy::OPEN.as_secs_f64()).floor();
    match scenario {
        Scenario::Fail => Some(trip + probes),
        Scenario::Hang => Some(trip + rate * scale.timeout.as_secs_f64() + probes),
        // A 429 is no failure: the ideal breaker stays closed.
        Scenario::Limited | Scenario::Partial => None,
    }
}

fn table(scenario: Scenario, scale: &Scale, rows: &[(&str, &Run)]) -> String {
    let ideal = ideal(scenario, scale);
    let mut text = String::from(
        "| contender | reached the server | of offered | of ideal | p50 ms | p99 ms | max ms | \
         ok during | ok after | heal to 95% | re-opens | peak after heal | client CPU µs/call |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (name, run) in rows {
        let f = run.figures();
        let share = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
        let of_ideal = ideal.map_or("".into(), |i| format!("{:.2}x", f.reached as f64 / i));
        let recovery = f.recovery.map_or("never".into(), |r| format!("{r:.1} s"));
        let _ = writeln!(
            text,
            "| {name} | {} | {:.0}% | {of_ideal} | {:.1} | {:.1} | {:.1} | {:.0}% | {:.0}% | \
             {recovery} | {} | {} | {:.1} |",
            f.reached,
            share(f.reached, f.offered),
            f.latency_ms[0],
            f.latency_ms[1],
            f.latency_ms[2],
            share(f.ok_during, f.offered),
            share(f.ok_after, f.offered_after),
            f.reopens,
            f.peak_after,
            f.cpu_us,
        );
    }
    text
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

fn machine(load_at_start: &str, took: Duration) -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| "an unknown rustc".into());
    format!(
        "Measured on {cpus} CPUs shared with whatever else ran, {rustc}; load average \
         {load_at_start} at the start and {} at the end; the whole bench took {:.0} s.",
        load_average(),
        took.as_secs_f64()
    )
}

fn main() {
    // `cargo bench` passes `--bench`; a filter picks scenarios by name.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |s: Scenario| filter.is_empty() || filter.iter().any(|f| f == s.name());
    let scale = scale();
    let load_at_start = load_average();
    let began = Instant::now();
    let entries = entries();
    println!(
        "outage bench: {} calls/s, timeout {} ms, outage {} s; contenders:",
        scale.rate,
        scale.timeout.as_millis(),
        scale.outage.as_secs_f64()
    );
    for e in &entries {
        println!("  {}: {}", e.name, e.config);
    }

    let write = std::env::var_os(readme::WRITE).is_some();
    let benches = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut region = String::new();
    let mut all = true;
    for scenario in Scenario::ALL {
        if !wanted(scenario) {
            all = false;
            continue;
        }
        let runs = run_all(scenario, &scale, &entries);
        let rows: Vec<(&str, &Run)> = entries.iter().map(|e| e.name.as_str()).zip(&runs).collect();
        let table = table(scenario, &scale, &rows);
        println!("\n{}:\n{table}", scenario.describe(&scale));
        let file = format!("outage-{}.svg", scenario.name());
        let picture = svg::picture(&scenario.describe(&scale), &rows);
        save(&benches.join(&file), &picture, write);
        let _ = write!(
            region,
            "\n**{}** ([picture](outage-{}.svg))\n\n![{}](outage-{}.svg)\n\n{table}",
            capitalised(&scenario.describe(&scale)),
            scenario.name(),
            scenario.name(),
            scenario.name(),
        );
    }

    let variants = variants();
    let mut defaults = String::new();
    for scenario in [Scenario::Fail, Scenario::Hang] {
        if !wanted(scenario) {
            continue;
        }
        let runs = run_all(scenario, &scale, &variants);
        let rows: Vec<(&str, &Run)> = variants
            .iter()
            .map(|e| e.name.as_str())
            .zip(&runs)
            .collect();
        let table = table(scenario, &scale, &rows);
        println!("\ndefaults, {}:\n{table}", scenario.describe(&scale));
        let _ = write!(
            defaults,
            "\n**{}**\n\n{table}",
            capitalised(&scenario.describe(&scale))
        );
    }

    let mut head = machine(&load_at_start, began.elapsed());
    let _ = write!(
        head,
        "\n\nEach run offers {} calls/s for {} s healthy, {} s of outage and {} s healed; each \
         call has a {} ms timeout inside the breaker and a healthy answer takes {} ms. The \
         contenders, configured alike:\n\n",
        scale.rate,
        scale.warm.as_secs_f64(),
        scale.outage.as_secs_f64(),
        scale.after.as_secs_f64(),
        scale.timeout.as_millis(),
        scale.service.as_millis(),
    );
    for e in &entries {
        let _ = writeln!(head, "- {}: {}", e.name, e.config);
    }
    let region = format!("{head}{region}");
    let mut defaults_head =
        String::from("breakerbox's tower layer, one value changed at a time:\n\n");
    for e in &variants {
        let _ = writeln!(defaults_head, "- {}: {}", e.name, e.config);
    }
    let defaults = format!("{defaults_head}{defaults}");
    if all {
        readme::write_if_asked(
            Path::new(readme::README),
            &[("outage", region), ("outage_defaults", defaults)],
        );
    } else if write {
        println!("a filtered run writes no README region");
    }
}

fn run_all(scenario: Scenario, scale: &Scale, entries: &[Entry]) -> Vec<Run> {
    entries
        .iter()
        .map(|e| {
            let run = harness::run(scenario, scale, &*e.make, Some(thread_cpu));
            let f = run.figures();
            println!(
                "  {} / {}: {} reached during the outage, {} unanswered",
                scenario.name(),
                e.name,
                f.reached,
                f.unanswered
            );
            run
        })
        .collect()
}

fn save(path: &Path, text: &str, write: bool) {
    let target = if write {
        path.to_owned()
    } else {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/outage");
        let _ = std::fs::create_dir_all(&dir);
        dir.join(path.file_name().expect("a file name"))
    };
    match std::fs::write(&target, text) {
        Ok(()) => println!("wrote {}", target.display()),
        Err(e) => println!("{} not written: {e}", target.display()),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
