//! The admin router lists a held breaker (its scope and time left) and an
//! operator with the token releases the hold by `POST`; without the token,
//! or with a read-only one, nothing changes. Over real HTTP on 127.0.0.1.

#[path = "support/admin.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use breakerbox::admin::Admin;
use breakerbox::hold::HoldScope;
use breakerbox::{Config, ManualClock, Registry};
use serde_json::json;
use support::{json, serve, OPS, VIEWER};

#[tokio::test]
async fn a_hold_is_listed_and_released_by_an_operator_only() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let quota = registry.breaker("quota", &Config::default());
    quota.hold(Duration::from_secs(30), HoldScope::Group);
    let admin = Admin::builder(registry.clone())
        .token("ops", OPS)
        .read_token("viewer", VIEWER)
        .build()
        .unwrap();
    let url = serve(admin).await;
    let client = reqwest::Client::new();

    let (status, body) = json(
        client
            .get(format!("{url}/breakers/quota"))
            .bearer_auth(VIEWER)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let held = &body["breaker"]["held"];
    assert_eq!(held["scope"], "group", "{body}");
    assert!(held["remaining_ms"].as_f64().unwrap() >= 30_000.0, "{body}");
    assert_eq!(body["breaker"]["holds"]["group"], 1);

    let release = |token: Option<&'static str>| {
        let request = client
            .post(format!("{url}/breakers/quota"))
            .body(json!({"action": "release_hold", "reason": "quota raised"}).to_string());
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
        .send()
    };
    let (status, _) = json(release(None).await.unwrap()).await;
    assert_eq!(status, 401);
    let (status, _) = json(release(Some(VIEWER)).await.unwrap()).await;
    assert_eq!(status, 403);
    assert!(quota.held().is_some(), "a refused request changes nothing");
    assert!(quota.try_acquire().is_err());

    let (status, body) = json(release(Some(OPS)).await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(body["applied"], "release_hold");
    assert!(quota.held().is_none());
    quota.try_acquire().expect("released").success();
    assert_eq!(quota.metrics().holds.released, 1);
}

#[tokio::test]
async fn the_status_page_shows_a_held_circuit() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let quota = registry.breaker("quota", &Config::default());
    let calm = registry.breaker("calm", &Config::default());
    quota.hold(Duration::from_secs(30), HoldScope::Key);
    let admin = Admin::builder(registry.clone())
        .token("ops", OPS)
        .build()
        .unwrap();
    let url = serve(admin).await;
    let page = reqwest::get(format!("{url}/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("data-group=\"quota\" data-state=\"closed\" data-held=\"key\""),
        "{page}"
    );
    // 30 s and the release spread, at most a tenth more.
    assert!(
        ["30", "31", "32", "33"]
            .iter()
            .any(|s| page.contains(&format!("closed, held {s} s (key)"))),
        "{page}"
    );
    assert!(!page.contains("data-group=\"calm\" data-state=\"closed\" data-held"));
    drop(calm);
}
