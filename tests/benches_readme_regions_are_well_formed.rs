//! Every figure of `benches/README.md` sits in a region a bench writes: each
//! region is present once, well nested, and holds what its bench writes, so a
//! bench run with `BREAKER_BENCH_README=write` finds every marker it replaces.

#[path = "../benches/readme.rs"]
mod readme;

use readme::{regions, splice, Malformed, REGIONS};

fn benches_readme() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/README.md");
    std::fs::read_to_string(path).expect("benches/README.md is readable")
}

#[test]
fn every_region_is_present_once_and_holds_its_figures() {
    let readme = benches_readme();
    let found = regions(&readme).unwrap_or_else(|e| panic!("benches/README.md: {e}"));
    assert_eq!(found.len(), REGIONS.len());
    for (name, text) in found {
        let text = text.trim();
        match name {
            // One sentence about the machine and the run.
            "machine" => assert!(text.starts_with("Measured on "), "{name}: {text}"),
            // Tables: each row has as many cells as its table's header.
            _ => {
                let mut tables = 0;
                for block in text.split("\n\n") {
                    let rows: Vec<_> = block.lines().filter(|l| l.starts_with('|')).collect();
                    let [header, rule, body @ ..] = rows.as_slice() else {
                        continue;
                    };
                    assert!(
                        rule.starts_with("|---"),
                        "region {name}: no rule under {header}"
                    );
                    assert!(!body.is_empty(), "region {name}: a table without rows");
                    let width = header.matches('|').count();
                    for row in [rule].into_iter().chain(body) {
                        assert_eq!(row.matches('|').count(), width, "region {name}: {row}");
                    }
                    tables += 1;
                }
                assert!(tables > 0, "region {name} holds no table");
            }
        }
    }
}

#[test]
fn a_region_written_twice_keeps_the_rest_of_the_readme() {
    let readme = benches_readme();
    let once = splice(&readme, "heap", "| a | b |\n|---|---:|\n| c | 1 |\n").unwrap();
    let twice = splice(&once, "heap", "| a | b |\n|---|---:|\n| c | 1 |\n").unwrap();
    assert_eq!(once, twice);
    let outside = |text: &str| {
        let from = text.find("<!-- begin generated: heap -->").unwrap();
        let to = text.find("<!-- end generated: heap -->").unwrap();
        (text[..from].to_owned(), text[to..].to_owned())
    };
    assert_eq!(outside(&once), outside(&readme));
    assert!(regions(&once).is_ok());
}

#[test]
fn broken_markers_are_named() {
    let good = REGIONS
        .iter()
        .map(|r| format!("<!-- begin generated: {r} -->\nx\n<!-- end generated: {r} -->\n"))
        .collect::<String>();
    assert!(regions(&good).is_ok());
    let without_end = good.replacen("<!-- end generated: heap -->", "", 1);
    assert_eq!(
        regions(&without_end),
        Err(Malformed::Missing("heap".into()))
    );
    let twice = format!("{good}<!-- begin generated: heap -->\n<!-- end generated: heap -->\n");
    assert_eq!(regions(&twice), Err(Malformed::Repeated("heap".into())));
    let unknown = format!("{good}<!-- begin generated: heep -->\n");
    assert_eq!(regions(&unknown), Err(Malformed::Unknown("heep".into())));
    let swapped = good
        .replacen("<!-- begin generated: heap -->", "@@", 1)
        .replacen(
            "<!-- end generated: heap -->",
            "<!-- begin generated: heap -->",
            1,
        )
        .replacen("@@", "<!-- end generated: heap -->", 1);
    assert_eq!(regions(&swapped), Err(Malformed::Misnested("heap".into())));
}
