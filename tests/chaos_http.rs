//! Chaos against a real HTTP server on 127.0.0.1, on the wall clock (no mocked
//! time): 50 cycles of healthy -> failing -> open -> healed -> closed, with
//! concurrent callers, and every call accounted for.
//!
//! Two guarded paths run side by side, one per `#[test]`, each against its own
//! server: `chaos-fallback` answers from a fallback while open, `chaos-refuse`
//! has none and hands the caller `CircuitOpen`. Each cycle:
//!
//! 1. healthy: `CALLERS` tasks call; every call reaches the server and succeeds.
//! 2. the server flips to 100% 500s, at a quiet moment (no call in flight), so
//!    every request after the flip fails and no success can reset the count;
//!    the breaker must open within `threshold + 1` requests (stated exactly per
//!    trip mode in [`trip_alone`] and [`trip_together`]).
//! 3. open: the callers keep calling; the server must see no request from them.
//! 4. the server heals; once `open_ms` has passed, the callers race for the one
//!    probe slot: exactly one probe goes, succeeds, and closes the circuit.
//!
//! Every phase checks the breaker's own counters (`breakerbox::registry()`) against
//! what the callers saw and what the server counted; the end of each test checks
//! the totals of `registry().snapshot()` the same way. Nothing here asserts how
//! long anything took: the test waits for conditions with bounded polling under a
//! generous deadline, so a loaded CI box only makes it slower. The one time
//! check is a lower bound the breaker guarantees (no probe before `open_ms`).

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use breakerbox::{circuit_breaker, metrics::Metrics, CircuitOpen, OpenReason, State};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

/// Healthy -> failing -> open -> healed -> closed, this many times per path.
const CYCLES: usize = 50;
/// Tasks calling the guarded path at once in the concurrent phases.
const CALLERS: usize = 4;
/// Calls per caller while healthy, while open, and while healing.
const HEALTHY_CALLS: usize = 3;
const OPEN_CALLS: usize = 20;
const HEAL_CALLS: usize = 4;
/// The attributes' `open_ms` (the attribute takes literals; checked against the
/// registry's config at the start).
const OPEN_MS: u64 = 100;
/// Upper bound on any one wait (for a request, for the probe slot to come due).
const WAIT: Duration = Duration::from_secs(10);
/// Upper bound on a whole test: a hang fails instead of stalling CI.
const TEST_DEADLINE: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------
// The server.
// ---------------------------------------------------------------------------

/// A real HTTP/1 server on an ephemeral port of 127.0.0.1. Healthy (200) or
/// failing (500 to every request), as the test switches it; counts every request,
/// and separately those that arrive while the test has marked the breaker open.
#[derive(Clone)]
struct Upstream {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    failing: AtomicBool,
    open_window: AtomicBool,
    requests: AtomicU64,
    requests_while_open: AtomicU64,
}

impl Upstream {
    async fn start() -> Upstream {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared::default());
        tokio::spawn(accept(listener, Arc::clone(&shared)));
        Upstream { addr, shared }
    }

    fn set_failing(&self, failing: bool) {
        self.shared.failing.store(failing, SeqCst);
    }

    /// From now on, count arriving requests as arriving while the breaker is open.
    fn set_open_window(&self, open: bool) {
        self.shared.open_window.store(open, SeqCst);
    }

    fn requests(&self) -> u64 {
        self.shared.requests.load(SeqCst)
    }

    fn requests_while_open(&self) -> u64 {
        self.shared.requests_while_open.load(SeqCst)
    }
}

async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            // Out of descriptors or similar: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let service = service_fn(move |_: Request<Incoming>| {
                let response = respond(&shared);
                async move { Ok::<_, Infallible>(response) }
            });
            // A client hanging up is not this test's concern: every request the
            // server answered was counted before it answered.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service)
                .await;
        });
    }
}

fn respond(shared: &Shared) -> Response<Full<Bytes>> {
    shared.requests.fetch_add(1, SeqCst);
    if shared.open_window.load(SeqCst) {
        shared.requests_while_open.fetch_add(1, SeqCst);
    }
    let (status, body) = if shared.failing.load(SeqCst) {
        (StatusCode::INTERNAL_SERVER_ERROR, "down")
    } else {
        (StatusCode::OK, "up")
    };
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
}

