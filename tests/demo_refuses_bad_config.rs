//! `cargo run --example demo` refuses to start on a bad `BREAKER_CONFIG` file
//! or `BREAKER_` variable: a non-zero exit and a message naming the file or the
//! variable, and the key.
//!
//! Examples have no `CARGO_BIN_EXE_*`, so this runs the example the way its
//! users do, through the cargo that runs the tests (already built by then, so
//! cargo only checks it is fresh); the demo stays an example, with its
//! dev-dependencies (tokio, hyper) out of the library's.
#![cfg(feature = "config")]

use std::process::{Command, Output};

fn demo(vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "--quiet", "--example", "demo"]);
    // Only the variables of the case: none inherited from the caller.
    for (name, _) in std::env::vars() {
        if name.starts_with("BREAKER_") {
            command.env_remove(name);
        }
    }
    command.envs(vars.iter().copied());
    command.output().expect("cargo runs")
}

fn refused(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains("demo refused to start"), "stderr: {stderr}");
    assert!(
        String::from_utf8_lossy(&output.stdout).is_empty(),
        "nothing ran before the refusal"
    );
    stderr
}

#[test]
fn a_bad_file_stops_the_demo_naming_the_file_and_the_key() {
    let path = std::env::temp_dir().join(format!("breaker-demo-bad-{}.toml", std::process::id()));
    std::fs::write(&path, "[groups.search]\nopen_ms = \"soon\"\n").unwrap();
    let output = demo(&[("BREAKER_CONFIG", path.to_str().unwrap())]);
    std::fs::remove_file(&path).unwrap();
    let stderr = refused(&output);
    assert!(stderr.contains(path.to_str().unwrap()), "stderr: {stderr}");
    assert!(stderr.contains("[groups.search]"), "stderr: {stderr}");
    assert!(stderr.contains("open_ms"), "stderr: {stderr}");
}

#[test]
fn a_missing_file_stops_the_demo_naming_it() {
    let stderr = refused(&demo(&[("BREAKER_CONFIG", "/nonexistent/breaker.toml")]));
    assert!(
        stderr.contains("/nonexistent/breaker.toml"),
        "stderr: {stderr}"
    );
    assert!(stderr.contains("BREAKER_CONFIG"), "stderr: {stderr}");
}

#[test]
fn a_bad_variable_stops_the_demo_naming_the_variable() {
    let stderr = refused(&demo(&[("BREAKER_DEFAULTS__TRESHOLD", "3")]));
    assert!(
        stderr.contains("BREAKER_DEFAULTS__TRESHOLD"),
        "stderr: {stderr}"
    );
    assert!(stderr.contains("threshold"), "stderr: {stderr}");
}
