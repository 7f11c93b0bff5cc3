//! The configuration loader fed random and mutated TOML files and `BREAKER_`
//! variables: it never panics, a refusal applies nothing to a live registry
//! (its breakers' configs, the overrides listed and the groups made later are
//! as they were), and every refusal names its source (the file or a variable).
//!
//! Each property runs a fixed number of cases (`CASES`), a few seconds in all
//! in a debug build.
#![cfg(feature = "config")]

use breakerbox::config_file::{keys, ErrorKind, Settings};
use breakerbox::{circuit_breaker, CircuitOpen, Config, Registry};
use proptest::prelude::*;
use proptest::test_runner::Config as Cases;

/// Cases per property and run.
const CASES: u32 = 256;

const PATH: &str = "prop/staging.toml";

#[derive(Debug)]
struct Failed;

impl From<CircuitOpen> for Failed {
    fn from(_: CircuitOpen) -> Self {
        Failed
    }
}

#[circuit_breaker(group = "orders", threshold = 3, registry = reg)]
fn orders(reg: &Registry) -> Result<(), Failed> {
    Ok(())
}

#[circuit_breaker(group = "stock", window_calls = 20, registry = reg)]
fn stock(reg: &Registry) -> Result<(), Failed> {
    Ok(())
}

/// Group and template names: the declared ones, one nobody declares, and odd ones.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("orders".to_owned()),
        Just("stock".to_owned()),
        Just("search".to_owned()),
        Just("flaky".to_owned()),
        Just("user-profile.v2".to_owned()),
        Just("\"quoted name\"".to_owned()),
        "[a-z_.-]{0,12}",
    ]
}

/// A key: every key of the table, `template`, near misses and garbage.
fn key() -> impl Strategy<Value = String> {
    let table: Vec<String> = keys().map(str::to_owned).collect();
    prop_oneof![
        4 => proptest::sample::select(table),
        1 => Just("template".to_owned()),
        1 => Just("treshold".to_owned()),
        1 => Just("fallback".to_owned()),
        1 => "[A-Za-z_]{1,10}",
    ]
}

/// A value as TOML writes it: in range, at the edges, of the wrong type, broken.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..100_000).prop_map(|n| n.to_string()),
        Just("0".to_owned()),
        Just("-1".to_owned()),
        Just("18446744073709551615".to_owned()),
        Just("99999999999999999999999".to_owned()),
        Just("1_000".to_owned()),
        (0.0f64..2.0).prop_map(|f| format!("{f}")),
        Just("nan".to_owned()),
        Just("inf".to_owned()),
        Just("true".to_owned()),
        Just("\"flaky\"".to_owned()),
        Just("\"soon\"".to_owned()),
        Just("[1, 2]".to_owned()),
        Just("{ a = 1 }".to_owned()),
        Just("\"unterminated".to_owned()),
        Just("= 3".to_owned()),
        Just(String::new()),
    ]
}

/// One line of a file: a table header, a key and its value, a comment, or junk.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => Just("[defaults]".to_owned()),
        2 => name().prop_map(|n| format!("[groups.{n}]")),
        1 => name().prop_map(|n| format!("[templates.{n}]")),
        1 => Just("[groups]".to_owned()),
        1 => Just("[open_ms]".to_owned()),
        1 => Just("[[groups.orders]]".to_owned()),
        8 => (key(), value()).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => Just("# a comment".to_owned()),
        1 => any::<String>(),
    ]
}

/// A file: lines, then a few characters replaced, inserted or removed.
fn file() -> impl Strategy<Value = String> {
    let lines = proptest::collection::vec(line(), 0..12).prop_map(|l| l.join("\n"));
    let edits =
        proptest::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..3), 0..3);
    (lines, edits).prop_map(|(text, edits)| {
        let mut chars: Vec<char> = text.chars().collect();
        for (at, c, how) in edits {
            if chars.is_empty() {
                chars.push(c);
                continue;
            }
            let i = at.index(chars.len());
            match how {
                0 => chars[i] = c,
                1 => chars.insert(i, c),
                _ => {
                    chars.remove(i);
                }
            }
        }
        chars.into_iter().collect()
    })
}

/// A file that parses more often than not: tables of the three kinds with
/// keys of the table and numbers in and out of range, so that most of its
/// refusals come from composing a group or from a live breaker (a policy
/// switch, a bulkhead or timeout on a running breaker).
fn well_formed() -> impl Strategy<Value = String> {
    let table: Vec<String> = keys().map(str::to_owned).collect();
    let number = prop_oneof![
        3 => (1u64..100_000).prop_map(|n| n.to_string()),
        1 => Just("0".to_owned()),
        2 => (0.0f64..1.5).prop_map(|f| format!("{f:.2}")),
    ];
    let pair = (proptest::sample::select(table), number).prop_map(|(k, v)| format!("{k} = {v}"));
    let header = prop_oneof![
        Just("[defaults]".to_owned()),
        Just("[groups.orders]".to_owned()),
        Just("[groups.stock]".to_owned()),
        Just("[groups.search]".to_owned()),
        Just("[templates.flaky]\nwindow_ms = 60_000".to_owned()),
    ];
    let section = (header, proptest::collection::vec(pair, 1..4))
        .prop_map(|(h, pairs)| format!("{h}\n{}", pairs.join("\n")));
    proptest::collection::vec(section, 1..4).prop_map(|s| {
        // A key set twice in one table is a TOML error: keep the first.
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        let mut table = String::new();
        for line in s.join("\n").lines() {
            if line.starts_with('[') {
                table = line.to_owned();
                if !seen.insert(table.clone()) {
                    continue;
                }
            } else if !seen.insert(format!("{table}/{}", line.split(' ').next().unwrap())) {
                continue;
            }
            out.push(line.to_owned());
        }
        out.join("\n")
    })
}