// ---------------------------------------------------------------------------
// The client and the two guarded paths.
// ---------------------------------------------------------------------------

/// A pooled HTTP/1 client for one server.
struct Api {
    client: Client<HttpConnector, Empty<Bytes>>,
    uri: Uri,
}

#[derive(Debug)]
enum HttpError {
    /// The server answered with a non-2xx status.
    Status(StatusCode),
    /// No answer: connection trouble or the client's timeout.
    Transport(String),
}

impl Api {
    fn new(upstream: &Upstream) -> Api {
        Api {
            client: Client::builder(TokioExecutor::new()).build_http(),
            uri: format!("http://{}/item", upstream.addr).parse().unwrap(),
        }
    }

    /// `GET /item`: the status of a 2xx, or why not.
    async fn get(&self) -> Result<StatusCode, HttpError> {
        let request = self.client.get(self.uri.clone());
        let response = tokio::time::timeout(WAIT, request)
            .await
            .map_err(|_| HttpError::Transport("timed out".to_owned()))?
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        let status = response.status();
        response
            .into_body()
            .collect()
            .await
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        if status.is_success() {
            Ok(status)
        } else {
            Err(HttpError::Status(status))
        }
    }
}

/// What a guarded fn returns when it gave an answer.
#[derive(Debug)]
enum Reply {
    /// The server's 2xx status.
    Upstream(StatusCode),
    /// The fallback's answer: the request was never sent.
    Fallback,
}

/// Four consecutive failures open it for `OPEN_MS`; while open, `from_cache` answers.
#[circuit_breaker(group = "chaos-fallback", threshold = 4, open_ms = 100, fallback = from_cache)]
async fn fetch_or_cache(api: &Api) -> Result<Reply, HttpError> {
    api.get().await.map(Reply::Upstream)
}

async fn from_cache(_api: &Api) -> Result<Reply, HttpError> {
    Ok(Reply::Fallback)
}

/// Three consecutive failures open it for `OPEN_MS`; while open the caller gets
/// `FetchError::Open`.
#[circuit_breaker(group = "chaos-refuse", threshold = 3, open_ms = 100)]
async fn fetch_or_refuse(api: &Api) -> Result<Reply, FetchError> {
    Ok(Reply::Upstream(api.get().await?))
}

#[derive(Debug)]
enum FetchError {
    Http(HttpError),
    Open(CircuitOpen),
}

impl From<HttpError> for FetchError {
    fn from(error: HttpError) -> Self {
        FetchError::Http(error)
    }
}

impl From<CircuitOpen> for FetchError {
    fn from(open: CircuitOpen) -> Self {
        FetchError::Open(open)
    }
}

/// How one call ended: exactly one of these, whichever path.
#[derive(Debug)]
enum Call {
    /// The server answered (2xx or 5xx): the call was admitted and sent.
    Answered(StatusCode),
    /// The fallback answered: refused, nothing sent.
    Fallback,
    /// `CircuitOpen` reached the caller: refused, nothing sent.
    Refused(OpenReason),
    /// Admitted, sent, but no answer came back.
    Transport(String),
}

/// Which guarded fn a test drives.
#[derive(Clone, Copy, Debug)]
enum Path {
    WithFallback,
    WithoutFallback,
}

impl Path {
    fn group(self) -> &'static str {
        match self {
            Path::WithFallback => "chaos-fallback",
            Path::WithoutFallback => "chaos-refuse",
        }
    }

    /// The attribute's `threshold` for this path.
    fn threshold(self) -> u64 {
        match self {
            Path::WithFallback => 4,
            Path::WithoutFallback => 3,
        }
    }

    async fn call(self, api: &Api) -> Call {
        match self {
            Path::WithFallback => match fetch_or_cache(api).await {
                Ok(Reply::Upstream(status)) => Call::Answered(status),
                Ok(Reply::Fallback) => Call::Fallback,
                Err(error) => http_call(error),
            },
            Path::WithoutFallback => match fetch_or_refuse(api).await {
                Ok(Reply::Upstream(status)) => Call::Answered(status),
                Ok(Reply::Fallback) => unreachable!("no fallback on this path"),
                Err(FetchError::Open(open)) => {
                    assert_eq!(open.group(), "chaos-refuse");
                    Call::Refused(open.reason())
                }
                Err(FetchError::Http(error)) => http_call(error),
            },
        }
    }
}

