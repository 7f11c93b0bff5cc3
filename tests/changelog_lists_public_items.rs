//! The CHANGELOG's list of public items names exactly what `src/lib.rs`
//! exports at the root of `breakerbox`, and one line for each public module.

use std::collections::BTreeSet;

const LIB: &str = include_str!("../src/lib.rs");
const CHANGELOG: &str = include_str!("../CHANGELOG.md");

/// The names in every `pub use <crate>::{..};` and `pub use <crate>::name;`
/// at the top level of `src/lib.rs` (not indented, so not `__private`'s).
fn reexported() -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = LIB;
    while let Some(at) = rest.find("\npub use ") {
        rest = &rest[at + "\npub use ".len()..];
        let statement = &rest[..rest.find(';').expect("a `pub use` ends with `;`")];
        let list = match statement.find('{') {
            Some(open) => &statement[open + 1..statement.rfind('}').unwrap()],
            None => statement.rsplit("::").next().unwrap(),
        };
        names.extend(
            list.split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(str::to_owned),
        );
    }
    names
}

/// What the root exports, as the CHANGELOG writes it: `name!` for a macro,
/// `name()` for the registry fn, plain names for the rest; and the modules.
fn root_and_modules() -> (BTreeSet<String>, BTreeSet<String>) {
    let mut root = BTreeSet::new();
    let mut modules = BTreeSet::new();
    for name in reexported() {
        if name == "registry" {
            // The process-wide registry's fn.
            root.insert("registry()".to_owned());
        } else if name.starts_with(char::is_uppercase) || name == "circuit_breaker" {
            root.insert(name);
        } else {
            modules.insert(name);
        }
    }
    for line in LIB.lines() {
        if let Some(module) = line.strip_prefix("pub mod ") {
            let module = module.trim_end_matches([';', '{', ' ']);
            if !module.starts_with("__") {
                modules.insert(module.to_owned());
            }
        }
    }
    for (at, _) in LIB.match_indices("#[macro_export]\nmacro_rules! ") {
        let after = &LIB[at + "#[macro_export]\nmacro_rules! ".len()..];
        let name = after
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
            .unwrap();
        root.insert(format!("{name}!"));
    }
    (root, modules)
}

/// The CHANGELOG's public-items list: each bullet's first word (`Root` or a
/// module in backticks) and the names in backticks after its colon.
fn listed() -> Vec<(String, BTreeSet<String>)> {
    let start = CHANGELOG
        .find("<!-- public-items:")
        .expect("the CHANGELOG has a public-items list");
    let section = &CHANGELOG[start..];
    let section = &section[section.find('\n').unwrap() + 1..];
    let mut bullets: Vec<String> = Vec::new();
    for line in section.lines() {
        if let Some(bullet) = line.strip_prefix("- ") {
            bullets.push(bullet.to_owned());
        } else if let Some(more) = line.strip_prefix("  ") {
            bullets
                .last_mut()
                .expect("a continuation line")
                .push_str(more);
        } else {
            break;
        }
    }
    bullets
        .iter()
        .map(|bullet| {
            let (head, names) = bullet.split_once(':').expect("`head: names`");
            let head = head.split_whitespace().next().unwrap().trim_matches('`');
            let names = names
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect();
            (head.to_owned(), names)
        })
        .collect()
}

#[test]
fn the_root_line_names_exactly_the_root_exports() {
    let (root, _) = root_and_modules();
    let listed = listed();
    let (_, names) = listed
        .iter()
        .find(|(head, _)| head == "Root")
        .expect("a `Root:` line");
    assert!(
        root.contains("Breaker") && root.contains("declare_group!"),
        "{root:?}"
    );
    assert_eq!(
        names, &root,
        "the CHANGELOG's root line and src/lib.rs disagree"
    );
}

#[test]
fn every_public_module_has_a_line_and_every_line_a_module() {
    let (_, modules) = root_and_modules();
    let listed: BTreeSet<String> = listed()
        .into_iter()
        .map(|(head, _)| head)
        .filter(|head| head != "Root")
        .collect();
    assert!(
        modules.contains("metrics") && modules.contains("tower"),
        "{modules:?}"
    );
    assert_eq!(
        listed, modules,
        "the CHANGELOG's module lines and src/lib.rs disagree"
    );
}
