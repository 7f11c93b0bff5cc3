//! The per-call-site caches that let an annotated function reach its breaker
//! (`CallSite`) or its keyed group (`KeyedSite`, in `keyed`) without a registry
//! lookup after its first call. Macro-only: generated code names them through
//! the facade's `__private`.

use std::ops::Deref;
use std::sync::OnceLock;

use crate::breaker::Breaker;
use crate::config::Config;
use crate::registry::Registry;

mod keyed;

pub use self::keyed::KeyedSite;

/// A call site's cached breaker: one `static` per annotated function.
///
/// The first call looks the group up in the registry and keeps the breaker; every
/// later call against the same registry is one load and one comparison. Only the
/// first registry a site meets is cached (and its breaker lives as long as the
/// site): a call against another registry looks the group up there each time (a
/// read lock, a hash and a config comparison), so a `registry = ..` expression
/// that changes from call to call pays that on every call.
///
/// ```
/// use breaker_core::__private::CallSite;
/// use breaker_core::{registry, Config};
///
/// static SITE: CallSite = CallSite::new();
/// const CONFIG: Config = Config::DEFAULT;
/// let first = SITE.breaker(registry(), "site-demo", &CONFIG);
/// let again = SITE.breaker(registry(), "site-demo", &CONFIG);
/// assert!(first.same_as(&again));
/// ```
#[derive(Debug)]
pub struct CallSite {
    cached: OnceLock<(u64, Breaker)>,
    global: OnceLock<Breaker>,
}

impl Default for CallSite {
    fn default() -> Self {
        Self::new()
    }
}

impl CallSite {
    /// An empty site, for a `static`.
    pub const fn new() -> Self {
        CallSite {
            cached: OnceLock::new(),
            global: OnceLock::new(),
        }
    }

    /// This site's breaker for `group` in `registry`.
    #[inline]
    pub fn breaker<'s>(
        &'s self,
        registry: &Registry,
        group: &str,
        config: &Config,
    ) -> SiteBreaker<'s> {
        match self.cached.get() {
            Some((id, breaker)) if *id == registry.id() => SiteBreaker::Cached(breaker),
            _ => self.lookup(registry, group, config),
        }
    }

    /// This site's breaker for `group` in the process-wide
    /// [`registry()`](crate::registry::registry()): what the attribute uses without a
    /// `registry` key. After the first call it is one load and one branch, with
    /// no registry to read or compare.
    #[inline]
    pub fn global(&self, group: &str, config: &Config) -> &Breaker {
        match self.global.get() {
            Some(breaker) => breaker,
            None => self.lookup_global(group, config),
        }
    }

    #[cold]
    fn lookup_global(&self, group: &str, config: &Config) -> &Breaker {
        self.global
            .get_or_init(|| crate::registry::registry().breaker(group, config))
    }

    #[cold]
    fn lookup<'s>(&'s self, registry: &Registry, group: &str, config: &Config) -> SiteBreaker<'s> {
        let breaker = registry.breaker(group, config);
        let (id, cached) = self.cached.get_or_init(|| (registry.id(), breaker.clone()));
        if *id == registry.id() {
            SiteBreaker::Cached(cached)
        } else {
            SiteBreaker::Owned(breaker)
        }
    }
}

/// A breaker borrowed from a [`CallSite`] cache, or owned when the call used a
/// registry other than the one cached.
#[derive(Debug)]
pub enum SiteBreaker<'s> {
    /// From the site's cache.
    Cached(&'s Breaker),
    /// Looked up for this call only.
    Owned(Breaker),
}

impl Deref for SiteBreaker<'_> {
    type Target = Breaker;
    #[inline]
    fn deref(&self) -> &Breaker {
        match self {
            SiteBreaker::Cached(b) => b,
            SiteBreaker::Owned(b) => b,
        }
    }
}
