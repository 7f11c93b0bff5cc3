//! The errors a protected call can meet: [`CircuitOpen`] when the breaker refuses,
//! and [`CallError`] when a closure run through [`Breaker::call`](crate::Breaker::call)
//! can fail either way.

use std::fmt;
use std::time::Duration;

use crate::hold::HoldScope;

/// Why the breaker refused a claim: every refusal, not only an open circuit.
///
/// A refusal is one of these steps saying no: the circuit is open (by its
/// own trip, the fleet's, or an operator's force), half-open with every probe
/// slot taken, the group's bulkhead is full, a ramp after a close holds
/// the call back, the adaptive throttle sheds it, or a hold (the server
/// asked to wait) keeps it back. Each comes back as the same error, [`CircuitOpen`], with
/// its reason and an honest `retry_after`; none is a failure of the
/// dependency, none is retried, and a fallback answers each. The enum is
/// `#[non_exhaustive]`: a new step of admission adds a reason, not an error
/// type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OpenReason {
    /// The circuit is open and its open duration has not passed.
    Open,
    /// The circuit is half-open and every probe slot is taken.
    HalfOpenFull,
    /// The circuit is open because the fleet says so: another instance tripped
    /// (or a fleet probe failed), and a fleet agent opened this breaker for the
    /// time the fleet's open has left ([`FleetControl::fleet_open`](crate::fleet::FleetControl::fleet_open)).
    /// `retry_after` is that time, plus any time the agent holds it while the
    /// fleet decides which instance probes.
    Fleet,
    /// The circuit was forced open by hand.
    ForcedOpen,
    /// The group's bulkhead (`max_concurrent`) is full: that many calls are in
    /// flight. Not a failure of the dependency, and the breaker's state did not
    /// move; `retry_after` is `None` (a slot frees when a call ends).
    BulkheadFull,
    /// The circuit closed a moment ago and ramps its traffic back in
    /// (`ramp_ms`): the share of calls admitted has not reached this one yet.
    /// Not a failure of the dependency. `retry_after` is the time until a call
    /// made then, with none between, would be admitted (zero when the next
    /// call would be); at most the time the ramp has left.
    Ramping,
    /// The group's adaptive throttle (`throttle`) refused the call: the
    /// dependency accepted too few of the calls of the throttle's window, and
    /// this one fell in the share the client sheds itself. The breaker's state
    /// did not move, and the refusal is the client's own decision: no retry
    /// layer retries it. `retry_after` is the time until the throttle's window
    /// drops its oldest slice (at most a tenth of `throttle_window_ms`); the
    /// credit may admit the next call before that.
    Throttled,
    /// The server asked every caller to wait (a `429` or `503` with
    /// `Retry-After`, a gRPC `RESOURCE_EXHAUSTED`, the app's own hint) and the
    /// breaker holds its calls back until then ([`Breaker::hold`](crate::Breaker::hold)):
    /// not a failure of the dependency, and no open circuit. The scope says
    /// whether the hold is the key's or the whole group's. `retry_after` is the
    /// time the hold has left (or, when the circuit is also open, the later of
    /// the two ends).
    Held(HoldScope),
    /// The call's keyed group is open as one (`systemic_share` or
    /// `max_open_keys`): a fault shared by its keys, not this key's. Every
    /// key is refused while it is, and one probe at a time goes for the whole
    /// group; `retry_after` is the time until that probe may go.
    Group,
}

impl OpenReason {
    /// A short snake_case label, spelled as [`State::as_str`](crate::State::as_str)
    /// spells states: `"open"`, `"half_open_full"`, `"forced_open"`,
    /// `"fleet_open"`, `"bulkhead_full"`, `"ramping"`, `"throttled"`, `"held"` (the
    /// scope is [`HoldScope::as_str`]), `"group_open"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            OpenReason::Open => "open",
            OpenReason::HalfOpenFull => "half_open_full",
            OpenReason::ForcedOpen => "forced_open",
            OpenReason::Fleet => "fleet_open",
            OpenReason::BulkheadFull => "bulkhead_full",
            OpenReason::Ramping => "ramping",
            OpenReason::Throttled => "throttled",
            OpenReason::Held(_) => "held",
            OpenReason::Group => "group_open",
        }
    }
}

