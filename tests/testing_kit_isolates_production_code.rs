//! A production-shaped module (plain `#[circuit_breaker]` fns, no `registry =`)
//! tested through `breakerbox::testing`: each test's kit gets the breakers the
//! code reaches, on the kit's clock, and tests racing on real threads never see
//! each other's breakers nor touch the process-wide registry.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use breakerbox::testing::{Script, TestKit};
use breakerbox::{registry, State};

/// The application's code, as it ships.
mod shop {
    use breakerbox::{circuit_breaker, CircuitOpen};

    #[derive(Debug, PartialEq)]
    pub enum ShopError {
        Down,
        Open,
    }

    impl From<CircuitOpen> for ShopError {
        fn from(_: CircuitOpen) -> Self {
            ShopError::Open
        }
    }

    pub trait Warehouse {
        fn stock(&self, sku: &str) -> Result<u32, ShopError>;
    }

    /// Stock from the warehouse; unknown (`None`) while it is down.
    #[circuit_breaker(group = "warehouse", threshold = 2, open_ms = 1000, fallback = stock_unknown)]
    pub fn stock(warehouse: &dyn Warehouse, sku: &str) -> Result<Option<u32>, ShopError> {
        warehouse.stock(sku).map(Some)
    }

    fn stock_unknown(_: &dyn Warehouse, _: &str) -> Result<Option<u32>, ShopError> {
        Ok(None)
    }

    /// A keyed group: one breaker per carrier.
    #[circuit_breaker(group = "carriers", key = carrier.to_owned(), threshold = 1)]
    pub fn quote(carrier: &str, up: bool) -> Result<u32, ShopError> {
        if up {
            Ok(7)
        } else {
            Err(ShopError::Down)
        }
    }

    /// Used only by the test of what happens once a kit is gone.
    #[circuit_breaker(group = "ping")]
    pub fn ping() -> Result<(), ShopError> {
        Ok(())
    }
}

use shop::ShopError;

/// A fake warehouse answering from a script.
struct Fake(Script<Result<u32, ShopError>>);

impl shop::Warehouse for Fake {
    fn stock(&self, _: &str) -> Result<u32, ShopError> {
        self.0.next()
    }
}

#[test]
fn the_kit_takes_the_attributes_breakers_off_the_process_registry() {
    let kit = TestKit::new();
    let _installed = kit.install();
    let fake = Fake(Script::new([Ok(4)]));
    assert_eq!(shop::stock(&fake, "sku-1"), Ok(Some(4)));
    assert_eq!(
        kit.registry().get("warehouse").unwrap().metrics().successes,
        1
    );
    assert!(registry().get("warehouse").is_none());
}

#[test]
fn the_circuit_opens_and_probes_on_the_kits_clock() {
    let kit = TestKit::new();
    let _installed = kit.install();
    let fake = Fake(Script::new([
        Err(ShopError::Down),
        Err(ShopError::Down),
        Ok(9),
    ]));
    assert_eq!(shop::stock(&fake, "a"), Err(ShopError::Down));
    assert_eq!(shop::stock(&fake, "a"), Err(ShopError::Down));
    assert_eq!(kit.state("warehouse"), Some(State::Open));
    // Open: the fallback answers and the warehouse is not called.
    assert_eq!(shop::stock(&fake, "a"), Ok(None));
    assert_eq!(fake.0.given(), 2);
    kit.advance(Duration::from_millis(999));
    assert_eq!(shop::stock(&fake, "a"), Ok(None));
    kit.advance(Duration::from_millis(1));
    assert_eq!(shop::stock(&fake, "a"), Ok(Some(9)));
    kit.assert_transitions(
        "warehouse",
        &[
            "closed -> open (tripped by consecutive_failures)",
            "open -> half_open (open_elapsed)",
            "half_open -> closed (probes_succeeded)",
        ],
    );
}

#[test]
fn a_group_forced_open_before_its_first_call_answers_with_the_fallback() {
    let kit = TestKit::new();
    let _installed = kit.install();
    kit.force_open("warehouse");
    let fake = Fake(Script::new([]));
    assert_eq!(shop::stock(&fake, "a"), Ok(None));
    assert_eq!(fake.0.given(), 0);
    assert_eq!(kit.state("warehouse"), Some(State::ForcedOpen));
    // Its config is the attribute's, not a default.
    assert_eq!(
        kit.registry()
            .get("warehouse")
            .unwrap()
            .config()
            .threshold(),
        2
    );
    kit.reset("warehouse");
    let fake = Fake(Script::new([Ok(1)]));
    assert_eq!(shop::stock(&fake, "a"), Ok(Some(1)));
}

#[test]
fn a_key_of_a_keyed_group_is_forced_and_tracked_alone() {
    let kit = TestKit::new();
    let _installed = kit.install();
    assert!(!kit.force_key_open::<String, str>("carriers", "post"));
    assert_eq!(shop::quote("post", true), Ok(7));
    assert!(kit.force_key_open::<String, str>("carriers", "post"));
    assert_eq!(shop::quote("post", true), Err(ShopError::Open));
    assert_eq!(shop::quote("courier", false), Err(ShopError::Down));
    assert_eq!(kit.key_transitions("carriers", "post").len(), 1);
    assert_eq!(
        kit.key_transitions("carriers", "courier")[0].to,
        State::Open
    );
    assert!(registry()
        .get_keyed::<String>("carriers")
        .unwrap()
        .is_none());
}

#[test]
fn a_dropped_guard_gives_the_attributes_back_to_the_process_registry() {
    let kit = TestKit::new();
    {
        let _installed = kit.install();
        shop::ping().unwrap();
        let inner = TestKit::new();
        inner.run(|| shop::ping().unwrap());
        // The inner kit's guard put the outer kit back.
        shop::ping().unwrap();
        assert_eq!(inner.registry().get("ping").unwrap().metrics().successes, 1);
    }
    shop::ping().unwrap();
    assert_eq!(kit.registry().get("ping").unwrap().metrics().successes, 2);
    assert_eq!(registry().get("ping").unwrap().metrics().successes, 1);
}

#[test]
fn tests_racing_on_threads_never_see_each_others_breakers() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 200;
    let start = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|i| {
            let start = start.clone();
            std::thread::spawn(move || {
                let kit = TestKit::new();
                let _installed = kit.install();
                // Odd threads' warehouse always answers; even ones' fails every
                // other call, which never makes two failures in a row.
                let outcomes = (0..ROUNDS).map(|n| {
                    if i % 2 == 0 && n % 2 == 1 {
                        Err(ShopError::Down)
                    } else {
                        Ok(1)
                    }
                });
                let fake = Fake(Script::new(outcomes));
                start.wait();
                for _ in 0..ROUNDS {
                    let _ = shop::stock(&fake, "a");
                }
                let metrics = kit.registry().get("warehouse").unwrap().metrics();
                (
                    i,
                    metrics.successes,
                    metrics.failures,
                    kit.transitions("warehouse").len(),
                )
            })
        })
        .collect();
    for worker in workers {
        let (i, successes, failures, transitions) = worker.join().unwrap();
        let failed = if i % 2 == 0 { ROUNDS as u64 / 2 } else { 0 };
        assert_eq!(
            (successes, failures),
            (ROUNDS as u64 - failed, failed),
            "thread {i}"
        );
        assert_eq!(transitions, 0, "thread {i}");
    }
    assert!(registry().get("warehouse").is_none());
}
