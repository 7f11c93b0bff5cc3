//! Retries composed with the breaker: the [`RetryPolicy`] (attempts, a delay
//! that doubles up to a cap, with full jitter, an overall deadline, a budget), the
//! [`Retry`] that runs it with its group's [`budget`](Retry::budget), and the
//! [`RetryAfterHint`] an error implements to direct the next delay.
//!
//! A retried call runs, outermost first: the bulkhead (one place for the
//! logical call) > the retry loop > the breaker (one permit, one outcome, per
//! attempt) > the timeout > the call. A refusal is never retried; a retry never
//! starts once the circuit no longer admits, nor waits past the deadline.
//! See [`Breaker::call_retrying`](crate::Breaker::call_retrying).

use std::time::Duration;

use crate::level::{GroupLevel, KeyCounts};
use crate::sync::{AtomicBool, AtomicU32, AtomicU64, Mutex, OnceLock, Ordering::*};
use std::sync::Arc;

/// An error that may say how long to wait before the call is repeated (an
/// HTTP `Retry-After`, a rate limiter's reset): the next attempt waits at
/// least that long, never less than the delay drawn.
///
/// The default method says nothing, so an error type opts in with an empty
/// impl and overrides only to give a delay:
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::RetryAfterHint;
///
/// enum ApiError { Busy { wait: Duration }, Broken }
///
/// impl RetryAfterHint for ApiError {
///     fn retry_after(&self) -> Option<Duration> {
///         match self {
///             ApiError::Busy { wait } => Some(*wait),
///             ApiError::Broken => None,
///         }
///     }
/// }
/// assert_eq!(ApiError::Broken.retry_after(), None);
/// ```
pub trait RetryAfterHint {
    /// The least delay before the next attempt, if the error tells one.
    fn retry_after(&self) -> Option<Duration> {
        None
    }
}

impl RetryAfterHint for std::io::Error {}
impl RetryAfterHint for () {}
impl RetryAfterHint for String {}
impl RetryAfterHint for &str {}
impl RetryAfterHint for core::convert::Infallible {}
impl RetryAfterHint for Box<dyn std::error::Error + Send + Sync> {}

/// The budget's default share of first attempts that may be retried.
pub const DEFAULT_BUDGET_RATIO: f64 = 0.2;
/// The budget's default retries per second allowed whatever the traffic.
pub const DEFAULT_BUDGET_FLOOR: u32 = 10;
/// The default upper end of the first retry's delay, before jitter.
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_millis(50);
/// The default cap on any one retry's delay.
pub const DEFAULT_RETRY_MAX_DELAY: Duration = Duration::from_secs(2);

/// How a call is retried: `retries` more attempts at most after the first,
/// the `k`-th retry after a delay drawn uniformly from
/// `[0, min(max_delay, delay × 2^(k-1))]` ("full jitter"), a server-directed
/// [`RetryAfterHint`] as that delay's floor (a server's wait past `max_delay`,
/// or on an error the classifier ignores, holds the breaker instead: see
/// [`max_delay`](RetryPolicy::max_delay)), no wait that would end past the
/// `deadline` (measured from the first attempt on the breaker's clock), and the
/// group's budget (see [`Retry`]).
///
/// A `const` builder, so a policy is written once as a `static`:
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::{Retry, RetryPolicy};
///
/// static PAYMENTS: Retry = Retry::new(
///     RetryPolicy::new(3)
///         .delay(Duration::from_millis(20))
///         .max_delay(Duration::from_millis(500))
///         .budget(0.1, 5),
/// );
/// assert_eq!(PAYMENTS.policy().retries(), 3);
/// ```
///
/// # Which keys were set
///
/// A policy remembers which of its builder methods were called
/// ([`explicit_keys`](Self::explicit_keys)), as a [`Config`](crate::Config)
/// does: configuration layered under the declaration (a file's `[defaults]`)
/// fills only the keys the code left to their default. That record is not
/// part of equality.
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::RetryPolicy;
///
/// let policy = RetryPolicy::new(2).max_delay(Duration::from_secs(1));
/// assert_eq!(policy.explicit_keys().collect::<Vec<_>>(), ["retry", "retry_max_delay_ms"]);
/// assert_eq!(policy, RetryPolicy::new(2).max_delay(Duration::from_secs(1)).budget_floor(10));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    retries: u32,
    delay_nanos: u64,
    max_delay_nanos: u64,
    deadline_nanos: Option<u64>,
    /// `None`: no budget (every permitted retry goes).
    budget: Option<(f64, u32)>,
    /// The builder methods called, one bit per key of
    /// [`RETRY_KEYS`](breaker_rules::RETRY_KEYS), in its order.
    explicit: u8,
}

/// The bits of a policy's `explicit`, by the key's place in
/// [`RETRY_KEYS`](breaker_rules::RETRY_KEYS).
const SET_RETRIES: u8 = breaker_rules::retry_key_bit("retry");
const SET_DELAY: u8 = breaker_rules::retry_key_bit("retry_delay_ms");
const SET_MAX_DELAY: u8 = breaker_rules::retry_key_bit("retry_max_delay_ms");
const SET_DEADLINE: u8 = breaker_rules::retry_key_bit("retry_deadline_ms");
const SET_RATIO: u8 = breaker_rules::retry_key_bit("retry_budget_ratio");
const SET_FLOOR: u8 = breaker_rules::retry_key_bit("retry_budget_floor");

/// Equal when they retry the same way: which keys were spelled out
/// ([`RetryPolicy::explicit_keys`]) does not count.
impl PartialEq for RetryPolicy {
    fn eq(&self, other: &Self) -> bool {
        self.retries == other.retries
            && self.delay_nanos == other.delay_nanos
            && self.max_delay_nanos == other.max_delay_nanos
            && self.deadline_nanos == other.deadline_nanos
            && self.budget == other.budget
    }
}

impl RetryPolicy {
    /// Up to `retries` attempts after the first (so `retries + 1` in all), the
    /// default delay ([`DEFAULT_RETRY_DELAY`], capped at
    /// [`DEFAULT_RETRY_MAX_DELAY`]) and the default budget
    /// ([`DEFAULT_BUDGET_RATIO`] of first attempts plus
    /// [`DEFAULT_BUDGET_FLOOR`] per second).
    pub const fn new(retries: u32) -> Self {
        RetryPolicy {
            retries,
            delay_nanos: DEFAULT_RETRY_DELAY.as_nanos() as u64,
            max_delay_nanos: DEFAULT_RETRY_MAX_DELAY.as_nanos() as u64,
            deadline_nanos: None,
            budget: Some((DEFAULT_BUDGET_RATIO, DEFAULT_BUDGET_FLOOR)),
            explicit: SET_RETRIES,
        }
    }

