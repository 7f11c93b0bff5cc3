//! reqwest (feature `reqwest`): [`CircuitBreakerMiddleware`], a
//! `reqwest-middleware` middleware that puts requests behind one group's breaker
//! or a breaker per host.
//!
//! ```
//! use breaker::reqwest::CircuitBreakerMiddleware;
//! use breaker::Config;
//! use reqwest_middleware::ClientBuilder;
//!
//! let config = Config::builder().threshold(5).open_ms(10_000).build()?;
//! let client = ClientBuilder::new(reqwest::Client::new())
//!     // One breaker per `host:port`, in groups named `upstream:<host>:<port>`.
//!     .with(CircuitBreakerMiddleware::per_host("upstream:", &config))
//!     .build();
//! # Ok::<(), breaker::ConfigError>(())
//! ```
//!
//! Responses are classified as [`HttpResponses`] says (5xx and 408 fail, other
//! 4xx are ignored); a transport error (refused, reset, timed out) fails. A
//! refused request never reaches the network: it fails with
//! `reqwest_middleware::Error::Middleware` holding the [`CircuitOpen`], which
//! [`circuit_open`] finds. Dropping the request's future before it finishes
//! counts the call as abandoned.

use std::collections::HashMap;
use std::fmt;
use std::sync::{PoisonError, RwLock};

use breaker_core::{Breaker, CircuitOpen, Config, Registry};
use http::Extensions;
use reqwest::{Request, Response, Url};
use reqwest_middleware::{Error, Middleware, Next};

use crate::tower::{forever, Classify, HttpResponses, Verdict};

/// A `reqwest-middleware` middleware that claims a breaker before each request
/// and records the outcome when the response (or error) comes.
pub struct CircuitBreakerMiddleware<C = HttpResponses> {
    target: Target,
    classifier: C,
}

enum Target {
    Group(&'static Breaker),
    // Boxed: a per-host target holds a whole `Config` and a map.
    PerHost(Box<PerHost>),
}

struct PerHost {
    registry: &'static Registry,
    prefix: Box<str>,
    config: Config,
    /// Breakers by host, then port: a known host costs a read lock and a hash of
    /// the host, and no allocation.
    known: RwLock<HashMap<Box<str>, Ports>>,
}

/// A host's breakers, by port.
type Ports = Vec<(u16, &'static Breaker)>;

impl CircuitBreakerMiddleware {
    /// Every request behind `group`'s breaker in the process-wide registry (the
    /// one its `#[circuit_breaker]` fns use; created with the group's explicit
    /// config or the defaults if nothing has used it yet).
    pub fn group(group: &str) -> Self {
        Self::for_breaker(&crate::registry().breaker_or_default(group))
    }

    /// Every request behind `group`'s breaker in the process-wide registry,
    /// declaring `config` as a `#[circuit_breaker]` attribute does (use this when
    /// the group's fns declare one: see
    /// [`CircuitBreakerLayer::new`](crate::tower::CircuitBreakerLayer::new)).
    pub fn with_config(group: &str, config: &Config) -> Self {
        Self::for_breaker(&crate::registry().breaker(group, config))
    }

    /// Every request behind `breaker`, from any registry or made by hand. Like
    /// the tower layer, the middleware keeps a `&'static` handle: the breaker
    /// lives as long as the process.
    pub fn for_breaker(breaker: &Breaker) -> Self {
        CircuitBreakerMiddleware {
            target: Target::Group(forever(breaker)),
            classifier: HttpResponses,
        }
    }

    /// A breaker per `host:port` of the request URL (the port the scheme implies
    /// when the URL names none), in the process-wide registry, in groups named
    /// `{prefix}{host}:{port}` and declared with `config`. A request whose URL
    /// has no host goes through unguarded.
    pub fn per_host(prefix: &str, config: &Config) -> Self {
        Self::per_host_in(crate::registry(), prefix, config)
    }

    /// [`per_host`](Self::per_host) in `registry`.
    pub fn per_host_in(registry: &'static Registry, prefix: &str, config: &Config) -> Self {
        CircuitBreakerMiddleware {
            target: Target::PerHost(Box::new(PerHost {
                registry,
                prefix: prefix.into(),
                config: *config,
                known: RwLock::default(),
            })),
            classifier: HttpResponses,
        }
    }
}

impl<C> CircuitBreakerMiddleware<C> {
    /// The same middleware with another classifier of
    /// `Result<&reqwest::Response, &reqwest_middleware::Error>`.
    pub fn classify<D>(self, classifier: D) -> CircuitBreakerMiddleware<D> {
        CircuitBreakerMiddleware {
            target: self.target,
            classifier,
        }
    }

    /// The breaker a request to `url` goes through (created on first use per
    /// host), or `None` for a URL without a host, which goes through unguarded.
    ///
    /// ```
    /// use breaker::reqwest::CircuitBreakerMiddleware;
    /// use breaker::Config;
    ///
    /// let middleware = CircuitBreakerMiddleware::per_host("docs:", &Config::default());
    /// let url = "http://api.example:8080/v1/items".parse().unwrap();
    /// assert_eq!(middleware.breaker_for(&url).unwrap().group(), "docs:api.example:8080");
    /// ```
    pub fn breaker_for(&self, url: &Url) -> Option<&'static Breaker> {
        match &self.target {
            Target::Group(breaker) => Some(breaker),
            Target::PerHost(hosts) => hosts.breaker_for(url),
        }
    }
}

impl PerHost {
    fn breaker_for(&self, url: &Url) -> Option<&'static Breaker> {
        let host = url.host_str()?;
        let port = url.port_or_known_default().unwrap_or(0);
        let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(ports) = known.get(host) {
            if let Some((_, breaker)) = ports.iter().find(|(p, _)| *p == port) {
                return Some(breaker);
            }
        }
        drop(known);
        Some(self.first_use(host, port))
    }

