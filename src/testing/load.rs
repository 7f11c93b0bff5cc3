//! [`FallbackLoad`]: drives a call (a fallback behind an open circuit) from
//! many threads or tokio tasks at once and reports its throughput and latency
//! percentiles ([`LoadReport`]), read from the wall clock.

use std::future::Future;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use super::TestKit;

/// Drives a call `calls` times from `concurrency` threads or tasks at once,
/// with a [`TestKit`] installed in each if one is given, and reports what it
/// measured.
///
/// ```
/// use breakerbox::testing::{FallbackLoad, TestKit};
/// use breakerbox::{circuit_breaker, CircuitOpen};
///
/// fn stale(_: &str) -> Result<String, CircuitOpen> { Ok("stale".to_owned()) }
///
/// #[circuit_breaker(group = "profile", fallback = stale)]
/// fn profile(user: &str) -> Result<String, CircuitOpen> { Ok(format!("fresh {user}")) }
///
/// let kit = TestKit::new();
/// kit.force_open("profile");
/// let report = FallbackLoad::new(4, 1_000).kit(&kit).run(|| {
///     assert_eq!(profile("ada").unwrap(), "stale");
/// });
/// assert_eq!(report.calls, 1_000);
/// assert!(report.p50 <= report.p99 && report.p99 <= report.max);
/// // Every call was refused and answered by the fallback.
/// assert_eq!(kit.registry().get("profile").unwrap().metrics().rejected, 1_000);
/// ```
///
/// # Recipe: the fallback is not the next bottleneck
///
/// Force the group open with a [`TestKit`], drive the annotated fn at the
/// concurrency production sees, and assert the p99 under the bound the
/// service can afford. Run it as a release-mode test (`cargo test --release`)
/// or in a bench: in a debug build the figures say little.
///
/// ```no_run
/// use breakerbox::testing::{FallbackLoad, TestKit};
/// use breakerbox::{circuit_breaker, CircuitOpen};
/// use std::time::Duration;
///
/// #[derive(Debug)]
/// struct Unavailable;
/// impl From<CircuitOpen> for Unavailable {
///     fn from(_: CircuitOpen) -> Self { Unavailable }
/// }
///
/// fn cached_price(_sku: u32) -> Result<u64, Unavailable> { Ok(999) }
///
/// #[circuit_breaker(group = "pricing", fallback = cached_price)]
/// fn price(sku: u32) -> Result<u64, Unavailable> {
///     Ok(u64::from(sku) * 100) // the real lookup, never reached while forced open
/// }
///
/// let kit = TestKit::new();
/// kit.force_open("pricing");
/// let report = FallbackLoad::new(64, 100_000).kit(&kit).run(|| price(7));
/// println!("{report}");
/// assert_eq!(report.calls, 100_000);
/// assert!(report.p99 < Duration::from_millis(2), "the fallback is slow: {report}");
/// ```
///
/// An `async fn` is driven the same way with [`run_async`](Self::run_async), as
/// tokio tasks on the runtime the test runs on.
///
/// # Measured here
///
/// `breakerbox`'s own refusal and fallback path: `#[circuit_breaker]` fns with
/// `fallback = ..`, their groups forced open, measured by `cargo run --release
/// --example fallback_load --features testing` (three runs, low to high) on a
/// 2-core KVM guest shared with other engineers' builds, so the spread is wide
/// and the max is the scheduler's. Each latency includes the two
/// `Instant::now()` reads around the call (about 20 ns here); the 10,000-task
/// load's throughput is mostly the spawning of its tasks.
///
/// | drive | registry | concurrency | calls | calls/s | p50 | p99 |
/// |---|---|---:|---:|---:|---:|---:|
/// | tokio tasks, 2 workers, `async fn` | process-wide | 10,000 | 10,000 | 0.43–0.54 M | 50 ns | 280–370 ns |
/// | tokio tasks, 2 workers, `async fn` | process-wide | 10,000 | 1,000,000 | 6.1–9.3 M | 40–50 ns | 70 ns |
/// | OS threads, sync fn | process-wide | 2 | 1,000,000 | 9.6–14.2 M | 31–40 ns | 41–50 ns |
/// | OS threads, sync fn | process-wide | 64 | 1,000,000 | 10.1–11.9 M | 31–40 ns | 50–60 ns |
/// | tokio tasks, 2 workers, `async fn` | a [`TestKit`]'s | 10,000 | 1,000,000 | 6.6–7.7 M | 50–60 ns | 90–221 ns |
/// | OS threads, sync fn | a [`TestKit`]'s | 64 | 1,000,000 | 9.8–11.8 M | 40 ns | 200–251 ns |
///
/// The refusal answered by a fallback allocates nothing after a call site's
/// first call, on one thread and on each thread of a concurrent load:
/// `tests/testing_fallback_under_load.rs` counts it with a counting global
/// allocator.
#[derive(Clone, Debug)]
pub struct FallbackLoad {
    concurrency: usize,
    calls: usize,
    kit: Option<TestKit>,
}