    /// This policy with `retries` as a default value, not one its code chose:
    /// an `#[circuit_breaker(idempotent = true)]` fn without `retry`, whose
    /// retries configuration may raise from its `[defaults]` up.
    pub(crate) const fn retries_unset(mut self) -> Self {
        self.explicit &= !SET_RETRIES;
        self
    }

    /// The upper end of the first retry's delay, doubled for each retry after
    /// it (saturating at about 584 years).
    pub const fn delay(mut self, first: Duration) -> Self {
        self.delay_nanos = nanos(first);
        self.explicit |= SET_DELAY;
        self
    }

    /// The cap on the upper end of any retry's delay. A server's
    /// [`RetryAfterHint`] may ask for longer: the call then
    /// [holds](crate::Breaker::hold) its breaker for the wait (counted as
    /// ignored, not as a failure) and returns its error at once, without
    /// waiting it out.
    pub const fn max_delay(mut self, max: Duration) -> Self {
        self.max_delay_nanos = nanos(max);
        self.explicit |= SET_MAX_DELAY;
        self
    }

    /// The overall deadline of the call, from its first attempt: a retry whose
    /// delay would end past it is not made, and the last error is returned.
    pub const fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline_nanos = Some(nanos(deadline));
        self.explicit |= SET_DEADLINE;
        self
    }

    /// Retries may not exceed `ratio` (in `[0, 1]`, clamped) of the group's
    /// first attempts plus `floor` per second (on the breaker's clock).
    pub const fn budget(mut self, ratio: f64, floor: u32) -> Self {
        let ratio = if ratio.is_nan() || ratio < 0.0 {
            0.0
        } else if ratio > 1.0 {
            1.0
        } else {
            ratio
        };
        self.budget = Some((ratio, floor));
        self.explicit |= SET_RATIO | SET_FLOOR;
        self
    }

    /// The budget's share of first attempts that may be retried (in `[0, 1]`,
    /// clamped), its floor as it is (or [`DEFAULT_BUDGET_FLOOR`] after
    /// [`no_budget`](Self::no_budget)).
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::RetryPolicy;
    ///
    /// let policy = RetryPolicy::new(2).budget_ratio(0.1).budget_floor(5);
    /// assert_eq!(policy.budget_limits(), Some((0.1, 5)));
    /// ```
    pub const fn budget_ratio(self, ratio: f64) -> Self {
        let floor = match self.budget {
            Some((_, floor)) => floor,
            None => DEFAULT_BUDGET_FLOOR,
        };
        let explicit = self.explicit | SET_RATIO;
        let mut policy = self.budget(ratio, floor);
        policy.explicit = explicit;
        policy
    }

    /// The budget's retries a second allowed whatever the traffic, its ratio
    /// as it is (or [`DEFAULT_BUDGET_RATIO`] after [`no_budget`](Self::no_budget)).
    pub const fn budget_floor(self, floor: u32) -> Self {
        let ratio = match self.budget {
            Some((ratio, _)) => ratio,
            None => DEFAULT_BUDGET_RATIO,
        };
        let explicit = self.explicit | SET_FLOOR;
        let mut policy = self.budget(ratio, floor);
        policy.explicit = explicit;
        policy
    }

    /// No budget: every retry the policy allows is made. Use only where the
    /// dependency cannot be overloaded by the callers' retries.
    pub const fn no_budget(mut self) -> Self {
        self.budget = None;
        self.explicit |= SET_RATIO | SET_FLOOR;
        self
    }

    /// Attempts after the first, at most.
    pub const fn retries(&self) -> u32 {
        self.retries
    }

    /// The upper end of the first retry's delay ([`delay`](Self::delay)).
    pub const fn first_delay(&self) -> Duration {
        Duration::from_nanos(self.delay_nanos)
    }

    /// The cap on any retry's delay ([`max_delay`](Self::max_delay)).
    pub const fn delay_cap(&self) -> Duration {
        Duration::from_nanos(self.max_delay_nanos)
    }

    /// The overall deadline, if one is set.
    pub const fn overall_deadline(&self) -> Option<Duration> {
        match self.deadline_nanos {
            Some(n) => Some(Duration::from_nanos(n)),
            None => None,
        }
    }

    /// The budget's ratio and floor per second; `None` without a budget.
    pub const fn budget_limits(&self) -> Option<(f64, u32)> {
        self.budget
    }

    /// The retry keys whose builder method made this policy, in the order of
    /// the attribute's and the file's keys: `retry` ([`new`](Self::new)),
    /// `retry_delay_ms`, `retry_max_delay_ms`, `retry_deadline_ms`,
    /// `retry_budget_ratio` and `retry_budget_floor` (both for
    /// [`budget`](Self::budget) and [`no_budget`](Self::no_budget)).
    pub fn explicit_keys(&self) -> impl Iterator<Item = &'static str> {
        let explicit = self.explicit;
        breaker_rules::RETRY_KEYS
            .into_iter()
            .enumerate()
            .filter(move |(i, _)| explicit & (1 << i) != 0)
            .map(|(_, key)| key.name)
    }

    /// Whether the builder method of the retry key `key` made this policy
    /// (see [`explicit_keys`](Self::explicit_keys)).
    pub fn is_explicit(&self, key: &str) -> bool {
        self.explicit_keys().any(|k| k == key)
    }

    /// The upper end of the `retry`-th retry's delay (1 is the first).
    pub(crate) fn ceiling(&self, retry: u32) -> u64 {
        let doublings = retry.saturating_sub(1).min(63);
        self.delay_nanos
            .saturating_mul(1u64 << doublings)
            .min(self.max_delay_nanos)
    }
}

/// `d` in whole nanoseconds, saturating.
const fn nanos(d: Duration) -> u64 {
    let n = d.as_nanos();
    if n > u64::MAX as u128 {
        u64::MAX
    } else {
        n as u64
    }
}

