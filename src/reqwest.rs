//! reqwest (feature `reqwest`): [`CircuitBreakerMiddleware`], a
//! `reqwest-middleware` middleware that puts requests behind one group's breaker
//! or a breaker per host.
//!
//! ```
//! use std::time::Duration;
//! use breakerbox::reqwest::CircuitBreakerMiddleware;
//! use breakerbox::Config;
//! use reqwest_middleware::ClientBuilder;
//!
//! let config = Config::builder().threshold(5).open(Duration::from_secs(10)).build()?;
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
//! abandons the call, which counts as the group's `abandoned` key says
//! (ignored by default).
//!
//! # Bulkhead and deadline
//!
//! A group with `max_concurrent` or `timeout_ms` (from its config, a file or
//! the variables) has them enforced by the middleware: a request takes one
//! place in its breaker's bulkhead for the whole call, its retries included
//! (a full bulkhead refuses with
//! [`OpenReason::BulkheadFull`](crate::OpenReason::BulkheadFull) before
//! anything is sent), and each attempt races the group's deadline on tokio's
//! timer until its response's head comes. An attempt past the deadline is
//! dropped, counted as a timeout (a failure, retried as one) and answered
//! with `reqwest_middleware::Error::Middleware` holding the
//! [`TimedOut`](crate::TimedOut). The body is read outside the deadline (a
//! client's own timeout bounds it).
//!
//! # When a success is recorded
//!
//! A response whose head the classifier counts as a success is a success only
//! once its body has come: the outcome is recorded when the body ends (a
//! success), when reading it fails (a failure: a reset, the client's timeout
//! while an upstream stalls mid-body) or when the body is dropped:
//!
//! - dropped before it was polled at all (a caller that looks at the status
//!   only): a success, as the head said;
//! - dropped once polled and before its end (a caller that gave up, a timeout
//!   of its own around `bytes()`, also one that fired before the first byte
//!   came): abandoned, which counts as the group's `abandoned` key says
//!   (ignored by default).
//!
//! An empty body (a `HEAD`, a `204`, `content-length: 0`) is recorded at once.
//! Until then the call holds its permit, a half-open probe slot included, and
//! the time to the end of the body is the call's duration for a slow-call rule.
//! A head that fails or is ignored is recorded when it comes. Wrapping the body
//! of a successful response costs a few allocations (the wrapper, and reqwest's
//! boxing of the rebuilt response and its URL); a network request makes many
//! more.
//!
//! # Retries
//!
//! [`CircuitBreakerMiddleware::retry`] repeats a failed request as a
//! [`RetryPolicy`] says, each attempt one claim and one outcome in the
//! request's breaker (its host's, per host), on the group's budget (shared by
//! every host of a per-host group and by the group's `#[circuit_breaker]` fns):
//!
//! - Only idempotent methods are retried: `GET`, `HEAD`, `OPTIONS`, `TRACE`,
//!   `PUT`, `DELETE`. Any other request is sent once unless it carries the
//!   [`SafeToRetry`] extension (a `POST` with an idempotency key).
//! - A request whose body is a stream (`Request::try_clone` gives `None`) is
//!   sent once.
//! - A failure is retried (a 5xx, a 408, a transport error); a refusal never:
//!   the call ends with it at once, also when a retry is refused after its
//!   wait. No retry waits once a failure opened the circuit.
//! - A `429` or `503` with `Retry-After` (whole seconds, or an HTTP date
//!   measured from the answer's `Date`) is the server asking every caller to
//!   wait: the request's breaker is [held](crate::Breaker::hold) for that long
//!   (its host's key with [`per_host`](CircuitBreakerMiddleware::per_host), else the
//!   group; at most the group's `max_hold_ms`), the answer counts as ignored,
//!   and every other request until the hold ends is refused at once with the
//!   time left. The request that met it is retried once the hold ends, when
//!   the wait is within the policy's cap on a wait
//!   ([`RetryPolicy::delay_cap`](crate::RetryPolicy::delay_cap)); a longer
//!   wait comes back at once, header and all, and the hold answers the calls
//!   after it. A `429` without `Retry-After` is ignored and not retried. A
//!   header that is neither form, negative or a date past holds nothing and
//!   is counted ([`HoldCounts::bad`](crate::hold::HoldCounts::bad)). The
//!   backoff's full-jitter draw is the wait of a failure without a header.
//! - The waits are tokio's (or a [`Timer`]'s, with
//!   [`retry_timer`](CircuitBreakerMiddleware::retry_timer)); a failed
//!   attempt's response is dropped before the wait.

