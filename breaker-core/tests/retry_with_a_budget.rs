//! Retries through a breaker: exact attempts and waits on a `ManualClock`
//! with its seeded jitter, no retry of a refusal nor after a trip, a
//! server's delay as the floor, and the budget at its boundary and under any
//! outcomes.

use std::cell::Cell;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::events::Event;
use breaker_core::{
    Breaker, CallError, Clock, Config, ManualClock, OpenReason, Registry, Retry, RetryAfterHint,
    RetryPolicy,
};
use proptest::prelude::*;

const MS: u64 = 1_000_000;

#[derive(Debug, PartialEq)]
struct Busy(Option<Duration>);

impl RetryAfterHint for Busy {
    fn retry_after(&self) -> Option<Duration> {
        self.0
    }
}

fn never_trips() -> Config {
    Config::builder().threshold(1_000).build().unwrap()
}

/// The clock readings at which each attempt of one always-failing call started.
fn attempt_times(seed: u64, retry: &Retry) -> Vec<u64> {
    let clock = ManualClock::new().with_jitter_seed(seed);
    let breaker = Breaker::with_clock("timed", never_trips(), clock.clone());
    let mut times = Vec::new();
    let out = breaker.call_retrying(retry, || {
        times.push(clock.now_nanos());
        Err::<(), _>(Busy(None))
    });
    assert_eq!(out, Err(CallError::Inner(Busy(None))));
    times
}

#[test]
fn three_retries_make_four_attempts_each_within_its_doubled_ceiling() {
    let policy = RetryPolicy::new(3)
        .delay(Duration::from_millis(100))
        .max_delay(Duration::from_millis(300))
        .no_budget();
    let times = attempt_times(7, &Retry::new(policy));
    assert_eq!(times.len(), 4);
    let waits: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    for (wait, ceiling) in waits.iter().zip([100 * MS, 200 * MS, 300 * MS]) {
        assert!(*wait <= ceiling, "{waits:?}");
    }
    // The same seed draws the same waits; another seed, others.
    assert_eq!(attempt_times(7, &Retry::new(policy)), times);
    assert_ne!(attempt_times(8, &Retry::new(policy)), times);
}

#[test]
fn a_server_delay_longer_than_the_backoff_is_waited_exactly() {
    static RETRY: Retry = Retry::new(
        RetryPolicy::new(2)
            .delay(Duration::from_millis(10))
            .max_delay(Duration::from_secs(5))
            .no_budget(),
    );
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("hinted", never_trips(), clock.clone());
    let mut times = Vec::new();
    let _ = breaker.call_retrying(&RETRY, || {
        times.push(clock.now_nanos());
        Err::<(), _>(Busy(Some(Duration::from_secs(3))))
    });
    assert_eq!(times, [0, 3_000 * MS, 6_000 * MS]);
}

#[test]
fn a_server_delay_shorter_than_the_draw_never_shortens_it() {
    let policy = RetryPolicy::new(4)
        .delay(Duration::from_secs(1))
        .max_delay(Duration::from_secs(1))
        .no_budget();
    let run = |hint| {
        let clock = ManualClock::new();
        let breaker = Breaker::with_clock("floor", never_trips(), clock.clone());
        let mut times = Vec::new();
        let _ = breaker.call_retrying(&Retry::new(policy), || {
            times.push(clock.now_nanos());
            Err::<(), _>(Busy(hint))
        });
        times
    };
    let drawn = run(None);
    assert_eq!(run(Some(Duration::from_nanos(1))), drawn);
    assert!(drawn.windows(2).any(|w| w[1] - w[0] > 1), "{drawn:?}");
}

#[test]
fn a_forced_open_circuit_is_never_retried() {
    static RETRY: Retry = Retry::new(RetryPolicy::new(5).no_budget());
    let breaker = Breaker::with_clock("forced", never_trips(), ManualClock::new());
    breaker.force_open();
    let ran = Cell::new(0);
    let out = breaker.call_retrying(&RETRY, || {
        ran.set(ran.get() + 1);
        Ok::<_, Busy>(())
    });
    assert!(matches!(out, Err(CallError::Open(o)) if o.reason() == OpenReason::ForcedOpen));
    assert_eq!(ran.get(), 0);
    assert_eq!(breaker.metrics().retries, 0);
}

