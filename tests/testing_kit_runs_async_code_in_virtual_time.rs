//! Async code behind plain `#[circuit_breaker]` fns, tested through
//! `breakerbox::testing`: on tokio's paused clock (`TestKit::tokio`), a
//! `timeout_ms`, the open duration and its backoff all pass in virtual time;
//! on a multi-thread runtime, `TestKit::scope` carries the kit into tasks
//! polled on any worker.

use std::time::Duration;

use breakerbox::testing::{Script, TestKit};
use breakerbox::{registry, State};
use tokio::time::Instant;

/// The application's code, as it ships.
mod search {
    use std::time::Duration;

    use breakerbox::testing::Script;
    use breakerbox::{circuit_breaker, CircuitOpen, TimedOut};

    #[derive(Debug, PartialEq)]
    pub enum SearchError {
        Open,
        Late,
    }

    impl From<CircuitOpen> for SearchError {
        fn from(_: CircuitOpen) -> Self {
            SearchError::Open
        }
    }

    impl From<TimedOut> for SearchError {
        fn from(_: TimedOut) -> Self {
            SearchError::Late
        }
    }

    /// An index that answers after a delay (in a test, a scripted one).
    pub struct Index {
        pub delays: Script<Duration>,
    }

    #[circuit_breaker(
        group = "search",
        threshold = 1,
        timeout_ms = 100,
        open_ms = 1000,
        backoff = 2.0,
        max_open_ms = 8000
    )]
    pub async fn search(index: &Index, q: &str) -> Result<usize, SearchError> {
        tokio::time::sleep(index.delays.next()).await;
        Ok(q.len())
    }

    /// Hops between worker threads on its way.
    #[circuit_breaker(group = "suggest")]
    pub async fn suggest(q: String) -> Result<usize, SearchError> {
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        Ok(q.len())
    }
}

use search::{Index, SearchError};

#[tokio::test(start_paused = true)]
async fn timeouts_and_backoff_pass_in_virtual_time() {
    let kit = TestKit::tokio();
    let index = Index {
        delays: Script::new([
            Duration::from_secs(5),
            Duration::from_secs(5),
            Duration::from_millis(10),
        ]),
    };
    let start = Instant::now();
    kit.scope(async {
        // Times out at 100 ms: a failure, and the threshold of 1 trips.
        assert_eq!(search::search(&index, "q").await, Err(SearchError::Late));
        assert_eq!(start.elapsed(), Duration::from_millis(100));
        assert_eq!(kit.state("search"), Some(State::Open));
        assert_eq!(search::search(&index, "q").await, Err(SearchError::Open));
        // After the open duration a probe goes; it times out too and the
        // circuit reopens for twice as long.
        tokio::time::sleep(Duration::from_millis(1000)).await;
        assert_eq!(search::search(&index, "q").await, Err(SearchError::Late));
        kit.advance_tokio(Duration::from_millis(1999)).await;
        assert_eq!(search::search(&index, "q").await, Err(SearchError::Open));
        kit.advance_tokio(Duration::from_millis(1)).await;
        assert_eq!(search::search(&index, "qq").await, Ok(2));
    })
    .await;
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(100 + 1000 + 100 + 2000 + 10)
    );
    kit.assert_transitions(
        "search",
        &[
            "closed -> open (tripped by consecutive_failures)",
            "open -> half_open (open_elapsed)",
            "half_open -> open (probe_failed)",
            "open -> half_open (open_elapsed)",
            "half_open -> closed (probes_succeeded)",
        ],
    );
    let opens: Vec<_> = kit
        .transitions("search")
        .iter()
        .filter_map(|t| t.open_for)
        .collect();
    assert_eq!(
        opens,
        [Duration::from_millis(1000), Duration::from_millis(2000)]
    );
    assert!(registry().get("search").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_future_keeps_its_kit_on_every_worker() {
    let kit = TestKit::new();
    let tasks: Vec<_> = (0..32)
        .map(|i| tokio::spawn(kit.scope(search::suggest("x".repeat(i)))))
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap(), Ok(i));
    }
    assert_eq!(
        kit.registry().get("suggest").unwrap().metrics().successes,
        32
    );
    assert!(registry().get("suggest").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_kits_on_one_runtime_keep_their_own_breakers() {
    let (a, b) = (TestKit::new(), TestKit::new());
    b.force_open("suggest");
    let on_a = tokio::spawn(a.scope(search::suggest("abc".into())));
    let on_b = tokio::spawn(b.scope(search::suggest("abc".into())));
    assert_eq!(on_a.await.unwrap(), Ok(3));
    assert_eq!(on_b.await.unwrap(), Err(SearchError::Open));
    assert_eq!(a.state("suggest"), Some(State::Closed));
    assert_eq!(b.state("suggest"), Some(State::ForcedOpen));
}