use std::fmt;
use std::future::Future;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use breaker_core::{
    Attempts, Breaker, CircuitOpen, Config, KeyedGroup, OwnedPermit, Registry, Retry, RetryPolicy,
    Timer, WrongKeyType,
};
use http::Extensions;
use reqwest::{Request, Response, Url};
use reqwest_middleware::{Error, Middleware, Next};

use crate::hold::{HoldScope, Wait as ServerWait};
use crate::tower::{is_idempotent, next_attempt, Classify, HttpResponses, RecordedBody, Verdict};

/// A `reqwest-middleware` middleware that claims a breaker before each request
/// and records the outcome when the error, a failing head or the end of a
/// successful response's body comes (see [the module docs](self)).
pub struct CircuitBreakerMiddleware<C = HttpResponses> {
    target: Target,
    classifier: C,
    /// `None`: each request is sent once. The group's budget is asked for
    /// with it (one comparison of its address).
    retry: Option<RetryPolicy>,
    wait: Wait,
}

/// The wait between two attempts.
type Wait = Arc<dyn Fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// tokio's timer.
fn tokio_wait() -> Wait {
    Arc::new(|after| Box::pin(tokio::time::sleep(after)))
}

/// Put in a request's extensions, it says that the request is safe to send
/// again although its method is not idempotent (a `POST` with an idempotency
/// key, say): a [retrying](CircuitBreakerMiddleware::retry) middleware then
/// retries it too.
///
/// ```no_run
/// use breakerbox::reqwest::SafeToRetry;
///
/// # async fn run(client: reqwest_middleware::ClientWithMiddleware) -> reqwest_middleware::Result<()> {
/// client
///     .post("http://127.0.0.1:8080/payments")
///     .header("idempotency-key", "order-7")
///     .body("{}")
///     .with_extension(SafeToRetry)
///     .send()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SafeToRetry;

enum Target {
    Group(Breaker),
    /// A breaker per `host:port`: the keys of a keyed group, bounded by its
    /// `key_capacity`; a known host costs a hash, a lock-free lookup and a handle
    /// clone, and no allocation until its response's body is wrapped.
    PerHost(KeyedGroup<String>),
}

impl CircuitBreakerMiddleware {
    /// Every request behind `group`'s breaker in the process-wide registry (the
    /// one its `#[circuit_breaker]` fns use; created with the group's explicit
    /// config or the defaults if nothing has used it yet). Built while a
    /// test's `testing::TestKit` is installed, the group's breaker in
    /// the kit's registry; so for every constructor taking a group name.
    pub fn group(group: &str) -> Self {
        crate::testing_hook::integration_registry(|registry| {
            Self::for_breaker(&registry.breaker_or_default(group))
        })
    }

    /// Every request behind `group`'s breaker in the process-wide registry,
    /// declaring `config` as a `#[circuit_breaker]` attribute does (use this when
    /// the group's fns declare one: see
    /// [`CircuitBreakerLayer::new`](crate::tower::CircuitBreakerLayer::new)).
    pub fn with_config(group: &str, config: &Config) -> Self {
        crate::testing_hook::integration_registry(|registry| {
            Self::for_breaker(&registry.breaker(group, config))
        })
    }

    /// Every request behind `breaker`, from any registry or made by hand. Like
    /// the tower layer, the middleware holds a handle to it, and each request
    /// in flight (its body included) one more.
    pub fn for_breaker(breaker: &Breaker) -> Self {
        crate::testing_hook::reached(breaker);
        CircuitBreakerMiddleware {
            target: Target::Group(breaker.clone()),
            classifier: HttpResponses,
            retry: None,
            wait: tokio_wait(),
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
        crate::testing_hook::integration_registry(|registry| {
            Self::per_host_in(registry, group, config, max_hosts)
        })
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
            retry: None,
            wait: tokio_wait(),
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
            retry: self.retry,
            wait: self.wait,
        }
    }

