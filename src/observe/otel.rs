//! The OpenTelemetry exporter: observable instruments that read a breaker
//! [`Registry`] each time the SDK collects (feature `otel`).
//!
//! ```
//! use breakerbox::observe::otel::opentelemetry::metrics::MeterProvider as _;
//! use breakerbox::observe::otel::BreakerInstruments;
//! # use opentelemetry_sdk::metrics::SdkMeterProvider;
//!
//! # let provider = SdkMeterProvider::builder().build();
//! // `provider`: the application's `SdkMeterProvider`, with its exporter (OTLP, ...).
//! let meter = provider.meter("breakerbox");
//! BreakerInstruments::new(breakerbox::registry()).register(&meter);
//! ```
//!
//! Every series of the Prometheus collector is an instrument here, with the
//! same values for the same registry; the names, the attributes and the rule
//! between the two are in [the table](crate::observe#opentelemetry). The
//! instruments are asynchronous (observable): nothing is recorded on the call
//! path, and a registry no reader collects costs what it cost before. The
//! call-duration histograms are written as their buckets, sum and count, since
//! the OpenTelemetry API takes a histogram's samples one by one, never counts
//! already bucketed.

use std::borrow::Borrow;
use std::sync::Arc;
use std::time::Duration;

pub use opentelemetry;
use opentelemetry::metrics::{AsyncInstrument, Meter};
use opentelemetry::{Key, KeyValue};

use super::{
    histograms, readings, Family, Grouped, HasDurations, Histograms, Labels, Type, Value,
    CALLS_SECONDS, FAMILIES, KEYED_CALLS_SECONDS, KEYED_FAMILIES,
};
use crate::metrics::Metrics;
use crate::Registry;

/// The attribute naming the group, as Polly's `pipeline.name` and seatbelt's
/// `resilience.pipeline.name` name the pipeline a strategy belongs to: a
/// group is the bulkhead, retries, breaker and timeout of one dependency.
/// Prometheus's label `name`.
pub const PIPELINE_NAME: &str = "resilience.pipeline.name";
/// The attribute of a breaker's state, spelled as seatbelt spells it
/// (`closed`, `open`, `half_open`, and `forced_open`, `forced_closed`): the
/// label `state`, and `to` of a transition.
pub const STATE: &str = "resilience.circuit_breaker.state";
/// The state a transition left: the label `from`.
pub const PREVIOUS_STATE: &str = "resilience.circuit_breaker.previous_state";
/// How a probe ended, as seatbelt's probe events carry it: the label `kind`
/// of the probe counters.
pub const PROBE_RESULT: &str = "resilience.circuit_breaker.probe.result";
/// How a call ended or was refused: the label `kind` of the call counters,
/// window gauges and duration histograms.
pub const CALL_RESULT: &str = "resilience.circuit_breaker.call.result";
/// A key of a keyed group, as seatbelt names a breaker's partition: the label
/// `key` of the worst-key series.
pub const PARTITION: &str = "resilience.circuit_breaker.partition";
/// The upper bound of a duration bucket, in seconds (`+Inf` last), as
/// Prometheus's `le`.
pub const BUCKET_BOUND: &str = "le";

/// The instruments of every breaker in a [`Registry`], registered on a
/// [`Meter`] with [`register`](Self::register) and read at every collection.
///
/// `R` is how it holds the registry: `&'static Registry` (as
/// [`registry()`](crate::registry()) gives), an `Arc<Registry>`, or anything
/// else that borrows as one. A group created after registration shows at the
/// next collection.
#[derive(Clone, Debug)]
pub struct BreakerInstruments<R = &'static Registry> {
    breakers: R,
    worst_keys: usize,
}

/// The most keys [`BreakerInstruments::worst_keys`] exports per keyed group.
pub const MAX_WORST_KEYS: usize = 100;

impl<R> BreakerInstruments<R>
where
    R: Borrow<Registry> + Clone + Send + Sync + 'static,
{
    /// The instruments of `breakers`, to [`register`](Self::register).
    pub fn new(breakers: R) -> Self {
        BreakerInstruments {
            breakers,
            worst_keys: 0,
        }
    }

    /// Also exports `breaker.keyed.worst_key_*`: each keyed group's `k` worst
    /// keys (keys that are not closed, most opened first), with the key in
    /// [`PARTITION`], as the Prometheus collector's
    /// `worst_keys` does. `k` is at most [`MAX_WORST_KEYS`]; 0 (the default)
    /// exports none. The series a keyed group adds are bounded by `3 * k`.
    pub fn worst_keys(mut self, k: usize) -> Self {
        self.worst_keys = k.min(MAX_WORST_KEYS);
        self
    }

    /// Creates the instruments on `meter`. Their callbacks live as long as
    /// the meter's provider; register once per provider. Each instrument
    /// reads the registry when the SDK collects it (each group's counters
    /// once per instrument), never on the call path.
    pub fn register(self, meter: &Meter) {
        let unkeyed = |r: &Registry| readings(r);
        for family in FAMILIES {
            register_family(meter, family, &self.breakers, unkeyed);
        }
        register_histogram(meter, &CALLS_SECONDS, &self.breakers, unkeyed);
        let keyed = |r: &Registry| r.keyed_metrics();
        for family in KEYED_FAMILIES {
            register_family(meter, family, &self.breakers, keyed);
        }
        register_histogram(meter, &KEYED_CALLS_SECONDS, &self.breakers, keyed);
        if self.worst_keys > 0 {
            register_worst_keys(meter, &self.breakers, self.worst_keys);
        }
    }
}

