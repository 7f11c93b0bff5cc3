//! The admin router lists each group the code declares, or the configuration
//! names, with its resolved settings and each key's source, before any call
//! made it, marked as not yet created.

#[path = "support/admin.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use breakerbox::admin::Admin;
use breakerbox::config_file::Settings;
use breakerbox::{Config, ManualClock, Registry};
use serde_json::json;
use support::{json, serve};

const SEARCH: Config = match Config::builder()
    .threshold(3)
    .open(Duration::from_secs(5))
    .build()
{
    Ok(config) => config,
    Err(_) => panic!("invalid"),
};
breakerbox::declare_group!("declared-search", SEARCH);

const FILE: &str =
    "[groups.declared-search]\nthreshold = 10\n\n[groups.file-only]\nopen_ms = \"2s\"\n";

#[tokio::test]
async fn a_declared_group_is_listed_with_its_settings_and_sources_before_its_first_call() {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    Settings::from_toml_str(FILE, "prod.toml")
        .unwrap()
        .apply(&registry)
        .unwrap();
    assert!(registry.get("declared-search").is_none(), "no call made it");
    let url = serve(
        Admin::builder(registry.clone())
            .read_only()
            .build()
            .unwrap(),
    )
    .await;

    let (status, body) = json(reqwest::get(format!("{url}/breakers")).await.unwrap()).await;
    assert_eq!(status, 200);
    assert!(body["breakers"].get("declared-search").is_none(), "{body}");
    let search = &body["declared"]["declared-search"];
    assert_eq!(search["created"], json!(false), "{body}");
    assert_eq!(
        search["config"]["threshold"],
        json!({"value": 10, "explicit": true, "source": "`prod.toml` line 2, [groups.declared-search]"})
    );
    assert_eq!(
        search["config"]["open_ms"],
        json!({"value": 5000, "explicit": true, "source": "the code"})
    );
    assert_eq!(search["config"]["backoff"]["source"], json!("default"));
    assert_eq!(
        search["settings"],
        json!([
            "`threshold = 10` (`prod.toml` line 2, [groups.declared-search])",
            "`open_ms = 5000` (the code)",
        ])
    );
    assert_eq!(
        search["overrides"],
        json!(["the attribute's `threshold = 3` is overridden by `threshold = 10` (`prod.toml` line 2, [groups.declared-search])"])
    );
    // A group only the file names is listed the same way.
    let file_only = &body["declared"]["file-only"];
    assert_eq!(file_only["created"], json!(false));
    assert_eq!(
        file_only["config"]["open_ms"],
        json!({"value": 2000, "explicit": true, "source": "`prod.toml` line 5, [groups.file-only]"})
    );
    // One group's own address answers it too.
    let (status, one) = json(
        reqwest::get(format!("{url}/breakers/declared-search"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(one["declared"], *search);

    // Its first call makes it: listed with the breakers, no longer as declared.
    registry.breaker("declared-search", &SEARCH);
    let (_, body) = json(reqwest::get(format!("{url}/breakers")).await.unwrap()).await;
    assert!(body["declared"].get("declared-search").is_none(), "{body}");
    assert_eq!(
        body["breakers"]["declared-search"]["config"]["threshold"]["value"],
        json!(10)
    );
}
