//! The table printed at the end of `cargo bench --bench breakerbox`: every case's
//! median next to its group's bare call, and the ratios the performance targets
//! are stated in. Read back from criterion's own estimates, so it shows exactly
//! what criterion measured.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where criterion writes its estimates: `target/criterion`.
pub(crate) fn dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .join("criterion")
}

/// The number after `"key":` at or after `from` in `json`.
fn number_after(json: &str, key: &str) -> Option<f64> {
    let at = json.find(key)? + key.len();
    let rest = json[at..].trim_start_matches([':', ' ', '"']);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn string_after(json: &str, key: &str) -> Option<String> {
    let at = json.find(key)? + key.len();
    let rest = json[at..].trim_start_matches([':', ' ']);
    let rest = rest.strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_owned())
}

/// Median ns per iteration of every case criterion estimated since `since` (this
/// run: a case renamed or filtered out keeps its old files, which are left out).
fn medians(since: SystemTime) -> BTreeMap<String, Vec<(String, f64)>> {
    let mut groups: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    let Ok(entries) = fs::read_dir(dir()) else {
        return groups;
    };
    for group in entries.flatten() {
        let Ok(cases) = fs::read_dir(group.path()) else {
            continue;
        };
        for case in cases.flatten() {
            let new = case.path().join("new");
            let fresh = fs::metadata(new.join("estimates.json"))
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified >= since);
            if !fresh {
                continue;
            }
            let (Ok(meta), Ok(est)) = (
                fs::read_to_string(new.join("benchmark.json")),
                fs::read_to_string(new.join("estimates.json")),
            ) else {
                continue;
            };
            let (Some(group_id), Some(function_id)) = (
                string_after(&meta, "\"group_id\""),
                string_after(&meta, "\"function_id\""),
            ) else {
                continue;
            };
            let median = est
                .find("\"median\"")
                .and_then(|at| number_after(&est[at..], "\"point_estimate\""));
            if let Some(median) = median {
                groups
                    .entry(group_id)
                    .or_default()
                    .push((function_id, median));
            }
        }
    }
    for cases in groups.values_mut() {
        cases.sort_by(|a, b| a.1.total_cmp(&b.1));
    }
    groups
}

fn find(cases: &[(String, f64)], name: &str) -> Option<f64> {
    cases.iter().find(|(n, _)| n == name).map(|c| c.1)
}

