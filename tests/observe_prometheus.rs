//! The Prometheus exporter as Prometheus sees it: a real scrape of the demo's
//! `/metrics` over 127.0.0.1, read by a strict parser of the text format, equals
//! the registry's snapshot series by series; group names that are not plain label
//! values come back intact; a group created after registration shows at the next
//! scrape; and scrapes taken during a storm of calls are consistent per group.

#![cfg(feature = "prometheus")]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::observe::prometheus::prometheus_client::encoding::prometheus_text;
use breakerbox::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use breakerbox::observe::prometheus::BreakerCollector;
use breakerbox::{metrics::Metrics as GroupMetrics, Config, ManualClock, Registry, State};

use exposition::Exposition;

#[path = "support/exposition.rs"]
mod exposition;

// The demo's server, whose `/metrics` is under test.
#[allow(dead_code)]
#[path = "../examples/demo/upstream.rs"]
mod upstream;

const STATES: [State; 5] = [
    State::Closed,
    State::Open,
    State::HalfOpen,
    State::ForcedOpen,
    State::ForcedClosed,
];

/// The `state` label Prometheus users query: resilience4j's spelling, written
/// out so a change of [`State::as_str`] shows here.
fn state_label(state: State) -> String {
    match state {
        State::Closed => "closed",
        State::Open => "open",
        State::HalfOpen => "half_open",
        State::ForcedOpen => "forced_open",
        State::ForcedClosed => "forced_closed",
    }
    .to_owned()
}

/// A Prometheus registry holding one collector of `breakers`.
fn metrics_of(breakers: &Arc<Registry>) -> Metrics {
    let mut metrics = Metrics::default();
    metrics.register_collector(Box::new(BreakerCollector::new(Arc::clone(breakers))));
    metrics
}

/// The exposition of `metrics`, encoded in process, parsed strictly.
fn scrape_in_process(metrics: &Metrics) -> Exposition {
    let mut text = String::new();
    prometheus_text::encode(&mut text, metrics).expect("encodes");
    exposition::parse(&text).unwrap_or_else(|why| panic!("{why}\n{text}"))
}

/// `GET /metrics` on `addr` over a plain TCP connection, off the runtime's
/// threads: the status line and headers, and the body.
async fn http_get_metrics(addr: String) -> (String, String) {
    let get = move || {
        let mut tcp = TcpStream::connect(&addr).expect("connects");
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let request = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        tcp.write_all(request.as_bytes()).expect("sends");
        let mut response = String::new();
        tcp.read_to_string(&mut response).expect("reads UTF-8");
        let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
        (head.to_owned(), body.to_owned())
    };
    tokio::task::spawn_blocking(get)
        .await
        .expect("the scrape ran")
}

/// A series a group should have: its name, its label besides `name`, its value.
type Expected = (&'static str, Option<(&'static str, String)>, f64);

