//! A `log` backend that inspects the registry on each record does not deadlock
//! it: the registry logs a conflict only after it has released its write lock
//! and the conflicts' mutex, so a logger may call `snapshot()`.
//!
//! `log` allows one logger per process, so this test has its own binary.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::OnceLock;

use breaker_core::{Config, Registry, State};

mod support;
use support::within_10s;

static REGISTRY: OnceLock<Registry> = OnceLock::new();
/// Records the logger saw, and how many of them found the registry usable.
static RECORDS: AtomicU64 = AtomicU64::new(0);
static INSPECTED: AtomicU64 = AtomicU64::new(0);

/// A logger that, on every record, reads the registry's snapshot, its
/// conflicts, and makes a guarded call through it: each takes a lock of the
/// registry or a breaker.
struct Inspecting;

impl log::Log for Inspecting {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }

    fn log(&self, _: &log::Record) {
        RECORDS.fetch_add(1, SeqCst);
        let Some(registry) = REGISTRY.get() else {
            return;
        };
        let groups = registry.snapshot().len();
        let conflicts = registry.conflicts().len();
        let guarded = registry
            .breaker("audit", &Config::default())
            .call(|| Ok::<_, ()>(groups + conflicts));
        if guarded.is_ok() {
            INSPECTED.fetch_add(1, SeqCst);
        }
    }

    fn flush(&self) {}
}

#[test]
fn a_logger_that_inspects_the_registry_does_not_deadlock_a_conflict_or_a_transition() {
    log::set_logger(&Inspecting).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    let registry = REGISTRY.get_or_init(Registry::new);

    within_10s(|| {
        let registry = REGISTRY.get().unwrap();
        let a = Config::builder().threshold(1).build().unwrap();
        let b = Config::builder().threshold(2).build().unwrap();
        registry.breaker("g", &a);
        registry.breaker("g", &b); // a conflict: logged
                                   // Transitions are logged too, each from its own path.
        let g = registry.breaker("g", &a);
        g.try_acquire().unwrap().failure(); // trip
        g.force_open();
        g.reset();
    });

    assert_eq!(registry.conflicts().len(), 1);
    assert_eq!(registry.get("g").unwrap().state(), State::Closed);
    // The conflict and three transitions were logged, and each record found
    // the registry usable from inside the logger.
    assert!(RECORDS.load(SeqCst) >= 4, "{}", RECORDS.load(SeqCst));
    assert_eq!(INSPECTED.load(SeqCst), RECORDS.load(SeqCst));
}
