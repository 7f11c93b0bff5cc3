//! `breakerbox`: a circuit breaker in front of any function, with one attribute.
//!
//! ```
//! use breakerbox::{circuit_breaker, CircuitOpen};
//!
//! #[derive(Debug)]
//! enum SearchError { Upstream, Open(CircuitOpen) }
//! impl From<CircuitOpen> for SearchError {
//!     fn from(open: CircuitOpen) -> Self { SearchError::Open(open) }
//! }
//!
//! #[circuit_breaker(group = "search", threshold = 3, open_ms = 30_000)]
//! fn search(q: &str) -> Result<Vec<String>, SearchError> {
//!     if q.is_empty() { return Err(SearchError::Upstream) }
//!     Ok(vec![format!("hit for {q}")])
//! }
//!
//! for _ in 0..3 { let _ = search(""); } // the third consecutive failure trips
//! assert!(matches!(search("rust"), Err(SearchError::Open(_)))); // body not run
//! ```
//!
//! The attribute puts the fn behind the breaker of its `group` in the process-wide
//! [`registry()`]. While the circuit is closed every call runs and its outcome is
//! recorded; once the failure policy trips, calls are refused without running the
//! body until `open_ms` has passed, then a probe decides whether to close again.
//! The runtime underneath is [`Breaker`], [`Registry`] and [`Config`]; they can be
//! used directly too (re-exported here from `breaker_core`). Coming from
//! resilience4j, Polly or failsafe-go? [`migrating`] maps their settings to
//! these keys and says what behaves differently.
//!
//! The attribute's keys, what it records, what an open circuit returns and
//! what it refuses at compile time are on its own page:
//! [`#[circuit_breaker]`](macro@circuit_breaker). The integrations are features
//! (none is on by default):
//!
//! # Feature flags
//!
//! | feature | adds | for |
//! |---|---|---|
//! | `config` | [`config_file`]: a TOML file and `BREAKER_` variables layered over the attributes, checked at start-up; [`declare_group!`] for groups made at run time | per-environment configuration |
//! | `serde` | `config`, and [`config_file::Settings`] deserializes from any self-describing serde format, checked as the file is | breaker tables inside the app's own configuration |
//! | `prometheus` | [`observe::prometheus`]: a `prometheus-client` collector of every breaker, read at scrape time | `/metrics` |
//! | `metrics` | [`observe::metrics`]: the same series through the `metrics` facade | any `metrics` exporter |
//! | `otel` | [`observe::otel`]: the same series as OpenTelemetry observable instruments, with `resilience.*` attributes; [`observe::span`]'s fields as span attributes through `tracing-opentelemetry` (turns on `tracing`) | any OpenTelemetry exporter (OTLP) |
//! | `tracing` | [`observe::tracing`]: one structured `tracing` event per transition and conflict; [`observe::span`]: each guarded call's verdict and outcome on its span, for the groups that opt in | logs, traces |
//! | `tower` | [`tower`]: `CircuitBreakerLayer` for any tower service, HTTP response classification, retries on the group's budget | tower and hyper servers and clients |
//! | `axum` | [`axum`]: an open circuit answers `503` with `Retry-After` (turns on `tower`) | axum routes |
//! | `reqwest` | [`reqwest`]: a `reqwest-middleware` middleware, a breaker per group or per host, retries of idempotent requests (turns on `tower` and `tokio`) | outgoing HTTP |
//! | `tonic` | [`tonic`]: `CircuitBreakerLayer` for a tonic `Channel` or server, judging calls by `grpc-status` in headers or trailers; a refusal answered `UNAVAILABLE` (turns on `tower` and `tokio`) | gRPC clients and servers |
//! | `tokio` | [`timeout::Tokio`], the timer `timeout_ms` uses by default | `timeout_ms` on tokio |
//! | `admin` | [`admin`]: an axum router (or tower service) that lists, forces and resets breakers behind a bearer token, keeps a ring of recent events with a server-sent stream, and answers an opt-in `/health` | operators |
//! | `testing` | [`testing`]: a registry and clock of a test's own for the attributes its code reaches, tokio's paused clock, forcing, scripted outcomes, transition assertions, replay of recorded traces | tests (`[dev-dependencies]`) |
//!
//! # Operating breakers
//!
//! - **The admin router** (feature `admin`, [`admin`]): mount it in your
//!   axum app to list every breaker as JSON, force or reset one behind a bearer
//!   token, read recent events (also as a server-sent stream) and an opt-in `/health`.
//! - **The status page** (`GET /` of the admin router): one self-contained HTML page,
//!   no CDN, with each circuit's state, a timeline of the last minutes, the rejection
//!   and probe success rates and flapping, live from the event stream.
//! - **The dashboard** (`dashboards/breakerbox.json` in the repository): a Grafana
//!   dashboard of the Prometheus series: a state timeline, the rejection and probe
//!   success rates, flapping, p99 latency, and each keyed group's worst keys.
//! - **The alerts** (`dashboards/alerts.yml`): Prometheus rules for a circuit open
//!   too long, flapping, probes that mostly fail and a stale or never-reached
//!   fleet store, with `promtool test rules` unit tests beside them
//!   (`dashboards/alerts.test.yml`).
//!
//! Every feature builds on the crate's `rust-version` (1.85) with a lockfile
//! resolved by cargo's MSRV-aware resolver (`resolver = "3"`, or
//! `incompatible-rust-versions = "fallback"`). Without it, cargo picks the newest
//! `url`/`icu` crates under `reqwest`, which need Rust 1.88.
//!
//! # Async, and tests with a manual clock
//!
//! ```
//! use std::sync::LazyLock;
//! use std::time::Duration;
//! use breakerbox::{circuit_breaker, CallError, ManualClock, Registry, State};
//!
//! static CLOCK: LazyLock<ManualClock> = LazyLock::new(ManualClock::new);
//! static REGISTRY: LazyLock<Registry> = LazyLock::new(|| Registry::with_clock(CLOCK.clone()));
//!
//! #[circuit_breaker(group = "users", threshold = 1, open_ms = 5_000, registry = &REGISTRY)]
//! async fn fetch_user(id: u32) -> Result<String, CallError<&'static str>> {
//!     if id == 0 { Err(CallError::Inner("no such user")) } else { Ok(format!("user {id}")) }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let _ = fetch_user(0).await;
//! assert_eq!(REGISTRY.get("users").unwrap().state(), State::Open);
//! assert!(fetch_user(1).await.unwrap_err().is_open());
//! CLOCK.advance(Duration::from_secs(5));
//! assert_eq!(fetch_user(1).await.unwrap(), "user 1"); // the probe closes it
//! assert_eq!(REGISTRY.get("users").unwrap().state(), State::Closed);
//! # });
//! ```
//!
//! # Groups, config and speed
//!
//! The first call of a group creates its breaker from the config its attribute
//! declared, unless the registry was given one with [`Registry::configure`]
//! before, which wins. Two attributes declaring different configs for one group
//! share the first one's breaker, and the mismatch is listed by
//! [`Registry::conflicts`]. After its first call, each annotated fn reaches its
//! breaker through a per-fn static, with no hashing and no registry lock (a
//! keyed fn reaches its group so, then hashes its key).
//!
//! A call that only counts (admitted, and its outcome moves no state) takes no
//! lock and allocates nothing. Two kinds of call do more:
//!
//! - a call whose outcome changes the breaker's state (the failure that trips
//!   it, a probe's verdict, a reopen) takes the breaker's transition mutex for
//!   that change, and the breaker's first transition allocates its event hub;
//! - a thread's first call into a breaker may allocate or grow the breaker's
//!   table of per-thread counters (one cache-padded cell per thread slot, up
//!   to the highest slot that has counted in it).
//!
//! # The traffic ramp
//!
//! A probe's success closes the circuit, and every call then goes to a
//! dependency that has just come back: cold caches, a fresh pool, half its
//! replicas. It takes the full load at once, often falls over again, and the
//! circuit flaps. With `ramp_ms`, the close admits a share of the calls that
//! rises linearly from none (only the probes went while half-open) to every
//! call at `ramp_ms`:
//!
//! ```text
//!  share of calls admitted
//!  1.0 |                    .------------- closed: every call
//!      |                  .'
//!  0.5 |              . '          share(t) = (t - closed_at) / ramp_ms
//!      |          . '
//!  0.0 |______. '_______________________ t
//!      open  closed_at        closed_at + ramp_ms
//! ```
//!
//! - **Exact, not random.** Each claim adds its share to a credit, and the claim
//!   that carries the credit past a whole call is admitted: of any `n`
//!   consecutive calls the number admitted is the curve's share of them to
//!   within one call. One atomic add per claim, no lock, no random draw, so a
//!   test on a [`ManualClock`] asserts exact counts.
//! - **A refusal of its own.** A call not admitted is refused at once with
//!   [`OpenReason::Ramping`], answered by the fallback like any refusal, and
//!   counted in `rejected` and `ramp_refused`. Its `retry_after` is the moment a
//!   call made then (with none between) would be admitted. The `tower` layer,
//!   axum's `503` with `Retry-After` and the `reqwest` middleware carry it too.
//! - **Judged as closed.** The state is [`State::Closed`] throughout, and the
//!   failure policy judges the admitted calls as usual. A trip during the ramp
//!   means the dependency did not recover: it reopens with the grown open
//!   duration of a failed probe. A ramp that runs its length resets that
//!   backoff: the next trip opens for `open_ms`.
//! - **Seen.** The close's [`Transition`](events::Transition) carries the ramp's length
//!   (`ramp`); [`Metrics::ramp`](metrics::Metrics::ramp) and [`Metrics::admitted_share`](metrics::Metrics::admitted_share) show it while it
//!   runs, and the exporters publish `breaker_admitted_share`.
//! - **Everywhere.** Each key of a keyed group ramps on its own; with a fleet
//!   agent, every instance ramps from the fleet's close. A live change of
//!   `ramp_ms` applies from the next close.
//! - **Free when unused.** Without `ramp_ms` the closed path runs no step of
//!   the ramp; during a ramp each claim reads the clock and takes the credit
//!   (`benches/README.md` gives the cost).
//!
//! ```
//! use std::time::Duration;
//! use breakerbox::{Breaker, Config, ManualClock, OpenReason, State};
//!
//! let clock = ManualClock::new();
//! let config = Config::builder()
//!     .threshold(1)
//!     .open_duration(Duration::from_secs(1))
//!     .ramp(Duration::from_secs(10))
//!     .build()?;
//! let breaker = Breaker::with_clock("inventory", config, clock.clone());
//! breaker.try_acquire()?.failure(); // trips
//! clock.advance(Duration::from_secs(1));
//! breaker.try_acquire()?.success(); // the probe closes the circuit
//! assert_eq!(breaker.state(), State::Closed);
//!
//! clock.advance(Duration::from_millis(2_500)); // a quarter of the way
//! let admitted = (0..100).filter(|_| match breaker.try_acquire() {
//!     Ok(permit) => { permit.success(); true }
//!     Err(refused) => { assert_eq!(refused.reason(), OpenReason::Ramping); false }
//! }).count();
//! assert_eq!(admitted, 25);
//! assert_eq!(breaker.metrics().admitted_share(), 0.25);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Shadow mode
//!
//! A threshold chosen at a desk is a guess. Shadow mode (`shadow = true`) lets
//! a group run its real policy against production traffic without refusing
//! anything: it counts, trips, probes, closes, tells its events and exports
//! as usual, but every claim it would refuse (open, half-open with every probe
//! slot taken, held back by a ramp) runs as an ordinary call and is counted in
//! [`Metrics::shadow_refused`](metrics::Metrics::shadow_refused). Read that
//! count and the transitions for a while, adjust the thresholds, then switch
//! shadow mode off, live, and the same breaker enforces. (Resilience4j's
//! `METRICS_ONLY` state and Envoy's `enforcing_*` percentages serve the same
//! purpose.)
//!
//! - **The call runs.** The fn's body runs on every call and its outcome is
//!   counted. A call admitted in place of a refusal
//!   ([`Permit::is_shadow_call`](breaker::Permit::is_shadow_call)) never moves
//!   the breaker: it is not a probe, and while open its failure does not
//!   reopen anything (a ramp's call is judged as any closed call). The
//!   fallback never answers it: with `fallback_on = "failure"` its error is
//!   returned as it is, and it runs without `timeout_ms`'s deadline, whose
//!   only answer there would be the fallback.
//! - **Two refusals stay.** A full bulkhead (`max_concurrent`) still refuses:
//!   it protects this process, not the dependency. A forced open still
//!   refuses: it is an operator's order, not a threshold being tuned.
//! - **Switched live**, keeping state and counts: [`Breaker::set_shadow`],
//!   [`KeyedGroup::set_shadow`](keyed::KeyedGroup::set_shadow) (every key and
//!   the keys to come), the admin router's `POST /breakers/{group}/shadow`
//!   (feature `admin`), or a config reload that changes `shadow`.
//! - **Free when off.** The mode is a bit of the breaker's state word that no
//!   test of the closed path reads and that takes a shadow breaker's open word
//!   off the refusal's fast path: with it off, the closed and open paths run
//!   no step of it (`benches/README.md`, `shadow_open`, gives the cost of a
//!   shadow call while open).
//!
//! ```
//! use breakerbox::{Breaker, Config, State};
//!
//! let config = Config::builder().threshold(2).shadow(true).build()?;
//! let breaker = Breaker::new("recommendations", config);
//! for _ in 0..2 {
//!     breaker.try_acquire()?.failure();
//! }
//! assert_eq!(breaker.state(), State::Open); // it would refuse now...
//! breaker.try_acquire()?.success(); // ...and admits instead
//! assert_eq!(breaker.metrics().shadow_refused, 1);
//! breaker.set_shadow(false); // enforce
//! assert!(breaker.try_acquire().is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Keyed breakers
//!
//! `key = expr` gives the group one breaker per value of `expr` (a host, a
//! tenant, a shard), each with the group's config: one host going down opens
//! that host's breaker while the others keep running.
//!
//! ```
//! use std::sync::LazyLock;
//! use breakerbox::{circuit_breaker, CallError, ManualClock, Registry};
//!
//! static REGISTRY: LazyLock<Registry> = LazyLock::new(|| Registry::with_clock(ManualClock::new()));
//!
//! #[circuit_breaker(group = "upstream", key = host, max_keys = 10_000, threshold = 2, registry = &REGISTRY)]
//! fn fetch(host: &str, path: &str) -> Result<String, CallError<String>> {
//!     if host == "down.example" { return Err(CallError::Inner(format!("{host} refused"))) }
//!     Ok(format!("https://{host}{path}"))
//! }
//!
//! for _ in 0..2 { let _ = fetch("down.example", "/"); }
//! assert!(fetch("down.example", "/").unwrap_err().is_open()); // this host's breaker is open
//! assert!(fetch("up.example", "/").is_ok());                 // the others run
//!
//! let upstream = &REGISTRY.keyed_metrics()[0];
//! assert_eq!((upstream.group, upstream.keys, upstream.open), ("upstream", 2, 1));
//! let hosts = REGISTRY.get_keyed::<String>("upstream").unwrap().unwrap();
//! assert_eq!(hosts.keys().len(), 2);
//! ```
//!
//! - **What a key is.** The expression is evaluated before the body and
//!   borrowed, so it may use the arguments the body then takes by value. Its
//!   type implements [`AsKey`]: strings, integers, `char`, `bool`, IP and socket
//!   addresses, references to those, and 2- and 3-tuples of owned keys; a type
//!   of your own implements it in four lines. `&str`, `String` and `Arc<str>`
//!   keys are all `String` keys: fns passing either share the group's breakers.
//! - **The cost.** A call to a key the group holds hashes the key once, finds
//!   it in a lock-free map (never waiting, not even while other keys are
//!   created or evicted) and clones the key's breaker handle (`benches/README.md`
//!   gives the cost beside an unkeyed call); it allocates nothing and interns
//!   nothing beyond what any breaker's call may (see above: a trip, a thread's
//!   first call). A new key allocates its breaker and its owned key.
//! - **Bounded memory.** Past `max_keys` (default 10 000), creating a key
//!   evicts idle, closed breakers, about least recently used first. An open,
//!   half-open or forced breaker, or one with a call in flight, is never
//!   evicted, so the group may hold more keys than `max_keys` while many are
//!   open. An evicted key that comes back starts closed, with fresh counts;
//!   the group's summed counts keep what evicted keys did.
//! - **Everything else as for a group.** Every way out is recorded against
//!   the call's key; an open key returns the fallback's value or
//!   `Err(CircuitOpen.into())`; `max_concurrent` caps each key's calls in
//!   flight, `timeout_ms` each call.
//! - **Finding them.** [`Registry::keyed_metrics`] lists every keyed group with
//!   its keys by state and its summed counts (the Prometheus and `metrics`
//!   exporters export these); [`Registry::get_keyed`] gives a group with its
//!   key type, to list its keys or inspect one.
//!
//! **One key type per group.** Two fns keying one group by types with
//! different owned forms (`String` and `u64`) are a programming error: the
//! first call that meets the second type panics, naming the group and both
//! types. **Keyed and unkeyed groups are separate**: a keyed group and an
//! unkeyed group of the same name are two things, listed apart
//! ([`Registry::keyed_metrics`], [`Registry::snapshot`]), though both take
//! that name's configuration. A key type's `Hash` and `Eq` must not panic
//! (see [`keyed::KeyedGroup`]). A keyed group's config
//! is its first call site's (two sites declaring different configs are a
//! [`registry::Conflict`], as for unkeyed groups), and configuration reaches it as it
//! does an unkeyed group: [`Registry::configure`] before first use, and a
//! config file or environment variables ([`Registry::apply_config`]) at any time,
//! reconfiguring the keys held and building new ones with it
//! ([`keyed::KeyedGroup::reconfigure`]).
//!

