//! The admin router's status page: one self-contained HTML document, and in a
//! real browser (headless Chromium) it shows every circuit's state and
//! timeline, the share a ramping circuit admits, and a circuit that trips
//! while the page follows the event stream. The table is rendered by the
//! server as of the request, so a plain screenshot (no wait, no script) shows
//! it, per-key timelines included; mounted with `nest_service`, the page
//! answers at `/admin` and `/admin/`. Without Chromium the browser tests
//! say so and pass, except under CI (`CI` set), where a missing `chromium`
//! fails it. A screenshot of the page is kept in
//! `target/artifacts/status-page.png`.

#[path = "support/admin.rs"]
mod support;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use breakerbox::admin::Admin;
use breakerbox::{Config, ManualClock, Registry};
use futures::StreamExt;
use tokio::sync::Notify;

fn trips_at_once() -> Config {
    Config::builder()
        .threshold(1)
        .open(Duration::from_millis(600_000))
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_page_is_one_self_contained_document() {
    let registry = Arc::new(Registry::new());
    let url = support::serve(Admin::builder(registry).read_only().build().unwrap()).await;
    let response = reqwest::get(format!("{url}/")).await.unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(policy.starts_with("default-src 'none'"), "{policy}");
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    let page = response.text().await.unwrap();
    assert!(page.starts_with("<!doctype html>"));
    // Nothing loaded from elsewhere: no external script, style or link.
    for outside in ["src=", "href=", "http://", "https://", "@import", "url("] {
        assert!(!page.contains(outside), "the page holds `{outside}`");
    }
    assert!(page.contains("<script>") && page.contains("<style>"));
}

/// The `chromium` binary, or `None` when it is missing and CI does not insist.
fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("CHROMIUM").unwrap_or_else(|| "chromium".into()));
    match Command::new(&path).arg("--version").output() {
        Ok(out) if out.status.success() => Some(path),
        result => {
            let why = match result {
                Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
                Err(e) => e.to_string(),
            };
            if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
                panic!("chromium is required under CI (apt-get install chromium): {why}");
            }
            eprintln!("chromium not run ({why}); install the `chromium` package to run it");
            None
        }
    }
}

/// Chromium, headless, on `url` with `extra` arguments (what it prints),
/// given 4 s of virtual time for the page's script.
fn headless(chromium: &PathBuf, url: &str, extra: &[&str]) -> String {
    let mut args = vec!["--virtual-time-budget=4000"];
    args.extend_from_slice(extra);
    plain_headless(chromium, url, &args, "budget")
}

