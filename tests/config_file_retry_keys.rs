//! The retry keys in a configuration file and `BREAKER_` variables: layered
//! over a group's `#[circuit_breaker(retry = ..)]` (or its code's policy) by
//! the precedence table, before its first call or live, refused for a group
//! whose attribute runs no retry loop, and shared by a keyed group's keys.
#![cfg(feature = "config")]

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Barrier, LazyLock};
use std::time::Duration;

use breakerbox::config_file::{ErrorKind, Settings};
use breakerbox::{
    circuit_breaker, CircuitOpen, Config, ManualClock, Registry, Retry, RetryAfterHint, RetryPolicy,
};

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

impl RetryAfterHint for Error {}

/// A registry on its own manual clock, so waits are exact and no test moves
/// another's time.
fn registry() -> Registry {
    Registry::with_clock(ManualClock::new())
}

fn settings(toml: &str) -> Settings {
    Settings::from_toml_str(toml, "retry.toml").unwrap()
}

/// The group's retry budget, which its first retried call made.
fn made(registry: &Registry, group: &str) -> RetryPolicy {
    registry
        .get(group)
        .unwrap()
        .made_group_retry()
        .expect("a retried call made the group's retry")
        .effective_policy()
}

/// Attempts of one call: the calls counted by `counter` across it.
fn attempts<T>(counter: &AtomicU32, call: impl FnOnce() -> T) -> (T, u32) {
    let before = counter.load(SeqCst);
    let answer = call();
    (answer, counter.load(SeqCst) - before)
}

static FOUR: LazyLock<Registry> = LazyLock::new(registry);
static FOUR_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "file-retries", registry = &FOUR, threshold = 100, retry = 1,
    idempotent = true, retry_delay_ms = 10)]
fn file_retries() -> Result<(), Error> {
    FOUR_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn a_files_retry_of_three_makes_an_attribute_with_retry_one_attempt_four_times() {
    settings("[groups.file-retries]\nretry = 3\n")
        .apply(&FOUR)
        .unwrap();
    let (answer, made_attempts) = attempts(&FOUR_CALLS, file_retries);
    assert_eq!(answer, Err(Error::Busy));
    assert_eq!(
        made_attempts, 4,
        "the file's 3 retries, not the attribute's 1"
    );
    let m = FOUR.get("file-retries").unwrap().metrics();
    assert_eq!((m.calls, m.failures, m.retries), (4, 4, 3));
    assert_eq!(
        made(&FOUR, "file-retries").first_delay(),
        Duration::from_millis(10)
    );
    let overrides: Vec<String> = FOUR.overrides().iter().map(ToString::to_string).collect();
    assert_eq!(
        overrides,
        [
            "group `file-retries`: the attribute's `retry = 1` is overridden by `retry = 3` \
          (`retry.toml` line 2, [groups.file-retries])"
        ]
    );
}

static LIVE: LazyLock<Registry> = LazyLock::new(registry);
static LIVE_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "live-off", registry = &LIVE, threshold = 100, retry = 2,
    idempotent = true, retry_delay_ms = 1)]
fn live_off() -> Result<(), Error> {
    LIVE_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn retry_zero_in_the_file_stops_a_live_groups_retries_and_dropping_it_restores_them() {
    assert_eq!(
        attempts(&LIVE_CALLS, live_off).1,
        3,
        "the attribute's two retries"
    );
    settings("[groups.live-off]\nretry = 0\n")
        .apply(&LIVE)
        .unwrap();
    assert_eq!(attempts(&LIVE_CALLS, live_off).1, 1, "switched off, live");
    assert_eq!(attempts(&LIVE_CALLS, live_off).1, 1);
    Settings::new().apply(&LIVE).unwrap();
    assert_eq!(
        attempts(&LIVE_CALLS, live_off).1,
        3,
        "back to the attribute's"
    );
    assert_eq!(LIVE.get("live-off").unwrap().metrics().retries, 4);
}

static ENV: LazyLock<Registry> = LazyLock::new(registry);
static ENV_CALLS: AtomicU32 = AtomicU32::new(0);
static DEFAULTS_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "env-wins", registry = &ENV, threshold = 100, retry = 1,
    idempotent = true, retry_delay_ms = 1)]
