//! The adaptive throttle (`throttle`) on a manual clock: what reaches a
//! dependency that accepts a fixed share of the calls offered settles at `K`
//! times its accepts, with no open; the throttle's refusals say so, move
//! nothing, are never retried, and are only counted in shadow mode; accepts
//! follow the classifier; throttling stops within one window of the heal;
//! the same traffic is admitted the same way twice; bad values are refused.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::events::Event;
use breaker_core::{
    Breaker, CallError, Config, ConfigError, ManualClock, OpenReason, Retry, RetryAfterHint,
    RetryPolicy, State,
};

const WINDOW: Duration = Duration::from_secs(10);
/// Calls offered each simulated second.
const PER_SECOND: u32 = 100;

/// A throttled group whose breaker keeps its default consecutive threshold.
fn throttled(k: f64) -> Config {
    Config::builder()
        .throttle(k)
        .throttle_window(WINDOW)
        .build()
        .unwrap()
}

/// A throttled group whose breaker does not trip on the failures a test makes.
fn lenient(k: f64) -> Config {
    Config::builder()
        .threshold(1_000)
        .throttle(k)
        .throttle_window(WINDOW)
        .build()
        .unwrap()
}

#[derive(Debug, PartialEq)]
struct Busy;

impl RetryAfterHint for Busy {
    fn retry_after(&self) -> Option<Duration> {
        None
    }
}

/// A dependency that can take `capacity` of the calls offered (0.4: 40 of
/// every 100), spread evenly: every call offered adds `capacity` of a token
/// (up to a burst of five), and a call that reaches it with a whole token is
/// accepted.
struct Dependency {
    capacity: f64,
    tokens: f64,
    reached: u64,
    accepted: u64,
}

impl Dependency {
    fn new(capacity: f64) -> Self {
        Dependency {
            capacity,
            tokens: 0.0,
            reached: 0,
            accepted: 0,
        }
    }

    fn offered(&mut self) {
        self.tokens = (self.tokens + self.capacity).min(5.0);
    }

    fn reach(&mut self) -> Result<(), &'static str> {
        self.reached += 1;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            self.accepted += 1;
            Ok(())
        } else {
            Err("503")
        }
    }
}

/// What one second of traffic did.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Second {
    offered: u64,
    reached: u64,
    accepted: u64,
    throttled: u64,
}

/// Offers `PER_SECOND` calls a second for `seconds` seconds.
fn drive(
    breaker: &Breaker,
    clock: &ManualClock,
    dependency: &mut Dependency,
    seconds: u32,
) -> Vec<Second> {
    let mut out = Vec::new();
    for _ in 0..seconds {
        let (reached, accepted) = (dependency.reached, dependency.accepted);
        let mut second = Second::default();
        for _ in 0..PER_SECOND {
            dependency.offered();
            second.offered += 1;
            match breaker.call(|| dependency.reach()) {
                Err(CallError::Open(refused)) => {
                    assert_eq!(refused.reason(), OpenReason::Throttled, "{refused}");
                    second.throttled += 1;
                }
                Ok(()) | Err(CallError::Inner(_)) => {}
                Err(other) => panic!("{other:?}"),
            }
        }
        second.reached = dependency.reached - reached;
        second.accepted = dependency.accepted - accepted;
        out.push(second);
        clock.advance(Duration::from_secs(1));
    }
    out
}

fn sum(seconds: &[Second]) -> Second {
    seconds.iter().fold(Second::default(), |a, s| Second {
        offered: a.offered + s.offered,
        reached: a.reached + s.reached,
        accepted: a.accepted + s.accepted,
        throttled: a.throttled + s.throttled,
    })
}

