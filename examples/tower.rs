//! Tower, axum and reqwest: `cargo run --example tower --features axum,reqwest`.
//!
//! Two real HTTP servers on 127.0.0.1. The *upstream* sells quotes and can be
//! made to fail. The *app* is an axum server whose `/price` handler calls the
//! upstream through a reqwest client with `CircuitBreakerMiddleware` (a breaker
//! per upstream host), and whose `/price` route is itself behind a
//! `CircuitBreakerLayer`. When the upstream fails, the client's breaker opens
//! and the handler answers `503` with `Retry-After` without calling it; the
//! route's own 5xx answers then open the layer, which answers `503` with
//! `Retry-After` without running the handler. When the upstream heals, one probe
//! through both closes both. The process exits non-zero if any answer differs
//! from what the timeline expects.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use breakerbox::reqwest::{circuit_open, CircuitBreakerMiddleware};
use breakerbox::tower::{CircuitBreakerLayer, Classify, HttpResponses, Verdict};
use breakerbox::{registry, Config};
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};
use tower::ServiceBuilder;

/// The client's breaker per upstream host: three failures open it for 1 s.
const UPSTREAM: Config = config(3, 1_000);
/// Idle upstream hosts the reqwest middleware keeps a breaker for.
const MAX_HOSTS: usize = 1_000;
/// The `/price` route's breaker: five 5xx answers open it for 1.2 s.
const ROUTE: Config = config(5, 1_200);

const fn config(threshold: u32, open_ms: u64) -> Config {
    match Config::builder()
        .threshold(threshold)
        .open(Duration::from_millis(open_ms))
        .build()
    {
        Ok(config) => config,
        Err(_) => panic!("a valid config"),
    }
}

// ---------------------------------------------------------------------------
// The upstream: answers `/quote`, or 500 while failing.
// ---------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Upstream {
    failing: Arc<AtomicBool>,
    hits: Arc<AtomicUsize>,
}

async fn quote(State(upstream): State<Upstream>) -> Response {
    upstream.hits.fetch_add(1, SeqCst);
    if upstream.failing.load(SeqCst) {
        (StatusCode::INTERNAL_SERVER_ERROR, "database down").into_response()
    } else {
        "42.00".into_response()
    }
}

// ---------------------------------------------------------------------------
// The app: `/price` calls the upstream through the middleware, behind the layer.
// ---------------------------------------------------------------------------

#[derive(Clone)]
struct App {
    client: ClientWithMiddleware,
    quote_url: String,
}

/// How the route's breaker judges the route's own answers: by status, as
/// [`HttpResponses`] does, but a `503 + Retry-After` the handler relays from
/// the client's refusal is the route failing, not a server asking its callers
/// to wait, so it holds nothing (`Classify::wait` keeps its default, none).
#[derive(Clone, Copy)]
struct RouteAnswers;

impl<B, E> Classify<axum::http::Response<B>, E> for RouteAnswers {
    fn classify(&self, result: Result<&axum::http::Response<B>, &E>) -> Verdict {
        HttpResponses.classify(result)
    }
}

