//! A call dropped at its `timeout_ms` deadline lasted at least the deadline on
//! the breaker's clock: it counts as slow and its latency sample is the
//! deadline, also when the breaker's clock reads less than the deadline (a
//! `ManualClock` at 0 under a paused runtime, as in the docs' examples).

use std::future::pending;
use std::time::Duration;

use breaker_core::{CallError, Config, ManualClock, Registry, Timer};

/// Tokio's sleep, as the facade's `tokio` feature provides it.
struct TokioTimer;
impl Timer for TokioTimer {
    type Sleep = tokio::time::Sleep;
    fn sleep(&self, after: Duration) -> tokio::time::Sleep {
        tokio::time::sleep(after)
    }
}

fn config(time_window: bool) -> Config {
    let builder = Config::builder();
    let builder = if time_window {
        builder.window(Duration::from_secs(60))
    } else {
        builder.window_calls(10)
    };
    builder
        .min_calls(10)
        .latency_p99(Duration::from_millis(90))
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap()
}

/// One call that hangs past its deadline on a registry whose clock reads
/// `clock_at`; the breaker's metrics after it.
async fn one_hung_call(
    group: &str,
    clock_at: Duration,
    time_window: bool,
) -> breaker_core::Metrics {
    let clock = ManualClock::new();
    clock.advance(clock_at);
    let registry = Registry::with_clock(clock);
    let breaker = registry.breaker(group, &config(time_window));
    let late = breaker
        .call_async_guarded(&TokioTimer, pending::<Result<(), &str>>())
        .await;
    assert!(matches!(late, Err(CallError::TimedOut(_))), "{late:?}");
    breaker.metrics()
}

fn assert_slow_at_the_deadline(m: &breaker_core::Metrics) {
    assert_eq!((m.failures, m.timeouts), (1, 1));
    let window = m.window.expect("a window");
    assert_eq!(
        (window.calls, window.failures, window.slow_calls),
        (1, 1, 1),
        "the timed-out call is slow"
    );
    let p99 = m.latency_p99.expect("one sample");
    assert!(
        p99 >= Duration::from_millis(100) && p99 <= Duration::from_millis(113),
        "the sample is the deadline's bin, not {p99:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_on_a_clock_at_zero_is_slow_and_samples_the_deadline() {
    let m = one_hung_call("timed-out-at-zero", Duration::ZERO, false).await;
    assert_slow_at_the_deadline(&m);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_on_a_clock_short_of_the_deadline_is_slow_and_samples_the_deadline() {
    let m = one_hung_call("timed-out-young-clock", Duration::from_millis(30), false).await;
    assert_slow_at_the_deadline(&m);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_on_a_clock_past_the_deadline_is_slow_and_samples_the_deadline() {
    let m = one_hung_call("timed-out-old-clock", Duration::from_secs(3_600), false).await;
    assert_slow_at_the_deadline(&m);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_on_a_time_window_with_its_clock_at_zero_is_slow_and_samples_the_deadline()
{
    let m = one_hung_call("timed-out-time-window", Duration::ZERO, true).await;
    assert_slow_at_the_deadline(&m);
}
