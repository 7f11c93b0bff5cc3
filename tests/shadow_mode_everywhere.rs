//! Shadow mode from every place that sets it: the attribute (`shadow = true`,
//! whose fallback is then never called), the config file and a variable, a
//! live reload, the admin router over real HTTP (per group, per key, keyed
//! group-wide; refused without the token, changing nothing) and both exporters.
#![cfg(all(
    feature = "admin",
    feature = "config",
    feature = "prometheus",
    feature = "metrics"
))]

#[path = "support/admin.rs"]
mod support;

#[allow(dead_code)]
#[path = "support/exposition.rs"]
mod exposition;

#[path = "support/exporters.rs"]
mod exporters;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::admin::Admin;
use breakerbox::config_file::{ErrorKind, Patch, Settings};
use breakerbox::{circuit_breaker, CircuitOpen, Config, ManualClock, Registry, State};
use exporters::{published, scraped, series};
use serde_json::json;
use support::{everything, json, serve, OPS};

#[derive(Debug, PartialEq)]
enum Error {
    Open,
    Failed,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

static BODY_RAN: AtomicU64 = AtomicU64::new(0);
static FALLBACK_RAN: AtomicU64 = AtomicU64::new(0);

fn cached(_: &Registry, _: bool) -> Result<u32, Error> {
    FALLBACK_RAN.fetch_add(1, Relaxed);
    Ok(0)
}

#[circuit_breaker(group = "shadow-attr", threshold = 2, open_ms = 60000, shadow = true, fallback = cached, registry = reg)]
fn guarded(reg: &Registry, fail: bool) -> Result<u32, Error> {
    BODY_RAN.fetch_add(1, Relaxed);
    if fail {
        Err(Error::Failed)
    } else {
        Ok(1)
    }
}

#[test]
fn the_attribute_key_runs_the_body_every_time_and_never_the_fallback() {
    let registry = Registry::with_clock(ManualClock::new());
    assert_eq!(guarded(&registry, true), Err(Error::Failed));
    assert_eq!(guarded(&registry, true), Err(Error::Failed));
    let breaker = registry.get("shadow-attr").unwrap();
    assert_eq!(breaker.state(), State::Open);
    assert!(breaker.config().shadow());
    for _ in 0..5 {
        assert_eq!(guarded(&registry, false), Ok(1), "the body's answer");
    }
    assert_eq!(BODY_RAN.load(Relaxed), 7);
    assert_eq!(FALLBACK_RAN.load(Relaxed), 0);
    let m = breaker.metrics();
    assert_eq!((m.shadow_refused, m.rejected, m.successes), (5, 0, 5));
    // Out of shadow mode, the same group calls its fallback.
    breaker.set_shadow(false);
    assert_eq!(guarded(&registry, false), Ok(0));
    assert_eq!(FALLBACK_RAN.load(Relaxed), 1);
    assert_eq!(BODY_RAN.load(Relaxed), 7);
}

#[test]
fn a_file_and_a_variable_set_shadow_mode_and_a_reload_switches_it_live() {
    let text = "[defaults]\nshadow = true\n[groups.search]\nshadow = false\n";
    let settings = Settings::from_toml_str(text, "app.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__USERS__SHADOW", "false")])
        .unwrap();
    let shadow = |group| {
        settings
            .resolve(group, &Patch::new())
            .unwrap()
            .config
            .shadow()
    };
    assert!(!shadow("search"));
    assert!(!shadow("users"));
    assert!(shadow("other"));

    let registry = Registry::with_clock(ManualClock::new());
    let declared = Config::builder().threshold(1).build().unwrap();
    let breaker = registry.breaker("other", &declared);
    breaker.try_acquire().unwrap().failure();
    assert!(breaker.try_acquire().is_err());
    settings.apply(&registry).unwrap();
    assert!(
        breaker.is_shadow(),
        "a reload that turns it on applies at once"
    );
    assert!(breaker.try_acquire().is_ok());
    Settings::from_toml_str("[defaults]\nshadow = false\n", "app.toml")
        .unwrap()
        .apply(&registry)
        .unwrap();
    assert!(breaker.try_acquire().is_err());
    assert_eq!(breaker.state(), State::Open);
    let m = breaker.metrics();
    assert_eq!((m.shadow_refused, m.rejected), (1, 2));
}

