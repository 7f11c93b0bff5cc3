//! Instructions per call, counted exactly by `valgrind --tool=callgrind`.
//!
//! `cargo bench --bench instructions` runs this binary under callgrind once with N
//! calls and once with 2N calls of each case, and prints `(Ir(2N) - Ir(N)) / N`:
//! the instructions one more call costs, with start-up and set-up cancelled out.
//! Without valgrind on the PATH it says so and exits. Run by hand, one case:
//! `BREAKER_IR_CASE=permit BREAKER_IR_N=100000 valgrind --tool=callgrind target/release/deps/instructions-*`.

use std::hint::black_box;
use std::pin::pin;
use std::process::Command;

use std::future::{pending, Pending};
use std::time::Duration;

use breakerbox::{
    circuit_breaker, timeout::Timer, Breaker, CallError, Config, Fallback, ManualClock,
};

#[path = "fixtures.rs"]
mod fixtures;
#[path = "readme.rs"]
mod readme;

use fixtures::{block_on, fail, poll_now, run_task, via_call_async, work, work_async, BenchError};

#[circuit_breaker(group = "ir-attr", threshold = 3, open_ms = 3_600_000)]
fn guarded(x: u64) -> Result<u64, BenchError> {
    work(x)
}

#[circuit_breaker(group = "ir-attr-async", threshold = 3, open_ms = 3_600_000)]
async fn guarded_async(x: u64) -> Result<u64, BenchError> {
    work(x)
}

// Each async path as users call it: awaited in their own `async fn`, which an
// executor polls: `block_on` (inlined as the compiler decides) or as a task
// (`run_task`: through `dyn Future`).
async fn awaits_bare(x: u64) -> Result<u64, BenchError> {
    work_async(x).await
}

async fn awaits_call_async(breaker: &Breaker, x: u64) -> Result<u64, CallError<BenchError>> {
    breaker.call_async(work_async(x)).await
}

async fn awaits_attribute(x: u64) -> Result<u64, BenchError> {
    guarded_async(x).await
}

// Timeouts, bulkheads and latency: each key on an otherwise identical group: their cost is
// the difference from `attribute` / `attribute_async`.
#[circuit_breaker(
    group = "ir-bulkhead",
    threshold = 3,
    open_ms = 3_600_000,
    max_concurrent = 64
)]
fn guarded_bulkhead(x: u64) -> Result<u64, BenchError> {
    work(x)
}

// Retry set, the first attempt succeeding: the cost of the retry loop around
// an otherwise identical group (the difference from `attribute`).
#[circuit_breaker(
    group = "ir-retry",
    threshold = 3,
    open_ms = 3_600_000,
    retry = 2,
    idempotent = true
)]
fn guarded_retry(x: u64) -> Result<u64, BenchError> {
    work(x)
}

// Keyed: one breaker per key of the group, found by the key on every
// call. The same key each call: the cost of a key the group holds.
#[circuit_breaker(group = "ir-keyed", key = x, threshold = 3, open_ms = 3_600_000)]
fn guarded_keyed(x: u64) -> Result<u64, BenchError> {
    work(x)
}

#[circuit_breaker(group = "ir-keyed-async", key = x, threshold = 3, open_ms = 3_600_000)]
async fn guarded_keyed_async(x: u64) -> Result<u64, BenchError> {
    work(x)
}

// Keyed with a group level (`systemic_share`, `max_open_keys`): the cost of
// looking at the group's breaker on each call (the difference from
// `attribute_keyed`).
#[circuit_breaker(
    group = "ir-keyed-judged",
    key = x,
    threshold = 3,
    open_ms = 3_600_000,
    systemic_share = 0.5,
    max_open_keys = 0.5
)]
fn guarded_keyed_judged(x: u64) -> Result<u64, BenchError> {
    work(x)
}

#[circuit_breaker(group = "ir-keyed-str", key = host, threshold = 3, open_ms = 3_600_000)]
fn guarded_keyed_str(host: &str, x: u64) -> Result<u64, BenchError> {
    work(x)
}

