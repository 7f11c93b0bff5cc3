//! Helpers shared by the core's integration tests: breakers on a manual clock,
//! outcomes by the letter, the counters by name, and an allocation counter.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering::SeqCst};
use std::time::Duration;

use breaker_core::{Breaker, Config, ManualClock, Metrics, WindowMetrics};

/// A breaker on a fresh manual clock, with the clock handle.
pub fn manual(config: Config) -> (Breaker, ManualClock) {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("test", config, clock.clone());
    (breaker, clock)
}

/// Opens `breaker` by failing `threshold` admitted calls.
pub fn trip(breaker: &Breaker) {
    for _ in 0..breaker.config().threshold() {
        breaker
            .try_acquire()
            .expect("closed breaker admits")
            .failure();
    }
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn config(threshold: u32, open_ms: u64) -> Config {
    Config::builder()
        .threshold(threshold)
        .open_ms(open_ms)
        .build()
        .expect("valid test config")
}

/// One admitted call that fails.
pub fn fail(b: &Breaker) {
    b.try_acquire().expect("admitted").failure();
}

/// One admitted call that succeeds.
pub fn succeed(b: &Breaker) {
    b.try_acquire().expect("admitted").success();
}

/// One admitted call per letter: `F` fails, `S` succeeds, `I` is ignored.
pub fn outcomes(b: &Breaker, letters: &str) {
    for c in letters.chars() {
        let permit = b.try_acquire().expect("admitted");
        match c {
            'F' => permit.failure(),
            'S' => permit.success(),
            'I' => permit.ignore(),
            other => panic!("unknown outcome {other}"),
        }
    }
}

/// What a window policy's window holds now.
pub fn window(b: &Breaker) -> WindowMetrics {
    b.metrics().window.expect("a window policy")
}

/// The outcome counters of a breaker (or of a model of one), compared by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub successes: u64,
    pub failures: u64,
    pub ignored: u64,
    pub abandoned: u64,
    pub stale: u64,
    pub times_opened: u64,
}

/// The [`Tally`] of `m`.
pub fn tally(m: &Metrics) -> Tally {
    Tally {
        successes: m.successes,
        failures: m.failures,
        ignored: m.ignored,
        abandoned: m.abandoned,
        stale: m.stale,
        times_opened: m.times_opened,
    }
}

/// An allocator that counts the allocations the current thread makes inside
/// [`allocations_during`]. A test binary installs it with
/// `#[global_allocator] static ALLOCATOR: CountingAllocator = CountingAllocator;`.
pub struct CountingAllocator;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is passed to `System` unchanged; the counting touches only
// const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNTING.try_with(|on| {
            if on.get() {
                ALLOCATIONS.with(|n| n.set(n.get() + 1));
            }
        });
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// How many allocations the current thread made while running `f` (under the
/// [`CountingAllocator`]).
pub fn allocations_during(f: impl FnOnce()) -> u64 {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    ALLOCATIONS.with(|n| n.get())
}

/// A global allocator that keeps the bytes live in the whole process, for the
/// tests of how much a structure holds (one test per file, so nothing else
/// allocates meanwhile). A test file installs it with
/// `#[global_allocator] static ALLOCATOR: LiveBytes = LiveBytes;`.
pub struct LiveBytes;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator unchanged, only counting; the
// default `realloc` goes through these two, so it is counted too.
unsafe impl GlobalAlloc for LiveBytes {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Bytes live in the process now (with [`LiveBytes`] installed).
pub fn live_bytes() -> isize {
    LIVE.load(SeqCst)
}

/// Runs `f` on a thread of its own and waits for it at most 10 s, so that a
/// deadlock fails the test instead of hanging it; a panic in `f` goes on.
pub fn within_10s(f: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        f();
        done.send(()).unwrap();
    });
    match finished.recv_timeout(Duration::from_secs(10)) {
        Ok(()) => worker.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(worker.join().unwrap_err())
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("deadlock: still running after 10 s")
        }
    }
}
