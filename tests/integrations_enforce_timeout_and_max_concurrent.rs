//! `timeout_ms` and `max_concurrent` of a group that a tower layer or a
//! reqwest middleware guards are enforced by the layer: a call past the
//! deadline is dropped, counted as a timeout (a failure) and answered with
//! `TimedOut`; a call over the cap is refused with `BulkheadFull` and never
//! reaches the service. Also when a config file sets them.

use std::convert::Infallible;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use breakerbox::config_file::Settings;
use breakerbox::reqwest::{circuit_open, CircuitBreakerMiddleware};
use breakerbox::tower::{BreakerError, CircuitBreakerLayer, Errors};
use breakerbox::{Config, OpenReason, Registry, TimedOut};
use reqwest_middleware::ClientBuilder;
use tower::{service_fn, Layer, Service, ServiceExt};

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

const INVENTORY: Config = Config::DEFAULT;
breakerbox::declare_group!("enforce-inventory", INVENTORY);

/// A server on 127.0.0.1 that reads each request and never answers, counting
/// the requests it got.
fn silent_upstream() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let counted = Arc::clone(&counted);
            std::thread::spawn(move || {
                let mut buffer = [0u8; 1024];
                let mut request = Vec::new();
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                counted.fetch_add(1, Ordering::SeqCst);
                // Never answers; returns when the client hangs up.
                while matches!(stream.read(&mut buffer), Ok(n) if n > 0) {}
                let _ = stream.flush();
            });
        }
    });
    (addr, seen)
}

fn client(middleware: CircuitBreakerMiddleware) -> reqwest_middleware::ClientWithMiddleware {
    // The client's own timeout is far longer than the group's deadline.
    let inner = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    ClientBuilder::new(inner).with(middleware).build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_middleware_group_given_timeout_ms_by_a_file_times_out_a_silent_upstream() {
    let file = "[groups.enforce-inventory]\ntimeout_ms = \"200ms\"\nthreshold = 1\n";
    Settings::from_toml_str(file, "app.toml")
        .unwrap()
        .apply(&REGISTRY)
        .unwrap();
    let breaker = REGISTRY.breaker("enforce-inventory", &INVENTORY);
    assert_eq!(breaker.config().timeout(), Some(Duration::from_millis(200)));
    let (addr, seen) = silent_upstream();
    let client = client(CircuitBreakerMiddleware::for_breaker(&breaker));

    let error = client
        .get(format!("http://{addr}/items"))
        .send()
        .await
        .expect_err("the upstream never answers");
    let reqwest_middleware::Error::Middleware(error) = error else {
        panic!("not the middleware's error: {error}");
    };
    let late = error.downcast_ref::<TimedOut>().expect("a timeout");
    assert_eq!(late.after(), Duration::from_millis(200));
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    let metrics = breaker.metrics();
    assert_eq!(metrics.timeouts, 1);
    assert_eq!(metrics.failures, 1);
    // A timeout is a failure: `threshold = 1` opens the circuit.
    let refused = client.get(format!("http://{addr}/items")).send().await;
    assert_eq!(
        circuit_open(&refused.unwrap_err()).map(|o| o.reason()),
        Some(OpenReason::Open)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_middleware_group_with_max_concurrent_refuses_the_call_over_the_cap() {
    let config = Config::builder().max_concurrent(1).build().unwrap();
    let breaker = REGISTRY.breaker("enforce-bulkhead", &config);
    let (addr, seen) = silent_upstream();
    let client = client(CircuitBreakerMiddleware::for_breaker(&breaker));

    let first = tokio::spawn({
        let client = client.clone();
        async move { client.get(format!("http://{addr}/a")).send().await }
    });
    while seen.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    let second = client
        .get(format!("http://{addr}/b"))
        .send()
        .await
        .expect_err("over the cap");
    let open = circuit_open(&second).expect("a refusal");
    assert_eq!(open.reason(), OpenReason::BulkheadFull);
    assert_eq!(breaker.metrics().bulkhead_rejected, 1);
    first.abort();
    let _ = first.await;
    // The first call's place is freed when its request is dropped.
    assert_eq!(breaker.metrics().bulkhead_in_flight, Some(0));
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1,
        "the refused call was not sent"
    );
}

#[tokio::test(start_paused = true)]
async fn a_tower_layer_times_out_a_call_past_its_group_deadline() {
    let config = Config::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let breaker = REGISTRY.breaker("enforce-tower-timeout", &config);
    let slow = service_fn(|_: u32| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok::<_, Infallible>(7)
    });
    let service = CircuitBreakerLayer::for_breaker(&breaker)
        .classify(Errors(breakerbox::classify::EveryError))
        .layer(slow);

    let answer = service.oneshot(1).await;
    match answer {
        Err(BreakerError::TimedOut(late)) => {
            assert_eq!(late.after(), Duration::from_millis(200));
        }
        other => panic!("not a timeout: {other:?}"),
    }
    assert_eq!(breaker.metrics().timeouts, 1);
    assert_eq!(breaker.metrics().failures, 1);
}

#[tokio::test(start_paused = true)]
async fn a_tower_layer_refuses_the_call_over_its_group_bulkhead() {
    let config = Config::builder().max_concurrent(1).build().unwrap();
    let breaker = REGISTRY.breaker("enforce-tower-bulkhead", &config);
    let called = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&called);
    let slow = service_fn(move |_: u32| {
        counted.fetch_add(1, Ordering::SeqCst);
        async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok::<_, Infallible>(7)
        }
    });
    let mut service = CircuitBreakerLayer::for_breaker(&breaker)
        .classify(Errors(breakerbox::classify::EveryError))
        .layer(slow);

    let first = service.ready().await.unwrap().call(1);
    let second = service.ready().await.unwrap().call(2).await;
    match second {
        Err(BreakerError::Open(open)) => assert_eq!(open.reason(), OpenReason::BulkheadFull),
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(
        called.load(Ordering::SeqCst),
        1,
        "the refused call never ran"
    );
    assert_eq!(first.await.unwrap(), 7);
    assert_eq!(breaker.metrics().bulkhead_in_flight, Some(0));
    assert_eq!(service.oneshot(3).await.unwrap(), 7);
}