// Fallbacks: a failure fallback on the closed path (its cost is the difference
// from `attribute`), and the answers to a forced-open group (from `forced_open`).
#[inline(never)]
fn stand_in(x: u64) -> Result<u64, BenchError> {
    Ok(x + 1)
}

#[inline(never)]
fn stand_in_why(x: u64, why: Fallback<BenchError>) -> Result<u64, BenchError> {
    match why {
        Fallback::Refused(_) => Ok(x + 1),
        _ => Ok(x + 2),
    }
}

#[circuit_breaker(
    group = "ir-fallback-failure",
    threshold = 3,
    open_ms = 3_600_000,
    fallback = stand_in_why(why),
    fallback_on = "failure"
)]
fn guarded_fallback_failure(x: u64) -> Result<u64, BenchError> {
    work(x)
}

#[circuit_breaker(group = "ir-fallback-open", threshold = 3, open_ms = 3_600_000, fallback = stand_in)]
fn guarded_fallback_open(x: u64) -> Result<u64, BenchError> {
    work(x)
}

#[circuit_breaker(
    group = "ir-fallback-why-open",
    threshold = 3,
    open_ms = 3_600_000,
    fallback = stand_in_why(why),
    fallback_on = "failure"
)]
fn guarded_fallback_why_open(x: u64) -> Result<u64, BenchError> {
    work(x)
}

/// A timer that never fires and registers nothing: the race's own cost.
struct NoTimer;
impl Timer for NoTimer {
    type Sleep = Pending<()>;
    fn sleep(&self, _: Duration) -> Pending<()> {
        pending()
    }
}

#[circuit_breaker(
    group = "ir-timeout-race", threshold = 3, open_ms = 3_600_000, timeout_ms = 60_000,
    timer = NoTimer
)]
async fn guarded_timeout_race(x: u64) -> Result<u64, BenchError> {
    work(x)
}

#[circuit_breaker(
    group = "ir-timeout-tokio",
    threshold = 3,
    open_ms = 3_600_000,
    timeout_ms = 60_000
)]
async fn guarded_timeout_tokio(x: u64) -> Result<u64, BenchError> {
    work(x)
}

#[inline(always)]
fn permit_call(breaker: &Breaker, x: u64) -> Result<u64, BenchError> {
    let permit = breaker.try_acquire()?;
    let result = work(x);
    permit.record(&result);
    result
}

const CASES: &[&str] = &[
    "bare",
    "permit",
    "call",
    "attribute",
    "bare_async",
    "call_async",
    "call_async_in_fn",
    "permit_async",
    "attribute_async",
    "block_on_bare_async",
    "block_on_call_async",
    "block_on_attribute_async",
    "task_bare_async",
    "task_call_async",
    "task_attribute_async",
    "open",
    "forced_open",
    "shadow_open",
    "count_window",
    "time_window",
    "ramping",
    "throttled",
    "tower_bare",
    "tower_layer",
    "recloser",
    "failsafe",
    "failsafe_time_window",
    "bulkhead",
    "call_in_bulkhead",
    "timeout_race",
    "timeout_async",
    "latency_window",
    "latency_time_window",
    "histogram",
    "attribute_keyed",
    "attribute_keyed_async",
    "attribute_keyed_str",
    "attribute_keyed_judged",
    "fallback_failure",
    "fallback_open",
    "fallback_why_open",
    "force_reset",
    "force_reset_ring",
    "worst_keys",
    "retry_first_attempt_ok",
];