/// Values of the retry keys, each set or not: one layer of configuration
/// (a file's table, the variables), named as the attribute's keys are.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RetryValues {
    /// `retry`: attempts after the first, at most ([`RetryPolicy::new`]).
    pub retries: Option<u32>,
    /// `retry_delay_ms` ([`RetryPolicy::delay`]).
    pub delay: Option<Duration>,
    /// `retry_max_delay_ms` ([`RetryPolicy::max_delay`]).
    pub max_delay: Option<Duration>,
    /// `retry_deadline_ms` ([`RetryPolicy::deadline`]).
    pub deadline: Option<Duration>,
    /// `retry_budget_ratio` ([`RetryPolicy::budget_ratio`]).
    pub budget_ratio: Option<f64>,
    /// `retry_budget_floor` ([`RetryPolicy::budget_floor`]).
    pub budget_floor: Option<u32>,
}

impl RetryValues {
    /// No key set.
    pub const EMPTY: RetryValues = RetryValues {
        retries: None,
        delay: None,
        max_delay: None,
        deadline: None,
        budget_ratio: None,
        budget_floor: None,
    };

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::EMPTY
    }
}

/// What layered configuration gives a group's retries, over the
/// [`RetryPolicy`] its code declares: the part of a
/// [`Resolution`](crate::Resolution) a group's [`Retry`] takes, before its
/// first retried call (it is made with it) or after (it runs it from its next
/// attempt on).
///
/// Two layers, because the declaration stands between them: `fallback` fills
/// the keys the declaration leaves to their default (a file's `[defaults]` and
/// template), `overriding` replaces the declaration's own (a file's
/// `[groups.X]` table and the group's variables).
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::time::Duration;
/// use breakerbox::retry::{RetryTuning, RetryValues};
/// use breakerbox::RetryPolicy;
///
/// let declared = RetryPolicy::new(1).delay(Duration::from_millis(5));
/// let tuning = RetryTuning {
///     fallback: RetryValues { delay: Some(Duration::from_millis(80)), max_delay: Some(Duration::from_secs(1)), ..RetryValues::EMPTY },
///     overriding: RetryValues { retries: Some(3), ..RetryValues::EMPTY },
/// };
/// let runs = tuning.over(&declared);
/// assert_eq!(runs.retries(), 3); // the group's table over the code
/// assert_eq!(runs.first_delay(), Duration::from_millis(5)); // the code over `[defaults]`
/// assert_eq!(runs.delay_cap(), Duration::from_secs(1)); // `[defaults]` over the default
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RetryTuning {
    /// Values for the keys the declared policy leaves to their default.
    pub fallback: RetryValues,
    /// Values that replace the declared policy's own.
    pub overriding: RetryValues,
}

impl RetryTuning {
    /// Nothing layered: a group runs the policy its code declares.
    pub const NONE: RetryTuning = RetryTuning {
        fallback: RetryValues::EMPTY,
        overriding: RetryValues::EMPTY,
    };

    /// Whether it sets nothing.
    pub fn is_empty(&self) -> bool {
        self.fallback.is_empty() && self.overriding.is_empty()
    }

    /// The policy a group declared as `declared` runs under this tuning, key
    /// by key: `overriding`, else the declaration's own value, else
    /// `fallback`, else the declaration's default. A budget key given to a
    /// policy [without a budget](RetryPolicy::no_budget) gives it one, with
    /// the other limit at its default.
    pub fn over(&self, declared: &RetryPolicy) -> RetryPolicy {
        fn pick<T>(bit: u8, declared: u8, over: Option<T>, under: Option<T>) -> Option<T> {
            over.or(if declared & bit == 0 { under } else { None })
        }
        let (o, f, e) = (&self.overriding, &self.fallback, declared.explicit);
        let mut runs = *declared;
        if let Some(retries) = pick(SET_RETRIES, e, o.retries, f.retries) {
            runs.retries = retries;
        }
        if let Some(delay) = pick(SET_DELAY, e, o.delay, f.delay) {
            runs = runs.delay(delay);
        }
        if let Some(max) = pick(SET_MAX_DELAY, e, o.max_delay, f.max_delay) {
            runs = runs.max_delay(max);
        }
        if let Some(deadline) = pick(SET_DEADLINE, e, o.deadline, f.deadline) {
            runs = runs.deadline(deadline);
        }
        if let Some(ratio) = pick(SET_RATIO, e, o.budget_ratio, f.budget_ratio) {
            runs = runs.budget_ratio(ratio);
        }
        if let Some(floor) = pick(SET_FLOOR, e, o.budget_floor, f.budget_floor) {
            runs = runs.budget_floor(floor);
        }
        runs.explicit = declared.explicit;
        runs
    }
}

/// A [`RetryPolicy`] with the state it runs with: the budget's token bucket
/// and the counter of the jitter generator. One `Retry` is one budget.
///
/// A group keeps one of its own, made by its first retried call
/// ([`Breaker::group_retry`](crate::Breaker::group_retry),
/// [`KeyedGroup::group_retry`](crate::KeyedGroup::group_retry)): every fn of
/// the group, every key of a keyed group and every integration that retries
/// for the group draw on it, as `#[circuit_breaker(retry = ..)]` does. A
/// `Retry` made with [`new`](Self::new) (kept in a `static`) is a budget of
/// its own, for the breakers it is handed to.
///
/// A group's `Retry` runs the policy its code declared
/// ([`policy`](Self::policy)) with what layered configuration (a
/// configuration file, `BREAKER_` variables) gives the group over it
/// ([`RetryTuning`]), and takes a new one live, from the next attempt that
/// reads it: each value of the policy is its own relaxed atomic, so an
/// attempt racing a reload may read some keys before it and some after,
/// each one of the two policies' own (a deadline or a budget read with the
/// flag that says the policy has one). A reload keeps the budget's balance,
/// held to the smaller of the old and the new bucket's capacity: it never
/// adds a retry. A budget given to a policy that had none, in a bucket that
/// never paid a retry, starts as a new bucket does.
#[derive(Debug)]
pub struct Retry {
    /// The policy the code declared: what a later declaration is compared
    /// with, and what a group returns to when configuration drops its keys.
    declared: RetryPolicy,
    /// The policy it runs, one value at a time.
    retries: AtomicU32,
    /// [`HAS_DEADLINE`] and [`HAS_BUDGET`].
    flags: AtomicU32,
    delay_nanos: AtomicU64,
    max_delay_nanos: AtomicU64,
    deadline_nanos: AtomicU64,
    /// The budget's ratio as `f64` bits, as it was set (the bucket keeps the
    /// deposit it makes).
    ratio_bits: AtomicU64,
    budget: RetryBudget,
    draws: AtomicU64,
    /// The address of the declaration a group's `Retry` was made from (0 for
    /// one made with `new`): a later call with that same declaration skips
    /// comparing the policies.
    declared_at: usize,
    /// The group's declaration that sets retry keys, taken over from one of
    /// `idempotent = true` alone (which sets none) that made this `Retry`.
    adopted: OnceLock<RetryPolicy>,
    /// Whether a conflicting declaration was reported.
    conflict_told: AtomicBool,
}

