//! [`TestKit::assert_transitions`]: the transitions of a group against those
//! a test expects, with a table of both when they differ.

use std::fmt::{self, Write as _};

use breaker_core::events::Transition;

use super::TestKit;

/// One transition as the kit writes it: `from -> to (reason)`, as in
/// `closed -> open (tripped by consecutive_failures)` or
/// `open -> half_open (open_elapsed)`.
///
/// `from` and `to` are the states' [`as_str`](crate::State::as_str) (`closed`,
/// `open`, `half_open`, `forced_open`, `forced_closed`); `reason` is one of:
///
/// | reason | the transition |
/// |---|---|
/// | `tripped by consecutive_failures` | `threshold` failures in a row opened it |
/// | `tripped by failure_rate` | the window's failure rate reached `failure_rate` |
/// | `tripped by slow_call_rate` | the window's slow-call rate reached `slow_call_rate` |
/// | `tripped by latency_p99` | the window's p99 latency passed `latency_p99_ms` |
/// | `open_elapsed` | the open duration passed and a claim became the first probe |
/// | `probe_failed` | a probe failed: half-open to open |
/// | `probes_succeeded` | `successes_to_close` probes succeeded: half-open to closed |
/// | `lease reclaimed from N probe(s)` | every probe overran `probe_timeout_ms`; a claim took their slots back |
/// | `forced_open` | [`Breaker::force_open`](crate::Breaker::force_open) |
/// | `forced_closed` | [`Breaker::force_closed`](crate::Breaker::force_closed) |
/// | `reset` | [`Breaker::reset`](crate::Breaker::reset) |
/// | `fleet_open` | another instance's open, through a fleet agent |
/// | `fleet_close` | another instance's close, through a fleet agent |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step(pub Transition);

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.0;
        write!(f, "{} -> {} ({})", t.from, t.to, t.reason)
    }
}

impl TestKit {
    /// Asserts that `group` went through exactly the transitions `expected`,
    /// in order, each written `from -> to (reason)` (see [`Step`]).
    ///
    /// # Panics
    ///
    /// When they differ, with both lists side by side and the first
    /// difference marked:
    ///
    /// ```text
    /// group `payments` went through other transitions than expected (first difference at 2):
    ///     expected                                         | went through
    ///   1 closed -> open (tripped by consecutive_failures) | closed -> open (tripped by consecutive_failures)
    /// > 2 open -> half_open (open_elapsed)                 | (nothing)
    /// ```
    #[track_caller]
    pub fn assert_transitions(&self, group: &str, expected: &[&str]) {
        let actual: Vec<String> = self
            .transitions(group)
            .into_iter()
            .map(|t| Step(t).to_string())
            .collect();
        if let Some(message) = difference(group, expected, &actual) {
            panic!("{message}");
        }
    }
}

/// The table of `expected` against `actual`, or `None` when they agree.
fn difference(group: &str, expected: &[&str], actual: &[String]) -> Option<String> {
    let first = (0..expected.len().max(actual.len()))
        .find(|&i| expected.get(i).copied() != actual.get(i).map(String::as_str))?;
    let none = "(nothing)";
    let width = expected
        .iter()
        .map(|e| e.len())
        .chain([none.len(), "expected".len()])
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "group `{group}` went through other transitions than expected (first difference at {}):\n",
        first + 1
    );
    let _ = writeln!(out, "     {:width$} | went through", "expected");
    for i in 0..expected.len().max(actual.len()) {
        let mark = if i == first { '>' } else { ' ' };
        let e = expected.get(i).copied().unwrap_or(none);
        let a = actual.get(i).map(String::as_str).unwrap_or(none);
        let _ = writeln!(out, "{mark} {:>2} {e:width$} | {a}", i + 1);
    }
    Some(out)
}