/// The case each case adds to, for the table's "over" column: its cost is the
/// difference. A case not listed stands alone.
const BASES: &[(&str, &str)] = &[
    ("permit", "bare"),
    ("call", "bare"),
    ("attribute", "bare"),
    ("call_async", "bare_async"),
    ("call_async_in_fn", "bare_async"),
    ("permit_async", "bare_async"),
    ("attribute_async", "bare_async"),
    ("block_on_call_async", "block_on_bare_async"),
    ("block_on_attribute_async", "block_on_bare_async"),
    ("task_call_async", "task_bare_async"),
    ("task_attribute_async", "task_bare_async"),
    ("open", "bare"),
    ("forced_open", "bare"),
    ("shadow_open", "permit"),
    ("count_window", "permit"),
    ("time_window", "permit"),
    ("ramping", "permit"),
    ("throttled", "permit"),
    ("tower_layer", "tower_bare"),
    ("recloser", "bare"),
    ("failsafe", "bare"),
    ("failsafe_time_window", "bare"),
    ("bulkhead", "attribute"),
    ("call_in_bulkhead", "call"),
    ("timeout_race", "attribute_async"),
    ("timeout_async", "attribute_async"),
    ("latency_window", "count_window"),
    ("latency_time_window", "time_window"),
    ("histogram", "permit"),
    ("attribute_keyed", "attribute"),
    ("attribute_keyed_async", "attribute_async"),
    ("attribute_keyed_str", "attribute"),
    ("attribute_keyed_judged", "attribute_keyed"),
    ("fallback_failure", "attribute"),
    ("fallback_open", "forced_open"),
    ("fallback_why_open", "fallback_open"),
    ("force_reset_ring", "force_reset"),
    ("retry_first_attempt_ok", "attribute"),
];

fn config() -> Config {
    Config::builder()
        .threshold(3)
        .open(Duration::from_secs(3600))
        .build()
        .expect("valid config")
}