#[test]
fn what_reaches_a_dependency_taking_40_percent_settles_at_k_times_its_accepts_with_no_open() {
    for k in [1.5, 2.0] {
        let clock = ManualClock::new();
        let breaker = Breaker::with_clock("upstream", throttled(k), clock.clone());
        let mut dependency = Dependency::new(0.4);
        let seconds = drive(&breaker, &clock, &mut dependency, 60);
        // The last window, once settled.
        let last = sum(&seconds[50..]);
        let ratio = last.reached as f64 / last.accepted as f64;
        println!("K = {k}: last window {last:?}, reached / accepted = {ratio:.3}");
        assert!(
            (ratio - k).abs() <= 0.05 * k,
            "K = {k}: {ratio:.3} reached per accept"
        );
        // Everything the dependency could take, it got.
        assert!(last.accepted as f64 >= 0.95 * 0.4 * last.offered as f64);
        let m = breaker.metrics();
        assert_eq!(m.state, State::Closed);
        assert_eq!(m.times_opened, 0, "no hard open");
        assert_eq!(m.throttled, sum(&seconds).throttled);
        assert_eq!(m.rejected, m.throttled);
        let t = m.throttle.expect("a throttled group reports its throttle");
        assert!(t.reject_share > 0.0 && t.reject_share < 0.9, "{t:?}");
        assert_eq!(t.window, WINDOW);
    }
}

#[test]
fn once_the_dependency_heals_every_call_goes_again_within_one_window() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("upstream", throttled(2.0), clock.clone());
    let mut dependency = Dependency::new(0.4);
    drive(&breaker, &clock, &mut dependency, 30);
    assert!(breaker.metrics().throttle.unwrap().reject_share > 0.1);
    dependency.capacity = 1.0;
    let healed = drive(&breaker, &clock, &mut dependency, 20);
    let window = WINDOW.as_secs() as usize;
    let first_free = healed.iter().position(|s| s.throttled == 0).unwrap();
    println!("after the heal: {:?}", &healed[..=first_free]);
    assert!(
        first_free < window,
        "throttled {first_free} s after the heal"
    );
    for second in &healed[window..] {
        assert_eq!(second.reached, second.offered, "{second:?}");
    }
    assert_eq!(breaker.metrics().throttle.unwrap().reject_share, 0.0);
}

/// Offers `n` calls that fail when they run: `n` requests, none accepted.
fn fail(breaker: &Breaker, n: u32) {
    for _ in 0..n {
        if let Ok(permit) = breaker.try_acquire() {
            permit.failure();
        }
    }
}

#[test]
fn a_throttled_refusal_says_so_and_when_and_moves_nothing() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("upstream", lenient(1.0), clock.clone());
    fail(&breaker, 9);
    clock.advance(Duration::from_millis(2_500));
    // Nine requests, none accepted: 90% refused. Asking first takes nothing.
    let asked = breaker.refusal().expect("asking sees the refusal");
    assert_eq!(asked.reason(), OpenReason::Throttled);
    assert!(!breaker.would_admit());
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Throttled);
    assert_eq!(refused.reason().as_str(), "throttled");
    assert_eq!(refused.group(), "upstream");
    // The window (10 s, in 1 s buckets) drops its oldest slice at 3 s.
    assert_eq!(refused.retry_after(), Some(Duration::from_millis(500)));
    assert_eq!(asked, refused);
    let m = breaker.metrics();
    assert_eq!(m.state, State::Closed);
    assert_eq!(m.failures + m.throttled, 10);
    assert_eq!(m.rejected, m.throttled);
    // Asking counts nothing.
    let _ = breaker.refusal();
    assert_eq!(breaker.metrics(), m);
}

#[test]
fn an_error_the_classifier_ignores_is_an_accept() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("upstream", lenient(1.0), clock.clone());
    // A 400 is the caller's mistake: the dependency answered.
    let is_failure = |status: &u16| *status >= 500;
    for _ in 0..1_000 {
        let out = breaker.call_with(&is_failure, || Err::<(), u16>(400));
        assert_eq!(out, Err(CallError::Inner(400)));
    }
    let m = breaker.metrics();
    assert_eq!((m.ignored, m.throttled), (1_000, 0));
    assert_eq!(m.throttle.unwrap().accepts, 1_000);
    // The same calls failing with a 503 are throttled.
    for _ in 0..1_000 {
        let _ = breaker.call_with(&is_failure, || Err::<(), u16>(503));
    }
    assert!(breaker.metrics().throttled > 0);
}

#[test]
fn the_retry_layer_never_retries_a_throttled_refusal() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("upstream", lenient(1.0), clock.clone());
    fail(&breaker, 9);
    // The credit admits one claim in ten: this one is refused.
    assert!(breaker.refusal().is_some());
    let retry = Retry::new(RetryPolicy::new(3).no_budget());
    let mut attempts = 0;
    let out = breaker.call_retrying(&retry, || {
        attempts += 1;
        Err::<(), _>(Busy)
    });
    match out {
        Err(CallError::Open(refused)) => assert_eq!(refused.reason(), OpenReason::Throttled),
        other => panic!("{other:?}"),
    }
    assert_eq!(attempts, 0, "the call never ran");
    assert_eq!(breaker.metrics().retries, 0);
}

