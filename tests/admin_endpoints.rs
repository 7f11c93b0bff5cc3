//! Every endpoint of the admin router, over real HTTP on 127.0.0.1.

#[path = "support/admin.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use breakerbox::admin::Admin;
use breakerbox::{Config, ManualClock, Registry, State};
use serde_json::json;
use support::{json, serve, OPS};

fn trips_at_once() -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn registry() -> Arc<Registry> {
    Arc::new(Registry::with_clock(ManualClock::new()))
}

#[tokio::test]
async fn a_breaker_shows_the_retry_policy_its_calls_run_configuration_included() {
    static POLICY: breakerbox::RetryPolicy = breakerbox::RetryPolicy::new(2);
    let registry = registry();
    let prices = registry.breaker("prices", &Config::default());
    let _ = prices.group_retry(&POLICY);
    registry.breaker("search", &Config::default());
    breakerbox::config_file::Settings::from_toml_str("[groups.prices]\nretry = 0\n", "ops.toml")
        .unwrap()
        .apply(&registry)
        .unwrap();
    let url = serve(
        Admin::builder(registry.clone())
            .read_only()
            .build()
            .unwrap(),
    )
    .await;

    let (status, body) = json(reqwest::get(format!("{url}/breakers")).await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["breakers"]["prices"]["retry"],
        json!({
            "retry": {"value": 0, "explicit": true},
            "retry_delay_ms": {"value": 50, "explicit": false},
            "retry_max_delay_ms": {"value": 2000, "explicit": false},
            "retry_deadline_ms": {"value": null, "explicit": false},
            "retry_budget_ratio": {"value": 0.2, "explicit": false},
            "retry_budget_floor": {"value": 10, "explicit": false},
        })
    );
    assert_eq!(
        body["breakers"]["search"]["retry"],
        json!(null),
        "never retried"
    );
}

#[tokio::test]
async fn breakers_lists_every_group_with_state_counts_and_config() {
    let registry = registry();
    let mail = registry.breaker("mail", &trips_at_once());
    mail.try_acquire().unwrap().failure();
    registry.breaker("search", &Config::default());
    registry
        .keyed::<String>("hosts", &trips_at_once(), 100)
        .unwrap()
        .breaker("a.example");
    let url = serve(
        Admin::builder(registry.clone())
            .read_only()
            .build()
            .unwrap(),
    )
    .await;

    let (status, body) = json(reqwest::get(format!("{url}/breakers")).await.unwrap()).await;
    assert_eq!(status, 200);
    let mail = &body["breakers"]["mail"];
    assert_eq!(mail["state"], "open");
    assert_eq!(mail["failures"], 1);
    assert_eq!(mail["times_opened"], 1);
    assert_eq!(mail["retry_after_ms"], 60_000);
    assert_eq!(
        mail["config"]["threshold"],
        json!({"value": 1, "explicit": true})
    );
    assert_eq!(
        mail["config"]["half_open_probes"],
        json!({"value": 1, "explicit": false})
    );
    assert_eq!(
        mail["transitions"],
        json!([{"from": "closed", "to": "open", "count": 1}])
    );
    assert_eq!(body["breakers"]["search"]["state"], "closed");
    assert_eq!(body["breakers"]["search"]["retry_after_ms"], json!(null));
    assert_eq!(body["keyed"]["hosts"]["keys"], 1);
    assert_eq!(body["keyed"]["hosts"]["closed"], 1);
    // Not registered with its key type: counts only.
    assert_eq!(body["keyed"]["hosts"]["worst_keys"], json!(null));
}

#[tokio::test]
async fn the_config_shows_the_value_of_every_key_shadow_included() {
    let registry = registry();
    let config = Config::builder()
        .window_calls(20)
        .slow_call(Duration::from_millis(300))
        .shadow(true)
        .jitter(0.1)
        .build()
        .unwrap();
    registry.breaker("tuning", &config);
    let url = serve(
        Admin::builder(registry.clone())
            .read_only()
            .build()
            .unwrap(),
    )
    .await;
    let (status, body) = json(reqwest::get(format!("{url}/breakers")).await.unwrap()).await;
    assert_eq!(status, 200);
    let shown = &body["breakers"]["tuning"]["config"];
    assert_eq!(shown["shadow"], json!({"value": true, "explicit": true}));
    assert_eq!(shown["min_calls"], json!({"value": 20, "explicit": false}));
    assert_eq!(
        shown["threshold"],
        json!({"value": null, "explicit": false})
    );
    for key in Config::KEYS {
        let value = &shown[key]["value"];
        match config.value(key) {
            Some(_) => assert!(!value.is_null(), "`{key}` runs with a value: {shown}"),
            None => assert!(value.is_null(), "`{key}` is off: {shown}"),
        }
    }
}

