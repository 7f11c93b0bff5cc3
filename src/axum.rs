//! axum (feature `axum`): an open circuit answers `503 Service Unavailable`
//! with a `Retry-After` header taken from [`CircuitOpen::retry_after`].
//!
//! axum wants a route's middleware to answer every request, so a
//! [`CircuitBreakerLayer`](crate::tower::CircuitBreakerLayer) goes under axum's
//! `HandleErrorLayer`, with [`handle_error`] turning a refusal into that `503`:
//!
//! ```
//! use axum::{error_handling::HandleErrorLayer, routing::get, Router};
//! use breakerbox::tower::CircuitBreakerLayer;
//! use tower::ServiceBuilder;
//!
//! let app: Router = Router::new().route("/quote", get(|| async { "42" })).layer(
//!     ServiceBuilder::new()
//!         .layer(HandleErrorLayer::new(breakerbox::axum::handle_error))
//!         .layer(CircuitBreakerLayer::new("docs-quote")),
//! );
//! ```
//!
//! In a handler, a `#[circuit_breaker]` fn's refusal answers the same way through
//! [`open_response`], or through [`BreakerError`]'s `IntoResponse`.

use std::future::{ready, Ready};

use axum_core::response::{IntoResponse, Response};
use breaker_core::CircuitOpen;
use http::header::{HeaderValue, RETRY_AFTER};
use http::StatusCode;

use crate::tower::{circuit_open, BoxError, BreakerError};

/// `503 Service Unavailable`, with `Retry-After: <seconds>` (rounded up) when
/// the refusal says when a probe may go, and the refusal's message as a plain
/// text body. A circuit forced open has no `Retry-After`.
///
/// ```
/// use breakerbox::{Breaker, Config};
///
/// let breaker = Breaker::new("docs-open-response", Config::default());
/// breaker.force_open();
/// let response = breakerbox::axum::open_response(&breaker.try_acquire().unwrap_err());
/// assert_eq!(response.status(), 503);
/// assert!(response.headers().get("retry-after").is_none()); // forced: no promise
/// ```
pub fn open_response(open: &CircuitOpen) -> Response {
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, open.to_string()).into_response();
    if let Some(after) = open.retry_after() {
        let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// A refusal answers with [`open_response`]; an inner error with its own
/// response; a call past its group's `timeout_ms` `504 Gateway Timeout`.
impl<E: IntoResponse> IntoResponse for BreakerError<E> {
    fn into_response(self) -> Response {
        match self {
            BreakerError::Open(open) => open_response(&open),
            BreakerError::Inner(e) => e.into_response(),
            BreakerError::TimedOut(late) => {
                (StatusCode::GATEWAY_TIMEOUT, late.to_string()).into_response()
            }
        }
    }
}

/// For `HandleErrorLayer::new(breakerbox::axum::handle_error)` directly above a
/// [`CircuitBreakerLayer`](crate::tower::CircuitBreakerLayer): a refusal answers
/// `503` with `Retry-After`, an inner error with its own response (an axum
/// route's error is `Infallible`).
pub fn handle_error<E: IntoResponse>(error: BreakerError<E>) -> Ready<Response> {
    ready(error.into_response())
}

/// For `HandleErrorLayer::new(breakerbox::axum::handle_box_error)` above a stack
/// whose errors are [`BoxError`]s (a breaker under tower's timeout, say): a
/// [`CircuitOpen`] anywhere in the error's source chain answers `503` with
/// `Retry-After`; any other error `500 Internal Server Error` with the messages
/// of its chain, joined by `: `.
pub fn handle_box_error(error: BoxError) -> Ready<Response> {
    if let Some(open) = circuit_open(&*error) {
        return ready(open_response(open));
    }
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        message = format!("{message}: {e}");
        cause = e.source();
    }
    ready((StatusCode::INTERNAL_SERVER_ERROR, message).into_response())
}
