//! The span hook (feature `trace`, the facade's `tracing`): what a recorded
//! group's claims and verdicts tell it, and the one hook installed. Whose
//! calls are recorded is the breakers' (`breaker::trace`): a recorded group's
//! breakers carry the trace bit in their word, so their claims and verdicts
//! leave the fast paths, and the cold paths tell the hook.

use std::sync::OnceLock;

use crate::error::OpenReason;

/// What a claim or a verdict of a recorded group tells the hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Noted {
    /// A claim admitted the call.
    Admitted {
        /// As a half-open probe.
        probe: bool,
        /// By shadow mode, in place of a refusal.
        shadow: bool,
    },
    /// A claim refused the call.
    Refused(OpenReason),
    /// The admitted call's verdict.
    Ended(Ended),
}

/// How an admitted call ended, as its permit recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// A success.
    Success,
    /// A failure (a timed-out call, a permit dropped by a panic included).
    Failure,
    /// An error the classifier ignores, or a server's wait.
    Ignored,
    /// Dropped without a verdict: a cancelled future, a caller that gave up.
    Abandoned,
}

impl Ended {
    /// The value of `breaker.outcome`: `success`, `failure`, `ignored` or
    /// `abandoned`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Ended::Success => "success",
            Ended::Failure => "failure",
            Ended::Ignored => "ignored",
            Ended::Abandoned => "abandoned",
        }
    }
}

/// The hook: the group, and what happened, on the thread where it happened
/// (outside every lock of the breaker).
pub type Hook = fn(&'static str, Noted);

static HOOK: OnceLock<Hook> = OnceLock::new();

/// Installs `hook`, once per process: the first one installed stays.
pub fn install(hook: Hook) {
    let _ = HOOK.get_or_init(|| hook);
}

/// Tells the hook, if one is installed.
#[cold]
#[inline(never)]
pub(crate) fn tell(group: &'static str, noted: Noted) {
    if let Some(hook) = HOOK.get() {
        hook(group, noted);
    }
}
