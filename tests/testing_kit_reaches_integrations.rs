//! A tower layer or a reqwest middleware built while a `TestKit` is installed
//! takes its breakers from the kit's registry, on the kit's clock, as an
//! attribute's calls do: a test of code behind them sees its own breakers and
//! the process-wide registry never sees the group.

use std::convert::Infallible;
use std::time::Duration;

use breakerbox::reqwest::CircuitBreakerMiddleware;
use breakerbox::testing::TestKit;
use breakerbox::tower::CircuitBreakerLayer;
use breakerbox::{Config, State};
use tower::{service_fn, Layer, ServiceExt};

mod support;

use support::poll_ready;

fn failing_upstream(
) -> impl tower::Service<http::Request<()>, Response = http::Response<()>, Error = Infallible> + Clone
{
    service_fn(|_: http::Request<()>| {
        let response = http::Response::builder().status(503).body(()).unwrap();
        std::future::ready(Ok::<_, Infallible>(response))
    })
}

#[test]
fn a_layer_built_under_a_kit_trips_in_the_kit_and_recovers_on_its_clock() {
    let kit = TestKit::new();
    let _installed = kit.install();
    let config = Config::builder()
        .threshold(2)
        .open(Duration::from_secs(30))
        .build()
        .unwrap();
    let layer = CircuitBreakerLayer::with_config("kit-tower", &config);
    for _ in 0..2 {
        let _ = poll_ready(
            layer
                .layer(failing_upstream())
                .oneshot(http::Request::new(())),
        );
    }
    assert_eq!(kit.state("kit-tower"), Some(State::Open));
    assert!(breakerbox::registry().get("kit-tower").is_none());
    kit.advance(Duration::from_secs(30));
    assert!(
        layer.breaker().would_admit(),
        "the kit's clock moves the layer's breaker"
    );
}

#[test]
fn a_force_the_kit_holds_applies_to_a_layer_built_later() {
    let kit = TestKit::new();
    let _installed = kit.install();
    kit.force_open("kit-forced");
    let layer = CircuitBreakerLayer::new("kit-forced");
    assert_eq!(layer.breaker().state(), State::ForcedOpen);
    let refused = poll_ready(
        layer
            .layer(failing_upstream())
            .oneshot(http::Request::new(())),
    );
    assert!(refused.unwrap_err().is_open());
}

#[test]
fn a_middleware_built_under_a_kit_takes_its_breakers_from_the_kit() {
    let kit = TestKit::new();
    let _installed = kit.install();
    let _group = CircuitBreakerMiddleware::group("kit-reqwest");
    let _hosts = CircuitBreakerMiddleware::per_host("kit-hosts", &Config::default(), 10).unwrap();
    assert!(kit.registry().get("kit-reqwest").is_some());
    assert!(kit
        .registry()
        .get_keyed::<String>("kit-hosts")
        .unwrap()
        .is_some());
    assert!(breakerbox::registry().get("kit-reqwest").is_none());
    assert!(breakerbox::registry()
        .get_keyed::<String>("kit-hosts")
        .unwrap()
        .is_none());
}

#[test]
fn without_a_kit_a_layer_uses_the_process_wide_registry() {
    let layer = CircuitBreakerLayer::new("kit-none");
    assert!(layer
        .breaker()
        .same_as(&breakerbox::registry().get("kit-none").unwrap()));
}
