//! `#[circuit_breaker(key = ..)]`: one breaker per key of a group, on the group's
//! config. An open key refuses (body not run, the fallback answers, or
//! `CircuitOpen`) while the group's other keys run; every way out of a call
//! (`Ok`, `Err`, `?`, `return`, a panic, a dropped future) is recorded against
//! the call's own key; a full group evicts idle closed keys, never an open one.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::LazyLock;
use std::time::Duration;

use breakerbox::{circuit_breaker, keyed::KeyedGroup, OpenReason, State};
use support::{after_gate, poll_ready, AppError, Isolated};

/// The breaker of `key` in the `String`-keyed group `group` of `registry`.
fn host_state(registry: &Isolated, group: &str, key: &str) -> State {
    hosts(registry, group)
        .get(key)
        .unwrap_or_else(|| panic!("no key `{key}` in `{group}`"))
        .state()
}

fn hosts(registry: &Isolated, group: &str) -> KeyedGroup<String> {
    registry
        .get_keyed::<String>(group)
        .expect("keyed by String")
        .unwrap_or_else(|| panic!("keyed group `{group}` was never used"))
}

static OPEN: LazyLock<Isolated> = LazyLock::new(Isolated::new);
static BODY_RUNS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(group = "hosts", key = host, threshold = 2, open_ms = 1_000, registry = &OPEN)]
fn fetch(host: &str, fail: bool) -> Result<String, AppError> {
    BODY_RUNS.fetch_add(1, SeqCst);
    if fail {
        return Err(AppError::Down);
    }
    Ok(format!("page of {host}"))
}

#[test]
fn an_open_key_refuses_while_another_key_of_the_group_runs() {
    let _ = fetch("down.example", true);
    let _ = fetch("down.example", true);
    assert_eq!(host_state(&OPEN, "hosts", "down.example"), State::Open);

    let runs = BODY_RUNS.load(SeqCst);
    let Err(AppError::Open(open)) = fetch("down.example", false) else {
        panic!("an open key must refuse");
    };
    assert_eq!(BODY_RUNS.load(SeqCst), runs, "the body did not run");
    assert_eq!(open.group(), "hosts");
    assert_eq!(open.reason(), OpenReason::Open);
    assert_eq!(open.retry_after(), Some(Duration::from_secs(1)));

    assert_eq!(fetch("up.example", false).unwrap(), "page of up.example");
    assert_eq!(BODY_RUNS.load(SeqCst), runs + 1, "another key runs");
    assert_eq!(host_state(&OPEN, "hosts", "up.example"), State::Closed);

    let group = hosts(&OPEN, "hosts").metrics();
    assert_eq!((group.keys, group.open, group.key_capacity), (2, 1, 10_000));
    assert_eq!(
        (group.calls, group.failures, group.successes, group.rejected),
        (3, 2, 1, 1)
    );

    // The group's config: after `open_ms`, the key's probe closes it.
    OPEN.clock.advance(Duration::from_secs(1));
    assert_eq!(
        fetch("down.example", false).unwrap(),
        "page of down.example"
    );
    assert_eq!(host_state(&OPEN, "hosts", "down.example"), State::Closed);
}

static FALLBACK: LazyLock<Isolated> = LazyLock::new(Isolated::new);

struct Client {
    tenant: u64,
}

impl Client {
    #[circuit_breaker(group = "tenants", key = self.tenant, threshold = 1, registry = &FALLBACK, fallback = cached)]
    fn quota(&self, fail: bool) -> Result<u32, AppError> {
        if fail {
            Err(AppError::Down)
        } else {
            Ok(100)
        }
    }

    fn cached(&self, _fail: bool) -> Result<u32, AppError> {
        Ok(self.tenant as u32)
    }
}

#[test]
fn the_fallback_answers_for_an_open_key_only_and_is_never_counted() {
    let (a, b) = (Client { tenant: 7 }, Client { tenant: 8 });
    let _ = a.quota(true);
    assert_eq!(a.quota(false), Ok(7), "open: the fallback answers");
    assert_eq!(b.quota(false), Ok(100), "another key: the body runs");
    let tenants = FALLBACK.get_keyed::<u64>("tenants").unwrap().unwrap();
    assert_eq!(tenants.get(&7).unwrap().state(), State::Open);
    let m = tenants.get(&7).unwrap().metrics();
    assert_eq!((m.calls, m.failures, m.successes, m.rejected), (1, 1, 0, 1));
}

static EXITS: LazyLock<Isolated> = LazyLock::new(Isolated::new);

fn parse(s: &str) -> Result<u32, AppError> {
    s.parse().map_err(|_| AppError::Down)
}

