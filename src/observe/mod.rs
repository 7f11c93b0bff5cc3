//! Exporters of a [`Registry`](crate::Registry)'s metrics: a Prometheus collector
//! (`prometheus::BreakerCollector`, feature `prometheus`) and a publisher for the
//! `metrics` facade (`metrics::publish`, feature `metrics`) and OpenTelemetry
//! observable instruments (`otel::BreakerInstruments`, feature `otel`), all
//! describing the same figures from one table; a subscriber that turns each
//! transition into a structured `tracing` event (`tracing::subscribe`, feature
//! `tracing`); and each guarded call's verdict and outcome on its span
//! (`span`, feature `tracing`, opt-in per group).
//!
//! The exporters read the registry when asked (a scrape, a call to
//! `metrics::publish`, an OpenTelemetry collection):
//! every group's counters are read once, into one [`Metrics`]
//! value as [`Registry::snapshot`](crate::Registry::snapshot) gives, and the
//! figures of that group come from that value (and its config's `min_calls`)
//! alone. Nothing is counted twice and nothing runs on the call path: a
//! registry nobody scrapes costs what it cost before.
//!
//! # The figures
//!
//! Every series carries the group in the label `name`, as resilience4j's carry the
//! circuit breaker's name, so dashboards built for resilience4j need only the
//! prefix changed (`resilience4j_circuitbreaker_` becomes `breaker_`) where the
//! table says "same".
//!
//! | series | type | labels | value | resilience4j |
//! |---|---|---|---|---|
//! | `breaker_state` | gauge | `name`, `state` | 1 for the state the breaker is in, 0 for the other four: `closed`, `open`, `half_open`, `forced_open`, `forced_closed` | `resilience4j_circuitbreaker_state`: same; `forced_closed` is closest to its `metrics_only` (admits everything, still counts) |
//! | `breaker_calls_total` | counter | `name`, `kind` | calls by how they ended: `successful`, `failed`, `ignored`, `abandoned`, `stale`; claims refused: `not_permitted`, which includes the bulkhead's refusals (`max_concurrent` full; `breaker_bulkhead_rejected_total` counts those alone) | `resilience4j_circuitbreaker_calls_seconds_count` (`successful`, `failed`, `ignored`) and `resilience4j_circuitbreaker_not_permitted_calls_total`, which counts the circuit breaker's refusals only (resilience4j's bulkhead is a module of its own); `abandoned` and `stale` have no counterpart |
//! | `breaker_buffered_calls` | gauge | `name`, `kind` | outcomes in a window policy's window: `successful`, `failed` | `resilience4j_circuitbreaker_buffered_calls`: same |
//! | `breaker_slow_calls` | gauge | `name` | slow calls in the window, successes and failures together | `resilience4j_circuitbreaker_slow_calls`, summed over its `kind` |
//! | `breaker_failure_rate` | gauge | `name` | failed / buffered outcomes, from 0 to 1; -1 while the window holds fewer than `min_calls` outcomes (an empty window included), when the rate does not judge | `resilience4j_circuitbreaker_failure_rate`: the same -1 below `minimumNumberOfCalls`, but a percentage (0 to 100) above it |
//! | `breaker_slow_call_rate` | gauge | `name` | slow / buffered outcomes, from 0 to 1; -1 below `min_calls`, as `breaker_failure_rate` | `resilience4j_circuitbreaker_slow_call_rate`: the same -1, a percentage above it |
//! | `breaker_retry_after_seconds` | gauge | `name` | time until a probe may go while open (or half-open with every probe slot taken); 0 while claims are admitted or no end is known (forced open) | none |
//! | `breaker_probes_total` | counter | `name`, `kind` | probes that ended `successful` or `failed`, and probe slots `reclaimed` from probes that overran `probe_timeout` | none |
//! | `breaker_probes_in_flight` | gauge | `name` | probes running now (half-open only) | none |
//! | `breaker_opened_total` | counter | `name` | times the circuit opened: trips and failed probes, not forced opens | none (resilience4j counts transitions through its events) |
//! | `breaker_timeouts_total` | counter | `name` | calls dropped at their `timeout_ms` deadline, each also a `failed` call | none (resilience4j's TimeLimiter has its own metrics) |
//! | `breaker_bulkhead_rejected_total` | counter | `name` | calls the bulkhead (`max_concurrent`) refused, each also `not_permitted` | `resilience4j_bulkhead_*` are a separate module there |
//! | `breaker_bulkhead_in_flight` | gauge | `name` | calls holding a bulkhead slot now; only groups with `max_concurrent` | `resilience4j_bulkhead_available_concurrent_calls` (its complement) |
//! | `breaker_latency_trips_total` | counter | `name` | trips made by the p99 latency rule (`latency_p99_ms`) alone | none |
//! | `breaker_latency_p99_seconds` | gauge | `name` | the p99 latency of the calls since the breaker was made (upper bound of its call-duration histogram bucket); only groups with `latency_p99_ms` and a call | none |
//! | `breaker_calls_seconds_bucket` | histogram | `name`, `kind`, `le` | calls by how they ended (`successful`, `failed`, `ignored`; a timed-out call is `failed`) that lasted at most `le` seconds from claim to verdict on the breaker's clock; only groups with `histogram_ms`, whose buckets are 1, 2.5 and 5 times each power of ten of milliseconds up to it, then `+Inf` | `resilience4j_circuitbreaker_calls_seconds_bucket` (with its histogram buckets turned on): same kinds |
//! | `breaker_calls_seconds_sum` | histogram | `name`, `kind` | the durations of those calls added up, in seconds | `resilience4j_circuitbreaker_calls_seconds_sum`: same |
//! | `breaker_calls_seconds_count` | histogram | `name`, `kind` | how many calls the histogram holds (the `+Inf` bucket) | `resilience4j_circuitbreaker_calls_seconds_count`: same (where `breaker_calls_total` counts every group) |
//! | `breaker_admitted_share` | gauge | `name` | the share of calls a claim is admitted at now, from 0 to 1: 1 closed, the ramp's share while the traffic ramp after a close (`ramp_ms`) runs, 0 open or half-open | none |
//! | `breaker_ramp_refused_total` | counter | `name` | claims the traffic ramp (`ramp_ms`) refused, each also `not_permitted` | none |
//! | `breaker_shadow` | gauge | `name` | 1 while the breaker is in shadow mode (`shadow`: refusing nothing but a forced open), 0 otherwise | none (resilience4j's `metrics_only` is a state there) |
//! | `breaker_shadow_refused_total` | counter | `name` | claims shadow mode admitted that the breaker would have refused (never `not_permitted`) | none |
//! | `breaker_throttle_reject_share` | gauge | `name` | the share of claims the adaptive throttle (`throttle`) refuses now, from 0 to `throttle_max_reject`; only groups with `throttle` | none |
//! | `breaker_throttled_total` | counter | `name` | claims the adaptive throttle refused, each also `not_permitted` (in shadow mode, `breaker_shadow_refused_total` instead) | none |
//! | `breaker_held` | gauge | `name` | 1 while a hold refuses claims (the server asked every caller to wait: `Retry-After`, `grpc-retry-pushback-ms`), 0 otherwise | none |
//! | `breaker_holds_total` | counter | `name`, `kind` | holds taken, by scope: `key` (one key's quota) or `group` (the whole group's) | none |
//! | `breaker_holds_capped_total` | counter | `name` | waits asked for longer than `max_hold_ms`, held for `max_hold_ms` | none |
//! | `breaker_holds_released_total` | counter | `name` | holds released by hand before their deadline (an operator, manual control) | none |
//! | `breaker_hold_waits_bad_total` | counter | `name` | waits a server asked for that held nothing: unreadable, negative or past | none |
//! | `breaker_retries_total` | counter | `name` | retries made (attempts after a call's first, `retry`), each also one of `breaker_calls_total` | `resilience4j_retry_calls` (by outcome, a separate module there) |
//! | `breaker_retries_budget_exhausted_total` | counter | `name` | retries the retry budget refused: each call ended with its own error | none |
//! | `breaker_transitions_total` | counter | `name`, `from`, `to` | transitions by the state left and the state entered (`from`/`to` spelled as `state`'s values); the five the state machine makes itself (`closed`->`open`, `open`->`half_open`, `half_open`->`open`, `half_open`->`closed`, `half_open`->`half_open` on a lease reclaim) are listed from the start, the ones made by hand (forcing, reset) once they happened | `resilience4j_circuitbreaker_state` transitions are events there, not a metric; closest is counting its `CircuitBreakerOnStateTransitionEvent`s |
//! | `breaker_open_duration_seconds` | gauge | `name` | the open duration of the current episode while open or half-open (grows by `backoff` after each failed probe); 0 otherwise | none (resilience4j's wait duration is fixed config) |
//! | `breaker_generation` | gauge | `name` | the breaker's generation: each transition starts a new one | none |
//! | `breaker_consecutive_failures` | gauge | `name` | failures in a row counted now (consecutive policy) | none |
//!
//! Keyed groups (`#[circuit_breaker(key = ..)]`, [`Registry::keyed`](crate::Registry::keyed))
//! are exported per group, never per key (a group may hold a million keys), in
//! families of their own, read from
//! [`Registry::keyed_metrics`](crate::Registry::keyed_metrics):
//!
//! | series | type | labels | value |
//! |---|---|---|---|
//! | `breaker_keyed_keys` | gauge | `name`, `state` | keys held now by state: `closed` (forced closed included), `open` (forced open included), `half_open` |
//! | `breaker_keyed_key_capacity` | gauge | `name` | the group's `key_capacity` |
//! | `breaker_keyed_evictions_total` | counter | `name` | idle, closed keys evicted so far |
//! | `breaker_keyed_calls_total` | counter | `name`, `kind` | as `breaker_calls_total`, summed over every key the group ever held |
//! | `breaker_keyed_probes_total` | counter | `name`, `kind` | as `breaker_probes_total`, summed likewise |
//! | `breaker_keyed_opened_total` | counter | `name` | as `breaker_opened_total`, summed likewise |
//! | `breaker_keyed_timeouts_total` | counter | `name` | as `breaker_timeouts_total`, summed likewise |
//! | `breaker_keyed_bulkhead_rejected_total` | counter | `name` | as `breaker_bulkhead_rejected_total`, summed likewise |
//! | `breaker_keyed_latency_trips_total` | counter | `name` | as `breaker_latency_trips_total`, summed likewise |
//! | `breaker_keyed_ramp_refused_total` | counter | `name` | as `breaker_ramp_refused_total`, summed likewise (each key ramps on its own) |
//! | `breaker_keyed_shadow_refused_total` | counter | `name` | as `breaker_shadow_refused_total`, summed likewise |
//! | `breaker_keyed_throttled_total` | counter | `name` | as `breaker_throttled_total`, summed likewise (each key throttles on its own) |
//! | `breaker_keyed_held` | gauge | `name` | keys whose calls a hold refuses now |
//! | `breaker_keyed_holds_total` | counter | `name`, `kind` | as `breaker_holds_total`, summed likewise (a group hold counts once per key it holds) |
//! | `breaker_keyed_holds_capped_total` | counter | `name` | as `breaker_holds_capped_total`, summed likewise |
//! | `breaker_keyed_holds_released_total` | counter | `name` | as `breaker_holds_released_total`, summed likewise |
//! | `breaker_keyed_hold_waits_bad_total` | counter | `name` | as `breaker_hold_waits_bad_total`, summed likewise |
//! | `breaker_keyed_retries_total` | counter | `name` | as `breaker_retries_total`, summed likewise |
//! | `breaker_keyed_retries_budget_exhausted_total` | counter | `name` | as `breaker_retries_budget_exhausted_total`, summed likewise (the keys share one budget) |
//! | `breaker_keyed_transitions_total` | counter | `name`, `from`, `to` | as `breaker_transitions_total`, summed likewise |
//! | `breaker_keyed_group_state` | gauge | `name`, `state` | for a group that judges as one (`systemic_share`, `max_open_keys`): 1 for the state of its own breaker, 0 for the others; not closed: every key refused for the group |
//! | `breaker_keyed_group_opened_total` | counter | `name` | times such a group opened as one |
//! | `breaker_keyed_group_rejected_total` | counter | `name` | calls refused for the whole group |
//! | `breaker_keyed_calls_seconds_bucket` | histogram | `name`, `kind`, `le` | as `breaker_calls_seconds_bucket`, one histogram for every key of the group (evicted ones included): the series do not grow with the keys |
//! | `breaker_keyed_calls_seconds_sum` | histogram | `name`, `kind` | as `breaker_calls_seconds_sum`, likewise |
//! | `breaker_keyed_calls_seconds_count` | histogram | `name`, `kind` | as `breaker_calls_seconds_count`, likewise |
//!
//! Every counter family of a breaker has its keyed twin, whose value for a
//! group of one key is the key's.
//!
//! The call-duration histograms cost a group nothing unless it sets
//! `histogram_ms`; with it, each claim reads the clock and each verdict adds
//! to two relaxed atomics (no lock), and a group adds at most 3 kinds times 28
//! series (26 buckets, the sum and the count), whatever its traffic or its
//! keys. The `metrics` publisher writes
//! them as the same three families (`_bucket` and `_count` counters, `_sum` a
//! gauge in seconds), since the facade's histograms cannot take counts that
//! are already bucketed.
//!
//! # Opt-in series
//!
//! The Prometheus collector writes these only when asked
//! (`BreakerCollector::flapping` and `BreakerCollector::worst_keys` in
//! `observe::prometheus`);
//! the `metrics` publisher does not write them. The dashboard and the alerts in
//! the repository's `dashboards/` folder read both.
//!
//! | series | type | labels | value |
//! |---|---|---|---|
//! | `breaker_flapping_transitions` | gauge | `name` | transitions of an unkeyed group in the last flapping window (the `Duration` given to `flapping`; 5 minutes in the shipped dashboard), on the registry's clock, at most 1,000 |
//! | `breaker_keyed_worst_key_state` | gauge | `name`, `key`, `state` | 1, for each of a keyed group's K worst keys (open, forced open or half-open; most opened first), `state` its state; at most K series per group, K at most 100 |
//! | `breaker_keyed_worst_key_times_opened` | gauge | `name`, `key` | times that key opened (a gauge: a key leaves the list when it closes) |
//! | `breaker_keyed_worst_key_retry_after_seconds` | gauge | `name`, `key` | time until that key lets a probe go; 0 once it may, or when no end is known (forced open) |
//!
//! The `key` label is the key's text as the registry's events tell it (a
//! `String` key as it is, any other key as its `Debug` writes it, cut at 256
//! bytes). A keyed group adds at most `3 * K` of these series, however many
//! keys it holds, and none while all its keys are closed.
//!
//! The window series (`breaker_buffered_calls`, `breaker_slow_calls` and the two
//! rates) exist only for breakers with a window policy. Counters only grow; the
//! sum of `breaker_calls_total` over the kinds other than `not_permitted` is every
//! admitted call that ended. Within one group no kind exceeds the total it is part
//! of and no rate leaves `[0, 1]` once the window holds `min_calls` outcomes, even
//! when the scrape races a storm of calls: window counts read half-way through an
//! update are clamped to what they are part of.
//!
//! Below `min_calls` a rate reads -1 in both exporters, as resilience4j's do: one
//! failure among the first calls is not a failure rate of 1 (the breaker does not
//! judge it either), so an alert ported from resilience4j (`failure_rate > 0.5`)
//! does not fire early, and one that tells "not judged yet" by the -1 keeps
//! working. -1 rather than NaN: it is resilience4j's value, a `metrics` gauge
//! cannot be withdrawn (so "absent" is not on offer there), and a NaN sample
//! breaks sums and comparisons in ways dashboards render as gaps. Exclude it with
//! `breaker_failure_rate >= 0` where it must not count.
//!
//! # OpenTelemetry
//!
//! The `otel` feature's instruments (`observe::otel`) carry every series
//! above as an observable instrument of the OpenTelemetry metrics API, read
//! when the SDK collects, with the Prometheus collector's values. A name is
//! the Prometheus one with dots for its namespace (`breaker.`,
//! `breaker.keyed.`), without `_total` (a counter says so itself) and
//! without `_seconds` (the unit `s` does), so that Prometheus's OTLP receiver,
//! which adds both back, stores `breaker.calls` as `breaker_calls_total`.
//! The call-duration histograms are three counters each, since the API takes
//! a histogram's samples one by one and the breakers keep them bucketed.
//!
//! | Prometheus series | instrument | kind | unit |
//! |---|---|---|---|
//! | `breaker_state` | `breaker.state` | observable gauge (`f64`) | |
//! | `breaker_calls_total` | `breaker.calls` | observable counter (`u64`) | |
//! | `breaker_buffered_calls` | `breaker.buffered_calls` | observable gauge (`f64`) | |
//! | `breaker_slow_calls` | `breaker.slow_calls` | observable gauge (`f64`) | |
//! | `breaker_failure_rate` | `breaker.failure_rate` | observable gauge (`f64`) | |
//! | `breaker_slow_call_rate` | `breaker.slow_call_rate` | observable gauge (`f64`) | |
//! | `breaker_retry_after_seconds` | `breaker.retry_after` | observable gauge (`f64`) | `s` |
//! | `breaker_probes_total` | `breaker.probes` | observable counter (`u64`) | |
//! | `breaker_probes_in_flight` | `breaker.probes_in_flight` | observable gauge (`f64`) | |
//! | `breaker_opened_total` | `breaker.opened` | observable counter (`u64`) | |
//! | `breaker_timeouts_total` | `breaker.timeouts` | observable counter (`u64`) | |
//! | `breaker_bulkhead_rejected_total` | `breaker.bulkhead_rejected` | observable counter (`u64`) | |
//! | `breaker_bulkhead_in_flight` | `breaker.bulkhead_in_flight` | observable gauge (`f64`) | |
//! | `breaker_latency_trips_total` | `breaker.latency_trips` | observable counter (`u64`) | |
//! | `breaker_latency_p99_seconds` | `breaker.latency_p99` | observable gauge (`f64`) | `s` |
//! | `breaker_admitted_share` | `breaker.admitted_share` | observable gauge (`f64`) | |
//! | `breaker_ramp_refused_total` | `breaker.ramp_refused` | observable counter (`u64`) | |
//! | `breaker_shadow` | `breaker.shadow` | observable gauge (`f64`) | |
//! | `breaker_shadow_refused_total` | `breaker.shadow_refused` | observable counter (`u64`) | |
//! | `breaker_throttle_reject_share` | `breaker.throttle_reject_share` | observable gauge (`f64`) | |
//! | `breaker_throttled_total` | `breaker.throttled` | observable counter (`u64`) | |
//! | `breaker_held` | `breaker.held` | observable gauge (`f64`) | |
//! | `breaker_holds_total` | `breaker.holds` | observable counter (`u64`) | |
//! | `breaker_holds_capped_total` | `breaker.holds_capped` | observable counter (`u64`) | |
//! | `breaker_holds_released_total` | `breaker.holds_released` | observable counter (`u64`) | |
//! | `breaker_hold_waits_bad_total` | `breaker.hold_waits_bad` | observable counter (`u64`) | |
//! | `breaker_retries_total` | `breaker.retries` | observable counter (`u64`) | |
//! | `breaker_retries_budget_exhausted_total` | `breaker.retries_budget_exhausted` | observable counter (`u64`) | |
//! | `breaker_transitions_total` | `breaker.transitions` | observable counter (`u64`) | |
//! | `breaker_open_duration_seconds` | `breaker.open_duration` | observable gauge (`f64`) | `s` |
//! | `breaker_generation` | `breaker.generation` | observable gauge (`f64`) | |
//! | `breaker_consecutive_failures` | `breaker.consecutive_failures` | observable gauge (`f64`) | |
//! | `breaker_calls_seconds_bucket` | `breaker.call.duration.bucket` | observable counter (`u64`), cumulative by `le` | |
//! | `breaker_calls_seconds_sum` | `breaker.call.duration.sum` | observable counter (`f64`) | `s` |
//! | `breaker_calls_seconds_count` | `breaker.call.duration.count` | observable counter (`u64`) | |
//! | `breaker_keyed_keys` | `breaker.keyed.keys` | observable gauge (`f64`) | |
//! | `breaker_keyed_key_capacity` | `breaker.keyed.key_capacity` | observable gauge (`f64`) | |
//! | `breaker_keyed_evictions_total` | `breaker.keyed.evictions` | observable counter (`u64`) | |
//! | `breaker_keyed_calls_total` | `breaker.keyed.calls` | observable counter (`u64`) | |
//! | `breaker_keyed_probes_total` | `breaker.keyed.probes` | observable counter (`u64`) | |
//! | `breaker_keyed_opened_total` | `breaker.keyed.opened` | observable counter (`u64`) | |
//! | `breaker_keyed_timeouts_total` | `breaker.keyed.timeouts` | observable counter (`u64`) | |
//! | `breaker_keyed_bulkhead_rejected_total` | `breaker.keyed.bulkhead_rejected` | observable counter (`u64`) | |
//! | `breaker_keyed_latency_trips_total` | `breaker.keyed.latency_trips` | observable counter (`u64`) | |
//! | `breaker_keyed_ramp_refused_total` | `breaker.keyed.ramp_refused` | observable counter (`u64`) | |
//! | `breaker_keyed_shadow_refused_total` | `breaker.keyed.shadow_refused` | observable counter (`u64`) | |
//! | `breaker_keyed_throttled_total` | `breaker.keyed.throttled` | observable counter (`u64`) | |
//! | `breaker_keyed_held` | `breaker.keyed.held` | observable gauge (`f64`) | |
//! | `breaker_keyed_holds_total` | `breaker.keyed.holds` | observable counter (`u64`) | |
//! | `breaker_keyed_holds_capped_total` | `breaker.keyed.holds_capped` | observable counter (`u64`) | |
//! | `breaker_keyed_holds_released_total` | `breaker.keyed.holds_released` | observable counter (`u64`) | |
//! | `breaker_keyed_hold_waits_bad_total` | `breaker.keyed.hold_waits_bad` | observable counter (`u64`) | |
//! | `breaker_keyed_retries_total` | `breaker.keyed.retries` | observable counter (`u64`) | |
//! | `breaker_keyed_retries_budget_exhausted_total` | `breaker.keyed.retries_budget_exhausted` | observable counter (`u64`) | |
//! | `breaker_keyed_transitions_total` | `breaker.keyed.transitions` | observable counter (`u64`) | |
//! | `breaker_keyed_group_state` | `breaker.keyed.group_state` | observable gauge (`f64`) | |
//! | `breaker_keyed_group_opened_total` | `breaker.keyed.group_opened` | observable counter (`u64`) | |
//! | `breaker_keyed_group_rejected_total` | `breaker.keyed.group_rejected` | observable counter (`u64`) | |
//! | `breaker_keyed_calls_seconds_bucket` | `breaker.keyed.call.duration.bucket` | observable counter (`u64`), cumulative by `le` | |
//! | `breaker_keyed_calls_seconds_sum` | `breaker.keyed.call.duration.sum` | observable counter (`f64`) | `s` |
//! | `breaker_keyed_calls_seconds_count` | `breaker.keyed.call.duration.count` | observable counter (`u64`) | |
//! | `breaker_keyed_worst_key_state` | `breaker.keyed.worst_key_state` | observable gauge (`f64`), opt-in | |
//! | `breaker_keyed_worst_key_times_opened` | `breaker.keyed.worst_key_times_opened` | observable gauge (`f64`), opt-in | |
//! | `breaker_keyed_worst_key_retry_after_seconds` | `breaker.keyed.worst_key_retry_after` | observable gauge (`f64`), opt-in | `s` |
//!
//! The labels are attributes named as Polly and Microsoft's `seatbelt` name
//! theirs (the `resilience.*` family), where one exists:
//!
//! | label | attribute | note |
//! |---|---|---|
//! | `name` | `resilience.pipeline.name` | the group: its bulkhead, retries, breaker and timeout are one pipeline |
//! | `state` | `resilience.circuit_breaker.state` | seatbelt's; the same values |
//! | `to`, `from` (transitions) | `resilience.circuit_breaker.state`, `resilience.circuit_breaker.previous_state` | the state entered, the state left |
//! | `kind` (probes) | `resilience.circuit_breaker.probe.result` | seatbelt's |
//! | `kind` (calls, windows, durations) | `resilience.circuit_breaker.call.result` | |
//! | `key` (worst keys) | `resilience.circuit_breaker.partition` | seatbelt's name for a key's own breaker |
//! | `le` (duration buckets) | `le` | the bound in seconds, `+Inf` last |
//!
//! `breaker_flapping_transitions` has no instrument: it is counted from the
//! registry's events, which the Prometheus collector subscribes to.