/// The breaker refused a call, and the wrapped function did not run: the one
/// error of every refusal, whatever refused it ([`reason`](Self::reason)),
/// not only an open circuit. It is named after the commonest one; a full
/// bulkhead ([`OpenReason::BulkheadFull`]) or a ramp ([`OpenReason::Ramping`])
/// refuses with it on a closed circuit too.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Breaker, Config, OpenReason};
///
/// let breaker = Breaker::new("payments", Config::default());
/// breaker.force_open();
/// let refused = breaker.try_acquire().unwrap_err();
/// assert_eq!(refused.group(), "payments");
/// assert_eq!(refused.reason(), OpenReason::ForcedOpen);
/// assert_eq!(refused.to_string(), "circuit `payments` is forced open");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitOpen {
    group: &'static str,
    reason: OpenReason,
    retry_after: Option<Duration>,
}

impl CircuitOpen {
    pub(crate) fn new(group: &'static str, reason: OpenReason, retry_after: Option<u64>) -> Self {
        CircuitOpen {
            group,
            reason,
            retry_after: retry_after.map(Duration::from_nanos),
        }
    }

    /// The group of the breaker that refused.
    pub fn group(&self) -> &'static str {
        self.group
    }

    /// Why it refused.
    pub fn reason(&self) -> OpenReason {
        self.reason
    }

    /// How long until a call may be admitted: for an open circuit, the rest of
    /// the open duration; when every probe slot is taken, the time until the
    /// probes' lease runs out; for a ramp, the time until a call would be
    /// admitted; for a hold, the time it has left (see [`OpenReason`] for each). `None` when forced open (only a
    /// person can close it) and for a full bulkhead (a slot frees when a call
    /// ends).
    ///
    /// On the default clock it is an upper bound, at most one kernel tick longer
    /// than the exact time left, never shorter ([the coarse
    /// reading](crate#the-coarse-reading)): a caller that waits `retry_after`
    /// finds the probe slot ready.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

impl fmt::Display for CircuitOpen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            OpenReason::Open => write!(f, "circuit `{}` is open", self.group)?,
            OpenReason::HalfOpenFull => write!(
                f,
                "circuit `{}` is half-open and every probe slot is taken",
                self.group
            )?,
            OpenReason::Fleet => write!(f, "circuit `{}` is open across the fleet", self.group)?,
            OpenReason::Group => write!(
                f,
                "keyed group `{}` is open as one: a fault its keys share",
                self.group
            )?,
            OpenReason::Ramping => write!(
                f,
                "circuit `{}` is ramping its traffic back in after closing",
                self.group
            )?,
            OpenReason::Throttled => write!(
                f,
                "group `{}` throttles its calls: its dependency accepts too few of them",
                self.group
            )?,
            OpenReason::Held(scope) => write!(
                f,
                "circuit `{}` holds its calls: the server asked to wait ({scope} scope)",
                self.group
            )?,
            OpenReason::ForcedOpen => return write!(f, "circuit `{}` is forced open", self.group),
            OpenReason::BulkheadFull => {
                return write!(
                    f,
                    "group `{}` has its `max_concurrent` calls in flight",
                    self.group
                )
            }
        }
        if let Some(after) = self.retry_after {
            write!(f, "; retry after {after:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CircuitOpen {}

/// Lets a fn returning `io::Result` use `#[circuit_breaker]` without a fallback:
/// a refusal becomes an [`io::Error`](std::io::Error) of kind `Other` that
/// downcasts back to the `CircuitOpen`.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Breaker, CircuitOpen, Config};
///
/// let breaker = Breaker::new("disk", Config::default());
/// breaker.force_open();
/// let err = std::io::Error::from(breaker.try_acquire().unwrap_err());
/// assert_eq!(err.kind(), std::io::ErrorKind::Other);
/// let open = err.get_ref().and_then(|e| e.downcast_ref::<CircuitOpen>()).unwrap();
/// assert_eq!(open.group(), "disk");
/// ```
impl From<CircuitOpen> for std::io::Error {
    fn from(open: CircuitOpen) -> Self {
        std::io::Error::other(open)
    }
}

/// A call ran past its group's `timeout_ms`: its future was dropped and the call
/// counted as a failure. Its own type (not a [`CircuitOpen`]): the call was
/// admitted and ran, and the dependency is what was too slow.
///
/// `#[circuit_breaker(timeout_ms = ..)]` needs the fn to return `Result<_, E>`
/// with `E: From<TimedOut>`, unless its fallback answers failures
/// (`fallback_on = "failure"`), timeouts among them.
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::TimedOut;
///
/// let late = TimedOut::new("search", Duration::from_millis(250));
/// assert_eq!(late.group(), "search");
/// assert_eq!(late.after(), Duration::from_millis(250));
/// assert_eq!(late.to_string(), "call of group `search` timed out after 250ms");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedOut {
    group: &'static str,
    after: Duration,
}

impl TimedOut {
    /// A timeout of a call of `group` after `after`.
    pub fn new(group: &'static str, after: Duration) -> Self {
        TimedOut { group, after }
    }

    /// The group of the call.
    pub fn group(&self) -> &'static str {
        self.group
    }

    /// The deadline the call overran.
    pub fn after(&self) -> Duration {
        self.after
    }
}

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "call of group `{}` timed out after {:?}",
            self.group, self.after
        )
    }
}