    /// The same middleware, retrying a request as `policy` says: up to
    /// `policy.retries()` more attempts after a failure, each one claim and
    /// one outcome in the request's breaker (its host's, per host), after a
    /// backoff with full jitter, within the policy's deadline and the group's
    /// budget. See [the module docs](self#retries) for which requests are
    /// retried and how `Retry-After` is honoured.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::reqwest::CircuitBreakerMiddleware;
    /// use breakerbox::{Config, RetryPolicy};
    /// use reqwest_middleware::ClientBuilder;
    ///
    /// let retry = RetryPolicy::new(2).delay(Duration::from_millis(100)).deadline(Duration::from_secs(5));
    /// let client = ClientBuilder::new(reqwest::Client::new())
    ///     .with(CircuitBreakerMiddleware::per_host("docs-retry", &Config::default(), 1_000)?.retry(retry))
    ///     .build();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// The same middleware, waiting between attempts on `timer` instead of
    /// tokio's (a test's clock, say). Each wait is boxed: a retry costs one
    /// allocation more.
    pub fn retry_timer<T>(mut self, timer: T) -> Self
    where
        T: Timer + Send + Sync + 'static,
        T::Sleep: Send + 'static,
    {
        self.wait = Arc::new(move |after| Box::pin(timer.sleep(after)));
        self
    }