/// Chromium, headless, on `url` with `extra` arguments and nothing else: it
/// captures the page as it loads, without waiting for its script. `profile`
/// names its own profile directory, so two runs never share one.
fn plain_headless(chromium: &PathBuf, url: &str, extra: &[&str], profile: &str) -> String {
    let profile = std::env::temp_dir().join(format!(
        "breakerbox-chromium-{}-{profile}",
        std::process::id()
    ));
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_chromium_shows_the_open_circuit_and_its_timeline() {
    let Some(chromium) = chromium() else {
        return;
    };
    let clock = ManualClock::new();
    let registry = Arc::new(Registry::with_clock(clock.clone()));
    let search = registry.breaker("search", &trips_at_once());
    // Closed a quarter of the way into a 10 s ramp: the page draws the share.
    let checkout = registry.breaker(
        "checkout",
        &Config::builder()
            .threshold(1)
            .open(Duration::from_secs(1))
            .ramp(Duration::from_secs(10))
            .build()
            .unwrap(),
    );
    checkout.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(1));
    checkout.try_acquire().unwrap().success();
    clock.advance(Duration::from_millis(2_500));
    registry.breaker("mail", &trips_at_once());
    let profile = registry.breaker("profile", &trips_at_once());
    // Tripped in shadow mode: it admits every call and counts what it would
    // have refused.
    let billing = registry.breaker("billing", &trips_at_once());
    billing.set_shadow(true);
    billing.try_acquire().unwrap().failure();
    for _ in 0..3 {
        billing.try_acquire().expect("shadow mode admits").failure();
    }
    let admin = Admin::builder(Arc::clone(&registry))
        .read_only()
        .events(64)
        .build()
        .unwrap();
    // Tripped before the page loads: in `/breakers` and `/events`.
    search.try_acquire().unwrap().failure();
    // Tripped once the page follows the stream: only the stream tells it.
    let following = Arc::new(Notify::new());
    let told = Arc::clone(&following);
    let app = axum::Router::new()
        .nest("/admin", admin.router())
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let told = Arc::clone(&told);
            async move {
                if !request.uri().path().ends_with("/events/stream") {
                    return next.run(request).await;
                }
                told.notify_one();
                // Chromium's virtual time stands still while a request is
                // pending: the stream is cut after a while (the page
                // reconnects later, on virtual time), so the budget runs out.
                let (parts, body) = next.run(request).await.into_parts();
                let cut = tokio::time::sleep(Duration::from_millis(1_500));
                let body = Body::from_stream(body.into_data_stream().take_until(cut));
                Response::from_parts(parts, body)
            }
        }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/admin", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    tokio::spawn(async move {
        following.notified().await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        profile.try_acquire().unwrap().failure();
    });

    let breakers = reqwest::get(format!("{url}/breakers"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let breakers: serde_json::Value = serde_json::from_str(&breakers).unwrap();
    let ramping = &breakers["breakers"]["checkout"];
    assert_eq!(ramping["state"], "closed");
    assert_eq!(ramping["admitted_share"], 0.25, "{ramping}");

    let dom = {
        let (chromium, url) = (chromium.clone(), url.clone());
        tokio::task::spawn_blocking(move || headless(&chromium, &url, &["--dump-dom"]))
            .await
            .unwrap()
    };
    for (group, state) in [("search", "open"), ("mail", "closed"), ("profile", "open")] {
        let row = format!(r#"<tr data-group="{group}" data-state="{state}">"#);
        assert!(dom.contains(&row), "no {row} in the page:\n{dom}");
    }
    let row = r#"<tr data-group="checkout" data-state="closed" data-ramp="0.25">"#;
    assert!(dom.contains(row), "no {row} in the page:\n{dom}");
    assert!(dom.contains("closed, ramping 25%"), "{dom}");
    let shadow = &breakers["breakers"]["billing"];
    assert_eq!(
        (
            &shadow["state"],
            &shadow["shadow"],
            &shadow["shadow_refused"]
        ),
        (&"open".into(), &true.into(), &3.into()),
        "{shadow}"
    );
    let row = r#"<tr data-group="billing" data-state="open" data-shadow="on">"#;
    assert!(dom.contains(row), "no {row} in the page:\n{dom}");
    assert!(dom.contains("open (shadow)"), "{dom}");
    assert!(dom.contains("would refuse 75.0%"), "{dom}");
    // search's timeline: closed, then open.
    let timeline = &dom[dom
        .find(r#"<div class="timeline" data-group="search">"#)
        .expect("search's timeline")..];
    let timeline = &timeline[..timeline.find("</div>").unwrap()];
    let closed = timeline
        .find(r#"data-state="closed""#)
        .expect("a closed segment");
    let open = timeline
        .find(r#"data-state="open""#)
        .expect("an open segment");
    assert!(closed < open, "{timeline}");

    let artifacts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("status-page.png");
    let _ = std::fs::remove_file(&shot);
    let screenshot = format!("--screenshot={}", shot.display());
    tokio::task::spawn_blocking(move || {
        headless(&chromium, &url, &[&screenshot, "--window-size=1280,520"])
    })
    .await
    .unwrap();
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_screenshot_shows_the_states_and_each_keys_timeline_without_waiting() {
    let clock = ManualClock::new();
    let registry = Arc::new(Registry::with_clock(clock.clone()));
    let admin = Admin::builder(Arc::clone(&registry))
        .read_only()
        .events(64)
        .keyed::<String>("hosts")
        .build()
        .unwrap();
    registry
        .breaker("search", &trips_at_once())
        .try_acquire()
        .unwrap()
        .failure();
    registry.breaker("mail", &trips_at_once());
    let hosts = registry
        .keyed::<String>(
            "hosts",
            &Config::builder()
                .threshold(1)
                .open(Duration::from_secs(1))
                .build()
                .unwrap(),
            100,
        )
        .unwrap();
    // One key opened and recovered, one is open.
    let recovered = hosts.breaker("a.example");
    recovered.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(1));
    recovered.try_acquire().unwrap().success();
    hosts.breaker("b.example").try_acquire().unwrap().failure();

    let app = axum::Router::new().nest_service("/admin", admin.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/admin", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    // Both addresses serve the page, its table already in the document.
    for address in [url.clone(), format!("{url}/")] {
        let response = reqwest::get(&address).await.unwrap();
        assert_eq!(response.status(), 200, "{address}");
        let page = response.text().await.unwrap();
        assert!(
            page.contains(r#"<tr data-group="search" data-state="open">"#),
            "{address}: {page}"
        );
    }

    let Some(chromium) = chromium() else {
        return;
    };
    // The document as loaded, without waiting for the page's script.
    let dom = {
        let (chromium, url) = (chromium.clone(), format!("{url}/"));
        tokio::task::spawn_blocking(move || plain_headless(&chromium, &url, &["--dump-dom"], "dom"))
            .await
            .unwrap()
    };
    for (group, state) in [
        ("search", "open"),
        ("mail", "closed"),
        ("hosts (keyed)", "open"),
    ] {
        let row = format!(r#"<tr data-group="{group}" data-state="{state}">"#);
        assert!(dom.contains(&row), "no {row} in the page:\n{dom}");
    }
    // The recovered key's timeline: closed, open, half-open, closed again.
    let start = dom
        .find(r#"<div class="timeline" data-group="hosts" data-key="a.example">"#)
        .expect("a.example's timeline");
    let timeline = &dom[start..];
    let timeline = &timeline[..timeline.find("</div>").unwrap()];
    let states: Vec<&str> = timeline
        .split(r#"data-state=""#)
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    assert_eq!(
        states,
        ["closed", "open", "half_open", "closed"],
        "{timeline}"
    );
    assert!(
        dom.contains(r#"<div class="timeline" data-group="hosts" data-key="b.example">"#),
        "{dom}"
    );

    // A plain screenshot, no wait: the same document, drawn.
    let artifacts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("status-page-first-view.png");
    let _ = std::fs::remove_file(&shot);
    let screenshot = format!("--screenshot={}", shot.display());
    tokio::task::spawn_blocking(move || {
        plain_headless(
            &chromium,
            &url,
            &[&screenshot, "--window-size=1280,520"],
            "shot",
        )
    })
    .await
    .unwrap();
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
}
