//! The agent's health as Prometheus series (feature `prometheus`): a
//! collector of a `FleetAgent`'s `AgentStats`, read at scrape time.

use std::fmt;
use std::sync::Arc;

use breakerbox::clock::{Clock, MonotonicClock};
use breakerbox::observe::prometheus::prometheus_client::collector::Collector;
use breakerbox::observe::prometheus::prometheus_client::encoding::{
    DescriptorEncoder, EncodeMetric,
};
use breakerbox::observe::prometheus::prometheus_client::metrics::counter::ConstCounter;
use breakerbox::observe::prometheus::prometheus_client::metrics::gauge::ConstGauge;
use breakerbox::observe::prometheus::prometheus_client::registry::Unit;

use crate::agent::SharedStats;
#[cfg(doc)]
use crate::{AgentStats, FleetAgent};

/// A [`Collector`] of one fleet agent's health ([`AgentStats`]), read at
/// each scrape; [`FleetAgent::collector`] makes one.
///
/// | series | type | value |
/// |---|---|---|
/// | `breaker_fleet_connected` | gauge | 1 while the last store call succeeded, else 0 |
/// | `breaker_fleet_subscribed` | gauge | 1 while a notice subscription is live, else 0 |
/// | `breaker_fleet_store_stale_seconds` | gauge | time since the last successful store call (how old the fleet view is); absent before the first one |
/// | `breaker_fleet_store_errors_total` | counter | store calls that failed or timed out |
/// | `breaker_fleet_rejoins_total` | counter | times the agent came back to a working store after failures |
///
/// The series carry no label of their own: Prometheus adds the target's
/// `job` and `instance`. The `BreakerFleetStoreStale` alert in the
/// repository's `dashboards/alerts.yml` reads `breaker_fleet_store_stale_seconds`,
/// and `BreakerFleetStoreNeverReached` reads `breaker_fleet_connected` for an
/// agent that has not reached its store once.
///
/// ```no_run
/// use breakerbox::observe::prometheus::prometheus_client::registry::Registry;
/// use breaker_fleet::{AgentConfig, FleetAgent, RedisStore};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = FleetAgent::spawn(
///     RedisStore::new("redis://127.0.0.1/")?,
///     breakerbox::registry(),
///     AgentConfig::new("web-1"),
/// );
/// let mut metrics = Registry::default();
/// metrics.register_collector(Box::new(agent.collector()));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct FleetCollector {
    stats: Arc<SharedStats>,
}

impl fmt::Debug for FleetCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetCollector").finish_non_exhaustive()
    }
}

impl crate::FleetAgent {
    /// A Prometheus collector of this agent's health; it reads the agent's
    /// counters at each scrape and keeps reading them after the agent stops
    /// (connected 0, the view growing stale).
    pub fn collector(&self) -> FleetCollector {
        FleetCollector {
            stats: Arc::clone(&self.stats),
        }
    }
}

impl Collector for FleetCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let stats = self.stats.snapshot(MonotonicClock.now_nanos());
        let flags = [
            (
                "breaker_fleet_connected",
                "1 while the fleet agent's last store call succeeded.",
                stats.connected,
            ),
            (
                "breaker_fleet_subscribed",
                "1 while the fleet agent's notice subscription is live.",
                stats.subscribed,
            ),
        ];
        for (name, help, on) in flags {
            let gauge = ConstGauge::new(i64::from(on));
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        if let Some(stale) = stats.stale_for {
            let gauge = ConstGauge::new(stale.as_secs_f64());
            let metric = encoder.encode_descriptor(
                "breaker_fleet_store_stale",
                "Time since the fleet agent's last successful store call.",
                Some(&Unit::Seconds),
                gauge.metric_type(),
            )?;
            gauge.encode(metric)?;
        }
        let counters = [
            (
                "breaker_fleet_store_errors",
                "Fleet store calls that failed or timed out.",
                stats.store_errors,
            ),
            (
                "breaker_fleet_rejoins",
                "Times the fleet agent came back to a working store after failures.",
                stats.rejoins,
            ),
        ];
        for (name, help, count) in counters {
            let counter = ConstCounter::new(count);
            counter.encode(encoder.encode_descriptor(
                name,
                help,
                None,
                counter.metric_type(),
            )?)?;
        }
        Ok(())
    }
}