    #[cold]
    fn first_use(&self, host: &str, port: u16) -> &'static Breaker {
        let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
        let ports = known.entry(host.into()).or_default();
        if let Some((_, breaker)) = ports.iter().find(|(p, _)| *p == port) {
            return breaker;
        }
        let group = format!("{}{host}:{port}", self.prefix);
        let breaker = forever(&self.registry.breaker(&group, &self.config));
        ports.push((port, breaker));
        breaker
    }
}

impl<C: fmt::Debug> fmt::Debug for CircuitBreakerMiddleware<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("CircuitBreakerMiddleware");
        match &self.target {
            Target::Group(breaker) => d.field("group", &breaker.group()),
            Target::PerHost(hosts) => d.field("per_host", &hosts.prefix),
        };
        d.field("classifier", &self.classifier).finish()
    }
}

#[async_trait::async_trait]
impl<C> Middleware for CircuitBreakerMiddleware<C>
where
    C: Classify<Response, Error> + Send + Sync + 'static,
{
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let Some(breaker) = self.breaker_for(request.url()) else {
            return next.run(request, extensions).await;
        };
        let permit = breaker.try_acquire().map_err(Error::middleware)?;
        // Dropped with this future if the request is cancelled: abandoned.
        let result = next.run(request, extensions).await;
        match self.classifier.classify(result.as_ref()) {
            Verdict::Success => permit.success(),
            Verdict::Failure => permit.failure(),
            Verdict::Ignored => permit.ignore(),
        }
        result
    }
}

/// `reqwest::Response`s by status, as for `http::Response`. Errors: a request
/// that could not be built, or an error of another middleware (another breaker's
/// refusal, say), is ignored; every other error (connect, timeout, body) fails.
impl Classify<Response, Error> for HttpResponses {
    #[inline]
    fn classify(&self, result: Result<&Response, &Error>) -> Verdict {
        match result {
            Ok(response) => crate::tower::status_verdict(response.status().as_u16()),
            Err(Error::Reqwest(e)) if e.is_builder() => Verdict::Ignored,
            Err(Error::Middleware(_)) => Verdict::Ignored,
            Err(_) => Verdict::Failure,
        }
    }
}

/// The refusal inside a middleware error, if a breaker refused the request.
///
/// ```no_run
/// # async fn run(client: reqwest_middleware::ClientWithMiddleware) {
/// match client.get("http://127.0.0.1:8080/").send().await {
///     Err(e) if breaker::reqwest::circuit_open(&e).is_some() => { /* serve from cache */ }
///     other => { /* ... */ }
/// }
/// # }
/// ```
pub fn circuit_open(error: &Error) -> Option<&CircuitOpen> {
    match error {
        Error::Middleware(e) => e.downcast_ref::<CircuitOpen>(),
        Error::Reqwest(_) => None,
    }
}
