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
//! | `json` | `serde`, and [`config_file::Settings::from_json_str_at`]: the breaker object inside the app's own JSON file, each key's line in messages and sources | breaker settings inside the app's own `config.json` |
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
//! - **Everywhere.** Each key of a keyed group ramps on its own, and a keyed
//!   group that judges as one ramps all its keys back in as one after the
//!   group's close; with a fleet agent, every instance ramps from the fleet's
//!   close. A live change of `ramp_ms` applies from the next close.
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
//!     .open(Duration::from_secs(1))
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
//! # Adaptive throttling
//!
//! A breaker is all or nothing: against a dependency that can take 40% of the
//! calls, closed sends it every call and open sends it none. With `throttle =
//! K` a group sheds in proportion instead (the client-side throttling of
//! Google's SRE book): over the last `throttle_window_ms` (two minutes by
//! default) it counts the calls it was asked to make (`requests`) and those
//! the dependency accepted (`accepts`: successes, and errors the classifier
//! ignores, since the dependency answered them), and refuses the share
//!
//! ```text
//! max(0, (requests - K * accepts) / (requests + 1))      at most throttle_max_reject (0.9)
//! ```
//!
//! of the calls at once. What reaches the dependency settles at about `K`
//! times what it accepts (`2.0` is the usual choice), with no hard open and no
//! timer, and all calls go again within one window of its heal.
//!
//! - **Exact, not random.** Admission is the ramp's credit: of any `n`
//!   consecutive calls at one share the number admitted is within one of it,
//!   and a trace replayed under the config that recorded it is throttled as it
//!   was (`testing::replay`, feature `testing`).
//! - **A refusal of its own.** [`OpenReason::Throttled`], answered by the
//!   fallback like any refusal, never retried (it is the client's own
//!   decision), counted in `rejected` and `throttled`; shadow mode counts it in
//!   `shadow_refused` and refuses nothing.
//! - **With the breaker.** A group may have both: the breaker for hard outages,
//!   the throttle for partial ones. The throttle judges the claims of a closed
//!   or half-open breaker; an open one refuses as open, and the claim that
//!   finds its open time over goes as the probe. Each key of a keyed group
//!   throttles on its own.
//! - **Seen.** [`Event::Throttle`](events::Event::Throttle) when it starts and
//!   stops, [`Metrics::throttle`](metrics::Metrics::throttle), the exporters'
//!   `breaker_throttle_reject_share` and `breaker_throttled_total`, the admin
//!   JSON and status page.
//! - **Free when unused.** A group without `throttle` runs no step of it.
//!
//! ```
//! use std::time::Duration;
//! use breakerbox::{Breaker, Config, ManualClock, OpenReason};
//!
//! let clock = ManualClock::new();
//! let config = Config::builder().threshold(1_000).throttle(2.0).build()?;
//! let breaker = Breaker::with_clock("search", config, clock.clone());
//! // The dependency fails three calls in four.
//! let mut refused = 0;
//! for i in 0..1_000 {
//!     match breaker.try_acquire() {
//!         Ok(permit) if i % 4 == 0 => permit.success(),
//!         Ok(permit) => permit.failure(),
//!         Err(open) => {
//!             assert_eq!(open.reason(), OpenReason::Throttled);
//!             refused += 1;
//!         }
//!     }
//! }
//! assert!(refused > 0);
//! assert_eq!(breaker.metrics().throttled, refused);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Shadow mode
//!
//! A threshold chosen at a desk is a guess. Shadow mode (`shadow = true`) lets
//! a group run its real policy against production traffic without refusing
//! anything: it counts, trips, probes, closes, tells its events and exports
//! as usual, but every claim it would refuse (open, half-open with every probe
//! slot taken, held back by a ramp or the throttle) runs as an ordinary call and is counted in
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
//! #[circuit_breaker(group = "upstream", key = host, key_capacity = 10_000, threshold = 2, registry = &REGISTRY)]
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
//! - **Bounded memory.** Past `key_capacity` (default 10 000), creating a key
//!   evicts idle, closed breakers, about least recently used first. An open,
//!   half-open or forced breaker, or one with a call in flight, is never
//!   evicted, so the group may hold more keys than `key_capacity` while many are
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
//! [`resolve::Conflict`], as for unkeyed groups), and configuration reaches it as it
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
    feature = "json",
    doc = "[`config_file::Settings::from_json_str_at`]: crate::config_file::Settings::from_json_str_at"
)]
#![cfg_attr(
    not(feature = "json"),
    doc = "[`config_file::Settings::from_json_str_at`]: https://docs.rs/breakerbox/latest/breakerbox/config_file/struct.Settings.html#method.from_json_str_at"
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

// The attribute's own page (its keys, what it records, its fallbacks and
// compile-time checks) is a file of its own, rendered here.
#[doc = include_str!("circuit_breaker.md")]
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
pub use breaker_core::{classify, events, fleet, hold, metrics};
pub mod clock;
pub mod config;
pub mod keyed;
pub mod retry;

pub mod breaker {
    //! What a call through a [`Breaker`](crate::Breaker) holds: the [`Permit`]
    //! a claim returns (or the [`OwnedPermit`] that holds its breaker), the
    //! [`BulkheadSlot`] of `max_concurrent` (or the [`OwnedBulkheadSlot`]),
    //! and the [`PolicyChange`] a live reconfiguration refuses.
    pub use breaker_core::{BulkheadSlot, OwnedBulkheadSlot, OwnedPermit, Permit, PolicyChange};

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

pub mod resolve {
    //! How a [`Registry`](crate::Registry) (the process-wide one is
    //! [`registry()`](crate::registry())) resolves a group's configuration:
    //! declarations and their [`Conflict`]s, sources layered over them
    //! ([`Resolver`], [`Resolution`], [`Reconfigured`], [`DeclarationOverride`],
    //! [`ConfigSource`]), the groups resolved before their first call
    //! ([`DeclaredGroup`]), and the errors of its operations.
    pub use breaker_core::{
        AlreadyCreated, ApplyConfigError, ConfigSource, Conflict, DeclarationOverride,
        DeclaredGroup, DeclaredSetting, Reconfigured, Resolution, Resolver, UnknownGroup,
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
/// const UPSTREAM: Config = match Config::builder().threshold(5).open(Duration::from_secs(30)).build() {
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