// The feature table's links: to this build's modules where the feature is on,
// to their docs.rs pages where it is off.
#![cfg_attr(feature = "config", doc = "[`config_file`]: crate::config_file")]
#![cfg_attr(
    not(feature = "config"),
    doc = "[`config_file`]: https://docs.rs/breakerbox/latest/breakerbox/config_file/"
)]
#![cfg_attr(
    feature = "config",
    doc = "[`config_file::Settings`]: crate::config_file::Settings"
)]
#![cfg_attr(
    not(feature = "config"),
    doc = "[`config_file::Settings`]: https://docs.rs/breakerbox/latest/breakerbox/config_file/struct.Settings.html"
)]
#![cfg_attr(
    feature = "prometheus",
    doc = "[`observe::prometheus`]: crate::observe::prometheus"
)]
#![cfg_attr(
    not(feature = "prometheus"),
    doc = "[`observe::prometheus`]: https://docs.rs/breakerbox/latest/breakerbox/observe/prometheus/"
)]
#![cfg_attr(
    feature = "metrics",
    doc = "[`observe::metrics`]: crate::observe::metrics"
)]
#![cfg_attr(
    not(feature = "metrics"),
    doc = "[`observe::metrics`]: https://docs.rs/breakerbox/latest/breakerbox/observe/metrics/"
)]
#![cfg_attr(feature = "otel", doc = "[`observe::otel`]: crate::observe::otel")]
#![cfg_attr(
    not(feature = "otel"),
    doc = "[`observe::otel`]: https://docs.rs/breakerbox/latest/breakerbox/observe/otel/"
)]
#![cfg_attr(
    feature = "tracing",
    doc = "[`observe::tracing`]: crate::observe::tracing"
)]
#![cfg_attr(feature = "tracing", doc = "[`observe::span`]: crate::observe::span")]
#![cfg_attr(
    not(feature = "tracing"),
    doc = "[`observe::span`]: https://docs.rs/breakerbox/latest/breakerbox/observe/span/"
)]
#![cfg_attr(
    not(feature = "tracing"),
    doc = "[`observe::tracing`]: https://docs.rs/breakerbox/latest/breakerbox/observe/tracing/"
)]
#![cfg_attr(feature = "tower", doc = "[`tower`]: crate::tower")]
#![cfg_attr(
    not(feature = "tower"),
    doc = "[`tower`]: https://docs.rs/breakerbox/latest/breakerbox/tower/"
)]
#![cfg_attr(feature = "axum", doc = "[`axum`]: crate::axum")]
#![cfg_attr(
    not(feature = "axum"),
    doc = "[`axum`]: https://docs.rs/breakerbox/latest/breakerbox/axum/"
)]
#![cfg_attr(feature = "tonic", doc = "[`tonic`]: crate::tonic")]
#![cfg_attr(
    not(feature = "tonic"),
    doc = "[`tonic`]: https://docs.rs/breakerbox/latest/breakerbox/tonic/"
)]
#![cfg_attr(feature = "reqwest", doc = "[`reqwest`]: crate::reqwest")]
#![cfg_attr(
    not(feature = "reqwest"),
    doc = "[`reqwest`]: https://docs.rs/breakerbox/latest/breakerbox/reqwest/"
)]
#![cfg_attr(feature = "tokio", doc = "[`timeout::Tokio`]: crate::timeout::Tokio")]
#![cfg_attr(
    not(feature = "tokio"),
    doc = "[`timeout::Tokio`]: https://docs.rs/breakerbox/latest/breakerbox/timeout/struct.Tokio.html"
)]
#![cfg_attr(feature = "admin", doc = "[`admin`]: crate::admin")]
#![cfg_attr(
    not(feature = "admin"),
    doc = "[`admin`]: https://docs.rs/breakerbox/latest/breakerbox/admin/"
)]
#![cfg_attr(feature = "testing", doc = "[`testing`]: crate::testing")]
#![cfg_attr(
    not(feature = "testing"),
    doc = "[`testing`]: https://docs.rs/breakerbox/latest/breakerbox/testing/"
)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]
// docs.rs builds with `--cfg docsrs` (nightly): each gated item's page says
// which feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The attribute on a fn (free, method, associated, generic, `async`, or
/// ending in an `async move` block) sends every call through the breaker of its
/// `group` in [`registry()`] (or the registry the `registry` key names); the
/// [crate overview](crate) opens with a complete example.
///
/// ```
/// use breakerbox::{circuit_breaker, CallError};
///
/// #[circuit_breaker(group = "inventory", threshold = 2, open_ms = 10_000)]
/// fn stock(sku: u32) -> Result<u32, CallError<String>> {
///     if sku == 0 { Err(CallError::Inner("no such sku".into())) } else { Ok(7) }
/// }
///
/// for _ in 0..2 { let _ = stock(0); } // the second consecutive failure trips
/// assert!(stock(1).unwrap_err().is_open()); // refused: the body does not run
/// ```
///
/// # Keys
///
/// Every key except `group` is optional. Each numeric key calls the [`Config`]
/// builder method of the same name, so the attribute and code configuration mean
/// the same thing; the values are checked by that builder when the attribute
/// expands, and a refused value is a compile error on its key.
///
/// | key | type | default | meaning |
/// |---|---|---|---|
/// | `group` | string literal | required | name of the breaker; call sites naming one group share one breaker; the value of the `name` label of every Prometheus and `metrics` series, and the `group` of events, admin JSON and [`CircuitOpen::group`] |
/// | `threshold` | integer (`u32`) | 5 | consecutive failures that open the circuit (`3`: the third trips) |
/// | `failure_rate` | number (`f64`) | 0.5 with a window | share of failures in the window that opens the circuit, in `(0, 1]` |
/// | `window_ms` | integer (`u64`) | none | judge `failure_rate` over the last `window_ms` milliseconds (time window) |
/// | `window_calls` | integer (`u32`) | none | judge `failure_rate` over the last `window_calls` outcomes (count window) |
/// | `min_calls` | integer (`u32`) | 10 (time), `window_calls` (count) | outcomes a window must hold before it judges |
/// | `slow_call_ms` | integer (`u64`) | none | a call longer than this is slow; needs a window |
/// | `slow_call_rate` | number (`f64`) | 1.0 | share of slow calls in the window that opens the circuit |
/// | `open_ms` | integer (`u64`) | 30 000 | how long the circuit stays open before a probe may go |
/// | `half_open_probes` | integer (`u32`) | 1 | probes in flight at once while half-open |
/// | `successes_to_close` | integer (`u32`) | 1 | probe successes that close the circuit |
/// | `backoff` | number (`f64`) | 1.0 | factor the open time grows by after each failed probe (`>= 1.0`) |
/// | `max_open_ms` | integer (`u64`) | max(`open_ms`, 300 000) | cap on the grown open time |
/// | `probe_timeout_ms` | integer (`u64`) | 30 000 | a probe in flight longer loses its slot; its late outcome is stale |
/// | `timeout_ms` | integer (`u64`) | none | async fns only: a call still running after this is dropped, counts as a failure and returns `Err(TimedOut.into())` (see [`timeout`]) |
/// | `max_concurrent` | integer (`u32`) | none | bulkhead: calls of the group in flight at once; one over the cap is refused like an open circuit, with [`OpenReason::BulkheadFull`] |
/// | `latency_p99_ms` | integer (`u64`) | none | open when the window's p99 latency is above this, even if every call succeeds; needs a window |
/// | `ramp_ms` | integer (`u64`) | none | after a close, admit a share of calls that rises linearly from none to all over this; the others are refused at once with [`OpenReason::Ramping`] (see [The traffic ramp](crate#the-traffic-ramp)) |
/// | `jitter` | number (`f64`) | 0.0 | share, in `[0, 1)`, by which each open is stretched or shortened at random: `0.2` opens for 80% to 120% of the duration |
/// | `shadow` | `true` or `false` | `false` | shadow mode: the fn's body runs on every call, and the fallback never answers a call admitted in place of a refusal (its failure, or its deadline, with `fallback_on = "failure"`); what the breaker would have refused is counted in `shadow_refused` (see [Shadow mode](crate#shadow-mode)) |
/// | `histogram_ms` | integer (`u64`) | none | keep a call-duration histogram by outcome, buckets at 1, 2.5 and 5 times each power of ten of milliseconds up to this (`10_000`: 1 ms to 10 s), exported as `breaker_calls_seconds`; fixed for the breaker's life |
/// | `systemic_share` | number (`f64`) | none | keyed groups (`key = ..`): the share of the keys, in `(0, 1]`, failing at once that opens the whole group, every key then refused with [`OpenReason::Group`] and one probe going for the group (see [`KeyedGroup::group_breaker`](keyed::KeyedGroup::group_breaker)) |
/// | `max_open_keys` | number (`f64`) | none | keyed groups: the most keys open at once on their own, as a share in `(0, 1]` of the keys held; a trip past it opens the whole group instead |
/// | `fallback` | path, or `path(why)` | none | fn called with the same arguments when the circuit refuses (see [Fallbacks](#fallbacks)); `path(why)` passes a [`Fallback`] saying why as one more, last, argument |
/// | `fallback_on` | `"refusal"` or `"failure"` | `"refusal"` | what the fallback answers: refusals only (open, half-open full, forced, bulkhead full), or also timeouts and the errors `is_failure` counts as failures (never an ignored error, never a panic); needs `fallback` |
/// | `is_failure` | path to `fn(&E) -> bool` | every `Err` fails | which errors count as failures; the rest are ignored |
/// | `registry` | expression of type `&Registry` | [`registry()`] | the registry to use, e.g. `&TEST_REGISTRY` with a [`ManualClock`]; a call site caches the breaker of the first registry it meets, and looks others up on every call |
/// | `crate` | path | `::breakerbox` | where generated code finds this crate, for re-exporters |
/// | `timer` | path to a value implementing [`timeout::Timer`] | `breakerbox::timeout::Tokio` (feature `tokio`) | the timer `timeout_ms` races the call against and an async fn's `retry` waits on, for runtimes other than tokio |
/// | `key` | expression of the fn's arguments, of a type implementing [`AsKey`] | none | one breaker per value of the expression, all on the group's config (see [Keyed breakers](crate#keyed-breakers)) |
/// | `max_keys` | integer | 10 000 (with `key`) | the most idle keys the group keeps; needs `key` |
/// | `retry` | integer | none | up to this many more attempts after a failure the classifier counts, each one claim and one outcome; needs `idempotent = true` (see [Retries](#retries)) |
/// | `idempotent` | `true` or `false` | none | the promise `retry` needs: the call is safe to repeat; `retry` without it, or with `false`, is a compile error; `true` alone runs a retry loop of no retries that a configuration file may raise |
/// | `retry_backoff_ms` | integer | 50 | the first retry waits a uniformly random share of this ("full jitter"), each later one of twice the one before; needs `retry` |
/// | `retry_cap_ms` | integer | 2 000 | cap on a retry's backed-off bound (an error's [`RetryAfterHint`] may still ask for longer); needs `retry` |
/// | `retry_deadline_ms` | integer | none | no wait that would end later than this after the first attempt: the last error is returned instead; needs `retry` |
/// | `retry_budget_ratio` | number in `[0, 1]` | 0.2 | the share of the group's first attempts its retry budget lets retry; needs `retry` |
/// | `retry_budget_floor` | integer | 10 | retries a second the group's budget allows whatever the traffic; needs `retry` |
///
/// `threshold` selects the consecutive-failure policy; `window_ms` or
/// `window_calls` (not both) selects a rate window instead, and `threshold` may
/// then not be set. The builder's rules between keys are checked the same way.
///
/// # Retries
///
/// `retry = N` (with `idempotent = true`) runs the body again after a failure,
/// up to `N` times, in this order, outermost first: the bulkhead (one place
/// for the whole call) > the retries > the breaker (one claim and one outcome
/// per attempt, so each attempt counts in the window) > `timeout_ms` (per
/// attempt; a timed-out attempt is retried like a failure) > the body. A
/// refusal is never retried: it is answered at once, by the fallback or
/// `Err(CircuitOpen.into())`; no retry starts once a failure opened the
/// circuit; an error `is_failure` ignores is returned at once. A fallback runs
/// once, after the last attempt. The wait is on the breaker's clock in a sync
/// fn ([`Clock::sleep`](clock::Clock::sleep): a [`ManualClock`] advances by it
/// and returns at once) and on `timer` in an async fn; an error implementing
/// [`RetryAfterHint`] sets the next wait's floor. Retries of the group share
/// one budget, kept with the group ([`Breaker::group_retry`]): every fn of the
/// group, every key of a keyed group and every integration retrying for it:
/// at most `retry_budget_ratio` (20%) of the group's first attempts plus
/// `retry_budget_floor` (10) per second ([`RetryPolicy`]); past it the call
/// ends with its own error, counted in `retries_budget_exhausted`. The first
/// retried call of the group makes the budget from its fn's keys; a fn of the
/// group declaring other retry keys is logged once at `warn`, and the first
/// declaration holds. The body runs once per
/// attempt and borrows the arguments, so it may not move one out. Code
/// retries a call by hand with [`Breaker::call_retrying`].
///
/// A configuration file and `BREAKER_` variables take the same retry keys
/// (see [`config_file`][config-retries]), over the attribute's
/// literals and live: `retry = 0` for the group turns its retries off. They
/// are taken only by a fn that runs a retry loop: one that names `retry`, or
/// says `idempotent = true` alone (no retry keys of its own: it runs its
/// group's, those another fn of the group declares or the file's, whichever
/// fn calls first). Such a fn's calls pay the retry path's first attempt (the
/// `retry_first_attempt_ok` row of `benches/README.md`); a fn without
/// `idempotent` pays nothing for it.
///
/// ```
/// use breakerbox::{circuit_breaker, CircuitOpen};
///
/// #[derive(Debug)]
/// enum Error { Busy, Open(CircuitOpen) }
/// impl From<CircuitOpen> for Error {
///     fn from(open: CircuitOpen) -> Self { Error::Open(open) }
/// }
///
/// #[circuit_breaker(group = "inventory", retry = 2, idempotent = true, retry_backoff_ms = 1)]
/// fn stock(sku: &str) -> Result<u32, Error> {
///     # let _ = Error::Busy;
///     Ok(sku.len() as u32)
/// }
/// assert_eq!(stock("A-1").unwrap(), 3);
/// ```
///
/// # What is recorded
///
/// Each admitted call records exactly one outcome, however it leaves the fn:
///
/// - a fn returning `Result<T, E>` (under any name, `io::Result` or a local
///   `type Result` too): `Ok` is a success, `Err` a failure, unless `is_failure`
///   says the error is ignored (neither success nor failure: a 404, a validation
///   error). Every `?` and `return` counts like the value it returns.
/// - any other return type: a success.
/// - a panic: a failure, and the panic goes on unchanged.
/// - an async call whose future is dropped before it finishes (a timeout, a lost
///   `select!` branch, an aborted task): *abandoned*, counted in metrics as such,
///   and a probe slot it held is freed.
///
/// An `async fn`, or a fn ending in `async move { .. }`,
/// `Box::pin(async move { .. })` (as `#[async_trait]` writes it) or
/// `async move { .. }.boxed()`, claims the breaker when its future first runs, not
/// when it is created; the future is `Send` whenever the body's is. A fn that
/// returns a future made elsewhere (`-> impl Future { other() }`) is refused at
/// compile time: the attribute could only record when the future was created.
///
/// # When the circuit is open
///
/// The body does not run. Without a fallback the fn must return `Result<_, E>`
/// with `E: From<CircuitOpen>`, and returns `Err(CircuitOpen.into())`;
/// [`CircuitOpen`] tells the group, the reason and `retry_after`. With a
/// fallback, the fallback's value is returned.
///
/// # Fallbacks
///
/// A fallback is a fn called with the same arguments as the guarded fn (a
/// method's gets the receiver first), whose value the guarded fn returns
/// (awaited for an async fn). Two keys choose its form:
///
/// | attribute | called on | the fallback's parameters |
/// |---|---|---|
/// | `fallback = cached` | refusals | the fn's |
/// | `fallback = cached(why)` | refusals | the fn's, then `why: Fallback<E>` |
/// | `fallback = cached, fallback_on = "failure"` | refusals, timeouts, failures | the fn's |
/// | `fallback = cached(why), fallback_on = "failure"` | refusals, timeouts, failures | the fn's, then `why: Fallback<E>` |
///
/// - **Refusals** are every claim the breaker refuses: open, half-open with
///   every probe slot taken, forced open, and a full bulkhead (`max_concurrent`);
///   [`Fallback::Refused`] carries the [`CircuitOpen`] and its
///   [`reason`](CircuitOpen::reason).
/// - **Failures** (`fallback_on = "failure"`) are a timeout (`timeout_ms`,
///   [`Fallback::TimedOut`]) and an `Err` the classifier counts as a failure
///   ([`Fallback::Failed`] with the error; every `Err` without `is_failure`). An
///   error `is_failure` ignores is returned as it is, and so is a success.
/// - **Shadow mode** (`shadow = true`): a call the breaker would have refused
///   runs, and whatever it returns is the caller's answer: the fallback
///   answers no failure of such a call, and with `timeout_ms` such a call
///   runs without the deadline (it has no answer for it but the fallback's).
///   The group's other calls are answered as above.
/// - **A panic** is recorded as a failure and goes on unwinding: no fallback
///   answers it.
/// - **Never counted.** The call's outcome (a failure, a timeout, a refusal) is
///   recorded before the fallback runs; what the fallback returns is never an
///   outcome of the breaker, in any form: not a success, not a probe's verdict.
/// - **The arguments after the call.** A failure fallback gets the arguments
///   the body ran with, so the body borrows the arguments instead of taking
///   them: a body that moves an owned argument away is a compile error at the
///   fallback path ("use of moved value"); take that argument by reference, or
///   clone it in the body. A fn ending in `async move { .. }` hands its
///   arguments to that block, so it answers refusals only.
/// - **Where the name is looked up.** In a method, a bare name means
///   `Self::name` (`fallback = cached` calls `Self::cached(self, ..)`); name a
///   free fn by its path (`fallback = self::cached`), and it gets the receiver
///   first too. A bare name in a method that is also a fn of the module with
///   the fallback's signature is a compile error at the name asking for
///   `self::name` or `Self::name`, so a fallback meant as the module's fn is
///   told how to write it. A path
///   may carry generics (`fallback = cache::get::<T>`).
/// - **Keyed fns** answer as unkeyed ones: the refusal or failure is the key's.
///
/// Refusals, with the same arguments:
///
/// ```
/// use breakerbox::circuit_breaker;
///
/// struct Catalog { cache: Vec<String> }
///
/// impl Catalog {
///     #[circuit_breaker(group = "catalog", fallback = cached)]
///     fn list(&self, page: usize) -> Vec<String> {
///         vec![format!("live page {page}")]
///     }
///
///     fn cached(&self, page: usize) -> Vec<String> {
///         self.cache.iter().skip(page * 10).take(10).cloned().collect()
///     }
/// }
/// # assert_eq!(Catalog { cache: vec![] }.list(0), ["live page 0"]);
/// ```
///
/// Refusals, told why: a full bulkhead sheds load instead of serving stale data.
///
/// ```
/// use breakerbox::{circuit_breaker, CallError, Fallback, OpenReason};
///
/// #[circuit_breaker(group = "prices", max_concurrent = 64, fallback = last_known(why))]
/// fn price(sku: u32) -> Result<u64, CallError<String>> {
///     Ok(u64::from(sku) * 100)
/// }
///
/// fn last_known(sku: u32, why: Fallback<CallError<String>>) -> Result<u64, CallError<String>> {
///     match why {
///         Fallback::Refused(open) if open.reason() == OpenReason::BulkheadFull => Err(open.into()),
///         _ => Ok(u64::from(sku) * 90),
///     }
/// }
///
/// assert_eq!(price(2).unwrap(), 200);
/// breakerbox::registry().force_open("prices").unwrap();
/// assert_eq!(price(2).unwrap(), 180); // forced open: the last known price
/// ```
///
/// Failures too, with the same arguments:
///
/// ```
/// use breakerbox::{circuit_breaker, CallError};
///
/// #[circuit_breaker(group = "avatars", fallback = placeholder, fallback_on = "failure")]
/// fn avatar(user: &str) -> Result<String, CallError<String>> {
///     if user.is_empty() { return Err(CallError::Inner("no such user".into())) }
///     Ok(format!("https://img.example/{user}.png"))
/// }
///
/// fn placeholder(_user: &str) -> Result<String, CallError<String>> {
///     Ok("https://img.example/anonymous.png".into())
/// }
///
/// assert_eq!(avatar("").unwrap(), "https://img.example/anonymous.png"); // failed, then answered
/// assert_eq!(breakerbox::registry().get("avatars").unwrap().metrics().failures, 1);
/// ```
///
/// Failures too, told why, on an async fn with a deadline and a classifier:
///
/// ```
/// use breakerbox::{circuit_breaker, CircuitOpen, Fallback, TimedOut};
///
/// #[derive(Debug)]
/// enum ApiError { NotFound, Unavailable, Open(CircuitOpen), Late(TimedOut) }
/// impl From<CircuitOpen> for ApiError { fn from(e: CircuitOpen) -> Self { ApiError::Open(e) } }
/// impl From<TimedOut> for ApiError { fn from(e: TimedOut) -> Self { ApiError::Late(e) } }
///
/// fn server_side(e: &ApiError) -> bool { !matches!(e, ApiError::NotFound) }
///
/// #[circuit_breaker(group = "profiles", is_failure = server_side,
///                   fallback = cached(why), fallback_on = "failure")]
/// async fn profile(id: u32) -> Result<String, ApiError> {
///     match id {
///         0 => Err(ApiError::NotFound),    // ignored: returned as it is
///         1 => Err(ApiError::Unavailable), // a failure: answered by `cached`
///         _ => Ok(format!("profile {id}")),
///     }
/// }
///
/// async fn cached(id: u32, why: Fallback<ApiError>) -> Result<String, ApiError> {
///     match why {
///         Fallback::Failed(ApiError::Unavailable) => Ok(format!("cached profile {id}")),
///         Fallback::Refused(open) => Err(open.into()),
///         Fallback::TimedOut(late) => Err(late.into()),
///         Fallback::Failed(other) => Err(other),
///         _ => Err(ApiError::Unavailable), // `Fallback` is `#[non_exhaustive]`
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert!(matches!(profile(0).await, Err(ApiError::NotFound)));
/// assert_eq!(profile(1).await.unwrap(), "cached profile 1");
/// # });
/// ```
///
/// **From resilience4j.** `@CircuitBreaker(name = "search", fallbackMethod =
/// "cached")` with `List<String> cached(String q, Throwable t)` is
/// `#[circuit_breaker(group = "search", fallback = cached(why), fallback_on =
/// "failure")]` with `fn cached(q: &str, why: Fallback<E>) -> Result<Vec<String>, E>`:
/// the same arguments, and the exception as `why`, where
/// `CallNotPermittedException` is [`Fallback::Refused`], a `TimeLimiter`
/// timeout [`Fallback::TimedOut`] and the method's own exception
/// [`Fallback::Failed`]. Two differences: an error the classifier ignores
/// (resilience4j's `ignoreExceptions`) is returned, not handed to the
/// fallback, and the fallback's signature is checked when the crate compiles,
/// not when it is first called. A fallback without `why` is a `fallbackMethod`
/// that drops the exception parameter.
///
/// # Compile-time checks
///
/// Unknown keys (with a suggestion), repeated keys, wrong literal types, values
/// the builder refuses, a missing or empty `group`, use on anything but a fn with
/// a body, `const fn`, `-> !`, variadic fns, `max_keys` without `key` or set to
/// 0, a `key` whose type is no [`AsKey`] (on the key expression), a
/// future-returning fn whose body the attribute cannot see into, a tuple key
/// naming a borrowed parameter (`key = (host, port)` with `host: &str`: write
/// `host.to_owned()`, or key by `host` alone), a fallback on a fn returning
/// `impl Trait`, `fallback_on` without `fallback` or with another value, and
/// `fallback_on = "failure"` on a fn not returning a `Result` are all compile
/// errors pointing at the offending tokens. A fallback of another arity,
/// parameter type, return type or asyncness is one error at the fallback's
/// name that writes the expected signature out, ``fallback must be `fn(&str,
/// u32) -> Result<Vec<String>, ApiError>` ``, and names the fallback's own
/// signature; it suggests no edit. A return type that cannot
/// carry a refusal or a timeout says which `From` to add. A bad attribute still
/// emits the fn unchanged, and every argument error of one attribute shows in
/// one build.
///
/// ```compile_fail
/// #[breakerbox::circuit_breaker(group = "search", treshold = 3)] // did you mean `threshold`?
/// fn search() -> Result<(), breakerbox::CallError<()>> { Ok(()) }
/// ```
#[cfg_attr(
    feature = "config",
    doc = "[config-retries]: crate::config_file#retries"
)]
#[cfg_attr(
    not(feature = "config"),
    doc = "[config-retries]: https://docs.rs/breakerbox/latest/breakerbox/config_file/index.html#retries"
)]
pub use breaker_macros::circuit_breaker;

