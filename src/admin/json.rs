//! The JSON the router answers with: breakers, keyed groups, events and
//! errors, with the field names the module docs list.

use std::time::Duration;

use breaker_core::config::KeyValue;
use breaker_core::{
    Config, Conflict, DeclarationOverride, DeclaredGroup, Event, KeyedMetrics, Metrics,
    RetryPolicy, State, Transition,
};
use serde_json::{json, Map, Value};

fn ms(duration: Option<Duration>) -> Value {
    duration.map_or(Value::Null, |d| {
        Value::from(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    })
}

/// One unkeyed breaker.
pub(super) fn breaker(
    m: &Metrics,
    config: &Config,
    retry: Option<RetryPolicy>,
    overrides: &[DeclarationOverride],
    conflicts: &[Conflict],
) -> Value {
    let window = m.window;
    let transitions: Vec<Value> = m
        .transitions
        .iter()
        .filter(|(_, _, n)| *n > 0)
        .map(|(from, to, n)| json!({"from": from.as_str(), "to": to.as_str(), "count": n}))
        .collect();
    json!({
        "group": m.group,
        "state": m.state.as_str(),
        "generation": m.generation,
        "calls": m.calls,
        "successes": m.successes,
        "failures": m.failures,
        "ignored": m.ignored,
        "rejected": m.rejected,
        "abandoned": m.abandoned,
        "stale": m.stale,
        "timeouts": m.timeouts,
        "bulkhead_rejected": m.bulkhead_rejected,
        "bulkhead_in_flight": m.bulkhead_in_flight,
        "times_opened": m.times_opened,
        "latency_trips": m.latency_trips,
        "latency_p99_ms": ms(m.latency_p99),
        "probes_succeeded": m.probes_succeeded,
        "probes_failed": m.probes_failed,
        "probes_reclaimed": m.probes_reclaimed,
        "probes_in_flight": m.probes_in_flight,
        "consecutive_failures": m.consecutive_failures,
        "ramp_refused": m.ramp_refused,
        "shadow": m.shadow,
        "shadow_refused": m.shadow_refused,
        "throttled": m.throttled,
        "throttle": m.throttle.map(|t| json!({
            "requests": t.requests,
            "accepts": t.accepts,
            "reject_share": t.reject_share,
            "window_ms": ms(Some(t.window)),
        })),
        "held": m.held.map(|h| json!({"scope": h.scope.as_str(), "remaining_ms": ms(Some(h.remaining))})),
        "holds": {
            "key": m.holds.key,
            "group": m.holds.group,
            "capped": m.holds.capped,
            "released": m.holds.released,
            "bad": m.holds.bad,
        },
        "admitted_share": m.admitted_share(),
        "buffered_calls": window.map(|w| w.calls),
        "buffered_failures": window.map(|w| w.failures),
        "slow_calls": window.map(|w| w.slow_calls),
        "failure_rate": window.and_then(|w| w.failure_rate()),
        "slow_call_rate": window.and_then(|w| w.slow_call_rate()),
        "retry_after_ms": ms(m.retry_after),
        "open_for_ms": ms(m.open_for),
        "transitions": transitions,
        "config": config_json(config),
        "retry": retry.as_ref().map(retry_json),
        "overrides": overrides
            .iter()
            .filter(|o| o.group == m.group)
            .map(|o| o.detail.clone())
            .collect::<Vec<_>>(),
        "conflicts": conflicts
            .iter()
            .filter(|c| c.group == m.group)
            .map(|c| c.to_string())
            .collect::<Vec<_>>(),
    })
}

/// A group declared and resolved but not made yet (no call has reached it):
/// the config its first call will make it with, each key with the source of
/// its value (`"default"` for a key nothing set), every value set as text, and
/// what layered configuration took from its declaration.
pub(super) fn declared(d: &DeclaredGroup, overrides: &[DeclarationOverride]) -> Value {
    let mut config = config_json(&d.config);
    if let Value::Object(keys) = &mut config {
        for (key, entry) in keys.iter_mut() {
            let source = d
                .settings
                .iter()
                .find(|s| s.key == key)
                .map_or("default", |s| s.source.as_str());
            if let Value::Object(entry) = entry {
                entry.insert("source".into(), source.into());
            }
        }
    }
    json!({
        "group": d.group,
        "created": false,
        "config": config,
        "settings": d.settings.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "overrides": overrides
            .iter()
            .filter(|o| o.group == d.group)
            .map(|o| o.detail.clone())
            .collect::<Vec<_>>(),
    })
}

/// Every key of [`Config::KEYS`] with the value it runs with
/// ([`Config::value`]) and whether it was set.
pub(super) fn config_json(config: &Config) -> Value {
    let mut all = Map::new();
    for (key, value) in config.values() {
        all.insert(
            key.to_owned(),
            json!({"value": value.map_or(Value::Null, key_value), "explicit": config.is_explicit(key)}),
        );
    }
    Value::Object(all)
}

/// One key's value as JSON: a number (a duration in whole milliseconds), a
/// boolean or a word.
fn key_value(value: KeyValue) -> Value {
    match value {
        KeyValue::U32(v) => v.into(),
        KeyValue::U64(v) => v.into(),
        KeyValue::F64(v) => v.into(),
        KeyValue::Bool(v) => v.into(),
        KeyValue::Choice(word) => word.into(),
    }
}

/// The retry policy a group runs
/// ([`Retry::effective_policy`](breaker_core::Retry::effective_policy)):
/// every retry key with the value it runs with ([`RetryPolicy::value`]) and
/// whether its code set it.
fn retry_json(policy: &RetryPolicy) -> Value {
    let mut all = Map::new();
    for key in breaker_rules::RETRY_NAMES {
        all.insert(
            key.to_owned(),
            json!({"value": policy.value(key).map_or(Value::Null, key_value), "explicit": policy.is_explicit(key)}),
        );
    }
    Value::Object(all)
}

/// One keyed group; `worst` is `None` when its key type is not registered.
pub(super) fn keyed(
    m: &KeyedMetrics,
    config: Option<&Config>,
    worst: Option<Vec<(String, Metrics)>>,
    limit: usize,
) -> Value {
    let worst = worst.map(|keys| {
        keys.into_iter()
            .map(|(key, k)| {
                json!({
                    "key": key,
                    "state": k.state.as_str(),
                    "times_opened": k.times_opened,
                    "failures": k.failures,
                    "rejected": k.rejected,
                    "retry_after_ms": ms(k.retry_after),
                })
            })
            .collect::<Vec<_>>()
    });
    json!({
        "group": m.group,
        "keys": m.keys,
        "key_capacity": m.key_capacity,
        "closed": m.keys.saturating_sub(m.open + m.half_open),
        "open": m.open,
        "half_open": m.half_open,
        "evictions": m.evictions,
        "calls": m.calls,
        "successes": m.successes,
        "failures": m.failures,
        "ignored": m.ignored,
        "rejected": m.rejected,
        "abandoned": m.abandoned,
        "stale": m.stale,
        "times_opened": m.times_opened,
        "shadow": config.map(Config::shadow),
        "shadow_refused": m.shadow_refused,
        "throttled": m.throttled,
        "config": config.map(config_json),
        "worst_keys": worst,
        "worst_keys_limit": limit,
        "group_level": m.group_level.as_ref().map(|g| json!({
            "state": g.state.as_str(),
            "systemic": m.is_systemic(),
            "times_opened": g.times_opened,
            "rejected": g.rejected,
            "retry_after_ms": ms(g.retry_after),
        })),
    })
}

fn transition(t: &Transition, key: Option<&str>) -> Map<String, Value> {
    let cause = match t.reason {
        breaker_core::TransitionReason::Tripped(cause) => Value::from(cause.as_str()),
        _ => Value::Null,
    };
    let fields = json!({
        "kind": "transition",
        "group": t.group,
        "key": key,
        "from": t.from.as_str(),
        "to": t.to.as_str(),
        "reason": t.reason.as_str(),
        "cause": cause,
        "generation": t.generation,
        "open_for_ms": ms(t.open_for),
        "retry_after_ms": ms(t.retry_after),
        "keys_open": t.keys_open.map(|k| json!({"open": k.open, "keys": k.keys})),
    });
    match fields {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// What the ring keeps of `event`; `None` for events it does not show.
pub(super) fn event(event: &Event) -> Option<Map<String, Value>> {
    match event {
        Event::Transition(t) => Some(transition(t, None)),
        Event::KeyedTransition(k) => Some(transition(&k.transition, Some(&k.key))),
        Event::Conflict(c) => {
            let mut map = Map::new();
            map.insert("kind".into(), "conflict".into());
            map.insert("group".into(), c.group.into());
            map.insert("message".into(), c.to_string().into());
            Some(map)
        }
        _ => None,
    }
}

/// An admin action, as the ring keeps it.
pub(super) fn action(
    action: &str,
    group: &str,
    key: Option<&str>,
    token: &str,
    reason: Option<&str>,
    after: Option<State>,
) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("kind".into(), "admin".into());
    map.insert("action".into(), action.into());
    map.insert("group".into(), group.into());
    map.insert("key".into(), key.into());
    map.insert("token".into(), token.into());
    map.insert("reason".into(), reason.into());
    map.insert("state".into(), after.map(State::as_str).into());
    map
}
