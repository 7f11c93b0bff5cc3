//! One retry budget per group: every fn of a group, every key of a keyed
//! group, and code that asks for the group's `Retry` draw on one bucket; two
//! declarations with different policies keep the first.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::LazyLock;

use breakerbox::{circuit_breaker, CircuitOpen, ManualClock, Registry, RetryPolicy};

#[derive(Debug, PartialEq)]
enum Error {
    Busy,
    Open,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

fn registry() -> Registry {
    Registry::with_clock(ManualClock::new())
}

// The default budget: 0.2 of each first attempt plus ten a second, starting
// with one second of the floor. The clock stands still, so after `n` calls
// that each fail once and retry once the bucket holds `10 + 0.2 n - n`
// retries: the 13th call finds 0.6 and is refused.

static TWO_FNS: LazyLock<Registry> = LazyLock::new(registry);
static TWO_FNS_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "two-fns", registry = &TWO_FNS, threshold = 1000, retry = 1,
    idempotent = true, retry_delay_ms = 1)]
fn reads() -> Result<(), Error> {
    TWO_FNS_ATTEMPTS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[circuit_breaker(group = "two-fns", registry = &TWO_FNS, threshold = 1000, retry = 1,
    idempotent = true, retry_delay_ms = 1)]
fn lists() -> Result<(), Error> {
    TWO_FNS_ATTEMPTS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn two_fns_of_one_group_draw_on_one_budget() {
    for _ in 0..6 {
        assert_eq!(reads(), Err(Error::Busy));
    }
    for _ in 0..6 {
        assert_eq!(lists(), Err(Error::Busy));
    }
    let m = TWO_FNS.get("two-fns").unwrap().metrics();
    assert_eq!((m.retries, m.retries_budget_exhausted), (12, 0));
    // A budget of `lists`' own would still hold 5.4 retries here.
    assert_eq!(lists(), Err(Error::Busy));
    assert_eq!(reads(), Err(Error::Busy));
    let m = TWO_FNS.get("two-fns").unwrap().metrics();
    assert_eq!((m.retries, m.retries_budget_exhausted), (12, 2));
    assert_eq!(TWO_FNS_ATTEMPTS.load(SeqCst), 14 + 12);
}

static KEYED: LazyLock<Registry> = LazyLock::new(registry);
static KEYED_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "keyed-budget", registry = &KEYED, key = host, threshold = 1000,
    retry = 1, idempotent = true, retry_delay_ms = 1)]
fn fetch(host: &str) -> Result<(), Error> {
    let _ = host;
    KEYED_ATTEMPTS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[circuit_breaker(group = "keyed-budget", registry = &KEYED, key = host, threshold = 1000,
    retry = 1, idempotent = true, retry_delay_ms = 1)]
fn head(host: &str) -> Result<(), Error> {
    let _ = host;
    KEYED_ATTEMPTS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn every_key_of_a_keyed_group_draws_on_one_budget() {
    for host in ["a", "b", "c"] {
        for _ in 0..2 {
            assert_eq!(fetch(host), Err(Error::Busy));
            assert_eq!(head(host), Err(Error::Busy));
        }
    }
    assert_eq!(
        KEYED_ATTEMPTS.load(SeqCst),
        24,
        "twelve calls, each retried"
    );
    assert_eq!(fetch("d"), Err(Error::Busy));
    assert_eq!(
        KEYED_ATTEMPTS.load(SeqCst),
        25,
        "a new key finds the group's bucket spent"
    );

    // Code that retries for the group gets the same bucket, from the group or a key.
    static POLICY: RetryPolicy = RetryPolicy::new(1);
    let hosts = KEYED
        .keyed::<String>("keyed-budget", &Default::default(), 10_000)
        .unwrap();
    let retry = hosts.group_retry(&POLICY);
    assert!(std::ptr::eq(hosts.breaker("a").group_retry(&POLICY), retry));
    assert!(std::ptr::eq(hosts.breaker("e").group_retry(&POLICY), retry));
    assert_eq!(retry.budget().available(), 0);
    let mut tries = 0;
    let answer = hosts.breaker("e").call_retrying(retry, || {
        tries += 1;
        Err::<(), _>("busy")
    });
    assert!(answer.is_err());
    assert_eq!(tries, 1, "the spent bucket refuses code's retry too");
}

static CONFLICT: LazyLock<Registry> = LazyLock::new(registry);
static CONFLICT_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "two-policies", registry = &CONFLICT, threshold = 1000, retry = 1,
    idempotent = true, retry_delay_ms = 1)]
fn once_more() -> Result<(), Error> {
    CONFLICT_ATTEMPTS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[circuit_breaker(group = "two-policies", registry = &CONFLICT, threshold = 1000, retry = 3,
    idempotent = true, retry_delay_ms = 1)]
fn thrice_more() -> Result<(), Error> {
    CONFLICT_ATTEMPTS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn a_second_retry_policy_for_a_group_is_ignored_and_the_first_holds() {
    assert_eq!(once_more(), Err(Error::Busy));
    assert_eq!(CONFLICT_ATTEMPTS.load(SeqCst), 2);
    assert_eq!(thrice_more(), Err(Error::Busy));
    assert_eq!(
        CONFLICT_ATTEMPTS.load(SeqCst),
        4,
        "the group's first declaration (one retry) holds"
    );
    let breaker = CONFLICT.get("two-policies").unwrap();
    assert_eq!(breaker.made_group_retry().unwrap().policy().retries(), 1);
}
