//! breakerbox's tower layer as an outage contender: the breaker (and, when
//! asked, its retries under the group's budget) above a per-attempt timeout
//! above the HTTP client, as a user stacks them. Shared by the `outage` bench
//! and the `outage_short_form` test; needs breakerbox's `tower` and `tokio`.

use std::time::Duration;

use breakerbox::tower::{BreakerError, CircuitBreakerLayer, Classify, HttpResponses, Verdict};
use breakerbox::{Breaker, OpenReason, RetryPolicy};
use hyper::Response;
use tower::{Layer, ServiceBuilder, ServiceExt};

use crate::harness::{status_fails, Answer, BoxError, Contender, Target};

/// The classification every contender of the bench uses: `5xx`, `408`, a
/// timeout and no response fail; a `429` is ignored (its `Retry-After` is a
/// retry's wait floor); the rest succeed.
#[derive(Clone, Copy, Debug)]
pub struct Uniform;

impl<B, E> Classify<Response<B>, E> for Uniform {
    fn classify(&self, result: Result<&Response<B>, &E>) -> Verdict {
        match result {
            Ok(response) if status_fails(response.status().as_u16()) => Verdict::Failure,
            Ok(response) if response.status().as_u16() == 429 => Verdict::Ignored,
            Ok(_) => Verdict::Success,
            Err(_) => Verdict::Failure,
        }
    }

    fn retry_after(&self, result: Result<&Response<B>, &E>) -> Option<Duration> {
        HttpResponses.retry_after(result)
    }
}

/// What a caller of the layer gets, as an [`Answer`].
pub fn answer<B>(result: Result<Response<B>, BreakerError<BoxError>>) -> Answer {
    match result {
        Ok(response) => Answer::of_status(response.status().as_u16()),
        Err(BreakerError::Open(open)) if open.reason() == OpenReason::Ramping => Answer::Ramping,
        Err(BreakerError::Open(_)) => Answer::Refused,
        Err(BreakerError::Inner(e)) if e.is::<tower::timeout::error::Elapsed>() => Answer::TimedOut,
        Err(BreakerError::TimedOut(_)) => Answer::TimedOut,
        Err(BreakerError::Inner(_)) => Answer::Failed,
    }
}

/// `breaker`'s layer over a `timeout` per attempt over `target`'s client; with
/// `retry`, the retrying layer of the same breaker.
pub fn contender(
    target: Target,
    breaker: &Breaker,
    timeout: Duration,
    retry: Option<RetryPolicy>,
) -> Contender {
    let client = target.clone();
    let inner = ServiceBuilder::new()
        .timeout(timeout)
        .service_fn(move |request| client.send(request));
    let layer = CircuitBreakerLayer::for_breaker(breaker).classify(Uniform);
    match retry {
        None => {
            let service = layer.layer(inner);
            std::sync::Arc::new(move || {
                let call = service.clone().oneshot(target.request());
                Box::pin(async move { answer(call.await) })
            })
        }
        Some(policy) => {
            let service = layer.retry(policy).layer(inner);
            std::sync::Arc::new(move || {
                let call = service.clone().oneshot(target.request());
                Box::pin(async move { answer(call.await) })
            })
        }
    }
}