/// A `BREAKER_` variable, well-formed or not, and its value.
fn variable() -> impl Strategy<Value = (String, String)> {
    let upper = |s: String| s.to_ascii_uppercase();
    let name = prop_oneof![
        key().prop_map(move |k| format!("BREAKER_DEFAULTS__{}", upper(k))),
        (name(), key()).prop_map(|(g, k)| format!(
            "BREAKER_GROUPS__{}__{}",
            g.to_ascii_uppercase(),
            k.to_ascii_uppercase()
        )),
        (name(), key())
            .prop_map(|(t, k)| format!("BREAKER_TEMPLATES__{}__{k}", t.to_ascii_uppercase())),
        Just("BREAKER_GROUPS__ORDERS".to_owned()),
        Just("BREAKER___".to_owned()),
        Just("BREAKER_LOG".to_owned()),
        "BREAKER_[A-Z_]{0,20}",
    ];
    let value = prop_oneof![value(), any::<String>()];
    (name, value)
}

fn variables() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec(variable(), 0..4)
}

/// A live registry with a first configuration applied and both groups used.
fn live() -> Registry {
    let registry = Registry::new();
    Settings::from_toml_str(
        "[defaults]\nopen_ms = 12_000\n[groups.orders]\nthreshold = 4\n",
        "first.toml",
    )
    .unwrap()
    .apply(&registry)
    .unwrap();
    orders(&registry).unwrap();
    stock(&registry).unwrap();
    registry
}

/// What a refusal must leave as it was.
fn observed(registry: &Registry) -> (Vec<(String, Config)>, Vec<String>) {
    let configs = registry
        .breakers()
        .iter()
        .map(|b| (b.group().to_owned(), *b.config()))
        .collect();
    let overrides = registry.overrides().iter().map(|o| o.to_string()).collect();
    (configs, overrides)
}

/// Whether `message` names the file or one of `vars`.
fn names_its_source(message: &str, vars: &[(String, String)]) -> bool {
    message.contains(PATH) || vars.iter().any(|(name, _)| message.contains(name.as_str()))
}

/// Reads `text` and layers `vars` over it; on success applies the result to a
/// live registry. Every refusal must name its source and leave the registry
/// as it was, including for a group made after it.
fn check(text: &str, vars: &[(String, String)]) -> Result<(), TestCaseError> {
    let settings = match Settings::from_toml_str(text, PATH) {
        Ok(settings) => settings,
        Err(e) => {
            let message = e.to_string();
            prop_assert!(
                message.contains(PATH),
                "a file refusal without the file: {message}"
            );
            return Ok(());
        }
    };
    let settings = match settings.with_env(vars.to_vec()) {
        Ok(settings) => settings,
        Err(e) => {
            let message = e.to_string();
            prop_assert!(
                vars.iter().any(|(name, _)| message.contains(name.as_str())),
                "a variable refusal without its variable: {message}"
            );
            return Ok(());
        }
    };
    let registry = live();
    let before = observed(&registry);
    if let Err(e) = settings.apply(&registry) {
        let message = e.to_string();
        // A refused live change names the group and what it would change, not
        // the file or variable asking for it: its source is not checked here.
        if e.kind() != ErrorKind::LivePolicyChange {
            prop_assert!(
                names_its_source(&message, vars),
                "a refusal without its source: {message}"
            );
        }
        prop_assert_eq!(
            observed(&registry),
            before,
            "a refusal applied part of itself: {}",
            message
        );
        let later = registry.breaker_or_default("made-later");
        prop_assert_eq!(
            later.config().open().as_millis(),
            12_000,
            "after: {}",
            message
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(Cases { cases: CASES, failure_persistence: None, ..Cases::default() })]

    #[test]
    fn random_files_never_panic_and_a_refusal_names_the_file_and_applies_nothing(
        text in file(),
    ) {
        check(&text, &[])?;
    }

    #[test]
    fn random_variables_over_a_good_file_never_panic_and_a_refusal_names_its_variable(
        vars in variables(),
    ) {
        check("[defaults]\nopen_ms = 5_000\n[templates.flaky]\nwindow_ms = 60_000\n\
               [groups.search]\ntemplate = \"flaky\"\n", &vars)?;
    }

    #[test]
    fn random_files_and_variables_together_hold_the_same(
        text in file(),
        vars in variables(),
    ) {
        check(&text, &vars)?;
    }

    #[test]
    fn well_formed_files_refused_whole_or_applied_and_variables_over_them(
        text in well_formed(),
        vars in variables(),
    ) {
        check(&text, &[])?;
        check(&text, &vars)?;
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        check(&text, &[])?;
    }
}
