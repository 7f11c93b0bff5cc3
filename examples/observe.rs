//! `cargo run --example observe --features prometheus`: one breaker driven through
//! closed -> open -> half-open -> open -> half-open -> closed on a manual clock,
//! then the registry's Prometheus exposition (text format 0.0.4) on stdout and
//! nothing else, so that a linter can read it:
//!
//! ```text
//! cargo run -q --example observe --features prometheus | promtool check metrics
//! ```

use std::sync::Arc;
use std::time::Duration;

use breakerbox::observe::prometheus::prometheus_client::encoding::prometheus_text;
use breakerbox::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use breakerbox::observe::prometheus::BreakerCollector;
use breakerbox::{Config, ManualClock, Registry, State};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));
    let mut metrics = Metrics::default();
    metrics.register_collector(Box::new(BreakerCollector::new(Arc::clone(&breakers))));

    // A count window: half of the last 4 outcomes failing opens the circuit; a
    // call over 100 ms is slow.
    let config = Config::builder()
        .window_calls(4)
        .failure_rate(0.5)
        .slow_call(Duration::from_millis(100))
        .open(Duration::from_secs(10))
        .build()?;
    let payments = breakers.breaker("payments", &config);
    let expect = |state: State| {
        let now = payments.state();
        if now == state {
            Ok(())
        } else {
            Err(format!("expected {state}, the breaker is {now}"))
        }
    };

    // Closed: one success, then failures until the window trips.
    payments.try_acquire()?.success();
    for _ in 0..3 {
        payments.try_acquire()?.failure();
    }
    expect(State::Open)?;
    // Open: refused without running.
    assert!(payments.try_acquire().is_err());

    // Half-open: the first probe fails and reopens for twice as long...
    clock.advance(Duration::from_secs(10));
    payments.try_acquire()?.failure();
    expect(State::Open)?;
    // ...the next one succeeds and closes the circuit.
    clock.advance(Duration::from_secs(20));
    let probe = payments.try_acquire()?;
    expect(State::HalfOpen)?;
    probe.success();
    expect(State::Closed)?;

    // Closed again: a fast success and a slow one fill the fresh window.
    payments.try_acquire()?.success();
    let slow = payments.try_acquire()?;
    clock.advance(Duration::from_millis(250));
    slow.success();

    let mut exposition = String::new();
    prometheus_text::encode(&mut exposition, &metrics)?;
    print!("{exposition}");
    Ok(())
}
