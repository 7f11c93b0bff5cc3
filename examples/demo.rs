//! The main demo: `cargo run --example demo`.
//!
//! A real HTTP server on 127.0.0.1 is healthy, then fails, then heals. Two client
//! functions call it, each guarded by the breaker of its group: `search` answers
//! from a cache while its circuit is open, `profile` has no fallback and returns
//! `CircuitOpen` through its own error type; `search` also ramps its traffic back
//! in after its circuit closes (`ramp_ms`). Two more retry their GETs: `price`
//! rides out a one-request blip on its retry, and a burst of `stock` calls
//! against the failing server spends its retry budget, so the calls past it end
//! at once with their own error. Last, `quote` meets a `429` that asks every
//! caller to wait: its group is held for the wait, the calls meanwhile are
//! refused at once, and none counts as a failure. The timeline shows every call, what
//! its breaker did, and the state after; the registry's table ends the run, and
//! the same figures as Prometheus scrapes them from the server's `/metrics`, and
//! the transitions a registry subscriber was told. The process exits non-zero if
//! the breakers did not open, fall back, refuse, probe, close and retry as they should,
//! if `/metrics` disagrees with the registry, or if the transitions told are not
//! the expected sequence.
//!
//! The admin router's live status page is served on 127.0.0.1 while the story
//! runs (its address is the first line printed); the demo checks it is served
//! and lists every circuit, and ends with its story unless `DEMO_HOLD_SECS=N`
//! keeps the page up N seconds more for a person to open it.

use std::fmt;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use breakerbox::observe::prometheus::prometheus_client::registry::Registry as Metrics;
use breakerbox::observe::prometheus::BreakerCollector;
use breakerbox::{
    circuit_breaker, events::Event, events::Transition, events::TransitionReason,
    events::TripCause, CircuitOpen, RetryAfterHint, State,
};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::{StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

#[path = "demo/status.rs"]
mod status;
#[path = "demo/timeline.rs"]
mod timeline;
#[path = "demo/upstream.rs"]
mod upstream;

use timeline::{Action, Burst, Timeline};
use upstream::Upstream;

// ---------------------------------------------------------------------------
// The client: four protected functions.
// ---------------------------------------------------------------------------

/// Searches the upstream. Three consecutive failures open the circuit for
/// 300 ms; while it is open, `cached` answers instead and the server is left alone.
/// The search ramp: after its circuit closes, the share of calls let through
/// rises from none to all over this many milliseconds.
const SEARCH_RAMP_MS: u64 = 600;

#[circuit_breaker(
    group = "search",
    threshold = 3,
    open_ms = 300,
    backoff = 2.0,
    ramp_ms = 600,
    fallback = cached
)]
async fn search(api: &Api, query: &str) -> Result<Results, HttpError> {
    let body = api.get(&format!("/search?q={query}")).await?;
    Ok(Results::live(query, &body))
}

/// What `search` answers while its circuit is open: results kept from earlier.
/// Same parameters, same return type; its answers never count as a success.
async fn cached(_api: &Api, query: &str) -> Result<Results, HttpError> {
    Ok(Results::cached(query))
}

/// Looks a user up. No fallback: while the circuit is open the caller gets
/// `Err(ProfileError::Unavailable(CircuitOpen))`, through `From<CircuitOpen>`.
/// A 404 says nothing about the server's health, so `server_fault` keeps it
/// from counting as a failure.
#[circuit_breaker(group = "profile", threshold = 3, open_ms = 300, is_failure = server_fault)]
async fn profile(api: &Api, id: u32) -> Result<Profile, ProfileError> {
    let name = api.get(&format!("/users/{id}")).await?;
    Ok(Profile { id, name })
}

/// Reads a price. A GET is safe to repeat, so a failure is tried once more
/// after a wait drawn from 0 to 20 ms; each attempt is one outcome.
#[circuit_breaker(
    group = "price",
    threshold = 3,
    open_ms = 300,
    retry = 1,
    idempotent = true,
    retry_delay_ms = 20
)]
async fn price(api: &Api, sku: &str) -> Result<String, HttpError> {
    let cents: u64 = api
        .get(&format!("/prices/{sku}"))
        .await?
        .trim()
        .parse()
        .unwrap_or(0);
    Ok(format!("{sku} costs {}.{:02}", cents / 100, cents % 100))
}

/// Reads a stock level, retried like `price`. Its retries share the group's
/// budget: at most 20% of first attempts plus 10 a second. Its threshold is
/// high enough that a burst leaves the circuit closed, so the budget alone
/// bounds the load its retries add.
#[circuit_breaker(
    group = "stock",
    threshold = 100,
    open_ms = 300,
    retry = 1,
    idempotent = true,
    retry_delay_ms = 5
)]
async fn stock(api: &Api, sku: &str) -> Result<String, HttpError> {
    let left = api.get(&format!("/stock/{sku}")).await?;
    Ok(format!("{} left of {sku}", left.trim()))
}