/// Runs `case` `n` times.
fn run(case: &str, n: u64) {
    let breaker = match case {
        "count_window" => Breaker::new("ir", Config::builder().window_calls(100).build().unwrap()),
        "time_window" => Breaker::new(
            "ir",
            Config::builder()
                .window(Duration::from_secs(10))
                .build()
                .unwrap(),
        ),
        "call_in_bulkhead" => Breaker::new(
            "ir",
            Config::builder()
                .threshold(3)
                .open(Duration::from_secs(3600))
                .max_concurrent(64)
                .build()
                .unwrap(),
        ),
        "latency_window" => Breaker::new(
            "ir",
            Config::builder()
                .window_calls(100)
                .latency_p99(Duration::from_secs(1))
                .build()
                .unwrap(),
        ),
        // `time_window`'s group with a latency window: its cost is the
        // difference from `time_window`.
        "latency_time_window" => Breaker::new(
            "ir",
            Config::builder()
                .window(Duration::from_secs(10))
                .latency_p99(Duration::from_secs(1))
                .build()
                .unwrap(),
        ),
        // `permit`'s group with a call-duration histogram: its cost is the
        // difference from `permit` (two clock reads and the record).
        "histogram" => Breaker::new(
            "ir",
            Config::builder()
                .threshold(3)
                .open(Duration::from_secs(3600))
                .histogram(Duration::from_secs(10))
                .build()
                .unwrap(),
        ),
        // Half way through an hour's ramp, on a clock that stands still: every
        // claim takes the ramp's credit, and every other one is admitted.
        "ramping" => {
            let clock = ManualClock::new();
            let config = Config::builder()
                .threshold(3)
                .open(Duration::from_millis(1_000))
                .ramp(Duration::from_secs(3_600))
                .build()
                .unwrap();
            let breaker = Breaker::with_clock("ir", config, clock.clone());
            for _ in 0..3 {
                let _ = breaker.call(|| fail(1));
            }
            clock.advance(Duration::from_secs(1));
            let _ = breaker.call(|| work(1));
            clock.advance(Duration::from_secs(1_800));
            breaker
        }
        // `permit`'s group with an adaptive throttle, every call accepted:
        // each claim reads the throttle's window, each verdict counts in it.
        "throttled" => Breaker::new(
            "ir",
            Config::builder()
                .threshold(3)
                .open(Duration::from_secs(3600))
                .throttle(2.0)
                .build()
                .unwrap(),
        ),
        _ => Breaker::new("ir", config()),
    };
    match case {
        "open" => {
            for _ in 0..3 {
                let _ = breaker.call(|| fail(1));
            }
        }
        // Open for an hour in shadow mode: every claim is one it would refuse,
        // admitted as a call whose success is counted.
        "shadow_open" => {
            for _ in 0..3 {
                let _ = breaker.call(|| fail(1));
            }
            breaker.set_shadow(true);
        }
        "forced_open" => breaker.force_open(),
        _ => {}
    }
    // One call first, so every case's one-time work (slots, segments) is done.
    let _ = black_box(permit_call(&breaker, 1));
    let _ = black_box(guarded(1));
    let _ = black_box(poll_now(guarded_async(1)));
    let _ = black_box(guarded_keyed(1));
    let _ = black_box(poll_now(guarded_keyed_async(1)));
    let _ = black_box(guarded_keyed_str("api.example.com", 1));
    let _ = black_box(guarded_fallback_failure(1));
    let _ = black_box(guarded_fallback_open(1));
    let _ = black_box(guarded_fallback_why_open(1));
    let _ = black_box(guarded_retry(1));
    if case == "fallback_open" || case == "fallback_why_open" {
        for group in ["ir-fallback-open", "ir-fallback-why-open"] {
            breakerbox::registry()
                .force_open(group)
                .expect("the group was used");
        }
    }
    // Tokio's timer registers with the runtime of the current context.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let _context = runtime.enter();
    let _ = black_box(guarded_bulkhead(1));
    let _ = black_box(poll_now(guarded_timeout_race(1)));
    let _ = black_box(poll_now(guarded_timeout_tokio(1)));
    let b = &breaker;
    match case {
        "bare" => repeat(n, || work(black_box(1))),
        "permit"
        | "open"
        | "forced_open"
        | "shadow_open"
        | "count_window"
        | "time_window"
        | "latency_window"
        | "latency_time_window"
        | "histogram"
        | "ramping"
        | "throttled" => repeat(n, || permit_call(b, black_box(1))),
        "call" => repeat(n, || b.call(|| work(black_box(1)))),
        "call_in_bulkhead" => repeat(n, || b.call_in_bulkhead(|| work(black_box(1)))),
        "bulkhead" => repeat(n, || guarded_bulkhead(black_box(1))),
        "timeout_race" => repeat(n, || poll_now(guarded_timeout_race(black_box(1)))),
        "timeout_async" => repeat(n, || poll_now(guarded_timeout_tokio(black_box(1)))),
        "attribute" => repeat(n, || guarded(black_box(1))),
        "retry_first_attempt_ok" => repeat(n, || guarded_retry(black_box(1))),
        "attribute_async" => repeat(n, || poll_now(guarded_async(black_box(1)))),
        "attribute_keyed" => repeat(n, || guarded_keyed(black_box(1))),
        "attribute_keyed_async" => repeat(n, || poll_now(guarded_keyed_async(black_box(1)))),
        "attribute_keyed_judged" => repeat(n, || guarded_keyed_judged(black_box(1))),
        "attribute_keyed_str" => repeat(n, || {
            guarded_keyed_str(black_box("api.example.com"), black_box(1))
        }),
        "fallback_failure" => repeat(n, || guarded_fallback_failure(black_box(1))),
        "fallback_open" => repeat(n, || guarded_fallback_open(black_box(1))),
        "fallback_why_open" => repeat(n, || guarded_fallback_why_open(black_box(1))),
        "permit_async" => repeat(n, || {
            poll_now(async {
                let permit = b.try_acquire()?;
                let result = work_async(black_box(1)).await;
                permit.record(&result);
                result
            })
        }),
        "bare_async" => repeat(n, || poll_now(work_async(black_box(1)))),
        "call_async" => repeat(n, || poll_now(b.call_async(work_async(black_box(1))))),
        // As users call it: awaited in their own `async fn`, which is polled.
        "call_async_in_fn" => repeat(n, || poll_now(via_call_async(b, black_box(1)))),
        "block_on_bare_async" => repeat(n, || block_on(awaits_bare(black_box(1)))),
        "block_on_call_async" => repeat(n, || block_on(awaits_call_async(b, black_box(1)))),
        "block_on_attribute_async" => repeat(n, || block_on(awaits_attribute(black_box(1)))),
        "task_bare_async" => repeat(n, || run_task(pin!(awaits_bare(black_box(1))))),
        "task_call_async" => repeat(n, || run_task(pin!(awaits_call_async(b, black_box(1))))),
        "task_attribute_async" => repeat(n, || run_task(pin!(awaits_attribute(black_box(1))))),
        "tower_bare" => {
            let mut svc = tower_service::Work;
            repeat(n, || {
                poll_now(tower_service::request(&mut svc, black_box(1)))
            })
        }
        "tower_layer" => {
            use breakerbox::tower::{CircuitBreakerLayer, Errors};
            use tower::Layer;
            let layer = CircuitBreakerLayer::for_breaker(b)
                .classify(Errors(breakerbox::classify::EveryError));
            let mut svc = layer.layer(tower_service::Work);
            repeat(n, || {
                poll_now(tower_service::request(&mut svc, black_box(1)))
            })
        }
        // The peer with a count window, through its own API, beside `count_window`.
        "recloser" => {
            let rc = recloser::Recloser::custom()
                .error_rate(0.5)
                .closed_len(100)
                .open_wait(std::time::Duration::from_secs(3_600))
                .build();
            let _ = black_box(rc.call(|| work(1)));
            repeat(n, || rc.call(|| work(black_box(1))))
        }
        // The peer with a consecutive count and with a time window, through
        // its own API, beside `permit` and `time_window` (the same shapes:
        // three failures; a 10 s window and half of the calls failing).
        "failsafe" | "failsafe_time_window" => {
            use failsafe::{backoff, failure_policy, CircuitBreaker};
            let open_for = backoff::constant(std::time::Duration::from_secs(3_600));
            if case == "failsafe" {
                let fs = failsafe::Config::new()
                    .failure_policy(failure_policy::consecutive_failures(3, open_for))
                    .build();
                let _ = black_box(fs.call(|| work(1)));
                repeat(n, || fs.call(|| work(black_box(1))))
            } else {
                let policy = failure_policy::success_rate_over_time_window(
                    0.5,
                    20,
                    std::time::Duration::from_secs(10),
                    open_for,
                );
                let fs = failsafe::Config::new().failure_policy(policy).build();
                let _ = black_box(fs.call(|| work(1)));
                repeat(n, || fs.call(|| work(black_box(1))))
            }
        }
        // Two transitions by hand (forced open, reset) of a registry's
        // breaker: with no subscriber, and with an admin router's event ring
        // (256 events) taking each; the difference is the ring's cost.
        "force_reset" | "force_reset_ring" => {
            let registry = std::sync::Arc::new(breakerbox::Registry::new());
            let rb = registry.breaker("ir-ring", &config());
            let _admin = (case == "force_reset_ring").then(|| {
                breakerbox::admin::Admin::builder(std::sync::Arc::clone(&registry))
                    .read_only()
                    .events(256)
                    .build()
                    .expect("a router")
            });
            rb.force_open();
            rb.reset();
            repeat(n, || {
                rb.force_open();
                rb.reset();
                Ok::<_, ()>(())
            })
        }
        // A keyed group of 100 keys, 10 of them open: its 10 worst keys by
        // text, as the Prometheus exporter asks at each scrape.
        "worst_keys" => {
            let registry = breakerbox::Registry::new();
            let trips = Config::builder()
                .threshold(1)
                .open(Duration::from_millis(3_600_000))
                .build()
                .unwrap();
            let group = registry.keyed::<u64>("ir-worst", &trips, 1_000).unwrap();
            for key in 0..100u64 {
                let breaker = group.breaker(&key);
                let permit = breaker.try_acquire().unwrap();
                if key % 10 == 0 {
                    permit.failure();
                } else {
                    permit.success();
                }
            }
            repeat(n, || {
                black_box(registry.keyed_worst_keys("ir-worst", 10));
                Ok::<_, ()>(())
            })
        }
        other => panic!("unknown case {other}"),
    }
}

