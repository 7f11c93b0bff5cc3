//! `breakerbox` against its peers, side by side in one run, each case next to the same
//! bare `#[inline(never)]` call.
//!
//! `cargo bench --bench breakerbox` runs every case (about four minutes on two cores)
//! and ends with a table of medians and ratios, the one the README's "Performance"
//! section quotes. Each group states what one iteration is; times are per call.

use std::hint::black_box;
use std::pin::pin;
use std::sync::Barrier;
use std::time::{Duration, Instant};

// `CallSite` is what the attribute's expansion names: the hand-written fns use it the same way.
use breakerbox::__private_v01::CallSite;
use breakerbox::{circuit_breaker, Breaker, Config, ManualClock, Registry};
use criterion::{BatchSize, Criterion};

#[path = "../fixtures.rs"]
mod fixtures;
mod peers;
#[path = "../readme.rs"]
mod readme;
mod report;
mod tower_layer;

pub use fixtures::{
    block_on, fail, poll_now, run_task, via_call_async, work, work_async, BenchError,
};

/// `b.iter`, keeping only whether each call succeeded. Criterion would otherwise
/// copy each `Result` out with one wide load over the narrower stores that wrote
/// it, a store-forwarding stall (about 8 ns here) that would swamp every case.
#[inline(always)]
pub fn iter_ok<T, E>(b: &mut criterion::Bencher<'_>, mut f: impl FnMut() -> Result<T, E>) {
    b.iter(|| f().is_ok())
}

const FAR: u64 = 3_600_000; // one hour: an open breaker stays open for the whole run

/// `work` behind the attribute, with the config every other case uses.
#[circuit_breaker(group = "bench-attr", threshold = 3, open_ms = 3_600_000)]
fn guarded(x: u64) -> Result<u64, BenchError> {
    work(x)
}

/// Whether a `BenchError` says the dependency is unhealthy.
fn upstream_failed(e: &BenchError) -> bool {
    matches!(e, BenchError::Upstream)
}

/// `work` behind the attribute with a classifier: the body's error is handed to
/// `upstream_failed`, which (unlike the default) keeps the `Result` off the fn's
/// return slot, so it is copied out.
#[circuit_breaker(group = "bench-attr-classified", threshold = 3, open_ms = 3_600_000, is_failure = upstream_failed)]
fn guarded_classified(x: u64) -> Result<u64, BenchError> {
    work(x)
}

/// The shape the attribute gives a fn, without a breaker: call `work`, look at
/// its result, return it. Moving a `Result` that came back through memory into
/// the return slot after reading it costs a store-forwarding stall here, whatever
/// the fn does in between; this row shows that cost on its own.
#[inline(never)]
fn wrapper(x: u64) -> Result<u64, BenchError> {
    let result = work(x);
    black_box(result.is_ok());
    result
}

/// The async version, behind the attribute.
#[circuit_breaker(group = "bench-attr-async", threshold = 3, open_ms = 3_600_000)]
async fn guarded_async(x: u64) -> Result<u64, BenchError> {
    work(x)
}

/// Each async path as users call it: awaited in their own `async fn`.
async fn awaits_bare(x: u64) -> Result<u64, BenchError> {
    work_async(x).await
}

async fn awaits_call_async(
    breaker: &Breaker,
    x: u64,
) -> Result<u64, breakerbox::CallError<BenchError>> {
    breaker.call_async(work_async(x)).await
}

async fn awaits_attribute(x: u64) -> Result<u64, BenchError> {
    guarded_async(x).await
}

/// What the attribute writes, by hand: a fn with its own call site and a permit.
#[inline(never)]
fn hand_written(x: u64) -> Result<u64, BenchError> {
    static SITE: CallSite = CallSite::new();
    let breaker = SITE.global("bench-hand", &CONFIG);
    let permit = breaker.try_acquire()?;
    let result = work(x);
    permit.record(&result);
    result
}

/// The async version, by hand.
async fn hand_written_async(x: u64) -> Result<u64, BenchError> {
    static SITE: CallSite = CallSite::new();
    let breaker = SITE.global("bench-hand-async", &CONFIG);
    let permit = breaker.try_acquire()?;
    let result = async { work(x) }.await;
    permit.record(&result);
    result
}

