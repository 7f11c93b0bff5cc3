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

/// The keys of the attribute's table on its own page.
fn attribute_keys() -> Vec<String> {
    let page = include_str!("../src/circuit_breaker.md");
    let start = page
        .find("| key | type | default |")
        .expect("the attribute table");
    page[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with("| `"))
        .filter_map(|line| line["| `".len()..].split('`').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_key_the_migration_page_names_is_a_key_of_the_attribute() {
    let keys = attribute_keys();
    assert!(keys.iter().any(|k| k == "successes_to_close"), "{keys:?}");
    let page = include_str!("../src/migrating.rs");
    let mut named = 0;
    for row in page.lines().filter(|l| l.starts_with("//! | ")) {
        // The breakerbox column: the last cell.
        let cells: Vec<&str> = row.trim_end_matches(" |").split(" | ").collect();
        let ours = cells[cells.len() - 1];
        let parts: Vec<&str> = ours.split('`').collect();
        for (i, code) in parts.iter().enumerate().skip(1).step_by(2) {
            // A link's text names an item, not a key.
            if parts[i - 1].ends_with('[') {
                continue;
            }
            let word = code.split([' ', '=']).next().unwrap_or_default();
            if word.is_empty() || !word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                continue;
            }
            named += 1;
            assert!(
                keys.iter().any(|k| k == word),
                "the migration page names `{word}`, which is no key ({row})"
            );
        }
    }
    assert!(named > 30, "the tables were not found");
}