/// A ready tower service answering `work(x)` at once, and one request to it.
mod tower_service {
    use std::future::poll_fn;

    use tower::Service;

    pub use crate::fixtures::Work;

    /// Readiness, then the call.
    #[inline(always)]
    pub async fn request<S: Service<u64, Response = u64>>(
        svc: &mut S,
        x: u64,
    ) -> Result<u64, S::Error> {
        poll_fn(|cx| svc.poll_ready(cx)).await?;
        svc.call(x).await
    }
}

/// Calls `f` `n` times, keeping only whether each call succeeded, so that every
/// case pays the same few instructions to consume its result.
#[inline(always)]
fn repeat<T, E>(n: u64, mut f: impl FnMut() -> Result<T, E>) {
    for _ in 0..n {
        black_box(f().is_ok());
    }
}

/// The markdown table of `counts`: each case's instructions per call and, for a
/// case in [`BASES`], its difference from the case it adds to.
fn table(n: u64, counts: &[(&str, Option<f64>)]) -> String {
    use std::fmt::Write;

    let count = |name: &str| counts.iter().find(|c| c.0 == name).and_then(|c| c.1);
    let mut out = format!(
        "Instructions per call: `valgrind --tool=callgrind`, (Ir(2N) - Ir(N)) / N, N = {n}.\n\n"
    );
    out.push_str("| case | instructions per call | over the case it adds to |\n|---|---:|---|\n");
    for (case, value) in counts {
        let Some(value) = value else {
            let _ = writeln!(out, "| {case} | (callgrind failed) | |");
            continue;
        };
        let over = BASES
            .iter()
            .find(|(c, _)| c == case)
            .and_then(|(_, base)| count(base).map(|b| format!("{:+.1} ({base})", value - b)))
            .unwrap_or_default();
        let _ = writeln!(out, "| {case} | {value:.1} | {over} |");
    }
    out
}

