//! reqwest (feature `reqwest`): [`CircuitBreakerMiddleware`], a
//! `reqwest-middleware` middleware that puts requests behind one group's breaker
//! or a breaker per host.
//!
//! ```
//! use breakerbox::reqwest::CircuitBreakerMiddleware;
//! use breakerbox::Config;
//! use reqwest_middleware::ClientBuilder;
//!
//! let config = Config::builder().threshold(5).open_ms(10_000).build()?;
//! let client = ClientBuilder::new(reqwest::Client::new())
//!     // One breaker per `host:port`, keys of the keyed group `upstream`, at
//!     // most about 10,000 idle hosts kept.
//!     .with(CircuitBreakerMiddleware::per_host("upstream", &config, 10_000)?)
//!     .build();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Responses are classified as [`HttpResponses`] says (5xx and 408 fail, other
//! 4xx are ignored); a transport error (refused, reset, timed out) fails. A
//! refused request never reaches the network: it fails with
//! `reqwest_middleware::Error::Middleware` holding the [`CircuitOpen`], which
//! [`circuit_open`] finds. Dropping the request's future before it finishes
//! counts the call as abandoned.

use std::fmt;
use std::io::Write as _;

use breaker_core::{Breaker, CircuitOpen, Config, KeyedGroup, Registry, WrongKeyType};
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
    /// A breaker per `host:port`: the keys of a keyed group, bounded by its
    /// `max_keys`; a known host costs a hash, a lock-free lookup and no allocation.
    PerHost(KeyedGroup<String>),
}

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
    /// when the URL names none): the keys of the keyed group `group` of the
    /// process-wide registry, all on `config` (or what configuration layered
    /// over it says: a config file's `[groups.<group>]`), with at most about `max_hosts`
    /// idle closed hosts kept (see [`KeyedGroup`]: a host that is open is kept
    /// while its open time runs). Nothing is leaked per host. A request whose URL has no host
    /// goes through unguarded.
    ///
    /// A refusal's [`CircuitOpen::group`] is `group`; the host is the request's.
    ///
    /// With a config file, declare the group with
    /// [`declare_group!`](crate::declare_group) and the same `config`, so
    /// that `config_file::init` knows it before
    /// the middleware is built (else it reports the group's table as naming a
    /// group no code declares, though the table applies once the group is made).
    ///
    /// # Errors
    ///
    /// [`WrongKeyType`] if `group` is already a keyed group whose keys are not
    /// `String`s.
    pub fn per_host(group: &str, config: &Config, max_hosts: usize) -> Result<Self, WrongKeyType> {
        Self::per_host_in(crate::registry(), group, config, max_hosts)
    }

    /// [`per_host`](Self::per_host) in `registry`.
    pub fn per_host_in(
        registry: &Registry,
        group: &str,
        config: &Config,
        max_hosts: usize,
    ) -> Result<Self, WrongKeyType> {
        Ok(CircuitBreakerMiddleware {
            target: Target::PerHost(registry.keyed::<String>(group, config, max_hosts)?),
            classifier: HttpResponses,
        })
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
    /// use breakerbox::reqwest::CircuitBreakerMiddleware;
    /// use breakerbox::{Config, State};
    ///
    /// let middleware = CircuitBreakerMiddleware::per_host("docs", &Config::default(), 100)?;
    /// let url = "http://api.example:8080/v1/items".parse().unwrap();
    /// assert_eq!(middleware.breaker_for(&url).unwrap().state(), State::Closed);
    /// let hosts = breakerbox::registry().keyed::<String>("docs", &Config::default(), 100)?;
    /// assert!(hosts.get("api.example:8080").is_some());
    /// # Ok::<(), breakerbox::WrongKeyType>(())
    /// ```
    pub fn breaker_for(&self, url: &Url) -> Option<Breaker> {
        match &self.target {
            Target::Group(breaker) => Some((*breaker).clone()),
            Target::PerHost(hosts) => host_key(url, |key| hosts.breaker(key)),
        }
    }
}

/// Calls `f` with `host:port` of `url`, written on the stack (a host name is at
/// most 253 bytes), or `None` for a URL without a host.
fn host_key<R>(url: &Url, f: impl FnOnce(&str) -> R) -> Option<R> {
    let host = url.host_str()?;
    let port = url.port_or_known_default().unwrap_or(0);
    let mut buffer = [0u8; 272];
    let mut rest = &mut buffer[..];
    if write!(rest, "{host}:{port}").is_err() {
        // Longer than any DNS name: rare enough to allocate.
        return Some(f(&format!("{host}:{port}")));
    }
    let written = 272 - rest.len();
    let key = std::str::from_utf8(&buffer[..written]).expect("written from two strs");
    Some(f(key))
}

impl<C: fmt::Debug> fmt::Debug for CircuitBreakerMiddleware<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("CircuitBreakerMiddleware");
        match &self.target {
            Target::Group(breaker) => d.field("group", &breaker.group()),
            Target::PerHost(hosts) => d.field("per_host", &hosts.group()),
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
        let keyed;
        let breaker = match &self.target {
            Target::Group(breaker) => *breaker,
            Target::PerHost(hosts) => match host_key(request.url(), |key| hosts.breaker(key)) {
                Some(breaker) => {
                    keyed = breaker;
                    &keyed
                }
                None => return next.run(request, extensions).await,
            },
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
///     Err(e) if breakerbox::reqwest::circuit_open(&e).is_some() => { /* serve from cache */ }
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
