//! The admin router's event ring: it keeps the last N transitions, conflicts
//! and admin actions, `GET /events` returns them, and `/events/stream`
//! follows new ones as server-sent events.

#[path = "support/admin.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use breakerbox::admin::Admin;
use breakerbox::{Config, ManualClock, Registry};
use serde_json::{json, Value};
use support::{json, serve, OPS};

fn trips_at_once() -> Config {
    Config::builder().threshold(1).build().unwrap()
}

async fn events(url: &str, query: &str) -> Vec<Value> {
    let (status, body) = json(reqwest::get(format!("{url}/events{query}")).await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["events"].as_array().unwrap().clone()
}

#[tokio::test]
async fn the_ring_keeps_the_last_n_events_oldest_first() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let admin = Admin::builder(registry.clone())
        .read_only()
        .events(3)
        .build()
        .unwrap();
    let url = serve(admin).await;
    let mail = registry.breaker("mail", &trips_at_once());
    for _ in 0..3 {
        mail.try_acquire().unwrap().failure();
        mail.reset();
    }
    // Six transitions; the ring holds the last three.
    let kept = events(&url, "").await;
    let seqs: Vec<_> = kept.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [4, 5, 6]);
    let last = &kept[2];
    assert_eq!(last["kind"], "transition");
    assert_eq!(last["group"], "mail");
    assert_eq!(
        (&last["from"], &last["to"]),
        (&json!("open"), &json!("closed"))
    );
    assert_eq!(last["reason"], "reset");
    assert_eq!(last["key"], json!(null));
    assert_eq!(kept[1]["reason"], "tripped");
    assert_eq!(kept[1]["cause"], "consecutive_failures");
    assert_eq!(kept[1]["open_for_ms"], 30_000);

    let two = events(&url, "?limit=2").await;
    assert_eq!(two, kept[1..]);
    assert!(events(&url, "?limit=0").await.is_empty());
}

#[tokio::test]
async fn keyed_transitions_carry_their_key_and_actions_their_token() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let hosts = registry
        .keyed::<String>("hosts", &trips_at_once(), 100)
        .unwrap();
    // Made before the router: its key is named when the router subscribes.
    let early = hosts.breaker("early.example");
    let admin = Admin::builder(registry.clone())
        .token("ops", OPS)
        .keyed::<String>("hosts")
        .events(64)
        .build()
        .unwrap();
    let url = serve(admin).await;
    early.try_acquire().unwrap().failure();
    hosts
        .breaker("late.example")
        .try_acquire()
        .unwrap()
        .failure();

    let response = reqwest::Client::new()
        .post(format!("{url}/breakers/hosts/keys/late.example"))
        .bearer_auth(OPS)
        .body(r#"{"action": "force_closed", "reason": "the host is back"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    let kept = events(&url, "").await;
    let keys: Vec<_> = kept.iter().map(|e| e["key"].clone()).collect();
    assert_eq!(
        keys,
        [
            json!("early.example"),
            json!("late.example"),
            json!("late.example"),
            json!("late.example")
        ]
    );
    // The transition the action made, then the action itself.
    assert_eq!(kept[2]["reason"], "forced_closed");
    let action = &kept[3];
    assert_eq!(action["kind"], "admin");
    assert_eq!(action["action"], "force_closed");
    assert_eq!(action["group"], "hosts");
    assert_eq!(action["token"], "ops");
    assert_eq!(action["reason"], "the host is back");
    assert_eq!(action["state"], "forced_closed");
    // No secret anywhere in what the ring shows.
    assert!(!Value::Array(kept).to_string().contains(OPS));
}

#[tokio::test]
async fn a_refused_action_leaves_no_event() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    registry.breaker("mail", &Config::default());
    let admin = Admin::builder(registry.clone())
        .token("ops", OPS)
        .events(16)
        .build()
        .unwrap();
    let url = serve(admin).await;
    let client = reqwest::Client::new();
    for (auth, body) in [
        (
            "Bearer wrong-wrong-wrong-wrong",
            r#"{"action": "force_open"}"#,
        ),
        (&format!("Bearer {OPS}")[..], r#"{"action": "explode"}"#),
    ] {
        let response = client
            .post(format!("{url}/breakers/mail"))
            .header("authorization", auth)
            .body(body)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_client_error());
    }
    assert!(events(&url, "").await.is_empty());
}

