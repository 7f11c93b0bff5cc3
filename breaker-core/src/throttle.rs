//! The adaptive throttle (`throttle`): client-side shedding in proportion to
//! what the dependency accepts, admitted by the ramp's deterministic credit.
//!
//! # The share refused
//!
//! Over the last `throttle_window_ms` the throttle counts `requests` (every
//! claim it judged that ended: admitted calls when their verdict comes, and
//! the claims it refused) and `accepts` (calls the dependency answered: a
//! success, or an error the classifier ignores). A claim is refused with the
//! share
//!
//! ```text
//! p = max(0, (requests - K * accepts) / (requests + 1)),   at most max_reject
//! ```
//!
//! (the client-side throttling of Google's SRE book), and none while the
//! window's request rate is below `throttle_min_rps`. With the calls offered
//! steady, the calls that go settle where `requests * (1 - p)` is `K * accepts`:
//! about `K` times what the dependency takes, with no hard open and no timer.
//!
//! # Admission
//!
//! Each claim adds its admitted share `1 - p` to a credit; the claim whose
//! addition carries the credit past a whole call goes
//! ([`take_credit`](crate::ramp::take_credit), the ramp's rule). So of any `n`
//! consecutive claims at one share the number admitted is within one of
//! `n * (1 - p)`, whatever the interleaving, and a replay of the same claims
//! and outcomes admits the same calls.

use std::time::Duration;

use breaker_rules::ThrottleRules;

use crate::clock::{millis_to_nanos, ClockSource};
use crate::policy::Tally;
use crate::ramp::{take_credit, would_take, ONE};
use crate::sync::{AtomicBool, AtomicU64, Ordering::*};

/// One breaker's throttle: its tally, its credit and what it refused.
#[derive(Debug)]
pub(crate) struct Throttle {
    tally: Tally,
    /// The credit, in `ONE`s per call (wrapping: only crossings count).
    credit: AtomicU64,
    /// Claims refused (shadow mode's are counted as the breaker's
    /// `shadow_refused` instead).
    throttled: AtomicU64,
    /// Whether the latest claim judged found a share above zero: the edge
    /// that the start and stop of throttling are told on.
    throttling: AtomicBool,
}

/// What the throttle says to one claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Judged {
    /// The claim goes on to the breaker.
    Admitted,
    /// Refused; the window drops its oldest slice `retry_after` nanos from now.
    Refused { retry_after: u64 },
}

/// A change of the throttle's mode, found by the claim that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge {
    /// The share refused rose above zero.
    Started,
    /// The share refused fell back to zero.
    Stopped,
}

impl Throttle {
    /// An empty throttle of `rules`' window, on `clock` (whose kind decides
    /// whether the window may count by the coarse reading).
    pub(crate) fn new(rules: &ThrottleRules, clock: &ClockSource) -> Self {
        Throttle {
            tally: Tally::new(rules.window_ms.get(), clock.is_monotonic()),
            credit: AtomicU64::new(0),
            throttled: AtomicU64::new(0),
            throttling: AtomicBool::new(false),
        }
    }

    /// The time to judge and count at, on `clock`.
    #[inline]
    pub(crate) fn now(&self, clock: &ClockSource) -> u64 {
        self.tally.now(clock)
    }

    /// The share of claims refused at `now` under `rules`, in `[0, max_reject]`.
    /// Pure. A window whose every request was accepted refuses none (`K` is
    /// at least 1): known from one load, without reading its buckets.
    pub(crate) fn reject_share(&self, now: u64, rules: &ThrottleRules) -> f64 {
        if self.tally.all_accepted(now) {
            return 0.0;
        }
        let (requests, accepts) = self.tally.counts(now);
        reject_share(requests, accepts, rules)
    }

    /// One claim at `now`: admitted, or refused by the credit, and the edge it
    /// found, if the share refused crossed zero since the claim before.
    pub(crate) fn admit(&self, now: u64, rules: &ThrottleRules) -> (Judged, Option<Edge>) {
        let p = self.reject_share(now, rules);
        let edge = self.edge(p > 0.0);
        if p <= 0.0 {
            return (Judged::Admitted, edge);
        }
        match take_credit(&self.credit, admitted_share(p)) {
            Ok(()) => (Judged::Admitted, edge),
            Err(_) => (
                Judged::Refused {
                    retry_after: self.until_next_bucket(now),
                },
                edge,
            ),
        }
    }