/// Asserts that `scraped` holds exactly the series `m` implies for its group, with
/// `m`'s values.
fn assert_group_equals(scraped: &Exposition, breakers: &Registry, m: &GroupMetrics) {
    let g = m.group;
    let min_calls = breakers.get(g).unwrap().config().min_calls().unwrap_or(0);
    let mut expected: Vec<Expected> = Vec::new();
    let mut series = |name, label, value| expected.push((name, label, value));
    for state in STATES {
        let value = if m.state == state { 1.0 } else { 0.0 };
        series("breaker_state", Some(("state", state_label(state))), value);
    }
    for (kind, count) in [
        ("successful", m.successes),
        ("failed", m.failures),
        ("ignored", m.ignored),
        ("not_permitted", m.rejected),
        ("abandoned", m.abandoned),
        ("stale", m.stale),
    ] {
        series(
            "breaker_calls_total",
            Some(("kind", kind.into())),
            count as f64,
        );
    }
    if let Some(w) = m.window {
        let ok = (w.calls - w.failures) as f64;
        series(
            "breaker_buffered_calls",
            Some(("kind", "successful".into())),
            ok,
        );
        series(
            "breaker_buffered_calls",
            Some(("kind", "failed".into())),
            w.failures as f64,
        );
        series("breaker_slow_calls", None, w.slow_calls as f64);
        // -1 while the window holds fewer than `min_calls` outcomes.
        let judged = w.calls >= u64::from(min_calls.max(1));
        let rate = |rate: Option<f64>| if judged { rate.unwrap() } else { -1.0 };
        series("breaker_failure_rate", None, rate(w.failure_rate()));
        series("breaker_slow_call_rate", None, rate(w.slow_call_rate()));
    }
    let retry_after = m.retry_after.unwrap_or_default().as_secs_f64();
    series("breaker_retry_after_seconds", None, retry_after);
    for (kind, count) in [
        ("successful", m.probes_succeeded),
        ("failed", m.probes_failed),
        ("reclaimed", m.probes_reclaimed),
    ] {
        series(
            "breaker_probes_total",
            Some(("kind", kind.into())),
            count as f64,
        );
    }
    series(
        "breaker_probes_in_flight",
        None,
        f64::from(m.probes_in_flight),
    );
    series("breaker_opened_total", None, m.times_opened as f64);
    series("breaker_timeouts_total", None, m.timeouts as f64);
    series(
        "breaker_bulkhead_rejected_total",
        None,
        m.bulkhead_rejected as f64,
    );
    if let Some(n) = m.bulkhead_in_flight {
        series("breaker_bulkhead_in_flight", None, f64::from(n));
    }
    series("breaker_latency_trips_total", None, m.latency_trips as f64);
    if let Some(p99) = m.latency_p99 {
        series("breaker_latency_p99_seconds", None, p99.as_secs_f64());
    }
    series("breaker_admitted_share", None, m.admitted_share());
    series("breaker_ramp_refused_total", None, m.ramp_refused as f64);
    series("breaker_shadow", None, f64::from(u8::from(m.shadow)));
    series(
        "breaker_shadow_refused_total",
        None,
        m.shadow_refused as f64,
    );
    if let Some(throttle) = &m.throttle {
        series("breaker_throttle_reject_share", None, throttle.reject_share);
    }
    series("breaker_throttled_total", None, m.throttled as f64);
    series("breaker_held", None, f64::from(u8::from(m.held.is_some())));
    for (kind, count) in [("key", m.holds.key), ("group", m.holds.group)] {
        series(
            "breaker_holds_total",
            Some(("kind", kind.into())),
            count as f64,
        );
    }
    series("breaker_holds_capped_total", None, m.holds.capped as f64);
    series(
        "breaker_holds_released_total",
        None,
        m.holds.released as f64,
    );
    series("breaker_hold_waits_bad_total", None, m.holds.bad as f64);
    series("breaker_retries_total", None, m.retries as f64);
    let exhausted = m.retries_budget_exhausted as f64;
    series("breaker_retries_budget_exhausted_total", None, exhausted);
    series("breaker_generation", None, m.generation as f64);
    let consecutive = f64::from(m.consecutive_failures);
    series("breaker_consecutive_failures", None, consecutive);
    let open_for = m.open_for.unwrap_or_default().as_secs_f64();
    series("breaker_open_duration_seconds", None, open_for);

    // Transitions: the five the machine makes itself always, the others once seen.
    let machine = [
        (State::Closed, State::Open),
        (State::Open, State::HalfOpen),
        (State::HalfOpen, State::Open),
        (State::HalfOpen, State::Closed),
        (State::HalfOpen, State::HalfOpen),
    ];
    let mut transitions: Vec<_> = machine
        .iter()
        .map(|&(from, to)| (from, to, m.transitions.get(from, to)))
        .collect();
    transitions.extend(
        m.transitions
            .iter()
            .filter(|&(f, t, _)| !machine.contains(&(f, t))),
    );
    for (from, to, count) in &transitions {
        let (from, to) = (state_label(*from), state_label(*to));
        let labels = [("name", g), ("from", from.as_str()), ("to", to.as_str())];
        assert_eq!(
            scraped.value("breaker_transitions_total", &labels),
            Some(*count as f64),
            "{labels:?}"
        );
    }

    for (name, label, value) in &expected {
        let mut labels = vec![("name", g)];
        labels.extend(label.as_ref().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(
            scraped.value(name, &labels),
            Some(*value),
            "{name}{labels:?} of {g:?}"
        );
    }
    assert_eq!(
        scraped.of_group(g).count(),
        expected.len() + transitions.len(),
        "the series of {g:?}: {:#?}",
        scraped.of_group(g).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn scrape_of_the_demos_metrics_endpoint_equals_the_snapshot() {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));

    // A consecutive policy taken through a trip, refusals, a stale outcome and a
    // failed probe: open, with a known retry_after.
    let config = Config::builder()
        .threshold(2)
        .open(Duration::from_secs(5))
        .backoff(2.0)
        .build()
        .unwrap();
    let search = breakers.breaker("search", &config);
    search.try_acquire().unwrap().success();
    let late = search.try_acquire().unwrap();
    search.try_acquire().unwrap().failure();
    search.try_acquire().unwrap().failure();
    late.success(); // admitted before the trip: stale
    assert!(search.try_acquire().is_err());
    clock.advance(Duration::from_secs(5));
    search.try_acquire().unwrap().failure(); // the probe
    clock.advance(Duration::from_secs(3));
    assert!(search.try_acquire().is_err());
    assert_eq!(search.state(), State::Open);

    // A count window with failures and a slow call.
    let config = Config::builder()
        .window_calls(10)
        .slow_call(Duration::from_millis(100))
        .build()
        .unwrap();
    let geo = breakers.breaker("geo", &config);
    for _ in 0..3 {
        geo.try_acquire().unwrap().success();
    }
    geo.try_acquire().unwrap().failure();
    let slow = geo.try_acquire().unwrap();
    clock.advance(Duration::from_millis(150));
    slow.success();

    // The defaults: an ignored error, an abandoned call, a failure in a row.
    let users = breakers.breaker("users", &Config::default());
    users.try_acquire().unwrap().success();
    users.try_acquire().unwrap().ignore();
    drop(users.try_acquire().unwrap());
    users.try_acquire().unwrap().failure();

    // A half-open breaker with its probe in flight, and a forced one.
    let probing = breakers.breaker("probing", &config_open_ms(1_000));
    probing.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(1));
    let _probe = probing.try_acquire().unwrap();
    assert_eq!(probing.state(), State::HalfOpen);
    breakers
        .breaker("isolated", &Config::default())
        .force_open();

    let upstream = upstream::Upstream::start(metrics_of(&breakers))
        .await
        .expect("the demo's server starts");
    let addr = upstream.base_url().trim_start_matches("http://").to_owned();
    let (head, body) = http_get_metrics(addr).await;
    let snapshot = breakers.snapshot();

    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    let scraped = exposition::parse(&body).unwrap_or_else(|why| panic!("{why}\n{body}"));
    assert_eq!(snapshot.len(), 5);
    // The figures under test are not all zeros: a trip, a probe, a failed probe,
    // the backoff it grew, and a transition made by hand.
    let search = snapshot.group("search").unwrap();
    let closed_open = [("name", "search"), ("from", "closed"), ("to", "open")];
    assert_eq!(
        scraped.value("breaker_transitions_total", &closed_open),
        Some(1.0)
    );
    let reopened = [("name", "search"), ("from", "half_open"), ("to", "open")];
    assert_eq!(
        scraped.value("breaker_transitions_total", &reopened),
        Some(1.0)
    );
    assert_eq!(search.transitions.total(), 3);
    assert_eq!(search.open_for, Some(Duration::from_secs(10)));
    let open_for = [("name", "search")];
    assert_eq!(
        scraped.value("breaker_open_duration_seconds", &open_for),
        Some(10.0)
    );
    let forced = [
        ("name", "isolated"),
        ("from", "closed"),
        ("to", "forced_open"),
    ];
    assert_eq!(
        scraped.value("breaker_transitions_total", &forced),
        Some(1.0)
    );
    for m in snapshot.iter() {
        assert_group_equals(&scraped, &breakers, m);
    }
    assert_eq!(scraped.types["breaker_calls_total"], "counter");
    assert_eq!(scraped.types["breaker_state"], "gauge");
    assert_eq!(
        upstream.requests(),
        0,
        "a scrape is not an upstream request"
    );
}