/// The instrument name of a Prometheus family: dots for the namespace
/// (`breaker.`, `breaker.keyed.`), no `_total` (the instrument is a
/// counter), no `_seconds` (the unit is `s`). Prometheus's OTLP receiver
/// turns each back into the Prometheus name.
pub(crate) fn instrument_name(family: &str, ty: Type, seconds: bool) -> String {
    let mut stem = family;
    if ty == Type::Counter {
        stem = stem.strip_suffix("_total").unwrap_or(stem);
    }
    if seconds {
        stem = stem.strip_suffix("_seconds").unwrap_or(stem);
    }
    match stem.strip_prefix("breaker_keyed_") {
        Some(rest) => format!("breaker.keyed.{rest}"),
        None => format!("breaker.{}", stem.strip_prefix("breaker_").unwrap_or(stem)),
    }
}

/// The attribute key of a Prometheus label of `family`.
fn attribute(family: &str, label: &'static str) -> Key {
    Key::from_static_str(match label {
        "state" | "to" => STATE,
        "from" => PREVIOUS_STATE,
        "kind" if family.contains("probes") => PROBE_RESULT,
        "kind" => CALL_RESULT,
        "key" => PARTITION,
        "name" => PIPELINE_NAME,
        other => other,
    })
}

/// The attributes of one series of `family`: the group, then its labels.
fn attributes(family: &str, group: &'static str, labels: Labels) -> Vec<KeyValue> {
    std::iter::once(KeyValue::new(PIPELINE_NAME, group))
        .chain(
            labels
                .iter()
                .map(|&(label, value)| KeyValue::new(attribute(family, label), value)),
        )
        .collect()
}

/// Registers one family: a `u64` counter or an `f64` gauge whose callback
/// reads every group `read` returns.
fn register_family<M, R>(
    meter: &Meter,
    family: &'static Family<M>,
    breakers: &R,
    read: fn(&Registry) -> Vec<M>,
) where
    M: Grouped + 'static,
    R: Borrow<Registry> + Clone + Send + Sync + 'static,
{
    let name = instrument_name(family.name, family.ty, family.seconds);
    let unit = if family.seconds { "s" } else { "" };
    let breakers = breakers.clone();
    match family.ty {
        Type::Counter => {
            meter
                .u64_observable_counter(name)
                .with_description(family.help)
                .with_unit(unit)
                .with_callback(move |observer: &dyn AsyncInstrument<u64>| {
                    for m in read(breakers.borrow()) {
                        (family.samples)(&m, &mut |labels, value| {
                            let count = match value {
                                Value::Int(count) => count,
                                Value::Float(count) => count as u64,
                            };
                            observer.observe(count, &attributes(family.name, m.group(), labels));
                        });
                    }
                })
                .build();
        }
        Type::Gauge => {
            meter
                .f64_observable_gauge(name)
                .with_description(family.help)
                .with_unit(unit)
                .with_callback(move |observer: &dyn AsyncInstrument<f64>| {
                    for m in read(breakers.borrow()) {
                        (family.samples)(&m, &mut |labels, value| {
                            let level = match value {
                                Value::Int(level) => level as f64,
                                Value::Float(level) => level,
                            };
                            observer.observe(level, &attributes(family.name, m.group(), labels));
                        });
                    }
                })
                .build();
        }
    }
}

/// The instrument names of a call-duration histogram's buckets, sum and
/// count: `breaker.call.duration.bucket` and its siblings for
/// `breaker_calls_seconds`, `breaker.keyed.call.duration.*` for the keyed one.
pub(crate) fn histogram_names(family: &Histograms) -> [String; 3] {
    let stem = match family.name.strip_prefix("breaker_keyed_") {
        Some(_) => "breaker.keyed.call.duration",
        None => "breaker.call.duration",
    };
    ["bucket", "sum", "count"].map(|part| format!("{stem}.{part}"))
}

