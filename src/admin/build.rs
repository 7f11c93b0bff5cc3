//! [`AdminBuilder`]: what the app decides (tokens, keyed groups, the ring,
//! readiness) and the checks that refuse an unsafe router; [`Admin`], the built one.

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Display;
use std::hash::Hash;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use breaker_core::{Breaker, Metrics, Registry, Subscription};

use super::auth::{Role, Token, Tokens};
use super::error::BuildError;
use super::ring::Ring;
use super::service::AdminService;

/// Keys shown per keyed group when the app sets no bound.
const DEFAULT_WORST_KEYS: usize = 10;
/// Largest body accepted when the app sets no bound.
const DEFAULT_MAX_BODY: usize = 1024;
/// Longest a body may take to arrive when the app sets no bound.
const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// The registry a router serves: the process-wide one, or one the app shares.
#[derive(Clone)]
pub(super) enum Source {
    Global(&'static Registry),
    Shared(Arc<Registry>),
}

impl std::ops::Deref for Source {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        match self {
            Source::Global(registry) => registry,
            Source::Shared(registry) => registry,
        }
    }
}

/// The worst keys of a keyed group, named, with their metrics.
type Troubled = Vec<(String, Metrics)>;

/// A key of a keyed group, as the router finds it again from its text.
pub(super) struct KeyedView {
    /// The group's `limit` worst keys (see `KeyedGroup::worst_keys`).
    pub(super) troubled: fn(&Registry, &str, usize) -> Option<Troubled>,
    /// The breaker of the key whose text is given, if the group holds it.
    /// `Err` when the text does not parse as a key.
    pub(super) find: fn(&Registry, &str, &str) -> Result<Option<Breaker>, String>,
    /// The group's live config.
    pub(super) config: fn(&Registry, &str) -> Option<breaker_core::Config>,
}

fn troubled<K>(registry: &Registry, group: &str, limit: usize) -> Option<Troubled>
where
    K: FromStr + Display + Clone + Ord + Hash + Eq + Send + Sync + 'static,
{
    let keyed = registry.get_keyed::<K>(group).ok()??;
    let found = keyed
        .worst_keys(limit)
        .into_iter()
        .map(|(key, metrics)| (key.to_string(), metrics))
        .collect();
    Some(found)
}

fn find<K>(registry: &Registry, group: &str, text: &str) -> Result<Option<Breaker>, String>
where
    K: FromStr + Display + Clone + Hash + Eq + Send + Sync + 'static,
{
    let key = K::from_str(text).map_err(|_| format!("`{text}` is not a key of this group"))?;
    let keyed = registry.get_keyed::<K>(group).map_err(|e| e.to_string())?;
    Ok(keyed.and_then(|keyed| keyed.get(&key)))
}

fn config<K>(registry: &Registry, group: &str) -> Option<breaker_core::Config>
where
    K: Hash + Eq + Send + Sync + 'static,
{
    Some(registry.get_keyed::<K>(group).ok()??.config())
}

/// What a built router holds; shared by its handlers.
pub(super) struct Inner {
    pub(super) registry: Source,
    pub(super) tokens: Tokens,
    pub(super) protect_reads: bool,
    pub(super) mutations: bool,
    pub(super) keyed: BTreeMap<String, KeyedView>,
    pub(super) worst_keys: usize,
    pub(super) max_body: usize,
    pub(super) body_timeout: Duration,
    pub(super) unready_when_open: Vec<String>,
    pub(super) ring: Option<Arc<Ring>>,
    /// Keeps the ring's registry subscription for the router's life.
    pub(super) _subscription: Option<Subscription>,
}

/// Builds an [`Admin`] router: see [the module docs](super) for the endpoints.
///
/// ```
/// use breakerbox::admin::{Admin, BuildError};
///
/// // Mutations on and no token: refused.
/// assert!(matches!(Admin::global().build(), Err(BuildError::NoToken)));
/// // A read-only router needs none.
/// let admin = Admin::global().read_only().build().unwrap();
/// let _router: axum::Router = admin.router();
/// ```
#[must_use = "an AdminBuilder does nothing until `build`"]
pub struct AdminBuilder {
    registry: Source,
    tokens: Vec<Token>,
    protect_reads: bool,
    mutations: bool,
    keyed: BTreeMap<String, KeyedView>,
    worst_keys: usize,
    max_body: usize,
    body_timeout: Duration,
    events: Option<usize>,
    unready_when_open: Vec<String>,
}

/// A built admin router: [`router`](Self::router) or
/// [`into_service`](Self::into_service) to mount it. Cheap to clone; every
/// clone serves the same state and ring.
#[derive(Clone)]
pub struct Admin {
    inner: Arc<Inner>,
}

impl fmt::Debug for Admin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admin")
            .field("tokens", &self.inner.tokens.names())
            .field("mutations", &self.inner.mutations)
            .field("protect_reads", &self.inner.protect_reads)
            .field("events", &self.inner.ring.as_ref().map(|r| r.capacity()))
            .finish_non_exhaustive()
    }
}

impl Admin {
    /// A builder for a router over `registry`.
    pub fn builder(registry: Arc<Registry>) -> AdminBuilder {
        AdminBuilder::new(Source::Shared(registry))
    }

    /// A builder for a router over the process-wide [`registry()`](crate::registry()).
    pub fn global() -> AdminBuilder {
        AdminBuilder::new(Source::Global(crate::registry()))
    }