fn config_open_ms(open_ms: u64) -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_millis(open_ms))
        .build()
        .unwrap()
}

#[test]
fn group_names_that_are_not_plain_label_values_come_back_intact() {
    let names = [
        "say \"cheese\"",
        r"C:\breakers\search",
        "two\nlines",
        "ünïcødé 🚦 搜索",
        "a}b,c=\"d\"",
    ];
    let breakers = Arc::new(Registry::new());
    for name in names {
        breakers.breaker(name, &Config::default());
    }
    let scraped = scrape_in_process(&metrics_of(&breakers));
    for name in names {
        let closed = scraped.value("breaker_state", &[("name", name), ("state", "closed")]);
        assert_eq!(closed, Some(1.0), "{name:?}");
        // 19 series, the five transitions of the machine, the open duration,
        // the timeout, bulkhead-refusal, latency-trip, ramp-refusal, retry,
        // spent-budget and throttled counters, the admitted share, shadow
        // mode's gauge and counter, and the hold's gauge and five counts.
        assert_eq!(scraped.of_group(name).count(), 41, "{name:?}");
    }
    assert_eq!(scraped.samples.len(), 41 * names.len());
}

#[test]
fn a_group_created_after_the_collector_was_registered_shows_at_the_next_scrape() {
    let breakers = Arc::new(Registry::new());
    let metrics = metrics_of(&breakers);
    assert!(scrape_in_process(&metrics).samples.is_empty());

    breakers
        .breaker("late", &Config::default())
        .call(|| Ok::<_, ()>(()))
        .unwrap();
    let scraped = scrape_in_process(&metrics);
    let ok = [("name", "late"), ("kind", "successful")];
    assert_eq!(scraped.value("breaker_calls_total", &ok), Some(1.0));
    assert_group_equals(&scraped, &breakers, &breakers.snapshot()[0]);
}