impl std::error::Error for TimedOut {}

/// A timeout as an [`io::Error`](std::io::Error) of kind `TimedOut` that
/// downcasts back to the [`TimedOut`].
impl From<TimedOut> for std::io::Error {
    fn from(late: TimedOut) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, late)
    }
}

/// Why a fallback was called: what `#[circuit_breaker(fallback = path(why))]`
/// passes its fallback as the last argument.
///
/// `E` is the guarded fn's own error type. A fallback that answers refusals
/// only (the default `fallback_on = "refusal"`) only ever sees
/// [`Refused`](Fallback::Refused); with `fallback_on = "failure"` it also sees
/// [`TimedOut`](Fallback::TimedOut) and [`Failed`](Fallback::Failed), never an
/// error the classifier ignores. By the time a fallback runs, the breaker has
/// recorded the call's outcome: what the fallback returns is never counted.
///
/// The `#[circuit_breaker]` page shows each form with the attribute; a
/// fallback taking it decides by the variant:
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{Breaker, Config, Fallback, OpenReason};
///
/// fn cached(id: u32, why: Fallback<std::io::Error>) -> Result<String, std::io::Error> {
///     match why {
///         // A full bulkhead is load shedding: say so instead of serving stale data.
///         Fallback::Refused(open) if open.reason() == OpenReason::BulkheadFull => Err(open.into()),
///         Fallback::Refused(_) => Ok(format!("cached {id} (circuit open)")),
///         Fallback::Failed(error) => Ok(format!("cached {id} (after: {error})")),
///         _ => Ok(format!("cached {id}")),
///     }
/// }
///
/// let breaker = Breaker::new("docs-why", Config::default());
/// breaker.force_open();
/// let why = Fallback::Refused(breaker.try_acquire().unwrap_err());
/// assert_eq!(cached(7, why).unwrap(), "cached 7 (circuit open)");
/// let why = Fallback::Failed(std::io::Error::other("reset"));
/// assert_eq!(cached(7, why).unwrap(), "cached 7 (after: reset)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fallback<E> {
    /// The breaker (or the group's bulkhead) refused: the body did not run.
    /// [`CircuitOpen::reason`] tells which refusal it was.
    Refused(CircuitOpen),
    /// The call ran past the group's `timeout_ms` and was dropped (async fns,
    /// `fallback_on = "failure"` only).
    TimedOut(TimedOut),
    /// The call ran and returned an error its classifier counts as a failure
    /// (`fallback_on = "failure"` only).
    Failed(E),
}

