//! The `metrics` facade exporter: [`publish`] sets the registry's figures on
//! whatever recorder is installed (feature `metrics`).
//!
//! ```
//! use breakerbox::Config;
//!
//! // Install any `metrics` exporter first (Prometheus, StatsD, ...), then, from its
//! // scrape hook or a timer every few seconds:
//! breakerbox::registry().breaker("search", &Config::default()).call(|| Ok::<_, ()>(1)).unwrap();
//! breakerbox::observe::metrics::publish(breakerbox::registry());
//! ```
//!
//! The figures and their names are those of the Prometheus exporter, listed in
//! [`observe`](crate::observe): counters are set to their absolute value
//! ([`metrics::Counter::absolute`]), gauges to their current one. Nothing is kept
//! between two calls, so a group created since the last one is published by the
//! next.

use metrics::{Label as MetricLabel, Unit};

use super::{readings, Family, Grouped, Labels, Type, Value, FAMILIES, KEYED_FAMILIES};
use crate::Registry;

/// Describes every figure and sets it, for every breaker in `breakers` and every
/// keyed group (one reading per group, never per key), on the installed
/// `metrics` recorder. Each group is read once, into one
/// [`Metrics`](crate::metrics::Metrics), whose figures are published together.
///
/// Call it where your exporter reads (before it renders a scrape) or on a timer:
/// the values are as fresh as the last call. A rate of a window holding fewer
/// than `min_calls` outcomes is -1, as with the Prometheus exporter.
pub fn publish(breakers: &Registry) {
    describe();
    for m in &readings(breakers) {
        publish_group(FAMILIES, m);
    }
    for m in &breakers.keyed_metrics() {
        publish_group(KEYED_FAMILIES, m);
    }
}

/// Sets every figure of `families` for one group's reading `m`.
fn publish_group<M: Grouped>(families: &[Family<M>], m: &M) {
    for family in families {
        (family.samples)(m, &mut |labels, value| {
            let labels = with_name(m.group(), labels);
            match (family.ty, value) {
                (Type::Counter, Value::Int(count)) => {
                    metrics::counter!(family.name, labels).absolute(count);
                }
                (_, Value::Int(level)) => {
                    metrics::gauge!(family.name, labels).set(level as f64);
                }
                (_, Value::Float(level)) => metrics::gauge!(family.name, labels).set(level),
            }
        });
    }
}

/// Describes every figure (help text, unit) to the installed recorder. [`publish`]
/// does it on every call; calling it alone lets an exporter list the figures
/// before any breaker exists.
pub fn describe() {
    let keyed = KEYED_FAMILIES
        .iter()
        .map(|f| (f.name, f.help, f.ty, f.seconds));
    for (name, help, ty, seconds) in FAMILIES
        .iter()
        .map(|f| (f.name, f.help, f.ty, f.seconds))
        .chain(keyed)
    {
        let unit = if seconds { Unit::Seconds } else { Unit::Count };
        match ty {
            Type::Counter => metrics::describe_counter!(name, unit, help),
            Type::Gauge => metrics::describe_gauge!(name, unit, help),
        }
    }
}

fn with_name(group: &'static str, labels: Labels) -> Vec<MetricLabel> {
    std::iter::once(("name", group))
        .chain(labels.iter().copied())
        .map(|(key, value)| MetricLabel::new(key, value))
        .collect()
}