fn env_wins() -> Result<(), Error> {
    ENV_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[circuit_breaker(group = "defaults-lose", registry = &ENV, threshold = 100, retry = 1,
    idempotent = true, retry_delay_ms = 1)]
fn defaults_lose() -> Result<(), Error> {
    DEFAULTS_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn a_variable_beats_the_file_and_the_attribute_beats_the_defaults() {
    let file = "[defaults]\nretry = 5\n[groups.env-wins]\nretry = 3\n";
    settings(file)
        .with_env([("BREAKER_GROUPS__ENV_WINS__RETRY", "2")])
        .unwrap()
        .apply(&ENV)
        .unwrap();
    assert_eq!(
        attempts(&ENV_CALLS, env_wins).1,
        3,
        "the variable's 2 retries"
    );
    assert_eq!(
        attempts(&DEFAULTS_CALLS, defaults_lose).1,
        2,
        "the attribute's 1 retry over `[defaults]`' 5"
    );
    let overrides: Vec<String> = ENV.overrides().iter().map(ToString::to_string).collect();
    assert!(
        overrides.iter().any(|o| o
            == "group `env-wins`: the attribute's `retry = 1` is overridden by `retry = 2` \
                (variable `BREAKER_GROUPS__ENV_WINS__RETRY`)"),
        "{overrides:?}"
    );
    assert!(
        !overrides.iter().any(|o| o.contains("defaults-lose")),
        "{overrides:?}"
    );
}

static PLAIN: LazyLock<Registry> = LazyLock::new(registry);
static PLAIN_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "no-retry-loop", registry = &PLAIN, threshold = 100)]
fn no_retry_loop() -> Result<(), Error> {
    PLAIN_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn a_retry_key_for_an_attribute_without_retry_is_refused_and_nothing_applies() {
    assert_eq!(attempts(&PLAIN_CALLS, no_retry_loop).1, 1);
    for toml in [
        "[groups.no-retry-loop]\nthreshold = 7\nretry = 2\n",
        "[templates.t]\nretry_budget_ratio = 0.5\n[groups.no-retry-loop]\ntemplate = \"t\"\n",
    ] {
        let err = settings(toml).apply(&PLAIN).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unenforced, "{toml}");
        let message = err.to_string();
        for part in [
            "group `no-retry-loop`: ",
            "would never be enforced",
            "does not name `retry`",
            "add `retry = N, idempotent = true` to the attribute",
        ] {
            assert!(message.contains(part), "missing {part:?} in: {message}");
        }
        let breaker = PLAIN.get("no-retry-loop").unwrap();
        assert_eq!(breaker.config().threshold(), 100, "nothing applied");
        assert!(PLAIN.overrides().is_empty());
    }
    let err = Settings::new()
        .with_env([("BREAKER_GROUPS__NO_RETRY_LOOP__RETRY", "1")])
        .unwrap()
        .apply(&PLAIN)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("BREAKER_GROUPS__NO_RETRY_LOOP__RETRY"),
        "{err}"
    );

    // `[defaults]` tunes the groups that retry and leaves this one alone.
    settings("[defaults]\nretry = 2\n").apply(&PLAIN).unwrap();
    assert_eq!(attempts(&PLAIN_CALLS, no_retry_loop).1, 1);
    let breaker = PLAIN.get("no-retry-loop").unwrap();
    assert!(
        breaker.made_group_retry().is_none(),
        "and makes it no retry"
    );
}

static IDEM: LazyLock<Registry> = LazyLock::new(registry);
static IDEM_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "idempotent-only", registry = &IDEM, threshold = 100, idempotent = true)]
fn idempotent_only() -> Result<(), Error> {
    IDEM_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn idempotent_alone_retries_only_as_the_configuration_says() {
    assert_eq!(
        attempts(&IDEM_CALLS, idempotent_only).1,
        1,
        "no retry of its own"
    );
    settings("[defaults]\nretry = 1\nretry_delay_ms = 0\n")
        .apply(&IDEM)
        .unwrap();
    assert_eq!(
        attempts(&IDEM_CALLS, idempotent_only).1,
        2,
        "its `retry` is no literal: `[defaults]` sets it"
    );
    settings("[groups.idempotent-only]\nretry = 3\nretry_delay_ms = 0\n")
        .apply(&IDEM)
        .unwrap();
    assert_eq!(attempts(&IDEM_CALLS, idempotent_only).1, 4);
    assert!(IDEM.overrides().is_empty(), "no literal was overridden");
}

static BUDGET: LazyLock<Registry> = LazyLock::new(registry);
static BUDGET_FAILS: AtomicBool = AtomicBool::new(true);

#[circuit_breaker(group = "budget", registry = &BUDGET, threshold = 1000, retry = 1,
    idempotent = true, retry_delay_ms = 0, retry_budget_ratio = 0.0, retry_budget_floor = 4)]
fn budgeted() -> Result<(), Error> {
    if BUDGET_FAILS.load(SeqCst) {
        Err(Error::Busy)
    } else {
        Ok(())
    }
}

