//! The synchronisation primitives the state machine, the live config chain,
//! the event hub, the clock and the registry are built on, in one place so a
//! `--cfg loom` build can swap in loom's model-checked versions.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};

#[cfg(not(loom))]
pub(crate) use parking_lot::{Mutex, RwLock};
#[cfg(not(loom))]
pub(crate) use std::sync::OnceLock;

/// Under loom, a mutex with `parking_lot`'s shape (`lock` returns the guard):
/// the model sees every acquisition, so interleavings inside a transition
/// that holds the lock are explored too.
#[cfg(loom)]
#[derive(Debug, Default)]
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

/// Under loom, a reader-writer lock with `parking_lot`'s shape (`read` and
/// `write` return the guard), as [`Mutex`] is.
#[cfg(loom)]
#[derive(Debug, Default)]
pub(crate) struct RwLock<T>(loom::sync::RwLock<T>);

#[cfg(loom)]
impl<T> RwLock<T> {
    pub(crate) fn new(value: T) -> Self {
        RwLock(loom::sync::RwLock::new(value))
    }

    pub(crate) fn read(&self) -> loom::sync::RwLockReadGuard<'_, T> {
        self.0
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn write(&self) -> loom::sync::RwLockWriteGuard<'_, T> {
        self.0
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Under loom, `std::sync::OnceLock`'s `get` and `get_or_init` from loom's
/// atomics and mutex: the value is published once, with a release store that
/// every `get` pairs with an acquire load, so the model checks that a reader
/// sees the value whole.
#[cfg(loom)]
pub(crate) struct OnceLock<T> {
    value: AtomicPtr<T>,
    init: loom::sync::Mutex<()>,
}

#[cfg(loom)]
impl<T: std::fmt::Debug> std::fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("OnceLock").field(&self.get()).finish()
    }
}

#[cfg(loom)]
impl<T> OnceLock<T> {
    pub(crate) fn new() -> Self {
        OnceLock {
            value: AtomicPtr::new(std::ptr::null_mut()),
            init: loom::sync::Mutex::new(()),
        }
    }

    pub(crate) fn get(&self) -> Option<&T> {
        let value = self.value.load(Ordering::Acquire);
        // SAFETY: a non-null pointer was published once from `Box::into_raw`
        // (`get_or_init`) and is freed only by `drop`, which `&self` outlives.
        (!value.is_null()).then(|| unsafe { &*value })
    }

    pub(crate) fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
        if let Some(value) = self.get() {
            return value;
        }
        let _guard = self.init.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(value) = self.get() {
            return value;
        }
        let value = Box::into_raw(Box::new(init()));
        self.value.store(value, Ordering::Release);
        // SAFETY: just made from `Box::into_raw`; freed only by `drop`.
        unsafe { &*value }
    }
}

#[cfg(loom)]
impl<T> Drop for OnceLock<T> {
    fn drop(&mut self) {
        let value = self.value.with_mut(|value| *value);
        if !value.is_null() {
            // SAFETY: from `Box::into_raw` in `get_or_init`, freed once, here.
            drop(unsafe { Box::from_raw(value) });
        }
    }
}