#[tokio::test]
async fn a_keyed_group_lists_only_its_k_worst_non_closed_keys() {
    let registry = registry();
    let hosts = registry
        .keyed::<String>("hosts", &trips_at_once(), 1_000)
        .unwrap();
    for i in 0..50 {
        let host = hosts.breaker(&format!("h{i:02}.example"));
        host.try_acquire().unwrap().failure();
    }
    for i in 0..20 {
        hosts.breaker(&format!("fine{i}.example"));
    }
    // h07 opened twice: the worst.
    let h07 = hosts.get("h07.example").unwrap();
    h07.reset();
    h07.try_acquire().unwrap().failure();
    let admin = Admin::builder(registry.clone())
        .read_only()
        .keyed::<String>("hosts")
        .worst_keys(5)
        .build()
        .unwrap();
    let url = serve(admin).await;

    let (status, body) = json(reqwest::get(format!("{url}/breakers/hosts")).await.unwrap()).await;
    assert_eq!(status, 200);
    let keyed = &body["keyed"];
    assert_eq!(
        (keyed["keys"].as_u64(), keyed["open"].as_u64()),
        (Some(70), Some(50))
    );
    assert_eq!(keyed["closed"], 20);
    assert_eq!(keyed["worst_keys_limit"], 5);
    let worst = keyed["worst_keys"].as_array().unwrap();
    assert_eq!(worst.len(), 5);
    assert_eq!(worst[0]["key"], "h07.example");
    assert_eq!(worst[0]["times_opened"], 2);
    assert_eq!(worst[1]["key"], "h00.example");
    assert!(worst.iter().all(|k| k["state"] == "open"));
    assert_eq!(body.get("breaker"), None);
}

#[tokio::test]
async fn one_group_one_key_and_unknown_names() {
    let registry = registry();
    registry.breaker("mail", &Config::default());
    let hosts = registry
        .keyed::<String>("hosts", &trips_at_once(), 100)
        .unwrap();
    hosts.breaker("a.example").try_acquire().unwrap().failure();
    registry
        .keyed::<u64>("tenants", &Config::default(), 100)
        .unwrap()
        .breaker(&7);
    let admin = Admin::builder(registry.clone())
        .read_only()
        .keyed::<String>("hosts")
        .build()
        .unwrap();
    let url = serve(admin).await;
    let get = |path: &str| {
        let url = format!("{url}{path}");
        async move { json(reqwest::get(url).await.unwrap()).await }
    };

    let (status, body) = get("/breakers/mail").await;
    assert_eq!((status, &body["breaker"]["group"]), (200, &json!("mail")));
    assert_eq!(body.get("keyed"), None);

    let (status, body) = get("/breakers/hosts/keys/a.example").await;
    assert_eq!(status, 200);
    assert_eq!(body["key"], "a.example");
    assert_eq!(body["breaker"]["state"], "open");
    assert_eq!(body["breaker"]["failures"], 1);

    for (path, code) in [
        ("/breakers/nope", "unknown_group"),
        ("/breakers/nope/keys/a.example", "unknown_group"),
        ("/breakers/hosts/keys/b.example", "unknown_key"),
        ("/breakers/tenants/keys/7", "keys_not_registered"),
        ("/nowhere", "not_found"),
    ] {
        let (status, body) = get(path).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (404, Some(code)),
            "{path}"
        );
        assert!(body["message"].is_string());
    }
    // Reading a key never creates one.
    assert_eq!(hosts.keys().len(), 1);
}