/// The policy has an overall deadline.
const HAS_DEADLINE: u32 = 1;
/// The policy has a budget.
const HAS_BUDGET: u32 = 1 << 1;

const fn flags_of(policy: &RetryPolicy) -> u32 {
    let deadline = match policy.deadline_nanos {
        Some(_) => HAS_DEADLINE,
        None => 0,
    };
    let budget = match policy.budget {
        Some(_) => HAS_BUDGET,
        None => 0,
    };
    deadline | budget
}

/// A `Retry` running `policy` (a macro: loom's atomics are not `const`).
macro_rules! retry_running {
    ($policy:expr) => {{
        let policy: RetryPolicy = $policy;
        let (ratio, floor) = match policy.budget {
            Some(limits) => limits,
            None => (0.0, 0),
        };
        Retry {
            declared: policy,
            retries: AtomicU32::new(policy.retries),
            flags: AtomicU32::new(flags_of(&policy)),
            delay_nanos: AtomicU64::new(policy.delay_nanos),
            max_delay_nanos: AtomicU64::new(policy.max_delay_nanos),
            deadline_nanos: AtomicU64::new(match policy.deadline_nanos {
                Some(n) => n,
                None => 0,
            }),
            ratio_bits: AtomicU64::new(ratio.to_bits()),
            budget: RetryBudget::new(ratio, floor),
            draws: AtomicU64::new(0),
            declared_at: 0,
            adopted: OnceLock::new(),
            conflict_told: AtomicBool::new(false),
        }
    }};
}

impl Retry {
    /// `policy` with its budget holding one second of its floor.
    #[cfg(not(loom))]
    pub const fn new(policy: RetryPolicy) -> Self {
        retry_running!(policy)
    }

    /// `policy` with its budget holding one second of its floor (loom's
    /// atomics are not const).
    #[cfg(loom)]
    pub fn new(policy: RetryPolicy) -> Self {
        retry_running!(policy)
    }

    /// A group's `Retry`, made from `declared` with `tuning` over it; a
    /// `fixed` declaration (a `static`, which no other policy can ever sit
    /// at) is known by its address from then on.
    fn declared(declared: &RetryPolicy, fixed: bool, tuning: &RetryTuning) -> Self {
        Retry {
            declared: *declared,
            declared_at: if fixed { address(declared) } else { 0 },
            ..Retry::new(tuning.over(declared))
        }
    }

    /// Whether `declared` is the declaration this `Retry` was made from, or
    /// equal to it, or the one it adopted; a declaration that sets no key
    /// (`idempotent = true` alone) runs whatever its group's does.
    #[inline]
    fn runs(&self, declared: &RetryPolicy) -> bool {
        self.declared_at == address(declared)
            || declared.explicit == 0
            || self.declared == *declared
            || self.adopted.get() == Some(declared)
    }

    /// Whether it was made from a declaration that sets no key, and has not
    /// adopted one since.
    fn may_adopt(&self) -> bool {
        self.declared.explicit == 0 && self.adopted.get().is_none()
    }

    /// A declaration of `group` that differs from the one this `Retry` was
    /// made from: logged once, at `warn`; the first declaration holds.
    #[cold]
    #[inline(never)]
    fn conflict(&self, group: &str, ignored: &RetryPolicy) {
        if !self.conflict_told.swap(true, Relaxed) {
            log::warn!(
                "breaker: group `{group}` declared with two retry policies; the group's \
                 budget keeps {:?} (first declaration); ignored {ignored:?}",
                self.policy()
            );
        }
    }

    /// The policy its code declared (for a group's `Retry`, the group's first
    /// declaration; for one made with [`new`](Self::new), that policy). What
    /// it runs now, with configuration layered over it, is
    /// [`effective_policy`](Self::effective_policy).
    ///
    /// A group's `Retry` made by a fn of `idempotent = true` alone (which
    /// declares no key) takes the first declaration of the group that sets
    /// keys as its policy when that declaration's fn first calls.
    pub fn policy(&self) -> &RetryPolicy {
        self.adopted.get().unwrap_or(&self.declared)
    }

    /// The policy it runs now: its [`policy`](Self::policy) with what layered
    /// configuration gives its group over it (see [`RetryTuning`]).
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Retry, RetryPolicy};
    ///
    /// static FLAKY: Retry = Retry::new(RetryPolicy::new(2));
    /// assert_eq!(FLAKY.effective_policy(), *FLAKY.policy());
    /// ```
    pub fn effective_policy(&self) -> RetryPolicy {
        let flags = self.flags.load(Acquire);
        RetryPolicy {
            retries: self.retries.load(Relaxed),
            delay_nanos: self.delay_nanos.load(Relaxed),
            max_delay_nanos: self.max_delay_nanos.load(Relaxed),
            deadline_nanos: (flags & HAS_DEADLINE != 0).then(|| self.deadline_nanos.load(Relaxed)),
            budget: (flags & HAS_BUDGET != 0).then(|| {
                let ratio = f64::from_bits(self.ratio_bits.load(Relaxed));
                let floor = self.budget.floor.load(Relaxed);
                (ratio, u32::try_from(floor).unwrap_or(u32::MAX))
            }),
            explicit: self.policy().explicit,
        }
    }

    /// Runs `policy` from the next attempt that reads it. The budget's
    /// balance is kept, held to the smaller of the old and the new capacity;
    /// the floor earned up to `now` (a clock reading) is paid at the old rate
    /// first. A policy without a budget leaves the bucket as it is, for a
    /// later one to resume.
    pub(crate) fn retune(&self, policy: &RetryPolicy, now: u64) {
        self.retries.store(policy.retries, Relaxed);
        self.delay_nanos.store(policy.delay_nanos, Relaxed);
        self.max_delay_nanos.store(policy.max_delay_nanos, Relaxed);
        if let Some(deadline) = policy.deadline_nanos {
            self.deadline_nanos.store(deadline, Relaxed);
        }
        if let Some((ratio, floor)) = policy.budget {
            self.ratio_bits.store(ratio.to_bits(), Relaxed);
            let had_none = self.flags.load(Relaxed) & HAS_BUDGET == 0;
            if had_none && self.budget.refilled_at.load(Acquire) == NEVER {
                self.budget.restart(ratio, floor, now);
            } else {
                self.budget.retune(ratio, floor, now);
            }
        }
        // Last, and released: a reader that sees the new flags (`Acquire`)
        // sees the values stored above with them.
        self.flags.store(flags_of(policy), Release);
    }

    /// The budget its retries draw on.
    pub fn budget(&self) -> &RetryBudget {
        &self.budget
    }

    /// Whether the policy it runs has an overall deadline.
    #[inline]
    pub(crate) fn has_deadline(&self) -> bool {
        self.flags.load(Acquire) & HAS_DEADLINE != 0
    }

    /// Whether a retry may be made now (by the clock reading `now`), taking
    /// one token if so; always with no budget.
    pub(crate) fn withdraw(&self, now: u64) -> bool {
        self.flags.load(Relaxed) & HAS_BUDGET == 0 || self.budget.try_withdraw(now)
    }

    /// A first attempt was made: the budget earns its share.
    #[inline]
    pub(crate) fn deposit(&self) {
        if self.flags.load(Relaxed) & HAS_BUDGET != 0 {
            self.budget.deposit();
        }
    }

    /// The next draw's counter of the jitter generator.
    pub(crate) fn next_draw(&self) -> u64 {
        self.draws.fetch_add(1, Relaxed)
    }
}