// What an application names: the runtime, its config, what a call returns,
// the test clock, and what a keyed attribute's key implements.
pub use breaker_core::{
    registry, AsKey, Breaker, CallError, CircuitOpen, Config, ConfigBuilder, ConfigError, Fallback,
    ManualClock, OpenReason, Registry, Retry, RetryAfterHint, RetryPolicy, State, TimedOut,
};

// Everything else lives in its module, each item at one path: the modules
// below hold what the root does not.
pub use breaker_core::{classify, events, fleet, metrics};
pub mod clock;
pub mod config;
pub mod keyed;
pub mod retry;

pub mod breaker {
    //! What a call through a [`Breaker`](crate::Breaker) holds: the [`Permit`]
    //! a claim returns (or the [`OwnedPermit`] that holds its breaker), the
    //! [`BulkheadSlot`] of `max_concurrent`, and the [`PolicyChange`] a live
    //! reconfiguration refuses.
    pub use breaker_core::{BulkheadSlot, OwnedPermit, Permit, PolicyChange};

    // The names `#[circuit_breaker]`'s compile errors mention. rustc names an
    // item by its bare name only when a path outside every hidden module
    // reaches it, and by its full path (`__private_v01::..`) otherwise: these
    // paths are that, and no part of the API.
    #[doc(hidden)]
    pub use crate::__private_v01::{
        keyed_site, Answer, AnsweredAny, AsyncFallbackFn0, AsyncFallbackFn1, AsyncFallbackFn2,
        AsyncFallbackFn3, AsyncFallbackFn4, AsyncFallbackFn5, AsyncFallbackFn6, AsyncFallbackFn7,
        AsyncFallbackFn8, Classified, ClassifiedAny, FallbackFn0, FallbackFn1, FallbackFn2,
        FallbackFn3, FallbackFn4, FallbackFn5, FallbackFn6, FallbackFn7, FallbackFn8, NoClassifier,
        NoFailure, OpenInto, OtherSignature, SameSignature, SeesIntoFuture, TimedOutInto,
        ViaFuture,
    };
}