// With `tracing` alone, the table below has no reader.
#![cfg_attr(
    not(any(feature = "prometheus", feature = "metrics", feature = "otel")),
    allow(dead_code)
)]

use std::time::Duration;

use crate::{events::TransitionCounts, keyed::KeyedMetrics, metrics::Metrics, State};

#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;
#[cfg(feature = "prometheus")]
#[cfg_attr(docsrs, doc(cfg(feature = "prometheus")))]
pub mod prometheus;
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub mod span;
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub mod tracing;

/// Whether a family only grows or may go either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Type {
    Counter,
    Gauge,
}

/// One sample's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value {
    Int(u64),
    Float(f64),
}

/// The labels of a series besides `name` (the group): `kind`, `state`, ...
pub(crate) type Labels<'a> = &'a [(&'static str, &'static str)];

/// Reads a family's series from one group's metrics (`M`: a breaker's
/// [`Metrics`] or a keyed group's [`KeyedMetrics`]): calls its second argument
/// once per series, with the series' labels besides `name`.
pub(crate) type Samples<M> = fn(&M, &mut dyn FnMut(Labels, Value));

/// What the exporters read one group's series from: it names its group.
pub(crate) trait Grouped {
    fn group(&self) -> &'static str;
}

/// One breaker's reading for the exporters: its [`Metrics`], read once, and
/// the `min_calls` its window must hold before it judges (resilience4j's
/// `minimumNumberOfCalls`), below which the rates read -1.
pub(crate) struct Reading {
    metrics: Metrics,
    min_calls: u64,
}