fn http_call(error: HttpError) -> Call {
    match error {
        HttpError::Status(status) => Call::Answered(status),
        HttpError::Transport(why) => Call::Transport(why),
    }
}

// ---------------------------------------------------------------------------
// Tallies: what the callers saw, and what the breaker counted.
// ---------------------------------------------------------------------------

/// What a set of calls ended as. `made` is counted before each call, apart from
/// the outcome, so `made == ended()` proves every call ended exactly one way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    made: u64,
    ok: u64,
    server_errors: u64,
    fallbacks: u64,
    refused_open: u64,
    refused_half_open_full: u64,
    transport: u64,
}

impl Tally {
    fn add(&mut self, call: &Call) {
        match call {
            Call::Answered(status) if status.is_success() => self.ok += 1,
            Call::Answered(status) => {
                assert_eq!(*status, StatusCode::INTERNAL_SERVER_ERROR);
                self.server_errors += 1;
            }
            Call::Fallback => self.fallbacks += 1,
            Call::Refused(OpenReason::Open) => self.refused_open += 1,
            Call::Refused(OpenReason::HalfOpenFull) => self.refused_half_open_full += 1,
            Call::Refused(OpenReason::ForcedOpen) => panic!("nothing forces this breaker open"),
            Call::Refused(OpenReason::BulkheadFull) => panic!("this group has no bulkhead"),
            Call::Refused(OpenReason::Fleet) => panic!("no fleet agent here"),
            Call::Refused(other) => panic!("a refusal this test does not expect: {other:?}"),
            Call::Transport(why) => {
                eprintln!("transport error: {why}");
                self.transport += 1;
            }
        }
    }

    /// Calls the server answered.
    fn answered(&self) -> u64 {
        self.ok + self.server_errors
    }

    /// Calls the breaker refused, whether a fallback or `CircuitOpen` answered.
    fn refused(&self) -> u64 {
        self.fallbacks + self.refused_open + self.refused_half_open_full
    }

    fn ended(&self) -> u64 {
        self.answered() + self.refused() + self.transport
    }

    fn merge(&mut self, other: Tally) {
        self.made += other.made;
        self.ok += other.ok;
        self.server_errors += other.server_errors;
        self.fallbacks += other.fallbacks;
        self.refused_open += other.refused_open;
        self.refused_half_open_full += other.refused_half_open_full;
        self.transport += other.transport;
    }
}

/// How much the breaker's counters moved between two metrics.
#[derive(Debug)]
struct Moved {
    calls: u64,
    successes: u64,
    failures: u64,
    ignored: u64,
    abandoned: u64,
    stale: u64,
    rejected: u64,
    probes_succeeded: u64,
    probes_failed: u64,
    times_opened: u64,
}

impl Moved {
    fn between(before: &Metrics, after: &Metrics) -> Moved {
        Moved::since(Some(before), after)
    }

    /// From `before`, or from zero when the breaker did not exist yet.
    fn since(before: Option<&Metrics>, after: &Metrics) -> Moved {
        let was = |count: fn(&Metrics) -> u64| before.map_or(0, count);
        Moved {
            calls: after.calls - was(|m| m.calls),
            successes: after.successes - was(|m| m.successes),
            failures: after.failures - was(|m| m.failures),
            ignored: after.ignored - was(|m| m.ignored),
            abandoned: after.abandoned - was(|m| m.abandoned),
            stale: after.stale - was(|m| m.stale),
            rejected: after.rejected - was(|m| m.rejected),
            probes_succeeded: after.probes_succeeded - was(|m| m.probes_succeeded),
            probes_failed: after.probes_failed - was(|m| m.probes_failed),
            times_opened: after.times_opened - was(|m| m.times_opened),
        }
    }
}

// ---------------------------------------------------------------------------
// One path under chaos.
// ---------------------------------------------------------------------------

