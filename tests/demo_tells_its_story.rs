//! `cargo run --example demo` tells its whole story and ends by itself: every
//! check of its own passes (exit 0), and its timeline shows a retry that
//! answers after a failed first attempt and a burst that spends the retry
//! budget, with the counts in the scraped `/metrics`.
//!
//! Run as `demo_refuses_bad_config` runs it: through the cargo that runs the
//! tests, with no `BREAKER_` variable of the caller's.
#![cfg(feature = "config")]

use std::process::Command;

fn demo_stdout() -> String {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "--quiet", "--example", "demo"]);
    for (name, _) in std::env::vars() {
        if name.starts_with("BREAKER_") || name == "DEMO_HOLD_SECS" {
            command.env_remove(name);
        }
    }
    let output = command.output().expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the demo failed: {}\nstdout:\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The line of `stdout` that starts with `start`, past the timeline's
/// `t ms` column if it has one.
fn row<'s>(stdout: &'s str, start: &str) -> &'s str {
    stdout
        .lines()
        .find(|l| {
            l.find(start).is_some_and(|at| {
                let before = &l[..at];
                (before.is_empty() || before.ends_with(' '))
                    && before.trim().chars().all(|c| c.is_ascii_digit())
            })
        })
        .unwrap_or_else(|| panic!("no row starting with {start:?} in:\n{stdout}"))
}

/// The value of the exposition line `series` (`name{labels}`).
fn sample(stdout: &str, series: &str) -> u64 {
    let line = row(stdout, &format!("{series} "));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn the_demo_shows_a_retry_that_answers_and_a_budget_that_runs_out() {
    let stdout = demo_stdout();

    let blip = row(&stdout, "price(\"A-1\")");
    assert!(blip.contains("retried"), "{blip}");
    assert!(blip.contains("2 req"), "{blip}");
    assert!(blip.contains("ok   A-1 costs"), "{blip}");
    assert_eq!(sample(&stdout, "breaker_retries_total{name=\"price\"}"), 1);

    let retries = sample(&stdout, "breaker_retries_total{name=\"stock\"}");
    let spent = sample(
        &stdout,
        "breaker_retries_budget_exhausted_total{name=\"stock\"}",
    );
    // 20 failing calls, each asking for one retry: the budget's 10 to start
    // with and 20% of the 20 first attempts allow 14 (one more per 100 ms the
    // burst lasts); the rest are refused.
    assert_eq!(retries + spent, 20, "{stdout}");
    assert!((14..20).contains(&retries), "{retries} retries:\n{stdout}");
    let refused = row(&stdout, &format!("{spent} of them"));
    assert!(refused.contains("budget spent"), "{refused}");
    assert!(refused.contains("1 req"), "{refused}");
    assert!(refused.contains("err  HTTP 500"), "{refused}");
    let retried = row(&stdout, &format!("{retries} of them"));
    assert!(retried.contains("retried"), "{retried}");
    assert!(retried.contains("2 req"), "{retried}");
    assert!(stdout.contains(&format!(
        "stock's metrics: retries {retries}, retries_budget_exhausted {spent}"
    )));
}