impl Reading {
    pub(crate) fn of(breaker: &crate::Breaker) -> Self {
        Reading {
            metrics: breaker.metrics(),
            min_calls: breaker.config().min_calls().map_or(0, u64::from),
        }
    }
}

impl std::ops::Deref for Reading {
    type Target = Metrics;

    fn deref(&self) -> &Metrics {
        &self.metrics
    }
}

/// Every breaker of `registry`, read once each, sorted by group.
pub(crate) fn readings(registry: &crate::Registry) -> Vec<Reading> {
    registry.breakers().iter().map(Reading::of).collect()
}

impl Grouped for Reading {
    fn group(&self) -> &'static str {
        self.metrics.group
    }
}

impl Grouped for KeyedMetrics {
    fn group(&self) -> &'static str {
        self.group
    }
}

/// One family of series: its exposed name, help, type, unit, and how to read its
/// samples from one group's metrics `M`.
pub(crate) struct Family<M: 'static> {
    /// The name as exposed: counters end in `_total`, durations in `_seconds`.
    pub(crate) name: &'static str,
    pub(crate) help: &'static str,
    pub(crate) ty: Type,
    /// Whether the unit is seconds (and the name ends in `_seconds`).
    pub(crate) seconds: bool,
    /// Calls `sample` once per series of this family for one group, with the
    /// series' labels besides `name`. A family with more labels (transitions by
    /// `from` and `to`, say) is one more entry in [`FAMILIES`].
    pub(crate) samples: Samples<M>,
}