#[test]
fn a_half_open_circuit_with_its_probe_taken_is_refused_at_once() {
    static RETRY: Retry = Retry::new(RetryPolicy::new(5).no_budget());
    let clock = ManualClock::new();
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(1))
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("probing", config, clock.clone());
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(1));
    let probe = breaker.try_acquire().unwrap();
    let ran = Cell::new(0);
    let out = breaker.call_retrying(&RETRY, || {
        ran.set(ran.get() + 1);
        Ok::<_, Busy>(())
    });
    assert!(matches!(out, Err(CallError::Open(o)) if o.reason() == OpenReason::HalfOpenFull));
    assert_eq!(ran.get(), 0);
    assert_eq!(clock.now_nanos(), 1_000 * MS, "no wait for a refusal");
    probe.success();
}

#[test]
fn no_retry_starts_after_the_failure_that_opened_the_circuit() {
    static RETRY: Retry = Retry::new(RetryPolicy::new(5).no_budget());
    let clock = ManualClock::new();
    let config = Config::builder().threshold(2).build().unwrap();
    let breaker = Breaker::with_clock("trips", config, clock.clone());
    let mut times = Vec::new();
    let out = breaker.call_retrying(&RETRY, || {
        times.push(clock.now_nanos());
        Err::<(), _>(Busy(None))
    });
    assert_eq!(
        out,
        Err(CallError::Inner(Busy(None))),
        "the call's own error"
    );
    assert_eq!(times.len(), 2, "the second failure trips: no third attempt");
    assert_eq!(clock.now_nanos(), times[1], "and no wait after it");
    let m = breaker.metrics();
    assert_eq!((m.retries, m.failures, m.times_opened), (1, 2, 1));
}

#[test]
fn an_ignored_error_is_returned_without_a_retry() {
    static RETRY: Retry = Retry::new(RetryPolicy::new(5).no_budget());
    let breaker = Breaker::with_clock("ignored", never_trips(), ManualClock::new());
    let ran = Cell::new(0);
    let out = breaker.call_retrying_with(&RETRY, &|_: &Busy| false, || {
        ran.set(ran.get() + 1);
        Err::<(), _>(Busy(None))
    });
    assert_eq!(out, Err(CallError::Inner(Busy(None))));
    assert_eq!(ran.get(), 1);
    assert_eq!(breaker.metrics().ignored, 1);
}

#[test]
fn no_wait_ends_past_the_deadline() {
    static RETRY: Retry = Retry::new(
        RetryPolicy::new(10)
            .deadline(Duration::from_millis(2_500))
            .no_budget(),
    );
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("deadline", never_trips(), clock.clone());
    let mut times = Vec::new();
    let _ = breaker.call_retrying(&RETRY, || {
        times.push(clock.now_nanos());
        Err::<(), _>(Busy(Some(Duration::from_secs(1))))
    });
    assert_eq!(
        times,
        [0, 1_000 * MS, 2_000 * MS],
        "a third wait would end at 3 s"
    );
}

#[test]
fn the_budget_allows_exactly_its_share_then_returns_the_error_and_tells() {
    // 20% of first attempts, no floor: ten successful calls bank two retries,
    // and the failing call's own first attempt 0.2 more: two retries, not three.
    let registry = Registry::with_clock(ManualClock::new());
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = told.clone();
    let _subscription = registry.subscribe(move |event: &Event| {
        if let Event::RetryBudgetExhausted(e) = event {
            sink.lock().unwrap().push((e.group, e.retry));
        }
    });
    let breaker = registry.breaker("budget", &never_trips());
    let retry = Retry::new(RetryPolicy::new(5).budget(0.2, 0));
    for _ in 0..10 {
        breaker.call_retrying(&retry, || Ok::<_, Busy>(())).unwrap();
    }
    let ran = Cell::new(0);
    let out = breaker.call_retrying(&retry, || {
        ran.set(ran.get() + 1);
        Err::<(), _>(Busy(None))
    });
    assert_eq!(out, Err(CallError::Inner(Busy(None))));
    assert_eq!(ran.get(), 3);
    let m = breaker.metrics();
    assert_eq!((m.retries, m.retries_budget_exhausted), (2, 1));
    assert_eq!(told.lock().unwrap()[..], [("budget", 3)]);
}

