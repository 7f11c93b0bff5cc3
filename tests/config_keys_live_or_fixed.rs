//! A live breaker takes a new value of each configuration key as the table of
//! keys classes it: a live key changes, sets and clears; a bound key changes
//! while set but is never set or cleared live; a fixed key never changes.

use breaker_rules::{Class, KeyInfo, Ty, KEYS};
use breakerbox::config_file::{Patch, Source, Value};
use breakerbox::{Breaker, Config};

/// Configurations a key is judged against: alone, and with each window (and
/// slow calls) for the keys that tune one.
const BASES: [&[(&str, Value)]; 5] = [
    &[],
    &[("throttle", Value::F64(2.0))],
    &[("window_calls", Value::U32(100))],
    &[
        ("window_calls", Value::U32(100)),
        ("slow_call_ms", Value::U64(1_000)),
    ],
    &[("window_ms", Value::U64(10_000))],
];

fn config(base: &[(&str, Value)], key: Option<(&str, Value)>) -> Option<Config> {
    let mut patch = Patch::new();
    for (name, value) in base.iter().copied().chain(key) {
        patch.set(name, value, Source::Attribute).ok()?;
    }
    patch.apply(Config::builder()).build().ok()
}

/// A base without `key`, and two values of `key` it takes.
fn cases(key: &KeyInfo) -> (Config, Config, Config) {
    let candidates: &[Value] = match key.ty {
        Ty::U32 => &[Value::U32(7), Value::U32(70)],
        Ty::U64 => &[Value::U64(7), Value::U64(400_000), Value::U64(500_000)],
        Ty::F64 => &[
            Value::F64(0.25),
            Value::F64(0.75),
            Value::F64(1.5),
            Value::F64(3.0),
        ],
        Ty::Bool => &[Value::Bool(true), Value::Bool(false)],
        Ty::Choice(words) => &[Value::Choice(words[1]), Value::Choice(words[0])],
    };
    for base in BASES {
        if base.iter().any(|(name, _)| *name == key.name) {
            continue;
        }
        let Some(unset) = config(base, None) else {
            continue;
        };
        let taken: Vec<Config> = candidates
            .iter()
            .filter_map(|value| config(base, Some((key.name, *value))))
            .collect();
        if let [a, b, ..] = taken[..] {
            return (unset, a, b);
        }
    }
    panic!("no base takes two values of `{}`", key.name);
}

/// Whether a breaker running `from` takes `to` live.
fn takes(from: Config, to: Config) -> bool {
    Breaker::new("live", from).reconfigure(to).is_ok()
}

#[test]
fn a_live_breaker_takes_a_new_value_of_each_key_as_its_table_class_says() {
    for key in KEYS {
        let (unset, a, b) = cases(&key);
        let name = key.name;
        assert_eq!(
            takes(a, b),
            key.class != Class::Fixed,
            "`{name}` ({:?}) changed live",
            key.class
        );
        assert_eq!(
            takes(unset, a),
            key.class == Class::Live,
            "`{name}` ({:?}) set live",
            key.class
        );
        assert_eq!(
            takes(a, unset),
            key.class == Class::Live,
            "`{name}` ({:?}) cleared live",
            key.class
        );
    }
}
