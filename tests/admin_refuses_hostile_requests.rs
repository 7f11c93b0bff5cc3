//! The admin router's refusals: missing, wrong and oversized credentials,
//! oversized and malformed bodies, path traversal, unicode names and wrong
//! methods each get a 4xx JSON error, and the registry is unchanged after each.

#[path = "support/admin.rs"]
mod support;

use std::sync::Arc;

use breakerbox::admin::{Admin, BuildError};
use breakerbox::{Config, ManualClock, Registry};
use reqwest::Method;
use support::{everything, json, serve, OPS, VIEWER};

/// A registry with an unkeyed group, a unicode-named one and a keyed group
/// whose key is forced open, and a router over it with a mutating and a
/// read-only token.
async fn setup(protect_reads: bool) -> (Arc<Registry>, String) {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    registry.breaker("mail", &Config::default());
    registry.breaker("почта", &Config::default());
    let hosts = registry
        .keyed::<String>("hosts", &Config::default(), 100)
        .unwrap();
    hosts.breaker("a.example").force_open();
    let mut builder = Admin::builder(registry.clone())
        .token("ops", OPS)
        .keyed::<String>("hosts");
    builder = if protect_reads {
        builder.read_token("viewer", VIEWER)
    } else {
        builder
    };
    let url = serve(builder.build().unwrap()).await;
    (registry, url)
}

/// Sends `method path` with `auth` and `body`; asserts a JSON refusal with
/// `status` and `code`, and that the registry is as it was.
async fn refused(
    registry: &Arc<Registry>,
    url: &str,
    request: (Method, &str, Option<&str>, &str),
    status: u16,
    code: &str,
) {
    let (method, path, auth, body) = request;
    let before = everything(registry);
    let mut builder = reqwest::Client::new()
        .request(method.clone(), format!("{url}{path}"))
        .body(body.to_owned());
    if let Some(auth) = auth {
        builder = builder.header("authorization", auth);
    }
    let (got, answer) = json(builder.send().await.unwrap()).await;
    assert_eq!(
        (got, answer["error"].as_str()),
        (status, Some(code)),
        "{method} {path}: {answer}"
    );
    assert!(answer["message"].is_string(), "{answer}");
    assert_eq!(
        everything(registry),
        before,
        "{method} {path} changed the registry"
    );
}

const FORCE_OPEN: &str = r#"{"action": "force_open"}"#;

#[test]
fn a_router_with_mutations_and_no_token_does_not_build() {
    let registry = Arc::new(Registry::new());
    let build = |b: breakerbox::admin::AdminBuilder| b.build().map(drop);
    assert_eq!(
        build(Admin::builder(registry.clone())),
        Err(BuildError::NoToken)
    );
    // A read token is no mutating token.
    assert_eq!(
        build(Admin::builder(registry.clone()).read_token("viewer", VIEWER)),
        Err(BuildError::NoToken)
    );
    assert!(matches!(
        build(Admin::builder(registry.clone()).token("ops", "short")),
        Err(BuildError::BadSecret { .. })
    ));
    assert!(matches!(
        build(Admin::builder(registry.clone()).token("ops", "with a space inside it")),
        Err(BuildError::BadSecret { .. })
    ));
    assert!(matches!(
        build(
            Admin::builder(registry.clone())
                .token("ops", OPS)
                .token("ops", VIEWER)
        ),
        Err(BuildError::BadName { .. })
    ));
    assert!(matches!(
        build(Admin::builder(registry.clone()).token("", OPS)),
        Err(BuildError::BadName { .. })
    ));
    assert_eq!(
        build(Admin::builder(registry.clone()).read_only().events(0)),
        Err(BuildError::BadCapacity(0))
    );
    assert_eq!(
        build(Admin::builder(registry.clone()).read_only().worst_keys(0)),
        Err(BuildError::BadWorstKeys(0))
    );
    assert_eq!(build(Admin::builder(registry.clone()).read_only()), Ok(()));
    assert_eq!(build(Admin::builder(registry).token("ops", OPS)), Ok(()));
}

