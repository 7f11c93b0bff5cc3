//! gRPC (feature `tonic`): [`CircuitBreakerLayer`] puts a tonic `Channel`, or
//! a tonic server, behind breakers that judge each call by its `grpc-status`.
//!
//! gRPC answers almost every call with HTTP `200`: the status is in the
//! headers of a trailers-only answer, else in the trailers after the last
//! message. A plain HTTP layer counts all of that as success; this one reads
//! the status where it is and records it when it comes:
//!
//! ```
//! use std::convert::Infallible;
//! use breakerbox::tonic::CircuitBreakerLayer;
//! use breakerbox::{Config, State};
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! // A server that answers every call trailers-only with `UNAVAILABLE`.
//! let unwell = service_fn(|_: http::Request<String>| async {
//!     let answer = http::Response::builder()
//!         .header("content-type", "application/grpc")
//!         .header("grpc-status", "14")
//!         .body(String::new())
//!         .unwrap();
//!     Ok::<_, Infallible>(answer)
//! });
//! let config = Config::builder().threshold(2).build()?;
//! let layer = CircuitBreakerLayer::with_config("docs-grpc", &config);
//! let guarded = layer.layer(unwell);
//! for _ in 0..2 {
//!     guarded.clone().oneshot(http::Request::new(String::new())).await.unwrap();
//! }
//! let breaker = layer.breaker_for(&http::Request::new(()));
//! assert_eq!(breaker.state(), State::Open);
//!
//! // Refused: answered `UNAVAILABLE` here, without calling the server.
//! let refused = guarded.oneshot(http::Request::new(String::new())).await.unwrap();
//! assert_eq!(refused.headers()["grpc-status"], "14");
//! assert_eq!(refused.headers()["grpc-retry-pushback-ms"], "-1");
//! assert_eq!(refused.headers()[breakerbox::tonic::REFUSED_HEADER], "open");
//! # Ok::<(), breakerbox::ConfigError>(())
//! # }).unwrap();
//! ```
//!
//! With tonic, the layer goes around the `Channel`, below the client (a
//! generated client's `with_origin`, or `tonic::client::Grpc`):
//!
//! ```no_run
//! use breakerbox::tonic::CircuitBreakerLayer;
//! use breakerbox::Config;
//! use tower::Layer;
//!
//! # fn build() -> Result<(), Box<dyn std::error::Error>> {
//! let origin: http::Uri = "http://127.0.0.1:50051".parse()?;
//! let channel = tonic::transport::Endpoint::from(origin.clone()).connect_lazy();
//! // One breaker per `host:port` the calls go to.
//! let layer = CircuitBreakerLayer::per_authority("inventory", &Config::default(), 100)?;
//! let client = tonic::client::Grpc::with_origin(layer.layer(channel), origin);
//! # let _ = client; Ok(()) }
//! ```
//!
//! # What one call does
//!
//! - `call` picks the call's breaker (see [Keys](#keys)) and claims a permit.
//!   Refused, the call never reaches the inner service: the answer is a
//!   trailers-only `UNAVAILABLE` (see [Refusals](#refusals)). `poll_ready` is
//!   the inner service's; it never claims.
//! - The outcome is recorded when it is known: a transport error (the
//!   service's `Err`: refused, reset, no connection) by the classifier, a
//!   failure by default; a trailers-only answer (or an HTTP error status,
//!   mapped to a code as gRPC maps it) at its head; any other answer at its
//!   trailers, in its [`GrpcBody`], so a server stream that fails after some
//!   messages counts as the failure it is. A body that is dropped before its
//!   trailers (a client that stopped reading a stream) is *abandoned*, as is
//!   a call whose future is dropped, which counts as the group's `abandoned`
//!   key says: ignored by default (a probe slot it held is freed), a failure
//!   under `abandoned = "failure"`, which suits a client only.
//! - Until then the call holds its permit, a half-open probe slot included,
//!   and its duration for a slow-call rule runs to the trailers.
//! - With feature `tracing`, a recorded group's call carries its group, its
//!   key (the authority or the method), its verdict and its outcome on the
//!   current span (see `observe::span`).
//!
//! # Classification
//!
//! [`GrpcStatuses`], the default, judges by [`code_verdict`]: `UNAVAILABLE`,
//! `DEADLINE_EXCEEDED`, `INTERNAL`, `DATA_LOSS` and `UNKNOWN` fail; the codes
//! about the request or the caller (`INVALID_ARGUMENT`, `NOT_FOUND`,
//! `PERMISSION_DENIED`, `CANCELLED`, ...) and `RESOURCE_EXHAUSTED` are
//! ignored. [`classify`](CircuitBreakerLayer::classify) takes any
//! [`Classify<GrpcStatus, E>`](crate::tower::Classify) instead, a plain
//! `fn(Result<&GrpcStatus, &E>) -> Verdict` included, as the tower layer
//! does for HTTP. An error reading a body (the stream reset mid-way) is a
//! failure whatever the classifier.
//!
//! # Refusals
//!
//! A refused call is answered as a gRPC server answers one it cannot take: a
//! trailers-only `200` with `grpc-status: 14` (`UNAVAILABLE`), the refusal's
//! reason in `grpc-message` ("circuit \`inventory\` is open; retry after
//! 9.9s"), and:
//!
//! - `grpc-retry-pushback-ms: -1`: a gRPC client with a retry policy
//!   (grpc-go, grpc-java, C-core, any that follows gRPC's retry design) does
//!   not retry an answer with a negative pushback, so its own retries do not
//!   turn one refusal into several. tonic has no retry policy of its own; a
//!   retry layer placed *above* this one sees a `tonic::Status` with that
//!   header in its metadata;
//! - [`REFUSED_HEADER`] (`breakerbox-refused`), whose value is the refusal's
//!   [`OpenReason`](crate::OpenReason) (`"open"`, `"half_open_full"`, ...),
//!   so a caller can tell a refusal from a server's own `UNAVAILABLE` in the
//!   status's metadata;
//! - the [`CircuitOpen`] itself in the response's extensions, for a tower
//!   layer above.
//!
//! # Keys
//!
//! A layer guards with one breaker, or with a breaker per key of a keyed
//! group in the same [`Registry`] as the attribute and the other layers:
//!
//! - [`new`](CircuitBreakerLayer::new), [`with_config`](CircuitBreakerLayer::with_config),
//!   [`for_breaker`](CircuitBreakerLayer::for_breaker): one breaker for every call;
//! - [`per_authority`](CircuitBreakerLayer::per_authority): per `:authority`
//!   (`host:port`) of the request, for a layer in front of several servers,
//!   or one layer's group shared by the channels to several servers. tonic's
//!   `Channel` sets the authority below the layer: the client above it has to
//!   set it, as a generated client's `with_origin` does. A request with no
//!   authority (nor `host` header) is keyed as the empty authority;
//! - [`per_method`](CircuitBreakerLayer::per_method): per method
//!   (`/pkg.Service/Method`) of a client's calls;
//! - [`server`](CircuitBreakerLayer::server): per method, in front of a
//!   server (see below).
//!
//! # On a server
//!
//! In front of a tonic server (`Server::builder().layer(..)`),
//! [`server`](CircuitBreakerLayer::server) keeps a breaker per method, judged
//! by the status its handler answers: while a method's circuit is open, its
//! calls are answered `UNAVAILABLE` at once, over the wire, without running
//! the handler, and the other methods are served as before. Every request
//! is a stranger's:
//!
//! - the method names come from the client: the group holds at most
//!   `max_methods` keys (idle ones are evicted), a key is at most
//!   [`MAX_METHOD_KEY`] bytes of the path, and a method that does not exist
//!   answers `UNIMPLEMENTED`, which is ignored;
//! - a client's `grpc-timeout` is its own: it never counts against the
//!   method (tonic's server enforces it and answers `CANCELLED`, ignored);
//!   only the group's `timeout_ms` is the layer's deadline;
//! - a client that drops its call, or cancels it, counts as abandoned or
//!   ignored, never as a failure, while the group keeps `abandoned = "ignore"`
//!   (the default): under `"failure"` every client that goes away is a
//!   failure, so a server's group keeps the default. What a client can make a handler answer
//!   still counts: tonic answers a request it cannot decode with
//!   `INTERNAL`, a failure under [`GrpcStatuses`]; a server open to
//!   untrusted clients gives the layer a classifier of its own.
//!
//! # Deadlines
//!
//! A client's call has as deadline the smaller of its request's
//! `grpc-timeout` and the group's `timeout_ms` ([`Config::timeout`](crate::Config::timeout)). When
//! the group's is the smaller (or the request has none), the layer writes it
//! into the request's `grpc-timeout`, so that the server knows it too. A call
//! that reaches its deadline is answered `DEADLINE_EXCEEDED` (before the
//! answer's head: a trailers-only answer; during its body: the body ends with
//! those trailers) and recorded as the classifier says of that status (a
//! failure by default). A server's layer has the group's `timeout_ms` alone
//! as deadline. The deadline runs on tokio's timer; a call without one
//! starts no timer.

