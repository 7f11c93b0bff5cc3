//! The modules of `breaker-core` form layers: each module names (`crate::m`)
//! only modules of lower layers, so no two modules depend on each other.
//!
//! A new module goes in the table; a reference that breaks the order fails
//! this test with the file, the line and both layers.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Lowest first. A module may use the modules of every layer below its own,
/// none of its own layer or above.
const LAYERS: &[&[&str]] = &[
    &["sync"],
    &["hold", "level"],
    &[
        "names", "clock", "state", "counters", "bulkhead", "timeout", "error", "fleet", "ramp",
        "retry",
    ],
    &["config"],
    &["conflict", "histogram", "trace"],
    &["guards", "events"],
    &["policy"],
    &["throttle"],
    &["metrics"],
    &["breaker"],
    &["outcome", "keyed", "classify"],
    &["registry"],
    &["site"],
    &["__private"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, test files left out (they may use anything).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        if path.is_dir() {
            if name != "tests" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            out.push(path);
        }
    }
}

/// The lines of `text` that are code outside test modules: comments and
/// `#[cfg(test)]` / `#[cfg(all(test, ..))]` inline modules dropped.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut kept = Vec::new();
    let mut test_attr = false;
    let mut skipping: Option<i64> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(depth) = skipping.as_mut() {
            *depth += trimmed.matches('{').count() as i64 - trimmed.matches('}').count() as i64;
            if *depth <= 0 {
                skipping = None;
            }
            continue;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed.starts_with("#[cfg(") && trimmed.contains("test") {
            test_attr = true;
            continue;
        }
        if test_attr && trimmed.starts_with("mod ") && trimmed.ends_with('{') {
            skipping = Some(1);
            test_attr = false;
            continue;
        }
        test_attr = false;
        kept.push((i + 1, line));
    }
    kept
}

/// The crate root's re-exports: `Registry` -> `registry`, and so on.
fn root_items() -> HashMap<String, String> {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut items = HashMap::new();
    let mut statement = String::new();
    for (_, line) in code_lines(&lib) {
        let line = line.trim();
        if !statement.is_empty() || line.starts_with("pub use crate::") {
            statement.push_str(line);
            statement.push(' ');
            if line.ends_with(';') {
                let path = statement.trim_start_matches("pub use crate::");
                let module = path.split("::").next().unwrap().to_owned();
                let names = path[path.find("::").unwrap() + 2..]
                    .trim_end_matches([';', ' '])
                    .trim_matches(['{', '}']);
                for name in names.split(',') {
                    let name = name.trim();
                    let name = name.rsplit("::").next().unwrap();
                    if !name.is_empty() {
                        items.insert(name.to_owned(), module.clone());
                    }
                }
                statement.clear();
            }
        }
    }
    items
}

/// The modules a line names as `crate::x` (a root item counts as its module).
fn named(line: &str, root: &HashMap<String, String>) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let ident: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() {
            // `crate::{a::X, b::Y}`: each part names its own module.
            let group = &rest[..rest.find('}').unwrap_or(rest.len())];
            for part in group.trim_start_matches('{').split(',') {
                let part = part.trim();
                let first = part.split("::").next().unwrap_or("").trim();
                found.push(root.get(first).cloned().unwrap_or_else(|| first.to_owned()));
            }
        } else {
            found.push(root.get(&ident).cloned().unwrap_or(ident));
        }
    }
    found.retain(|m| !m.is_empty());
    found
}

#[test]
fn every_module_names_only_lower_layers() {
    let root = root_items();
    let mut files = Vec::new();
    sources(&src(), &mut files);
    files.sort();
    let mut wrong = Vec::new();
    let mut seen_modules = 0;
    for file in &files {
        let relative = file.strip_prefix(src()).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let module = first.to_str().unwrap().trim_end_matches(".rs");
        if module == "lib" {
            continue;
        }
        let Some(own) = layer_of(module) else {
            wrong.push(format!(
                "{}: module `{module}` is in no layer",
                relative.display()
            ));
            continue;
        };
        seen_modules += 1;
        let text = fs::read_to_string(file).unwrap();
        for (number, line) in code_lines(&text) {
            for used in named(line, &root) {
                if used == module {
                    continue;
                }
                match layer_of(&used) {
                    Some(layer) if layer < own => {}
                    Some(layer) => wrong.push(format!(
                        "{}:{number}: `{module}` (layer {own}) uses `{used}` (layer {layer})",
                        relative.display()
                    )),
                    None => wrong.push(format!(
                        "{}:{number}: `{module}` uses `{used}`, which is in no layer",
                        relative.display()
                    )),
                }
            }
        }
    }
    assert!(seen_modules > 20, "the walk found the sources");
    assert!(
        wrong.is_empty(),
        "modules out of layer:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_sees_a_reference_upward() {
    let root = root_items();
    let line = "use crate::registry::Registry; let _ = crate::Breaker::new;";
    assert_eq!(named(line, &root), ["registry", "breaker"]);
    assert_eq!(
        named("use crate::{config::Config, Registry};", &root),
        ["config", "registry"]
    );
    let text = "use crate::state::State;\n#[cfg(test)]\nmod tests {\n    use crate::Registry;\n}\n// crate::site\nuse crate::clock::Clock;\n";
    let lines: Vec<_> = code_lines(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(lines, [1, 7]);
}