/// Four threads call three breakers (a time window, a count window, the
/// consecutive policy, each judging slowness where it can) as fast as they can,
/// sometimes advancing the shared manual clock while a call is in flight, while
/// this thread scrapes. Every scrape must be a consistent picture of each group.
#[test]
fn scrapes_during_a_storm_of_calls_are_consistent_per_group() {
    let clock = ManualClock::new();
    let breakers = Arc::new(Registry::with_clock(clock.clone()));
    let window = |b: breakerbox::ConfigBuilder| {
        b.failure_rate(0.35)
            .min_calls(5)
            .slow_call(Duration::from_millis(1))
            .open(Duration::from_millis(5))
            .build()
            .unwrap()
    };
    let groups = [
        breakers.breaker(
            "time",
            &window(Config::builder().window(Duration::from_secs(1))),
        ),
        breakers.breaker("count", &window(Config::builder().window_calls(20))),
        breakers.breaker("consecutive", &config_open_ms(5)),
    ];
    let metrics = metrics_of(&breakers);
    let done = Arc::new(AtomicBool::new(false));

    let workers: Vec<_> = (0..4u64)
        .map(|seed| {
            let groups = groups.clone();
            let clock = clock.clone();
            std::thread::spawn(move || {
                let mut random = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for i in 0..100_000usize {
                    random ^= random << 13;
                    random ^= random >> 7;
                    random ^= random << 17;
                    let Ok(permit) = groups[i % groups.len()].try_acquire() else {
                        if random % 8 == 0 {
                            clock.advance(Duration::from_millis(1)); // time passes
                        }
                        continue;
                    };
                    if random % 89 == 0 {
                        clock.advance(Duration::from_millis(2)); // a slow call
                    }
                    match random % 10 {
                        0..=4 => permit.success(),
                        5..=7 => permit.failure(),
                        8 => permit.ignore(),
                        _ => drop(permit),
                    }
                }
            })
        })
        .collect();
    let watcher = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            // Done even when a worker panicked, so that the scrapes stop.
            let ended: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
            done.store(true, SeqCst);
            ended.into_iter().all(|ended| ended.is_ok())
        })
    };

    let mut previous: BTreeMap<String, f64> = BTreeMap::new();
    let (mut scrapes, mut windows_seen) = (0, 0);
    while !done.load(SeqCst) || scrapes < 10 {
        let scraped = scrape_in_process(&metrics);
        scrapes += 1;
        for group in ["time", "count", "consecutive"] {
            windows_seen += assert_consistent(&scraped, group);
        }
        for s in &scraped.samples {
            let key = s.key();
            if s.name.ends_with("_total") || s.name == "breaker_generation" {
                let before = previous.get(&key).copied().unwrap_or(0.0);
                assert!(s.value >= before, "{key} went from {before} to {}", s.value);
            }
            previous.insert(key, s.value);
        }
    }
    assert!(watcher.join().unwrap(), "a worker panicked");

    // Quiet now: the exposition is the snapshot.
    let scraped = scrape_in_process(&metrics);
    for m in breakers.snapshot().iter() {
        assert_group_equals(&scraped, &breakers, m);
        assert!(m.times_opened > 0, "{} never opened: no storm", m.group);
    }
    assert!(windows_seen > 0, "no scrape saw a window with outcomes");
}

