//! The outage harness: a real HTTP/1 server on 127.0.0.1 that follows a script
//! of phases (healthy, an outage, healthy again), an open-loop load generator that
//! offers a fixed rate of calls through one contender, and the figures of a run.
//!
//! Shared by the `outage` bench (every contender, full scale) and the root
//! crate's `outage_short_form` test (breakerbox only, small scale), so it uses
//! tokio, hyper and hyper-util alone. Every loop is bounded: the server stops
//! accepting at the end of its script, each call is given up by the harness at
//! its timeout plus [`GRACE`], and the runtimes are dropped when a run ends.

// Each user of this file uses part of it.
#![allow(dead_code)]

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};

/// The type-erased error of a request that got no response.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long past a call's own timeout the harness waits before it records the
/// caller as never answered ([`Answer::Unanswered`]).
pub const GRACE: Duration = Duration::from_secs(2);

/// Seconds of `Retry-After` the server sends with each `429`.
pub const RETRY_AFTER_SECS: u64 = 1;

/// What the server does during the outage phase of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Every request is answered `500` at once.
    Fail,
    /// Every request is held, unanswered, past the client's timeout (then `503`).
    Hang,
    /// Every request is answered `429` with `Retry-After`.
    Limited,
    /// Three requests of every five are answered `500`, the others as when healthy.
    Partial,
}

impl Scenario {
    /// Every scenario, in the order the README shows them.
    pub const ALL: [Scenario; 4] = [
        Scenario::Fail,
        Scenario::Hang,
        Scenario::Limited,
        Scenario::Partial,
    ];

    /// A short name, for file names and tables.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Fail => "fail",
            Scenario::Hang => "hang",
            Scenario::Limited => "429",
            Scenario::Partial => "partial",
        }
    }

    /// What the server does, in a sentence.
    pub fn describe(self, scale: &Scale) -> String {
        let outage = scale.outage.as_secs_f64();
        match self {
            Scenario::Fail => format!("the server fails every request (`500`) for {outage} s, then heals"),
            Scenario::Hang => format!(
                "the server answers nothing until past the client's timeout for {outage} s, then heals"
            ),
            Scenario::Limited => format!(
                "the server answers `429` with `Retry-After: {RETRY_AFTER_SECS}` for {outage} s, then heals"
            ),
            Scenario::Partial => {
                format!("the server fails 60% of requests (`500`) for {outage} s, then heals")
            }
        }
    }
}

/// The size and pace of a run.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    /// Calls offered per second, whatever the answers.
    pub rate: u32,
    /// Healthy time before the outage.
    pub warm: Duration,
    /// The outage.
    pub outage: Duration,
    /// Healthy time after the heal.
    pub after: Duration,
    /// Each call's own timeout (inside the breaker, as a user composes it).
    pub timeout: Duration,
    /// How long a healthy server takes to answer.
    pub service: Duration,
}

impl Scale {
    /// Seconds from the start to the outage.
    pub fn outage_start(&self) -> f64 {
        self.warm.as_secs_f64()
    }

    /// Seconds from the start to the heal.
    pub fn heal(&self) -> f64 {
        (self.warm + self.outage).as_secs_f64()
    }

    /// Seconds from the start to the end of the script.
    pub fn end(&self) -> f64 {
        (self.warm + self.outage + self.after).as_secs_f64()
    }

    /// Calls the generator offers in one run.
    pub fn calls(&self) -> u64 {
        (f64::from(self.rate) * self.end()).round() as u64
    }

    /// How long the server holds a request while it hangs: past any timeout.
    pub fn hang_for(&self) -> Duration {
        self.timeout * 3
    }
}

/// What one caller got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A `2xx`.
    Success,
    /// A `5xx` (or `408`), or no response: the dependency failed.
    Failed,
    /// The call's own timeout passed first.
    TimedOut,
    /// A `429`: the server asked for less load.
    Limited,
    /// The breaker refused the call without sending it (open, half-open full).
    Refused,
    /// A breakerbox ramp held the call back after the circuit closed.
    Ramping,
    /// Nothing came back within the call's timeout plus [`GRACE`]: a harness
    /// guard that a contender which answers its callers never trips.
    Unanswered,
}