    /// The refusal a claim at `now` would meet, without taking credit: `None`
    /// when it would be admitted, else its `retry_after`. Pure.
    pub(crate) fn refusal(&self, now: u64, rules: &ThrottleRules) -> Option<u64> {
        let p = self.reject_share(now, rules);
        (p > 0.0 && !would_take(&self.credit, admitted_share(p)))
            .then(|| self.until_next_bucket(now))
    }

    /// Counts a call the throttle admitted that ended at `now`: `accepted`
    /// when the dependency answered it (a success, an ignored error).
    pub(crate) fn record(&self, now: u64, accepted: bool) {
        self.tally.record(now, accepted);
    }

    /// Counts a claim refused at `now`: a request the dependency never saw,
    /// and one more throttled call.
    pub(crate) fn refused(&self, now: u64) {
        self.tally.record(now, false);
        self.throttled.fetch_add(1, Relaxed);
    }

    /// Claims refused since the breaker was made.
    pub(crate) fn throttled(&self) -> u64 {
        self.throttled.load(Relaxed)
    }

    /// What the throttle holds at `now` under `rules`. Pure.
    pub(crate) fn metrics(&self, now: u64, rules: &ThrottleRules) -> ThrottleMetrics {
        let (requests, accepts) = self.tally.counts(now);
        ThrottleMetrics {
            requests,
            accepts,
            reject_share: reject_share(requests, accepts, rules),
            window: Duration::from_millis(rules.window_ms.get()),
        }
    }

    /// Notes whether the share refused is above zero now; the edge, when this
    /// claim is the first to find the mode changed.
    fn edge(&self, throttling: bool) -> Option<Edge> {
        // A load first: the common claim finds the mode as it was, and writes
        // nothing.
        if self.throttling.load(Relaxed) == throttling
            || self.throttling.swap(throttling, Relaxed) == throttling
        {
            return None;
        }
        Some(if throttling {
            Edge::Started
        } else {
            Edge::Stopped
        })
    }

    /// Nanos from `now` until the window drops its oldest slice (at least 1).
    fn until_next_bucket(&self, now: u64) -> u64 {
        let bucket = self.tally.bucket_nanos().max(1);
        bucket - now % bucket
    }
}

/// The SRE book's share: `max(0, (requests - K * accepts) / (requests + 1))`,
/// capped at `max_reject`; zero below `min_rps` requests a second over the window.
fn reject_share(requests: u64, accepts: u64, rules: &ThrottleRules) -> f64 {
    if requests == 0 {
        return 0.0;
    }
    let requests = requests as f64;
    let window_secs = millis_to_nanos(rules.window_ms.get()) as f64 / 1e9;
    if requests < rules.min_rps * window_secs {
        return 0.0;
    }
    let p = (requests - rules.k * accepts as f64) / (requests + 1.0);
    // `max`/`min` rather than `clamp`: never a panic, and no NaN comes in.
    p.max(0.0).min(rules.max_reject)
}

/// The share admitted at reject share `p` (above zero, below one), in `ONE`s.
fn admitted_share(p: f64) -> u64 {
    // `as` saturates; `1 - p` is in (0, 1), so the share is below `ONE`.
    ((1.0 - p) * ONE as f64) as u64
}

/// What a group's adaptive throttle (`throttle`) holds now.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ThrottleMetrics {
    /// Requests in the window: calls the throttle admitted that ended, and
    /// the claims it refused.
    pub requests: u64,
    /// Requests the dependency accepted: successes and ignored errors.
    pub accepts: u64,
    /// The share of claims refused now, in `[0, throttle_max_reject]`:
    /// `max(0, (requests - K * accepts) / (requests + 1))`, or 0 below
    /// `throttle_min_rps`.
    pub reject_share: f64,
    /// The window requests and accepts are counted over.
    pub window: Duration,
}

/// Equal when every field is, the share compared bit for bit (it is never NaN).
impl PartialEq for ThrottleMetrics {
    fn eq(&self, other: &Self) -> bool {
        self.requests == other.requests
            && self.accepts == other.accepts
            && self.reject_share.to_bits() == other.reject_share.to_bits()
            && self.window == other.window
    }
}