#[test]
fn shadow_mode_counts_what_the_throttle_would_refuse_and_refuses_nothing() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .threshold(1_000)
        .throttle(1.0)
        .throttle_window(WINDOW)
        .shadow(true)
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("upstream", config, clock.clone());
    for _ in 0..100 {
        breaker.try_acquire().expect("shadow mode").failure();
    }
    let m = breaker.metrics();
    assert_eq!((m.rejected, m.throttled), (0, 0));
    assert!(m.shadow_refused > 50, "{m:?}");
    // Switched off, the same window throttles: nine claims in ten.
    breaker.set_shadow(false);
    let refused = (0..10).filter(|_| breaker.try_acquire().is_err()).count();
    assert!(refused >= 8, "{refused} of 10 refused");
}

#[test]
fn an_open_breaker_refuses_as_open_and_the_throttle_judges_what_it_lets_go() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .threshold(3)
        .open(Duration::from_secs(1))
        .throttle(1.0)
        .throttle_window(WINDOW)
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("upstream", config, clock.clone());
    // Three failed calls, each judged by the throttle first (admitted at
    // shares of 1, 1/2 and 1/3 of a call: the credit carries the first and
    // the third), trip the breaker.
    let mut ran = 0;
    while breaker.state() == State::Closed {
        if let Ok(permit) = breaker.try_acquire() {
            ran += 1;
            permit.failure();
        }
    }
    assert_eq!(ran, 3);
    let throttled = breaker.metrics().throttled;
    let refused = breaker.try_acquire().unwrap_err();
    assert_eq!(refused.reason(), OpenReason::Open);
    assert_eq!(
        breaker.metrics().throttled,
        throttled,
        "open refuses as open"
    );
    clock.advance(Duration::from_secs(1));
    // The claim that finds the open time over goes as the probe, unthrottled;
    // while it runs, the throttle judges the claims of the half-open breaker.
    assert!(breaker.refusal().is_none(), "a claim now is the probe");
    let probe = breaker.try_acquire().expect("the probe");
    let refused = breaker.try_acquire().unwrap_err().reason();
    assert!(
        [OpenReason::Throttled, OpenReason::HalfOpenFull].contains(&refused),
        "{refused:?}"
    );
    assert!(probe.is_probe());
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
}

#[test]
fn throttling_is_told_when_it_starts_and_when_it_stops() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("upstream", lenient(1.0), clock.clone());
    let told = Arc::new(Mutex::new(Vec::new()));
    let seen = told.clone();
    let _subscription = breaker.subscribe(move |event| {
        if let Event::Throttle(change) = event {
            seen.lock().unwrap().push((change.group, change.throttling));
        }
    });
    breaker.try_acquire().unwrap().success();
    breaker.try_acquire().unwrap().failure();
    let _ = breaker.try_acquire();
    let _ = breaker.try_acquire();
    clock.advance(WINDOW);
    breaker.try_acquire().unwrap().success();
    assert_eq!(
        *told.lock().unwrap(),
        [("upstream", true), ("upstream", false)]
    );
}

#[test]
fn the_same_traffic_is_admitted_the_same_way_twice() {
    let run = || {
        let clock = ManualClock::new();
        let breaker = Breaker::with_clock("upstream", throttled(2.0), clock.clone());
        let mut dependency = Dependency::new(0.3);
        drive(&breaker, &clock, &mut dependency, 30)
    };
    let first = run();
    assert!(sum(&first).throttled > 0);
    assert_eq!(run(), first);
}

#[test]
fn a_group_without_throttle_reports_none_and_refuses_nothing_of_its_own() {
    let breaker = Breaker::new("plain", Config::default());
    for _ in 0..100 {
        breaker.try_acquire().unwrap().ignore();
    }
    let m = breaker.metrics();
    assert_eq!((m.throttle, m.throttled), (None, 0));
    assert_eq!(Config::default().throttle(), None);
}