#[tokio::test]
async fn the_stream_follows_new_events_as_server_sent_events() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let mail = registry.breaker("mail", &trips_at_once());
    mail.try_acquire().unwrap().failure(); // before the stream: not sent on it
    mail.reset();
    let admin = Admin::builder(registry.clone())
        .read_only()
        .events(16)
        .build()
        .unwrap();
    let url = serve(admin).await;
    let mut stream = reqwest::get(format!("{url}/events/stream")).await.unwrap();
    assert_eq!(stream.status(), 200);
    assert_eq!(
        stream.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );

    mail.try_acquire().unwrap().failure();
    let mut text = String::new();
    // A bound on a broken stream, not a measure of speed.
    let read = tokio::time::timeout(Duration::from_secs(30), async {
        while !text.contains("\n\n") {
            let chunk = stream.chunk().await.unwrap().expect("the stream ended");
            text.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    });
    read.await.expect("no event within 30 s");
    let first = text.split("\n\n").next().unwrap();
    let field = |name: &str| {
        first
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
            .unwrap_or_else(|| panic!("no `{name}` in {first:?}"))
    };
    assert_eq!(field("event"), "transition");
    assert_eq!(field("id"), "1");
    let event: Value = serde_json::from_str(field("data")).unwrap();
    assert_eq!(
        (&event["group"], &event["to"]),
        (&json!("mail"), &json!("open"))
    );
    assert_eq!(event["seq"], 1);
}

#[test]
fn racing_transitions_each_get_one_entry_with_its_own_seq() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 200;
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let admin = Admin::builder(registry.clone())
        .read_only()
        .events(1 << 16)
        .build()
        .unwrap();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let registry = registry.clone();
            std::thread::spawn(move || {
                let breaker = registry.breaker(&format!("g{t}"), &trips_at_once());
                for _ in 0..ROUNDS {
                    breaker.try_acquire().unwrap().failure();
                    breaker.reset();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let kept = runtime.block_on(async {
        let url = serve(admin).await;
        events(&url, "").await
    });
    assert_eq!(kept.len(), THREADS * ROUNDS * 2);
    let seqs: Vec<u64> = kept.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    let expected: Vec<u64> = (1..=(THREADS * ROUNDS * 2) as u64).collect();
    assert_eq!(seqs, expected);
    for t in 0..THREADS {
        let group = format!("g{t}");
        let mine: Vec<_> = kept
            .iter()
            .filter(|e| e["group"] == group.as_str())
            .collect();
        assert_eq!(mine.len(), ROUNDS * 2);
        // Per breaker, in generation order.
        let generations: Vec<u64> = mine
            .iter()
            .map(|e| e["generation"].as_u64().unwrap())
            .collect();
        assert!(
            generations.windows(2).all(|w| w[0] < w[1]),
            "{group}: {generations:?}"
        );
    }
}

/// Keeps the `breakerbox::admin` log lines of this test binary.
struct Lines(std::sync::Mutex<Vec<(log::Level, String)>>);

impl log::Log for Lines {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target() == "breakerbox::admin"
    }
    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            let line = (record.level(), record.args().to_string());
            self.0.lock().unwrap().push(line);
        }
    }
    fn flush(&self) {}
}

static LINES: Lines = Lines(std::sync::Mutex::new(Vec::new()));

#[tokio::test]
async fn actions_and_refusals_are_logged_by_token_name_never_by_secret() {
    log::set_logger(&LINES).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    registry.breaker("ledger", &Config::default());
    let admin = Admin::builder(registry.clone())
        .token("ops", OPS)
        .build()
        .unwrap();
    let url = serve(admin).await;
    let client = reqwest::Client::new();
    for auth in [OPS, "not-the-secret-at-all"] {
        client
            .post(format!("{url}/breakers/ledger"))
            .bearer_auth(auth)
            .body(r#"{"action": "force_open", "reason": "drill"}"#)
            .send()
            .await
            .unwrap();
    }
    let lines = LINES.0.lock().unwrap().clone();
    let mine: Vec<_> = lines.iter().filter(|(_, l)| l.contains("ledger")).collect();
    assert_eq!(mine.len(), 2, "{lines:?}");
    assert_eq!(mine[0].0, log::Level::Info);
    assert!(
        mine[0]
            .1
            .contains("token `ops` applied force_open to group `ledger`"),
        "{}",
        mine[0].1
    );
    assert!(mine[0].1.contains("drill"));
    assert_eq!(mine[1].0, log::Level::Warn);
    assert!(
        mine[1].1.contains("refused /breakers/ledger"),
        "{}",
        mine[1].1
    );
    assert!(lines
        .iter()
        .all(|(_, l)| !l.contains(OPS) && !l.contains("not-the-secret")));
}

#[tokio::test]
async fn a_judged_groups_transitions_carry_its_open_keys() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let judged = Config::builder()
        .threshold(1)
        .systemic_share(0.5)
        .build()
        .unwrap();
    let hosts = registry.keyed::<u32>("hosts", &judged, 100).unwrap();
    for host in 0..4 {
        hosts.breaker(&host).try_acquire().unwrap().success();
    }
    let admin = Admin::builder(registry.clone())
        .read_only()
        .events(8)
        .build()
        .unwrap();
    let url = serve(admin).await;
    hosts.breaker(&0).try_acquire().unwrap().failure();
    registry.breaker("mail", &trips_at_once());
    registry.force_open("mail").unwrap();

    let kept = events(&url, "").await;
    assert_eq!(kept[0]["key"], "0");
    assert_eq!(kept[0]["keys_open"], json!({"open": 1, "keys": 4}));
    assert_eq!(kept[1]["group"], "mail");
    assert_eq!(kept[1]["keys_open"], json!(null), "not a keyed group");
}