#[test]
fn a_keys_spent_budget_is_told_to_the_registrys_subscribers() {
    let registry = Registry::with_clock(ManualClock::new());
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = told.clone();
    let _subscription = registry.subscribe(move |event: &Event| {
        if let Event::RetryBudgetExhausted(e) = event {
            sink.lock().unwrap().push((e.group, e.retry));
        }
    });
    let hosts = registry
        .keyed::<String>("hosts-budget", &never_trips(), 100)
        .unwrap();
    static SPENT: RetryPolicy = RetryPolicy::new(2).budget(0.0, 0);
    let retry = hosts.group_retry(&SPENT);
    let out = hosts
        .breaker("a.example")
        .call_retrying(retry, || Err::<(), _>(Busy(None)));
    assert_eq!(out, Err(CallError::Inner(Busy(None))));
    assert_eq!(told.lock().unwrap()[..], [("hosts-budget", 1)]);
}

#[test]
fn the_keys_of_a_keyed_group_share_one_budget() {
    let registry = Registry::with_clock(ManualClock::new());
    let group = registry
        .keyed::<u32>("shared", &never_trips(), 100)
        .unwrap();
    let retry = Retry::new(RetryPolicy::new(1).budget(0.5, 0));
    let mut made = 0;
    for key in 0..4u32 {
        let breaker = group.breaker(&key);
        let _ = breaker.call_retrying(&retry, || Err::<(), _>(Busy(None)));
        made += breaker.metrics().retries;
    }
    // Four first attempts at 0.5 each: two retries, wherever they went.
    assert_eq!(made, 2);
    assert_eq!(group.metrics().retries, 2);
    assert_eq!(group.metrics().retries_budget_exhausted, 2);
}

#[tokio::test(start_paused = true)]
async fn an_async_retry_waits_on_the_timer_and_succeeds_on_the_second_attempt() {
    struct Tokio;
    impl breaker_core::Timer for Tokio {
        type Sleep = tokio::time::Sleep;
        fn sleep(&self, after: Duration) -> tokio::time::Sleep {
            tokio::time::sleep(after)
        }
    }
    static RETRY: Retry = Retry::new(RetryPolicy::new(3).no_budget());
    let breaker = Breaker::with_clock("async", never_trips(), ManualClock::new());
    let start = tokio::time::Instant::now();
    let attempts = Cell::new(0);
    let out = breaker
        .call_async_retrying(&RETRY, &Tokio, || {
            attempts.set(attempts.get() + 1);
            let n = attempts.get();
            async move {
                match n {
                    1 => Err(Busy(Some(Duration::from_secs(2)))),
                    _ => Ok(n),
                }
            }
        })
        .await;
    assert_eq!(out, Ok(2));
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    let m = breaker.metrics();
    assert_eq!((m.retries, m.failures, m.successes), (1, 1, 1));
}

proptest! {
    /// Whatever the calls' outcomes and the time between them, the retries
    /// made stay within the budget: `ratio` of first attempts plus `floor`
    /// per second of the breaker's clock, one second of it to start.
    #[test]
    fn retries_never_exceed_the_share_of_first_attempts_plus_the_floor(
        calls in proptest::collection::vec((0u8..4, 0u64..2_000), 1..120),
        ratio in 0.0f64..=1.0,
        floor in 0u32..20,
    ) {
        let clock = ManualClock::new();
        let breaker = Breaker::with_clock("prop", never_trips(), clock.clone());
        let retry = Retry::new(
            RetryPolicy::new(3).delay(Duration::from_millis(5)).budget(ratio, floor),
        );
        for (failures_first, gap_ms) in &calls {
            clock.advance(Duration::from_millis(*gap_ms));
            let mut left = *failures_first;
            let _ = breaker.call_retrying(&retry, || {
                if left == 0 {
                    return Ok(());
                }
                left -= 1;
                Err(Busy(None))
            });
        }
        let m = breaker.metrics();
        let first_attempts = calls.len() as f64;
        let seconds = clock.now_nanos() as f64 / 1e9;
        let bound = ratio * first_attempts + f64::from(floor) * (1.0 + seconds);
        prop_assert!(
            m.retries as f64 <= bound + 1e-9,
            "{} retries > {bound} (ratio {ratio}, {first_attempts} calls, floor {floor}, {seconds} s)",
            m.retries
        );
    }
}
