//! `#[circuit_breaker(retry = N, idempotent = true)]`: the body runs once per
//! attempt, each attempt one outcome; the wait is the breaker's clock (sync)
//! or the timer (async); a refusal is answered at once, and a fallback runs
//! once, after the last attempt.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::LazyLock;
use std::time::Duration;

use breakerbox::{
    circuit_breaker, clock::Clock, CircuitOpen, Fallback, ManualClock, Registry, RetryAfterHint,
    TimedOut,
};

#[derive(Debug, PartialEq)]
enum Error {
    Busy,
    Limited(Duration),
    Open,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

impl From<TimedOut> for Error {
    fn from(_: TimedOut) -> Self {
        Error::Busy
    }
}

impl RetryAfterHint for Error {
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Limited(wait) => Some(*wait),
            _ => None,
        }
    }
}

/// One registry on its own manual clock per test, so no test moves another's time.
struct Site {
    clock: ManualClock,
    registry: Registry,
}

fn site() -> Site {
    let clock = ManualClock::new();
    Site {
        registry: Registry::with_clock(clock.clone()),
        clock,
    }
}

static ONCE: LazyLock<Site> = LazyLock::new(site);
static ONCE_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "retry-once", registry = &ONCE.registry, retry = 2, idempotent = true,
    retry_delay_ms = 100)]
fn fails_once(name: &str) -> Result<String, Error> {
    if ONCE_CALLS.fetch_add(1, SeqCst) == 0 {
        return Err(Error::Busy);
    }
    Ok(name.to_uppercase())
}

#[test]
fn a_failure_is_retried_and_the_second_attempt_answers() {
    assert_eq!(fails_once("db").as_deref(), Ok("DB"));
    assert_eq!(ONCE_CALLS.load(SeqCst), 2);
    let m = ONCE.registry.get("retry-once").unwrap().metrics();
    assert_eq!((m.calls, m.failures, m.successes, m.retries), (2, 1, 1, 1));
    assert!(
        ONCE.clock.now_nanos() <= 100_000_000,
        "one wait of at most the backoff"
    );
}

static HINT: LazyLock<Site> = LazyLock::new(site);
static HINT_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "retry-hint", registry = &HINT.registry, retry = 3, idempotent = true)]
fn rate_limited() -> Result<u32, Error> {
    match HINT_CALLS.fetch_add(1, SeqCst) {
        0 | 1 => Err(Error::Limited(Duration::from_secs(2))),
        n => Ok(n),
    }
}

#[test]
fn the_errors_retry_after_is_waited_before_each_retry() {
    assert_eq!(rate_limited(), Ok(2));
    assert_eq!(HINT.clock.now_nanos(), 4_000_000_000);
}

static SPENT: LazyLock<Site> = LazyLock::new(site);
static SPENT_CALLS: AtomicU32 = AtomicU32::new(0);
static ANSWERED: AtomicU32 = AtomicU32::new(0);

fn stand_in(why: Fallback<Error>) -> Result<u32, Error> {
    ANSWERED.fetch_add(1, SeqCst);
    match why {
        Fallback::Failed(Error::Busy) => Ok(0),
        _ => Ok(1),
    }
}

#[circuit_breaker(group = "retry-spent", registry = &SPENT.registry, threshold = 100,
    retry = 3, idempotent = true, fallback = stand_in(why), fallback_on = "failure")]
fn always_busy() -> Result<u32, Error> {
    SPENT_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn the_fallback_answers_once_after_the_last_attempt() {
    // The default budget starts with a second of its floor: ten retries.
    assert_eq!(always_busy(), Ok(0));
    assert_eq!(
        SPENT_CALLS.load(SeqCst),
        4,
        "the first attempt and three retries"
    );
    assert_eq!(ANSWERED.load(SeqCst), 1);
}

static OPEN: LazyLock<Site> = LazyLock::new(site);
static OPEN_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "retry-open", registry = &OPEN.registry, threshold = 2, retry = 5,
    idempotent = true)]
fn down() -> Result<u32, Error> {
    OPEN_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn the_trip_ends_the_retries_and_the_open_circuit_answers_at_once() {
    assert_eq!(down(), Err(Error::Busy));
    assert_eq!(
        OPEN_CALLS.load(SeqCst),
        2,
        "the second failure trips: no third attempt"
    );
    assert_eq!(down(), Err(Error::Open));
    assert_eq!(OPEN_CALLS.load(SeqCst), 2, "a refusal runs nothing");
    assert_eq!(
        OPEN.registry.get("retry-open").unwrap().metrics().retries,
        1
    );
}

static ASYNC: LazyLock<Site> = LazyLock::new(site);
static ASYNC_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "retry-async", registry = &ASYNC.registry, retry = 2, idempotent = true)]
async fn async_fails_once(name: &str) -> Result<String, Error> {
    tokio::task::yield_now().await;
    if ASYNC_CALLS.fetch_add(1, SeqCst) == 0 {
        return Err(Error::Limited(Duration::from_millis(1_500)));
    }
    Ok(name.to_owned())
}

