//! What an error reporter prints for the crate's errors: each message of the
//! `source()` chain once, a refusal findable in the chain whatever the inner
//! error is, and `BreakerError` going into `anyhow` with `?`.

use std::error::Error;
use std::io;

use breakerbox::tower::{circuit_open, BoxError, BreakerError, CircuitBreakerLayer, Errors};
use breakerbox::{classify::EveryError, Breaker, CallError, CircuitOpen, Config};
use tower::{Layer, Service, ServiceExt};

/// The messages a reporter prints: the error's, then each source's.
fn chain(error: &(dyn Error + 'static)) -> Vec<String> {
    std::iter::successors(Some(error), |&e| e.source())
        .map(ToString::to_string)
        .collect()
}

fn breaker(group: &str) -> Breaker {
    Breaker::new(group, Config::builder().threshold(100).build().unwrap())
}

#[test]
fn a_call_error_says_what_happened_and_its_source_says_why() {
    let b = breaker("report-call");
    let failed = b
        .call(|| Err::<(), _>(io::Error::other("connection reset")))
        .unwrap_err();
    assert_eq!(chain(&failed), ["the call failed", "connection reset"]);

    b.force_open();
    let refused: CallError<io::Error> = b.call(|| Ok(())).unwrap_err();
    assert_eq!(
        chain(&refused),
        [
            "the call was refused",
            "circuit `report-call` is forced open"
        ]
    );
    assert_eq!(circuit_open(&refused).unwrap().group(), "report-call");
}

#[test]
fn a_call_error_in_anyhow_prints_each_message_once() {
    fn run(b: &Breaker) -> anyhow::Result<()> {
        b.call(|| Err::<(), _>(io::Error::other("connection reset")))?;
        Ok(())
    }
    let err = run(&breaker("report-anyhow-call")).unwrap_err();
    assert_eq!(format!("{err:#}"), "the call failed: connection reset");
    assert!(err.chain().any(|e| e.is::<io::Error>()));
}

#[test]
fn a_breaker_error_is_an_error_that_goes_into_anyhow_with_the_question_mark() {
    fn run(result: Result<(), BreakerError<io::Error>>) -> anyhow::Result<()> {
        result?;
        Ok(())
    }
    let failed = run(Err(BreakerError::Inner(io::Error::other("reset")))).unwrap_err();
    assert_eq!(
        format!("{failed:#}"),
        "the service behind the circuit breaker failed: reset"
    );

    let b = breaker("report-anyhow-tower");
    b.force_open();
    let refused = run(Err(b.try_acquire().unwrap_err().into())).unwrap_err();
    assert_eq!(
        format!("{refused:#}"),
        "the circuit breaker refused the call: circuit `report-anyhow-tower` is forced open"
    );
    let open = refused
        .chain()
        .find_map(|e| e.downcast_ref::<CircuitOpen>());
    assert_eq!(open.unwrap().group(), "report-anyhow-tower");
}

#[tokio::test]
async fn in_a_tower_box_error_stack_a_refusal_is_found_by_walking_the_chain() {
    let b = breaker("report-box-stack");
    let failing = tower::service_fn(|(): ()| async { Err::<u32, _>(io::Error::other("reset")) });
    let mut svc = tower::ServiceBuilder::new()
        .timeout(std::time::Duration::from_secs(60))
        .service(
            CircuitBreakerLayer::for_breaker(&b)
                .classify(Errors(EveryError))
                .layer(failing),
        );
    let error: BoxError = svc.ready().await.unwrap().call(()).await.unwrap_err();
    assert_eq!(
        chain(&*error),
        ["the service behind the circuit breaker failed", "reset"]
    );
    assert!(circuit_open(&*error).is_none());

    b.force_open();
    let error = svc.ready().await.unwrap().call(()).await.unwrap_err();
    assert_eq!(circuit_open(&*error).unwrap().group(), "report-box-stack");
}