fn is_peer(name: &str) -> bool {
    ["failsafe", "recloser", "tower"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The tower layer's group and cases (see `tower_layer.rs`).
const TL: &str = "tower_layer";
const TL_LAYER: &str = "breakerbox: CircuitBreakerLayer";
const TL_OWNED: &str = "breakerbox: layer + Arc clone per request (owned permit)";
/// Rows measured with the request awaited in the benchmark's closure.
const AWAITED: &str = "awaited: ";
/// Every group `main` runs: the README's regions are written only from a run
/// that measured them all.
const GROUPS: &[&str] = &[
    "call_site",
    "closed_success",
    "closed_success_async",
    "open_rejection",
    "policy",
    THREADS,
    TL,
    "tower_layer_threads",
];
/// The group of cases run on one thread and on two.
const THREADS: &str = "threads";
/// The suffix of a threads case timed on the busiest thread's CPU time.
const CPU: &str = " (thread CPU time)";

/// Prints one markdown table per group, the threads table and the targets, and
/// writes the tables and the machine line into the README's regions when asked
/// (see `readme.rs`).
pub(crate) fn print(since: SystemTime, machine: &str) {
    let groups = medians(since);
    if groups.is_empty() {
        return;
    }
    let tables = tables(&groups);
    let threads = threads(&groups);
    let targets = targets(&groups);
    println!("\n## Medians, ns per call (criterion)\n\n{machine}\n{tables}\n{threads}");
    println!("## Targets\n\n{targets}");
    // A filtered run measured only some groups: its tables would drop the rest.
    let missing: Vec<_> = GROUPS
        .iter()
        .filter(|g| !groups.contains_key(**g))
        .collect();
    if !missing.is_empty() {
        if std::env::var_os(crate::readme::WRITE).is_some() {
            println!("README regions not written: the bench measured no {missing:?}");
        }
        return;
    }
    crate::readme::write_if_asked(
        Path::new(crate::readme::README),
        &[
            ("machine", machine.to_owned()),
            ("criterion", tables),
            ("threads", threads),
        ],
    );
}

/// One markdown table per group but `threads`: every case's median and, for all
/// but the bare calls, how much it adds to the bare call polled the same way.
fn tables(groups: &BTreeMap<String, Vec<(String, f64)>>) -> String {
    let mut out = String::new();
    for (group, cases) in groups.iter().filter(|(g, _)| *g != THREADS) {
        let _ = writeln!(out, "### {group}\n");
        out.push_str("| case | median ns | over bare call |\n|---|---:|---:|\n");
        for (name, median) in cases {
            // A row polled another way ("awaited: ", "block_on: ", "task: ") is
            // held against the bare call polled the same way.
            let harness = [AWAITED, crate::BLOCK_ON, crate::TASK]
                .into_iter()
                .find(|h| name.starts_with(h))
                .unwrap_or("");
            let is_bare =
                |n: &str| n.starts_with(harness) && n[harness.len()..].starts_with("bare call");
            let bare = cases.iter().find(|(n, _)| is_bare(n)).map(|c| c.1);
            let over = match bare {
                Some(bare) if !is_bare(name) => format!("{:+.2}", median - bare),
                _ => String::new(),
            };
            let _ = writeln!(out, "| {name} | {median:.2} | {over} |");
        }
        out.push('\n');
    }
    out
}

/// The `threads` group as one row per case: ns per call with one thread and with
/// two (the aggregate), and the throughput with two over one, on the wall clock
/// and on the busiest thread's CPU time.
fn threads(groups: &BTreeMap<String, Vec<(String, f64)>>) -> String {
    let Some(cases) = groups.get(THREADS) else {
        return String::new();
    };
    let mut out = String::from(
        "| case | 1 thread | 2 threads, aggregate | x2 / x1 | x2 / x1, thread CPU time |\n\
         |---|---:|---:|---:|---:|\n",
    );
    // Every case, by its 1-thread wall-clock time.
    let mut names: Vec<(&str, f64)> = cases
        .iter()
        .filter_map(|(n, t)| n.strip_suffix(" x1").map(|base| (base, *t)))
        .collect();
    names.sort_by(|a, b| a.1.total_cmp(&b.1));
    let get = |name: String| find(cases, &name);
    for (base, one) in names {
        let cell = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_default();
        let two = get(format!("{base} x2"));
        let ratio = two.map(|two| one / two);
        let cpu = get(format!("{base} x1{CPU}"))
            .zip(get(format!("{base} x2{CPU}")))
            .map(|(one, two)| one / two);
        let _ = writeln!(
            out,
            "| {base} | {one:.2} | {} | {} | {} |",
            cell(two),
            cell(ratio),
            cell(cpu)
        );
    }
    out
}

/// The performance targets, each with the figures it is judged on.
fn targets(groups: &BTreeMap<String, Vec<(String, f64)>>) -> String {
    let mut out = String::new();
    let get = |g: &str, n: &str| groups.get(g).and_then(|c| find(c, n));
    let fastest_peer = |g: &str| {
        groups.get(g).and_then(|c| {
            c.iter()
                .filter(|(n, _)| is_peer(n))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .cloned()
        })
    };
    let mut line = |what: &str, value: Option<String>| {
        if let Some(value) = value {
            let _ = writeln!(out, "- {what}: {value}");
        }
    };
    // `a` over `b` in group `g`, in ns; the fastest peer over `case`, as a ratio.
    let over = |g: &str, a: &str, b: &str| {
        get(g, a)
            .zip(get(g, b))
            .map(|(a, b)| format!("{:+.2} ns", a - b))
    };
    let peer_over = |g: &str, case: &str| {
        fastest_peer(g)
            .zip(get(g, case))
            .map(|((p, peer), b)| format!("{:.1}x ({p})", peer / b))
    };
    let (cs, asy) = ("closed_success", "closed_success_async");
    let by_hand = "breakerbox: hand-written fn (call site + permit)";
    let by_hand_async = "breakerbox: hand-written async fn (call site + permit)";
    for (what, value) in [
        (
            "closed success, permit, over bare call (target <= 3 ns)",
            over(cs, "breakerbox: permit", "bare call"),
        ),
        (
            "closed success, fastest peer / breaker permit (target >= 4x)",
            peer_over(cs, "breakerbox: permit"),
        ),
        (
            "closed success, attribute over the same wrapper fn without a breaker",
            over(cs, "breakerbox: attribute", crate::WRAPPER),
        ),
        (
            "closed success, fastest peer / breaker attribute",
            peer_over(cs, "breakerbox: attribute"),
        ),
        (
            "closed success, attribute over the same fn written by hand (target: nothing)",
            over(cs, "breakerbox: attribute", by_hand),
        ),
        (
            "async closed, call_async over bare async call (target <= 5 ns)",
            over(asy, "breakerbox: call_async", "bare call"),
        ),
        (
            "async closed, attribute over the same async fn written by hand (target: nothing)",
            over(asy, "breakerbox: attribute", by_hand_async),
        ),
        (
            "async closed, attribute over bare async call (target <= 5 ns)",
            over(asy, "breakerbox: attribute", "bare call"),
        ),
        (
            "async closed in a caller's async fn (block_on), call_async over the attribute (target <= 0)",
            over(
                asy,
                &format!("{}breakerbox: call_async", crate::BLOCK_ON),
                &format!("{}breakerbox: attribute", crate::BLOCK_ON),
            ),
        ),
        (
            "async closed in a caller's async fn (task), call_async over the attribute (target <= 0)",
            over(
                asy,
                &format!("{}breakerbox: call_async", crate::TASK),
                &format!("{}breakerbox: attribute", crate::TASK),
            ),
        ),
        (
            "open rejection, fastest peer / breaker (target >= 1.5x)",
            peer_over("open_rejection", "breakerbox: permit"),
        ),
        (
            "tower layer over the bare ready service (target <= 15 ns)",
            over(TL, TL_LAYER, "bare call: ready service"),
        ),
        (
            "tower layer over the bare ready service, both awaited in the closure",
            over(
                TL,
                "awaited: breakerbox: CircuitBreakerLayer",
                "awaited: bare call: ready service",
            ),
        ),
        (
            "tower layer, tower-resilience / breaker",
            peer_over(TL, TL_LAYER),
        ),
        (
            "tower layer, an Arc clone per request (owned permit) over the layer",
            over(TL, TL_OWNED, TL_LAYER),
        ),
        (
            "tower layer x2 threads, an Arc clone per request over the layer",
            over(
                "tower_layer_threads",
                "breakerbox: layer + Arc clone per request, one breaker x2",
                "breakerbox: CircuitBreakerLayer, one breaker x2",
            ),
        ),
    ] {
        line(what, value);
    }
    let th = THREADS;
    for case in [
        "bare call",
        "breakerbox: one breaker",
        "breakerbox: two breakers of one registry",
    ] {
        for sfx in ["", CPU] {
            let target = if case == "bare call" {
                "the machine's own ceiling"
            } else {
                "target >= 1.8"
            };
            line(
                &format!("{case}{sfx}, throughput x2 / x1 ({target})"),
                get(th, &format!("{case} x1{sfx}"))
                    .zip(get(th, &format!("{case} x2{sfx}")))
                    .map(|(one, two)| format!("{:.2}", one / two)),
            );
        }
    }
    out
}

/// The machine and the conditions of the bench, in one line: read at the start,
/// so the load average is what the run started under.
pub(crate) fn machine() -> String {
    let field = |file: &str, key: &str| {
        fs::read_to_string(file).ok().and_then(|text| {
            text.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split(':').nth(1))
                .map(|v| v.trim().to_owned())
        })
    };
    let cpu = field("/proc/cpuinfo", "model name").unwrap_or_else(|| "an unknown CPU".into());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = field("/proc/meminfo", "MemTotal")
        .and_then(|kb| kb.trim_end_matches(" kB").trim().parse::<f64>().ok())
        .map(|kb| format!("{:.0} GiB", kb / (1024.0 * 1024.0)))
        .unwrap_or_else(|| "unknown memory".into());
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| "an unknown rustc".into());
    let load = fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into());
    // SAFETY: asks for the calling process's own policy; no memory is passed.
    let policy = unsafe { libc::sched_getscheduler(0) };
    let policy = match policy {
        libc::SCHED_FIFO => "a real-time policy (SCHED_FIFO, as under `chrt -f`)",
        libc::SCHED_RR => "a real-time policy (SCHED_RR)",
        _ => "the default scheduler, sharing the CPUs with whatever else ran",
    };
    format!(
        "Measured on {cpu}, {cpus} CPUs, {memory}, {rustc}; load average {load} at the start; \
         under {policy}."
    )
}