mod body;
mod deadline;
mod future;
mod status;

use std::fmt;
use std::task::{Context, Poll};

use breaker_core::hold::HoldScope;
use breaker_core::{Breaker, CircuitOpen, Config, KeyedGroup, Registry, WrongKeyType};
use http::HeaderValue;
use http_body::Body;
use tower_layer::Layer;
use tower_service::Service;

pub use self::body::GrpcBody;
use self::body::Recorder;
use self::future::trailers_only;
pub use self::future::ResponseFuture;
pub use self::status::{
    code_verdict, resource_exhausted, Code, GrpcStatus, GrpcStatuses, Pushback,
};
use crate::tower::Classify;

/// The header of a refusal's answer that names why the breaker refused: the
/// refusal's [`OpenReason::as_str`](crate::OpenReason::as_str).
pub const REFUSED_HEADER: &str = "breakerbox-refused";

/// The most bytes of a request's path that make its method's key in a
/// [`per_method`](CircuitBreakerLayer::per_method) group; a longer path is
/// keyed by its first `MAX_METHOD_KEY` bytes.
pub const MAX_METHOD_KEY: usize = 256;

/// A [`Layer`] that puts a gRPC service (a tonic `Channel`, a tonic server's
/// routes, any `Service<http::Request<_>>` answering `http::Response`s) behind
/// circuit breakers judged by `grpc-status`. Cloning it is cheap; every clone,
/// and every service it makes, shares its breakers.
///
/// The classifier `C` says what each status counts as; the default is
/// [`GrpcStatuses`]. See [the module docs](self).
#[derive(Clone)]
pub struct CircuitBreakerLayer<C = GrpcStatuses> {
    target: Target,
    classifier: C,
    /// Whether the request's `grpc-timeout` is the caller's own (a client's
    /// layer) or a remote client's, which never counts against the server.
    role: Role,
}