/// The call-duration histograms: `breaker_calls_seconds` for the groups that
/// keep one (`histogram_ms`), `breaker_keyed_calls_seconds` for keyed groups.
/// Their `_bucket`, `_sum` and `_count` series are written by each exporter in
/// its own way (a histogram is neither a counter nor a gauge).
pub(crate) struct Histograms {
    /// The family's name, ending in `_seconds`.
    pub(crate) name: &'static str,
    /// The names of its `_bucket`, `_sum` and `_count` series (the
    /// Prometheus collector lets `prometheus-client` make them).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) series: [&'static str; 3],
    pub(crate) help: &'static str,
}

/// The histogram of unkeyed groups.
pub(crate) const CALLS_SECONDS: Histograms = Histograms {
    name: "breaker_calls_seconds",
    series: [
        "breaker_calls_seconds_bucket",
        "breaker_calls_seconds_sum",
        "breaker_calls_seconds_count",
    ],
    help: "Durations of calls from claim to verdict, by how they ended (successful, failed, ignored); groups with histogram_ms only.",
};

/// The histogram of keyed groups, all keys of a group in one.
pub(crate) const KEYED_CALLS_SECONDS: Histograms = Histograms {
    name: "breaker_keyed_calls_seconds",
    series: [
        "breaker_keyed_calls_seconds_bucket",
        "breaker_keyed_calls_seconds_sum",
        "breaker_keyed_calls_seconds_count",
    ],
    help: "As breaker_calls_seconds, for every key of a keyed group together.",
};