/// Where a group keeps its [`Retry`]: empty until the group's first retried
/// call, which makes it from its declaration; shared by a keyed group's keys.
/// It also holds what layered configuration gives the group's retries, so
/// that the `Retry` is made with it, or takes it live once made. A keyed
/// group's slot also holds the group level its keys report to, when the group
/// judges as one: what every key shares with its group, behind one pointer.
#[derive(Debug)]
pub(crate) struct RetrySlot {
    retry: OnceLock<Retry>,
    /// Locked to make the `Retry` and to change the tuning, so a tuning set
    /// while the first call makes it is never lost.
    tuning: Mutex<RetryTuning>,
    level: Option<Arc<dyn GroupLevel>>,
    keys: Option<Arc<KeyCounts>>,
}

impl Default for RetrySlot {
    fn default() -> Self {
        RetrySlot::with_level(None, None)
    }
}

impl RetrySlot {
    /// A keyed group's slot, with the group level its keys report to.
    pub(crate) fn with_level(
        level: Option<Arc<dyn GroupLevel>>,
        keys: Option<Arc<KeyCounts>>,
    ) -> Self {
        RetrySlot {
            retry: OnceLock::new(),
            tuning: Mutex::new(RetryTuning::NONE),
            level,
            keys,
        }
    }

    /// The group level a keyed group's keys report to, if it judges as one.
    pub(crate) fn level(&self) -> Option<&dyn GroupLevel> {
        self.level.as_deref()
    }

    /// The keys of the keyed group that judges as one that this slot's
    /// breaker belongs to (a key, or the group's own breaker).
    pub(crate) fn keys(&self) -> Option<&KeyCounts> {
        self.keys.as_deref()
    }

    /// The group's `Retry`, made from `declared` by the first call (`fixed`:
    /// `declared` is a `static`). A later declaration that differs is reported
    /// once (see [`Retry::conflict`]) and draws on the first one's budget,
    /// under the first one's policy.
    ///
    /// A `Retry` made by a declaration that sets no key (`idempotent = true`
    /// alone) adopts the first one that does, with the tuning held over it,
    /// from `now` (the clock, read only then).
    #[inline]
    pub(crate) fn retry(
        &self,
        group: &str,
        declared: &RetryPolicy,
        fixed: bool,
        now: impl FnOnce() -> u64,
    ) -> &Retry {
        let retry = match self.retry.get() {
            Some(retry) => retry,
            None => self.first_retry(declared, fixed),
        };
        if !retry.runs(declared) {
            self.differs(group, retry, declared, now());
        }
        retry
    }

    /// A declaration `retry` does not run: adopted if `retry` has none of its
    /// own, else reported (see [`Retry::conflict`]).
    #[cold]
    #[inline(never)]
    fn differs(&self, group: &str, retry: &Retry, declared: &RetryPolicy, now: u64) {
        let tuning = self.tuning.lock();
        if retry.may_adopt() {
            let adopted = retry.adopted.get_or_init(|| *declared);
            retry.retune(&tuning.over(adopted), now);
            return;
        }
        drop(tuning);
        if !retry.runs(declared) {
            retry.conflict(group, declared);
        }
    }

    /// Makes the `Retry` with the tuning held (or finds the one a racing
    /// call made).
    #[cold]
    #[inline(never)]
    fn first_retry(&self, declared: &RetryPolicy, fixed: bool) -> &Retry {
        let tuning = self.tuning.lock();
        let made = self
            .retry
            .get_or_init(|| Retry::declared(declared, fixed, &tuning));
        drop(tuning);
        made
    }

    /// Layers `tuning` over the group's declaration: the `Retry` is made with
    /// it, or, made already, runs it from now on (`now`, a clock reading).
    pub(crate) fn tune(&self, tuning: &RetryTuning, now: u64) {
        let mut held = self.tuning.lock();
        *held = *tuning;
        if let Some(retry) = self.retry.get() {
            retry.retune(&tuning.over(retry.policy()), now);
        }
    }

    /// The group's `Retry`, if a retried call made it.
    pub(crate) fn made(&self) -> Option<&Retry> {
        self.retry.get()
    }
}

/// Where `policy` is, to tell one declaration from another.
fn address(policy: &RetryPolicy) -> usize {
    policy as *const RetryPolicy as usize
}