/// Which side of a call the layer is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Client,
    Server,
}

/// Which breaker a call goes through.
#[derive(Clone)]
enum Target {
    Group(Breaker),
    Authority(KeyedGroup<String>),
    Method(KeyedGroup<String>),
}

impl CircuitBreakerLayer {
    /// Every call behind `group`'s breaker in the process-wide registry (the
    /// one its `#[circuit_breaker]` fns use; created with the group's explicit
    /// config or the defaults if nothing has used it yet).
    pub fn new(group: &str) -> Self {
        Self::for_breaker(&crate::registry().breaker_or_default(group))
    }

    /// Every call behind `group`'s breaker in the process-wide registry,
    /// declaring `config` as a `#[circuit_breaker]` attribute does (see
    /// [`tower::CircuitBreakerLayer::with_config`](crate::tower::CircuitBreakerLayer::with_config)).
    pub fn with_config(group: &str, config: &Config) -> Self {
        Self::for_breaker(&crate::registry().breaker(group, config))
    }

    /// Every call behind `breaker`, from any registry or made by hand.
    pub fn for_breaker(breaker: &Breaker) -> Self {
        CircuitBreakerLayer {
            target: Target::Group(breaker.clone()),
            classifier: GrpcStatuses,
            role: Role::Client,
        }
    }

    /// A breaker per `:authority` (`host:port`) of the request: the keys of
    /// the keyed group `group` of the process-wide registry, all on `config`
    /// (or what configuration layered over it says), with at most about
    /// `max_authorities` idle closed keys kept. A refusal's
    /// [`CircuitOpen::group`] is `group`.
    ///
    /// # Errors
    ///
    /// [`WrongKeyType`] if `group` is already a keyed group whose keys are not
    /// `String`s.
    pub fn per_authority(
        group: &str,
        config: &Config,
        max_authorities: usize,
    ) -> Result<Self, WrongKeyType> {
        Self::per_authority_in(crate::registry(), group, config, max_authorities)
    }

