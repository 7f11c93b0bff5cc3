//! The alerting rules in `dashboards/` pass `promtool check rules` and their
//! unit tests (`promtool test rules`), and every query of the Grafana
//! dashboard is PromQL that promtool accepts once Grafana's variables are
//! filled in. Without promtool the tests say so and pass, except under CI
//! (`CI` set), where a missing promtool fails them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dashboards() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("dashboards")
}

/// `promtool` with `args`, run in `dashboards/`: `None` when it is not
/// installed and CI does not insist on it.
fn promtool(args: &[&str]) -> Option<std::process::Output> {
    match Command::new("promtool")
        .args(args)
        .current_dir(dashboards())
        .output()
    {
        Ok(output) => Some(output),
        Err(e) if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) => {
            panic!("promtool is required under CI (apt-get install prometheus): {e}")
        }
        Err(e) => {
            eprintln!("promtool not run ({e}); install the `prometheus` package to run it");
            None
        }
    }
}

fn assert_passed(output: &std::process::Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_alerting_rules_pass_promtool_check_rules() {
    if let Some(output) = promtool(&["check", "rules", "alerts.yml"]) {
        assert_passed(&output, "promtool check rules alerts.yml");
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(said.contains("SUCCESS: 5 rules found"), "{said}");
    }
}

#[test]
fn the_alerting_rules_pass_their_promtool_unit_tests() {
    if let Some(output) = promtool(&["test", "rules", "alerts.test.yml"]) {
        assert_passed(&output, "promtool test rules alerts.test.yml");
    }
}

/// Every `"expr"` string of the dashboard.
fn dashboard_queries() -> Vec<String> {
    let text = std::fs::read_to_string(dashboards().join("breakerbox.json")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            queries.push(target["expr"].as_str().unwrap().to_owned());
        }
    }
    queries
}

#[test]
fn every_dashboard_query_is_promql_promtool_accepts() {
    let queries = dashboard_queries();
    assert!(queries.len() >= 8, "{queries:?}");
    // As recording rules, which `promtool check rules` parses.
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, query) in queries.iter().enumerate() {
        let query = query
            .replace("$__rate_interval", "1m")
            .replace("$job", ".*")
            .replace("$name", ".*");
        let query = serde_json::to_string(&query).unwrap();
        rules.push_str(&format!(
            "      - record: dashboard:query{i}\n        expr: {query}\n"
        ));
    }
    let file =
        std::env::temp_dir().join(format!("breakerbox-dashboard-{}.yml", std::process::id()));
    std::fs::write(&file, rules).unwrap();
    let output = promtool(&["check", "rules", file.to_str().unwrap()]);
    let _ = std::fs::remove_file(&file);
    if let Some(output) = output {
        assert_passed(&output, "promtool check rules (the dashboard's queries)");
    }
}