/// The groups of `readings` that keep a histogram, with it.
pub(crate) fn histograms<M>(
    readings: &[M],
) -> impl Iterator<Item = (&'static str, &crate::metrics::CallDurations)>
where
    M: Grouped + HasDurations,
{
    readings
        .iter()
        .filter_map(|m| Some((m.group(), m.call_durations()?)))
}

/// What carries a group's call-duration histogram.
pub(crate) trait HasDurations {
    fn call_durations(&self) -> Option<&crate::metrics::CallDurations>;
}

impl HasDurations for Reading {
    fn call_durations(&self) -> Option<&crate::metrics::CallDurations> {
        self.metrics.call_durations.as_ref()
    }
}

impl HasDurations for KeyedMetrics {
    fn call_durations(&self) -> Option<&crate::metrics::CallDurations> {
        self.call_durations.as_ref()
    }
}

/// The `kind` label of a call count, in the order of the counts beside it:
/// successes, failures, ignored, rejected, abandoned, stale.
const CALL_KINDS: [&str; 6] = [
    "successful",
    "failed",
    "ignored",
    "not_permitted",
    "abandoned",
    "stale",
];

/// Every family both exporters publish, in exposition order.
pub(crate) const FAMILIES: &[Family<Reading>] = &[
    Family {
        name: "breaker_state",
        help: "1 for the state the circuit breaker is in, 0 for the others.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| {
            for state in STATES {
                sample(&[("state", state.as_str())], Value::Int(u64::from(m.state == state)));
            }
        },
    },
    Family {
        name: "breaker_calls_total",
        help: "Calls by how they ended (successful, failed, ignored, abandoned, stale), and claims refused (not_permitted).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| {
            let counts = [m.successes, m.failures, m.ignored, m.rejected, m.abandoned, m.stale];
            for (kind, count) in CALL_KINDS.into_iter().zip(counts) {
                sample(&[("kind", kind)], Value::Int(count));
            }
        },
    },
    Family {
        name: "breaker_buffered_calls",
        help: "Outcomes in the window of a window policy, by kind.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| {
            if let Some(w) = Window::of(m) {
                sample(&[("kind", "successful")], Value::Int(w.calls - w.failures));
                sample(&[("kind", "failed")], Value::Int(w.failures));
            }
        },
    },
    Family {
        name: "breaker_slow_calls",
        help: "Slow calls in the window of a window policy, successes and failures together.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| {
            if let Some(w) = Window::of(m) {
                sample(&[], Value::Int(w.slow));
            }
        },
    },
    Family {
        name: "breaker_failure_rate",
        help: "Failed outcomes over all outcomes in the window of a window policy, from 0 to 1; -1 while the window holds fewer than min_calls.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| {
            if let Some(w) = Window::of(m) {
                sample(&[], w.rate(w.failures));
            }
        },
    },
    Family {
        name: "breaker_slow_call_rate",
        help: "Slow calls over all outcomes in the window of a window policy, from 0 to 1; -1 while the window holds fewer than min_calls.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| {
            if let Some(w) = Window::of(m) {
                sample(&[], w.rate(w.slow));
            }
        },
    },
    Family {
        name: "breaker_retry_after_seconds",
        help: "Time until a probe may go while claims are refused for a known time; 0 otherwise.",
        ty: Type::Gauge,
        seconds: true,
        samples: |m, sample| {
            let left = m.retry_after.unwrap_or(Duration::ZERO);
            sample(&[], Value::Float(left.as_secs_f64()));
        },
    },
    Family {
        name: "breaker_probes_total",
        help: "Half-open probes that ended (successful, failed), and probe slots reclaimed from probes that overran probe_timeout.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| {
            for (kind, count) in [
                ("successful", m.probes_succeeded),
                ("failed", m.probes_failed),
                ("reclaimed", m.probes_reclaimed),
            ] {
                sample(&[("kind", kind)], Value::Int(count));
            }
        },
    },
    Family {
        name: "breaker_probes_in_flight",
        help: "Half-open probes running now.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(u64::from(m.probes_in_flight))),
    },
    Family {
        name: "breaker_opened_total",
        help: "Times the circuit opened: trips and failed probes, not forced opens.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.times_opened)),
    },
    Family {
        name: "breaker_timeouts_total",
        help: "Calls dropped at their timeout_ms deadline (each also counted as failed).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.timeouts)),
    },
    Family {
        name: "breaker_bulkhead_rejected_total",
        help: "Calls the bulkhead (max_concurrent) refused (each also counted as not_permitted).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.bulkhead_rejected)),
    },
    Family {
        name: "breaker_bulkhead_in_flight",
        help: "Calls holding a bulkhead slot now (groups with max_concurrent only).",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| {
            if let Some(n) = m.bulkhead_in_flight {
                sample(&[], Value::Int(u64::from(n)));
            }
        },
    },
    Family {
        name: "breaker_latency_trips_total",
        help: "Trips made by the p99 latency rule (latency_p99_ms) alone.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.latency_trips)),
    },
    Family {
        name: "breaker_latency_p99_seconds",
        help: "The p99 latency of the calls since the breaker was made, as the upper bound of its call-duration histogram bucket (groups with latency_p99_ms only).",
        ty: Type::Gauge,
        seconds: true,
        samples: |m, sample| {
            if let Some(p99) = m.latency_p99 {
                sample(&[], Value::Float(p99.as_secs_f64()));
            }
        },
    },
    Family {
        name: "breaker_admitted_share",
        help: "The share of calls a claim is admitted at now: 1 closed, the ramp's share while ramping after a close (ramp_ms), 0 open or half-open.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Float(m.admitted_share())),
    },
    Family {
        name: "breaker_ramp_refused_total",
        help: "Claims the traffic ramp after a close (ramp_ms) refused (each also counted as not_permitted).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.ramp_refused)),
    },
    Family {
        name: "breaker_shadow",
        help: "1 while the breaker is in shadow mode (refusing nothing but a forced open), 0 otherwise.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(u64::from(m.shadow))),
    },
    Family {
        name: "breaker_shadow_refused_total",
        help: "Claims shadow mode admitted that the breaker would have refused (none counted as not_permitted).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.shadow_refused)),
    },
    Family {
        name: "breaker_throttle_reject_share",
        help: "The share of claims the adaptive throttle (throttle) refuses now (groups with throttle only).",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| {
            if let Some(throttle) = &m.throttle {
                sample(&[], Value::Float(throttle.reject_share));
            }
        },
    },
    Family {
        name: "breaker_throttled_total",
        help: "Claims the adaptive throttle refused (each also counted as not_permitted).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.throttled)),
    },
    Family {
        name: "breaker_held",
        help: "1 while a hold refuses claims (the server asked every caller to wait), 0 otherwise.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(u64::from(m.held.is_some()))),
    },
    Family {
        name: "breaker_holds_total",
        help: "Holds taken, by scope (kind): key or group.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| {
            sample(&[("kind", "key")], Value::Int(m.holds.key));
            sample(&[("kind", "group")], Value::Int(m.holds.group));
        },
    },
    Family {
        name: "breaker_holds_capped_total",
        help: "Waits asked for longer than max_hold_ms, held for max_hold_ms.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.holds.capped)),
    },
    Family {
        name: "breaker_holds_released_total",
        help: "Holds released by hand before their deadline.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.holds.released)),
    },
    Family {
        name: "breaker_hold_waits_bad_total",
        help: "Waits a server asked for that held nothing: unreadable, negative or past.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.holds.bad)),
    },
    Family {
        name: "breaker_retries_total",
        help: "Retries made: attempts after a call's first (each also counted in breaker_calls_total).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.retries)),
    },
    Family {
        name: "breaker_retries_budget_exhausted_total",
        help: "Retries the retry budget refused: each call ended with its own error.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.retries_budget_exhausted)),
    },
    Family {
        name: "breaker_transitions_total",
        help: "Transitions by the state left (from) and the state entered (to).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| transition_samples(&m.transitions, sample),
    },
    Family {
        name: "breaker_open_duration_seconds",
        help: "The open duration of the current episode while open or half-open (grows by backoff after failed probes); 0 otherwise.",
        ty: Type::Gauge,
        seconds: true,
        samples: |m, sample| {
            let open_for = m.open_for.unwrap_or(Duration::ZERO);
            sample(&[], Value::Float(open_for.as_secs_f64()));
        },
    },
    Family {
        name: "breaker_generation",
        help: "The circuit breaker's generation; every transition starts a new one.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.generation)),
    },
    Family {
        name: "breaker_consecutive_failures",
        help: "Failures in a row counted now by the consecutive-failure policy.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(u64::from(m.consecutive_failures))),
    },
];