#[test]
fn a_shadow_value_that_is_not_a_boolean_is_refused() {
    let err = Settings::from_toml_str("[defaults]\nshadow = 1\n", "app.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongType, "{err}");
    assert!(err.to_string().contains("`true` or `false`"), "{err}");
    let err = Settings::new()
        .with_env([("BREAKER_DEFAULTS__SHADOW", "yes")])
        .unwrap_err();
    assert!(
        err.to_string().contains("BREAKER_DEFAULTS__SHADOW"),
        "{err}"
    );
}

fn trips_at_once() -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_secs(60))
        .build()
        .unwrap()
}

async fn post(url: &str, path: &str, auth: Option<&str>, body: &str) -> (u16, serde_json::Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{url}{path}"))
        .body(body.to_owned());
    if let Some(secret) = auth {
        request = request.header("authorization", format!("Bearer {secret}"));
    }
    json(request.send().await.unwrap()).await
}

#[tokio::test]
async fn the_admin_router_switches_a_group_a_key_and_a_keyed_group_and_tells_it() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let mail = registry.breaker("mail", &trips_at_once());
    mail.try_acquire().unwrap().failure();
    let hosts = registry
        .keyed::<String>("hosts", &trips_at_once(), 100)
        .unwrap();
    hosts.breaker("a.example").try_acquire().unwrap().failure();
    hosts.breaker("b.example").try_acquire().unwrap().failure();
    let url = serve(
        Admin::builder(registry.clone())
            .token("ops", OPS)
            .keyed::<String>("hosts")
            .events(64)
            .build()
            .unwrap(),
    )
    .await;

    let (status, body) = post(&url, "/breakers/mail/shadow", Some(OPS), r#"{"on": true}"#).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"applied": "shadow_on", "group": "mail", "key": null, "shadow": true, "state": "open"})
    );
    assert!(mail.try_acquire().is_ok());

    let one_key = "/breakers/hosts/keys/a.example/shadow";
    let (status, body) = post(
        &url,
        one_key,
        Some(OPS),
        r#"{"on": true, "reason": "tuning"}"#,
    )
    .await;
    assert_eq!((status, &body["shadow"]), (200, &json!(true)), "{body}");
    assert!(hosts.breaker("a.example").try_acquire().is_ok());
    assert!(hosts.breaker("b.example").try_acquire().is_err());

    let (status, body) = post(&url, "/breakers/hosts/shadow", Some(OPS), r#"{"on": true}"#).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], json!(null), "a keyed group has no one state");
    assert!(hosts.breaker("b.example").try_acquire().is_ok());
    assert!(hosts.breaker("c.example").is_shadow(), "keys to come too");

    let (_, listed) = json(reqwest::get(format!("{url}/breakers")).await.unwrap()).await;
    assert_eq!(listed["breakers"]["mail"]["shadow"], true);
    assert_eq!(listed["breakers"]["mail"]["shadow_refused"], 1);
    assert_eq!(listed["keyed"]["hosts"]["shadow_refused"], 2);
    assert_eq!(listed["keyed"]["hosts"]["shadow"], true);

    let (status, body) = post(&url, "/breakers/mail/shadow", Some(OPS), r#"{"on": false}"#).await;
    assert_eq!((status, &body["applied"]), (200, &json!("shadow_off")));
    assert!(mail.try_acquire().is_err());

    let (_, events) = json(reqwest::get(format!("{url}/events")).await.unwrap()).await;
    let admin: Vec<_> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "admin")
        .map(|e| {
            (
                e["action"].clone(),
                e["group"].clone(),
                e["key"].clone(),
                e["token"].clone(),
                e["reason"].clone(),
            )
        })
        .collect();
    assert_eq!(
        admin,
        [
            (
                json!("shadow_on"),
                json!("mail"),
                json!(null),
                json!("ops"),
                json!(null)
            ),
            (
                json!("shadow_on"),
                json!("hosts"),
                json!("a.example"),
                json!("ops"),
                json!("tuning")
            ),
            (
                json!("shadow_on"),
                json!("hosts"),
                json!(null),
                json!("ops"),
                json!(null)
            ),
            (
                json!("shadow_off"),
                json!("mail"),
                json!(null),
                json!("ops"),
                json!(null)
            ),
        ]
    );
}

