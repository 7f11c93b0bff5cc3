//! Statements of the rendered docs that the code decides: each is read from
//! the source the docs are rendered from and checked against what the code
//! does.

use breakerbox::events::{TransitionReason, TripCause};

/// The `//!`/`///` lines of `source`, without their markers.
fn doc_text(source: &str) -> String {
    source
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            line.strip_prefix("//!")
                .or_else(|| line.strip_prefix("///"))
                .map(str::trim)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_module_of_the_facade_is_documented_in_its_own_file_alone() {
    // rustdoc renders a module's outer docs (at `pub mod x;`) and then its
    // inner ones (`//!` in its file): both would open the page twice.
    let lib: Vec<&str> = include_str!("../src/lib.rs")
        .lines()
        .map(str::trim)
        .collect();
    for (at, line) in lib.iter().enumerate() {
        let Some(module) = line.strip_prefix("pub mod ").filter(|m| m.ends_with(';')) else {
            continue;
        };
        // Back over the attributes between the docs and the declaration.
        let above = lib[..at]
            .iter()
            .rev()
            .find(|l| l.is_empty() || l.starts_with("///") || l.ends_with([';', '{', '}']));
        assert!(
            !above.is_some_and(|l| l.starts_with("///")),
            "`pub mod {module}` has docs at its declaration as well as in its file"
        );
    }
}

#[test]
fn every_reason_the_kit_compares_is_listed_where_its_steps_are_documented() {
    let docs = doc_text(include_str!("../src/testing/assert.rs"));
    let mut reasons = vec![
        TransitionReason::OpenElapsed,
        TransitionReason::ProbeFailed,
        TransitionReason::ProbesSucceeded,
        TransitionReason::LeaseReclaimed { probes: 1 },
        TransitionReason::ForcedOpen,
        TransitionReason::ForcedClosed,
        TransitionReason::Reset,
        TransitionReason::FleetOpen,
        TransitionReason::FleetClose,
    ];
    for cause in [
        TripCause::ConsecutiveFailures,
        TripCause::FailureRate,
        TripCause::SlowCallRate,
        TripCause::LatencyP99,
    ] {
        reasons.push(TransitionReason::Tripped(cause));
    }
    for reason in reasons {
        let written = reason.to_string().replace("from 1 probe", "from N probe");
        assert!(
            docs.contains(&format!("`{written}`")),
            "`Step`'s docs do not list the reason `{written}`"
        );
    }
}

#[cfg(feature = "config")]
#[test]
fn the_file_key_table_says_duration_for_every_key_that_takes_one() {
    use breakerbox::config_file::{ErrorKind, Settings};

    let source = include_str!("../src/config_file/mod.rs");
    let mut rows = 0;
    for line in source.lines() {
        let Some(row) = line.strip_prefix("//! | `") else {
            continue;
        };
        let Some((key, rest)) = row.split_once("` | ") else {
            continue;
        };
        rows += 1;
        let file = format!("[defaults]\n{key} = \"1s\"\n");
        let takes_duration = match Settings::from_toml_str(&file, "app.toml") {
            Ok(_) => true,
            Err(err) => err.kind() != ErrorKind::WrongType,
        };
        assert_eq!(
            rest.contains("duration"),
            takes_duration,
            "`{key}`: the table says `{rest}`"
        );
    }
    assert!(rows > 20, "the table was not found");
}
