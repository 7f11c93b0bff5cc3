//! A keyed group's worst keys: the few keys that are not closed, most opened
//! first, found in one pass over the group that clones only the keys it keeps.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::hash::Hash;

use super::{KeyedGroup, Shared};
use crate::metrics::Metrics;
use crate::state::State;

/// What ranks a key among the worst: times opened, then failures, then
/// refusals; more is worse.
fn rank(m: &Metrics) -> (u64, u64, u64) {
    (m.times_opened, m.failures, m.rejected)
}

/// How two keys of equal rank are ordered: the one ordered first is listed
/// first.
type Tie<'a, K> = &'a dyn Fn(&K, &K) -> Ordering;

/// One key held while the pass goes on: a reference into the map (the pass's
/// guard keeps it alive) and its reading, ordered by [`rank`], then by `tie`;
/// the greater is the worse.
struct Candidate<'a, K> {
    key: &'a K,
    metrics: Metrics,
    tie: Tie<'a, K>,
}

impl<K> PartialEq for Candidate<'_, K> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<K> Eq for Candidate<'_, K> {}

impl<K> PartialOrd for Candidate<'_, K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K> Ord for Candidate<'_, K> {
    fn cmp(&self, other: &Self) -> Ordering {
        rank(&self.metrics)
            .cmp(&rank(&other.metrics))
            .then_with(|| (self.tie)(other.key, self.key))
    }
}

impl<K: Hash + Eq + Send + Sync + 'static> Shared<K> {
    /// See [`KeyedGroup::worst_keys`]; `tie` orders keys of equal rank,
    /// `own` makes the kept keys' value.
    pub(super) fn worst_keys<T>(
        &self,
        limit: usize,
        tie: Tie<'_, K>,
        own: impl Fn(&K) -> T,
    ) -> Vec<(T, Metrics)> {
        if limit == 0 {
            return Vec::new();
        }
        let map = self.map.pin();
        // The `limit` worst so far, the least bad on top: a key worse than it
        // takes its place. Closed keys are passed over on their state alone.
        // Sized by the keys there are, not by `limit`, which may be any `usize`.
        let mut kept: BinaryHeap<Reverse<Candidate<'_, K>>> =
            BinaryHeap::with_capacity(limit.min(map.len()).saturating_add(1));
        for (key, entry) in map.iter() {
            if matches!(entry.breaker.state(), State::Closed | State::ForcedClosed) {
                continue;
            }
            let candidate = Candidate {
                key,
                metrics: entry.breaker.metrics(),
                tie,
            };
            if kept.len() < limit {
                kept.push(Reverse(candidate));
            } else if kept.peek().is_some_and(|Reverse(least)| candidate > *least) {
                kept.pop();
                kept.push(Reverse(candidate));
            }
        }
        // `into_sorted_vec` of `Reverse` is worst first.
        kept.into_sorted_vec()
            .into_iter()
            .map(|Reverse(c)| (own(c.key), c.metrics))
            .collect()
    }
}

impl<K: Hash + Eq + Send + Sync + 'static> KeyedGroup<K> {
    /// The group's `limit` worst keys with their metrics, worst first: keys
    /// that are open, forced open or half-open (never a closed one), ranked
    /// by times opened, then failures, then refusals, then by key (`K`'s
    /// order). Pure.
    ///
    /// One pass over the keys: a closed key costs a look at its state, a
    /// key that is not closed a reading of its metrics, and only the keys
    /// returned are cloned, so a group of a million keys with a thousand open
    /// ones answers `worst_keys(10)` with ten clones and memory for ten.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use breakerbox::{keyed::KeyedGroup, Config, State};
    ///
    /// let hosts = KeyedGroup::<String>::new("upstream", Config::builder().threshold(1).build().unwrap(), 100);
    /// hosts.breaker("up.example").try_acquire().unwrap().success();
    /// hosts.breaker("down.example").try_acquire().unwrap().failure();
    /// let worst = hosts.worst_keys(10);
    /// assert_eq!(worst.len(), 1);
    /// assert_eq!((worst[0].0.as_str(), worst[0].1.state), ("down.example", State::Open));
    /// ```
    pub fn worst_keys(&self, limit: usize) -> Vec<(K, Metrics)>
    where
        K: Clone + Ord,
    {
        self.shared.worst_keys(limit, &K::cmp, K::clone)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::time::Duration;

    use crate::{Config, ManualClock, Registry, State};

    #[test]
    fn the_most_opened_keys_come_first_and_closed_keys_never() {
        let clock = ManualClock::new();
        let registry = Registry::with_clock(clock.clone());
        let config = Config::builder()
            .threshold(1)
            .open(Duration::from_millis(1_000))
            .max_open(Duration::from_millis(60_000))
            .build()
            .unwrap();
        let group = registry.keyed::<u32>("ranked", &config, 1_000).unwrap();
        for key in 0..200 {
            group.breaker(&key).try_acquire().unwrap().success();
        }
        // Key 10 opens three times, key 20 twice, key 30 once; 40 is forced.
        for (key, opens) in [(10, 3), (20, 2), (30, 1)] {
            let breaker = group.breaker(&key);
            for _ in 0..opens {
                breaker.try_acquire().unwrap().failure();
                // Past any backoff: the next claim is a probe.
                clock.advance(Duration::from_secs(600));
            }
        }
        group.breaker(&40).force_open();
        let worst: Vec<_> = group.worst_keys(2).into_iter().map(|(k, _)| k).collect();
        assert_eq!(worst, [10, 20]);
        let all = group.worst_keys(100);
        let keys: Vec<_> = all.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, [10, 20, 30, 40]);
        assert!(all
            .iter()
            .all(|(_, m)| !matches!(m.state, State::Closed | State::ForcedClosed)));
        assert!(group.worst_keys(0).is_empty());
        // Any limit is an answer, not an allocation of that size.
        assert_eq!(group.worst_keys(usize::MAX).len(), 4);
        let named = registry.keyed_worst_keys("ranked", 1).unwrap();
        assert_eq!(&*named[0].0, "10");
        assert_eq!(named[0].1.times_opened, 3);
    }
}