impl Answer {
    /// The answer a response with `status` gives.
    pub fn of_status(status: u16) -> Answer {
        match status {
            200..=299 => Answer::Success,
            429 => Answer::Limited,
            _ => Answer::Failed,
        }
    }

    /// Whether the breaker admitted the call (the request was sent).
    pub fn admitted(self) -> bool {
        !matches!(self, Answer::Refused | Answer::Ramping)
    }
}

/// Whether an HTTP status counts as a failure of the dependency, for every
/// contender alike: `5xx` and `408` do; a `429` does not (the server is up and
/// asks for less load), nor does any other status.
pub fn status_fails(status: u16) -> bool {
    status == 408 || status >= 500
}

/// Why a request through [`Target::get`] did not return a status.
#[derive(Debug)]
pub enum GetError {
    /// The timeout passed first.
    TimedOut,
    /// No response: a refused or reset connection.
    Transport(BoxError),
}

impl fmt::Display for GetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GetError::TimedOut => f.write_str("timed out"),
            GetError::Transport(e) => write!(f, "no response: {e}"),
        }
    }
}

impl std::error::Error for GetError {}

/// The server a contender calls: a pooled hyper client and the server's address.
#[derive(Clone)]
pub struct Target {
    client: Client<HttpConnector, Empty<Bytes>>,
    uri: Uri,
}

impl Target {
    fn new(addr: SocketAddr) -> Target {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        Target {
            client: Client::builder(TokioExecutor::new()).build(connector),
            uri: format!("http://{addr}/").parse().expect("a valid URI"),
        }
    }

    /// A fresh `GET /`.
    pub fn request(&self) -> Request<Empty<Bytes>> {
        Request::get(self.uri.clone())
            .body(Empty::new())
            .expect("a valid request")
    }

    /// Sends `request` and reads the whole response, with no timeout: for a
    /// tower stack whose own timeout layer bounds it.
    pub fn send(
        &self,
        request: Request<Empty<Bytes>>,
    ) -> impl Future<Output = Result<Response<Bytes>, BoxError>> + Send + 'static {
        let client = self.client.clone();
        async move {
            let response = client.request(request).await?;
            let (parts, body) = response.into_parts();
            let body = body.collect().await?.to_bytes();
            Ok(Response::from_parts(parts, body))
        }
    }

    /// `GET /` within `timeout`: the response's status.
    pub fn get(
        &self,
        timeout: Duration,
    ) -> impl Future<Output = Result<u16, GetError>> + Send + 'static {
        let sent = self.send(self.request());
        async move {
            match tokio::time::timeout(timeout, sent).await {
                Ok(Ok(response)) => Ok(response.status().as_u16()),
                Ok(Err(e)) => Err(GetError::Transport(e)),
                Err(_) => Err(GetError::TimedOut),
            }
        }
    }
}

/// One call through a contender, as the load generator makes it.
pub type CallFuture = Pin<Box<dyn Future<Output = Answer> + Send>>;

/// A contender ready for a run: makes one call to the target per invocation.
pub type Contender = Arc<dyn Fn() -> CallFuture + Send + Sync>;

/// One call the generator made: when it started and ended (seconds from the
/// run's start) and what its caller got.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub start: f64,
    pub end: f64,
    pub answer: Answer,
}

/// One request the server received: when it arrived and when it was answered
/// (seconds from the run's start).
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub at: f64,
    pub left: f64,
}

/// Everything a run recorded.
pub struct Run {
    pub scenario: Scenario,
    pub scale: Scale,
    pub calls: Vec<Call>,
    pub arrivals: Vec<Arrival>,
    /// CPU time of the client's threads (the load generator and the contender).
    pub client_cpu: Duration,
}

static CLIENT_CPU_NANOS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static THREAD_CPU_AT_START: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::ZERO) };
}