/// The families of keyed groups (`#[circuit_breaker(key = ..)]`), one series
/// per group and never per key (a group may hold a million keys): its keys by
/// state, its bound, its evictions, and its keys' counts summed (evicted keys
/// included).
pub(crate) const KEYED_FAMILIES: &[Family<KeyedMetrics>] = &[
    Family {
        name: "breaker_keyed_keys",
        help: "Keys a keyed group holds now, by their breaker's state (open includes forced open, closed forced closed).",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| {
            let closed = m.keys.saturating_sub(m.open + m.half_open);
            for (state, n) in [("closed", closed), ("open", m.open), ("half_open", m.half_open)] {
                sample(&[("state", state)], Value::Int(n as u64));
            }
        },
    },
    Family {
        name: "breaker_keyed_key_capacity",
        help: "The most idle keys a keyed group keeps (key_capacity); open keys may exceed it.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.key_capacity as u64)),
    },
    Family {
        name: "breaker_keyed_evictions_total",
        help: "Idle, closed keys a keyed group evicted to stay within key_capacity.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.evictions)),
    },
    Family {
        name: "breaker_keyed_calls_total",
        help: "Calls of every key of a keyed group (evicted keys included) by how they ended, and claims refused (not_permitted).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| {
            let counts = [m.successes, m.failures, m.ignored, m.rejected, m.abandoned, m.stale];
            for (kind, count) in CALL_KINDS.into_iter().zip(counts) {
                sample(&[("kind", kind)], Value::Int(count));
            }
        },
    },
    Family {
        name: "breaker_keyed_probes_total",
        help: "Half-open probes of every key of a keyed group (evicted keys included) that ended (successful, failed), and probe slots reclaimed.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| {
            for (kind, count) in [
                ("successful", m.probes_succeeded),
                ("failed", m.probes_failed),
                ("reclaimed", m.probes_reclaimed),
            ] {
                sample(&[("kind", kind)], Value::Int(count));
            }
        },
    },
    Family {
        name: "breaker_keyed_opened_total",
        help: "Times any key of a keyed group opened (evicted keys included).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.times_opened)),
    },
    Family {
        name: "breaker_keyed_timeouts_total",
        help: "Calls of every key of a keyed group (evicted keys included) dropped at their timeout_ms deadline (each also counted as failed).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.timeouts)),
    },
    Family {
        name: "breaker_keyed_bulkhead_rejected_total",
        help: "Calls of every key of a keyed group (evicted keys included) the bulkhead refused (each also counted as not_permitted).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.bulkhead_rejected)),
    },
    Family {
        name: "breaker_keyed_latency_trips_total",
        help: "Trips of any key of a keyed group (evicted keys included) made by the p99 latency rule alone.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.latency_trips)),
    },
    Family {
        name: "breaker_keyed_ramp_refused_total",
        help: "Claims of any key of a keyed group (evicted keys included) its traffic ramp refused.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.ramp_refused)),
    },
    Family {
        name: "breaker_keyed_shadow_refused_total",
        help: "Claims of any key of a keyed group (evicted keys included) shadow mode admitted that the key would have refused.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.shadow_refused)),
    },
    Family {
        name: "breaker_keyed_throttled_total",
        help: "Claims of any key of a keyed group (evicted keys included) its adaptive throttle refused.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.throttled)),
    },
    Family {
        name: "breaker_keyed_held",
        help: "Keys of a keyed group whose calls a hold refuses now.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.held as u64)),
    },
    Family {
        name: "breaker_keyed_holds_total",
        help: "Holds taken by every key of a keyed group (evicted keys included), by scope (kind): key or group.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| {
            sample(&[("kind", "key")], Value::Int(m.holds.key));
            sample(&[("kind", "group")], Value::Int(m.holds.group));
        },
    },
    Family {
        name: "breaker_keyed_holds_capped_total",
        help: "As breaker_holds_capped_total, for every key of a keyed group (evicted keys included).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.holds.capped)),
    },
    Family {
        name: "breaker_keyed_holds_released_total",
        help: "As breaker_holds_released_total, for every key of a keyed group (evicted keys included).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.holds.released)),
    },
    Family {
        name: "breaker_keyed_hold_waits_bad_total",
        help: "As breaker_hold_waits_bad_total, for every key of a keyed group (evicted keys included).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.holds.bad)),
    },
    Family {
        name: "breaker_keyed_retries_total",
        help: "Retries made by any key of a keyed group (evicted keys included).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.retries)),
    },
    Family {
        name: "breaker_keyed_retries_budget_exhausted_total",
        help: "Retries of any key of a keyed group (evicted keys included) the retry budget refused.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| sample(&[], Value::Int(m.retries_budget_exhausted)),
    },
    Family {
        name: "breaker_keyed_transitions_total",
        help: "Transitions of every key of a keyed group (evicted keys included) by the state left (from) and the state entered (to).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| transition_samples(&m.transitions, sample),
    },
    Family {
        name: "breaker_keyed_group_state",
        help: "For a keyed group that judges as one (systemic_share, max_open_keys): 1 for the state its own breaker is in, 0 for the others; not closed, every key is refused for the group.",
        ty: Type::Gauge,
        seconds: false,
        samples: |m, sample| {
            if let Some(group) = &m.group_level {
                for state in STATES {
                    let now = u64::from(group.state == state);
                    sample(&[("state", state.as_str())], Value::Int(now));
                }
            }
        },
    },
    Family {
        name: "breaker_keyed_group_opened_total",
        help: "Times a keyed group that judges as one opened as one (a fault its keys share).",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| {
            if let Some(group) = &m.group_level {
                sample(&[], Value::Int(group.times_opened));
            }
        },
    },
    Family {
        name: "breaker_keyed_group_rejected_total",
        help: "Calls of a keyed group that judges as one refused for the whole group: while it was open as one, held, or ramping its keys back in.",
        ty: Type::Counter,
        seconds: false,
        samples: |m, sample| {
            if let Some(group) = &m.group_level {
                sample(&[], Value::Int(group.rejected));
            }
        },
    },
];