#[circuit_breaker(group = "exits", key = shard, threshold = 10, registry = &EXITS)]
fn exit(shard: u32, how: &str) -> Result<u32, AppError> {
    match how {
        "ok" => Ok(1),
        "question" => Ok(parse("not a number")?),
        "return" => return Err(AppError::Down),
        "panic" => panic!("the body panics"),
        _ => Err(AppError::BadRequest),
    }
}

#[test]
fn every_way_out_is_recorded_against_the_calls_own_key() {
    assert_eq!(exit(1, "ok"), Ok(1));
    assert_eq!(exit(2, "question"), Err(AppError::Down));
    assert_eq!(exit(3, "return"), Err(AppError::Down));
    assert!(catch_unwind(AssertUnwindSafe(|| exit(4, "panic"))).is_err());
    let shards = EXITS.get_keyed::<u32>("exits").unwrap().unwrap();
    let counts = |key: u32| {
        let m = shards.get(&key).unwrap().metrics();
        (m.calls, m.successes, m.failures)
    };
    assert_eq!(counts(1), (1, 1, 0));
    assert_eq!(counts(2), (1, 0, 1), "`?` fails key 2");
    assert_eq!(counts(3), (1, 0, 1), "`return Err` fails key 3");
    assert_eq!(counts(4), (1, 0, 1), "a panic fails key 4");
    let group = shards.metrics();
    assert_eq!((group.keys, group.calls, group.failures), (4, 4, 3));
}

static ASYNC: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "async-hosts", key = host.as_str(), threshold = 1, registry = &ASYNC)]
async fn fetch_async(
    host: String,
    gate: Option<tokio::sync::oneshot::Receiver<()>>,
    fail: bool,
) -> Result<(), AppError> {
    after_gate(gate, fail).await
}

#[tokio::test]
async fn a_dropped_keyed_future_is_abandoned_against_its_key_and_frees_nothing_else() {
    // Cancelled while in flight: abandoned, neither success nor failure.
    let (_tx, gate) = tokio::sync::oneshot::channel();
    let call = tokio::spawn(fetch_async("slow.example".into(), Some(gate), false));
    tokio::task::yield_now().await;
    call.abort();
    let _ = call.await;
    let group = hosts(&ASYNC, "async-hosts");
    let slow = group.get("slow.example").unwrap().metrics();
    assert_eq!(
        (slow.calls, slow.abandoned, slow.successes, slow.failures),
        (1, 1, 0, 0)
    );
    assert_eq!(slow.state, State::Closed);

    // A failure opens its key only; the open key refuses, the other runs.
    assert_eq!(
        fetch_async("bad.example".into(), None, true).await,
        Err(AppError::Down)
    );
    assert!(fetch_async("bad.example".into(), None, false)
        .await
        .unwrap_err()
        .is_open());
    assert_eq!(
        fetch_async("slow.example".into(), None, false).await,
        Ok(())
    );
    assert_eq!(
        host_state(&ASYNC, "async-hosts", "bad.example"),
        State::Open
    );
    assert_eq!(
        host_state(&ASYNC, "async-hosts", "slow.example"),
        State::Closed
    );
}

static EVICT: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "evict", key = id, key_capacity = 16, threshold = 1, registry = &EVICT)]
fn touch(id: u64, fail: bool) -> Result<(), AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(())
    }
}

#[test]
fn a_full_group_evicts_idle_closed_keys_and_never_an_open_one() {
    let _ = touch(0, true); // key 0 is open from now on
    for id in 1..2_000 {
        touch(id, false).unwrap();
    }
    let group = EVICT.get_keyed::<u64>("evict").unwrap().unwrap();
    let m = group.metrics();
    assert!(m.keys <= 16 + 1, "bounded by key_capacity: {} keys", m.keys);
    assert!(m.evictions >= 2_000 - 17, "{} evictions", m.evictions);
    assert_eq!(
        group.get(&0).map(|b| b.state()),
        Some(State::Open),
        "the open key stays"
    );
    assert!(touch(0, false).unwrap_err().is_open(), "and still refuses");
    // Evicted keys' counts are kept in the group's sums.
    assert_eq!((m.calls, m.successes, m.failures), (2_000, 1_999, 1));
}

static SHARED_TYPES: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "by-name", key = name, registry = &SHARED_TYPES, threshold = 1)]
fn by_str(name: &str) -> Result<(), AppError> {
    let _ = name;
    Err(AppError::Down)
}

#[circuit_breaker(group = "by-name", key = name, registry = &SHARED_TYPES, threshold = 1)]
fn by_string(name: String) -> Result<(), AppError> {
    let _ = name;
    Ok(())
}