impl Eq for ThrottleMetrics {}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::num::NonZeroU64;

    use super::*;
    use crate::ManualClock;

    fn rules(k: f64, max_reject: f64, min_rps: f64) -> ThrottleRules {
        let config = crate::Config::builder()
            .throttle(k)
            .throttle_window(Duration::from_secs(10))
            .throttle_max_reject(max_reject)
            .throttle_min_rps(min_rps)
            .build()
            .unwrap();
        let rules = config.throttle_rules().unwrap();
        assert_eq!(rules.window_ms, NonZeroU64::new(10_000).unwrap());
        rules
    }

    fn throttle(rules: &ThrottleRules) -> Throttle {
        Throttle::new(rules, &ClockSource::of(ManualClock::new()))
    }

    #[test]
    fn the_share_refused_is_the_sre_formula_capped() {
        let r = rules(2.0, 0.9, 0.0);
        assert_eq!(reject_share(0, 0, &r), 0.0);
        assert_eq!(reject_share(99, 40, &r), (99.0 - 80.0) / 100.0);
        assert_eq!(reject_share(100, 50, &r), 0.0, "K times the accepts: none");
        assert_eq!(reject_share(100, 80, &r), 0.0, "never below zero");
        assert_eq!(reject_share(1_000, 0, &r), 0.9, "capped");
        // 10 requests over a 10 s window is 1 a second: below 2, nothing.
        let quiet = rules(2.0, 0.9, 2.0);
        assert_eq!(reject_share(10, 0, &quiet), 0.0);
        assert_eq!(reject_share(20, 0, &quiet), 0.9);
    }

    #[test]
    fn of_n_claims_at_one_share_the_count_admitted_is_exact_to_within_one() {
        let r = rules(1.5, 0.95, 0.0);
        let throttle = throttle(&r);
        // 100 requests, 20 accepted: p = (100 - 30) / 101.
        for i in 0..100 {
            throttle.record(0, i < 20);
        }
        let p = throttle.reject_share(0, &r);
        assert_eq!(p, 70.0 / 101.0);
        let mut admitted = 0u64;
        for n in 1..=1_000u64 {
            // Judged at one moment, with nothing recorded between: one share.
            if throttle.admit(0, &r).0 == Judged::Admitted {
                admitted += 1;
            }
            let exact = (admitted_share(p) as u128 * n as u128 / ONE as u128) as u64;
            assert!(
                admitted == exact || admitted == exact + 1,
                "{admitted} of {n} admitted, the share says {exact}"
            );
        }
    }

    #[test]
    fn claims_racing_on_threads_are_admitted_at_the_share_to_within_one() {
        let r = rules(1.0, 0.9, 0.0);
        let throttle = throttle(&r);
        // Seven requests, one accepted: a quarter of the claims go.
        for i in 0..7 {
            throttle.record(0, i == 0);
        }
        let admitted = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        if throttle.admit(0, &r).0 == Judged::Admitted {
                            admitted.fetch_add(1, Relaxed);
                        }
                    }
                });
            }
        });
        let admitted = admitted.into_inner();
        assert!((10_000..=10_001).contains(&admitted), "{admitted} of 40000");
    }

    #[test]
    fn a_refusal_says_when_the_window_moves_on_and_asking_takes_no_credit() {
        let r = rules(1.0, 0.9, 0.0);
        let throttle = throttle(&r);
        // Seven requests, one accepted: p = (7 - 1) / 8, a quarter of a call
        // a claim: three refused, the fourth admitted.
        for i in 0..7 {
            throttle.record(0, i == 0);
        }
        let ms = 1_000_000;
        let now = 2_500 * ms;
        assert_eq!(throttle.reject_share(now, &r), 0.75);
        for _ in 0..3 {
            assert_eq!(throttle.refusal(now, &r), Some(500 * ms));
            assert_eq!(
                throttle.admit(now, &r).0,
                Judged::Refused {
                    retry_after: 500 * ms
                }
            );
        }
        assert_eq!(throttle.refusal(now, &r), None);
        assert_eq!(throttle.refusal(now, &r), None, "asking took nothing");
        assert_eq!(throttle.admit(now, &r).0, Judged::Admitted);
    }

    #[test]
    fn the_edges_are_found_once_each() {
        let r = rules(1.0, 0.9, 0.0);
        let throttle = throttle(&r);
        assert_eq!(throttle.admit(0, &r), (Judged::Admitted, None));
        throttle.record(0, false);
        let (_, edge) = throttle.admit(0, &r);
        assert_eq!(edge, Some(Edge::Started));
        assert_eq!(throttle.admit(0, &r).1, None);
        // A window later, nothing is left: throttling stops.
        let later = 10_000 * 1_000_000;
        assert_eq!(
            throttle.admit(later, &r),
            (Judged::Admitted, Some(Edge::Stopped))
        );
        assert_eq!(throttle.admit(later, &r), (Judged::Admitted, None));
    }
}