async fn price(State(app): State<App>) -> Response {
    match app.client.get(&app.quote_url).send().await {
        Ok(r) if r.status().is_success() => {
            format!("price {}", r.text().await.unwrap_or_default()).into_response()
        }
        Ok(r) => (
            StatusCode::BAD_GATEWAY,
            format!("upstream answered {}", r.status().as_u16()),
        )
            .into_response(),
        // The client's breaker refused: 503 + Retry-After, the upstream untouched.
        Err(e) => match circuit_open(&e) {
            Some(open) => breakerbox::axum::open_response(open),
            None => (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
        },
    }
}

async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port on 127.0.0.1");
    let addr = listener.local_addr().expect("a bound address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

// ---------------------------------------------------------------------------
// The timeline.
// ---------------------------------------------------------------------------

struct Timeline {
    client: reqwest::Client,
    url: String,
    upstream: Upstream,
    /// The upstream's key (`host:port`) in the keyed group `upstream`.
    upstream_key: String,
    failed: Vec<String>,
}

impl Timeline {
    fn phase(&self, title: &str, text: &str) {
        println!("\n{title}\n  {}", text.replace('\n', "\n  "));
    }

    /// GET /price, print the answer, and check its status.
    async fn get(&mut self, expect: u16) {
        let (status, retry_after, body) = match self.client.get(&self.url).send().await {
            Ok(r) => {
                let status = r.status().as_u16();
                let retry = r
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(|s| format!("Retry-After: {s}"))
                    .unwrap_or_default();
                (status, retry, r.text().await.unwrap_or_default())
            }
            Err(e) => (0, String::new(), e.to_string()),
        };
        let states = format!(
            "route {:<9} upstream {:<9}",
            state("price"),
            upstream_breaker(&self.upstream_key).map_or("-".into(), |b| b.state().to_string())
        );
        println!(
            "  GET /price -> {status} {retry_after:<15} {body:<62} | upstream hits {:>2} | {states}",
            self.upstream.hits.load(SeqCst)
        );
        if status != expect {
            self.failed
                .push(format!("expected {expect}, got {status} ({body})"));
        }
    }
}

fn state(group: &str) -> String {
    registry()
        .get(group)
        .map_or("-".into(), |b| b.state().to_string())
}

/// The reqwest middleware's breaker for the upstream at `key` (`host:port`).
fn upstream_breaker(key: &str) -> Option<breakerbox::Breaker> {
    let hosts = registry().keyed::<String>("upstream", &UPSTREAM, MAX_HOSTS);
    hosts.expect("`upstream` has String keys").get(key)
}

#[tokio::main]
async fn main() -> ExitCode {
    match tokio::time::timeout(Duration::from_secs(30), run()).await {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(failed)) => {
            eprintln!("\nexample FAILED:\n  {}", failed.join("\n  "));
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("\nexample FAILED: it did not finish within 30 s");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Vec<String>> {
    let upstream = Upstream::default();
    let upstream_addr = serve(
        Router::new()
            .route("/quote", get(quote))
            .with_state(upstream.clone()),
    )
    .await;

    // The app's client: a breaker per upstream host, from the request URL.
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(
            CircuitBreakerMiddleware::per_host("upstream", &UPSTREAM, MAX_HOSTS)
                .expect("`upstream` has String keys"),
        )
        .build();
    let app = App {
        client,
        quote_url: format!("http://{upstream_addr}/quote"),
    };
    // The app's route, behind the `price` group's breaker; axum needs every
    // error answered, so HandleErrorLayer turns a refusal into 503 + Retry-After.
    let router = Router::new()
        .route("/price", get(price))
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(breakerbox::axum::handle_error))
                .layer(CircuitBreakerLayer::with_config("price", &ROUTE).classify(RouteAnswers)),
        )
        .with_state(app);
    let app_addr = serve(router).await;

    println!("breaker with tower, axum and reqwest: two real HTTP servers on 127.0.0.1");
    println!("  upstream  {upstream_addr}: GET /quote (can be made to fail)");
    println!("  app       {app_addr}: GET /price calls the upstream through reqwest");
    println!();
    println!("  route breaker     group `price`, a CircuitBreakerLayer on /price: threshold 5, open 1.2 s");
    println!("  upstream breaker  key `{upstream_addr}` of the keyed group `upstream`, the reqwest middleware per host: threshold 3, open 1 s");

    let mut t = Timeline {
        client: reqwest::Client::new(),
        url: format!("http://{app_addr}/price"),
        upstream: upstream.clone(),
        upstream_key: upstream_addr.to_string(),
        failed: Vec::new(),
    };

    t.phase("1. healthy", "Every request reaches the upstream.");
    t.get(200).await;
    t.get(200).await;

    t.phase(
        "2. the upstream fails",
        "It answers 500, the handler 502. The third failure opens the upstream breaker:\n\
         the handler then answers 503 + Retry-After from the client's refusal, and the\n\
         upstream sees no request. Those 5xx answers are the route's failures too: the\n\
         fifth opens the route's breaker, and the layer answers 503 + Retry-After itself,\n\
         without running the handler.",
    );
    upstream.failing.store(true, SeqCst);
    for expect in [502, 502, 502, 503, 503, 503, 503] {
        t.get(expect).await;
    }

    t.phase(
        "3. the upstream heals",
        "After both open times have passed, one request is the probe of both breakers:\n\
         the route's probe runs the handler, whose call is the upstream's probe. It\n\
         succeeds, and both close.",
    );
    upstream.failing.store(false, SeqCst);
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    t.get(200).await;
    t.get(200).await;

    println!("\nbreakers at the end:");
    let upstream_label = format!("upstream {}", t.upstream_key);
    for (group, breaker) in [
        ("price", registry().get("price")),
        (upstream_label.as_str(), upstream_breaker(&t.upstream_key)),
    ] {
        let m = breaker.expect("the group was used").metrics();
        println!(
            "  {group:<26} {:<7} successes {:>2}  failures {:>2}  rejected {:>2}  opened {}  probes ok {}",
            m.state.to_string(),
            m.successes,
            m.failures,
            m.rejected,
            m.times_opened,
            m.probes_succeeded
        );
        if m.times_opened != 1 || m.probes_succeeded != 1 || m.rejected == 0 {
            t.failed.push(format!(
                "`{group}` did not open, refuse and close once: {m:?}"
            ));
        }
    }
    if t.failed.is_empty() {
        Ok(())
    } else {
        Err(t.failed)
    }
}
