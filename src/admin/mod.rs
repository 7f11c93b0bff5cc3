//! The admin surface of a registry (feature `admin`): an axum [`Router`] (or a
//! plain tower [`AdminService`]) that lists the breakers, forces and resets them
//! behind a bearer token, keeps a ring of recent events and answers readiness.
//!
//! The app builds it with [`Admin::builder`], mounts it where it likes and
//! serves it with its own server; nothing here listens on a port.
//!
//! ```no_run
//! use breakerbox::admin::Admin;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let admin = Admin::global()
//!     // Mutations need a token the app supplies; there is no default.
//!     .token("ops", std::env::var("BREAKER_ADMIN_TOKEN")?)
//!     .keyed::<String>("upstream") // key routes for this keyed group
//!     .events(512)                 // a ring of the last 512 events
//!     .unready_when_open("database")
//!     .build()?;
//! // `nest_service` answers `/admin` and `/admin/` alike (`nest` gives the
//! // router `/admin` alone: axum routes `/admin/` to the app's fallback).
//! let app = axum::Router::new().nest_service("/admin", admin.router());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9000").await?;
//! axum::serve(listener, app).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Endpoints
//!
//! | method and path | answers |
//! |---|---|
//! | `GET /` | the status page: one HTML document (see below) |
//! | `GET /breakers` | `{"breakers": {name: breaker}, "keyed": {name: keyed}, "declared": {name: declared}, "conflicts": [conflict]}` |
//! | `GET /breakers/{group}` | `{"breaker": breaker}` and/or `{"keyed": keyed}`, whichever the name has, else `{"declared": declared}`; `404` if none |
//! | `GET /breakers/{group}/keys/{key}` | `{"group", "key", "breaker": breaker}`, for a keyed group registered with [`AdminBuilder::keyed`] |
//! | `POST /breakers/{group}` | body `{"action": "force_open" \| "force_closed" \| "reset" \| "release_hold", "reason"?: text}` (`release_hold` ends a hold the server asked for, at once); answers `{"applied", "group", "key": null, "state"}` |
//! | `POST /breakers/{group}/keys/{key}` | the same for one key the group holds (a key is never created) |
//! | `POST /breakers/{group}/shadow` | body `{"on": true \| false, "reason"?: text}`: shadow mode on or off, live, for the unkeyed group and for every key of the keyed group of that name (and the keys it creates); answers `{"applied": "shadow_on" \| "shadow_off", "group", "key": null, "shadow", "state"}`, `state` `null` for a keyed group alone |
//! | `POST /breakers/{group}/keys/{key}/shadow` | the same for one key the group holds |
//! | `GET /events?limit=N` | `{"events": [event]}`, the last `N` (default: all the ring holds), oldest first |
//! | `GET /events/stream` | the same events as they happen, as server-sent events (`text/event-stream`): `event:` the kind, `id:` the `seq`, `data:` the event's JSON |
//! | `GET /health` | `{"status": "UP" \| "DOWN", "groups": {name: {"state", "ready"}}}`, `200` or `503` |
//!
//! **The status page** (`GET /`) is one self-contained HTML document, inline
//! CSS and JS and nothing fetched from elsewhere (its `Content-Security-Policy`
//! allows requests to its own origin only): every circuit's state now, a state
//! timeline of the last 10 minutes, the rejection rate and probe success rate
//! (since the process started), and flapping (transitions in the last 5
//! minutes); a keyed group shows its keys by state and a timeline for each
//! of its worst keys and of the keys whose transitions the ring holds (a key
//! that opened and recovered), at most [`worst_keys`](AdminBuilder::worst_keys)
//! of them. The table is rendered by the router as of the request, so the
//! document as served shows every state and timeline with no script run (a
//! plain `chromium --headless --screenshot` captures it); the page's script
//! then follows `/events/stream`, reading `/breakers` again at each event and
//! every 5 seconds. It reads the routes beside it, so it works wherever the
//! router is mounted. The timelines start from the events the ring still
//! holds (the router needs [`events`](AdminBuilder::events); without it each
//! timeline is the state now). The page serves without a credential; where
//! [`protect_reads`](AdminBuilder::protect_reads) guards the reads it is
//! served without its table to a request that brings no read token, and its
//! script cannot read the guarded routes (a browser's event stream sends no
//! `Authorization` header). The repository's `docs/status-page.png` shows it.
//!
//! Resilience4j's actuator (`/actuator/circuitbreakers`, `.../circuitbreakerevents`,
//! the health indicator) is the model: a map by name, the state, the counts and
//! rates, force and reset by POST. Field names are `snake_case` and stable:
//! fields may be added, none is renamed or removed. Durations are whole
//! milliseconds in fields ending `_ms`; a value that does not apply is `null`,
//! never a sentinel.
//!
//! **breaker** (one unkeyed group): `group`, `state` (`closed`, `open`,
//! `half_open`, `forced_open`, `forced_closed`), `generation`, `calls`,
//! `successes`, `failures`, `ignored`, `rejected`, `abandoned`, `stale`,
//! `timeouts`, `bulkhead_rejected`, `bulkhead_in_flight`, `times_opened`,
//! `latency_trips`, `latency_p99_ms`, `probes_succeeded`, `probes_failed`,
//! `probes_reclaimed`, `probes_in_flight`, `consecutive_failures`,
//! `ramp_refused` (calls the ramp after a close refused), `shadow` (whether the
//! breaker is in shadow mode now), `shadow_refused` (claims shadow mode admitted
//! that it would have refused), `throttled` (claims the adaptive throttle
//! refused), `throttle` (`null` without `throttle`, else `{"requests",
//! "accepts", "reject_share", "window_ms"}`: the throttle's window and the
//! share it refuses now), `admitted_share` (the
//! share of calls admitted now: 1 while closed and not ramping or throttling,
//! below 1 during a ramp or while throttling, 0 while open), `buffered_calls`, `buffered_failures`, `slow_calls`, `failure_rate`,
//! `slow_call_rate` (0 to 1; `null` without a window or while it is empty),
//! `retry_after_ms`, `open_for_ms`, `transitions` (a list of `{"from", "to",
//! "count"}`), `config` (every key of [`Config::KEYS`](crate::Config::KEYS):
//! `{"value", "explicit"}`, `explicit` telling whether the value was set rather
//! than left to its default), `retry` (the retry policy the group's calls run
//! now, configuration included: every retry key, `retry`, `retry_delay_ms`,
//! `retry_max_delay_ms`, `retry_deadline_ms`, `retry_budget_ratio` and
//! `retry_budget_floor`, as `{"value", "explicit"}`, the value `null` when
//! off, `explicit` telling whether the group's code set it; `null` until a
//! retried call made the group's retry), `overrides`
//! (each declared value configuration layers replaced, with its source, as
//! text) and `conflicts`.
//!
//! **declared** (a group the code declares, or the configuration file names,
//! that no call has made yet; listed once `config_file::Settings::apply` resolved it, see
//! [`Registry::pending_groups`](crate::Registry::pending_groups)): `group`,
//! `created` (`false`), `config` (every key as for a breaker,
//! `{"value", "explicit", "source"}`: the value its first call will make it
//! with and where that came from, `"default"` for a key nothing set),
//! `settings` (each value set, with its source, as text: `` `threshold = 10`
//! (`prod.toml` line 2, [groups.search]) ``) and `overrides`.
//!
//! **keyed** (one keyed group): `group`, `keys`, `key_capacity`, `closed`, `open`,
//! `half_open` (keys held by state; forced open counts as open), `evictions`,
//! the summed `calls`, `successes`, `failures`, `ignored`, `rejected`,
//! `abandoned`, `stale`, `times_opened`, `shadow_refused`, `throttled`, `shadow` (the mode
//! the group's new keys start in; `null` for a group whose key type the app
//! did not register), and `worst_keys`: at most
//! [`worst_keys`](AdminBuilder::worst_keys) keys that are open, half-open or
//! forced open, most opened first (then most failures, then most rejections,
//! then by key, in the key type's order: text order for `String` keys;
//! found in one pass that clones only the keys listed, as
//! [`KeyedGroup::worst_keys`](crate::keyed::KeyedGroup::worst_keys)), each `{"key", "state", "times_opened", "failures",
//! "rejected", "retry_after_ms"}`. A keyed group whose key type the app did not
//! register has `"worst_keys": null`: the registry lists its keys only to code
//! that knows their type. `worst_keys_limit` is the bound. A request that
//! reads keyed groups walks their keys (the counts, as
//! [`Registry::keyed_metrics`] does) and a registered group's keys once more
//! (its worst, reading the metrics of the keys that are not closed only);
//! the answer never lists every key.
//!
//! **event**: `seq` (from 1, one per event of this router), `unix_ms` (the
//! wall clock when the ring took it), `kind`, and by kind:
//! `transition` (`group`, `key`: `null` or the key's text, `from`, `to`,
//! `reason`, `cause`: the rule that tripped or `null`, `generation`,
//! `open_for_ms`, `retry_after_ms`), `conflict` (`group`, `message`) and
//! `admin` (`action`, `group`, `key`, `token`: the name of the token used,
//! `reason`: the body's text or `null`, `state`: the state after it, `null`
//! after a keyed group's shadow switch; `action` is one of `force_open`,
//! `force_closed`, `reset`, `release_hold`, `shadow_on`, `shadow_off`).
//!
//! **error** (every `4xx` and `5xx` this router makes): `{"error": code,
//! "message": text}`, with `code` one of `unauthorized` (401), `forbidden`
//! (403), `not_found`, `unknown_group`, `unknown_key`, `keys_not_registered`,
//! `events_off` (404), `method_not_allowed` (405), `request_timeout` (408),
//! `payload_too_large` (413), `uri_too_long` (414), `bad_request` (400).
//!
//! # Security
//!
//! - **Mutations need a bearer token the app supplies** (`Authorization: Bearer
//!   <secret>`). There is no default token: [`AdminBuilder::build`] refuses a
//!   router that allows mutations and has none ([`BuildError::NoToken`]);
//!   [`read_only`](AdminBuilder::read_only) builds one without mutations.
//!   Secrets are 16 to 256 visible ASCII characters; each token has a name,
//!   which the logs and the ring carry (never the secret).
//! - **Tokens are compared in constant time** with respect to the presented
//!   credential: every token is compared over its full length, with no early
//!   exit, and the answer depends on no byte comparison until the end.
//! - **Reads may be protected too** ([`protect_reads`](AdminBuilder::protect_reads),
//!   [`read_token`](AdminBuilder::read_token)); `/health` stays open, for
//!   probes that send no header.
//! - **Bounded input**: a credential over 512 bytes is refused unread, a body
//!   over [`max_body`](AdminBuilder::max_body) bytes (1 KiB by default) is
//!   `413` (at once when its `Content-Length` says so, before any byte of it
//!   is read), a body that takes longer than
//!   [`body_timeout`](AdminBuilder::body_timeout) (10 s by default) to arrive
//!   is `408`, a path segment over 256 bytes is `414`.
//! - **A refused request changes nothing**: credentials are checked first, then
//!   the path, then the body, then the names; only then is the action taken.
//!   Unknown names, malformed bodies and wrong methods are `4xx` JSON errors.
//! - **Every action is told**: a `log` line at `info` (refusals at `warn`) and,
//!   with [`events`](AdminBuilder::events), an `admin` event in the ring.
//!
//! # Cost
//!
//! Nothing here runs on the call path. Without [`events`](AdminBuilder::events)
//! the router subscribes to nothing; with it, the router holds one registry
//! subscription for as long as it (or a clone) lives, which makes the registry
//! keep each key's text (see [`Registry::subscribe`]), and each transition
//! pushes one entry into the ring under its own short lock.

mod auth;
mod build;
mod error;
mod json;
mod page;
mod ring;
mod routes;
mod service;

pub use self::build::{Admin, AdminBuilder};
pub use self::error::BuildError;
pub use self::service::AdminService;

#[cfg(doc)]
use crate::Registry;
#[cfg(doc)]
use axum::Router;