struct Chaos {
    path: Path,
    upstream: Upstream,
    api: Arc<Api>,
    /// Every call made, over all cycles.
    total: Tally,
    /// Probes that failed: admitted because a stalled box let `open_ms` pass
    /// while the server was still failing (0 on an idle machine).
    late_probes: u64,
    /// Requests admitted before a concurrent trip that reached the server after
    /// the T that tripped it, over all cycles.
    in_flight_at_trip: u64,
    /// Of those, verdicts counted as failures rather than stale (they raced the trip).
    raced_trip: u64,
}

impl Chaos {
    fn metrics(&self) -> Metrics {
        breakerbox::registry()
            .get(self.path.group())
            .expect("the guarded path created its breaker on its first call")
            .metrics()
    }

    fn state(&self) -> State {
        self.metrics().state
    }

    fn threshold(&self) -> u64 {
        self.path.threshold()
    }

    /// `callers` tasks at once, each making calls until `stop` says so or it
    /// made `max_calls`. Returns what the calls ended as, after all finished.
    async fn run(&mut self, callers: usize, max_calls: usize, stop: fn(&Call) -> bool) -> Tally {
        let tasks: Vec<_> = (0..callers)
            .map(|_| {
                let api = Arc::clone(&self.api);
                let path = self.path;
                tokio::spawn(async move {
                    let mut tally = Tally::default();
                    for _ in 0..max_calls {
                        tally.made += 1;
                        let call = path.call(&api).await;
                        tally.add(&call);
                        if stop(&call) {
                            break;
                        }
                    }
                    tally
                })
            })
            .collect();
        let mut phase = Tally::default();
        for task in tasks {
            phase.merge(task.await.expect("a caller task panicked"));
        }
        assert_eq!(phase.made, phase.ended(), "a call ended no known way");
        assert_eq!(phase.transport, 0, "the server left calls unanswered");
        self.total.merge(phase);
        phase
    }

    /// Checks what every phase must show: the server saw exactly the calls the
    /// breaker admitted, the breaker counted each admitted call once by its
    /// outcome and each refusal once, and nothing was dropped or ignored.
    fn account(&self, cycle: usize, phase: &str, tally: &Tally, moved: &Moved, sent: u64) {
        let at = format!("{} cycle {cycle} {phase}", self.path.group());
        assert_eq!(sent, tally.answered(), "{at}: server requests vs answers");
        assert_eq!(moved.calls, tally.answered(), "{at}: admitted calls");
        assert_eq!(moved.successes, tally.ok, "{at}: successes");
        assert_eq!(
            moved.failures + moved.stale,
            tally.server_errors,
            "{at}: failures (stale ones included)"
        );
        assert_eq!(moved.rejected, tally.refused(), "{at}: refusals");
        assert_eq!(
            (moved.ignored, moved.abandoned),
            (0, 0),
            "{at}: ignored/abandoned"
        );
        match self.path {
            Path::WithFallback => assert_eq!(
                tally.refused_open + tally.refused_half_open_full,
                0,
                "{at}: CircuitOpen reached a caller that has a fallback"
            ),
            Path::WithoutFallback => assert_eq!(tally.fallbacks, 0, "{at}: fallback"),
        }
    }

    async fn cycle(&mut self, cycle: usize) {
        self.healthy(cycle).await;

        // The flip happens with no call in flight (`healthy` joined its callers),
        // so every request from here on fails and no success can interleave.
        self.upstream.set_failing(true);
        let flipped_at = Instant::now();
        if cycle % 2 == 0 {
            self.trip_alone(cycle).await;
        } else {
            self.trip_together(cycle).await;
        }
        self.open(cycle).await;

        self.upstream.set_failing(false);
        self.heal(cycle, flipped_at).await;
    }