/// Reads a quote from an API with a quota: its `429` asks every caller to
/// wait (`retry-after-ms`), and that wait is no failure (`is_failure`). It
/// holds the group: every call until the wait ends is refused at once, the
/// server is not asked again, and nothing counts against the breaker. The
/// wait is longer than the retry's 50 ms cap, so the call that met it is not
/// retried: it returns its error at once.
#[circuit_breaker(
    group = "quote",
    threshold = 3,
    open_ms = 300,
    retry = 1,
    idempotent = true,
    retry_max_delay_ms = 50,
    is_failure = not_a_wait
)]
async fn quote(api: &Api, symbol: &str) -> Result<String, HttpError> {
    let cents = api.get(&format!("/quotes/{symbol}")).await?;
    Ok(format!("{symbol} at {}", cents.trim()))
}

/// A `429` asking to wait says the server is well.
fn not_a_wait(error: &HttpError) -> bool {
    !matches!(error, HttpError::Wait(_))
}

/// Calls in the burst against the failing server.
const BURST: u64 = 20;

/// Which `profile` errors count against the breaker.
fn server_fault(error: &ProfileError) -> bool {
    !matches!(error, ProfileError::NotFound)
}

// ---------------------------------------------------------------------------
// The client's types.
// ---------------------------------------------------------------------------

/// A thin HTTP/1 client for the upstream.
struct Api {
    client: Client<HttpConnector, Empty<Bytes>>,
    base: String,
}

/// Why a request failed.
#[derive(Debug)]
enum HttpError {
    Status(StatusCode),
    /// A `429` asking every caller to wait this long (`retry-after-ms`).
    Wait(Duration),
    Transport(String),
    /// The breaker refused: the request was never sent.
    Refused(CircuitOpen),
}

/// What lets the attribute hand a refusal to a caller of `price` or `stock`.
impl From<CircuitOpen> for HttpError {
    fn from(open: CircuitOpen) -> Self {
        HttpError::Refused(open)
    }
}

impl Api {
    fn new(base: String) -> Self {
        let client = Client::builder(TokioExecutor::new()).build_http();
        Api { client, base }
    }

    /// `GET path`: the body of a 2xx, or why not.
    async fn get(&self, path: &str) -> Result<String, HttpError> {
        let uri: Uri = format!("{}{path}", self.base)
            .parse()
            .map_err(|e| HttpError::Transport(format!("bad uri: {e}")))?;
        let request = self.client.get(uri);
        let response = tokio::time::timeout(Duration::from_secs(5), request)
            .await
            .map_err(|_| HttpError::Transport("timed out".to_owned()))?
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        let status = response.status();
        let wait = response
            .headers()
            .get("retry-after-ms")
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .map(Duration::from_millis);
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| HttpError::Transport(e.to_string()))?
            .to_bytes();
        match (status, wait) {
            (StatusCode::TOO_MANY_REQUESTS, Some(wait)) => return Err(HttpError::Wait(wait)),
            (status, _) if !status.is_success() => return Err(HttpError::Status(status)),
            _ => {}
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::Status(status) => write!(f, "HTTP {status}"),
            HttpError::Wait(wait) => write!(f, "HTTP 429, wait {} ms", wait.as_millis()),
            HttpError::Transport(why) => write!(f, "transport: {why}"),
            HttpError::Refused(open) => write!(f, "CircuitOpen: {open}"),
        }
    }
}

impl std::error::Error for HttpError {}

/// The server's wait, for the retry and the hold.
impl RetryAfterHint for HttpError {
    fn retry_after(&self) -> Option<Duration> {
        match self {
            HttpError::Wait(wait) => Some(*wait),
            _ => None,
        }
    }
}

/// Search results, and where they came from.
struct Results {
    query: String,
    hits: usize,
    from_cache: bool,
}

impl Results {
    fn live(query: &str, body: &str) -> Self {
        Results {
            query: query.to_owned(),
            hits: body.trim().parse().unwrap_or(0),
            from_cache: false,
        }
    }

    fn cached(query: &str) -> Self {
        Results {
            query: query.to_owned(),
            hits: 2,
            from_cache: true,
        }
    }
}

impl fmt::Display for Results {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = if self.from_cache { "cache" } else { "live" };
        write!(f, "{} hits for {:?} ({source})", self.hits, self.query)
    }
}

/// A user profile.
struct Profile {
    id: u32,
    name: String,
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "user {}: {}", self.id, self.name)
    }
}

