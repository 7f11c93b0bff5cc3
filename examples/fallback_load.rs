//! `cargo run --release --example fallback_load --features testing`
//!
//! Measures breakerbox's own refusal and fallback path under load with
//! `breakerbox::testing::FallbackLoad`: `#[circuit_breaker]` fns with a
//! `fallback`, their groups forced open, driven by 10,000 tokio tasks at once
//! and by OS threads; once on the process-wide registry (as production runs)
//! and once under a `TestKit` (as a test runs). Prints one line per load.

use breakerbox::testing::{FallbackLoad, LoadReport, TestKit};
use breakerbox::{circuit_breaker, CircuitOpen};

#[derive(Debug)]
struct Unavailable;

impl From<CircuitOpen> for Unavailable {
    fn from(_: CircuitOpen) -> Self {
        Unavailable
    }
}

fn cached_price(sku: u32) -> Result<u64, Unavailable> {
    Ok(u64::from(sku))
}

async fn cached_price_async(sku: u32) -> Result<u64, Unavailable> {
    Ok(u64::from(sku))
}

#[circuit_breaker(group = "pricing", fallback = cached_price)]
fn price(sku: u32) -> Result<u64, Unavailable> {
    Ok(u64::from(sku) * 100)
}

#[circuit_breaker(group = "pricing-async", fallback = cached_price_async)]
async fn price_async(sku: u32) -> Result<u64, Unavailable> {
    Ok(u64::from(sku) * 100)
}

fn show(what: &str, report: &LoadReport) {
    println!("{what:<44} {report}");
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("a tokio runtime");

    // The process-wide registry: each group made by its first call, then forced open.
    let _ = price(1);
    let _ = runtime.block_on(price_async(1));
    for group in ["pricing", "pricing-async"] {
        breakerbox::registry().get(group).unwrap().force_open();
    }
    let tasks = |calls| {
        runtime.block_on(FallbackLoad::new(10_000, calls).run_async(|| async {
            assert_eq!(price_async(7).await.unwrap(), 7);
        }))
    };
    show("tokio tasks, 2 workers, async fn", &tasks(10_000));
    show("tokio tasks, 2 workers, async fn", &tasks(1_000_000));
    let threads = |concurrency, calls| {
        FallbackLoad::new(concurrency, calls).run(|| {
            assert_eq!(price(7).unwrap(), 7);
        })
    };
    show("threads, sync fn", &threads(2, 1_000_000));
    show("threads, sync fn", &threads(64, 1_000_000));
    let refused = |group| {
        breakerbox::registry()
            .get(group)
            .unwrap()
            .metrics()
            .rejected
    };
    assert_eq!(refused("pricing-async"), 1_010_000);
    assert_eq!(refused("pricing"), 2_000_000);

    // The same fns under a kit: a lookup in the kit's registry per call.
    let kit = TestKit::new();
    kit.force_open("pricing");
    kit.force_open("pricing-async");
    let report = runtime.block_on(FallbackLoad::new(10_000, 1_000_000).kit(&kit).run_async(
        || async {
            assert_eq!(price_async(7).await.unwrap(), 7);
        },
    ));
    show("under a TestKit: tokio tasks, async fn", &report);
    let report = FallbackLoad::new(64, 1_000_000)
        .kit(&kit)
        .run(|| assert_eq!(price(7).unwrap(), 7));
    show("under a TestKit: threads, sync fn", &report);
}
