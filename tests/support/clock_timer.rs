//! A `Timer` on a test's `ManualClock`: each wait moves the clock by its
//! length at once and is kept, so retry tests wait no real time and read the
//! delays they were given. Included by path by the retry tests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::timeout::Timer;
use breakerbox::ManualClock;

/// A timer that waits no real time: it moves `clock` by the wait and keeps it.
#[derive(Clone)]
pub struct ClockTimer {
    clock: ManualClock,
    waits: Arc<Mutex<Vec<Duration>>>,
}

impl ClockTimer {
    pub fn new(clock: &ManualClock) -> Self {
        ClockTimer {
            clock: clock.clone(),
            waits: Arc::default(),
        }
    }

    pub fn waits(&self) -> Vec<Duration> {
        self.waits.lock().unwrap().clone()
    }
}

impl Timer for ClockTimer {
    type Sleep = std::future::Ready<()>;

    fn sleep(&self, after: Duration) -> Self::Sleep {
        self.waits.lock().unwrap().push(after);
        self.clock.advance(after);
        std::future::ready(())
    }
}