/// Checks one group's series in one scrape; returns 1 if its window held outcomes.
fn assert_consistent(scraped: &Exposition, group: &str) -> usize {
    let value = |name: &str, label: Option<(&str, &str)>| {
        let mut labels = vec![("name", group)];
        labels.extend(label);
        scraped.value(name, &labels)
    };
    for s in scraped.of_group(group) {
        let not_judged = s.name.ends_with("_rate") && s.value == -1.0;
        assert!(
            s.value.is_finite() && (s.value >= 0.0 || not_judged),
            "{} = {}",
            s.key(),
            s.value
        );
    }
    let states: Vec<f64> = STATES
        .iter()
        .map(|&state| value("breaker_state", Some(("state", &state_label(state)))).unwrap())
        .collect();
    assert!(states.iter().all(|&v| v == 0.0 || v == 1.0), "{states:?}");
    assert_eq!(states.iter().sum::<f64>(), 1.0, "{group}: {states:?}");

    let Some(ok) = value("breaker_buffered_calls", Some(("kind", "successful"))) else {
        assert_eq!(group, "consecutive");
        return 0;
    };
    let failed = value("breaker_buffered_calls", Some(("kind", "failed"))).unwrap();
    let slow = value("breaker_slow_calls", None).unwrap();
    let calls = ok + failed;
    assert!(slow <= calls, "{group}: {slow} slow calls among {calls}");
    let failure_rate = value("breaker_failure_rate", None);
    let slow_call_rate = value("breaker_slow_call_rate", None);
    // Both windows of the storm judge from `min_calls(5)`.
    if calls < 5.0 {
        assert_eq!(
            (failure_rate, slow_call_rate),
            (Some(-1.0), Some(-1.0)),
            "{group}"
        );
        return 0;
    }
    assert_eq!(failure_rate, Some(failed / calls), "{group}");
    assert_eq!(slow_call_rate, Some(slow / calls), "{group}");
    1
}

#[test]
fn the_strict_parser_refuses_what_prometheus_refuses() {
    let ok = "# HELP a_total x\n# TYPE a_total counter\na_total{l=\"q\\\"\\\\\\n\"} 1\n";
    let parsed = exposition::parse(ok).unwrap();
    assert_eq!(parsed.samples[0].labels["l"], "q\"\\\n");
    for bad in [
        "a 1\n",                                      // undeclared
        "# TYPE a gauge\na{l=\"x\"} 1",               // no final newline
        "# TYPE a gauge\na{l=\"\\x\"} 1\n",           // bad escape
        "# TYPE a gauge\na{l=\"x} 1\n",               // unterminated
        "# TYPE a gauge\na{l=x} 1\n",                 // unquoted
        "# TYPE a gauge\na{l=\"x\",} 1\n",            // trailing comma
        "# TYPE a gauge\na{l=\"x\",l=\"y\"} 1\n",     // label repeated
        "# TYPE a gauge\na 1\na 2\n",                 // series repeated
        "# TYPE a gauge\na inf\n",                    // Rust spelling
        "# TYPE a gauge\n# TYPE b gauge\nb 1\na 1\n", // split
        "# TYPE a gauge\n# TYPE a gauge\n",           // declared twice
        "# TYPE 1a gauge\n",                          // bad name
        "# TYPE a gauge\na{1l=\"x\"} 1\n",            // bad label name
        "# TYPE a gauge\na 1 2 3\n",                  // trailing field
    ] {
        assert!(exposition::parse(bad).is_err(), "accepted {bad:?}");
    }
}