/// Runs `scenario` at `scale` through the contender `make` builds (inside the
/// client's runtime, so it may start timers or take a runtime's clock).
/// `thread_cpu` reads the calling thread's CPU time (a run records none when it
/// is `None`). Blocks until the script has ended and every caller is answered.
pub fn run(
    scenario: Scenario,
    scale: &Scale,
    make: &dyn Fn(Target) -> Contender,
    thread_cpu: Option<fn() -> Duration>,
) -> Run {
    let scale = *scale;
    // The server runs on a thread and runtime of its own, so its work is not
    // the client's CPU time; the script starts a little after the listener is up.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener
        .set_nonblocking(true)
        .expect("a non-blocking listener");
    let addr = listener.local_addr().expect("the listener's address");
    let start = Instant::now() + Duration::from_millis(100);
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let server = {
        let arrivals = arrivals.clone();
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the server's runtime")
                .block_on(serve(listener, scenario, scale, start, arrivals))
        })
    };

    CLIENT_CPU_NANOS.store(0, Ordering::SeqCst);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(2).enable_all();
    if let Some(cpu) = thread_cpu {
        builder
            .on_thread_start(move || THREAD_CPU_AT_START.with(|c| c.set(cpu())))
            .on_thread_stop(move || {
                let used = cpu().saturating_sub(THREAD_CPU_AT_START.with(|c| c.get()));
                CLIENT_CPU_NANOS.fetch_add(used.as_nanos() as u64, Ordering::SeqCst);
            });
    }
    let client = builder.build().expect("the client's runtime");
    let contender = {
        let _in_runtime = client.enter();
        make(Target::new(addr))
    };
    let calls = client.block_on(offer(contender, scale, start));
    drop(client);
    server.join().expect("the server thread ends");
    let arrivals = std::mem::take(&mut *arrivals.lock().expect("no panic while recording"));
    Run {
        scenario,
        scale,
        calls,
        arrivals,
        client_cpu: Duration::from_nanos(CLIENT_CPU_NANOS.load(Ordering::SeqCst)),
    }
}