impl<E> Fallback<E> {
    /// Whether the body never ran: the breaker or the bulkhead refused.
    pub fn is_refused(&self) -> bool {
        matches!(self, Fallback::Refused(_))
    }

    /// The call's own error, if it ran and failed.
    pub fn into_failed(self) -> Option<E> {
        match self {
            Fallback::Failed(error) => Some(error),
            Fallback::Refused(_) | Fallback::TimedOut(_) => None,
        }
    }
}

/// A message of its own; the refusal, the timeout or the call's error is the
/// [`source`](std::error::Error::source).
impl<E> fmt::Display for Fallback<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fallback::Refused(_) => "the call was refused",
            Fallback::TimedOut(_) => "the call timed out",
            Fallback::Failed(_) => "the call failed",
        })
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Fallback<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Fallback::Refused(open) => Some(open),
            Fallback::TimedOut(late) => Some(late),
            Fallback::Failed(e) => Some(e),
        }
    }
}

/// The result of a closure run through a breaker: refused, timed out, or run and
/// failed.
///
/// It follows the convention of a message of its own plus
/// [`source()`](std::error::Error::source) for the cause: its `Display` says
/// which of the three happened, and `source()` is the [`CircuitOpen`], the
/// [`TimedOut`] or the closure's own error. An error reporter that walks the
/// chain prints each message once:
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::error::Error;
/// use breakerbox::{Breaker, CallError, Config};
///
/// let breaker = Breaker::new("docs-report", Config::default());
/// let err = breaker
///     .call(|| Err::<(), _>(std::io::Error::other("connection reset")))
///     .unwrap_err();
/// let chain: Vec<String> = std::iter::successors(Some(&err as &dyn Error), |&e| e.source())
///     .map(|e| e.to_string())
///     .collect();
/// assert_eq!(chain, ["the call failed", "connection reset"]);
///
/// // A refusal is found in the chain whatever the closure's error type is.
/// breaker.force_open();
/// let err: CallError<std::io::Error> = breaker.call(|| Ok(())).unwrap_err();
/// let refused = err.source().unwrap().downcast_ref::<breakerbox::CircuitOpen>();
/// assert_eq!(refused.unwrap().group(), "docs-report");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError<E> {
    /// The breaker (or the group's bulkhead) refused; the closure did not run.
    Open(CircuitOpen),
    /// The call ran past the group's `timeout_ms` and was dropped.
    TimedOut(TimedOut),
    /// The closure ran and returned this error.
    Inner(E),
}

impl<E> CallError<E> {
    /// The function's own error, if it ran.
    pub fn into_inner(self) -> Option<E> {
        match self {
            CallError::Inner(e) => Some(e),
            CallError::Open(_) | CallError::TimedOut(_) => None,
        }
    }

    /// Whether the call ran past its deadline.
    pub fn is_timed_out(&self) -> bool {
        matches!(self, CallError::TimedOut(_))
    }

    /// Whether the breaker refused the call.
    pub fn is_open(&self) -> bool {
        matches!(self, CallError::Open(_))
    }
}

impl<E> From<CircuitOpen> for CallError<E> {
    fn from(open: CircuitOpen) -> Self {
        CallError::Open(open)
    }
}

impl<E> From<TimedOut> for CallError<E> {
    fn from(late: TimedOut) -> Self {
        CallError::TimedOut(late)
    }
}

/// A message of its own; the refusal, the timeout or the closure's error is the
/// [`source`](std::error::Error::source).
impl<E> fmt::Display for CallError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CallError::Open(_) => "the call was refused",
            CallError::TimedOut(_) => "the call timed out",
            CallError::Inner(_) => "the call failed",
        })
    }
}

impl<E: std::error::Error + 'static> std::error::Error for CallError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::Open(open) => Some(open),
            CallError::TimedOut(late) => Some(late),
            CallError::Inner(e) => Some(e),
        }
    }
}