impl FallbackLoad {
    /// `calls` calls in all, shared as evenly as they divide between
    /// `concurrency` threads (or tasks) that run at once.
    ///
    /// # Panics
    ///
    /// When `concurrency` is 0.
    pub fn new(concurrency: usize, calls: usize) -> Self {
        assert!(
            concurrency > 0,
            "FallbackLoad needs a concurrency of at least 1"
        );
        FallbackLoad {
            concurrency,
            calls,
            kit: None,
        }
    }

    /// Installs `kit` in every thread (with [`TestKit::run`]) or task (with
    /// [`TestKit::scope`]) the load starts, so the calls reach the kit's
    /// registry and the groups it forced.
    pub fn kit(mut self, kit: &TestKit) -> Self {
        self.kit = Some(kit.clone());
        self
    }

    /// The calls the `worker`th thread or task makes.
    fn share(&self, worker: usize) -> usize {
        self.calls / self.concurrency + usize::from(worker < self.calls % self.concurrency)
    }

    /// Runs `call` from `concurrency` OS threads (scoped, started together
    /// behind a barrier) and waits for all of them. Each call's latency is the
    /// wall-clock time around it; the throughput is the calls over the time
    /// from the first thread's first call to the last thread's end.
    ///
    /// # Panics
    ///
    /// When a call panics (the panic is passed on once every thread ended),
    /// or a thread cannot be started.
    pub fn run<T>(&self, call: impl Fn() -> T + Sync) -> LoadReport {
        let gate = Barrier::new(self.concurrency + 1);
        let (latencies, elapsed) = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..self.concurrency)
                .map(|worker| {
                    let (call, gate, calls) = (&call, &gate, self.share(worker));
                    let kit = self.kit.clone();
                    std::thread::Builder::new()
                        .name(format!("fallback-load-{worker}"))
                        .spawn_scoped(scope, move || {
                            let work = || {
                                let mut latencies = Vec::with_capacity(calls);
                                gate.wait();
                                let began = Instant::now();
                                for _ in 0..calls {
                                    let start = Instant::now();
                                    std::hint::black_box(call());
                                    latencies.push(start.elapsed());
                                }
                                Worker {
                                    began,
                                    ended: Instant::now(),
                                    latencies,
                                }
                            };
                            match kit {
                                Some(kit) => kit.run(work),
                                None => work(),
                            }
                        })
                        .expect("FallbackLoad could not start a thread")
                })
                .collect();
            gate.wait();
            join_all(workers.into_iter().map(|w| w.join()))
        });
        LoadReport::new(self.concurrency, latencies, elapsed)
    }

    /// Runs `call`'s futures from `concurrency` tokio tasks spawned on the
    /// runtime this is awaited on (a multi-thread runtime runs them on its
    /// workers), each awaiting its calls one after the other. Each call's
    /// latency is the wall-clock time from its call to its output; the
    /// throughput is the calls over the time from the first spawn to the
    /// last task's end. Real time: under paused tokio time the figures are
    /// still wall-clock ones.
    ///
    /// ```
    /// use breakerbox::testing::{FallbackLoad, TestKit};
    /// use breakerbox::{circuit_breaker, CircuitOpen};
    ///
    /// async fn cached(_: u32) -> Result<u32, CircuitOpen> { Ok(0) }
    ///
    /// #[circuit_breaker(group = "stock", fallback = cached)]
    /// async fn stock(sku: u32) -> Result<u32, CircuitOpen> { Ok(sku) }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let kit = TestKit::new();
    /// kit.force_open("stock");
    /// let report = FallbackLoad::new(1_000, 5_000).kit(&kit).run_async(|| async {
    ///     assert_eq!(stock(7).await, Ok(0));
    /// }).await;
    /// assert_eq!(report.calls, 5_000);
    /// assert_eq!(kit.registry().get("stock").unwrap().metrics().rejected, 5_000);
    /// # }
    /// ```
    ///
    /// # Panics
    ///
    /// When a call panics (passed on once every task ended), or outside a
    /// tokio runtime.
    pub fn run_async<C, F>(&self, call: C) -> impl Future<Output = LoadReport> + Send + 'static
    where
        C: Fn() -> F + Send + Sync + 'static,
        F: Future + Send + 'static,
        F::Output: Send,
    {
        let load = self.clone();
        async move {
            let call = Arc::new(call);
            let start = Instant::now();
            let mut tasks = Vec::with_capacity(load.concurrency);
            for worker in 0..load.concurrency {
                let (call, calls) = (call.clone(), load.share(worker));
                let work = async move {
                    let mut latencies = Vec::with_capacity(calls);
                    for _ in 0..calls {
                        let start = Instant::now();
                        std::hint::black_box(call().await);
                        latencies.push(start.elapsed());
                    }
                    Worker {
                        began: start,
                        ended: Instant::now(),
                        latencies,
                    }
                };
                tasks.push(match &load.kit {
                    Some(kit) => tokio::spawn(kit.scope(work)),
                    None => tokio::spawn(work),
                });
            }
            let mut joined = Vec::with_capacity(tasks.len());
            for task in tasks {
                joined.push(task.await.map_err(|e| match e.try_into_panic() {
                    Ok(payload) => payload,
                    Err(e) => Box::new(format!("a FallbackLoad task ended: {e}")),
                }));
            }
            let (latencies, elapsed) = join_all(joined);
            LoadReport::new(load.concurrency, latencies, elapsed)
        }
    }
}

