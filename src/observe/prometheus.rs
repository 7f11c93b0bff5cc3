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
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use prometheus_client;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use super::{
    histograms, readings, Family, Grouped, Histograms, Labels, Type, Value, CALLS_SECONDS,
    FAMILIES, KEYED_CALLS_SECONDS, KEYED_FAMILIES,
};
use crate::events::{Event, Subscription};
use crate::metrics::CallDurations;
use crate::metrics::Metrics;
use crate::Registry;

/// A [`Collector`] of every breaker in a [`Registry`], read at scrape time.
///
/// It holds the registry, not a list of its breakers, so a group created after
/// the collector was registered shows at the next scrape. `R` is how it holds it:
/// `&'static Registry` (as [`registry()`](crate::registry()) gives), an
/// `Arc<Registry>`, or anything else that borrows as one.
///
/// Two series families are opt-in ([the table](crate::observe#opt-in-series)):
/// [`flapping`](Self::flapping), the transitions of each group in a recent
/// window, and [`worst_keys`](Self::worst_keys), a keyed group's worst keys
/// as labelled series. The dashboard and alerts shipped in `dashboards/` use
/// both:
///
/// ```
/// use breakerbox::observe::prometheus::BreakerCollector;
/// use std::time::Duration;
///
/// let collector = BreakerCollector::new(breakerbox::registry())
///     .flapping(Duration::from_secs(300))
///     .worst_keys(10);
/// # let _ = collector;
/// ```
#[derive(Clone)]
pub struct BreakerCollector<R = &'static Registry> {
    breakers: R,
    flapping: Option<Arc<Flapping>>,
    worst_keys: usize,
}

impl<R: fmt::Debug> fmt::Debug for BreakerCollector<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerCollector")
            .field("breakers", &self.breakers)
            .field("flapping", &self.flapping.as_ref().map(|f| f.window))
            .field("worst_keys", &self.worst_keys)
            .finish()
    }
}

/// The most keys [`BreakerCollector::worst_keys`] exports per keyed group.
pub const MAX_WORST_KEYS: usize = 100;

/// The most transitions of one group [`BreakerCollector::flapping`] keeps: the
/// gauge reads at most this many.
pub const MAX_FLAPPING: usize = 1_000;

impl<R> BreakerCollector<R>
where
    R: Borrow<Registry>,
{
    /// A collector of `breakers`, to pass to
    /// [`prometheus_client::registry::Registry::register_collector`].
    pub fn new(breakers: R) -> Self {
        BreakerCollector {
            breakers,
            flapping: None,
            worst_keys: 0,
        }
    }

    /// Exports `breaker_keyed_worst_key_*`: for each keyed group, its `k`
    /// worst keys ([`Registry::keyed_worst_keys`]: keys that are not closed,
    /// most opened first) as series labelled `key`, beside the group's
    /// aggregate. At most `k` keys per group, and `k` at most
    /// [`MAX_WORST_KEYS`] (a larger `k` is that many): the series a keyed
    /// group adds are bounded by `3 * k` however many keys it holds. 0 (the
    /// default) exports none. Each scrape reads the metrics of the group's keys
    /// that are not closed once more, and makes the text of the `k` listed.
    pub fn worst_keys(mut self, k: usize) -> Self {
        self.worst_keys = k.min(MAX_WORST_KEYS);
        self
    }
}

impl<R> BreakerCollector<R>
where
    R: Borrow<Registry> + Clone + Send + Sync + 'static,
{
    /// Exports `breaker_flapping_transitions`: for each (unkeyed) group, the
    /// transitions it made in the last `window`, on the registry's clock; a
    /// circuit that opens and closes over and over shows as a high count
    /// where `breaker_state` may look calm between scrapes. 5 minutes is a
    /// good window for scrapes every 15 to 60 seconds.
    ///
    /// The collector subscribes to the registry (without keys: the keyed
    /// groups' keys are not named for it, and their transitions are not
    /// counted here) for as long as it or a clone lives, and keeps up to
    /// [`MAX_FLAPPING`] transition times per group. Transitions before this
    /// call are not counted. Calls cost nothing more; each transition
    /// takes one short lock.
    pub fn flapping(mut self, window: Duration) -> Self {
        let flapping = Arc::new(Flapping {
            window,
            times: Mutex::new(HashMap::new()),
            subscription: OnceLock::new(),
        });
        let (registry, times) = (self.breakers.clone(), Arc::downgrade(&flapping));
        let subscription = self.breakers.borrow().subscribe_unkeyed(move |event| {
            if let (Event::Transition(t), Some(times)) = (event, times.upgrade()) {
                times.told(t.group, registry.borrow().clock_nanos());
            }
        });
        let _ = flapping.subscription.set(subscription);
        self.flapping = Some(flapping);
        self
    }
}

/// When each group's recent transitions came, for the flapping gauge.
struct Flapping {
    window: Duration,
    times: Mutex<HashMap<&'static str, VecDeque<u64>>>,
    /// Ends with the last clone of the collector.
    subscription: OnceLock<Subscription>,
}

impl Flapping {
    fn told(&self, group: &'static str, now: u64) {
        let mut times = self.times.lock().unwrap_or_else(|e| e.into_inner());
        let kept = times.entry(group).or_default();
        if kept.len() == MAX_FLAPPING {
            kept.pop_front();
        }
        kept.push_back(now);
    }