#[tokio::test]
async fn mutations_without_the_right_bearer_token_are_refused() {
    let (registry, url) = setup(true).await;
    let oversized = format!("Bearer {}", "x".repeat(4096));
    let wrong = format!("Bearer {OPS}x");
    let prefix = format!("Bearer {}", &OPS[..OPS.len() - 1]);
    let basic = format!("Basic {OPS}");
    let bare = OPS.to_owned();
    for (path, auth) in [
        ("/breakers/mail", None),
        ("/breakers/mail", Some("")),
        ("/breakers/mail", Some("Bearer")),
        ("/breakers/mail", Some("Bearer ")),
        ("/breakers/mail", Some(wrong.as_str())),
        ("/breakers/mail", Some(prefix.as_str())),
        ("/breakers/mail", Some(basic.as_str())),
        ("/breakers/mail", Some(bare.as_str())),
        ("/breakers/mail", Some(oversized.as_str())),
        ("/breakers/hosts/keys/a.example", None),
        ("/breakers/hosts/keys/a.example", Some(wrong.as_str())),
        // An unknown group is not told apart from a known one without a token.
        ("/breakers/nope", None),
    ] {
        let request = (Method::POST, path, auth, FORCE_OPEN);
        refused(&registry, &url, request, 401, "unauthorized").await;
    }
    // A read-only token reads but does not act.
    let viewer = format!("Bearer {VIEWER}");
    let request = (
        Method::POST,
        "/breakers/mail",
        Some(viewer.as_str()),
        FORCE_OPEN,
    );
    refused(&registry, &url, request, 403, "forbidden").await;
    let client = reqwest::Client::new();
    let (status, _) = json(
        client
            .get(format!("{url}/breakers/mail"))
            .bearer_auth(VIEWER)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn protected_reads_need_a_token_and_health_does_not() {
    let (registry, url) = setup(true).await;
    for path in [
        "/breakers",
        "/breakers/mail",
        "/breakers/hosts/keys/a.example",
        "/events",
        "/events/stream",
    ] {
        refused(
            &registry,
            &url,
            (Method::GET, path, None, ""),
            401,
            "unauthorized",
        )
        .await;
        let wrong = Some("Bearer not-a-token-of-this-router");
        refused(
            &registry,
            &url,
            (Method::GET, path, wrong, ""),
            401,
            "unauthorized",
        )
        .await;
    }
    let (status, _) = json(reqwest::get(format!("{url}/health")).await.unwrap()).await;
    assert_eq!(status, 200);
    // Unprotected reads need none.
    let (registry, url) = setup(false).await;
    let before = everything(&registry);
    let (status, _) = json(reqwest::get(format!("{url}/breakers")).await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(everything(&registry), before);
}

#[tokio::test]
async fn a_read_only_router_refuses_every_mutation() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    registry.breaker("mail", &Config::default());
    let url = serve(
        Admin::builder(registry.clone())
            .read_only()
            .build()
            .unwrap(),
    )
    .await;
    let auth = format!("Bearer {OPS}");
    let request = (
        Method::POST,
        "/breakers/mail",
        Some(auth.as_str()),
        FORCE_OPEN,
    );
    refused(&registry, &url, request, 403, "forbidden").await;
}

#[tokio::test]
async fn oversized_and_malformed_bodies_are_refused() {
    let (registry, url) = setup(false).await;
    let auth = format!("Bearer {OPS}");
    let auth = Some(auth.as_str());
    let huge = format!(
        r#"{{"action": "force_open", "reason": "{}"}}"#,
        "x".repeat(2000)
    );
    let long_reason = format!(
        r#"{{"action": "force_open", "reason": "{}"}}"#,
        "x".repeat(300)
    );
    let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
    for (body, status, code) in [
        (huge.as_str(), 413, "payload_too_large"),
        ("", 400, "bad_request"),
        ("force_open", 400, "bad_request"),
        (r#"{"action": "force_open""#, 400, "bad_request"),
        (r#"["force_open"]"#, 400, "bad_request"),
        (deep.as_str(), 400, "bad_request"),
        (r#"{}"#, 400, "bad_request"),
        (r#"{"action": "explode"}"#, 400, "bad_request"),
        (r#"{"action": 1}"#, 400, "bad_request"),
        (
            r#"{"action": "force_open", "group": "search"}"#,
            400,
            "bad_request",
        ),
        (
            r#"{"action": "force_open", "reason": 7}"#,
            400,
            "bad_request",
        ),
        (long_reason.as_str(), 400, "bad_request"),
        ("{\"action\": \"force_open\u{0}\"}", 400, "bad_request"),
    ] {
        for path in ["/breakers/mail", "/breakers/hosts/keys/a.example"] {
            refused(
                &registry,
                &url,
                (Method::POST, path, auth, body),
                status,
                code,
            )
            .await;
        }
    }
}

#[tokio::test]
async fn traversal_unicode_and_oversized_names_change_nothing() {
    let (registry, url) = setup(false).await;
    let auth = format!("Bearer {OPS}");
    let auth = Some(auth.as_str());
    let long = format!("/breakers/{}", "m".repeat(257));
    let long_key = format!("/breakers/hosts/keys/{}", "k".repeat(257));
    for (path, status, code) in [
        ("/breakers/..%2Fmail", 404, "unknown_group"),
        ("/breakers/..%2F..%2Fetc%2Fpasswd", 404, "unknown_group"),
        ("/breakers/mail%2F..%2Fmail", 404, "unknown_group"),
        ("/breakers/hosts/keys/..%2Fa.example", 404, "unknown_key"),
        (
            "/breakers/%D0%BF%D0%BE%D1%87%D1%82%D0%B0%00",
            404,
            "unknown_group",
        ),
        ("/breakers/%F0%9F%94%A5", 404, "unknown_group"),
        (
            "/breakers/hosts/keys/%E2%80%AEa.example",
            404,
            "unknown_key",
        ),
        ("/breakers/%FF%FE", 400, "bad_request"),
        (long.as_str(), 414, "uri_too_long"),
        (long_key.as_str(), 414, "uri_too_long"),
    ] {
        refused(
            &registry,
            &url,
            (Method::POST, path, auth, FORCE_OPEN),
            status,
            code,
        )
        .await;
        refused(&registry, &url, (Method::GET, path, None, ""), status, code).await;
    }
    // A unicode name that exists is found.
    let (status, body) = json(
        reqwest::get(format!("{url}/breakers/%D0%BF%D0%BE%D1%87%D1%82%D0%B0"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, &body["breaker"]["group"]),
        (200, &serde_json::json!("почта"))
    );
}

#[tokio::test]
async fn wrong_methods_and_unknown_routes_are_json_errors() {
    let (registry, url) = setup(false).await;
    let auth = format!("Bearer {OPS}");
    let auth = Some(auth.as_str());
    for (method, path) in [
        (Method::DELETE, "/breakers/mail"),
        (Method::PUT, "/breakers/mail"),
        (Method::PATCH, "/breakers/hosts/keys/a.example"),
        (Method::POST, "/breakers"),
        (Method::POST, "/health"),
        (Method::POST, "/events"),
        (Method::DELETE, "/events/stream"),
        (Method::POST, "/"),
    ] {
        let request = (method, path, auth, FORCE_OPEN);
        refused(&registry, &url, request, 405, "method_not_allowed").await;
    }
    for path in ["/breakers/mail/open", "/breakers/mail/keys", "/admin"] {
        refused(
            &registry,
            &url,
            (Method::POST, path, auth, FORCE_OPEN),
            404,
            "not_found",
        )
        .await;
    }
    let bad_query = (Method::GET, "/events?limit=lots", None, "");
    // No ring on this router: the query is judged first.
    refused(&registry, &url, bad_query, 400, "bad_request").await;
    refused(
        &registry,
        &url,
        (Method::GET, "/events", None, ""),
        404,
        "events_off",
    )
    .await;
}