/// The open-loop generator: one call every `1 / rate` seconds from `start`,
/// each on its own task, whatever the earlier calls are doing.
async fn offer(contender: Contender, scale: Scale, start: Instant) -> Vec<Call> {
    let since = move |t: Instant| t.saturating_duration_since(start).as_secs_f64();
    let period = Duration::from_secs_f64(1.0 / f64::from(scale.rate));
    let guard = scale.timeout + GRACE;
    let mut ticker = tokio::time::interval_at(start.into(), period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..scale.calls() {
        ticker.tick().await;
        let begun = Instant::now();
        let call = contender();
        tasks.spawn(async move {
            let answer = tokio::time::timeout(guard, call)
                .await
                .unwrap_or(Answer::Unanswered);
            Call {
                start: since(begun),
                end: since(Instant::now()),
                answer,
            }
        });
    }
    let mut calls = Vec::with_capacity(scale.calls() as usize);
    while let Some(call) = tasks.join_next().await {
        calls.push(call.expect("a call task does not panic"));
    }
    calls.sort_by(|a, b| a.start.total_cmp(&b.start));
    calls
}

/// The scripted server: accepts until the script ends (plus the longest hang),
/// then stops; each request is answered as the phase it arrives in says.
async fn serve(
    listener: std::net::TcpListener,
    scenario: Scenario,
    scale: Scale,
    start: Instant,
    arrivals: Arc<Mutex<Vec<Arrival>>>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
    let stop = start + Duration::from_secs_f64(scale.end()) + scale.timeout + GRACE;
    let seen = Arc::new(AtomicU64::new(0));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = tokio::time::sleep_until(stop.into()) => break,
        };
        let Ok((stream, _)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        let (arrivals, seen) = (arrivals.clone(), seen.clone());
        let service = hyper::service::service_fn(move |_request: Request<Incoming>| {
            answer(scenario, scale, start, arrivals.clone(), seen.clone())
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    scenario: Scenario,
    scale: Scale,
    start: Instant,
    arrivals: Arc<Mutex<Vec<Arrival>>>,
    seen: Arc<AtomicU64>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let at = Instant::now()
        .saturating_duration_since(start)
        .as_secs_f64();
    // Recorded on arrival; the guard notes when the server lets go of the
    // request, answered or dropped with its connection (a client that gave up).
    let _held = Held::arrive(arrivals, start, at);
    let in_outage = at >= scale.outage_start() && at < scale.heal();
    let status = if !in_outage {
        tokio::time::sleep(scale.service).await;
        StatusCode::OK
    } else {
        match scenario {
            Scenario::Fail => StatusCode::INTERNAL_SERVER_ERROR,
            Scenario::Hang => {
                tokio::time::sleep(scale.hang_for()).await;
                StatusCode::SERVICE_UNAVAILABLE
            }
            Scenario::Limited => StatusCode::TOO_MANY_REQUESTS,
            Scenario::Partial => {
                if seen.fetch_add(1, Ordering::Relaxed) % 5 < 3 {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    tokio::time::sleep(scale.service).await;
                    StatusCode::OK
                }
            }
        }
    };
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    if status == StatusCode::TOO_MANY_REQUESTS {
        response.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from(RETRY_AFTER_SECS),
        );
    }
    Ok(response)
}

/// One request the server holds: its arrival is on record from the start, and
/// its departure is written when the guard drops.
struct Held {
    arrivals: Arc<Mutex<Vec<Arrival>>>,
    index: usize,
    start: Instant,
}

impl Held {
    fn arrive(arrivals: Arc<Mutex<Vec<Arrival>>>, start: Instant, at: f64) -> Held {
        let index = {
            let mut list = arrivals.lock().expect("no panic while recording");
            list.push(Arrival { at, left: f64::MAX });
            list.len() - 1
        };
        Held {
            arrivals,
            index,
            start,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let left = Instant::now()
            .saturating_duration_since(self.start)
            .as_secs_f64();
        if let Ok(mut list) = self.arrivals.lock() {
            list[self.index].left = left;
        }
    }
}

/// The figures of one run; times in seconds unless named otherwise.
#[derive(Clone, Debug)]
pub struct Figures {
    /// Calls the generator started during the outage.
    pub offered: usize,
    /// Requests that reached the server during the outage.
    pub reached: usize,
    /// Callers' latency during the outage, milliseconds: p50, p99, max.
    pub latency_ms: [f64; 3],
    /// Successful answers to calls started during the outage.
    pub ok_during: usize,
    /// Successful answers to calls started after the heal, and those calls.
    pub ok_after: usize,
    pub offered_after: usize,
    /// From the heal until every later 100 ms of calls succeeds at 95% or more
    /// (`None`: the run ended first).
    pub recovery: Option<f64>,
    /// Refusals that followed a closed circuit after the heal (flapping).
    pub reopens: usize,
    /// The most requests the server held at once after the heal.
    pub peak_after: usize,
    /// Client CPU time per call offered, microseconds.
    pub cpu_us: f64,
    /// Callers never answered within their timeout plus [`GRACE`].
    pub unanswered: usize,
}

/// Width of the bins that recovery and the pictures use, seconds.
pub const BIN: f64 = 0.1;

/// Consecutive admitted calls after which a circuit counts as closed again.
pub const CLOSED_STREAK: usize = 20;

impl Run {
    /// The calls started in `[from, to)`.
    pub fn calls_between(&self, from: f64, to: f64) -> impl Iterator<Item = &Call> {
        self.calls
            .iter()
            .filter(move |c| c.start >= from && c.start < to)
    }

    /// Requests the server received in `[from, to)`.
    pub fn reached_between(&self, from: f64, to: f64) -> usize {
        self.arrivals
            .iter()
            .filter(|a| a.at >= from && a.at < to)
            .count()
    }

    /// The figures of the run.
    pub fn figures(&self) -> Figures {
        let s = &self.scale;
        let (o0, heal, end) = (s.outage_start(), s.heal(), s.end());
        let during: Vec<&Call> = self.calls_between(o0, heal).collect();
        let mut latency: Vec<f64> = during.iter().map(|c| (c.end - c.start) * 1e3).collect();
        latency.sort_by(f64::total_cmp);
        let rank = |q: f64| {
            if latency.is_empty() {
                return 0.0;
            }
            let i = ((q * latency.len() as f64).ceil() as usize).clamp(1, latency.len());
            latency[i - 1]
        };
        let after: Vec<&Call> = self.calls_between(heal, end).collect();
        let ok = |calls: &[&Call]| calls.iter().filter(|c| c.answer == Answer::Success).count();
        Figures {
            offered: during.len(),
            reached: self.reached_between(o0, heal),
            latency_ms: [
                rank(0.5),
                rank(0.99),
                latency.last().copied().unwrap_or(0.0),
            ],
            ok_during: ok(&during),
            ok_after: ok(&after),
            offered_after: after.len(),
            recovery: self.recovery(),
            reopens: reopens(&after),
            peak_after: self.peak_after(),
            cpu_us: self.client_cpu.as_secs_f64() * 1e6 / self.calls.len().max(1) as f64,
            unanswered: self
                .calls
                .iter()
                .filter(|c| c.answer == Answer::Unanswered)
                .count(),
        }
    }

    /// Per [`BIN`] from the start: requests the server received per second,
    /// and the share (percent) of the calls started in the bin that succeeded.
    pub fn series(&self) -> Vec<(f64, f64, Option<f64>)> {
        let bins = (self.scale.end() / BIN).round() as usize;
        let mut received = vec![0usize; bins];
        let mut started = vec![0usize; bins];
        let mut ok = vec![0usize; bins];
        let bin = |t: f64| ((t / BIN) as usize).min(bins - 1);
        for a in &self.arrivals {
            if a.at < self.scale.end() {
                received[bin(a.at)] += 1;
            }
        }
        for c in &self.calls {
            started[bin(c.start)] += 1;
            ok[bin(c.start)] += usize::from(c.answer == Answer::Success);
        }
        (0..bins)
            .map(|i| {
                let share = (started[i] > 0).then(|| 100.0 * ok[i] as f64 / started[i] as f64);
                (i as f64 * BIN, received[i] as f64 / BIN, share)
            })
            .collect()
    }

    fn recovery(&self) -> Option<f64> {
        let heal = self.scale.heal();
        let series = self.series();
        let after: Vec<_> = series
            .iter()
            .filter(|(t, _, _)| *t >= heal - 1e-9)
            .collect();
        let good = |share: &Option<f64>| share.is_none_or(|s| s >= 95.0);
        let last_bad = after.iter().rposition(|(_, _, share)| !good(share));
        match last_bad {
            None => Some(0.0),
            Some(i) if i + 1 < after.len() => Some(after[i + 1].0 - heal),
            Some(_) => None,
        }
    }

    fn peak_after(&self) -> usize {
        let heal = self.scale.heal();
        let mut events: Vec<(f64, i32)> = Vec::with_capacity(self.arrivals.len() * 2);
        for a in &self.arrivals {
            events.push((a.at, 1));
            events.push((a.left, -1));
        }
        // At one instant, departures before arrivals.
        events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (mut now, mut peak) = (0i32, 0i32);
        for (t, step) in events {
            now += step;
            if t >= heal {
                peak = peak.max(now);
            }
        }
        peak.max(0) as usize
    }
}

/// Refusals after the heal that follow a circuit seen closed: at least
/// [`CLOSED_STREAK`] admitted calls in a row since the last refusal.
fn reopens(after: &[&Call]) -> usize {
    let (mut streak, mut closed, mut count) = (0, false, 0);
    for call in after {
        match call.answer {
            Answer::Refused => {
                if closed {
                    count += 1;
                }
                closed = false;
                streak = 0;
            }
            Answer::Ramping => streak = 0,
            _ => {
                streak += 1;
                closed |= streak >= CLOSED_STREAK;
            }
        }
    }
    count
}