/// `work` or `fail` behind the attribute, for an open circuit.
#[circuit_breaker(group = "bench-attr-open", threshold = 3, open_ms = 3_600_000)]
fn guarded_open(x: u64, ok: bool) -> Result<u64, BenchError> {
    if ok {
        work(x)
    } else {
        fail(x)
    }
}

/// The config every case uses: what the attributes above declare.
const CONFIG: Config = match Config::builder()
    .threshold(3)
    .open(Duration::from_millis(FAR))
    .build()
{
    Ok(config) => config,
    Err(_) => panic!("valid config"),
};

/// A breaker on the monotonic clock, tripped open.
fn open_breaker() -> Breaker {
    let breaker = Breaker::new("bench-open", CONFIG);
    for _ in 0..3 {
        let _ = breaker.call(|| fail(1));
    }
    assert_eq!(breaker.state(), breakerbox::State::Open);
    breaker
}

/// The permit API by hand, as a user writes it.
#[inline(always)]
fn permit_call(breaker: &Breaker, x: u64) -> Result<u64, BenchError> {
    let permit = breaker.try_acquire()?;
    let result = work(x);
    permit.record(&result);
    result
}

/// The prefix of the rows whose caller's `async fn` [`block_on`] polls.
pub const BLOCK_ON: &str = "block_on: ";
/// The prefix of the rows whose caller's `async fn` [`run_task`] polls.
pub const TASK: &str = "task: ";

/// The name of the [`wrapper`] row, which the report reads.
pub const WRAPPER: &str = "wrapper fn, no breaker (reads its result, returns it)";

fn closed_success(c: &mut Criterion) {
    let mut g = c.benchmark_group("closed_success");
    g.bench_function("bare call", |b| iter_ok(b, || work(black_box(1))));
    let breaker = Breaker::new("bench-closed", CONFIG);
    g.bench_function("breakerbox: permit", |b| {
        iter_ok(b, || permit_call(&breaker, black_box(1)))
    });
    g.bench_function("breakerbox: call closure", |b| {
        iter_ok(b, || breaker.call(|| work(black_box(1))))
    });
    g.bench_function("breakerbox: hand-written fn (call site + permit)", |b| {
        iter_ok(b, || hand_written(black_box(1)))
    });
    g.bench_function("breakerbox: attribute", |b| {
        iter_ok(b, || guarded(black_box(1)))
    });
    g.bench_function("breakerbox: attribute with is_failure", |b| {
        iter_ok(b, || guarded_classified(black_box(1)))
    });
    g.bench_function(WRAPPER, |b| iter_ok(b, || wrapper(black_box(1))));
    peers::closed_success(&mut g);
    g.finish();
}

fn closed_success_async(c: &mut Criterion) {
    let mut g = c.benchmark_group("closed_success_async");
    g.bench_function("bare call", |b| {
        iter_ok(b, || poll_now(work_async(black_box(1))))
    });
    let breaker = Breaker::new("bench-async", CONFIG);
    g.bench_function("breakerbox: call_async", |b| {
        iter_ok(b, || poll_now(breaker.call_async(work_async(black_box(1)))))
    });
    g.bench_function("breakerbox: call_async awaited in an async fn", |b| {
        iter_ok(b, || poll_now(via_call_async(&breaker, black_box(1))))
    });
    g.bench_function("breakerbox: permit in async block", |b| {
        iter_ok(b, || {
            poll_now(async {
                let permit = breaker.try_acquire()?;
                let result = work_async(black_box(1)).await;
                permit.record(&result);
                result
            })
        })
    });
    g.bench_function(
        "breakerbox: hand-written async fn (call site + permit)",
        |b| iter_ok(b, || poll_now(hand_written_async(black_box(1)))),
    );
    g.bench_function("breakerbox: attribute", |b| {
        iter_ok(b, || poll_now(guarded_async(black_box(1))))
    });
    // The caller's `async fn` polled by an executor, not inlined into the loop:
    // each row is held against the bare call polled the same way.
    g.bench_function(format!("{BLOCK_ON}bare call"), |b| {
        iter_ok(b, || block_on(awaits_bare(black_box(1))))
    });
    g.bench_function(format!("{BLOCK_ON}breakerbox: call_async"), |b| {
        iter_ok(b, || block_on(awaits_call_async(&breaker, black_box(1))))
    });
    g.bench_function(format!("{BLOCK_ON}breakerbox: attribute"), |b| {
        iter_ok(b, || block_on(awaits_attribute(black_box(1))))
    });
    g.bench_function(format!("{TASK}bare call"), |b| {
        iter_ok(b, || run_task(pin!(awaits_bare(black_box(1)))))
    });
    g.bench_function(format!("{TASK}breakerbox: call_async"), |b| {
        iter_ok(b, || {
            run_task(pin!(awaits_call_async(&breaker, black_box(1))))
        })
    });
    g.bench_function(format!("{TASK}breakerbox: attribute"), |b| {
        iter_ok(b, || run_task(pin!(awaits_attribute(black_box(1)))))
    });
    peers::closed_success_async(&mut g);
    g.finish();
}

