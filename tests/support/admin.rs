//! Serving an admin router on 127.0.0.1 and asking it over real HTTP.

// Each admin test file uses a part of this.
#![allow(dead_code)]

use std::sync::Arc;

use breakerbox::admin::Admin;
use breakerbox::{keyed::KeyedMetrics, metrics::Snapshot, Registry};

/// A secret long enough to build with.
pub const OPS: &str = "ops-secret-0123456789";
/// A read-only token's secret.
pub const VIEWER: &str = "viewer-secret-0123456789";

/// Serves `admin` on a free port of 127.0.0.1; its base URL.
pub async fn serve(admin: Admin) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = admin.router();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// Everything a refused request must leave as it was: the unkeyed breakers'
/// metrics and the keyed groups' metrics.
pub fn everything(registry: &Arc<Registry>) -> (Snapshot, Vec<KeyedMetrics>) {
    (registry.snapshot(), registry.keyed_metrics())
}

/// The status and JSON body of a response.
pub async fn json(response: reqwest::Response) -> (u16, serde_json::Value) {
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    assert_eq!(
        kind.as_deref(),
        Some("application/json"),
        "{status}: {text}"
    );
    (status, serde_json::from_str(&text).unwrap())
}