#[test]
fn str_and_string_keys_name_the_same_breakers() {
    let _ = by_str("a");
    assert!(
        by_string("a".to_owned()).unwrap_err().is_open(),
        "`a` opened by `by_str`"
    );
    assert_eq!(by_string("b".to_owned()), Ok(()));
    assert_eq!(hosts(&SHARED_TYPES, "by-name").metrics().keys, 2);
}

static WRONG: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "mixed", key = name, registry = &WRONG)]
fn keyed_by_name(name: &str) -> Result<(), AppError> {
    let _ = name;
    Ok(())
}

#[circuit_breaker(group = "mixed", key = id, registry = &WRONG)]
fn keyed_by_id(id: u64) -> Result<(), AppError> {
    let _ = id;
    Ok(())
}

#[test]
fn one_group_keyed_by_two_types_panics_naming_the_group_and_both_types() {
    keyed_by_name("a").unwrap();
    for _ in 0..2 {
        let panic = catch_unwind(|| keyed_by_id(1)).unwrap_err();
        let message = panic.downcast_ref::<String>().expect("a formatted message");
        for part in ["`mixed`", "`alloc::string::String`", "`u64`"] {
            assert!(message.contains(part), "{part} in {message}");
        }
    }
    // The group and its first key type are unharmed.
    keyed_by_name("b").unwrap();
    assert_eq!(hosts(&WRONG, "mixed").metrics().keys, 2);
}

static BOTH: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "api", key = host, threshold = 1, registry = &BOTH)]
fn keyed_api(host: &str) -> Result<(), AppError> {
    let _ = host;
    Err(AppError::Down)
}

#[circuit_breaker(group = "api", threshold = 1, registry = &BOTH)]
fn unkeyed_api() -> Result<(), AppError> {
    Ok(())
}

#[test]
fn a_keyed_and_an_unkeyed_group_of_one_name_are_separate() {
    let _ = keyed_api("a");
    assert!(keyed_api("a").unwrap_err().is_open());
    assert_eq!(unkeyed_api(), Ok(()), "the unkeyed breaker is its own");
    assert_eq!(BOTH.get("api").unwrap().state(), State::Closed);
    assert_eq!(BOTH.keyed_metrics()[0].open, 1);
    assert_eq!(BOTH.groups(), ["api"], "the registry lists the unkeyed one");
}

#[circuit_breaker(group = "keyed-global", key = n % 4, threshold = 1)]
fn global_keyed(n: u8) -> Result<u8, AppError> {
    Ok(n)
}

#[test]
fn without_registry_the_keyed_group_is_in_the_process_wide_registry() {
    for n in 0..8 {
        assert_eq!(global_keyed(n), Ok(n));
    }
    let group = breakerbox::registry()
        .get_keyed::<u8>("keyed-global")
        .unwrap()
        .unwrap();
    assert_eq!((group.metrics().keys, group.metrics().successes), (4, 8));
}

static POLLED: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "polled", key = *id, threshold = 1, registry = &POLLED)]
async fn polled(id: &u32) -> Result<u32, AppError> {
    if *id == 0 {
        return Err(AppError::Down);
    }
    Ok(*id)
}

#[test]
fn an_async_keyed_fn_borrowing_its_key_records_per_key() {
    assert_eq!(poll_ready(polled(&0)), Err(AppError::Down));
    assert!(poll_ready(polled(&0)).unwrap_err().is_open());
    assert_eq!(poll_ready(polled(&5)), Ok(5));
    let group = POLLED.get_keyed::<u32>("polled").unwrap().unwrap();
    assert_eq!(group.get(&0).unwrap().state(), State::Open);
    assert_eq!(group.get(&5).unwrap().state(), State::Closed);
}

#[circuit_breaker(group = "keyed-global-mixed", key = name)]
fn global_by_name(name: &str) -> Result<(), AppError> {
    let _ = name;
    Ok(())
}

#[circuit_breaker(group = "keyed-global-mixed", key = id)]
fn global_by_id(id: u16) -> Result<(), AppError> {
    let _ = id;
    Ok(())
}

#[test]
fn in_the_process_wide_registry_too_a_second_key_type_panics_on_every_call() {
    global_by_id(1).unwrap();
    for _ in 0..2 {
        let panic = catch_unwind(|| global_by_name("a")).unwrap_err();
        let message = panic.downcast_ref::<String>().expect("a formatted message");
        assert!(
            message.contains("`keyed-global-mixed` is keyed by `u16`")
                && message.contains("`alloc::string::String`"),
            "{message}"
        );
    }
    global_by_id(2).unwrap();
}