    /// The router: serve it as it is, or mount it with
    /// `Router::nest_service`, which answers both the prefix and the prefix
    /// with a trailing slash (`/admin` and `/admin/`; under `Router::nest`
    /// axum routes only the first to it).
    pub fn router(&self) -> axum::Router {
        super::routes::router(Arc::clone(&self.inner))
    }

    /// The router as a plain tower service of `http::Request`s.
    pub fn into_service(self) -> AdminService {
        AdminService::new(self.router())
    }
}

impl AdminBuilder {
    fn new(registry: Source) -> Self {
        AdminBuilder {
            registry,
            tokens: Vec::new(),
            protect_reads: false,
            mutations: true,
            keyed: BTreeMap::new(),
            worst_keys: DEFAULT_WORST_KEYS,
            max_body: DEFAULT_MAX_BODY,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            events: None,
            unready_when_open: Vec::new(),
        }
    }

    /// A token that may read and mutate, named `name` in logs and events.
    pub fn token(mut self, name: impl Into<String>, secret: impl Into<String>) -> Self {
        self.tokens
            .push(Token::new(name.into(), secret.into(), Role::Mutate));
        self
    }

    /// A token that may only read; giving one also [protects
    /// reads](Self::protect_reads).
    pub fn read_token(mut self, name: impl Into<String>, secret: impl Into<String>) -> Self {
        self.tokens
            .push(Token::new(name.into(), secret.into(), Role::Read));
        self.protect_reads = true;
        self
    }

    /// Reads (every `GET` but `/health`) need a token too.
    pub fn protect_reads(mut self) -> Self {
        self.protect_reads = true;
        self
    }

    /// No mutations: every `POST` is `403`, and no token is needed to build.
    pub fn read_only(mut self) -> Self {
        self.mutations = false;
        self
    }

    /// Lets the router read and act on the keys of the keyed group `group`,
    /// whose key type is `K`: its worst keys in listings, and the key routes,
    /// which find a key by parsing its path segment with `K::from_str` and name
    /// it with `K::to_string`. Keys of equal rank among the worst are listed
    /// in `K`'s order. A group of another key type is read as if not
    /// registered.
    pub fn keyed<K>(mut self, group: impl Into<String>) -> Self
    where
        K: FromStr + Display + Clone + Ord + Hash + Eq + Send + Sync + 'static,
    {
        self.keyed.insert(
            group.into(),
            KeyedView {
                troubled: troubled::<K>,
                find: find::<K>,
                config: config::<K>,
            },
        );
        self
    }

    /// The most keys a keyed group lists (`worst_keys`); 10 by default, 1 to 1,000.
    pub fn worst_keys(mut self, k: usize) -> Self {
        self.worst_keys = k;
        self
    }

    /// The largest request body accepted, in bytes; 1 KiB by default. A
    /// request that declares a longer `Content-Length` is answered `413` at
    /// once, before any byte of its body is read.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// The longest a request's body may take to arrive, from the moment the
    /// router starts to read it; 10 seconds by default. A body still
    /// incomplete then is answered `408` and changes nothing, so a client that
    /// declares a body and sends less of it holds no connection longer.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::admin::Admin;
    ///
    /// let admin = Admin::global()
    ///     .token("ops", "ops-secret-0123456789")
    ///     .body_timeout(Duration::from_secs(2))
    ///     .build()
    ///     .unwrap();
    /// # let _ = admin;
    /// ```
    pub fn body_timeout(mut self, after: Duration) -> Self {
        self.body_timeout = after;
        self
    }

    /// Keeps the last `capacity` events (1 to 65,536) in a ring for `/events`
    /// and `/events/stream`. Without it the router subscribes to nothing and
    /// those routes are `404`.
    pub fn events(mut self, capacity: usize) -> Self {
        self.events = Some(capacity);
        self
    }

    /// `/health` is `503` while the (unkeyed) group `group` is open or forced
    /// open; a group not made yet is ready. None by
    /// default: a breaker that takes an instance out of service takes its
    /// fallbacks with it, so name only the groups without which the instance
    /// is useless.
    pub fn unready_when_open(mut self, group: impl Into<String>) -> Self {
        self.unready_when_open.push(group.into());
        self
    }

    /// The router.
    ///
    /// # Errors
    ///
    /// [`BuildError::NoToken`] when mutations are on and no mutating token was
    /// given; the other [`BuildError`]s for a bad secret, name or bound.
    pub fn build(self) -> Result<Admin, BuildError> {
        let tokens = Tokens::new(self.tokens)?;
        if self.mutations && !tokens.can_mutate() {
            return Err(BuildError::NoToken);
        }
        if !(1..=1000).contains(&self.worst_keys) {
            return Err(BuildError::BadWorstKeys(self.worst_keys));
        }
        let (ring, subscription) = match self.events {
            None => (None, None),
            Some(capacity) if !(1..=1 << 16).contains(&capacity) => {
                return Err(BuildError::BadCapacity(capacity))
            }
            Some(capacity) => {
                let ring = Arc::new(Ring::new(capacity));
                let fill = Arc::clone(&ring);
                let subscription = self.registry.subscribe(move |event| fill.told(event));
                (Some(ring), Some(subscription))
            }
        };
        Ok(Admin {
            inner: Arc::new(Inner {
                registry: self.registry,
                tokens,
                protect_reads: self.protect_reads,
                mutations: self.mutations,
                keyed: self.keyed,
                worst_keys: self.worst_keys,
                max_body: self.max_body,
                body_timeout: self.body_timeout,
                unready_when_open: self.unready_when_open,
                ring,
                _subscription: subscription,
            }),
        })
    }
}
