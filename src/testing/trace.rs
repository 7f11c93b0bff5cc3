//! Outcome traces: what a group's calls did (a [`Trace`] of [`Sample`]s and
//! the transitions they caused), kept by a [`Recorder`] and written and read
//! as JSON Lines.
//!
//! # The format
//!
//! One JSON object a line. The first line names the trace:
//!
//! ```text
//! {"trace":"breakerbox","version":1,"group":"search"}
//! ```
//!
//! Each later line is a call or a transition, in the order they happened;
//! times are nanoseconds since the recording began:
//!
//! ```text
//! {"at_ns":1000000,"outcome":"failure","latency_ns":250000000,"key":"eu-1"}
//! {"at_ns":1250000000,"transition":"closed -> open (tripped by consecutive_failures)","key":"eu-1"}
//! {"at_ns":1300000000,"outcome":"refused","latency_ns":0}
//! ```
//!
//! `at_ns` is when the call was claimed (or the transition happened),
//! `latency_ns` how long it ran until its outcome, `key` (left out for an
//! unkeyed group) the key of a keyed group's call. `outcome` is `success`,
//! `failure`, `ignored` (an error the classifier ignores: neither),
//! `held` (the dependency asked every caller to wait, for `wait_ns`, and the
//! call held the breaker: `{"at_ns":0,"outcome":"held","latency_ns":1000000,"wait_ns":5000000000}`),
//! or `refused` (the breaker refused the call, so the dependency's answer is
//! unknown). A `transition` is written `from -> to (reason)` as
//! [`Step`] writes it. Unknown fields are ignored.

use std::fmt;
use std::io::{self, BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_core::events::Event;
use breaker_core::{Registry, Subscription};

use super::{lock, Step};

/// What one call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A success.
    Success,
    /// A failure (a timeout is one).
    Failure,
    /// Neither: an error the classifier ignores.
    Ignored,
    /// The breaker refused the call: the dependency was not asked.
    Refused,
    /// The dependency answered "wait this long" (a `429` with
    /// `Retry-After`): the call [held](breaker_core::Breaker::hold) its
    /// breaker, neither success nor failure.
    Held(Duration),
}

impl Outcome {
    /// `success`, `failure`, `ignored`, `refused` or `held` (whose wait a
    /// trace writes apart, as `wait_ns`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Ignored => "ignored",
            Outcome::Refused => "refused",
            Outcome::Held(_) => "held",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [
            Outcome::Success,
            Outcome::Failure,
            Outcome::Ignored,
            Outcome::Refused,
        ]
        .into_iter()
        .find(|o| o.as_str() == text)
    }
}

/// One call of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// When it was claimed, since the recording began.
    pub at: Duration,
    /// What it did.
    pub outcome: Outcome,
    /// How long it ran until its outcome.
    pub latency: Duration,
    /// Its key, for a keyed group.
    pub key: Option<String>,
}

/// One transition of a trace or a replay's timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// When, since the recording (or the replay) began.
    pub at: Duration,
    /// `from -> to (reason)`, as [`Step`] writes it.
    pub step: String,
    /// The key whose breaker changed, for a keyed group.
    pub key: Option<String>,
}

/// A group's calls and the transitions they caused, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// The group recorded.
    pub group: String,
    /// Its calls, by `at`.
    pub samples: Vec<Sample>,
    /// Its transitions as they happened, by `at`.
    pub changes: Vec<Change>,
}

/// A line of a trace file that is no trace.
#[derive(Debug)]
pub enum TraceError {
    /// The file could not be read or written.
    Io(io::Error),
    /// Line `line` (from 1) is not what the format says: `why`.
    Line {
        /// The line's number, from 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io(_) => f.write_str("cannot read or write the trace"),
            TraceError::Line { line, why } => write!(f, "trace line {line}: {why}"),
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TraceError::Io(e) => Some(e),
            TraceError::Line { .. } => None,
        }
    }
}