pub mod registry {
    //! What a [`Registry`](crate::Registry) (the process-wide one is
    //! [`registry()`](crate::registry())) reports or is given: conflicting
    //! declarations ([`Conflict`]), configuration layered over them
    //! ([`Resolver`], [`Resolution`], [`Reconfigured`], [`DeclarationOverride`])
    //! and the errors of its operations.
    pub use breaker_core::{
        AlreadyCreated, ApplyConfigError, ConfigSource, Conflict, DeclarationOverride,
        Reconfigured, Resolution, Resolver, UnknownGroup,
    };
}

pub mod timeout;

pub mod migrating;

// The feature-gated step between an attribute's site and its registry.
mod testing_hook;

// A test's own registry and clock for the attributes its code reaches
// (feature `testing`); its own docs open the module.
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

// Configuration per environment: a TOML file and `BREAKER_` variables over the
// attributes (feature `config`); its own docs open the module.
#[cfg(feature = "config")]
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub mod config_file;

#[cfg(any(
    feature = "prometheus",
    feature = "metrics",
    feature = "otel",
    feature = "tracing"
))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(
        feature = "prometheus",
        feature = "metrics",
        feature = "otel",
        feature = "tracing"
    )))
)]
pub mod observe;

// The attribute's per-call span hooks: `observe::span` with feature `tracing`,
// nothing without.
mod span_hook;