/// The transitions the state machine makes by itself, listed from the first
/// scrape on (at 0); transitions by hand (to and from the forced states, and
/// resets) are listed once they happened.
pub(crate) const MACHINE: [(State, State); 5] = [
    (State::Closed, State::Open),
    (State::Open, State::HalfOpen),
    (State::HalfOpen, State::Open),
    (State::HalfOpen, State::Closed),
    (State::HalfOpen, State::HalfOpen),
];

/// The samples of a transitions family: the [`MACHINE`] pairs always, the
/// others once counted.
fn transition_samples(t: &TransitionCounts, sample: &mut dyn FnMut(Labels, Value)) {
    for (from, to) in MACHINE {
        sample(&transition_labels(from, to), Value::Int(t.get(from, to)));
    }
    for (from, to, count) in t.iter().filter(|&(f, t, _)| !MACHINE.contains(&(f, t))) {
        sample(&transition_labels(from, to), Value::Int(count));
    }
}

fn transition_labels(from: State, to: State) -> [(&'static str, &'static str); 2] {
    [("from", from.as_str()), ("to", to.as_str())]
}

/// Every state, in the order the `state` label lists them.
const STATES: [State; 5] = [
    State::Closed,
    State::Open,
    State::HalfOpen,
    State::ForcedOpen,
    State::ForcedClosed,
];

