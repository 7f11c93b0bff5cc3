//! Where an attribute without `registry = ..` finds its breaker (the call
//! site's cache of the process-wide registry), and where the tower layer and
//! the reqwest middleware find theirs (the process-wide registry), or, with
//! feature `testing`, the registry a test installed ([`testing`](crate::testing)).
//! Without the feature each fn is the site's own lookup, inlined: the claim is
//! the same instructions as a direct `CallSite::global` call.

use breaker_core::__private::{CallSite, KeyedSite};
use breaker_core::{AsKey, Breaker, Config};

/// The breaker of `group` for an attribute without `registry = ..`. Not public
/// API.
#[cfg(not(feature = "testing"))]
#[inline(always)]
pub fn site<'s>(site: &'s CallSite, group: &str, config: &Config) -> &'s Breaker {
    site.global(group, config)
}

/// The breaker of `group` for an attribute without `registry = ..`: in the
/// test registry installed on this thread if there is one, else the
/// process-wide registry's. Not public API.
#[cfg(feature = "testing")]
#[inline]
pub fn site<'s>(
    site: &'s CallSite,
    group: &str,
    config: &Config,
) -> breaker_core::__private::SiteBreaker<'s> {
    match crate::testing::installed() {
        None => breaker_core::__private::SiteBreaker::Cached(site.global(group, config)),
        Some(kit) => {
            let breaker = site.breaker(kit.registry(), group, config);
            kit.reached(&breaker);
            breaker
        }
    }
}

/// The breaker of `key` in the keyed group `group`, for an attribute without
/// `registry = ..`. Not public API.
#[cfg(not(feature = "testing"))]
#[inline(always)]
pub fn keyed_site<A: AsKey + ?Sized>(
    site: &KeyedSite,
    group: &str,
    config: &Config,
    key_capacity: usize,
    key: &A,
) -> Breaker {
    site.global(group, config, key_capacity, key)
}

/// The breaker of `key` in the keyed group `group`, in the installed test
/// registry if there is one. Not public API.
#[cfg(feature = "testing")]
#[inline]
pub fn keyed_site<A: AsKey + ?Sized>(
    site: &KeyedSite,
    group: &str,
    config: &Config,
    key_capacity: usize,
    key: &A,
) -> Breaker {
    match crate::testing::installed() {
        None => site.global(group, config, key_capacity, key),
        Some(kit) => site.breaker(kit.registry(), group, config, key_capacity, key),
    }
}

/// Runs `made` on the registry a layer or middleware built now takes its
/// breakers from: the process-wide one.
#[cfg(not(feature = "testing"))]
#[cfg(any(feature = "tower", feature = "reqwest"))]
pub(crate) fn integration_registry<R>(made: impl FnOnce(&breaker_core::Registry) -> R) -> R {
    made(crate::registry())
}

/// Runs `made` on the registry a layer or middleware built now takes its
/// breakers from: the test registry installed on this thread if there is
/// one, else the process-wide one.
#[cfg(feature = "testing")]
#[cfg(any(feature = "tower", feature = "reqwest"))]
pub(crate) fn integration_registry<R>(made: impl FnOnce(&breaker_core::Registry) -> R) -> R {
    match crate::testing::installed() {
        None => made(crate::registry()),
        Some(kit) => made(kit.registry()),
    }
}

/// Tells an installed test kit that code reached `breaker` (so a force the
/// kit holds for its group applies now); nothing without one.
#[cfg(any(feature = "tower", feature = "reqwest"))]
pub(crate) fn reached(breaker: &Breaker) {
    #[cfg(feature = "testing")]
    if let Some(kit) = crate::testing::installed() {
        kit.reached(breaker);
    }
    #[cfg(not(feature = "testing"))]
    let _ = breaker;
}