fn open_rejection(c: &mut Criterion) {
    let mut g = c.benchmark_group("open_rejection");
    g.bench_function("bare call", |b| iter_ok(b, || work(black_box(1))));
    g.bench_function("Instant::now (reference)", |b| b.iter(Instant::now));
    let breaker = open_breaker();
    g.bench_function("breakerbox: permit", |b| {
        iter_ok(b, || permit_call(&breaker, black_box(1)))
    });
    let forced = Breaker::new("bench-forced", CONFIG);
    forced.force_open();
    g.bench_function("breakerbox: forced open", |b| {
        iter_ok(b, || permit_call(&forced, black_box(1)))
    });
    for _ in 0..3 {
        let _ = guarded_open(1, false);
    }
    assert!(matches!(guarded_open(1, true), Err(BenchError::Open)));
    g.bench_function("breakerbox: attribute", |b| {
        iter_ok(b, || guarded_open(black_box(1), true))
    });
    peers::open_rejection(&mut g);
    g.finish();
}

/// Pins the calling thread to `cpu` (best effort: a box with fewer CPUs just runs).
pub fn pin_to_cpu(cpu: usize) {
    // SAFETY: `set` is a plain bit set owned by this frame; the call only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// What [`aggregate`] times.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Clocking {
    /// Wall time from the release to the last thread's end: the throughput this
    /// machine delivered, including any time the threads waited for a CPU.
    Wall,
    /// The busiest thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`): the
    /// throughput if each thread had its core to itself. Contention on a shared
    /// cache line still shows (a stalled or retried access burns CPU time); time
    /// spent descheduled by other processes on a busy box does not.
    ThreadCpu,
}

impl Clocking {
    /// The suffix of a case name measured this way.
    pub fn suffix(self) -> &'static str {
        match self {
            Clocking::Wall => "",
            Clocking::ThreadCpu => " (thread CPU time)",
        }
    }
}

fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `threads` threads, thread `i` pinned to CPU `i`, each making `iters` calls
/// of the loop `make(i)` returns, all released at once; returns the time `clocking`
/// says, divided by `threads`, so criterion's "time per iteration" is the
/// aggregate time per call of all threads together.
pub fn aggregate<F, L>(threads: usize, iters: u64, clocking: Clocking, make: F) -> Duration
where
    F: Fn(usize) -> L + Sync,
    L: FnMut(u64),
{
    let start = Barrier::new(threads);
    let spans: Vec<(Instant, Instant, Duration)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (start, make) = (&start, &make);
                s.spawn(move || {
                    pin_to_cpu(i);
                    let mut call = make(i);
                    call(iters.min(1000)); // warm this thread's counters and caches
                    start.wait();
                    let (t0, cpu0) = (Instant::now(), thread_cpu_time());
                    call(iters);
                    (t0, Instant::now(), thread_cpu_time() - cpu0)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total = match clocking {
        Clocking::Wall => {
            let first = spans.iter().map(|s| s.0).min().unwrap();
            let last = spans.iter().map(|s| s.1).max().unwrap();
            last - first
        }
        Clocking::ThreadCpu => spans.iter().map(|s| s.2).max().unwrap(),
    };
    total / threads as u32
}

fn threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("threads");
    for (n, clocking) in [1usize, 2]
        .into_iter()
        .flat_map(|n| [Clocking::Wall, Clocking::ThreadCpu].map(|clocking| (n, clocking)))
    {
        let sfx = clocking.suffix();
        g.bench_function(format!("bare call x{n}{sfx}"), |b| {
            b.iter_custom(|iters| {
                aggregate(n, iters, clocking, |_| {
                    |k: u64| {
                        for _ in 0..k {
                            black_box(work(black_box(1)).is_ok());
                        }
                    }
                })
            })
        });
        let shared = Breaker::new("bench-threads", CONFIG);
        g.bench_function(format!("breakerbox: one breaker x{n}{sfx}"), |b| {
            b.iter_custom(|iters| {
                aggregate(n, iters, clocking, |_| {
                    let breaker = shared.clone();
                    move |k: u64| {
                        for _ in 0..k {
                            black_box(permit_call(&breaker, black_box(1)).is_ok());
                        }
                    }
                })
            })
        });
        let registry = Registry::new();
        let cfg = CONFIG;
        let pair = [
            registry.breaker("bench-a", &cfg),
            registry.breaker("bench-b", &cfg),
        ];
        g.bench_function(
            format!("breakerbox: two breakers of one registry x{n}{sfx}"),
            |b| {
                b.iter_custom(|iters| {
                    aggregate(n, iters, clocking, |i| {
                        let breaker = pair[i].clone();
                        move |k: u64| {
                            for _ in 0..k {
                                black_box(permit_call(&breaker, black_box(1)).is_ok());
                            }
                        }
                    })
                })
            },
        );
        let windowed = Breaker::new(
            "bench-threads-count-window",
            Config::builder()
                .window_calls(100)
                .failure_rate(0.5)
                .open(Duration::from_millis(FAR))
                .build()
                .expect("valid window config"),
        );
        g.bench_function(format!("breakerbox: count window x{n}{sfx}"), |b| {
            b.iter_custom(|iters| {
                aggregate(n, iters, clocking, |_| {
                    let breaker = windowed.clone();
                    move |k: u64| {
                        for _ in 0..k {
                            black_box(permit_call(&breaker, black_box(1)).is_ok());
                        }
                    }
                })
            })
        });
        let timed = Breaker::new(
            "bench-threads-time-window",
            Config::builder()
                .window(Duration::from_secs(10))
                .failure_rate(0.5)
                .open(Duration::from_millis(FAR))
                .build()
                .expect("valid window config"),
        );
        g.bench_function(format!("breakerbox: time window x{n}{sfx}"), |b| {
            b.iter_custom(|iters| {
                aggregate(n, iters, clocking, |_| {
                    let breaker = timed.clone();
                    move |k: u64| {
                        for _ in 0..k {
                            black_box(permit_call(&breaker, black_box(1)).is_ok());
                        }
                    }
                })
            })
        });
        let latency = Breaker::new(
            "bench-threads-latency-window",
            Config::builder()
                .window_calls(100)
                .failure_rate(0.5)
                .latency_p99(Duration::from_secs(1))
                .open(Duration::from_millis(FAR))
                .build()
                .expect("valid window config"),
        );
        g.bench_function(format!("breakerbox: latency window x{n}{sfx}"), |b| {
            b.iter_custom(|iters| {
                aggregate(n, iters, clocking, |_| {
                    let breaker = latency.clone();
                    move |k: u64| {
                        for _ in 0..k {
                            black_box(permit_call(&breaker, black_box(1)).is_ok());
                        }
                    }
                })
            })
        });
        let keyed = breakerbox::keyed::KeyedGroup::<u64>::new("bench-threads-keyed", CONFIG, 1_000);
        g.bench_function(
            format!("breakerbox: keyed group, 64 existing keys x{n}{sfx}"),
            |b| {
                b.iter_custom(|iters| {
                    aggregate(n, iters, clocking, |i| {
                        let keyed = keyed.clone();
                        let mut key = i as u64;
                        move |k: u64| {
                            for _ in 0..k {
                                key = (key + 1) % 64;
                                let breaker = keyed.breaker(&key);
                                black_box(permit_call(&breaker, black_box(1)).is_ok());
                            }
                        }
                    })
                })
            },
        );
        peers::threads(&mut g, n, clocking);
    }
    g.finish();
}

fn policies(c: &mut Criterion) {
    let mut g = c.benchmark_group("policy");
    g.bench_function("bare call", |b| iter_ok(b, || work(black_box(1))));
    let consecutive = Breaker::new("bench-consecutive", CONFIG);
    g.bench_function("consecutive: success", |b| {
        iter_ok(b, || permit_call(&consecutive, black_box(1)))
    });
    // Failures that never reach the threshold: success, failure, success, ...
    let clock = ManualClock::new();
    let mixed = Breaker::with_clock("bench-consecutive-mixed", CONFIG, clock);
    g.bench_function("consecutive: success and failure alternating", |b| {
        let mut flip = false;
        iter_ok(b, || {
            flip = !flip;
            let permit = mixed.try_acquire()?;
            let result = if flip { work(1) } else { fail(1) };
            permit.record(&result);
            result
        })
    });
    let windows = [
        (
            "time window",
            Config::builder().window(Duration::from_secs(10)),
        ),
        (
            "time window + slow calls",
            Config::builder()
                .window(Duration::from_secs(10))
                .slow_call(Duration::from_secs(1))
                .slow_call_rate(0.5),
        ),
        ("count window", Config::builder().window_calls(100)),
        (
            "count window + slow calls",
            Config::builder()
                .window_calls(100)
                .slow_call(Duration::from_secs(1))
                .slow_call_rate(0.5),
        ),
    ];
    for (name, builder) in windows {
        let config = builder
            .failure_rate(0.5)
            .open(Duration::from_millis(FAR))
            .build()
            .expect("valid window config");
        let breaker = Breaker::new(&format!("bench-{name}"), config);
        g.bench_function(format!("{name}: success"), |b| {
            iter_ok(b, || permit_call(&breaker, black_box(1)))
        });
    }
    g.finish();
}

fn call_site(c: &mut Criterion) {
    let mut g = c.benchmark_group("call_site");
    let cfg = CONFIG;
    g.bench_function("first call: registers the group", |b| {
        b.iter_batched(
            || (Registry::new(), CallSite::new()),
            |(registry, site)| {
                let breaker = site.breaker(&registry, "bench-first", &cfg);
                black_box(permit_call(&breaker, black_box(1)).is_ok());
                drop(breaker);
                (registry, site)
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("first call: group already registered", |b| {
        b.iter_batched(
            || {
                let registry = Registry::new();
                registry.breaker("bench-first", &cfg);
                (registry, CallSite::new())
            },
            |(registry, site)| {
                let breaker = site.breaker(&registry, "bench-first", &cfg);
                black_box(permit_call(&breaker, black_box(1)).is_ok());
                drop(breaker);
                (registry, site)
            },
            BatchSize::SmallInput,
        )
    });
    let registry = Registry::new();
    let site = CallSite::new();
    g.bench_function("later call", |b| {
        iter_ok(b, || {
            let breaker = site.breaker(&registry, "bench-later", &cfg);
            permit_call(&breaker, black_box(1))
        })
    });
    g.finish();
}

fn main() {
    let started = std::time::SystemTime::now();
    let machine = report::machine();
    let mut c = Criterion::default()
        .output_directory(&report::dir())
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(30)
        .configure_from_args();
    closed_success(&mut c);
    closed_success_async(&mut c);
    open_rejection(&mut c);
    threads(&mut c);
    policies(&mut c);
    call_site(&mut c);
    tower_layer::layer(&mut c);
    tower_layer::threads(&mut c);
    c.final_summary();
    report::print(started, &machine);
}
