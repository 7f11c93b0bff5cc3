//! Two traces shipped in `tests/data/`, replayed through a keyed group of
//! 100 hosts: a shared backend down (every host failing for 20 s) opens the
//! group after one threshold's worth of failures and sends one probe per open
//! period, where keys judged alone pay a threshold each; one bad host among
//! 100 opens only that host, and no more than `max_open_keys` keys are ever
//! open on their own.

use std::collections::HashSet;
use std::time::Duration;

use breakerbox::testing::replay;
use breakerbox::testing::trace::{Outcome, Trace};
use breakerbox::Config;

fn trace(name: &str) -> Trace {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let file = std::fs::File::open(&path).unwrap();
    Trace::read_jsonl(std::io::BufReader::new(file)).unwrap()
}

fn config(judged: bool) -> Config {
    let builder = Config::builder().threshold(5).open(Duration::from_secs(8));
    let builder = if judged {
        builder.systemic_share(0.5).max_open_keys(0.1)
    } else {
        builder
    };
    builder.build().unwrap()
}

/// The calls the trace's dependency failed: what reaches it while it is down,
/// unless refused.
fn failing_calls(trace: &Trace) -> u64 {
    let failing = trace.samples.iter();
    failing.filter(|s| s.outcome == Outcome::Failure).count() as u64
}

#[test]
fn a_shared_backend_down_opens_the_group_once_with_one_probe_per_open_period() {
    let trace = trace("keyed_shared_backend_down.jsonl");
    assert_eq!(
        failing_calls(&trace),
        2_000,
        "100 hosts, 20 s, once a second"
    );

    let judged = replay(&trace, &config(true));
    let group: Vec<&str> = judged
        .changes
        .iter()
        .filter(|c| c.key.is_none())
        .map(|c| c.step.as_str())
        .collect();
    assert_eq!(
        group,
        [
            "closed -> open (tripped by consecutive_failures)",
            "open -> half_open (open_elapsed)",
            "half_open -> open (probe_failed)",
            "open -> half_open (open_elapsed)",
            "half_open -> open (probe_failed)",
            "open -> half_open (open_elapsed)",
            "half_open -> closed (probes_succeeded)",
        ]
    );
    assert!(
        judged.changes.iter().all(|c| c.key.is_none()),
        "no key opened on its own"
    );

    // What reaches the backend while it is down: the calls of the outage
    // (the trace up to the heal) that were not refused. The calls before it
    // all succeed and are all admitted.
    let outage = Trace {
        samples: trace
            .samples
            .iter()
            .filter(|s| s.at < Duration::from_secs(30))
            .cloned()
            .collect(),
        ..trace.clone()
    };
    let before = outage.samples.len() as u64 - failing_calls(&outage);
    let reached = |config: &Config| {
        let timeline = replay(&outage, config);
        timeline.calls - timeline.refused - before
    };
    // Judged as a group: the five keys whose failures opened it, and one
    // probe per open period (two in 20 s of 8 s opens).
    assert_eq!(reached(&config(true)), 5 + 2);
    // Judged one by one, every host pays its threshold and probes alone.
    assert!(reached(&config(false)) >= 100 * 5);
}

#[test]
fn one_bad_key_among_100_opens_only_that_key() {
    let trace = trace("keyed_one_bad_key.jsonl");
    let judged = replay(&trace, &config(true));
    assert!(
        judged
            .changes
            .iter()
            .all(|c| c.key.as_deref() == Some("host-13")),
        "{:?}",
        judged.changes
    );
    assert_eq!(
        judged.changes[0].step,
        "closed -> open (tripped by consecutive_failures)"
    );
    // Healthy hosts were never refused: every refusal is host 13's.
    let bad_calls = trace
        .samples
        .iter()
        .filter(|s| s.key.as_deref() == Some("host-13"))
        .count() as u64;
    assert!(judged.refused < bad_calls, "{judged:?}");
    // The same as judged alone: the group level changed nothing here.
    let alone = replay(&trace, &config(false));
    assert_eq!(judged.changes, alone.changes);
    assert_eq!(judged.refused, alone.refused);
}

#[test]
fn no_more_than_max_open_keys_keys_are_ever_open_on_their_own() {
    // The bad-key trace under a threshold of one: host 13 and the three hosts
    // that fail once each would open; with a cap of 2% of 100 keys, two open
    // on their own and the third trip is the group's.
    let trace = trace("keyed_one_bad_key.jsonl");
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(8))
        .max_open_keys(0.02)
        .build()
        .unwrap();
    let timeline = replay(&trace, &config);
    let mut open = HashSet::new();
    let mut most = 0;
    for change in &timeline.changes {
        let Some(key) = &change.key else { continue };
        if change.step.starts_with("closed -> ") {
            open.insert(key.clone());
        } else if change.step.ends_with("-> closed (probes_succeeded)") {
            open.remove(key);
        }
        most = most.max(open.len());
    }
    assert_eq!(most, 2);
    assert!(timeline
        .changes
        .iter()
        .any(|c| c.key.is_none() && c.step == "closed -> open (tripped by max_open_keys)"));
}
