//! The demo's timeline: runs each call, reads what its breaker did from the
//! breaker's own metrics, prints one aligned row, and keeps the rows to check.

use std::fmt::Display;
use std::future::Future;
use std::time::{Duration, Instant};

use breakerbox::{metrics::Metrics, State};

use crate::upstream::Upstream;

/// What the breaker did with one call, as its metrics tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Closed: the call ran and its outcome counted.
    Ran,
    /// Closed: the call ran and the classifier ignored its error.
    Ignored,
    /// Refused, and the fallback answered instead.
    Fallback,
    /// Refused: the caller got `CircuitOpen`.
    Refused,
    /// Half-open: the call went through as a probe, and succeeded.
    ProbeOk,
    /// Half-open: the call went through as a probe, and failed.
    ProbeFailed,
    /// Closed and ramping: not this call's turn, the fallback answered.
    Ramped,
    /// Closed: the call failed, was retried, and its last attempt's result
    /// is the answer.
    Retried,
    /// Closed: the call failed and the retry budget was spent, so no retry
    /// was made and the call ended at once with its own error.
    BudgetSpent,
    /// The server asked every caller to wait: the call held its group,
    /// and counted as neither success nor failure.
    Held,
    /// Refused by a hold: the caller got `CircuitOpen` with the time left.
    HeldBack,
}

impl Action {
    fn label(self) -> &'static str {
        match self {
            Action::Ran => "ran",
            Action::Ignored => "ran, ignored",
            Action::Fallback => "fallback",
            Action::Refused => "refused",
            Action::ProbeOk => "probe: ok",
            Action::ProbeFailed => "probe: failed",
            Action::Ramped => "ramping",
            Action::Retried => "retried",
            Action::BudgetSpent => "budget spent",
            Action::Held => "held",
            Action::HeldBack => "held back",
        }
    }

    /// Whether the call was let through to the server.
    pub fn admitted(self) -> bool {
        !matches!(
            self,
            Action::Fallback | Action::Refused | Action::Ramped | Action::HeldBack
        )
    }
}

/// One call on the timeline.
#[derive(Clone, Debug)]
pub struct Step {
    pub group: &'static str,
    pub action: Action,
    /// Requests the server received during the call.
    pub server_requests: u64,
    /// Attempts the breaker recorded for the call (its `calls` moved by this).
    pub attempts: u64,
    /// Whether the caller got `Ok`.
    pub ok: bool,
    /// The breaker's state after the call.
    pub state: State,
}

/// What a burst of calls ([`Timeline::burst`]) did, as the server and the
/// breaker's metrics tell.
#[derive(Clone, Debug)]
pub struct Burst {
    /// Requests the server received during the burst.
    pub server_requests: u64,
    /// Attempts the breaker recorded (its `calls` moved by this).
    pub attempts: u64,
    /// Retries made (`retries` moved by this).
    pub retries: u64,
    /// Retries the budget refused (`retries_budget_exhausted` moved by this).
    pub budget_exhausted: u64,
    /// Per call, in the order given: the requests its path received, and
    /// whether the caller got `Ok`.
    pub ends: Vec<(u64, bool)>,
}

/// The timeline being printed.
pub struct Timeline<'u> {
    upstream: &'u Upstream,
    started: Instant,
    pub steps: Vec<Step>,
}

const HEADER: &str =
    "   t ms  call               breaker did    server  result                                state after";
/// Width of the rules under which the phases print.
const WIDTH: usize = 110;

impl<'u> Timeline<'u> {
    pub fn new(upstream: &'u Upstream) -> Self {
        Timeline {
            upstream,
            started: Instant::now(),
            steps: Vec::new(),
        }
    }

    /// Prints a section rule with a title.
    pub fn rule(title: &str) {
        let rule = "-".repeat(WIDTH.saturating_sub(title.len() + 4));
        println!("\n-- {title} {rule}");
    }