#[tokio::test]
async fn a_shadow_switch_without_the_token_or_with_a_bad_body_changes_nothing() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    registry
        .breaker("mail", &trips_at_once())
        .try_acquire()
        .unwrap()
        .failure();
    registry
        .keyed::<String>("hosts", &trips_at_once(), 100)
        .unwrap()
        .breaker("a.example");
    let url = serve(
        Admin::builder(registry.clone())
            .token("ops", OPS)
            .keyed::<String>("hosts")
            .build()
            .unwrap(),
    )
    .await;
    let on = r#"{"on": true}"#;
    let oversized = format!(r#"{{"on": true, "reason": "{}"}}"#, "x".repeat(100_000));
    let cases: [(&str, Option<&str>, &str, u16, &str); 9] = [
        ("/breakers/mail/shadow", None, on, 401, "unauthorized"),
        (
            "/breakers/mail/shadow",
            Some("not-the-secret-0123456789"),
            on,
            401,
            "unauthorized",
        ),
        ("/breakers/hosts/shadow", None, on, 401, "unauthorized"),
        (
            "/breakers/hosts/keys/a.example/shadow",
            None,
            on,
            401,
            "unauthorized",
        ),
        (
            "/breakers/mail/shadow",
            Some(OPS),
            r#"{"on": "yes"}"#,
            400,
            "bad_request",
        ),
        (
            "/breakers/mail/shadow",
            Some(OPS),
            r#"{"action": "force_open"}"#,
            400,
            "bad_request",
        ),
        (
            "/breakers/mail/shadow",
            Some(OPS),
            &oversized,
            413,
            "payload_too_large",
        ),
        (
            "/breakers/nothing/shadow",
            Some(OPS),
            on,
            404,
            "unknown_group",
        ),
        (
            "/breakers/hosts/keys/z.example/shadow",
            Some(OPS),
            on,
            404,
            "unknown_key",
        ),
    ];
    for (path, auth, body, status, code) in cases {
        let before = everything(&registry);
        let (got, answer) = post(&url, path, auth, body).await;
        assert_eq!(
            (got, answer["error"].as_str()),
            (status, Some(code)),
            "{path}: {answer}"
        );
        assert_eq!(everything(&registry), before, "{path} changed the registry");
    }
    assert!(!registry.get("mail").unwrap().is_shadow());
    assert!(registry.get("mail").unwrap().try_acquire().is_err());
}

#[test]
fn both_exporters_tell_the_mode_and_what_it_would_have_refused() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    let search = registry.breaker("search", &trips_at_once());
    search.try_acquire().unwrap().failure();
    search.set_shadow(true);
    for _ in 0..3 {
        search.try_acquire().unwrap().success();
    }
    let hosts = registry
        .keyed::<String>("hosts", &trips_at_once(), 100)
        .unwrap();
    hosts.breaker("a").try_acquire().unwrap().failure();
    hosts.set_shadow(true);
    hosts.breaker("a").try_acquire().unwrap().success();

    for (exporter, all) in [
        ("prometheus", scraped(&registry)),
        ("metrics", published(&registry)),
    ] {
        let name = [("name", "search")];
        assert_eq!(
            all.get(&series("breaker_shadow", &name)),
            Some(&1.0),
            "{exporter}"
        );
        assert_eq!(
            all.get(&series("breaker_shadow_refused_total", &name)),
            Some(&3.0),
            "{exporter}"
        );
        assert_eq!(
            all.get(&series(
                "breaker_keyed_shadow_refused_total",
                &[("name", "hosts")]
            )),
            Some(&1.0),
            "{exporter}"
        );
    }
}