/// A token bucket that limits retries to a share of first attempts plus a
/// floor per second (Finagle's and Envoy's retry budget).
///
/// Balances are held in units of a nanotoken, so the floor's refill
/// (`floor` units per nanosecond of the clock) and a first attempt's deposit
/// (`ratio × 10^9` units) are exact integers, and a retry costs 10^9. The bucket
/// starts with one second of the floor (so the first calls of a process may
/// retry too), earns the floor from the first retry asked for on, and holds at
/// most ten seconds of the floor plus 100 retries, so a quiet spell cannot
/// bank an unbounded burst. Hence over any run
/// `retries ≤ ratio × first attempts + floor × (1 + seconds elapsed)`.
/// Lock-free: a deposit is one add; a withdrawal is the refill's swap of the
/// refill time, then one compare-and-swap loop.
#[derive(Debug)]
pub struct RetryBudget {
    /// The balance, in nanotokens.
    balance: AtomicU64,
    /// The clock reading the floor was last paid up to; `u64::MAX` before the
    /// first withdrawal (the floor accrues from then).
    refilled_at: AtomicU64,
    /// What a first attempt pays in, in nanotokens (`ratio × 10^9`).
    deposit: AtomicU64,
    /// Retries a second the floor pays (nanotokens a nanosecond).
    floor: AtomicU64,
    capacity: AtomicU64,
}

/// One retry, in nanotokens.
const TOKEN: u64 = 1_000_000_000;
/// A balance above this is capped at the next deposit: half the range, so
/// no run of deposits between two withdrawals can wrap it (the other half
/// is room for 9 × 10^9 deposits racing the cap).
const UNCAPPED_LIMIT: u64 = u64::MAX / 2;
/// What the bucket starts from, as the time of the last refill.
const NEVER: u64 = u64::MAX;

/// A bucket's cap: ten seconds of `floor` plus 100 retries, at most half the
/// range (so no deposit can wrap a full bucket).
const fn capacity(floor: u64) -> u64 {
    let cap = floor
        .saturating_mul(10)
        .saturating_add(100)
        .saturating_mul(TOKEN);
    if cap > UNCAPPED_LIMIT {
        UNCAPPED_LIMIT
    } else {
        cap
    }
}

/// A first attempt's deposit at `ratio`, in nanotokens (`as` saturates).
const fn deposit_of(ratio: f64) -> u64 {
    (ratio * TOKEN as f64) as u64
}

/// A bucket for `ratio` and `floor` (a macro: loom's atomics are not `const`).
macro_rules! bucket {
    ($ratio:expr, $floor:expr) => {{
        let floor = $floor as u64;
        RetryBudget {
            balance: AtomicU64::new(floor.saturating_mul(TOKEN)),
            refilled_at: AtomicU64::new(NEVER),
            deposit: AtomicU64::new(deposit_of($ratio)),
            floor: AtomicU64::new(floor),
            capacity: AtomicU64::new(capacity(floor)),
        }
    }};
}

impl RetryBudget {
    #[cfg(not(loom))]
    const fn new(ratio: f64, floor: u32) -> Self {
        bucket!(ratio, floor)
    }

    #[cfg(loom)]
    fn new(ratio: f64, floor: u32) -> Self {
        bucket!(ratio, floor)
    }

    /// Whole retries the bucket holds now (before the floor's refill due).
    pub fn available(&self) -> u64 {
        self.balance.load(Relaxed).min(self.capacity.load(Relaxed)) / TOKEN
    }

    /// Whole retries the bucket holds at most: ten seconds of the floor
    /// plus 100.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{Retry, RetryPolicy};
    ///
    /// let retry = Retry::new(RetryPolicy::new(2).budget(0.2, 5));
    /// assert_eq!(retry.budget().capacity(), 150);
    /// assert_eq!(retry.budget().available(), 5); // one second of the floor to start
    /// ```
    pub fn capacity(&self) -> u64 {
        self.capacity.load(Relaxed) / TOKEN
    }

    /// One add, the cap applied when the balance is next read: adding first
    /// and capping later caps exactly as capping each add would (`min(cap,
    /// min(cap, b) + d) == min(cap, b + d)` for `d >= 0`). A balance that no
    /// withdrawal has capped for half the range is capped here, so it never wraps.
    #[inline]
    fn deposit(&self) {
        let before = self.balance.fetch_add(self.deposit.load(Relaxed), Relaxed);
        if before > UNCAPPED_LIMIT {
            self.cap_now();
        }
    }

    /// Caps the balance now, and at most at half the range: a floor so large
    /// that its ten seconds pass that (some 900 million retries a second) is
    /// held to it, never wrapped.
    #[cold]
    fn cap_now(&self) {
        let capacity = self.capacity.load(Relaxed).min(UNCAPPED_LIMIT);
        let _ = self
            .balance
            .fetch_update(Relaxed, Relaxed, |b| Some(b.min(capacity)));
    }

    fn try_withdraw(&self, now: u64) -> bool {
        self.refill(now);
        let capacity = self.capacity.load(Relaxed);
        self.balance
            .fetch_update(AcqRel, Relaxed, |b| b.min(capacity).checked_sub(TOKEN))
            .is_ok()
    }

    /// Takes `ratio` and `floor` from now on (`now`, a clock reading): the
    /// floor earned up to `now` is paid at the old rate first (when it has
    /// started accruing), and the balance is kept, held to the smaller of
    /// the old and the new capacity (what it could give before the change, at
    /// most what it may hold after): a retune never adds a retry.
    fn retune(&self, ratio: f64, floor: u32, now: u64) {
        if self.refilled_at.load(Acquire) != NEVER {
            self.refill(now);
        }
        let held = self.capacity.load(Relaxed);
        let held = held.min(self.set_limits(ratio, floor));
        let _ = self
            .balance
            .fetch_update(AcqRel, Relaxed, |b| Some(b.min(held)));
    }

    /// A budget turned on by a retune of a policy that had none, in a bucket
    /// that never paid a retry: it starts as a new bucket does, with one
    /// second of its floor, the floor accruing from `now`. (A bucket that
    /// paid retries before its budget was taken away resumes as it was left.)
    fn restart(&self, ratio: f64, floor: u32, now: u64) {
        let capacity = self.set_limits(ratio, floor);
        self.balance.store(
            u64::from(floor).saturating_mul(TOKEN).min(capacity),
            Relaxed,
        );
        self.refilled_at.store(now, Release);
    }

    /// Takes `ratio` and `floor` (and the capacity the floor gives, which it
    /// returns) for the next deposits and refills.
    fn set_limits(&self, ratio: f64, floor: u32) -> u64 {
        let floor = u64::from(floor);
        let capacity = capacity(floor);
        self.deposit.store(deposit_of(ratio), Relaxed);
        self.floor.store(floor, Relaxed);
        self.capacity.store(capacity, Relaxed);
        capacity
    }