    /// Transitions of `group` in the window that ends at `now`; older ones
    /// are forgotten.
    fn recent(&self, group: &'static str, now: u64) -> u64 {
        let since = now.saturating_sub(u64::try_from(self.window.as_nanos()).unwrap_or(u64::MAX));
        let mut times = self.times.lock().unwrap_or_else(|e| e.into_inner());
        let Some(kept) = times.get_mut(group) else {
            return 0;
        };
        while kept.front().is_some_and(|&t| t < since) {
            kept.pop_front();
        }
        kept.len() as u64
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
        encode_histograms(&mut encoder, &CALLS_SECONDS, histograms(&readings))?;
        if let Some(flapping) = &self.flapping {
            let now = registry.clock_nanos();
            let mut metric = encoder.encode_descriptor(
                "breaker_flapping_transitions",
                "Transitions of the circuit breaker in the last flapping window.",
                None,
                MetricType::Gauge,
            )?;
            for m in &readings {
                let recent = flapping.recent(m.group(), now);
                encode_sample(&mut metric, Type::Gauge, m.group(), &[], Value::Int(recent))?;
            }
        }
        // Keyed groups: one reading each (their keys summed), in families of
        // their own, and none at all in a registry without keyed groups.
        let keyed = registry.keyed_metrics();
        for family in KEYED_FAMILIES {
            encode_family(&mut encoder, family, &keyed)?;
        }
        encode_histograms(&mut encoder, &KEYED_CALLS_SECONDS, histograms(&keyed))?;
        if self.worst_keys > 0 && !keyed.is_empty() {
            let worst: Vec<_> = keyed
                .iter()
                .map(|k| {
                    let keys = registry.keyed_worst_keys(k.group, self.worst_keys);
                    (k.group, keys.unwrap_or_default())
                })
                .collect();
            encode_worst_keys(&mut encoder, &worst)?;
        }
        Ok(())
    }
}

/// The worst keys of each keyed group, by group.
type Worst = [(&'static str, Vec<(Arc<str>, Metrics)>)];

/// A per-key family besides the state: its name, help, unit and value.
type WorstFamily = (
    &'static str,
    &'static str,
    Option<&'static Unit>,
    fn(&Metrics) -> Value,
);

/// The `breaker_keyed_worst_key_*` families: each written even when no group
/// has a key to list, so that the families are known to Prometheus (and a
/// dashboard's queries) from the first scrape.
fn encode_worst_keys(encoder: &mut DescriptorEncoder, worst: &Worst) -> fmt::Result {
    let families: [WorstFamily; 2] = [
        (
            "breaker_keyed_worst_key_times_opened",
            "Times one of a keyed group's worst keys opened, while it is among them.",
            None,
            |m| Value::Int(m.times_opened),
        ),
        (
            "breaker_keyed_worst_key_retry_after",
            "Time until one of a keyed group's worst keys lets a probe go; 0 if no end is known.",
            Some(&Unit::Seconds),
            |m| Value::Float(m.retry_after.unwrap_or(Duration::ZERO).as_secs_f64()),
        ),
    ];
    let mut metric = encoder.encode_descriptor(
        "breaker_keyed_worst_key_state",
        "1 for the state of one of a keyed group's worst keys (open, half_open or forced_open).",
        None,
        MetricType::Gauge,
    )?;
    for (group, keys) in worst {
        for (key, m) in keys {
            let state = m.state.as_str();
            let labels = [("name", *group), ("key", key), ("state", state)];
            metric.encode_family(&labels)?.encode_gauge(&1u64)?;
        }
    }
    for (name, help, unit, value) in families {
        let mut metric = encoder.encode_descriptor(name, help, unit, MetricType::Gauge)?;
        for (group, keys) in worst {
            for (key, m) in keys {
                let labels = [("name", *group), ("key", &**key)];
                let mut series = metric.encode_family(&labels)?;
                match value(m) {
                    Value::Int(level) => series.encode_gauge(&level)?,
                    Value::Float(level) => series.encode_gauge(&level)?,
                }
            }
        }
    }
    Ok(())
}

/// Writes a call-duration histogram family: for each group that keeps one, a
/// histogram per `kind`; nothing when no group does.
fn encode_histograms<'a>(
    encoder: &mut DescriptorEncoder,
    family: &Histograms,
    groups: impl Iterator<Item = (&'static str, &'a CallDurations)>,
) -> fmt::Result {
    let mut groups = groups.peekable();
    if groups.peek().is_none() {
        return Ok(());
    }
    // prometheus-client appends the unit.
    let stem = family.name.strip_suffix("_seconds").unwrap_or(family.name);
    let mut metric = encoder.encode_descriptor(
        stem,
        family.help,
        Some(&Unit::Seconds),
        MetricType::Histogram,
    )?;
    for (group, durations) in groups {
        for (kind, counts) in durations.by_kind() {
            // Per bucket, not cumulative: the encoder adds them up.
            let buckets: Vec<(f64, u64)> = durations
                .bounds()
                .iter()
                .map(Duration::as_secs_f64)
                .chain([f64::INFINITY])
                .zip(counts.buckets.iter().copied())
                .collect();
            let labels = [("name", group), ("kind", kind)];
            metric
                .encode_family(&labels)?
                .encode_histogram::<NoLabelSet>(
                    counts.sum.as_secs_f64(),
                    counts.count,
                    &buckets,
                    None,
                )?;
        }
    }
    Ok(())
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