#[tokio::test(start_paused = true)]
async fn an_async_fn_waits_on_the_timer_between_attempts() {
    let start = tokio::time::Instant::now();
    assert_eq!(async_fails_once("x").await.as_deref(), Ok("x"));
    assert_eq!(start.elapsed(), Duration::from_millis(1_500));
    assert_eq!(ASYNC_CALLS.load(SeqCst), 2);
}

static TIMED: LazyLock<Site> = LazyLock::new(site);
static TIMED_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "retry-timed", registry = &TIMED.registry, retry = 1, idempotent = true,
    timeout_ms = 100, retry_delay_ms = 1)]
async fn hangs_once() -> Result<u32, Error> {
    if TIMED_CALLS.fetch_add(1, SeqCst) == 0 {
        std::future::pending::<()>().await;
    }
    Ok(7)
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_attempt_is_retried_like_a_failure() {
    assert_eq!(hangs_once().await, Ok(7));
    let m = TIMED.registry.get("retry-timed").unwrap().metrics();
    assert_eq!((m.timeouts, m.retries, m.successes), (1, 1, 1));
}

static HUNG: LazyLock<Site> = LazyLock::new(site);

#[circuit_breaker(group = "retry-hung", registry = &HUNG.registry, threshold = 1000, retry = 1,
    idempotent = true, timeout_ms = 10, retry_delay_ms = 1)]
async fn always_hangs() -> Result<u32, Error> {
    std::future::pending::<()>().await;
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn a_first_attempt_that_times_out_pays_into_the_budget() {
    // The breaker's clock stands still, so the budget earns nothing by the
    // second: it starts with its floor's 10 tokens and each first attempt
    // adds 20% of one. Thirty calls whose every attempt times out retry 16
    // times (10 + 0.2 x 30, less the share the last calls earn after their
    // retry was refused), not only the 10 the floor gave.
    for _ in 0..30 {
        assert_eq!(always_hangs().await, Err(Error::Busy));
    }
    let m = HUNG.registry.get("retry-hung").unwrap().metrics();
    assert_eq!(m.retries + m.retries_budget_exhausted, 30);
    assert!(
        m.retries >= 15,
        "{} retries: first attempts paid nothing",
        m.retries
    );
}

/// A timer that records each wait asked of it and ends it at once.
struct Recording;

static WAITS: std::sync::Mutex<Vec<Duration>> = std::sync::Mutex::new(Vec::new());

impl breakerbox::timeout::Timer for Recording {
    type Sleep = std::future::Ready<()>;
    fn sleep(&self, after: Duration) -> Self::Sleep {
        WAITS.lock().unwrap().push(after);
        std::future::ready(())
    }
}

static OWN_TIMER: LazyLock<Site> = LazyLock::new(site);
static OWN_TIMER_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "retry-own-timer", registry = &OWN_TIMER.registry, retry = 1,
    idempotent = true, timer = Recording)]
async fn limited_once() -> Result<u32, Error> {
    if OWN_TIMER_CALLS.fetch_add(1, SeqCst) == 0 {
        return Err(Error::Limited(Duration::from_millis(250)));
    }
    Ok(3)
}

#[tokio::test]
async fn a_retried_async_fn_waits_on_the_timer_it_names_without_a_deadline() {
    assert_eq!(limited_once().await, Ok(3));
    assert_eq!(OWN_TIMER_CALLS.load(SeqCst), 2);
    assert_eq!(WAITS.lock().unwrap()[..], [Duration::from_millis(250)]);
}

static THIN: LazyLock<Site> = LazyLock::new(site);

#[circuit_breaker(group = "retry-thin-budget", registry = &THIN.registry, threshold = 1000,
    retry = 1, idempotent = true, retry_delay_ms = 1, retry_budget_ratio = 0.5,
    retry_budget_floor = 1)]
fn thin() -> Result<u32, Error> {
    Err(Error::Busy)
}

#[test]
fn the_budget_keys_set_the_groups_ratio_and_floor() {
    // One retry from the floor's first second, then one per two first
    // attempts; the clock stands still, so the floor pays no more.
    for _ in 0..7 {
        assert_eq!(thin(), Err(Error::Busy));
    }
    let breaker = THIN.registry.get("retry-thin-budget").unwrap();
    let m = breaker.metrics();
    assert_eq!((m.retries, m.retries_budget_exhausted), (4, 3));
    let limits = breaker.made_group_retry().unwrap().policy().budget_limits();
    assert_eq!(limits, Some((0.5, 1)));
}
