//! The admin router answers a state change whose body it will refuse without
//! waiting for that body: `413` as soon as a declared `Content-Length` is over
//! the bound, and `408` when a body takes longer than the router's bound to
//! arrive; both change nothing. Tested over a real socket, with a client that
//! declares a body and sends less of it.
#![cfg(feature = "admin")]

#[path = "support/admin.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use breakerbox::admin::Admin;
use breakerbox::{Config, ManualClock, Registry, State};
use std::io::{Read, Write};
use std::net::TcpStream;
use support::{everything, serve, OPS};

/// How long the client waits for an answer before it gives up: far longer
/// than any bound the router holds here, so a router that waits for the body
/// shows as a test that fails, not as one that hangs.
const CLIENT_GIVES_UP: Duration = Duration::from_secs(20);

async fn setup(body_timeout: Duration) -> (Arc<Registry>, String) {
    let registry = Arc::new(Registry::with_clock(ManualClock::new()));
    registry.breaker("mail", &Config::default());
    let admin = Admin::builder(registry.clone())
        .token("ops", OPS)
        .max_body(1024)
        .body_timeout(body_timeout)
        .build()
        .unwrap();
    let url = serve(admin).await;
    (registry, url.trim_start_matches("http://").to_owned())
}

/// Sends a `POST /breakers/mail` that declares `declared` bytes of body and
/// sends `sent`, then keeps the connection open; the status line and body
/// of the answer, or `None` when none came before the client gave up.
async fn post_short(addr: &str, declared: usize, sent: &str) -> Option<String> {
    let head = format!(
        "POST /breakers/mail HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {OPS}\r\n\
         Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n{sent}"
    );
    let addr = addr.to_owned();
    // A plain blocking socket on a thread of its own, read with a deadline.
    tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(CLIENT_GIVES_UP)).unwrap();
        stream.write_all(head.as_bytes()).unwrap();
        let mut answer = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                // The client gave up: nothing came.
                Err(_) if answer.is_empty() => return None,
                Err(_) => break,
            }
            let text = String::from_utf8_lossy(&answer);
            if text
                .split_once("\r\n\r\n")
                .is_some_and(|(_, body)| body.ends_with('}'))
            {
                break;
            }
        }
        Some(String::from_utf8_lossy(&answer).into_owned())
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_declared_length_over_the_bound_is_413_before_any_byte_of_the_body() {
    let (registry, addr) = setup(Duration::from_secs(60)).await;
    let before = everything(&registry);
    let answer = post_short(&addr, 100_000, "").await;
    let answer = answer.expect("no answer: the router waited for a body it refuses");
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("\"error\":\"payload_too_large\""),
        "{answer}"
    );
    assert!(answer.contains("declares 100000 bytes"), "{answer}");
    assert_eq!(everything(&registry), before, "a refusal changes nothing");
    assert_eq!(registry.get("mail").unwrap().state(), State::Closed);
}

#[tokio::test]
async fn a_body_slower_than_the_bound_is_408_and_changes_nothing() {
    let (registry, addr) = setup(Duration::from_millis(200)).await;
    let before = everything(&registry);
    // Within the size bound, but only its first bytes ever come.
    let answer = post_short(&addr, 40, "{\"action\": \"force_").await;
    let answer = answer.expect("no answer: the router waited for the body without bound");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"error\":\"request_timeout\""), "{answer}");
    assert_eq!(everything(&registry), before, "a refusal changes nothing");
    assert_eq!(registry.get("mail").unwrap().state(), State::Closed);
}

#[tokio::test]
async fn a_whole_body_within_both_bounds_is_acted_on() {
    let (registry, addr) = setup(Duration::from_secs(60)).await;
    let body = "{\"action\": \"force_open\"}";
    let answer = post_short(&addr, body.len(), body).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(registry.get("mail").unwrap().state(), State::ForcedOpen);
}
