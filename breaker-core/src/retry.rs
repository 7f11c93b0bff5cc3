//! Retries composed with the breaker: the [`RetryPolicy`] (attempts, a capped
//! exponential backoff with full jitter, an overall deadline, a budget), the
//! [`Retry`] that runs it with its group's [`budget`](Retry::budget), and the
//! [`RetryAfterHint`] an error implements to direct the next delay.
//!
//! A retried call runs, outermost first: the bulkhead (one place for the
//! logical call) > the retry loop > the breaker (one permit, one outcome, per
//! attempt) > the timeout > the call. A refusal is never retried; a retry never
//! starts once the circuit no longer admits, nor waits past the deadline.
//! See [`Breaker::call_retrying`](crate::Breaker::call_retrying).

use std::time::Duration;

use crate::sync::{AtomicBool, AtomicU64, OnceLock, Ordering::*};

/// An error that may say how long to wait before the call is repeated (an
/// HTTP `Retry-After`, a rate limiter's reset): the next attempt waits at
/// least that long, never less than the backoff drew.
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
/// The default delay before the first retry, before jitter.
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(50);
/// The default cap on any one backed-off delay.
pub const DEFAULT_RETRY_CAP: Duration = Duration::from_secs(2);

/// How a call is retried: `retries` more attempts at most after the first,
/// the `k`-th retry after a delay drawn uniformly from
/// `[0, min(cap, backoff × 2^(k-1))]` ("full jitter"), a server-directed
/// [`RetryAfterHint`] as that delay's floor, no wait that would end past the
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
///         .backoff(Duration::from_millis(20))
///         .cap(Duration::from_millis(500))
///         .budget(0.1, 5),
/// );
/// assert_eq!(PAYMENTS.policy().retries(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    retries: u32,
    backoff_nanos: u64,
    cap_nanos: u64,
    deadline_nanos: Option<u64>,
    /// `None`: no budget (every permitted retry goes).
    budget: Option<(f64, u32)>,
}

impl RetryPolicy {
    /// Up to `retries` attempts after the first (so `retries + 1` in all), the
    /// default backoff ([`DEFAULT_RETRY_BACKOFF`], capped at
    /// [`DEFAULT_RETRY_CAP`]) and the default budget
    /// ([`DEFAULT_BUDGET_RATIO`] of first attempts plus
    /// [`DEFAULT_BUDGET_FLOOR`] per second).
    pub const fn new(retries: u32) -> Self {
        RetryPolicy {
            retries,
            backoff_nanos: DEFAULT_RETRY_BACKOFF.as_nanos() as u64,
            cap_nanos: DEFAULT_RETRY_CAP.as_nanos() as u64,
            deadline_nanos: None,
            budget: Some((DEFAULT_BUDGET_RATIO, DEFAULT_BUDGET_FLOOR)),
        }
    }

    /// The upper end of the first retry's delay, doubled for each retry after
    /// it (saturating at about 584 years).
    pub const fn backoff(mut self, first: Duration) -> Self {
        self.backoff_nanos = nanos(first);
        self
    }

    /// The cap on the upper end of any retry's backed-off delay (a server's
    /// [`RetryAfterHint`] may still ask for longer).
    pub const fn cap(mut self, cap: Duration) -> Self {
        self.cap_nanos = nanos(cap);
        self
    }