    /// [`per_authority`](Self::per_authority) in `registry`.
    pub fn per_authority_in(
        registry: &Registry,
        group: &str,
        config: &Config,
        max_authorities: usize,
    ) -> Result<Self, WrongKeyType> {
        Ok(CircuitBreakerLayer {
            target: Target::Authority(registry.keyed(group, config, max_authorities)?),
            classifier: GrpcStatuses,
            role: Role::Client,
        })
    }

    /// A breaker per method (the request's path, `/pkg.Service/Method`) of
    /// the calls a client makes: the keys of the keyed group `group` of the
    /// process-wide registry, all on `config`, with at most about
    /// `max_methods` idle closed keys kept. In front of a server, use
    /// [`server`](Self::server).
    ///
    /// # Errors
    ///
    /// [`WrongKeyType`] if `group` is already a keyed group whose keys are not
    /// `String`s.
    pub fn per_method(
        group: &str,
        config: &Config,
        max_methods: usize,
    ) -> Result<Self, WrongKeyType> {
        Self::per_method_in(crate::registry(), group, config, max_methods)
    }

    /// [`per_method`](Self::per_method) in `registry`.
    pub fn per_method_in(
        registry: &Registry,
        group: &str,
        config: &Config,
        max_methods: usize,
    ) -> Result<Self, WrongKeyType> {
        Ok(CircuitBreakerLayer {
            target: Target::Method(registry.keyed(group, config, max_methods)?),
            classifier: GrpcStatuses,
            role: Role::Client,
        })
    }

    /// The layer of a server: a breaker per method, as
    /// [`per_method`](Self::per_method), judged by what the server's handlers
    /// answer (see [the module docs](self#on-a-server)). A request's
    /// `grpc-timeout` is the remote client's and never counts against the
    /// method; the group's `timeout_ms` does.
    ///
    /// # Errors
    ///
    /// [`WrongKeyType`] if `group` is already a keyed group whose keys are not
    /// `String`s.
    pub fn server(group: &str, config: &Config, max_methods: usize) -> Result<Self, WrongKeyType> {
        Self::server_in(crate::registry(), group, config, max_methods)
    }

    /// [`server`](Self::server) in `registry`.
    pub fn server_in(
        registry: &Registry,
        group: &str,
        config: &Config,
        max_methods: usize,
    ) -> Result<Self, WrongKeyType> {
        Ok(CircuitBreakerLayer {
            role: Role::Server,
            ..Self::per_method_in(registry, group, config, max_methods)?
        })
    }
}

impl<C> CircuitBreakerLayer<C> {
    /// The same layer with another classifier: any
    /// [`Classify<GrpcStatus, E>`](crate::tower::Classify) for the inner
    /// service's error `E` (see [`GrpcStatuses`] for an example).
    pub fn classify<D>(self, classifier: D) -> CircuitBreakerLayer<D> {
        CircuitBreakerLayer {
            target: self.target,
            classifier,
            role: self.role,
        }
    }

    /// The breaker `request` goes through (created on first use per key).
    ///
    /// ```
    /// use breakerbox::tonic::CircuitBreakerLayer;
    /// use breakerbox::{Config, Registry};
    ///
    /// let registry = Registry::new();
    /// let layer = CircuitBreakerLayer::per_method_in(&registry, "docs-rpc", &Config::default(), 100)?;
    /// let request = http::Request::get("/shop.Cart/Add").body(()).unwrap();
    /// layer.breaker_for(&request).try_acquire().unwrap().failure();
    /// let methods = registry.keyed::<String>("docs-rpc", &Config::default(), 100)?;
    /// assert_eq!(methods.get("/shop.Cart/Add").unwrap().metrics().failures, 1);
    /// # Ok::<(), breakerbox::keyed::WrongKeyType>(())
    /// ```
    pub fn breaker_for<B>(&self, request: &http::Request<B>) -> Breaker {
        self.target.breaker_for(request)
    }
}

impl Target {
    fn breaker_for<B>(&self, request: &http::Request<B>) -> Breaker {
        match self {
            Target::Group(breaker) => breaker.clone(),
            Target::Authority(keys) => keys.breaker(self.key(request)),
            Target::Method(keys) => keys.breaker(self.key(request)),
        }
    }

    /// The key of `request`'s breaker: its authority or its method (empty
    /// for the group's one breaker).
    fn key<'r, B>(&self, request: &'r http::Request<B>) -> &'r str {
        match self {
            Target::Group(_) => "",
            Target::Authority(_) => authority(request),
            Target::Method(_) => method_key(request.uri().path()),
        }
    }
}

