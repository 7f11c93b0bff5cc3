//! [`TokioClock`]: the breaker's time read from tokio's clock, paused or not.

use breaker_core::Clock;

/// A [`Clock`] that reads `tokio::time::Instant`: in a runtime with paused
/// time (`start_paused = true`, `tokio::time::pause`) the breaker's time is
/// tokio's virtual time, moved by `tokio::time::advance` and by tokio's
/// auto-advance to the next timer; elsewhere it is tokio's real monotonic time.
///
/// Its origin is the moment it was made; clones share it. Its
/// [`jitter_seed`](Clock::jitter_seed) is 0, so jittered open durations are
/// the same on every run.
///
/// ```
/// use breakerbox::clock::Clock;
/// use breakerbox::testing::TokioClock;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let clock = TokioClock::new();
/// tokio::time::sleep(Duration::from_millis(250)).await; // no real wait: time is paused
/// assert_eq!(clock.now_nanos(), 250_000_000);
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    origin: tokio::time::Instant,
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl TokioClock {
    /// A clock at zero now.
    pub fn new() -> Self {
        TokioClock {
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now_nanos(&self) -> u64 {
        let elapsed = tokio::time::Instant::now().saturating_duration_since(self.origin);
        u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
    }

    fn jitter_seed(&self) -> Option<u64> {
        Some(0)
    }
}