    /// Healthy: every call reaches the server and succeeds; the circuit stays closed.
    async fn healthy(&mut self, cycle: usize) {
        // The first call of the first cycle creates the group's breaker.
        let before = breakerbox::registry()
            .get(self.path.group())
            .map(|b| b.metrics());
        let sent_before = self.upstream.requests();
        let tally = self.run(CALLERS, HEALTHY_CALLS, |_| false).await;
        let moved = Moved::since(before.as_ref(), &self.metrics());
        let sent = self.upstream.requests() - sent_before;
        self.account(cycle, "healthy", &tally, &moved, sent);
        assert_eq!(
            tally.ok,
            (CALLERS * HEALTHY_CALLS) as u64,
            "cycle {cycle}: healthy calls"
        );
        assert_eq!(
            self.state(),
            State::Closed,
            "cycle {cycle}: closed while healthy"
        );
    }

    /// One caller: requests 1..T each reach the server and fail, the circuit stays
    /// closed after each of the first T-1 and is open after the T-th. So the
    /// server sees exactly T requests and the breaker is open before request T+1:
    /// "opens within threshold + 1 requests", with nothing to spare.
    async fn trip_alone(&mut self, cycle: usize) {
        let t = self.threshold();
        let before = self.metrics();
        let sent_before = self.upstream.requests();
        let mut phase = Tally::default();
        for i in 1..=t {
            let tally = self.run(1, 1, |_| false).await;
            phase.merge(tally);
            assert_eq!(
                tally.server_errors, 1,
                "cycle {cycle}: failing request {i} of {t} was not sent: {tally:?}"
            );
            let m = self.metrics();
            if i < t {
                assert_eq!(
                    (m.state, u64::from(m.consecutive_failures)),
                    (State::Closed, i),
                    "cycle {cycle}: after {i} of threshold {t} failures"
                );
            } else {
                assert_eq!(m.state, State::Open, "cycle {cycle}: after {t} failures");
            }
        }
        let moved = Moved::between(&before, &self.metrics());
        let sent = self.upstream.requests() - sent_before;
        self.account(cycle, "lone trip", &phase, &moved, sent);
        assert_eq!(sent, t, "cycle {cycle}: requests until open");
        assert_eq!(
            (moved.failures, moved.stale, moved.times_opened),
            (t, 0, 1),
            "cycle {cycle}: (failures, stale, times opened) of a lone trip"
        );
    }

    /// `CALLERS` callers at once, each calling until it is refused. The T-th
    /// failure verdict trips the breaker; when it does, each other caller holds
    /// at most one call admitted while closed (a caller has one call in flight
    /// at a time). Those calls still reach the server; nothing admitted after
    /// the trip does. Hence, with `X` the requests beyond the T that tripped it:
    ///
    ///   requests the server saw until open = T + X,  0 <= X <= CALLERS - 1
    ///
    /// i.e. at most `T + CALLERS - 1` (`T + 1` calls for one caller, as
    /// `trip_alone` shows; each extra caller can add only its call in flight).
    /// A late probe (see `late_probes`) adds one failed request each, counted.
    ///
    /// The breaker counts each of the X as stale, or as a failure when its
    /// verdict read the word just before the trip and counted after it
    /// (`count_failure` in breaker-core); either way it never moves the state,
    /// and `failures + stale` equals the 500s (checked by `account`). So the
    /// failures are at least T, and T plus the excess failures plus the stale
    /// ones is exactly what the server saw.
    async fn trip_together(&mut self, cycle: usize) {
        let t = self.threshold();
        let before = self.metrics();
        let sent_before = self.upstream.requests();
        // A caller stops at its first refusal; the cap only bounds a breaker that
        // never opens, which the state check below then reports.
        let cap = t as usize + CALLERS + 10;
        let tally = self
            .run(CALLERS, cap, |call| !matches!(call, Call::Answered(_)))
            .await;
        let m = self.metrics();
        let moved = Moved::between(&before, &m);
        let sent = self.upstream.requests() - sent_before;
        self.account(cycle, "trip", &tally, &moved, sent);
        self.late_probes += moved.probes_failed;
        assert_eq!(
            m.state,
            State::Open,
            "cycle {cycle}: open after a concurrent trip"
        );
        assert_eq!(
            moved.times_opened,
            1 + moved.probes_failed,
            "cycle {cycle}: trips"
        );
        let tripping = t + moved.probes_failed;
        assert!(
            moved.failures >= tripping,
            "cycle {cycle}: opened after {} failures, threshold {t}",
            moved.failures - moved.probes_failed
        );
        let in_flight = sent - tripping;
        assert!(
            in_flight < CALLERS as u64,
            "cycle {cycle}: the server saw {sent} requests until open, threshold {t}: \
             {in_flight} beyond it, but only {} callers besides the one that tripped \
             could have had a call in flight",
            CALLERS - 1
        );
        self.in_flight_at_trip += in_flight;
        self.raced_trip += moved.failures - tripping;
    }

