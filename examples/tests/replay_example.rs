//! The replay example on its shipped sample: the trace replays under the
//! config that recorded it to the recorded transitions, the candidate config
//! does something else, and the picture is written with both timelines.

#[allow(dead_code)] // its `main` runs only as the example
#[path = "../replay.rs"]
mod replay;

use std::path::Path;

use breakerbox::config_file::{Patch, Settings};
use breakerbox::testing::trace::Trace;

#[test]
fn the_sample_replays_to_its_recording_and_draws_two_timelines() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("replay");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("replay.svg");
    let _ = std::fs::remove_file(&out);
    let table = replay::run(
        &dir.join("checkout.jsonl"),
        &dir.join("current.toml"),
        &dir.join("candidate.toml"),
        &out,
    )
    .unwrap();
    assert!(
        table.contains("current.toml") && table.contains("candidate.toml"),
        "{table}"
    );
    assert!(table.contains("calls refused"), "{table}");

    let file = std::fs::File::open(dir.join("checkout.jsonl")).unwrap();
    let trace = Trace::read_jsonl(std::io::BufReader::new(file)).unwrap();
    let current = Settings::from_file(dir.join("current.toml"))
        .unwrap()
        .resolve("checkout", &Patch::new())
        .unwrap()
        .config;
    let timeline = breakerbox::testing::replay(&trace, &current);
    assert!(trace.changes.len() >= 4, "the sample opens and closes");
    assert_eq!(timeline.changes, trace.changes);

    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    // Both bands, each with closed and open spans.
    assert!(svg.contains(">current.toml<") && svg.contains(">candidate.toml<"));
    for colour in ["#2ca02c", "#d62728", "#ff9f1c"] {
        assert!(svg.matches(colour).count() >= 2, "{colour} in {svg}");
    }
    assert!(svg.matches("<rect").count() >= 8);
}
