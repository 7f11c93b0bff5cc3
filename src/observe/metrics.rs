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

use super::{
    histograms, readings, Family, Grouped, Histograms, Labels, Type, Value, CALLS_SECONDS,
    FAMILIES, KEYED_CALLS_SECONDS, KEYED_FAMILIES,
};
use crate::metrics::CallDurations;
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
    let readings = readings(breakers);
    for m in &readings {
        publish_group(FAMILIES, m);
    }
    for (group, durations) in histograms(&readings) {
        publish_histogram(&CALLS_SECONDS, group, durations);
    }
    let keyed = breakers.keyed_metrics();
    for m in &keyed {
        publish_group(KEYED_FAMILIES, m);
    }
    for (group, durations) in histograms(&keyed) {
        publish_histogram(&KEYED_CALLS_SECONDS, group, durations);
    }
}

/// Sets one group's call-duration histogram as the three families a
/// Prometheus histogram is scraped as: `_bucket` counters by `le`
/// (cumulative), a `_count` counter and a `_sum` gauge in seconds. The facade's
/// own histograms take samples one at a time and summarise them as the
/// exporter chooses, so they cannot carry counts already bucketed.
fn publish_histogram(family: &Histograms, group: &'static str, durations: &CallDurations) {
    let names = family.series;
    for (kind, counts) in durations.by_kind() {
        for (le, count) in durations.bucket_labels().zip(counts.cumulative()) {
            let labels = with_name(group, &[("kind", kind), ("le", le)]);
            metrics::counter!(names[0], labels).absolute(count);
        }
        let labels = with_name(group, &[("kind", kind)]);
        metrics::gauge!(names[1], labels.clone()).set(counts.sum.as_secs_f64());
        metrics::counter!(names[2], labels).absolute(counts.count);
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
    for family in [&CALLS_SECONDS, &KEYED_CALLS_SECONDS] {
        let [bucket, sum, count] = family.series;
        metrics::describe_counter!(bucket, Unit::Count, family.help);
        metrics::describe_gauge!(sum, Unit::Seconds, family.help);
        metrics::describe_counter!(count, Unit::Count, family.help);
    }
}

fn with_name(group: &'static str, labels: Labels) -> Vec<MetricLabel> {
    std::iter::once(("name", group))
        .chain(labels.iter().copied())
        .map(|(key, value)| MetricLabel::new(key, value))
        .collect()
}