/// Instructions callgrind counted for `case` with `n` calls.
fn instructions(case: &str, n: u64) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(exe)
        .env("BREAKER_IR_CASE", case)
        .env("BREAKER_IR_N", n.to_string())
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find(|l| l.contains("Collected :"))?;
    line.rsplit(':').next()?.trim().parse().ok()
}

fn main() {
    if let Ok(case) = std::env::var("BREAKER_IR_CASE") {
        let n = std::env::var("BREAKER_IR_N")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1_000_000);
        return run(&case, n);
    }
    if std::env::args().any(|a| a == "--list") {
        return; // nothing for `cargo bench -- --list` to list
    }
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("instructions: valgrind is not installed; skipped");
        return;
    }
    for (case, base) in BASES {
        assert!(
            CASES.contains(case) && CASES.contains(base),
            "{case} over {base}: not a case"
        );
    }
    const N: u64 = 100_000;
    let mut counts: Vec<(&str, Option<f64>)> = Vec::new();
    for case in CASES {
        let count = match (instructions(case, N), instructions(case, 2 * N)) {
            (Some(one), Some(two)) => Some(two.saturating_sub(one) as f64 / N as f64),
            _ => None,
        };
        eprintln!("instructions: {case} {count:?}");
        counts.push((case, count));
    }
    let table = table(N, &counts);
    println!("\n{table}");
    let path = std::path::Path::new(readme::README);
    readme::write_if_asked(path, &[("instructions", table)]);
}