/// What one thread or task measured.
struct Worker {
    /// When it made its first call (for a task: when the load began).
    began: Instant,
    ended: Instant,
    latencies: Vec<Duration>,
}

/// Every worker's latencies, and the time from the first one's start to the
/// last one's end; or the first panic, passed on after all ended.
fn join_all(
    results: impl IntoIterator<Item = std::thread::Result<Worker>>,
) -> (Vec<Duration>, Duration) {
    let mut all = Vec::new();
    let mut span: Option<(Instant, Instant)> = None;
    let mut panic = None;
    for result in results {
        match result {
            Ok(worker) => {
                all.extend(worker.latencies);
                span = Some(match span {
                    None => (worker.began, worker.ended),
                    Some((began, ended)) => (began.min(worker.began), ended.max(worker.ended)),
                });
            }
            Err(payload) => panic = panic.or(Some(payload)),
        }
    }
    if let Some(payload) = panic {
        std::panic::resume_unwind(payload);
    }
    let elapsed = span.map_or(Duration::ZERO, |(began, ended)| ended - began);
    (all, elapsed)
}

/// What a [`FallbackLoad`] measured: wall-clock figures, so they vary with
/// the machine and what else runs on it. Its `Display` is one line.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct LoadReport {
    /// Calls made.
    pub calls: usize,
    /// Threads or tasks that made them at once.
    pub concurrency: usize,
    /// From the start to the last worker's end.
    pub elapsed: Duration,
    /// The median call's latency (nearest rank); zero without calls.
    pub p50: Duration,
    /// The 99th percentile call's latency (nearest rank); zero without calls.
    pub p99: Duration,
    /// The slowest call's latency; zero without calls.
    pub max: Duration,
}

impl LoadReport {
    fn new(concurrency: usize, mut latencies: Vec<Duration>, elapsed: Duration) -> Self {
        latencies.sort_unstable();
        let rank = |p: f64| match latencies.len() {
            0 => Duration::ZERO,
            n => latencies[((p * n as f64).ceil() as usize).clamp(1, n) - 1],
        };
        LoadReport {
            calls: latencies.len(),
            concurrency,
            elapsed,
            p50: rank(0.50),
            p99: rank(0.99),
            max: rank(1.0),
        }
    }

    /// Calls per second over [`elapsed`](Self::elapsed); zero when nothing
    /// was measured.
    pub fn throughput(&self) -> f64 {
        match self.elapsed.as_secs_f64() {
            secs if secs > 0.0 => self.calls as f64 / secs,
            _ => 0.0,
        }
    }
}

impl std::fmt::Display for LoadReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} calls at concurrency {} in {:.1?}: {:.0} calls/s, p50 {:.1?}, p99 {:.1?}, max {:.1?}",
            self.calls,
            self.concurrency,
            self.elapsed,
            self.throughput(),
            self.p50,
            self.p99,
            self.max
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let latencies = (1..=200).rev().map(ms).collect();
        let report = LoadReport::new(3, latencies, Duration::from_secs(2));
        assert_eq!(report.calls, 200);
        assert_eq!(
            (report.p50, report.p99, report.max),
            (ms(100), ms(198), ms(200))
        );
        assert_eq!(report.throughput(), 100.0);
    }

    #[test]
    fn an_empty_load_reports_zeros() {
        let report = LoadReport::new(2, Vec::new(), Duration::ZERO);
        assert_eq!(
            (report.calls, report.p99, report.throughput()),
            (0, Duration::ZERO, 0.0)
        );
    }

    #[test]
    fn calls_are_shared_between_the_workers() {
        let load = FallbackLoad::new(4, 10);
        assert_eq!(
            (0..4).map(|w| load.share(w)).collect::<Vec<_>>(),
            [3, 3, 2, 2]
        );
    }
}
