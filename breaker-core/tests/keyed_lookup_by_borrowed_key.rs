//! A keyed group finds a key it holds by the key's borrowed form: `&str`,
//! `String`, `Arc<str>` and `Cow<str>` name the same `String` key, and finding
//! it allocates nothing (a `String` is made only for a new key). The registry
//! keeps one key type per group, lists every keyed group's metrics, and records
//! two different configs declared for one keyed group as a conflict.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use breaker_core::__private::KeyedSite;
use breaker_core::{AsKey, Config, ConfigSource, KeyedGroup, Registry, State};

mod support;

use support::{allocations_during, CountingAlloc};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

fn strict() -> Config {
    Config::builder().threshold(1).build().unwrap()
}

#[test]
fn every_string_form_names_the_same_key() {
    let hosts = KeyedGroup::<String>::new("forms", strict(), 100);
    hosts
        .breaker_for("a.example")
        .try_acquire()
        .unwrap()
        .failure();
    let owned = String::from("a.example");
    let arc: Arc<str> = Arc::from("a.example");
    let boxed: Box<str> = "a.example".into();
    let cow: Cow<'_, str> = Cow::Borrowed("a.example");
    for breaker in [
        hosts.breaker_for(&owned),
        hosts.breaker_for(&arc),
        hosts.breaker_for(&boxed),
        hosts.breaker_for(&cow),
        hosts.breaker_for(&&*owned),
    ] {
        assert_eq!(breaker.state(), State::Open);
    }
    assert_eq!(hosts.metrics().keys, 1);
}

#[test]
fn finding_a_held_key_allocates_nothing_and_a_new_key_does() {
    let hosts = KeyedGroup::<String>::new("alloc", strict(), 100);
    let peers = KeyedGroup::<(IpAddr, u16)>::new("alloc-peers", strict(), 100);
    let peer = (IpAddr::V4(Ipv4Addr::LOCALHOST), 8080);
    // Each key's first call from this thread (its breaker sets up its cells).
    hosts
        .breaker_for("a.example")
        .try_acquire()
        .unwrap()
        .success();
    peers.breaker_for(&peer).try_acquire().unwrap().success();

    let new_key = allocations_during(|| drop(hosts.breaker_for("b.example")));
    assert!(new_key > 0, "a new key is kept: the counter sees it");
    let held = allocations_during(|| {
        for _ in 0..1_000 {
            hosts
                .breaker_for("a.example")
                .try_acquire()
                .unwrap()
                .success();
            peers.breaker_for(&peer).try_acquire().unwrap().success();
            assert!(hosts.get("a.example").is_some());
        }
    });
    assert_eq!(held, 0, "a held key is found without allocating");
}

#[test]
fn integer_address_and_tuple_keys_each_key_their_own_breaker() {
    let shards = KeyedGroup::<u16>::new("shards", strict(), 100);
    shards.breaker_for(&3u16).try_acquire().unwrap().failure();
    assert_eq!(shards.breaker_for(&3u16).state(), State::Open);
    assert_eq!(shards.breaker_for(&4u16).state(), State::Closed);

    let sockets = KeyedGroup::<SocketAddr>::new("sockets", strict(), 100);
    let a: SocketAddr = "10.0.0.1:80".parse().unwrap();
    let b: SocketAddr = "10.0.0.1:81".parse().unwrap();
    sockets.breaker_for(&a).try_acquire().unwrap().failure();
    assert_eq!(sockets.breaker_for(&b).state(), State::Closed);
    assert_eq!(sockets.get(&a).unwrap().state(), State::Open);

    let pairs = KeyedGroup::<(String, u16)>::new("pairs", strict(), 100);
    pairs
        .breaker_for(&("db".to_owned(), 1))
        .try_acquire()
        .unwrap()
        .failure();
    assert_eq!(
        pairs.breaker_for(&("db".to_owned(), 1)).state(),
        State::Open
    );
    assert_eq!(
        pairs.breaker_for(&("db".to_owned(), 2)).state(),
        State::Closed
    );
}

/// A key type of the user's own, looked up by a borrowed form.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Tenant(String);

impl std::borrow::Borrow<str> for Tenant {
    fn borrow(&self) -> &str {
        &self.0
    }
}