    /// The overall deadline of the call, from its first attempt: a retry whose
    /// delay would end past it is not made, and the last error is returned.
    pub const fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline_nanos = Some(nanos(deadline));
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
        self.budget(ratio, floor)
    }

    /// The budget's retries a second allowed whatever the traffic, its ratio
    /// as it is (or [`DEFAULT_BUDGET_RATIO`] after [`no_budget`](Self::no_budget)).
    pub const fn budget_floor(self, floor: u32) -> Self {
        let ratio = match self.budget {
            Some((ratio, _)) => ratio,
            None => DEFAULT_BUDGET_RATIO,
        };
        self.budget(ratio, floor)
    }

    /// No budget: every retry the policy allows is made. Use only where the
    /// dependency cannot be overloaded by the callers' retries.
    pub const fn no_budget(mut self) -> Self {
        self.budget = None;
        self
    }

    /// Attempts after the first, at most.
    pub const fn retries(&self) -> u32 {
        self.retries
    }

    /// The first retry's delay bound ([`backoff`](Self::backoff)).
    pub const fn first_backoff(&self) -> Duration {
        Duration::from_nanos(self.backoff_nanos)
    }

    /// The cap on a backed-off delay ([`cap`](Self::cap)).
    pub const fn backoff_cap(&self) -> Duration {
        Duration::from_nanos(self.cap_nanos)
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

    /// The upper end of the `retry`-th retry's delay (1 is the first).
    pub(crate) fn ceiling(&self, retry: u32) -> u64 {
        let doublings = retry.saturating_sub(1).min(63);
        self.backoff_nanos
            .saturating_mul(1u64 << doublings)
            .min(self.cap_nanos)
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
#[derive(Debug)]
pub struct Retry {
    policy: RetryPolicy,
    budget: RetryBudget,
    draws: AtomicU64,
    /// The address of the declaration a group's `Retry` was made from (0 for
    /// one made with `new`): a later call with that same declaration skips
    /// comparing the policies.
    declared_at: usize,
    /// Whether a conflicting declaration was reported.
    conflict_told: AtomicBool,
}

impl Retry {
    /// `policy` with its budget holding one second of its floor.
    #[cfg(not(loom))]
    pub const fn new(policy: RetryPolicy) -> Self {
        let (ratio, floor) = match policy.budget {
            Some(limits) => limits,
            None => (0.0, 0),
        };
        Retry {
            policy,
            budget: RetryBudget::new(ratio, floor),
            draws: AtomicU64::new(0),
            declared_at: 0,
            conflict_told: AtomicBool::new(false),
        }
    }

    /// `policy` with its budget holding one second of its floor (loom's
    /// atomics are not const).
    #[cfg(loom)]
    pub fn new(policy: RetryPolicy) -> Self {
        let (ratio, floor) = policy.budget.unwrap_or((0.0, 0));
        Retry {
            policy,
            budget: RetryBudget::new(ratio, floor),
            draws: AtomicU64::new(0),
            declared_at: 0,
            conflict_told: AtomicBool::new(false),
        }
    }

    /// A group's `Retry`, made from `declared`; a `fixed` declaration (a
    /// `static`, which no other policy can ever sit at) is known by its
    /// address from then on.
    fn declared(declared: &RetryPolicy, fixed: bool) -> Self {
        Retry {
            declared_at: if fixed { address(declared) } else { 0 },
            ..Retry::new(*declared)
        }
    }

    /// Whether `declared` is the declaration this `Retry` runs, or equal to it.
    #[inline]
    fn runs(&self, declared: &RetryPolicy) -> bool {
        self.declared_at == address(declared) || self.policy == *declared
    }

    /// A declaration of `group` that differs from the one this `Retry` runs:
    /// logged once, at `warn`; the first declaration holds.
    #[cold]
    #[inline(never)]
    fn conflict(&self, group: &str, ignored: &RetryPolicy) {
        if !self.conflict_told.swap(true, Relaxed) {
            log::warn!(
                "breaker: group `{group}` declared with two retry policies; the group's \
                 budget keeps {:?} (first declaration); ignored {ignored:?}",
                self.policy
            );
        }
    }

    /// The policy it runs.
    pub const fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// The budget its retries draw on.
    pub fn budget(&self) -> &RetryBudget {
        &self.budget
    }

    /// Whether a retry may be made now (by the clock reading `now`), taking
    /// one token if so; always with no budget.
    pub(crate) fn withdraw(&self, now: u64) -> bool {
        self.policy.budget.is_none() || self.budget.try_withdraw(now)
    }

    /// A first attempt was made: the budget earns its share.
    #[inline]
    pub(crate) fn deposit(&self) {
        if self.policy.budget.is_some() {
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
#[derive(Debug)]
pub(crate) struct RetrySlot {
    retry: OnceLock<Retry>,
}

impl Default for RetrySlot {
    fn default() -> Self {
        RetrySlot {
            retry: OnceLock::new(),
        }
    }
}

impl RetrySlot {
    /// The group's `Retry`, made from `declared` by the first call (`fixed`:
    /// `declared` is a `static`). A later declaration that differs is reported
    /// once (see [`Retry::conflict`]) and draws on the first one's budget,
    /// under the first one's policy.
    #[inline]
    pub(crate) fn retry(&self, group: &str, declared: &RetryPolicy, fixed: bool) -> &Retry {
        let retry = match self.retry.get() {
            Some(retry) => retry,
            None => self.retry.get_or_init(|| Retry::declared(declared, fixed)),
        };
        if !retry.runs(declared) {
            retry.conflict(group, declared);
        }
        retry
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
    deposit: u64,
    floor: u64,
    capacity: u64,
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

impl RetryBudget {
    #[cfg(not(loom))]
    const fn new(ratio: f64, floor: u32) -> Self {
        let floor = floor as u64;
        RetryBudget {
            balance: AtomicU64::new(floor.saturating_mul(TOKEN)),
            refilled_at: AtomicU64::new(NEVER),
            deposit: (ratio * TOKEN as f64) as u64,
            floor,
            capacity: capacity(floor),
        }
    }

    #[cfg(loom)]
    fn new(ratio: f64, floor: u32) -> Self {
        let floor = floor as u64;
        RetryBudget {
            balance: AtomicU64::new(floor.saturating_mul(TOKEN)),
            refilled_at: AtomicU64::new(NEVER),
            deposit: (ratio * TOKEN as f64) as u64,
            floor,
            capacity: capacity(floor),
        }
    }

    /// Whole retries the bucket holds now (before the floor's refill due).
    pub fn available(&self) -> u64 {
        self.balance.load(Relaxed).min(self.capacity) / TOKEN
    }

    /// One add, the cap applied when the balance is next read: adding first
    /// and capping later caps exactly as capping each add would (`min(cap,
    /// min(cap, b) + d) == min(cap, b + d)` for `d >= 0`). A balance that no
    /// withdrawal has capped for half the range is capped here, so it never wraps.
    #[inline]
    fn deposit(&self) {
        let before = self.balance.fetch_add(self.deposit, Relaxed);
        if before > UNCAPPED_LIMIT {
            self.cap_now();
        }
    }

    /// Caps the balance now, and at most at half the range: a floor so large
    /// that its ten seconds pass that (some 900 million retries a second) is
    /// held to it, never wrapped.
    #[cold]
    fn cap_now(&self) {
        let capacity = self.capacity.min(UNCAPPED_LIMIT);
        let _ = self
            .balance
            .fetch_update(Relaxed, Relaxed, |b| Some(b.min(capacity)));
    }

    fn try_withdraw(&self, now: u64) -> bool {
        self.refill(now);
        let capacity = self.capacity;
        self.balance
            .fetch_update(AcqRel, Relaxed, |b| b.min(capacity).checked_sub(TOKEN))
            .is_ok()
    }

    /// Pays the floor from the last refill up to `now`: the thread that moves
    /// the refill time pays for the span it moved it over, so each nanosecond
    /// is paid once.
    fn refill(&self, now: u64) {
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
            if now <= last || self.floor == 0 {
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
        let earned = self.floor.saturating_mul(now - last);
        let capacity = self.capacity;
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
    fn the_ceiling_doubles_from_the_backoff_up_to_the_cap() {
        let p = RetryPolicy::new(5)
            .backoff(Duration::from_millis(10))
            .cap(Duration::from_millis(50));
        let ceilings: Vec<u64> = (1..=5).map(|k| p.ceiling(k) / 1_000_000).collect();
        assert_eq!(ceilings, [10, 20, 40, 50, 50]);
        assert_eq!(
            RetryPolicy::new(1).ceiling(400),
            DEFAULT_RETRY_CAP.as_nanos() as u64
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
        assert_eq!(budget.balance.load(Relaxed), budget.capacity);
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
        let made = slot.retry("g", &policy, false);
        assert!(made.runs(&policy));
        policy = RetryPolicy::new(5).no_budget();
        assert!(
            !made.runs(&policy),
            "a new policy at the old one's address differs"
        );

        static FIXED: RetryPolicy = RetryPolicy::new(3);
        let slot = RetrySlot::default();
        let made = slot.retry("g", &FIXED, true);
        assert!(made.runs(&FIXED));
        assert!(!made.runs(&RetryPolicy::new(4)));
        assert!(
            made.runs(&RetryPolicy::new(3)),
            "an equal policy elsewhere runs it too"
        );
    }

    #[test]
    fn without_a_budget_every_retry_goes() {
        let retry = Retry::new(RetryPolicy::new(3).no_budget());
        assert!((0..10_000).all(|_| retry.withdraw(0)));
    }
}