#[test]
fn budget_keys_change_the_buckets_limits_live_and_keep_its_balance() {
    // The clock never moves (no backoff): the floor pays nothing after the
    // first second's tokens, and every count below is exact.
    let budget = |f: &dyn Fn(&breakerbox::retry::RetryBudget) -> u64| {
        let breaker = BUDGET.get("budget").unwrap();
        f(breaker.made_group_retry().unwrap().budget())
    };
    assert_eq!(budgeted(), Err(Error::Busy));
    assert_eq!(
        budget(&|b| b.available()),
        3,
        "one second of a floor of 4, less one retry"
    );
    assert_eq!(budget(&|b| b.capacity()), 140);

    settings("[groups.budget]\nretry_budget_ratio = 1.0\nretry_budget_floor = 10\n")
        .apply(&BUDGET)
        .unwrap();
    assert_eq!(budget(&|b| b.capacity()), 200);
    assert_eq!(
        budget(&|b| b.available()),
        3,
        "a reload neither fills nor empties it"
    );
    assert_eq!(budgeted(), Err(Error::Busy));
    assert_eq!(
        budget(&|b| b.available()),
        3,
        "the first attempt paid one, the retry took one"
    );

    BUDGET_FAILS.store(false, SeqCst);
    for _ in 0..150 {
        budgeted().unwrap();
    }
    assert_eq!(budget(&|b| b.available()), 153);

    settings("[groups.budget]\nretry_budget_ratio = 1.0\nretry_budget_floor = 0\n")
        .apply(&BUDGET)
        .unwrap();
    assert_eq!(budget(&|b| b.capacity()), 100);
    assert_eq!(
        budget(&|b| b.available()),
        100,
        "held to the smaller bucket"
    );

    settings("[groups.budget]\nretry_budget_ratio = 0.0\nretry_budget_floor = 10\n")
        .apply(&BUDGET)
        .unwrap();
    assert_eq!(budget(&|b| b.capacity()), 200);
    assert_eq!(
        budget(&|b| b.available()),
        100,
        "a larger bucket is not filled"
    );
    budgeted().unwrap();
    assert_eq!(
        budget(&|b| b.available()),
        100,
        "a ratio of 0 pays nothing in"
    );
    assert_eq!(made(&BUDGET, "budget").budget_limits(), Some((0.0, 10)));
}

static KEYED: LazyLock<Registry> = LazyLock::new(registry);
static KEYED_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "retried-hosts", key = host, registry = &KEYED, threshold = 100,
    retry = 1, idempotent = true, retry_delay_ms = 0)]
fn fetch(host: &str) -> Result<(), Error> {
    let _ = host;
    KEYED_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn every_key_of_a_keyed_group_runs_the_files_retries() {
    assert_eq!(attempts(&KEYED_CALLS, || fetch("a")).1, 2);
    assert_eq!(attempts(&KEYED_CALLS, || fetch("b")).1, 2);
    settings("[groups.retried-hosts]\nretry = 3\n")
        .apply(&KEYED)
        .unwrap();
    for host in ["a", "b", "c"] {
        assert_eq!(attempts(&KEYED_CALLS, || fetch(host)).1, 4, "key {host}");
    }
}

#[test]
fn a_reload_racing_retried_calls_never_allows_more_than_either_policy_nor_refills_the_budget() {
    static POLICY: RetryPolicy = RetryPolicy::new(2)
        .delay(Duration::ZERO)
        .budget(0.0, 1_000_000);
    const THREADS: usize = 4;
    const CALLS: usize = 400;
    let shared = Arc::new(registry());
    let declared = Config::builder()
        .threshold(Config::MAX_THRESHOLD)
        .build()
        .unwrap();
    let breaker = shared.breaker("racing-reload", &declared);
    let _ = breaker.group_retry(&POLICY);
    let start = Arc::new(Barrier::new(THREADS + 1));
    let done = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (breaker, start) = (breaker.clone(), start.clone());
            std::thread::spawn(move || {
                let retry: &Retry = breaker.group_retry(&POLICY);
                start.wait();
                let mut most = 0;
                let mut made = 0;
                for _ in 0..CALLS {
                    let mut tries = 0;
                    let _ = breaker.call_retrying(retry, || {
                        tries += 1;
                        Err::<(), _>("busy")
                    });
                    most = most.max(tries);
                    made += tries;
                }
                (most, made)
            })
        })
        .collect();
    let reloader = {
        let (breaker, shared, start, done) =
            (breaker.clone(), shared.clone(), start.clone(), done.clone());
        std::thread::spawn(move || {
            let off = settings("[groups.racing-reload]\nretry = 0\n");
            let on = Settings::new();
            let available = || breaker.made_group_retry().unwrap().budget().available();
            start.wait();
            let mut reloads = 0;
            while !done.load(SeqCst) || reloads < 20 {
                let before = available();
                let to = if reloads % 2 == 0 { &off } else { &on };
                to.apply(&shared).unwrap();
                assert!(available() <= before, "a reload never grows the balance");
                reloads += 1;
            }
            reloads
        })
    };
    let mut total = 0;
    for caller in callers {
        let (most, made) = caller.join().unwrap();
        assert!(most <= 3, "an attempt beyond both policies: {most}");
        total += made;
    }
    done.store(true, SeqCst);
    assert!(reloader.join().unwrap() >= 20);
    let m = breaker.metrics();
    let calls = (THREADS * CALLS) as u64;
    assert_eq!(m.calls, total as u64);
    assert_eq!(
        m.retries,
        total as u64 - calls,
        "every attempt past the first is a retry"
    );
    assert_eq!(
        breaker.made_group_retry().unwrap().budget().available(),
        1_000_000 - m.retries,
        "the budget paid out exactly the retries made, and took nothing back in"
    );

    // Settled: each policy holds exactly.
    settings("[groups.racing-reload]\nretry = 0\n")
        .apply(&shared)
        .unwrap();
    let mut tries = 0;
    let _ = breaker.call_retrying(breaker.group_retry(&POLICY), || {
        tries += 1;
        Err::<(), _>("busy")
    });
    assert_eq!(tries, 1);
    Settings::new().apply(&shared).unwrap();
    let mut tries = 0;
    let _ = breaker.call_retrying(breaker.group_retry(&POLICY), || {
        tries += 1;
        Err::<(), _>("busy")
    });
    assert_eq!(tries, 3);
}