    /// Open: the callers keep calling and are all refused; the server sees no
    /// request from them. The test marks the server's open window from the moment
    /// it saw the breaker open (no call in flight) until it heals the server.
    ///
    /// The open duration runs on the wall clock, so a box stalled for `OPEN_MS`
    /// in the middle of this phase lets a probe go (half-open, not open) while
    /// the server still fails; that probe is counted (`probes_failed`) and
    /// reopens the circuit. So the exact claim: every request in the open window
    /// is a probe the breaker admitted after its open time; on an idle box, none.
    async fn open(&mut self, cycle: usize) {
        let before = self.metrics();
        let sent_before = self.upstream.requests();
        let while_open_before = self.upstream.requests_while_open();
        self.upstream.set_open_window(true);
        let tally = self.run(CALLERS, OPEN_CALLS, |_| false).await;
        self.upstream.set_open_window(false);
        let m = self.metrics();
        let moved = Moved::between(&before, &m);
        let sent = self.upstream.requests() - sent_before;
        let while_open = self.upstream.requests_while_open() - while_open_before;
        self.account(cycle, "open", &tally, &moved, sent);
        self.late_probes += moved.probes_failed;
        assert_eq!(
            while_open, moved.probes_failed,
            "cycle {cycle}: the server saw {while_open} requests while the breaker was \
             open; only {} were probes admitted after the open time",
            moved.probes_failed
        );
        assert_eq!(
            sent, while_open,
            "cycle {cycle}: every request of the phase"
        );
        assert_eq!(m.state, State::Open, "cycle {cycle}: still open");
        assert!(
            tally.refused() > 0,
            "cycle {cycle}: no call was refused while open"
        );
    }

