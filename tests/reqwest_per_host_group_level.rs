//! Fifty hosts (fifty listeners on 127.0.0.1) behind one backend, each behind
//! the reqwest middleware per host: when the backend fails all of them at
//! once, the requests that reach it during the outage are bounded by the
//! group's threshold and probes, not by fifty times a key's; one failing
//! host among healthy ones leaves the others alone.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::reqwest::{circuit_open, CircuitBreakerMiddleware};
use breakerbox::{Config, OpenReason, Registry, State};
use reqwest_middleware::ClientBuilder;

/// The backend behind every host: answers `503` while `down`, else `200`;
/// counts the requests that reach it while down.
#[derive(Default)]
struct Backend {
    down: AtomicBool,
    reached_while_down: AtomicU64,
}

/// A host: a listener on 127.0.0.1 in front of `backend` (`bad`: this host
/// alone fails, whatever the backend does).
fn host(backend: Arc<Backend>, bad: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let backend = backend.clone();
            std::thread::spawn(move || {
                let mut buffer = [0u8; 1024];
                loop {
                    let mut request = Vec::new();
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let down = backend.down.load(SeqCst);
                    if down {
                        backend.reached_while_down.fetch_add(1, SeqCst);
                    }
                    let answer: &[u8] = if down || bad {
                        b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n"
                    } else {
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
                    };
                    if stream.write_all(answer).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn config(judged: bool) -> Config {
    let builder = Config::builder()
        .threshold(3)
        .open(Duration::from_secs(3_600));
    let builder = if judged {
        builder.systemic_share(0.5)
    } else {
        builder
    };
    builder.build().unwrap()
}

/// Three rounds of one request to each host while the backend is down:
/// the requests that reached it.
async fn outage(group: &str, judged: bool) -> (u64, Vec<OpenReason>) {
    let registry = Registry::new();
    let backend = Arc::new(Backend::default());
    let hosts: Vec<SocketAddr> = (0..50).map(|_| host(backend.clone(), false)).collect();
    let middleware =
        CircuitBreakerMiddleware::per_host_in(&registry, group, &config(judged), 100).unwrap();
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    // Healthy first: every host answers.
    for addr in &hosts {
        let response = client.get(format!("http://{addr}/")).send().await.unwrap();
        assert_eq!(response.status(), 200);
        response.bytes().await.unwrap();
    }
    backend.down.store(true, SeqCst);
    let mut refusals = Vec::new();
    for _ in 0..3 {
        for addr in &hosts {
            match client.get(format!("http://{addr}/")).send().await {
                Ok(response) => assert_eq!(response.status(), 503),
                Err(error) => refusals.push(circuit_open(&error).unwrap().reason()),
            }
        }
    }
    (backend.reached_while_down.load(SeqCst), refusals)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_failing_every_host_is_reached_a_thresholds_worth_not_fifty() {
    let (reached, refusals) = outage("fifty-hosts-judged", true).await;
    // Three hosts' failures, none recovering: the group's threshold.
    assert_eq!(reached, 3);
    assert_eq!(refusals.len(), 150 - 3);
    assert!(refusals.iter().all(|r| *r == OpenReason::Group));

    // Judged host by host, every host pays its own threshold.
    let (reached, _) = outage("fifty-hosts-alone", false).await;
    assert_eq!(reached, 50 * 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_failing_host_leaves_the_healthy_ones_alone() {
    let registry = Registry::new();
    let backend = Arc::new(Backend::default());
    let bad = host(backend.clone(), true);
    let healthy: Vec<SocketAddr> = (0..49).map(|_| host(backend.clone(), false)).collect();
    let middleware =
        CircuitBreakerMiddleware::per_host_in(&registry, "one-bad-host", &config(true), 100)
            .unwrap();
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    for _ in 0..5 {
        for addr in healthy.iter().chain([&bad]) {
            match client.get(format!("http://{addr}/")).send().await {
                Ok(response) => {
                    let bad_host = addr == &bad;
                    assert_eq!(response.status(), if bad_host { 503 } else { 200 });
                    response.bytes().await.unwrap();
                }
                Err(error) => {
                    assert_eq!(addr, &bad, "a healthy host refused: {error}");
                    assert_eq!(circuit_open(&error).unwrap().reason(), OpenReason::Open);
                }
            }
        }
    }
    let group = registry
        .get_keyed::<String>("one-bad-host")
        .unwrap()
        .unwrap();
    assert_eq!(group.group_breaker().unwrap().state(), State::Closed);
    assert_eq!(group.metrics().open, 1);
}