#[tokio::test]
async fn post_forces_and_resets_a_group_and_a_key() {
    let registry = registry();
    let mail = registry.breaker("mail", &Config::default());
    let hosts = registry
        .keyed::<String>("hosts", &Config::default(), 100)
        .unwrap();
    let host = hosts.breaker("a.example");
    let admin = Admin::builder(registry.clone())
        .token("ops", OPS)
        .keyed::<String>("hosts")
        .build()
        .unwrap();
    let url = serve(admin).await;
    let client = reqwest::Client::new();
    let post = |path: &str, action: &str| {
        client
            .post(format!("{url}{path}"))
            .bearer_auth(OPS)
            .body(json!({"action": action, "reason": "maintenance"}).to_string())
            .send()
    };

    let (status, body) = json(post("/breakers/mail", "force_open").await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"applied": "force_open", "group": "mail", "key": null, "state": "forced_open"})
    );
    assert_eq!(mail.state(), State::ForcedOpen);
    let (_, body) = json(post("/breakers/mail", "force_closed").await.unwrap()).await;
    assert_eq!(body["state"], "forced_closed");
    assert_eq!(mail.state(), State::ForcedClosed);
    let (_, body) = json(post("/breakers/mail", "reset").await.unwrap()).await;
    assert_eq!(body["state"], "closed");
    assert_eq!(mail.state(), State::Closed);

    let (status, body) = json(
        post("/breakers/hosts/keys/a.example", "force_open")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, &body["key"]), (200, &json!("a.example")));
    assert_eq!(host.state(), State::ForcedOpen);
    // The group name of a keyed group alone names no breaker to act on.
    let (status, body) = json(post("/breakers/hosts", "reset").await.unwrap()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("unknown_group"))
    );
    assert_eq!(host.state(), State::ForcedOpen);
}

#[tokio::test]
async fn health_is_down_only_while_a_named_group_is_open() {
    let registry = registry();
    let db = registry.breaker("database", &trips_at_once());
    let mail = registry.breaker("mail", &trips_at_once());
    mail.force_open();
    let named = Admin::builder(registry.clone())
        .read_only()
        .unready_when_open("database")
        .unready_when_open("not-yet-made")
        .build()
        .unwrap();
    let unnamed = Admin::builder(registry.clone())
        .read_only()
        .build()
        .unwrap();
    let (named, unnamed) = (serve(named).await, serve(unnamed).await);

    let (status, body) = json(reqwest::get(format!("{named}/health")).await.unwrap()).await;
    assert_eq!((status, &body["status"]), (200, &json!("UP")));
    assert_eq!(
        body["groups"]["database"],
        json!({"state": "closed", "ready": true})
    );
    assert_eq!(
        body["groups"]["not-yet-made"],
        json!({"state": null, "ready": true})
    );

    db.try_acquire().unwrap().failure();
    let (status, body) = json(reqwest::get(format!("{named}/health")).await.unwrap()).await;
    assert_eq!((status, &body["status"]), (503, &json!("DOWN")));
    assert_eq!(
        body["groups"]["database"],
        json!({"state": "open", "ready": false})
    );

    // No group named: an open circuit never makes the instance unready.
    let (status, body) = json(reqwest::get(format!("{unnamed}/health")).await.unwrap()).await;
    assert_eq!((status, body), (200, json!({"status": "UP", "groups": {}})));
}

#[tokio::test]
async fn the_router_nests_under_a_prefix() {
    let registry = registry();
    registry.breaker("mail", &Config::default());
    let admin = Admin::builder(registry).read_only().build().unwrap();
    let app = axum::Router::new().nest("/admin", admin.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let (status, body) = json(
        reqwest::get(format!("http://{addr}/admin/breakers/mail"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, &body["breaker"]["state"]), (200, &json!("closed")));
}

#[tokio::test]
async fn the_tower_service_answers_as_the_router() {
    use tower::ServiceExt;

    let registry = registry();
    let mail = registry.breaker("mail", &Config::default());
    let service = Admin::builder(registry)
        .token("ops", OPS)
        .build()
        .unwrap()
        .into_service();
    let request = http::Request::post("/breakers/mail")
        .header("authorization", format!("Bearer {OPS}"))
        .body(axum::body::Body::from(r#"{"action":"force_open"}"#))
        .unwrap();
    let response = service.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(mail.state(), State::ForcedOpen);

    let request = http::Request::get("/breakers/mail")
        .body(axum::body::Body::empty())
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["breaker"]["state"], "forced_open");
}