static SHARED: LazyLock<Registry> = LazyLock::new(registry);
static SHARED_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "one-retries", registry = &SHARED, threshold = 100, retry = 1,
    idempotent = true, retry_delay_ms = 0)]
fn read_retried() -> Result<(), Error> {
    SHARED_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[circuit_breaker(group = "one-retries", registry = &SHARED, threshold = 100)]
fn write_once() -> Result<(), Error> {
    SHARED_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn a_group_with_one_retried_fn_takes_the_keys_and_its_other_fns_still_run_once() {
    settings("[groups.one-retries]\nretry = 2\n")
        .apply(&SHARED)
        .unwrap();
    assert_eq!(attempts(&SHARED_CALLS, read_retried).1, 3);
    assert_eq!(
        attempts(&SHARED_CALLS, write_once).1,
        1,
        "no retry loop, no retry"
    );
}

static MIXED: LazyLock<Registry> = LazyLock::new(registry);
static MIXED_CALLS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "mixed", registry = &MIXED, threshold = 100, idempotent = true)]
fn mixed_alone() -> Result<(), Error> {
    MIXED_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[circuit_breaker(group = "mixed", registry = &MIXED, threshold = 100, retry = 2,
    idempotent = true, retry_delay_ms = 0)]
fn mixed_retried() -> Result<(), Error> {
    MIXED_CALLS.fetch_add(1, SeqCst);
    Err(Error::Busy)
}

#[test]
fn a_group_of_idempotent_alone_and_retry_runs_the_retry_keys_whichever_fn_calls_first() {
    // The fn without keys of its own calls first: its group's `retry = 2`
    // still holds once that fn calls, for both fns.
    let (_, alone) = attempts(&MIXED_CALLS, mixed_alone);
    assert_eq!(alone, 1, "no fn of the group declared retries yet");
    let (_, retried) = attempts(&MIXED_CALLS, mixed_retried);
    assert_eq!(retried, 3, "the declared `retry = 2`");
    let (_, alone) = attempts(&MIXED_CALLS, mixed_alone);
    assert_eq!(alone, 3, "the group's retries, for the fn without its own");
    // The file's keys are layered over the declaration that sets keys.
    settings("[groups.mixed]\nretry = 1\n")
        .apply(&MIXED)
        .unwrap();
    let overrides: Vec<String> = MIXED.overrides().iter().map(ToString::to_string).collect();
    assert_eq!(
        overrides,
        [
            "group `mixed`: the attribute's `retry = 2` is overridden by `retry = 1` \
          (`retry.toml` line 2, [groups.mixed])"
        ]
    );
    let (_, alone) = attempts(&MIXED_CALLS, mixed_alone);
    assert_eq!(alone, 2);
}
