//! The status page: one self-contained document (inline CSS and JS, nothing
//! fetched from elsewhere) whose table is rendered here, as of the request,
//! and which then follows `/events/stream` beside it.
//!
//! The first view needs no script: each circuit's row, its state and its
//! timeline (from the router's event ring, when it keeps one) are in the
//! document as served, written as the page's script writes them, which
//! replaces them once it has read `/breakers`.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// The document, with the two places this module fills.
const TEMPLATE: &str = include_str!("page.html");
/// Where the rows go: the table's body.
const ROWS: &str = "<tbody id=\"circuits\"></tbody>";
/// The status line under the table.
const STATUS: &str = "<div id=\"status\">connecting…</div>";
/// The span of a timeline, as the script's `SPAN_MS`.
const SPAN_MS: u64 = 10 * 60 * 1000;
/// The window flapping counts, as the script's `FLAP_MS`.
const FLAP_MS: u64 = 5 * 60 * 1000;

/// The page without a table: for a caller who may not read the breakers.
pub(super) fn shell() -> String {
    TEMPLATE.to_owned()
}

/// The page with its table as `breakers` (what `GET /breakers` answers) and
/// `events` (the ring's, oldest first) tell it now.
pub(super) fn render(breakers: &Value, events: &[Value]) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let mut rows = Vec::new();
    if let Some(unkeyed) = breakers["breakers"].as_object() {
        for (name, b) in unkeyed {
            rows.push((name.clone(), unkeyed_row(name, b, events, now)));
        }
    }
    if let Some(keyed) = breakers["keyed"].as_object() {
        for (name, k) in keyed {
            let shown = format!("{name} (keyed)");
            let row = keyed_row(name, &shown, k, events, now);
            rows.push((shown, row));
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let body: String = rows.into_iter().map(|(_, row)| row).collect();
    TEMPLATE
        .replacen(ROWS, &format!("<tbody id=\"circuits\">{body}</tbody>"), 1)
        .replacen(
            STATUS,
            "<div id=\"status\">as of this page's request; connecting to the event stream…</div>",
            1,
        )
}

fn unkeyed_row(name: &str, b: &Value, events: &[Value], now: u64) -> String {
    let state = b["state"].as_str().unwrap_or("closed");
    let claims = count(&b["calls"]) + count(&b["rejected"]);
    let shadow = b["shadow"].as_bool() == Some(true);
    let share = b["admitted_share"]
        .as_f64()
        .filter(|s| state == "closed" && *s < 1.0);
    let mut tr = format!(
        "<tr data-group=\"{}\" data-state=\"{}\"",
        escape(name),
        escape(state)
    );
    let throttled = b["throttle"]["reject_share"]
        .as_f64()
        .filter(|s| state == "closed" && *s > 0.0);
    let mut badge = state.to_owned();
    let mut ramp = String::new();
    if let Some(share) = share {
        // Below what the throttle alone leaves: a ramp runs too.
        let ramping = share < 1.0 - throttled.unwrap_or(0.0) - 1e-9;
        if ramping {
            let _ = write!(tr, " data-ramp=\"{share:.2}\"");
            badge = format!("closed, ramping {}%", (100.0 * share).round());
        }
        if let Some(throttled) = throttled {
            let _ = write!(tr, " data-throttle=\"{throttled:.2}\"");
            let _ = write!(badge, ", throttling {}%", (100.0 * throttled).round());
        }
        ramp = format!(
            "<span class=\"ramp\" title=\"share of calls admitted now\"><b style=\"width: {:.1}%;\"></b></span>",
            100.0 * share
        );
    }
    if shadow {
        tr.push_str(" data-shadow=\"on\"");
        badge.push_str(" (shadow)");
    }
    // A hold (the server asked every caller to wait) refuses whatever the state.
    if let Some(scope) = b["held"]["scope"].as_str() {
        let _ = write!(tr, " data-held=\"{}\"", escape(scope));
        let left = b["held"]["remaining_ms"].as_f64().unwrap_or(0.0) / 1_000.0;
        let _ = write!(badge, ", held {left:.0} s ({scope})");
    }
    tr.push('>');
    let history = history(events, name, None, state, now);
    let rate = if shadow {
        format!(
            "would refuse {}",
            percent(count(&b["shadow_refused"]), claims)
        )
    } else {
        percent(count(&b["rejected"]), claims)
    };
    let probes_ok = count(&b["probes_succeeded"]);
    let probes = percent(probes_ok, probes_ok + count(&b["probes_failed"]));
    let flaps = history
        .iter()
        .skip(1)
        .filter(|(at, _)| *at + FLAP_MS >= now)
        .count();
    let flapping = if flaps >= 6 { " flapping" } else { "" };
    format!(
        "{tr}<td>{}</td><td><span class=\"state {}\">{}</span>{ramp}</td><td>{}</td>\
         <td class=\"num\">{}</td><td class=\"num\">{probes}</td><td class=\"num{flapping}\">{flaps}</td></tr>",
        escape(name),
        escape(state),
        escape(&badge),
        timeline(&history, name, None, now),
        escape(&rate),
    )
}

fn keyed_row(name: &str, shown: &str, k: &Value, events: &[Value], now: u64) -> String {
    let (open, half_open) = (count(&k["open"]), count(&k["half_open"]));
    // A group open as one (its own breaker not closed) is "systemic": every
    // key is refused for the group, whatever the keys' own states.
    let group_state = k["group_level"]["state"].as_str();
    let systemic = k["group_level"]["systemic"].as_bool() == Some(true);
    let state = match (systemic, group_state, open, half_open) {
        (true, Some(group), _, _) => group,
        (_, _, 1.., _) => "open",
        (_, _, 0, 1..) => "half_open",
        _ => "closed",
    };
    let shadow = k["shadow"].as_bool() == Some(true);
    let claims = count(&k["calls"]) + count(&k["rejected"]) + count(&k["group_level"]["rejected"]);
    let mut badge = if systemic {
        format!("systemic: the group is {}", group_state.unwrap_or("open"))
    } else if half_open == 0 {
        format!("{open} of {} keys open", count(&k["keys"]))
    } else {
        format!(
            "{open} open, {half_open} half_open of {}",
            count(&k["keys"])
        )
    };
    let mut tr = format!(
        "<tr data-group=\"{}\" data-state=\"{state}\"",
        escape(shown)
    );
    if shadow {
        tr.push_str(" data-shadow=\"on\"");
        badge.push_str(" (shadow)");
    }
    tr.push('>');
    let keys: String = shown_keys(name, k, events)
        .iter()
        .map(|(key, key_state)| {
            let history = history(events, name, Some(key), key_state, now);
            format!(
                "<div class=\"keyline\"><span class=\"key\">{} {}</span>{}</div>",
                escape(key),
                escape(key_state),
                timeline(&history, name, Some(key), now)
            )
        })
        .collect();
    let keys = if keys.is_empty() {
        "–".to_owned()
    } else {
        keys
    };
    let rate = if shadow {
        format!(
            "would refuse {}",
            percent(count(&k["shadow_refused"]), claims)
        )
    } else {
        let rejected = count(&k["rejected"]) + count(&k["group_level"]["rejected"]);
        percent(rejected, claims)
    };
    format!(
        "{tr}<td>{}</td><td><span class=\"state {state}\">{}</span></td><td>{keys}</td>\
         <td class=\"num\">{}</td><td class=\"num\">–</td><td class=\"num\">0</td></tr>",
        escape(shown),
        escape(&badge),
        escape(&rate),
    )
}

/// The keys a keyed group's row draws, with their state: its worst keys,
/// then the keys whose transitions the ring holds (the latest first: a key
/// that opened and closed again), at most the router's `worst_keys` in all.
fn shown_keys(group: &str, k: &Value, events: &[Value]) -> Vec<(String, String)> {
    let limit = usize::try_from(count(&k["worst_keys_limit"])).unwrap_or(usize::MAX);
    let mut keys: Vec<(String, String)> = k["worst_keys"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|w| {
            let key = w["key"].as_str().unwrap_or_default().to_owned();
            (key, w["state"].as_str().unwrap_or("open").to_owned())
        })
        .collect();
    for event in events.iter().rev() {
        let (Some(key), Some(to)) = (event["key"].as_str(), event["to"].as_str()) else {
            continue;
        };
        if event["kind"] == "transition"
            && event["group"].as_str() == Some(group)
            && !keys.iter().any(|(k, _)| k == key)
        {
            keys.push((key.to_owned(), to.to_owned()));
        }
    }
    keys.truncate(limit);
    keys
}

/// The states of a circuit (a group's, or one key's) over the last
/// `SPAN_MS`, oldest first, each with when it began: from the ring's
/// transitions, or its state now when the ring tells none.
fn history(
    events: &[Value],
    group: &str,
    key: Option<&str>,
    now_state: &str,
    now: u64,
) -> Vec<(u64, String)> {
    let mut list: Vec<(u64, String)> = Vec::new();
    for event in events {
        if event["kind"] != "transition"
            || event["group"].as_str() != Some(group)
            || event["key"].as_str() != key
        {
            continue;
        }
        let at = event["unix_ms"].as_u64().unwrap_or(now);
        if list.is_empty() {
            let from = event["from"].as_str().unwrap_or("closed");
            list.push((at.saturating_sub(SPAN_MS), from.to_owned()));
        }
        let to = event["to"].as_str().unwrap_or("closed");
        if list.last().is_none_or(|(_, last)| last != to) {
            list.push((at, to.to_owned()));
        }
    }
    if list.is_empty() {
        list.push((now.saturating_sub(SPAN_MS), now_state.to_owned()));
    }
    list
}

/// A timeline bar, as the script draws it.
fn timeline(history: &[(u64, String)], group: &str, key: Option<&str>, now: u64) -> String {
    let from = now.saturating_sub(SPAN_MS);
    let key = key.map_or(String::new(), |k| format!(" data-key=\"{}\"", escape(k)));
    let mut bar = format!(
        "<div class=\"timeline\" data-group=\"{}\"{key}>",
        escape(group)
    );
    for (i, (at, state)) in history.iter().enumerate() {
        let start = (*at).max(from);
        let end = history.get(i + 1).map_or(now, |(next, _)| *next);
        if end <= from {
            continue;
        }
        let width = (100.0 * end.saturating_sub(start) as f64 / SPAN_MS as f64).max(0.4);
        let _ = write!(
            bar,
            "<span class=\"seg {state}\" data-state=\"{state}\" style=\"width: {width}%;\"></span>",
            state = escape(state),
        );
    }
    bar.push_str("</div>");
    bar
}

fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "–".to_owned();
    }
    format!("{:.1}%", 100.0 * part as f64 / whole as f64)
}

/// `text` safe inside an element or a quoted attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{escape, render};
    use serde_json::json;

    #[test]
    fn names_are_escaped_and_rows_are_sorted() {
        let page = render(
            &json!({"breakers": {
                "b<x>": {"state": "open", "calls": 1, "rejected": 1},
                "a": {"state": "closed", "calls": 0, "rejected": 0},
            }, "keyed": {}}),
            &[],
        );
        let a = page.find("data-group=\"a\"").unwrap();
        let b = page
            .find("data-group=\"b&lt;x&gt;\" data-state=\"open\"")
            .unwrap();
        assert!(a < b);
        assert!(!page.contains("<x>"));
        assert_eq!(escape("\"'&"), "&quot;&#39;&amp;");
    }
}
