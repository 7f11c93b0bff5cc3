//! The generated regions of `benches/README.md`: every figure there sits between
//! a begin and an end marker that name its region, and only the bench that
//! measures a region writes it; the prose around them is written by hand.
//!
//! A bench run with `BREAKER_BENCH_README=write` in its environment replaces
//! its regions' text with what it measured; without it, it only prints. The
//! root crate's `benches_readme_regions_are_well_formed` test reads the same
//! markers with [`regions`], so it builds with the standard library alone.

// Each user of this file uses part of it.
#![allow(dead_code)]

use std::fmt;
use std::path::Path;

/// Every region of the README, each named after the bench that writes it.
pub const REGIONS: &[&str] = &[
    "machine",
    "instructions",
    "criterion",
    "threads",
    "heap",
    "keyed_churn",
    "outage",
    "outage_defaults",
];

/// The README's path, in this crate's folder.
pub const README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");

/// The environment variable that makes a bench write its regions.
pub const WRITE: &str = "BREAKER_BENCH_README";

fn begin(name: &str) -> String {
    format!("<!-- begin generated: {name} -->")
}

fn end(name: &str) -> String {
    format!("<!-- end generated: {name} -->")
}

/// What is wrong with a README's markers.
#[derive(Debug, PartialEq, Eq)]
pub enum Malformed {
    /// A region without its begin marker, its end marker, or either.
    Missing(String),
    /// A region whose markers appear more than once.
    Repeated(String),
    /// A region whose end comes before its begin, or that holds another's marker.
    Misnested(String),
    /// A marker naming no region in [`REGIONS`].
    Unknown(String),
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformed::Missing(r) => write!(f, "region `{r}`: a marker is missing"),
            Malformed::Repeated(r) => write!(f, "region `{r}`: a marker appears twice"),
            Malformed::Misnested(r) => write!(f, "region `{r}`: markers out of order"),
            Malformed::Unknown(r) => write!(f, "marker for an unknown region `{r}`"),
        }
    }
}

/// The byte range of `name`'s text (between its markers, markers excluded).
fn span(readme: &str, name: &str) -> Result<std::ops::Range<usize>, Malformed> {
    let (b, e) = (begin(name), end(name));
    let starts: Vec<_> = readme.match_indices(&b).map(|(i, _)| i).collect();
    let ends: Vec<_> = readme.match_indices(&e).map(|(i, _)| i).collect();
    match (starts.as_slice(), ends.as_slice()) {
        ([s], [t]) if s < t => {
            let inside = s + b.len()..*t;
            if readme[inside.clone()].contains("<!-- begin generated:")
                || readme[inside.clone()].contains("<!-- end generated:")
            {
                return Err(Malformed::Misnested(name.to_owned()));
            }
            Ok(inside)
        }
        ([_], [_]) => Err(Malformed::Misnested(name.to_owned())),
        ([], _) | (_, []) => Err(Malformed::Missing(name.to_owned())),
        _ => Err(Malformed::Repeated(name.to_owned())),
    }
}

/// Every region's text, in [`REGIONS`] order, once every marker is checked:
/// each region has exactly one begin and one end marker, in that order, with no
/// other marker between them, and no marker names an unknown region.
pub fn regions(readme: &str) -> Result<Vec<(&'static str, &str)>, Malformed> {
    for marker in ["<!-- begin generated: ", "<!-- end generated: "] {
        for (at, _) in readme.match_indices(marker) {
            let rest = &readme[at + marker.len()..];
            let name = rest.split(" -->").next().unwrap_or(rest);
            if !REGIONS.contains(&name) {
                return Err(Malformed::Unknown(name.to_owned()));
            }
        }
    }
    REGIONS
        .iter()
        .map(|name| span(readme, name).map(|range| (*name, &readme[range])))
        .collect()
}

/// `readme` with region `name`'s text replaced by `text`.
pub fn splice(readme: &str, name: &str, text: &str) -> Result<String, Malformed> {
    let range = span(readme, name)?;
    let text = text.trim_matches('\n');
    Ok(format!(
        "{}\n{text}\n{}",
        &readme[..range.start],
        &readme[range.end..]
    ))
}

/// Writes each `(region, text)` into the README at `path` when [`WRITE`] is set
/// in the environment; says what it did, or why it could not.
pub fn write_if_asked(path: &Path, regions: &[(&str, String)]) {
    if std::env::var_os(WRITE).is_none() {
        return;
    }
    let result = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|mut readme| {
            for (name, text) in regions {
                readme = splice(&readme, name, text).map_err(|e| e.to_string())?;
            }
            std::fs::write(path, readme).map_err(|e| e.to_string())
        });
    let names: Vec<_> = regions.iter().map(|(name, _)| *name).collect();
    match result {
        Ok(()) => println!("{}: wrote the regions {names:?}", path.display()),
        Err(e) => println!("{}: regions {names:?} not written: {e}", path.display()),
    }
}
