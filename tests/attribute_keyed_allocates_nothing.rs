//! A keyed `#[circuit_breaker(key = ..)]` call to a key its group holds
//! allocates nothing once the key's first call from this thread is done: the
//! key is found by its borrowed form (no `String` made from a `&str`, nothing
//! interned), sync and async, closed and open. A new key allocates (the group
//! keeps it), which shows the counter sees what it must. Counted by a counting
//! global allocator that counts only the calling thread's allocations.

mod support;

use std::sync::LazyLock;

use breakerbox::circuit_breaker;
use support::{allocations_during, poll_ready, AppError, CountingAlloc, Isolated};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

static REG: LazyLock<Isolated> = LazyLock::new(Isolated::new);

#[circuit_breaker(group = "alloc-hosts", key = host, threshold = 1, registry = &REG)]
fn fetch(host: &str, fail: bool) -> Result<u32, AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(host.len() as u32)
    }
}

#[circuit_breaker(group = "alloc-async", key = id, threshold = 1, registry = &REG)]
async fn fetch_async(id: u64, fail: bool) -> Result<u64, AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(id)
    }
}

#[test]
fn a_call_to_a_key_the_group_holds_allocates_nothing() {
    let hosts = ["a.example", "b.example", "down.example"];
    for host in hosts {
        let _ = fetch(host, host.starts_with("down"));
    }
    let new_key = allocations_during(|| {
        let _ = fetch("new.example", false);
    });
    assert!(new_key > 0, "a new key is kept by the group: it allocates");

    let n = allocations_during(|| {
        for i in 0..1_000 {
            let host = hosts[i % 3];
            let result = fetch(host, false);
            assert_eq!(result.is_err(), host.starts_with("down"), "{host}");
        }
    });
    assert_eq!(n, 0, "calls to existing keys (closed and open) allocated");
}

#[test]
fn an_async_call_to_a_key_the_group_holds_allocates_nothing() {
    for id in 0..4 {
        let _ = poll_ready(fetch_async(id, id == 3));
    }
    let n = allocations_during(|| {
        for i in 0..1_000 {
            let id = i % 4;
            assert_eq!(poll_ready(fetch_async(id, false)).is_err(), id == 3);
        }
    });
    assert_eq!(n, 0, "async calls to existing keys allocated");
}