    /// Prints a phase header.
    pub fn phase(&self, title: &str, what: &str) {
        Self::rule(title);
        for line in what.lines() {
            println!("   {line}");
        }
        println!("\n{HEADER}");
    }

    /// Prints a line between rows (a pause, a switch of the server).
    pub fn note(&self, text: &str) {
        println!("   {:>4}  ({text})", self.elapsed_ms());
    }

    /// Sleeps for `pause`, saying so on the timeline.
    pub async fn wait(&self, pause: Duration, why: &str) {
        self.note(&format!("waiting {} ms: {why}", pause.as_millis()));
        tokio::time::sleep(pause).await;
    }

    /// Runs one call of `group` and prints its row: the result, what the
    /// breaker did, and its state after.
    pub async fn call<T: Display, E: Display>(
        &mut self,
        label: &str,
        group: &'static str,
        call: impl Future<Output = Result<T, E>>,
    ) {
        let before = metrics(group);
        let requests_before = self.upstream.requests();
        let result = call.await;
        let server_requests = self.upstream.requests() - requests_before;
        let after = metrics(group).expect("the call created its group's breaker");
        let action = action(before.as_ref(), &after, result.is_ok());
        let attempts = after.calls - before.as_ref().map_or(0, |m| m.calls);
        let outcome = match &result {
            Ok(value) => format!("ok   {value}"),
            Err(error) => format!("err  {error}"),
        };
        let server = match server_requests {
            0 => "-".to_owned(),
            n => format!("{n} req"),
        };
        println!(
            "  {:>5}  {:<17}  {:<13}  {:>6}  {:<36}  {}",
            self.elapsed_ms(),
            label,
            action.label(),
            server,
            clip(&outcome, 36),
            state_after(group, &after),
        );
        if let Some(change) = change(group, before.as_ref(), &after) {
            println!("{:>44}=> {change}", "");
        }
        self.steps.push(Step {
            group,
            action,
            server_requests,
            attempts,
            ok: result.is_ok(),
            state: after.state,
        });
    }

    /// Runs `calls` of `group` all at once, each `(path, call)` sending one
    /// request to `path` per attempt, and prints one row per kind of ending:
    /// how many calls ended so, the requests the server got from each, and
    /// their result. A burst is of failing calls that each ask for a retry, so
    /// a call the server saw once is shown as `budget spent` (the caller checks
    /// those against the breaker's `retries_budget_exhausted`, in the result).
    pub async fn burst<T: Display, E: Display, F: Future<Output = Result<T, E>>>(
        &mut self,
        label: &str,
        group: &'static str,
        calls: Vec<(String, F)>,
    ) -> Burst {
        let before = metrics(group);
        let requests_before = self.upstream.requests();
        let (paths, futures): (Vec<String>, Vec<F>) = calls.into_iter().unzip();
        let results = futures_util::future::join_all(futures).await;
        let after = metrics(group).expect("the burst created its group's breaker");
        let delta = |f: fn(&Metrics) -> u64| f(&after) - before.as_ref().map_or(0, f);
        let burst = Burst {
            server_requests: self.upstream.requests() - requests_before,
            attempts: delta(|m| m.calls),
            retries: delta(|m| m.retries),
            budget_exhausted: delta(|m| m.retries_budget_exhausted),
            ends: paths
                .iter()
                .zip(&results)
                .map(|(path, result)| (self.upstream.requests_to(path), result.is_ok()))
                .collect(),
        };
        println!("  {:>5}  {label}", self.elapsed_ms());
        // One row per (requests, result), fewest requests first.
        let mut kinds: Vec<(u64, String, usize)> = Vec::new();
        for ((requests, _), result) in burst.ends.iter().zip(&results) {
            let outcome = match result {
                Ok(value) => format!("ok   {value}"),
                Err(error) => format!("err  {error}"),
            };
            match kinds
                .iter_mut()
                .find(|k| k.0 == *requests && k.1 == outcome)
            {
                Some(kind) => kind.2 += 1,
                None => kinds.push((*requests, outcome, 1)),
            }
        }
        kinds.sort();
        for (requests, outcome, count) in kinds {
            let did = if requests > 1 {
                Action::Retried
            } else {
                Action::BudgetSpent
            };
            println!(
                "  {:>5}  {:<17}  {:<13}  {:>6}  {}",
                "",
                format!("{count} of them"),
                did.label(),
                format!("{requests} req"),
                clip(&outcome, 36),
            );
        }
        println!("{:>44}=> {}", "", state_after(group, &after));
        burst
    }