/// The request's `:authority`: its URI's, else its `host` header, else empty.
fn authority<B>(request: &http::Request<B>) -> &str {
    match request.uri().authority() {
        Some(authority) => authority.as_str(),
        None => request
            .headers()
            .get(http::header::HOST)
            .and_then(|host| host.to_str().ok())
            .unwrap_or(""),
    }
}

/// At most [`MAX_METHOD_KEY`] bytes of `path`, cut at a character boundary.
fn method_key(path: &str) -> &str {
    let mut end = path.len().min(MAX_METHOD_KEY);
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    &path[..end]
}

impl<C: fmt::Debug> fmt::Debug for CircuitBreakerLayer<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("CircuitBreakerLayer");
        self.target.describe(&mut d);
        d.field("classifier", &self.classifier).finish()
    }
}

impl Target {
    fn describe(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        match self {
            Target::Group(breaker) => d.field("group", &breaker.group()),
            Target::Authority(keys) => d.field("per_authority", &keys.group()),
            Target::Method(keys) => d.field("per_method", &keys.group()),
        };
    }
}

impl<S, C: Clone> Layer<S> for CircuitBreakerLayer<C> {
    type Service = CircuitBreaker<S, C>;

    fn layer(&self, inner: S) -> Self::Service {
        CircuitBreaker {
            inner,
            layer: self.clone(),
        }
    }
}

/// A gRPC service behind circuit breakers; made by [`CircuitBreakerLayer`].
#[derive(Clone)]
pub struct CircuitBreaker<S, C = GrpcStatuses> {
    inner: S,
    layer: CircuitBreakerLayer<C>,
}

impl<S, C> CircuitBreaker<S, C> {
    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// The breaker `request` goes through (created on first use per key).
    pub fn breaker_for<B>(&self, request: &http::Request<B>) -> Breaker {
        self.layer.breaker_for(request)
    }
}

impl<S: fmt::Debug, C: fmt::Debug> fmt::Debug for CircuitBreaker<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("CircuitBreaker");
        d.field("inner", &self.inner);
        self.layer.target.describe(&mut d);
        d.field("classifier", &self.layer.classifier).finish()
    }
}

impl<S, C, ReqBody, ResBody> Service<http::Request<ReqBody>> for CircuitBreaker<S, C>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    ResBody: Body,
    C: Classify<GrpcStatus, S::Error> + Clone,
{
    type Response = http::Response<GrpcBody<ResBody, C>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<ReqBody>) -> Self::Future {
        let claimed = match &self.layer.target {
            Target::Group(breaker) => breaker.try_acquire_owned(),
            keyed => {
                let breaker = keyed.breaker_for(&request);
                #[cfg(feature = "tracing")]
                crate::observe::span::record_key(&breaker, keyed.key(&request));
                breaker.try_acquire_owned()
            }
        };
        let permit = match claimed {
            Ok(permit) => permit,
            Err(open) => return ResponseFuture::refused(open),
        };
        let group = permit.breaker().config().timeout();
        let deadline = match self.layer.role {
            Role::Client => deadline::apply(request.headers_mut(), group),
            Role::Server => group,
        };
        let deadline = deadline.map(|after| Box::pin(tokio::time::sleep(after)));
        // A server's wait holds what the call went through: a key's breaker
        // holds its key, the group's breaker the group.
        let scope = match self.layer.target {
            Target::Group(_) => HoldScope::Group,
            Target::Authority(_) | Target::Method(_) => HoldScope::Key,
        };
        let recorder =
            Recorder::new::<S::Error>(permit, self.layer.classifier.clone(), deadline, scope);
        ResponseFuture::called(self.inner.call(request), recorder)
    }
}

/// The answer to a refused call: a trailers-only `UNAVAILABLE` with the
/// refusal's reason, a pushback that tells gRPC's retries not to retry it,
/// [`REFUSED_HEADER`], and the refusal in the extensions.
fn refusal<B, C>(open: CircuitOpen) -> http::Response<GrpcBody<B, C>> {
    let mut response = trailers_only(Code::Unavailable, &open.to_string());
    let headers = response.headers_mut();
    headers.insert("grpc-retry-pushback-ms", HeaderValue::from_static("-1"));
    headers.insert(
        REFUSED_HEADER,
        HeaderValue::from_static(open.reason().as_str()),
    );
    response.extensions_mut().insert(open);
    response
}