#[test]
fn k_and_the_cap_change_live_and_the_window_does_not() {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("upstream", lenient(1.0), clock.clone());
    fail(&breaker, 9);
    let capped = Config::builder()
        .threshold(1_000)
        .throttle(1.0)
        .throttle_window(WINDOW)
        .throttle_max_reject(0.5)
        .build()
        .unwrap();
    breaker.reconfigure(capped).unwrap();
    assert_eq!(breaker.metrics().throttle.unwrap().reject_share, 0.5);
    let longer = Config::builder()
        .throttle(1.0)
        .throttle_window(WINDOW * 2)
        .build()
        .unwrap();
    let refused = breaker.reconfigure(longer).unwrap_err();
    assert_eq!(refused.key(), Some("throttle_window_ms"));
    let off = breaker.reconfigure(Config::default()).unwrap_err();
    assert_eq!(
        off.key(),
        Some("throttle"),
        "turning it off names the key that turns it on"
    );
    let plain = Breaker::new("plain", Config::default());
    assert!(plain.reconfigure(throttled(2.0)).is_err(), "turned on live");
}

#[test]
fn bad_throttle_values_are_refused_naming_their_key() {
    let refused = |b: breaker_core::ConfigBuilder| b.build().unwrap_err();
    let k = |v: f64| refused(Config::builder().throttle(v));
    assert_eq!(k(0.5), ConfigError::ThrottleBelowOne);
    assert_eq!(k(f64::NAN), ConfigError::ThrottleBelowOne);
    assert_eq!(k(f64::INFINITY), ConfigError::ThrottleBelowOne);
    assert_eq!(k(0.5).key(), "throttle");
    for cap in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
        let e = refused(Config::builder().throttle(2.0).throttle_max_reject(cap));
        assert_eq!(e, ConfigError::ThrottleMaxRejectOutOfRange, "{cap}");
        assert_eq!(e.key(), "throttle_max_reject");
    }
    for window in [0, 9] {
        let e = refused(
            Config::builder()
                .throttle(2.0)
                .throttle_window(Duration::from_millis(window)),
        );
        assert_eq!(e, ConfigError::ThrottleWindowTooShort);
        assert_eq!(e.key(), "throttle_window_ms");
    }
    for rps in [-1.0, f64::NAN, f64::INFINITY] {
        let e = refused(Config::builder().throttle(2.0).throttle_min_rps(rps));
        assert_eq!(e, ConfigError::ThrottleMinRpsOutOfRange, "{rps}");
    }
    let alone = refused(Config::builder().throttle_max_reject(0.5));
    assert_eq!(alone.key(), "throttle_max_reject");
    assert!(alone.to_string().contains("add `throttle`"), "{alone}");
    assert!(Config::builder().throttle(1.0).build().is_ok());
}

#[test]
fn below_the_minimum_rate_nothing_is_throttled() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .threshold(1_000)
        .throttle(1.0)
        .throttle_window(WINDOW)
        .throttle_min_rps(2.0)
        .build()
        .unwrap();
    let breaker = Breaker::with_clock("quiet", config, clock.clone());
    // 19 failed requests in a 10 s window: below 2 a second.
    fail(&breaker, 19);
    assert_eq!(breaker.metrics().throttle.unwrap().reject_share, 0.0);
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.metrics().throttle.unwrap().reject_share, 0.9);
}

#[test]
fn a_call_answered_with_a_servers_wait_is_a_reject_for_the_throttle() {
    use breaker_core::HoldScope;

    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("quota", lenient(2.0), clock.clone());
    breaker.try_acquire().unwrap().success();
    breaker.try_acquire().unwrap().ignore();
    let before = breaker.metrics().throttle.unwrap();
    assert_eq!((before.requests, before.accepts), (2, 2));
    breaker
        .try_acquire()
        .unwrap()
        .hold(Duration::from_secs(1), HoldScope::Group);
    let after = breaker.metrics().throttle.unwrap();
    assert_eq!(
        (after.requests, after.accepts),
        (3, 2),
        "the dependency did not take the held call: a request, not an accept"
    );
    let metrics = breaker.metrics();
    assert_eq!(
        (metrics.failures, metrics.ignored),
        (0, 2),
        "and no failure"
    );
    assert_eq!(
        breaker.try_acquire().unwrap_err().reason(),
        OpenReason::Held(HoldScope::Group),
        "a held claim is refused by its hold before the throttle is asked"
    );
}
