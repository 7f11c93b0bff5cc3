//! The upstream the demo calls: a small HTTP server on an ephemeral port of
//! 127.0.0.1 whose health the script switches (for good, or for the next few
//! requests), and which counts every request, in all and per path.
//! It also serves the breakers' metrics at `GET /metrics`, in the Prometheus text
//! format; a scrape is neither counted nor failed.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::observe::prometheus::prometheus_client::encoding::prometheus_text;
use breakerbox::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// A running server. It lives until the process ends.
pub struct Upstream {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    failing: AtomicBool,
    /// Requests still to fail before the server answers normally again.
    fail_next: AtomicU64,
    /// `GET /quotes/..` requests still to answer `429` with `retry-after-ms`.
    limit_next: AtomicU64,
    requests: AtomicU64,
    /// Requests received, per path.
    per_path: Mutex<HashMap<String, u64>>,
    /// What `GET /metrics` encodes at every scrape.
    metrics: Metrics,
}

impl Upstream {
    /// Binds an ephemeral port and serves in the background, healthy, with
    /// `metrics` at `/metrics`.
    pub async fn start(metrics: Metrics) -> std::io::Result<Upstream> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            failing: AtomicBool::new(false),
            fail_next: AtomicU64::new(0),
            limit_next: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            per_path: Mutex::new(HashMap::new()),
            metrics,
        });
        tokio::spawn(accept(listener, Arc::clone(&shared)));
        Ok(Upstream { addr, shared })
    }

    /// The next `n` requests for a quote get a `429 Too Many Requests` that
    /// asks every caller to wait [`QUOTA_RESET`] (`retry-after-ms`).
    pub fn limit_next(&self, n: u64) {
        self.shared.limit_next.store(n, SeqCst);
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// From now on every request gets a 500 (`true`) or is served normally (`false`).
    pub fn set_failing(&self, failing: bool) {
        self.shared.failing.store(failing, SeqCst);
    }

    /// The next `n` requests get a 500, then the server answers as before
    /// (a blip: a restart, a failover).
    pub fn fail_next(&self, n: u64) {
        self.shared.fail_next.store(n, SeqCst);
    }

    /// `http://127.0.0.1:PORT/metrics`.
    pub fn metrics_url(&self) -> String {
        format!("{}/metrics", self.base_url())
    }

    /// Requests received so far, scrapes of `/metrics` left out.
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(SeqCst)
    }

    /// Requests received so far for `path` (without its query).
    pub fn requests_to(&self, path: &str) -> u64 {
        let per_path = self.shared.per_path.lock().unwrap();
        per_path.get(path).copied().unwrap_or(0)
    }
}

async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let tcp = match listener.accept().await {
            Ok((tcp, _)) => tcp,
            Err(_) => {
                // Out of file descriptors or similar: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let response = respond(&shared, &request);
                async move { Ok::<_, Infallible>(response) }
            });
            // A client that hangs up mid-request is not the demo's concern.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service)
                .await;
        });
    }
}

/// How long the quote API's `429` asks every caller to wait.
pub const QUOTA_RESET: Duration = Duration::from_millis(200);

/// `GET /search?q=WORD`, `GET /users/ID`, `GET /prices/SKU`, `GET /quotes/SYM`
/// and `GET /stock/SKU`; a 500 for everything while failing (or still to fail).
/// `GET /metrics` is the exposition, whatever the upstream's health.
fn respond(shared: &Shared, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    if request.method() == Method::GET && request.uri().path() == "/metrics" {
        return exposition(&shared.metrics);
    }
    let path = request.uri().path();
    shared.requests.fetch_add(1, SeqCst);
    *shared
        .per_path
        .lock()
        .unwrap()
        .entry(path.to_owned())
        .or_default() += 1;
    let blip = shared
        .fail_next
        .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
        .is_ok();
    if blip || shared.failing.load(SeqCst) {
        return reply(StatusCode::INTERNAL_SERVER_ERROR, "database unreachable");
    }
    if path == "/search" {
        let query = request.uri().query().unwrap_or("");
        let word = query.strip_prefix("q=").unwrap_or("");
        let hits = 3 + word.len() % 5;
        return reply(StatusCode::OK, &hits.to_string());
    }
    if let Some(sku) = path.strip_prefix("/prices/") {
        let cents = 100 * (1 + sku.len() as u64) + 99;
        return reply(StatusCode::OK, &cents.to_string());
    }
    if let Some(symbol) = path.strip_prefix("/quotes/") {
        let limited = shared
            .limit_next
            .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if limited {
            let mut response = reply(StatusCode::TOO_MANY_REQUESTS, "quota spent");
            let wait = QUOTA_RESET.as_millis().to_string();
            response.headers_mut().insert(
                "retry-after-ms",
                HeaderValue::from_str(&wait).expect("digits"),
            );
            return response;
        }
        return reply(StatusCode::OK, &(100 + symbol.len() * 7).to_string());
    }
    if let Some(sku) = path.strip_prefix("/stock/") {
        return reply(StatusCode::OK, &(sku.len() * 4).to_string());
    }
    match path.strip_prefix("/users/") {
        Some("1") => reply(StatusCode::OK, "Ada Lovelace"),
        Some("2") => reply(StatusCode::OK, "Grace Hopper"),
        _ => reply(StatusCode::NOT_FOUND, "no such user"),
    }
}

/// The metrics as Prometheus reads them (text format 0.0.4).
fn exposition(metrics: &Metrics) -> Response<Full<Bytes>> {
    let mut body = String::new();
    if prometheus_text::encode(&mut body, metrics).is_err() {
        return reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            "could not encode the metrics",
        );
    }
    let mut response = reply(StatusCode::OK, &body);
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(prometheus_text::CONTENT_TYPE),
    );
    response
}

fn reply(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_owned())));
    *response.status_mut() = status;
    response
}