    fn elapsed_ms(&self) -> u128 {
        self.started.elapsed().as_millis()
    }
}

fn metrics(group: &str) -> Option<Metrics> {
    breakerbox::registry().get(group).map(|b| b.metrics())
}

fn action(before: Option<&Metrics>, after: &Metrics, ok: bool) -> Action {
    let delta = |f: fn(&Metrics) -> u64| f(after) - before.map_or(0, f);
    if delta(|m| m.retries_budget_exhausted) > 0 {
        Action::BudgetSpent
    } else if delta(|m| m.retries) > 0 {
        Action::Retried
    } else if delta(|m| m.ramp_refused) > 0 {
        Action::Ramped
    } else if delta(|m| m.holds.key + m.holds.group) > 0 {
        Action::Held
    } else if delta(|m| m.rejected) > 0 && !ok && after.held.is_some() {
        Action::HeldBack
    } else if delta(|m| m.rejected) > 0 {
        if ok {
            Action::Fallback
        } else {
            Action::Refused
        }
    } else if delta(|m| m.probes_succeeded) > 0 {
        Action::ProbeOk
    } else if delta(|m| m.probes_failed) > 0 {
        Action::ProbeFailed
    } else if delta(|m| m.ignored) > 0 {
        Action::Ignored
    } else {
        Action::Ran
    }
}

fn state_after(group: &str, m: &Metrics) -> String {
    if let Some(held) = &m.held {
        return format!("closed, held ({} ms left)", held.remaining.as_millis());
    }
    match m.state {
        State::Closed if m.consecutive_failures > 0 => {
            format!(
                "closed ({}/{} failures)",
                m.consecutive_failures,
                threshold(group)
            )
        }
        State::Closed if m.ramp.is_some() => format!(
            "closed, ramping ({:.0}% let through)",
            100.0 * m.admitted_share()
        ),
        State::Open => match m.retry_after {
            Some(left) => format!("open (probe in {} ms)", left.as_millis()),
            None => "open".to_owned(),
        },
        state => state.as_str().to_owned(),
    }
}

fn threshold(group: &str) -> u32 {
    breakerbox::registry()
        .get(group)
        .map_or(0, |b| b.config().threshold())
}

/// A sentence for a transition the call caused, if any.
fn change(group: &str, before: Option<&Metrics>, after: &Metrics) -> Option<String> {
    let was = before.map_or(State::Closed, |m| m.state);
    let opened = after.times_opened - before.map_or(0, |m| m.times_opened);
    let open_for = || {
        after
            .retry_after
            .map_or(String::new(), |d| format!(" for {} ms", d.as_millis()))
    };
    match (was, after.state) {
        (State::Closed, State::Open) => Some(format!(
            "circuit opened: {} consecutive failures; calls are refused{}",
            threshold(group),
            open_for()
        )),
        (_, State::Open) if opened > 0 => Some(format!(
            "the probe failed: circuit reopened, backing off{}",
            open_for()
        )),
        (State::Open | State::HalfOpen, State::Closed) => Some(match after.ramp {
            Some(ramp) => format!(
                "the probe succeeded: circuit closed, traffic ramps back in over {} ms",
                ramp.length.as_millis()
            ),
            None => "the probe succeeded: circuit closed, traffic flows again".to_owned(),
        }),
        _ => None,
    }
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut clipped: String = text.chars().take(width - 3).collect();
    clipped.push_str("...");
    clipped
}