impl From<io::Error> for TraceError {
    fn from(e: io::Error) -> Self {
        TraceError::Io(e)
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Trace {
    /// Writes the trace as JSON Lines (see [the module docs](self)): the
    /// samples and changes merged by time, a change after the samples of the
    /// same instant.
    pub fn write_jsonl(&self, mut out: impl Write) -> io::Result<()> {
        let text = |s: &str| serde_json::Value::from(s).to_string();
        writeln!(
            out,
            r#"{{"trace":"breakerbox","version":1,"group":{}}}"#,
            text(&self.group)
        )?;
        let key = |k: &Option<String>| match k {
            Some(k) => format!(r#","key":{}"#, text(k)),
            None => String::new(),
        };
        let (mut s, mut c) = (
            self.samples.iter().peekable(),
            self.changes.iter().peekable(),
        );
        loop {
            let sample_first = match (s.peek(), c.peek()) {
                (Some(a), Some(b)) => a.at <= b.at,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return Ok(()),
            };
            if sample_first {
                let a = s.next().expect("peeked");
                let wait = match a.outcome {
                    Outcome::Held(wait) => format!(r#","wait_ns":{}"#, nanos(wait)),
                    _ => String::new(),
                };
                writeln!(
                    out,
                    r#"{{"at_ns":{},"outcome":"{}","latency_ns":{}{wait}{}}}"#,
                    nanos(a.at),
                    a.outcome.as_str(),
                    nanos(a.latency),
                    key(&a.key)
                )?;
            } else {
                let b = c.next().expect("peeked");
                writeln!(
                    out,
                    r#"{{"at_ns":{},"transition":{}{}}}"#,
                    nanos(b.at),
                    text(&b.step),
                    key(&b.key)
                )?;
            }
        }
    }

    /// Reads a trace written as JSON Lines (see [the module docs](self)).
    /// Blank lines are skipped.
    ///
    /// ```
    /// use breakerbox::testing::trace::{Outcome, Trace};
    ///
    /// let text = r#"{"trace":"breakerbox","version":1,"group":"db"}
    /// {"at_ns":5,"outcome":"failure","latency_ns":2}
    /// "#;
    /// let trace = Trace::read_jsonl(text.as_bytes())?;
    /// assert_eq!((trace.group.as_str(), trace.samples[0].outcome), ("db", Outcome::Failure));
    /// let mut again = Vec::new();
    /// trace.write_jsonl(&mut again)?;
    /// assert_eq!(Trace::read_jsonl(&again[..])?, trace);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_jsonl(input: impl BufRead) -> Result<Trace, TraceError> {
        let mut trace: Option<Trace> = None;
        for (n, line) in input.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let bad = |why: &str| TraceError::Line {
                line: n + 1,
                why: why.to_owned(),
            };
            let value: serde_json::Value =
                serde_json::from_str(&line).map_err(|e| bad(&format!("not JSON: {e}")))?;
            let Some(trace) = trace.as_mut() else {
                if value["trace"] != "breakerbox" || value["version"] != 1 {
                    return Err(bad(
                        r#"the first line must be {"trace":"breakerbox","version":1,"group":..}"#,
                    ));
                }
                let group = value["group"]
                    .as_str()
                    .ok_or_else(|| bad("the first line has no `group`"))?;
                trace = Some(Trace {
                    group: group.to_owned(),
                    ..Trace::default()
                });
                continue;
            };
            let at = value["at_ns"]
                .as_u64()
                .map(Duration::from_nanos)
                .ok_or_else(|| bad("no `at_ns` (an integer of nanoseconds)"))?;
            let key = match &value["key"] {
                serde_json::Value::Null => None,
                serde_json::Value::String(k) => Some(k.clone()),
                _ => return Err(bad("`key` must be a string")),
            };
            if let Some(step) = value["transition"].as_str() {
                trace.changes.push(Change {
                    at,
                    step: step.to_owned(),
                    key,
                });
                continue;
            }
            let outcome = match value["outcome"].as_str() {
                Some("held") => Outcome::Held(
                    value["wait_ns"]
                        .as_u64()
                        .map(Duration::from_nanos)
                        .ok_or_else(|| bad("a `held` outcome needs `wait_ns` (an integer of nanoseconds)"))?,
                ),
                text => text.and_then(Outcome::parse).ok_or_else(|| {
                    bad("neither a `transition` nor an `outcome` of success, failure, ignored, held or refused")
                })?,
            };
            let latency = value["latency_ns"]
                .as_u64()
                .map(Duration::from_nanos)
                .ok_or_else(|| bad("no `latency_ns` (an integer of nanoseconds)"))?;
            trace.samples.push(Sample {
                at,
                outcome,
                latency,
                key,
            });
        }
        trace.ok_or_else(|| TraceError::Line {
            line: 1,
            why: "the trace is empty".to_owned(),
        })
    }
}

/// Keeps a trace of one group of a registry: its transitions, told by the
/// registry as a subscriber, and the calls the application samples
/// ([`sample`](Self::sample)), stamped with the registry's clock. At most
/// `capacity` samples are kept, so memory and the written file stay bounded;
/// later ones are counted in [`dropped`](Self::dropped) and not kept.
///
/// ```
/// use breakerbox::testing::trace::{Outcome, Recorder};
/// use breakerbox::{Config, ManualClock, Registry};
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let clock = ManualClock::new();
/// let registry = Arc::new(Registry::with_clock(clock.clone()));
/// let recorder = Recorder::new(&registry, "db", 10_000);
/// let breaker = registry.breaker("db", &Config::builder().threshold(1).build()?);
/// let permit = breaker.try_acquire()?;
/// clock.advance(Duration::from_millis(20));
/// permit.failure();
/// recorder.sample(Duration::ZERO, Outcome::Failure, Duration::from_millis(20), None);
/// let trace = recorder.trace();
/// assert_eq!(trace.samples.len(), 1);
/// assert_eq!(trace.changes[0].step, "closed -> open (tripped by consecutive_failures)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Recorder {
    shared: Arc<Mutex<Recording>>,
    origin: u64,
    registry_clock: Arc<dyn Fn() -> u64 + Send + Sync>,
    _subscription: Subscription,
}

struct Recording {
    trace: Trace,
    capacity: usize,
    dropped: u64,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let recording = lock(&self.shared);
        f.debug_struct("Recorder")
            .field("group", &recording.trace.group)
            .field("samples", &recording.trace.samples.len())
            .field("dropped", &recording.dropped)
            .finish()
    }
}