struct TenantRef<'a>(&'a str);

impl AsKey for TenantRef<'_> {
    type Owned = Tenant;
    type Lookup = str;
    fn lookup(&self) -> &str {
        self.0
    }
    fn to_owned_key(&self) -> Tenant {
        Tenant(self.0.to_owned())
    }
}

#[test]
fn a_users_key_type_is_looked_up_by_its_borrowed_form() {
    let tenants = KeyedGroup::<Tenant>::new("tenants", strict(), 100);
    tenants
        .breaker_for(&TenantRef("acme"))
        .try_acquire()
        .unwrap()
        .failure();
    let held = allocations_during(|| {
        assert_eq!(tenants.breaker_for(&TenantRef("acme")).state(), State::Open);
    });
    assert_eq!(held, 0);
    assert_eq!(tenants.metrics().keys, 1);
}

#[test]
fn a_group_has_one_key_type_and_the_error_names_both() {
    let registry = Registry::new();
    registry.keyed::<String>("one-type", &strict(), 10).unwrap();
    let wrong = registry
        .keyed::<u64>("one-type", &strict(), 10)
        .unwrap_err();
    assert_eq!(
        (wrong.group, wrong.existing, wrong.requested),
        ("one-type", "alloc::string::String", "u64")
    );
    let message = wrong.to_string();
    assert!(
        message.contains("`one-type`") && message.contains("`u64`"),
        "{message}"
    );
    assert_eq!(registry.get_keyed::<u64>("one-type").unwrap_err(), wrong);
    assert!(registry.get_keyed::<String>("one-type").unwrap().is_some());
    assert!(registry
        .get_keyed::<String>("never-used")
        .unwrap()
        .is_none());
}

#[test]
#[should_panic(expected = "keyed group `site-types` is keyed by `alloc::string::String`")]
fn a_site_meeting_another_key_type_panics() {
    static SITE: KeyedSite = KeyedSite::new();
    let registry = Registry::new();
    registry
        .keyed::<String>("site-types", &strict(), 10)
        .unwrap();
    SITE.breaker(&registry, "site-types", &strict(), 10, &7u64);
}

#[test]
fn keyed_metrics_list_every_keyed_group_sorted_and_apart_from_unkeyed_ones() {
    let registry = Registry::new();
    let b = registry.keyed::<u64>("b-tenants", &strict(), 10).unwrap();
    let a = registry.keyed::<String>("a-hosts", &strict(), 20).unwrap();
    a.breaker_for("x").try_acquire().unwrap().failure();
    a.breaker_for("y").try_acquire().unwrap().success();
    b.breaker_for(&1u64).try_acquire().unwrap().success();
    registry.breaker("a-hosts", &strict()); // an unkeyed group of the same name
    let all = registry.keyed_metrics();
    let summary: Vec<_> = all
        .iter()
        .map(|m| (m.group, m.keys, m.open, m.key_capacity, m.calls))
        .collect();
    assert_eq!(
        summary,
        [("a-hosts", 2, 1, 20, 2), ("b-tenants", 1, 0, 10, 1)]
    );
    assert_eq!(registry.groups(), ["a-hosts"], "unkeyed groups list apart");
    assert_eq!(registry.get("a-hosts").unwrap().metrics().calls, 0);
}

#[test]
fn a_keyed_group_declared_with_two_configs_keeps_the_first_and_records_a_conflict() {
    let registry = Registry::new();
    let first = strict();
    let second = Config::builder().threshold(9).build().unwrap();
    registry
        .keyed::<String>("declared-twice", &first, 10)
        .unwrap();
    assert!(registry.conflicts().is_empty());
    registry
        .keyed::<String>("declared-twice", &first, 10)
        .unwrap();
    assert!(
        registry.conflicts().is_empty(),
        "the same config is no conflict"
    );
    let group = registry
        .keyed::<String>("declared-twice", &second, 10)
        .unwrap();
    assert_eq!(group.config().threshold(), 1, "the first declaration holds");
    let conflicts = registry.conflicts();
    assert_eq!(conflicts.len(), 1);
    let c = &conflicts[0];
    assert_eq!(
        (c.group, c.source, c.holding, c.ignored),
        ("declared-twice", ConfigSource::Declared, first, second)
    );
}
