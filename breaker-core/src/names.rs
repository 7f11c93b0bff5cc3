//! Group names: each distinct name is stored once for the life of the process.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// Group names live as long as the process: each distinct name is stored once,
/// so refusals and metrics carry a `&'static str` without allocating.
pub(crate) fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}