/// Why `profile` gave no profile.
#[derive(Debug)]
enum ProfileError {
    NotFound,
    Upstream(HttpError),
    /// The breaker refused: the request was never sent.
    Unavailable(CircuitOpen),
}

impl From<HttpError> for ProfileError {
    fn from(error: HttpError) -> Self {
        match error {
            HttpError::Status(StatusCode::NOT_FOUND) => ProfileError::NotFound,
            other => ProfileError::Upstream(other),
        }
    }
}

/// What lets the attribute hand a refusal to a caller of `profile`.
impl From<CircuitOpen> for ProfileError {
    fn from(open: CircuitOpen) -> Self {
        ProfileError::Unavailable(open)
    }
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileError::NotFound => f.write_str("HTTP 404 Not Found"),
            ProfileError::Upstream(error) => error.fmt(f),
            ProfileError::Unavailable(open) => match open.retry_after() {
                Some(left) => write!(f, "CircuitOpen, retry in {} ms", left.as_millis()),
                None => write!(f, "CircuitOpen: {open}"),
            },
        }
    }
}

impl std::error::Error for ProfileError {}

// ---------------------------------------------------------------------------
// The script.
// ---------------------------------------------------------------------------

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // Configuration per environment, loaded as any program would: the file
    // `BREAKER_CONFIG` names and the `BREAKER_` variables. A bad one stops the
    // start, naming the file or the variable and the key.
    match breakerbox::config_file::init() {
        Ok(applied) => {
            for (group, source) in &applied.undeclared {
                eprintln!("warning: the configuration names group `{group}` ({source}), which no code declares");
            }
        }
        Err(refused) => {
            eprintln!("demo refused to start: {refused}");
            return ExitCode::from(2);
        }
    }
    // The admin router's live status page, served while the story runs.
    let hold = match status::StatusPage::hold() {
        Ok(hold) => hold,
        Err(refused) => {
            eprintln!("demo refused to start: {refused}");
            return ExitCode::from(2);
        }
    };
    let page = match status::StatusPage::start().await {
        Ok(page) => page,
        Err(failed) => {
            eprintln!("demo FAILED: {failed}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "status page at {}/ (set {}=60 to keep it up after the story)",
        page.url(),
        status::HOLD_VAR
    );
    match tokio::time::timeout(Duration::from_secs(30), run()).await {
        Ok(Ok(())) => match check_status_page(&page).await {
            Ok(()) if hold.is_zero() => ExitCode::SUCCESS,
            Ok(()) => {
                println!(
                    "\nthe status page stays up at {}/ for {} s ({})",
                    page.url(),
                    hold.as_secs(),
                    status::HOLD_VAR
                );
                tokio::time::sleep(hold).await;
                ExitCode::SUCCESS
            }
            Err(failed) => {
                eprintln!("\ndemo FAILED: {failed}");
                ExitCode::FAILURE
            }
        },
        Ok(Err(failed)) => {
            eprintln!("\ndemo FAILED: {failed}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("\ndemo FAILED: it did not finish within 30 s");
            ExitCode::FAILURE
        }
    }
}

/// Proves the status page is served and lists every group, as its JSON says.
async fn check_status_page(page: &status::StatusPage) -> Result<(), String> {
    let api = Api::new(page.url().to_owned());
    let html = (api.get("/").await).map_err(|e| format!("could not load the status page: {e}"))?;
    if !html.starts_with("<!doctype html>") {
        return Err("the status page is not an HTML document".to_owned());
    }
    let listed = (api.get("/breakers").await)
        .map_err(|e| format!("could not read the status page's /breakers: {e}"))?;
    for group in ["\"search\"", "\"profile\"", "\"price\"", "\"stock\""] {
        if !listed.contains(group) {
            return Err(format!("the status page's /breakers does not list {group}"));
        }
    }
    println!("the status page is served and lists every circuit.");
    Ok(())
}

async fn run() -> Result<(), String> {
    // Every transition of every breaker, as a subscriber is told it.
    let told = Arc::new(Mutex::new(Vec::<Transition>::new()));
    let sink = told.clone();
    let _subscription = breakerbox::registry().subscribe(move |event: &Event| {
        if let Event::Transition(t) = event {
            sink.lock().unwrap().push(*t);
        }
    });
    // Every breaker of the process-wide registry, read at each scrape.
    let mut metrics = Metrics::default();
    metrics.register_collector(Box::new(BreakerCollector::new(breakerbox::registry())));
    let upstream = Upstream::start(metrics)
        .await
        .map_err(|e| format!("could not start the server: {e}"))?;
    let api = Api::new(upstream.base_url());

    println!("breaker demo: a real HTTP server, four protected client functions, one timeline");
    println!("server listening on {}", upstream.base_url());
    println!("breaker metrics at {}", upstream.metrics_url());
    println!();
    println!("  search   threshold 3, open 300 ms, fallback `cached` (answers from a cache),");
    println!(
        "           ramp 600 ms (after a close, the share let through rises from none to all)"
    );
    println!("  profile  threshold 3, open 300 ms, no fallback (callers get CircuitOpen);");
    println!("           a 404 is ignored: it says nothing about the server's health");
    println!("  price    threshold 3, retry 1 (a GET, idempotent), waiting 0 to 20 ms first");
    println!("  stock    threshold 100, retry 1 (idempotent); retries share a budget of 20% of");
    println!("           first attempts + 10 a second (it starts with 10)");
    println!("  quote    threshold 3, retry 1 capped at 50 ms; a 429 asking to wait is no failure");
    println!();
    println!("  breaker did: ran      = closed: the call went to the server");
    println!("               fallback = open: the call never left the process, `cached` answered");
    println!("               refused  = open: the call never left the process, the caller got CircuitOpen");
    println!("               probe    = half-open: this one call tests whether the server healed");
    println!(
        "               ramping  = closed, ramping: not this call's turn yet, `cached` answered"
    );
    println!("               retried  = closed: the call failed, and was tried again");
    println!("               budget spent = closed: the call failed, the retry budget allowed no");
    println!("                          retry, and the call ended at once with its own error");
    println!(
        "               held     = the server said wait: the group is held, no failure counts"
    );
    println!("               held back = held: the call never left the process, the caller got CircuitOpen");

    let mut t = Timeline::new(&upstream);

    t.phase(
        "1. healthy",
        "Every call reaches the server; the breakers stay closed.",
    );
    t.call("search(\"rust\")", "search", search(&api, "rust"))
        .await;
    t.call("profile(1)", "profile", profile(&api, 1)).await;
    t.call("profile(7)", "profile", profile(&api, 7)).await;
    t.call("search(\"tokio\")", "search", search(&api, "tokio"))
        .await;

    t.phase(
        "2. the server fails",
        "Every request now gets a 500. The third consecutive failure opens a circuit;\n\
         after that `search` answers from its cache and `profile` is refused, and the\n\
         server sees no request from either.",
    );
    upstream.set_failing(true);
    for query in ["rust", "tokio", "hyper", "axum", "serde"] {
        let label = format!("search({query:?})");
        t.call(&label, "search", search(&api, query)).await;
    }
    for id in [1, 2, 1, 2] {
        let label = format!("profile({id})");
        t.call(&label, "profile", profile(&api, id)).await;
    }

    t.phase(
        "3. still failing when the open time is up",
        "The next call after the open time is a probe. It fails, so the circuit opens\n\
         again, for longer (backoff 2x).",
    );
    t.wait(open_time_left(), "until a probe may go").await;
    t.call("search(\"rust\")", "search", search(&api, "rust"))
        .await;
    t.call("profile(1)", "profile", profile(&api, 1)).await;

    t.phase(
        "4. the server heals, the circuits are still open",
        "The breakers cannot know yet: they keep the server out of the loop until the\n\
         open time is up.",
    );
    upstream.set_failing(false);
    t.note("the server is healthy again");
    t.call("search(\"rust\")", "search", search(&api, "rust"))
        .await;
    t.call("profile(2)", "profile", profile(&api, 2)).await;

    t.phase(
        "5. recovery",
        "Once the open time is up, one probe per circuit goes through, succeeds, and\n\
         closes it; calls flow again.",
    );
    t.wait(open_time_left(), "until a probe may go").await;
    t.call("search(\"rust\")", "search", search(&api, "rust"))
        .await;
    t.call("profile(2)", "profile", profile(&api, 2)).await;
    t.call("search(\"serde\")", "search", search(&api, "serde"))
        .await;
    t.call("profile(1)", "profile", profile(&api, 1)).await;

    t.phase(
        "6. the ramp",
        "`search` closed with a ramp: the share of its calls let through rises linearly from\n\
         none at the close to all of them 600 ms later, so a server that has just come back\n\
         is not handed the full load at once. A call whose turn has not come is answered by\n\
         the fallback at once; which calls go is decided by a credit, not a random draw.",
    );
    for query in [
        "rust", "tokio", "hyper", "axum", "serde", "tower", "mio", "bytes",
    ] {
        t.wait(
            Duration::from_millis(SEARCH_RAMP_MS / 8),
            "the ramp goes on",
        )
        .await;
        let label = format!("search({query:?})");
        t.call(&label, "search", search(&api, query)).await;
    }
    t.wait(
        Duration::from_millis(SEARCH_RAMP_MS / 4),
        "past the ramp's end",
    )
    .await;
    t.call("search(\"rust\")", "search", search(&api, "rust"))
        .await;

    t.phase(
        "7. a blip, ridden out by a retry",
        "The server fails the next request only. `price`'s first attempt gets the 500, its\n\
         retry (after a jittered wait) succeeds: the caller sees the price, the breaker\n\
         counted one failure and one success.",
    );
    upstream.fail_next(1);
    t.note("the server fails its next request, then heals");
    t.call("price(\"A-1\")", "price", price(&api, "A-1")).await;

    t.phase(
        "8. a burst against a failing server: the retry budget runs out",
        "The server fails every request again, and 20 `stock` calls arrive at once. Each\n\
         failure asks for its retry, and the budget holds 10 + 20% of 20 first attempts:\n\
         14 get it, the other 6 end at once with their own error. The server receives\n\
         34 requests instead of the 40 that retries without a budget would send.",
    );
    upstream.set_failing(true);
    let started = Instant::now();
    let client = &api;
    let calls = (1..=BURST)
        .map(|n| {
            let sku = format!("sku-{n:02}");
            (
                format!("/stock/{sku}"),
                async move { stock(client, &sku).await },
            )
        })
        .collect();
    let burst = t
        .burst("20 x stock(\"sku-NN\") at once", "stock", calls)
        .await;
    let burst_took = started.elapsed();
    upstream.set_failing(false);
    t.note("the server is healthy again");
    let stock_metrics = breakerbox::registry().get("stock").map(|b| b.metrics());
    if let Some(m) = &stock_metrics {
        println!(
            "\n   stock's metrics: retries {}, retries_budget_exhausted {}; the server received\n   \
             {} requests for {BURST} calls",
            m.retries, m.retries_budget_exhausted, burst.server_requests
        );
    }

    t.phase(
        "9. the server says wait: a hold",
        "The quote API's quota is spent: it answers 429 with `retry-after-ms: 200`. That is\n\
         no failure: the group is held for the wait (plus a spread of up to a tenth), every\n\
         call meanwhile is refused at once without asking the server, and the first call\n\
         after it goes through. The wait is past the retry's 50 ms cap: no retry waits it out.",
    );
    upstream.limit_next(1);
    t.note("the quote API's quota is spent for 200 ms");
    for n in 0..3 {
        let label = if n == 0 {
            "quote(\"BBX\")"
        } else {
            "quote(\"RST\")"
        };
        let symbol = if n == 0 { "BBX" } else { "RST" };
        t.call(label, "quote", quote(&api, symbol)).await;
    }
    t.wait(hold_time_left(), "until the hold ends").await;
    t.call("quote(\"RST\")", "quote", quote(&api, "RST")).await;

    Timeline::rule("the registry: breakerbox::registry().snapshot()");
    println!();
    print!("{}", breakerbox::registry().snapshot());

    Timeline::rule("the same, scraped: GET /metrics (state, calls, probes, openings, retries)");
    println!();
    let exposition = api
        .get("/metrics")
        .await
        .map_err(|e| format!("could not scrape /metrics: {e}"))?;
    for line in exposition.lines().filter(|l| shown(l)) {
        println!("{line}");
    }

    Timeline::rule("the transitions a subscriber was told: breakerbox::registry().subscribe(..)");
    println!();
    let told = told.lock().unwrap().clone();
    for transition in &told {
        println!("{transition}");
    }

    check(&t, &upstream, &burst)?;
    check_retries(&t, &burst, burst_took)?;
    check_hold(&t)?;
    check_exposition(&exposition)?;
    check_transitions(&told)
}

/// Proves the subscriber was told each circuit's story, in order: a trip, a
/// probe that failed, a probe that succeeded.
fn check_transitions(told: &[Transition]) -> Result<(), String> {
    use State::*;
    let expected = [
        (
            Closed,
            Open,
            TransitionReason::Tripped(TripCause::ConsecutiveFailures),
        ),
        (Open, HalfOpen, TransitionReason::OpenElapsed),
        (HalfOpen, Open, TransitionReason::ProbeFailed),
        (Open, HalfOpen, TransitionReason::OpenElapsed),
        (HalfOpen, Closed, TransitionReason::ProbesSucceeded),
    ];
    let mut failed = Vec::new();
    for group in ["search", "profile"] {
        let seen: Vec<_> = told
            .iter()
            .filter(|t| t.group == group)
            .map(|t| (t.from, t.to, t.reason))
            .collect();
        if seen != expected {
            failed.push(format!(
                "`{group}` was told {seen:?}, expected {expected:?}"
            ));
        }
        let generations: Vec<_> = told
            .iter()
            .filter(|t| t.group == group)
            .map(|t| t.generation)
            .collect();
        if generations != [1, 2, 3, 4, 5] {
            failed.push(format!(
                "`{group}`: generations {generations:?}, expected 1 to 5"
            ));
        }
    }
    if failed.is_empty() {
        println!("\nthe subscriber was told both circuits' transitions, in order.");
        Ok(())
    } else {
        Err(format!(
            "wrong transitions told:\n  - {}",
            failed.join("\n  - ")
        ))
    }
}

/// The exposition lines the demo prints: the state each breaker is in, its calls,
/// probes, openings and retries (the full exposition has a dozen families).
fn shown(line: &str) -> bool {
    (line.starts_with("breaker_state{") && line.ends_with(" 1"))
        || [
            "breaker_calls_total{",
            "breaker_probes_total{",
            "breaker_opened_total{",
            "breaker_retries_total{",
            "breaker_retries_budget_exhausted_total{",
        ]
        .iter()
        .any(|family| line.starts_with(family))
}

/// Proves `/metrics` says what the registry says (nothing ran since the scrape).
fn check_exposition(exposition: &str) -> Result<(), String> {
    let mut missing = Vec::new();
    for m in breakerbox::registry().snapshot().iter() {
        let name = m.group;
        let state = m.state.as_str().replace('-', "_");
        let expected = [
            format!("breaker_state{{name=\"{name}\",state=\"{state}\"}} 1"),
            format!(
                "breaker_calls_total{{name=\"{name}\",kind=\"successful\"}} {}",
                m.successes
            ),
            format!(
                "breaker_calls_total{{name=\"{name}\",kind=\"failed\"}} {}",
                m.failures
            ),
            format!(
                "breaker_calls_total{{name=\"{name}\",kind=\"ignored\"}} {}",
                m.ignored
            ),
            format!(
                "breaker_calls_total{{name=\"{name}\",kind=\"not_permitted\"}} {}",
                m.rejected
            ),
            format!(
                "breaker_probes_total{{name=\"{name}\",kind=\"successful\"}} {}",
                m.probes_succeeded
            ),
            format!(
                "breaker_probes_total{{name=\"{name}\",kind=\"failed\"}} {}",
                m.probes_failed
            ),
            format!("breaker_opened_total{{name=\"{name}\"}} {}", m.times_opened),
            format!("breaker_retries_total{{name=\"{name}\"}} {}", m.retries),
            format!(
                "breaker_retries_budget_exhausted_total{{name=\"{name}\"}} {}",
                m.retries_budget_exhausted
            ),
        ];
        missing.extend(
            expected
                .into_iter()
                .filter(|line| !exposition.lines().any(|l| l == line)),
        );
    }
    if missing.is_empty() {
        println!("\n/metrics agrees with the registry, series by series.");
        Ok(())
    } else {
        Err(format!(
            "/metrics disagrees with the registry; missing:\n  - {}",
            missing.join("\n  - ")
        ))
    }
}

/// The time `quote`'s hold has left, plus the margin of [`open_time_left`].
fn hold_time_left() -> Duration {
    breakerbox::registry()
        .get("quote")
        .and_then(|b| b.held())
        .map_or(Duration::ZERO, |held| held.remaining)
        + Duration::from_millis(15)
}

/// The longest time any breaker still refuses for, plus a margin: the sleep never
/// ends early, but a refusal may be judged on a coarse clock that lags by one
/// kernel tick (up to 10 ms), so waiting exactly would risk one more refusal.
fn open_time_left() -> Duration {
    let left = breakerbox::registry()
        .snapshot()
        .iter()
        .filter_map(|m| m.retry_after)
        .max()
        .unwrap_or_default();
    left + Duration::from_millis(40)
}

/// How many calls in a row failed up to the call that first opened the circuit
/// (ignored errors neither count nor break the run), or `None` if it never opened.
fn consecutive_failures_before_opening(steps: &[&timeline::Step]) -> Option<usize> {
    let opening = steps
        .iter()
        .position(|s| s.state == breakerbox::State::Open)?;
    let run = steps[..=opening]
        .iter()
        .rev()
        .filter(|s| s.action != Action::Ignored)
        .take_while(|s| s.action == Action::Ran && !s.ok)
        .count();
    Some(run)
}

/// Proves the run showed what it claims, from the breakers' own metrics.
fn check(t: &Timeline<'_>, upstream: &Upstream, burst: &Burst) -> Result<(), String> {
    let snapshot = breakerbox::registry().snapshot();
    let mut failed = Vec::new();
    for (group, refusal) in [("search", Action::Fallback), ("profile", Action::Refused)] {
        let Some(m) = snapshot.group(group) else {
            failed.push(format!("`{group}` has no breaker in the registry"));
            continue;
        };
        let steps = || t.steps.iter().filter(|s| s.group == group);
        let mut expect = |ok: bool, what: String| {
            if !ok {
                failed.push(format!("`{group}`: {what}"));
            }
        };
        expect(
            m.times_opened >= 2,
            format!(
                "opened {} times, expected at least 2 (a trip and a failed probe)",
                m.times_opened
            ),
        );
        expect(
            m.rejected >= 2,
            format!("refused {} calls, expected at least 2", m.rejected),
        );
        expect(
            steps().any(|s| s.action == refusal),
            format!("no call ended as `{refusal:?}`"),
        );
        expect(
            m.probes_failed >= 1,
            format!("{} probes failed, expected at least 1", m.probes_failed),
        );
        expect(
            m.probes_succeeded >= 1,
            format!(
                "{} probes succeeded, expected at least 1",
                m.probes_succeeded
            ),
        );
        expect(
            m.state == breakerbox::State::Closed,
            format!("ended {}, expected closed", m.state.as_str()),
        );
        if group == "search" {
            let ramped = steps().filter(|s| s.action == Action::Ramped).count() as u64;
            expect(
                ramped >= 1 && m.ramp_refused == ramped,
                format!(
                    "{ramped} calls shown as ramping, {} refused by the ramp: expected the \
                     same, at least one (the call right after the close)",
                    m.ramp_refused
                ),
            );
            expect(
                steps().next_back().is_some_and(|s| s.action == Action::Ran),
                "the call after the ramp's end did not run".to_owned(),
            );
        }
        let repeated = steps().filter(|s| s.server_requests > 1).count();
        expect(
            repeated == 0,
            format!("{repeated} calls sent more than one request, but `{group}` does not retry"),
        );
        let leaked: u64 = steps()
            .filter(|s| !s.action.admitted())
            .map(|s| s.server_requests)
            .sum();
        expect(
            leaked == 0,
            format!("the server saw {leaked} requests from refused calls, expected none"),
        );
        let live_successes = steps().filter(|s| s.action.admitted() && s.ok).count() as u64;
        expect(
            m.successes == live_successes,
            format!(
                "counted {} successes, but {live_successes} calls reached the server and \
                 succeeded (a fallback must never count as a success)",
                m.successes
            ),
        );
        let config = breakerbox::registry().get(group).map(|b| *b.config());
        expect(
            config.is_some_and(|c| c.threshold() == 3 && c.open() == Duration::from_millis(300)),
            "runs with another config than the timeline's header says (threshold 3, open 300 ms)"
                .to_owned(),
        );
        let group_steps: Vec<_> = steps().collect();
        let tripped = consecutive_failures_before_opening(&group_steps);
        expect(
            tripped == Some(3),
            format!("opened after {tripped:?} consecutive failures, expected Some(3)"),
        );
    }
    let admitted = t.steps.iter().filter(|s| s.action.admitted()).count() as u64;
    let attempts = t.steps.iter().map(|s| s.attempts).sum::<u64>() + burst.attempts;
    if upstream.requests() != attempts {
        failed.push(format!(
            "the server saw {} requests, but the breakers let {attempts} attempts through",
            upstream.requests()
        ));
    }
    if failed.is_empty() {
        println!(
            "\nchecks passed: both circuits opened on the 3rd failure, kept the server out while\n\
             open (search fell back, profile was refused), probed, and closed again; search\n\
             ramped its traffic back in; the server saw exactly the {attempts} attempts the\n\
             breakers let through ({admitted} calls one by one, then a burst)."
        );
        Ok(())
    } else {
        Err(format!(
            "the breakers did not behave as expected:\n  - {}",
            failed.join("\n  - ")
        ))
    }
}

/// Proves `quote`'s 429 held the group: one hold, the calls meanwhile refused
/// without a request, none counted as a failure, and the call after the wait
/// answered by the server.
fn check_hold(t: &Timeline<'_>) -> Result<(), String> {
    let Some(m) = breakerbox::registry().get("quote").map(|b| b.metrics()) else {
        return Err("`quote` has no breaker in the registry".to_owned());
    };
    let actions: Vec<_> = t
        .steps
        .iter()
        .filter(|s| s.group == "quote")
        .map(|s| (s.action, s.server_requests, s.ok))
        .collect();
    let expected = [
        (Action::Held, 1, false),
        (Action::HeldBack, 0, false),
        (Action::HeldBack, 0, false),
        (Action::Ran, 1, true),
    ];
    let mut failed = Vec::new();
    if actions != expected {
        failed.push(format!("calls went {actions:?}, expected {expected:?}"));
    }
    if (m.holds.group, m.failures, m.retries, m.state) != (1, 0, 0, State::Closed) {
        failed.push(format!(
            "group holds {}, failures {}, retries {}, {}: expected one hold of the group, no \
             failure, no retry, closed",
            m.holds.group,
            m.failures,
            m.retries,
            m.state.as_str()
        ));
    }
    if failed.is_empty() {
        println!(
            "quote's 429 held the group: the two calls in its wait never reached the server,\n\
             nothing counted as a failure, and the call after the wait went through."
        );
        Ok(())
    } else {
        Err(format!(
            "the hold went wrong:
  - {}",
            failed.join(
                "
  - "
            )
        ))
    }
}

/// Proves the retries did what the timeline says, from the breakers' metrics
/// and the server's counts: `price`'s blip was ridden out by one retry, and the
/// burst's retries stayed within the budget, the calls past it ending with
/// their own error after one request.
fn check_retries(t: &Timeline<'_>, burst: &Burst, took: Duration) -> Result<(), String> {
    let snapshot = breakerbox::registry().snapshot();
    let mut failed = Vec::new();
    let mut expect = |ok: bool, what: String| {
        if !ok {
            failed.push(what);
        }
    };
    let blip: Vec<_> = t.steps.iter().filter(|s| s.group == "price").collect();
    expect(
        matches!(blip[..], [s] if s.action == Action::Retried && s.ok
            && s.server_requests == 2 && s.attempts == 2),
        format!("`price` was not answered by its retry, after 2 requests: {blip:?}"),
    );
    match snapshot.group("price") {
        Some(m) => expect(
            (
                m.retries,
                m.failures,
                m.successes,
                m.retries_budget_exhausted,
            ) == (1, 1, 1, 0),
            format!(
                "`price` counted {} retries, {} failures, {} successes, {} retries refused; \
                 expected 1, 1, 1, 0",
                m.retries, m.failures, m.successes, m.retries_budget_exhausted
            ),
        ),
        None => expect(false, "`price` has no breaker in the registry".to_owned()),
    }
    // Every call failed and asked for exactly one retry: made, or refused.
    expect(
        burst.retries + burst.budget_exhausted == BURST,
        format!(
            "{} retries made and {} refused, for {BURST} failed calls that each asked for one",
            burst.retries, burst.budget_exhausted
        ),
    );
    // The budget's bound: 10 a second from the first retry asked for (and one
    // second's worth to start with), plus 20% of the first attempts.
    let bound = (BURST as f64 * 0.2 + 10.0 * (1.0 + took.as_secs_f64())).floor() as u64;
    expect(
        burst.retries <= bound && burst.budget_exhausted >= 1,
        format!(
            "{} retries in a burst of {BURST} that took {} ms: expected at most {bound}, and \
             the budget spent",
            burst.retries,
            took.as_millis()
        ),
    );
    let once = burst
        .ends
        .iter()
        .filter(|(requests, _)| *requests == 1)
        .count() as u64;
    let twice = burst
        .ends
        .iter()
        .filter(|(requests, _)| *requests == 2)
        .count() as u64;
    expect(
        once == burst.budget_exhausted && twice == burst.retries && once + twice == BURST,
        format!(
            "the server saw {once} calls once and {twice} twice, but the breaker made {} \
             retries and refused {}",
            burst.retries, burst.budget_exhausted
        ),
    );
    expect(
        burst.ends.iter().all(|(_, ok)| !ok),
        "a call of the burst succeeded against a failing server".to_owned(),
    );
    expect(
        burst.server_requests == BURST + burst.retries && burst.attempts == burst.server_requests,
        format!(
            "the server saw {} requests and the breaker {} attempts, for {BURST} calls and {} \
             retries",
            burst.server_requests, burst.attempts, burst.retries
        ),
    );
    match snapshot.group("stock") {
        Some(m) => expect(
            m.state == State::Closed && m.rejected == 0,
            format!(
                "`stock` ended {} with {} refusals: expected closed, none, so that the budget \
                 alone bounded the retries",
                m.state.as_str(),
                m.rejected
            ),
        ),
        None => expect(false, "`stock` has no breaker in the registry".to_owned()),
    }
    if failed.is_empty() {
        println!(
            "\nretries checked: `price`'s retry answered after its first attempt failed; the\n\
             burst's {} retries stayed within the budget and {} calls ended with their own\n\
             error after one request.",
            burst.retries, burst.budget_exhausted
        );
        Ok(())
    } else {
        Err(format!(
            "the retries did not behave as expected:\n  - {}",
            failed.join("\n  - ")
        ))
    }
}
