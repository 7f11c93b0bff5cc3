//! A trace carries a held answer (a `429` with a wait) as `held` with its
//! `wait_ns`, and a replay holds the breaker for that wait: the calls inside
//! it are refused as held, none counts as a failure, and the calls after it
//! reach the dependency again.

use std::time::Duration;

use breakerbox::testing::replay;
use breakerbox::testing::trace::{Outcome, Trace};
use breakerbox::Config;

const TRACE: &str = r#"{"trace":"breakerbox","version":1,"group":"quotes"}
{"at_ns":0,"outcome":"success","latency_ns":1000000}
{"at_ns":1000000000,"outcome":"held","latency_ns":1000000,"wait_ns":5000000000}
{"at_ns":2000000000,"outcome":"refused","latency_ns":0}
{"at_ns":3000000000,"outcome":"refused","latency_ns":0}
{"at_ns":4000000000,"outcome":"refused","latency_ns":0}
{"at_ns":5000000000,"outcome":"refused","latency_ns":0}
{"at_ns":7000000000,"outcome":"success","latency_ns":1000000}
{"at_ns":8000000000,"outcome":"success","latency_ns":1000000}
"#;

#[test]
fn a_held_answer_reads_back_with_its_wait_and_writes_the_same() {
    let trace = Trace::read_jsonl(TRACE.as_bytes()).unwrap();
    assert_eq!(
        trace.samples[1].outcome,
        Outcome::Held(Duration::from_secs(5))
    );
    let mut written = Vec::new();
    trace.write_jsonl(&mut written).unwrap();
    assert!(String::from_utf8_lossy(&written)
        .contains(r#""outcome":"held","latency_ns":1000000,"wait_ns":5000000000"#));
    assert_eq!(Trace::read_jsonl(&written[..]).unwrap(), trace);

    let no_wait = "{\"trace\":\"breakerbox\",\"version\":1,\"group\":\"q\"}\n\
                   {\"at_ns\":0,\"outcome\":\"held\",\"latency_ns\":1}\n";
    let err = Trace::read_jsonl(no_wait.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("`wait_ns`"), "{err}");
}

#[test]
fn a_replayed_held_answer_holds_the_breaker_for_its_wait_without_a_failure() {
    let trace = Trace::read_jsonl(TRACE.as_bytes()).unwrap();
    // A threshold of one: any failure would open it.
    let config = Config::builder().threshold(1).build().unwrap();
    let timeline = replay(&trace, &config);
    assert_eq!(timeline.calls, 8);
    assert_eq!(
        (timeline.refused, timeline.held),
        (4, 4),
        "the four calls within the 5 s wait (plus its spread) are held"
    );
    assert!(
        timeline.changes.is_empty(),
        "a hold is no transition: {:?}",
        timeline.changes
    );
    assert_eq!(timeline.time_open, Duration::ZERO);
}