impl Recorder {
    /// Starts recording `group` of `registry` now, keeping at most
    /// `capacity` samples. (For a [`TestKit`](super::TestKit)'s registry,
    /// [`TestKit::recorder`](super::TestKit::recorder).)
    pub fn new(registry: &Arc<Registry>, group: &str, capacity: usize) -> Self {
        let weak = Arc::downgrade(registry);
        Self::on(
            registry,
            group,
            capacity,
            Arc::new(move || weak.upgrade().map_or(0, |r| r.clock_nanos())),
        )
    }

    /// Records `group` of `registry`, whose time `now` reads.
    pub(super) fn on(
        registry: &Registry,
        group: &str,
        capacity: usize,
        now: Arc<dyn Fn() -> u64 + Send + Sync>,
    ) -> Self {
        let origin = registry.clock_nanos();
        let shared = Arc::new(Mutex::new(Recording {
            trace: Trace {
                group: group.to_owned(),
                ..Trace::default()
            },
            capacity,
            dropped: 0,
        }));
        let (sink, clock, name) = (shared.clone(), now.clone(), group.to_owned());
        let subscription = registry.subscribe(move |event: &Event| {
            let (key, transition) = match event {
                Event::Transition(t) => (None, *t),
                Event::KeyedTransition(k) => (Some(k.key.to_string()), k.transition),
                _ => return,
            };
            if transition.group != name {
                return;
            }
            lock(&sink).trace.changes.push(Change {
                at: Duration::from_nanos(clock().saturating_sub(origin)),
                step: Step(transition).to_string(),
                key,
            });
        });
        Recorder {
            shared,
            origin,
            registry_clock: now,
            _subscription: subscription,
        }
    }

    /// The registry's time since the recording began: the `at` of a call
    /// claimed now.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos((self.registry_clock)().saturating_sub(self.origin))
    }

    /// Samples one call: claimed at `at` (see [`elapsed`](Self::elapsed)),
    /// with `outcome` after `latency`.
    pub fn sample(&self, at: Duration, outcome: Outcome, latency: Duration, key: Option<&str>) {
        let mut recording = lock(&self.shared);
        if recording.trace.samples.len() >= recording.capacity {
            recording.dropped += 1;
            return;
        }
        recording.trace.samples.push(Sample {
            at,
            outcome,
            latency,
            key: key.map(str::to_owned),
        });
    }

    /// Samples not kept because the recorder was full.
    pub fn dropped(&self) -> u64 {
        lock(&self.shared).dropped
    }

    /// The trace so far, its samples sorted by `at`.
    pub fn trace(&self) -> Trace {
        let mut trace = lock(&self.shared).trace.clone();
        trace.samples.sort_by_key(|s| s.at);
        trace
    }
}