    /// Healed: once the open time is up, the callers race; exactly one probe is
    /// admitted, reaches the server, succeeds and closes the circuit. Callers
    /// that claim while it is in flight are refused (half-open, slot taken).
    async fn heal(&mut self, cycle: usize, flipped_at: Instant) {
        let breaker = breakerbox::registry().get(self.path.group()).unwrap();
        // Poll, never assert a duration: on a stalled box this just takes longer.
        let deadline = Instant::now() + WAIT;
        while !breaker.would_admit() {
            assert!(
                Instant::now() < deadline,
                "cycle {cycle}: no probe slot within {WAIT:?}: {:?}",
                breaker.metrics()
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        // A lower bound the breaker guarantees, so it cannot flake: the trip came
        // after `flipped_at`, and no probe may go before `open_ms` after the trip.
        assert!(
            flipped_at.elapsed() >= Duration::from_millis(OPEN_MS),
            "cycle {cycle}: a probe came due {:?} after the flip, before open_ms",
            flipped_at.elapsed()
        );
        let before = self.metrics();
        let sent_before = self.upstream.requests();
        let tally = self.run(CALLERS, HEAL_CALLS, |_| false).await;
        let m = self.metrics();
        let moved = Moved::between(&before, &m);
        let sent = self.upstream.requests() - sent_before;
        self.account(cycle, "heal", &tally, &moved, sent);
        assert_eq!(
            (moved.probes_succeeded, moved.probes_failed),
            (1, 0),
            "cycle {cycle}: (probes succeeded, failed) to close a healed circuit"
        );
        assert_eq!(
            m.state,
            State::Closed,
            "cycle {cycle}: closed after one probe"
        );
        assert_eq!(
            tally.server_errors, 0,
            "cycle {cycle}: the server is healed"
        );
        assert_eq!(
            tally.refused_open, 0,
            "cycle {cycle}: refused as open after the open time was up"
        );
        assert_eq!(
            moved.times_opened, 0,
            "cycle {cycle}: reopened while healing"
        );
    }

    /// The totals: every call of every cycle, three ways (the callers, the
    /// breaker's snapshot, the server).
    fn check_totals(&self) {
        let group = self.path.group();
        let snapshot = breakerbox::registry().snapshot();
        let m = snapshot.group(group).expect("the group is in the snapshot");
        let total = &self.total;
        println!(
            "{group}: {} calls made: {} answered by the server ({} ok, {} 500), {} fallbacks, \
             {} CircuitOpen ({} open, {} half-open-full); breaker: calls {}, successes {}, \
             failures {}, stale {}, rejected {}, probes ok {}, probes failed {}, opened {}x",
            total.made,
            total.answered(),
            total.ok,
            total.server_errors,
            total.fallbacks,
            total.refused_open + total.refused_half_open_full,
            total.refused_open,
            total.refused_half_open_full,
            m.calls,
            m.successes,
            m.failures,
            m.stale,
            m.rejected,
            m.probes_succeeded,
            m.probes_failed,
            m.times_opened,
        );
        assert_eq!(
            total.made,
            total.ended(),
            "every call ended exactly one way"
        );
        assert_eq!(total.transport, 0, "every admitted call got an answer");
        assert_eq!(m.calls, total.answered(), "admitted calls");
        assert_eq!(
            self.upstream.requests(),
            total.answered(),
            "server requests"
        );
        assert_eq!(m.successes, total.ok, "successes");
        assert_eq!(m.failures + m.stale, total.server_errors, "failures");
        assert_eq!(m.rejected, total.refused(), "refused calls");
        assert_eq!((m.ignored, m.abandoned), (0, 0), "ignored, abandoned");
        assert_eq!(
            m.probes_succeeded, CYCLES as u64,
            "one closing probe per cycle"
        );
        assert_eq!(m.probes_failed, self.late_probes, "failed probes");
        assert_eq!(
            m.times_opened,
            CYCLES as u64 + self.late_probes,
            "one trip per cycle (+ late probes)"
        );
        assert_eq!(m.state, State::Closed, "closed at the end");
        // Every 500 was one of the T that tripped a cycle, a call in flight at a
        // concurrent trip, or a late probe; and the breaker split them so.
        let tripping = CYCLES as u64 * self.path.threshold();
        assert_eq!(
            total.server_errors,
            tripping + self.in_flight_at_trip + self.late_probes,
            "500s"
        );
        assert_eq!(
            m.failures,
            tripping + self.raced_trip + self.late_probes,
            "failures"
        );
        assert_eq!(m.stale, self.in_flight_at_trip - self.raced_trip, "stale");
    }
}

async fn survive_chaos(path: Path) {
    let upstream = Upstream::start().await;
    let api = Arc::new(Api::new(&upstream));
    let mut chaos = Chaos {
        path,
        upstream,
        api,
        total: Tally::default(),
        late_probes: 0,
        in_flight_at_trip: 0,
        raced_trip: 0,
    };
    let started = Instant::now();
    for cycle in 0..CYCLES {
        chaos.cycle(cycle).await;
        if cycle == 0 {
            let config = *breakerbox::registry().get(path.group()).unwrap().config();
            assert_eq!(u64::from(config.threshold()), path.threshold());
            assert_eq!(config.open(), Duration::from_millis(OPEN_MS));
        }
    }
    chaos.check_totals();
    println!(
        "{}: {CYCLES} cycles with {CALLERS} callers in {:.2?}; calls in flight at concurrent \
         trips: {} ({} counted as failures, having raced the trip); late probes (box stalled \
         past open_ms while failing): {}",
        path.group(),
        started.elapsed(),
        chaos.in_flight_at_trip,
        chaos.raced_trip,
        chaos.late_probes
    );
}

async fn within_deadline(path: Path) {
    tokio::time::timeout(TEST_DEADLINE, survive_chaos(path))
        .await
        .unwrap_or_else(|_| panic!("{} did not finish within {TEST_DEADLINE:?}", path.group()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_breaker_with_a_fallback_keeps_a_failing_server_alone_for_50_cycles() {
    within_deadline(Path::WithFallback).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_breaker_without_a_fallback_keeps_a_failing_server_alone_for_50_cycles() {
    within_deadline(Path::WithoutFallback).await;
}