/// A window's counts made consistent with each other: a snapshot taken while
/// calls land may read a bucket's slow count or failures ahead of its outcomes,
/// so each part is capped by the whole it belongs to.
struct Window {
    calls: u64,
    failures: u64,
    slow: u64,
    /// At least 1.
    min_calls: u64,
}

impl Window {
    fn of(m: &Reading) -> Option<Window> {
        m.window.map(|w| Window {
            calls: w.calls,
            failures: w.failures.min(w.calls),
            slow: w.slow_calls.min(w.calls),
            min_calls: m.min_calls.max(1),
        })
    }

    /// `part / calls`; -1 while the window holds fewer than `min_calls`
    /// outcomes (an empty one included), as resilience4j reports.
    fn rate(&self, part: u64) -> Value {
        if self.calls < self.min_calls {
            Value::Float(NOT_JUDGED)
        } else {
            Value::Float(part as f64 / self.calls as f64)
        }
    }
}

/// A window rate while the window holds fewer than `min_calls` outcomes.
pub(crate) const NOT_JUDGED: f64 = -1.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_end_in_total_and_durations_in_seconds() {
        let keyed = KEYED_FAMILIES.iter().map(|f| (f.name, f.ty, f.seconds));
        for family in FAMILIES
            .iter()
            .map(|f| (f.name, f.ty, f.seconds))
            .chain(keyed)
        {
            let (name, ty, seconds) = family;
            assert!(name.starts_with("breaker_"), "{name}");
            assert_eq!(name.ends_with("_total"), ty == Type::Counter, "{name}");
            assert_eq!(name.ends_with("_seconds"), seconds, "{name}");
        }
    }

    #[test]
    fn counters_are_whole_numbers() {
        let config = crate::Config::builder().window_calls(4).build().unwrap();
        let breaker = crate::Breaker::new("counted", config);
        breaker.try_acquire().unwrap().success();
        breaker.try_acquire().unwrap().failure();
        let m = Reading::of(&breaker);
        for family in FAMILIES.iter().filter(|f| f.ty == Type::Counter) {
            let mut samples = 0;
            (family.samples)(&m, &mut |_, value| {
                samples += 1;
                assert!(matches!(value, Value::Int(_)), "{}", family.name);
            });
            assert!(samples > 0, "{}", family.name);
        }
    }

    /// Every sample of a counter family, by its labels.
    fn samples_of<M>(
        samples: Samples<M>,
        m: &M,
    ) -> Vec<(Vec<(&'static str, &'static str)>, Value)> {
        let mut all = Vec::new();
        samples(m, &mut |labels, value| all.push((labels.to_vec(), value)));
        all
    }

    #[test]
    fn every_counter_of_a_key_is_summed_into_its_groups_twin_family() {
        let clock = crate::ManualClock::new();
        let config = crate::Config::builder()
            .window_calls(10)
            .min_calls(2)
            .latency_p99(Duration::from_millis(50))
            .timeout(Duration::from_millis(100))
            .max_concurrent(1)
            .open(Duration::from_secs(1))
            .build()
            .unwrap();
        let registry = crate::Registry::with_clock(clock.clone());
        let group = registry.keyed::<u64>("twins", &config, 10).unwrap();
        let key = group.breaker(&1);
        // A latency trip, a refusal and a probe that succeeds.
        for _ in 0..2 {
            let permit = key.try_acquire().unwrap();
            clock.advance(Duration::from_millis(80));
            permit.success();
        }
        assert!(key.try_acquire().is_err());
        clock.advance(Duration::from_secs(1));
        key.try_acquire().unwrap().success();
        // A timeout, a full bulkhead, an abandoned call, a transition by hand.
        let permit = key.try_acquire().unwrap();
        crate::__private_v01::timed_out(&key, permit, Duration::from_millis(100));
        let slot = key.enter_bulkhead().unwrap();
        assert!(key.enter_bulkhead().is_err());
        drop(slot);
        drop(key.try_acquire().unwrap());
        key.force_open();
        let m = Reading::of(&key);
        assert!(
            m.latency_trips > 0 && m.timeouts > 0 && m.bulkhead_rejected > 0,
            "{:?}",
            *m
        );
        let keyed = group.metrics();
        let counters = FAMILIES.iter().filter(|f| f.ty == Type::Counter);
        for family in counters {
            let twin = family.name.replacen("breaker_", "breaker_keyed_", 1);
            let Some(twin) = KEYED_FAMILIES.iter().find(|f| f.name == twin) else {
                panic!("{} has no keyed twin `{twin}`", family.name);
            };
            assert_eq!(twin.ty, Type::Counter, "{}", twin.name);
            assert_eq!(
                samples_of(twin.samples, &keyed),
                samples_of(family.samples, &m),
                "{}",
                twin.name
            );
        }
    }

    #[test]
    fn every_state_has_its_own_label() {
        let mut labels: Vec<_> = STATES.iter().map(|&s| s.as_str()).collect();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), STATES.len());
    }
}
