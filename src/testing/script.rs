//! [`Script`]: the outcomes a test's fake dependency gives, in order.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;

/// Outcomes handed out in order, one per call, from any thread: what a fake
/// dependency behind a guarded fn answers.
///
/// ```
/// use breakerbox::testing::Script;
///
/// let upstream: Script<Result<u32, &str>> = Script::new([Ok(1), Err("down"), Err("down")]);
/// assert_eq!(upstream.next(), Ok(1));
/// assert_eq!(upstream.next(), Err("down"));
/// assert_eq!(upstream.remaining(), 1);
/// ```
pub struct Script<T> {
    queue: Mutex<(VecDeque<T>, usize)>,
}

impl<T> Script<T> {
    /// A script of `outcomes`, first to last.
    pub fn new(outcomes: impl IntoIterator<Item = T>) -> Self {
        Script {
            queue: Mutex::new((outcomes.into_iter().collect(), 0)),
        }
    }

    /// The next outcome.
    ///
    /// # Panics
    ///
    /// When the script has run out, saying how many outcomes it gave: a call
    /// the test did not expect reached the dependency.
    pub fn next(&self) -> T {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let (outcomes, given) = &mut *queue;
        match outcomes.pop_front() {
            Some(outcome) => {
                *given += 1;
                outcome
            }
            None => {
                let given = *given;
                drop(queue);
                panic!(
                    "the script ran out: all {given} outcomes were given, and one more call came"
                )
            }
        }
    }

    /// How many outcomes are left.
    pub fn remaining(&self) -> usize {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).0.len()
    }

    /// How many outcomes were given: the calls that reached the dependency.
    pub fn given(&self) -> usize {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).1
    }
}

impl<T> fmt::Debug for Script<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Script")
            .field("remaining", &self.remaining())
            .field("given", &self.given())
            .finish()
    }
}
