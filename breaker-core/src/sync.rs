//! The synchronisation primitives the state machine is built on, in one place so
//! a `--cfg loom` build can swap in loom's model-checked versions.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