/// Registers a call-duration histogram as three counters: the calls at or
/// below each bound (cumulative, by [`BUCKET_BOUND`]), their durations added
/// up in seconds, and how many there are.
fn register_histogram<M, R>(
    meter: &Meter,
    family: &'static Histograms,
    breakers: &R,
    read: fn(&Registry) -> Vec<M>,
) where
    M: Grouped + HasDurations + 'static,
    R: Borrow<Registry> + Clone + Send + Sync + 'static,
{
    let [bucket, sum, count] = histogram_names(family);
    let from = breakers.clone();
    meter
        .u64_observable_counter(bucket)
        .with_description(family.help)
        .with_callback(move |observer: &dyn AsyncInstrument<u64>| {
            for (group, durations) in histograms(&read(from.borrow())) {
                for (kind, counts) in durations.by_kind() {
                    for (le, n) in durations.bucket_labels().zip(counts.cumulative()) {
                        let labels = [("kind", kind), (BUCKET_BOUND, le)];
                        observer.observe(n, &attributes(family.name, group, &labels));
                    }
                }
            }
        })
        .build();
    let from = breakers.clone();
    meter
        .f64_observable_counter(sum)
        .with_description(family.help)
        .with_unit("s")
        .with_callback(move |observer: &dyn AsyncInstrument<f64>| {
            for (group, durations) in histograms(&read(from.borrow())) {
                for (kind, counts) in durations.by_kind() {
                    let labels = [("kind", kind)];
                    let seconds = counts.sum.as_secs_f64();
                    observer.observe(seconds, &attributes(family.name, group, &labels));
                }
            }
        })
        .build();
    let from = breakers.clone();
    meter
        .u64_observable_counter(count)
        .with_description(family.help)
        .with_callback(move |observer: &dyn AsyncInstrument<u64>| {
            for (group, durations) in histograms(&read(from.borrow())) {
                for (kind, counts) in durations.by_kind() {
                    let labels = [("kind", kind)];
                    observer.observe(counts.count, &attributes(family.name, group, &labels));
                }
            }
        })
        .build();
}

/// A keyed group and its worst keys, each with its metrics.
type WorstKeys = (&'static str, Vec<(Arc<str>, Metrics)>);

/// The worst keys of every keyed group of `registry`, at most `k` each.
fn worst_keys(registry: &Registry, k: usize) -> Vec<WorstKeys> {
    registry
        .keyed_metrics()
        .iter()
        .map(|g| {
            let keys = registry.keyed_worst_keys(g.group, k);
            (g.group, keys.unwrap_or_default())
        })
        .collect()
}

/// A worst key's attributes: its group, its key, and `more`.
fn key_attributes(
    group: &'static str,
    key: &Arc<str>,
    more: Option<&'static str>,
) -> Vec<KeyValue> {
    let mut attributes = vec![
        KeyValue::new(PIPELINE_NAME, group),
        KeyValue::new(PARTITION, key.to_string()),
    ];
    attributes.extend(more.map(|state| KeyValue::new(STATE, state)));
    attributes
}

/// Registers `breaker.keyed.worst_key_state`, `_times_opened` and
/// `_retry_after` (the Prometheus collector's `breaker_keyed_worst_key_*`).
fn register_worst_keys<R>(meter: &Meter, breakers: &R, k: usize)
where
    R: Borrow<Registry> + Clone + Send + Sync + 'static,
{
    type Read = fn(&Metrics) -> f64;
    let families: [(&str, &str, &str, Read); 3] = [
        (
            "breaker.keyed.worst_key_state",
            "1 for the state of one of a keyed group's worst keys (open, half_open or forced_open).",
            "",
            |_| 1.0,
        ),
        (
            "breaker.keyed.worst_key_times_opened",
            "Times one of a keyed group's worst keys opened, while it is among them.",
            "",
            |m| m.times_opened as f64,
        ),
        (
            "breaker.keyed.worst_key_retry_after",
            "Time until one of a keyed group's worst keys lets a probe go; 0 if no end is known.",
            "s",
            |m| m.retry_after.unwrap_or(Duration::ZERO).as_secs_f64(),
        ),
    ];
    for (i, (name, help, unit, value)) in families.into_iter().enumerate() {
        let breakers = breakers.clone();
        meter
            .f64_observable_gauge(name)
            .with_description(help)
            .with_unit(unit)
            .with_callback(move |observer: &dyn AsyncInstrument<f64>| {
                for (group, keys) in worst_keys(breakers.borrow(), k) {
                    for (key, m) in &keys {
                        let state = (i == 0).then(|| m.state.as_str());
                        observer.observe(value(m), &key_attributes(group, key, state));
                    }
                }
            })
            .build();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instrument_names_drop_the_suffixes_their_kind_and_unit_say() {
        let name = |family: &str, ty, seconds| instrument_name(family, ty, seconds);
        assert_eq!(
            name("breaker_calls_total", Type::Counter, false),
            "breaker.calls"
        );
        assert_eq!(name("breaker_state", Type::Gauge, false), "breaker.state");
        assert_eq!(
            name("breaker_retry_after_seconds", Type::Gauge, true),
            "breaker.retry_after"
        );
        assert_eq!(
            name("breaker_keyed_opened_total", Type::Counter, false),
            "breaker.keyed.opened"
        );
    }

    #[test]
    fn every_family_has_an_instrument_name_of_its_own() {
        let mut names: Vec<String> = FAMILIES
            .iter()
            .map(|f| instrument_name(f.name, f.ty, f.seconds))
            .chain(
                KEYED_FAMILIES
                    .iter()
                    .map(|f| instrument_name(f.name, f.ty, f.seconds)),
            )
            .chain(histogram_names(&CALLS_SECONDS))
            .chain(histogram_names(&KEYED_CALLS_SECONDS))
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all, "{names:?}");
    }
}