    /// The group's retry policy and the budget its retries draw on, if the
    /// middleware retries (see [`retry`](Self::retry)).
    pub fn retry_budget(&self) -> Option<&Retry> {
        let policy = self.retry.as_ref()?;
        Some(match &self.target {
            Target::Group(breaker) => breaker.group_retry(policy),
            Target::PerHost(hosts) => hosts.group_retry(policy),
        })
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
    /// # Ok::<(), breakerbox::keyed::WrongKeyType>(())
    /// ```
    pub fn breaker_for(&self, url: &Url) -> Option<Breaker> {
        match &self.target {
            Target::Group(breaker) => Some(breaker.clone()),
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
        d.field("classifier", &self.classifier)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
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
            Target::Group(breaker) => breaker,
            Target::PerHost(hosts) => match host_key(request.url(), |key| {
                let breaker = hosts.breaker(key);
                #[cfg(feature = "tracing")]
                crate::observe::span::record_key(&breaker, key);
                breaker
            }) {
                Some(breaker) => {
                    keyed = breaker;
                    &keyed
                }
                None => return next.run(request, extensions).await,
            },
        };
        // One bulkhead place for the whole call, its retries included.
        let _slot = breaker.enter_bulkhead().map_err(Error::middleware)?;
        let retry = match &self.retry {
            Some(policy)
                if is_idempotent(request.method()) || extensions.get::<SafeToRetry>().is_some() =>
            {
                breaker.group_retry(policy)
            }
            _ => return self.once(breaker, request, extensions, next).await,
        };
        // A body that is a stream cannot be sent again: the request goes once.
        let mut spare = request.try_clone();
        if spare.is_none() {
            return self.once(breaker, request, extensions, next).await;
        }
        let mut attempts = Attempts::start(breaker, retry);
        let mut request = request;
        loop {
            let permit = claim(breaker)?;
            let Some(result) =
                within_deadline(breaker, next.clone().run(request, extensions)).await
            else {
                let late = Err(timed_out(permit));
                match next_attempt(
                    breaker,
                    retry,
                    &mut attempts,
                    Verdict::Failure,
                    None,
                    spare.is_some(),
                ) {
                    None => return late,
                    Some(delay) => {
                        (self.wait)(delay).await;
                        request = spare.take().expect("a retry has its request");
                        spare = request.try_clone();
                        continue;
                    }
                }
            };
            let (verdict, held, result) = self.record(result, permit);
            let hint = held.or_else(|| self.classifier.retry_after(result.as_ref()));
            let replayable = spare.is_some();
            match next_attempt(breaker, retry, &mut attempts, verdict, hint, replayable) {
                None => return result,
                Some(delay) => {
                    drop(result);
                    (self.wait)(delay).await;
                    request = spare.take().expect("a retry has its request");
                    spare = request.try_clone();
                }
            }
        }
    }
}

impl<C> CircuitBreakerMiddleware<C>
where
    C: Classify<Response, Error>,
{
    /// One attempt, its outcome recorded under `breaker`.
    async fn once(
        &self,
        breaker: &Breaker,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let permit = claim(breaker)?;
        // Dropped with this future if the request is cancelled: abandoned.
        let Some(result) = within_deadline(breaker, next.run(request, extensions)).await else {
            return Err(timed_out(permit));
        };
        self.record(result, permit).2
    }

    /// Records `result` under `permit`: a hold for the wait it asks of every
    /// caller (the call then counts as ignored), else the classifier's
    /// verdict. Returns the verdict, the wait held for (a retry waits until
    /// the hold ends, which the core reads itself) and the result.
    fn record(
        &self,
        result: reqwest_middleware::Result<Response>,
        permit: OwnedPermit,
    ) -> (
        Verdict,
        Option<Duration>,
        reqwest_middleware::Result<Response>,
    ) {
        // A host's wait holds its key; a group's, the group.
        let scope = match self.target {
            Target::Group(_) => HoldScope::Group,
            Target::PerHost(_) => HoldScope::Key,
        };
        match self.classifier.wait(result.as_ref()) {
            ServerWait::For(wait) => {
                permit.hold(wait, scope);
                return (Verdict::Ignored, Some(wait), result);
            }
            ServerWait::Bad => permit.breaker().count_bad_hold(),
            ServerWait::None => {}
        }
        let verdict = self.classifier.classify(result.as_ref());
        (verdict, None, record(verdict, result, permit))
    }
}

/// Claims a permit of `breaker` for one attempt.
fn claim(breaker: &Breaker) -> Result<OwnedPermit, Error> {
    breaker.try_acquire_owned().map_err(Error::middleware)
}

/// `attempt` raced against the group's `timeout_ms` on tokio's timer, if it
/// has one: `None` when the deadline passed first (the attempt is dropped).
async fn within_deadline<F: Future>(breaker: &Breaker, attempt: F) -> Option<F::Output> {
    match breaker.config().timeout() {
        None => Some(attempt.await),
        Some(after) => crate::timeout::within(&crate::timeout::Tokio, after, attempt).await,
    }
}

/// The error of an attempt dropped at the group's deadline, recorded as a
/// timed-out call (a failure): `reqwest_middleware::Error::Middleware`
/// holding the [`TimedOut`](crate::TimedOut).
fn timed_out(permit: OwnedPermit) -> Error {
    let after = permit.breaker().config().timeout().unwrap_or_default();
    Error::middleware(permit.timed_out(after))
}

/// Records `result` under `permit` as `verdict` says: a successful response
/// when its body ends, anything else now.
fn record(
    verdict: Verdict,
    result: reqwest_middleware::Result<Response>,
    permit: OwnedPermit,
) -> reqwest_middleware::Result<Response> {
    match (verdict, result) {
        (Verdict::Success, Ok(response)) => Ok(record_at_end_of_body(response, permit)),
        (Verdict::Success, result) => {
            permit.success();
            result
        }
        (Verdict::Failure, result) => {
            permit.failure();
            result
        }
        (Verdict::Ignored, result) => {
            permit.ignore();
            result
        }
        (Verdict::GroupFailure, result) => {
            permit.failure_of_group();
            result
        }
    }
}

/// `response` with its body wrapped in a [`RecordedBody`] that records the
/// call's outcome when the body ends, fails or is dropped; an empty body is
/// recorded as a success at once.
fn record_at_end_of_body(response: Response, permit: OwnedPermit) -> Response {
    let url = response.url().clone();
    let (parts, body) = http::Response::<reqwest::Body>::from(response).into_parts();
    if http_body::Body::is_end_stream(&body) {
        permit.success();
        return rebuild(parts, url, body);
    }
    rebuild(
        parts,
        url,
        reqwest::Body::wrap(RecordedBody::new(body, permit)),
    )
}

/// A `reqwest::Response` of `parts` and `body`, keeping its URL (which the
/// conversion to `http::Response` leaves out) and its extensions.
fn rebuild(parts: http::response::Parts, url: Url, body: reqwest::Body) -> Response {
    use reqwest::ResponseBuilderExt as _;
    let mut builder = http::Response::builder();
    *builder.headers_mut().expect("a new builder") = parts.headers;
    *builder.extensions_mut().expect("a new builder") = parts.extensions;
    let rebuilt = builder
        .status(parts.status)
        .version(parts.version)
        .url(url)
        .body(body)
        .expect("the parts of a response");
    Response::from(rebuilt)
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

    /// `Retry-After` on a `429` or `503` ([`retry_after`](crate::tower::retry_after())).
    fn retry_after(&self, result: Result<&Response, &Error>) -> Option<Duration> {
        let response = result.ok()?;
        crate::tower::retry_after(response.status().as_u16(), response.headers())
    }

    /// `Retry-After` on a `429` or `503`, for a hold
    /// ([`server_wait`](crate::tower::server_wait())).
    fn wait(&self, result: Result<&Response, &Error>) -> ServerWait {
        match result {
            Ok(response) => {
                crate::tower::server_wait(response.status().as_u16(), response.headers())
            }
            Err(_) => ServerWait::None,
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
