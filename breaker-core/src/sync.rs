//! The synchronisation primitives the state machine is built on, in one place so
//! a `--cfg loom` build can swap in loom's model-checked versions.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering};

#[cfg(not(loom))]
pub(crate) use parking_lot::Mutex;

/// Under loom, a mutex with `parking_lot`'s shape (`lock` returns the guard):
/// the model sees every acquisition, so interleavings inside a transition
/// that holds the lock are explored too.
#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Mutex(loom::sync::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        // A panic under the lock is a failed model already.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
