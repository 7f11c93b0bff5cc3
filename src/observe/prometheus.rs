//! The Prometheus exporter: a [`prometheus_client`] collector that reads a breaker
//! [`Registry`] at every scrape (feature `prometheus`).
//!
//! ```
//! use breakerbox::observe::prometheus::prometheus_client::{encoding::text, registry};
//! use breakerbox::observe::prometheus::BreakerCollector;
//! use breakerbox::Config;
//!
//! let mut metrics = registry::Registry::default();
//! metrics.register_collector(Box::new(BreakerCollector::new(breakerbox::registry())));
//!
//! breakerbox::registry().breaker("search", &Config::default()).call(|| Ok::<_, ()>(1)).unwrap();
//! let mut exposition = String::new();
//! text::encode(&mut exposition, &metrics)?; // in your /metrics handler
//! assert!(exposition.contains(r#"breaker_calls_total{name="search",kind="successful"} 1"#));
//! # Ok::<(), std::fmt::Error>(())
//! ```
//!
//! The series and their resilience4j counterparts are listed in
//! [`observe`](crate::observe). Group names are label values, escaped by
//! `prometheus-client` (`\\`, `"` and newlines), never dropped.

use std::borrow::Borrow;
use std::fmt;

pub use prometheus_client;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use super::{readings, Family, Grouped, Labels, Type, Value, FAMILIES, KEYED_FAMILIES};
use crate::Registry;

/// A [`Collector`] of every breaker in a [`Registry`], read at scrape time.
///
/// It holds the registry, not a list of its breakers, so a group created after
/// the collector was registered shows at the next scrape. `R` is how it holds it:
/// `&'static Registry` (as [`registry()`](crate::registry()) gives), an
/// `Arc<Registry>`, or anything else that borrows as one.
#[derive(Clone, Debug)]
pub struct BreakerCollector<R = &'static Registry> {
    breakers: R,
}

impl<R> BreakerCollector<R>
where
    R: Borrow<Registry>,
{
    /// A collector of `breakers`, to pass to
    /// [`prometheus_client::registry::Registry::register_collector`].
    pub fn new(breakers: R) -> Self {
        BreakerCollector { breakers }
    }
}

impl<R> Collector for BreakerCollector<R>
where
    R: Borrow<Registry> + fmt::Debug + Send + Sync + 'static,
{
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        // Each group is read once, here; every family below reads that reading.
        let registry = self.breakers.borrow();
        let readings = readings(registry);
        for family in FAMILIES {
            encode_family(&mut encoder, family, &readings)?;
        }
        // Keyed groups: one reading each (their keys summed), in families of
        // their own, and none at all in a registry without keyed groups.
        let keyed = registry.keyed_metrics();
        for family in KEYED_FAMILIES {
            encode_family(&mut encoder, family, &keyed)?;
        }
        Ok(())
    }
}

/// Writes `family`'s descriptor and its series for every group, or nothing when no
/// group has a sample in it (the window families without a window policy).
fn encode_family<M: Grouped>(
    encoder: &mut DescriptorEncoder,
    family: &Family<M>,
    groups: &[M],
) -> fmt::Result {
    let mut any = false;
    for m in groups {
        (family.samples)(m, &mut |_, _| any = true);
    }
    if !any {
        return Ok(());
    }
    // prometheus-client appends the unit and a counter's `_total` itself.
    let mut stem = family.name;
    if family.ty == Type::Counter {
        stem = stem.strip_suffix("_total").unwrap_or(stem);
    }
    let unit = family.seconds.then_some(&Unit::Seconds);
    if unit.is_some() {
        stem = stem.strip_suffix("_seconds").unwrap_or(stem);
    }
    let metric_type = match family.ty {
        Type::Counter => MetricType::Counter,
        Type::Gauge => MetricType::Gauge,
    };
    let mut metric = encoder.encode_descriptor(stem, family.help, unit, metric_type)?;
    for m in groups {
        let mut written = Ok(());
        (family.samples)(m, &mut |labels, value| {
            if written.is_ok() {
                written = encode_sample(&mut metric, family.ty, m.group(), labels, value);
            }
        });
        written?;
    }
    Ok(())
}

fn encode_sample(
    metric: &mut MetricEncoder,
    ty: Type,
    group: &'static str,
    labels: Labels,
    value: Value,
) -> fmt::Result {
    let labels: Vec<(&str, &str)> = std::iter::once(("name", group))
        .chain(labels.iter().copied())
        .collect();
    let mut series = metric.encode_family(&labels)?;
    match (ty, value) {
        (Type::Counter, Value::Int(count)) => {
            series.encode_counter::<NoLabelSet, _, u64>(&count, None)
        }
        (_, Value::Int(level)) => series.encode_gauge(&level),
        (_, Value::Float(level)) => series.encode_gauge(&level),
    }
}