    /// Pays the floor from the last refill up to `now`: the thread that moves
    /// the refill time pays for the span it moved it over, so each nanosecond
    /// is paid once.
    fn refill(&self, now: u64) {
        let floor = self.floor.load(Relaxed);
        let mut last = self.refilled_at.load(Acquire);
        loop {
            if last == NEVER {
                match self
                    .refilled_at
                    .compare_exchange(NEVER, now, AcqRel, Acquire)
                {
                    Ok(_) => return,
                    Err(seen) => last = seen,
                }
                continue;
            }
            // A floor of 0 earns nothing, but the time still moves: a floor
            // restored later pays from then, not for the span at 0.
            if now <= last {
                return;
            }
            match self
                .refilled_at
                .compare_exchange(last, now, AcqRel, Acquire)
            {
                Ok(_) => break,
                Err(seen) => last = seen,
            }
        }
        let earned = floor.saturating_mul(now - last);
        if earned == 0 {
            return;
        }
        let capacity = self.capacity.load(Relaxed);
        let _ = self.balance.fetch_update(AcqRel, Relaxed, |b| {
            Some(b.min(capacity).saturating_add(earned).min(capacity))
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const SEC: u64 = 1_000_000_000;

    #[test]
    fn the_ceiling_doubles_from_the_delay_up_to_the_max_delay() {
        let p = RetryPolicy::new(5)
            .delay(Duration::from_millis(10))
            .max_delay(Duration::from_millis(50));
        let ceilings: Vec<u64> = (1..=5).map(|k| p.ceiling(k) / 1_000_000).collect();
        assert_eq!(ceilings, [10, 20, 40, 50, 50]);
        assert_eq!(
            RetryPolicy::new(1).ceiling(400),
            DEFAULT_RETRY_MAX_DELAY.as_nanos() as u64
        );
    }

    #[test]
    fn twenty_percent_of_ten_first_attempts_is_exactly_two_retries() {
        let retry = Retry::new(RetryPolicy::new(3).budget(0.2, 0));
        for _ in 0..10 {
            retry.deposit();
        }
        assert!(retry.withdraw(0));
        assert!(retry.withdraw(0));
        assert!(!retry.withdraw(0), "a third retry exceeds 20% of ten");
        retry.deposit();
        assert!(!retry.withdraw(SEC), "0.2 of a token is no retry");
    }

    #[test]
    fn the_floor_pays_exactly_its_rate_from_the_first_withdrawal() {
        let retry = Retry::new(RetryPolicy::new(3).budget(0.0, 10));
        for _ in 0..10 {
            assert!(retry.withdraw(5 * SEC), "one second of the floor to start");
        }
        assert!(!retry.withdraw(5 * SEC), "ten, not eleven");
        assert!(
            !retry.withdraw(5 * SEC + SEC / 10 - 1),
            "a hair short of one token"
        );
        assert!(retry.withdraw(5 * SEC + SEC / 10));
        for _ in 0..9 {
            assert!(retry.withdraw(6 * SEC));
        }
        assert!(!retry.withdraw(6 * SEC), "ten per second, not eleven");
    }

    #[test]
    fn the_bucket_banks_at_most_ten_seconds_of_floor_and_a_hundred() {
        let retry = Retry::new(RetryPolicy::new(3).budget(1.0, 1));
        assert!(retry.withdraw(0));
        assert!(!retry.withdraw(0));
        for _ in 0..1_000 {
            retry.deposit();
        }
        let mut made = 0;
        while retry.withdraw(3_600 * SEC) {
            made += 1;
        }
        assert_eq!(made, 110);
    }

    #[test]
    fn a_deposit_past_half_the_range_brings_the_balance_back_to_the_cap() {
        let retry = Retry::new(RetryPolicy::new(3).budget(0.5, 2));
        let budget = retry.budget();
        budget.balance.store(UNCAPPED_LIMIT + 1, Relaxed);
        retry.deposit();
        assert_eq!(budget.balance.load(Relaxed), budget.capacity.load(Relaxed));
        assert_eq!(budget.available(), 2 * 10 + 100);
    }

    #[test]
    fn a_huge_floor_filled_to_its_cap_survives_the_next_deposit() {
        let retry = Retry::new(RetryPolicy::new(3).budget(1.0, u32::MAX));
        let budget = retry.budget();
        assert!(retry.withdraw(0), "the first withdrawal starts the floor");
        // An hour of a floor of four billion a second fills the bucket to its
        // cap; a first attempt pays in before any retry takes a token (another
        // thread's, between this refill and its withdrawal).
        budget.refill(3_600 * SEC);
        retry.deposit();
        let held = budget.available();
        assert!(held > 1_000_000_000, "{held} retries held");
        assert!(
            retry.withdraw(3_600 * SEC),
            "a deposit never wraps the balance"
        );
    }

    #[test]
    fn a_declaration_is_known_by_its_address_only_when_static() {
        // A policy on the stack: another may later sit at its address.
        let mut policy = RetryPolicy::new(2);
        let slot = RetrySlot::default();
        let made = slot.retry("g", &policy, false, || 0);
        assert!(made.runs(&policy));
        policy = RetryPolicy::new(5).no_budget();
        assert!(
            !made.runs(&policy),
            "a new policy at the old one's address differs"
        );

        static FIXED: RetryPolicy = RetryPolicy::new(3);
        let slot = RetrySlot::default();
        let made = slot.retry("g", &FIXED, true, || 0);
        assert!(made.runs(&FIXED));
        assert!(!made.runs(&RetryPolicy::new(4)));
        assert!(
            made.runs(&RetryPolicy::new(3)),
            "an equal policy elsewhere runs it too"
        );
    }

    #[test]
    fn a_tuning_set_before_the_first_call_is_what_the_retry_is_made_with() {
        static DECLARED: RetryPolicy = RetryPolicy::new(1);
        let slot = RetrySlot::default();
        let tuning = RetryTuning {
            overriding: RetryValues {
                retries: Some(4),
                budget_floor: Some(3),
                ..RetryValues::EMPTY
            },
            ..RetryTuning::NONE
        };
        slot.tune(&tuning, 0);
        let made = slot.retry("g", &DECLARED, true, || 0);
        assert_eq!(made.effective_policy().retries(), 4);
        assert_eq!(
            made.budget().available(),
            3,
            "one second of the tuned floor"
        );
        assert_eq!(*made.policy(), DECLARED);
        assert!(made.runs(&DECLARED) && made.runs(&RetryPolicy::new(1)));
        assert!(!made.conflict_told.load(Relaxed));
    }

    #[test]
    fn a_retune_keeps_the_balance_held_to_the_new_capacity_and_pays_the_old_floor() {
        let retry = Retry::new(RetryPolicy::new(3).budget(1.0, 10));
        assert!(retry.withdraw(0), "starts the floor at 0");
        for _ in 0..150 {
            retry.deposit();
        }
        assert_eq!(retry.budget().available(), 159);
        retry.retune(&RetryPolicy::new(3).budget(1.0, 0), 0);
        assert_eq!(retry.budget().capacity(), 100);
        assert_eq!(
            retry.budget().available(),
            100,
            "held to the smaller bucket"
        );
        retry.retune(&RetryPolicy::new(3).budget(0.5, 1), 0);
        assert_eq!(
            retry.budget().available(),
            100,
            "a bigger bucket is not filled"
        );
        retry.retune(&RetryPolicy::new(3).budget(0.5, 2), SEC);
        assert_eq!(
            retry.budget().available(),
            101,
            "the second before, at the old floor"
        );
        retry.deposit();
        retry.deposit();
        assert_eq!(retry.budget().available(), 102, "two deposits of a half");
        retry.retune(&RetryPolicy::new(0).no_budget(), SEC);
        assert!(
            (0..1_000).all(|_| retry.withdraw(SEC)),
            "no budget: every retry goes"
        );
        retry.retune(&RetryPolicy::new(3).budget(0.5, 2), SEC);
        assert_eq!(
            retry.budget().available(),
            102,
            "the bucket resumes as it was left"
        );
    }

    #[test]
    fn the_declarations_own_keys_stand_between_the_two_layers() {
        let declared = RetryPolicy::new(2).budget_floor(7);
        let fallback = RetryValues {
            retries: Some(9),
            budget_ratio: Some(0.5),
            budget_floor: Some(1),
            ..RetryValues::EMPTY
        };
        let under = RetryTuning {
            fallback,
            ..RetryTuning::NONE
        };
        let runs = under.over(&declared);
        assert_eq!((runs.retries(), runs.budget_limits()), (2, Some((0.5, 7))));
        let over = RetryTuning {
            fallback,
            overriding: RetryValues {
                retries: Some(0),
                ..RetryValues::EMPTY
            },
        };
        assert_eq!(over.over(&declared).retries(), 0);
        assert_eq!(RetryTuning::NONE.over(&declared), declared);
        let code_without_budget = RetryPolicy::new(1).no_budget();
        assert_eq!(under.over(&code_without_budget).budget_limits(), None);
    }

    #[test]
    fn a_floor_set_to_zero_and_restored_pays_nothing_for_the_span_at_zero() {
        let retry = Retry::new(RetryPolicy::new(3).budget(0.0, 5));
        while retry.withdraw(0) {}
        retry.retune(&RetryPolicy::new(3).budget(0.0, 0), 0);
        assert!(!retry.withdraw(3_600 * SEC), "a floor of 0 earns nothing");
        retry.retune(&RetryPolicy::new(3).budget(0.0, 5), 3_600 * SEC);
        assert_eq!(retry.budget().available(), 0, "the hour at 0 is not paid");
        assert!(!retry.withdraw(3_600 * SEC));
        assert!(
            retry.withdraw(3_600 * SEC + SEC / 5),
            "5 a second from then on"
        );
    }

    #[test]
    fn a_bigger_bucket_gives_no_more_than_the_old_one_could() {
        let retry = Retry::new(RetryPolicy::new(3).budget(1.0, 10));
        assert!(retry.withdraw(0));
        for _ in 0..1_000_000 {
            retry.deposit();
        }
        assert_eq!(
            retry.budget().available(),
            200,
            "held to ten seconds and a hundred"
        );
        retry.retune(&RetryPolicy::new(3).budget(1.0, 100), 0);
        assert_eq!(retry.budget().capacity(), 1_100);
        assert_eq!(
            retry.budget().available(),
            200,
            "the deposits banked past the old cap are not retries"
        );
    }

    #[test]
    fn a_budget_given_to_a_policy_without_one_starts_as_a_new_bucket() {
        let retry = Retry::new(RetryPolicy::new(3).no_budget());
        assert!(retry.withdraw(0));
        retry.retune(&RetryPolicy::new(3).budget(0.0, 4), 10 * SEC);
        assert_eq!(retry.budget().available(), 4, "one second of the floor");
        let fresh = Retry::new(RetryPolicy::new(3).budget(0.0, 4));
        assert_eq!(fresh.budget().available(), 4, "as one made with it");
    }

    #[test]
    fn idempotent_alone_takes_its_groups_retry_keys_whichever_calls_first() {
        static ALONE: RetryPolicy = RetryPolicy::new(0).retries_unset();
        static TWICE: RetryPolicy = RetryPolicy::new(2);
        // The fn of `idempotent = true` alone calls first, then the one with
        // `retry = 2`: the group's retries become two.
        let slot = RetrySlot::default();
        assert_eq!(
            slot.retry("g", &ALONE, true, || 0)
                .effective_policy()
                .retries(),
            0
        );
        let retry = slot.retry("g", &TWICE, true, || 0);
        assert_eq!(retry.effective_policy().retries(), 2);
        assert_eq!(*retry.policy(), TWICE);
        assert!(std::ptr::eq(retry, slot.retry("g", &ALONE, true, || 0)));
        assert!(!retry.conflict_told.load(Relaxed), "no conflict either way");
        // The other order.
        let slot = RetrySlot::default();
        slot.retry("g", &TWICE, true, || 0);
        let retry = slot.retry("g", &ALONE, true, || 0);
        assert_eq!(retry.effective_policy().retries(), 2);
        assert!(!retry.conflict_told.load(Relaxed));
        // A file's tuning over the group holds over the adopted keys.
        let slot = RetrySlot::default();
        slot.tune(
            &RetryTuning {
                overriding: RetryValues {
                    retries: Some(5),
                    ..RetryValues::EMPTY
                },
                ..RetryTuning::NONE
            },
            0,
        );
        slot.retry("g", &ALONE, true, || 0);
        let retry = slot.retry("g", &TWICE, true, || 0);
        assert_eq!(retry.effective_policy().retries(), 5);
    }

    #[test]
    fn without_a_budget_every_retry_goes() {
        let retry = Retry::new(RetryPolicy::new(3).no_budget());
        assert!((0..10_000).all(|_| retry.withdraw(0)));
    }
}