// The integrations, each behind its feature; their docs are in their modules.
#[cfg(feature = "admin")]
#[cfg_attr(docsrs, doc(cfg(feature = "admin")))]
pub mod admin;
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod axum;
#[cfg(feature = "reqwest")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
pub mod reqwest;
#[cfg(feature = "tonic")]
#[cfg_attr(docsrs, doc(cfg(feature = "tonic")))]
pub mod tonic;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;

/// Declares a group that code makes at run time (a tower layer, a reqwest
/// middleware, a [`Registry::breaker`] or [`Registry::keyed`] call) for
/// [`config_file`], as each `#[circuit_breaker]` declares its own: a file or
/// `BREAKER_` variables naming the group are then checked against `CONFIG` at
/// start-up, and not reported as naming a group no code declares, even when
/// [`config_file::init`] runs before the group is made.
///
/// `CONFIG` is a `const` (or `static`) [`Config`]: pass the same one where the
/// group is made. Written at module level; with the `config` feature the
/// declaration is collected at link time ([`config_file::declarations`]
/// lists it, with this module's path), and without it the macro only checks
/// that `CONFIG` is a `Config`.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::Config;
///
/// const UPSTREAM: Config = match Config::builder().threshold(5).open_duration(Duration::from_secs(30)).build() {
///     Ok(config) => config,
///     Err(_) => panic!("the upstream breakers' config is invalid"),
/// };
/// breakerbox::declare_group!("upstream", UPSTREAM);
///
/// # #[cfg(feature = "config")]
/// assert!(breakerbox::config_file::declared_groups().contains(&"upstream"));
/// // Made later, at run time, with the config declared:
/// let hosts = breakerbox::registry().keyed::<String>("upstream", &UPSTREAM, 10_000).unwrap();
/// # let _ = hosts;
/// ```
#[cfg(feature = "config")]
// Both forms exist; the page shows this one without a feature badge.
#[cfg_attr(docsrs, doc(auto_cfg = false))]
#[macro_export]
macro_rules! declare_group {
    ($group:expr, $config:path $(,)?) => {
        $crate::__private_v01::inventory::submit! {
            $crate::__private_v01::Declaration {
                group: $group,
                config: &$config,
                module: ::core::module_path!(),
                attribute: false,
                retry: ::core::option::Option::None,
            }
        }
    };
    // `#[circuit_breaker]`'s own declaration (`@by true`), with its retry
    // policy (`retry $policy`, a `static`) when it runs a retry loop.
    (@by $attribute:literal, $group:expr, $config:path) => {
        $crate::__private_v01::inventory::submit! {
            $crate::__private_v01::Declaration {
                group: $group,
                config: &$config,
                module: ::core::module_path!(),
                attribute: $attribute,
                retry: ::core::option::Option::None,
            }
        }
    };
    (@by $attribute:literal, $group:expr, $config:path, retry $policy:path) => {
        $crate::__private_v01::inventory::submit! {
            $crate::__private_v01::Declaration {
                group: $group,
                config: &$config,
                module: ::core::module_path!(),
                attribute: $attribute,
                retry: ::core::option::Option::Some(&$policy),
            }
        }
    };
}

/// Declares a group that code makes at run time for `config_file` (feature
/// `config`); without that feature, only checks that `CONFIG` is a `Config`.
#[cfg(not(feature = "config"))]
#[macro_export]
macro_rules! declare_group {
    ($group:expr, $config:path $(,)?) => {
        const _: (&str, &$crate::Config) = ($group, &$config);
    };
    (@by $attribute:literal, $group:expr, $config:path $(, retry $policy:path)?) => {
        const _: (&str, &$crate::Config) = ($group, &$config);
    };
}

// The README's Rust blocks, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

// What `#[circuit_breaker]`'s expansion names; its own docs open the file.
#[doc(hidden)]
pub mod __private_v01;
