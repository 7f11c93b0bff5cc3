//! The router's routes and handlers: each checks the credential, then the
//! path, then the body, then the names, and only then reads or acts.

// A refusal is the response itself, returned once per request: boxing it
// would buy nothing.
#![allow(clippy::result_large_err)]

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use breaker_core::{Breaker, KeyedMetrics, State as BreakerState};
use http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use super::auth::{Caller, Refusal, Role};
use super::build::Inner;
use super::json;
use super::page;

/// Longest path segment (a group or a key, percent-decoded) looked up.
const MAX_SEGMENT: usize = 256;
/// Longest `reason` an action's body may carry.
const MAX_REASON: usize = 256;

type Shared = Arc<Inner>;

pub(super) fn router(inner: Shared) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/breakers", get(list))
        .route("/breakers/{group}", get(group).post(act_on_group))
        .route("/breakers/{group}/keys/{key}", get(key).post(act_on_key))
        .route("/breakers/{group}/shadow", post(shadow_group))
        .route("/breakers/{group}/keys/{key}/shadow", post(shadow_key))
        .route("/events", get(events))
        .route("/events/stream", get(stream))
        .route("/health", get(health))
        .fallback(not_found)
        .method_not_allowed_fallback(wrong_method)
        .with_state(inner)
}

/// A JSON answer.
fn answer(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A refusal: `{"error": code, "message": message}`.
fn refuse(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let message = message.into();
    let mut response = answer(status, &json!({"error": code, "message": message}));
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"breakerbox admin\""),
        );
    }
    response
}

fn unauthorized(uri: &Uri, refusal: Refusal) -> Response {
    log::warn!(
        target: "breakerbox::admin",
        "breaker admin: refused {}: {}",
        uri.path(),
        refusal.message()
    );
    refuse(StatusCode::UNAUTHORIZED, "unauthorized", refusal.message())
}

impl Inner {
    /// Whether a read may go on.
    fn may_read(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Response> {
        if !self.protect_reads {
            return Ok(());
        }
        self.tokens
            .caller(headers)
            .map(drop)
            .map_err(|refusal| unauthorized(uri, refusal))
    }

    /// Who asks for a mutation, if they may.
    fn may_mutate(&self, headers: &HeaderMap, uri: &Uri) -> Result<Caller, Response> {
        if !self.mutations {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "forbidden",
                "this admin router is read-only",
            ));
        }
        let caller = self
            .tokens
            .caller(headers)
            .map_err(|refusal| unauthorized(uri, refusal))?;
        if caller.role != Role::Mutate {
            log::warn!(
            target: "breakerbox::admin",
                    "breaker admin: refused {} to read-only token `{}`",
                    uri.path(),
                    caller.name
                );
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!("token `{}` may only read", caller.name),
            ));
        }
        Ok(caller)
    }

    /// The keyed group `group`, if `all` (the registry's keyed metrics) has it.
    fn keyed_json(&self, group: &str, all: &[KeyedMetrics]) -> Option<Value> {
        let metrics = all.iter().find(|m| m.group == group)?;
        let view = self.keyed.get(group);
        let config = view.and_then(|v| (v.config)(&self.registry, group));
        let worst = view.and_then(|v| (v.troubled)(&self.registry, group, self.worst_keys));
        Some(json::keyed(
            metrics,
            config.as_ref(),
            worst,
            self.worst_keys,
        ))
    }

    fn breaker_json(&self, breaker: &Breaker) -> Value {
        json::breaker(
            &breaker.metrics(),
            breaker.config(),
            breaker.made_group_retry().map(|r| r.effective_policy()),
            &self.registry.overrides(),
            &self.registry.conflicts(),
        )
    }

    /// Keeps and logs an action that was applied.
    fn tell(
        &self,
        asked: &Asked,
        group: &str,
        key: Option<&str>,
        caller: &Caller,
        after: Option<BreakerState>,
    ) {
        let act = asked.action;
        log::info!(
            target: "breakerbox::admin",
            "breaker admin: token `{}` applied {} to group `{group}`{}{}; now {}",
            caller.name,
            act.as_str(),
            key.map(|k| format!(" key `{}`", k.escape_debug()))
                .unwrap_or_default(),
            asked
                .reason
                .as_deref()
                .map(|r| format!(" ({})", r.escape_debug()))
                .unwrap_or_default(),
            after.map_or("unchanged", BreakerState::as_str),
        );
        if let Some(ring) = &self.ring {
            ring.push(json::action(
                act.as_str(),
                group,
                key,
                &caller.name,
                asked.reason.as_deref(),
                after,
            ));
        }
    }
}

/// A path's segments, or the refusal of a malformed or oversized one.
fn segments<T: Segments>(path: Result<Path<T>, PathRejection>) -> Result<T, Response> {
    let Path(values) = path.map_err(|rejection| {
        refuse(
            StatusCode::BAD_REQUEST,
            "bad_request",
            rejection.body_text(),
        )
    })?;
    if values.within_bound() {
        Ok(values)
    } else {
        Err(refuse(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("a path segment is over {MAX_SEGMENT} bytes"),
        ))
    }
}

/// A route's path segments: `{group}`, or `{group}/keys/{key}`.
trait Segments {
    /// Whether every segment is within [`MAX_SEGMENT`] bytes.
    fn within_bound(&self) -> bool;
}

impl Segments for String {
    fn within_bound(&self) -> bool {
        self.len() <= MAX_SEGMENT
    }
}

impl Segments for (String, String) {
    fn within_bound(&self) -> bool {
        self.0.within_bound() && self.1.within_bound()
    }
}

/// What a reading route checks before it reads: the credential, then the
/// path.
fn reading<P: Segments>(
    inner: &Inner,
    headers: &HeaderMap,
    uri: &Uri,
    path: Result<Path<P>, PathRejection>,
) -> Result<P, Response> {
    inner.may_read(headers, uri)?;
    segments(path)
}

/// A state-changing request that passed every check: who asked, the path's
/// segments, and what the body asks for.
struct Mutation<P> {
    caller: Caller,
    path: P,
    asked: Asked,
}

/// What a state-changing route checks before it acts, in order: the
/// credential, the path, then the body (a `.../shadow` route's when `shadow`).
/// A refusal changes nothing.
async fn mutation<P: Segments>(
    inner: &Inner,
    headers: &HeaderMap,
    uri: &Uri,
    path: Result<Path<P>, PathRejection>,
    body: axum::body::Body,
    shadow: bool,
) -> Result<Mutation<P>, Response> {
    let caller = inner.may_mutate(headers, uri)?;
    let path = segments(path)?;
    let asked = read_asked(inner, headers, body, shadow).await?;
    Ok(Mutation {
        caller,
        path,
        asked,
    })
}

fn unknown_group(group: &str) -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        "unknown_group",
        format!("no group `{}`", group.escape_debug()),
    )
}

async fn list(State(inner): State<Shared>, headers: HeaderMap, uri: Uri) -> Response {
    if let Err(refused) = inner.may_read(&headers, &uri) {
        return refused;
    }
    answer(StatusCode::OK, &every_breaker(&inner))
}

/// What `GET /breakers` answers: every unkeyed breaker, every keyed group the
/// router knows, the groups declared and not yet made (`declared`), and the
/// registry's conflicts.
fn every_breaker(inner: &Inner) -> Value {
    let overrides = inner.registry.overrides();
    let conflicts = inner.registry.conflicts();
    let breakers: serde_json::Map<String, Value> = inner
        .registry
        .breakers()
        .iter()
        .map(|b| {
            let m = b.metrics();
            let retry = b.made_group_retry().map(|r| r.effective_policy());
            let body = json::breaker(&m, b.config(), retry, &overrides, &conflicts);
            (m.group.to_owned(), body)
        })
        .collect();
    let all = inner.registry.keyed_metrics();
    let keyed: serde_json::Map<String, Value> = all
        .iter()
        .filter_map(|m| Some((m.group.to_owned(), inner.keyed_json(m.group, &all)?)))
        .collect();
    let declared: serde_json::Map<String, Value> = inner
        .registry
        .pending_groups()
        .iter()
        .map(|d| (d.group.to_owned(), json::declared(d, &overrides)))
        .collect();
    let conflicts: Vec<String> = conflicts.iter().map(ToString::to_string).collect();
    json!({"breakers": breakers, "keyed": keyed, "declared": declared, "conflicts": conflicts})
}

async fn group(
    State(inner): State<Shared>,
    headers: HeaderMap,
    uri: Uri,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let name = match reading(&inner, &headers, &uri, path) {
        Ok(name) => name,
        Err(refused) => return refused,
    };
    let mut found = serde_json::Map::new();
    if let Some(breaker) = inner.registry.get(&name) {
        found.insert("breaker".into(), inner.breaker_json(&breaker));
    }
    if let Some(keyed) = inner.keyed_json(&name, &inner.registry.keyed_metrics()) {
        found.insert("keyed".into(), keyed);
    }
    if found.is_empty() {
        let pending = inner.registry.pending_groups();
        match pending.iter().find(|d| d.group == name) {
            Some(d) => {
                let body = json::declared(d, &inner.registry.overrides());
                found.insert("declared".into(), body);
            }
            None => return unknown_group(&name),
        }
    }
    answer(StatusCode::OK, &Value::Object(found))
}

/// The breaker of `key` in the keyed group `group`, or why there is none.
fn find_key(inner: &Inner, group: &str, key: &str) -> Result<Breaker, Response> {
    let Some(view) = inner.keyed.get(group) else {
        return Err(if inner.registry.keyed_names().contains(&group) {
            refuse(
                StatusCode::NOT_FOUND,
                "keys_not_registered",
                format!(
                    "the keys of group `{}` are not readable here: the app registers its key type with `AdminBuilder::keyed`",
                    group.escape_debug()
                ),
            )
        } else {
            unknown_group(group)
        });
    };
    let unknown_key = |why: String| refuse(StatusCode::NOT_FOUND, "unknown_key", why);
    match (view.find)(&inner.registry, group, key) {
        Ok(Some(breaker)) => Ok(breaker),
        Ok(None) if inner.registry.keyed_names().contains(&group) => Err(unknown_key(format!(
            "group `{}` holds no key `{}`",
            group.escape_debug(),
            key.escape_debug()
        ))),
        Ok(None) => Err(unknown_group(group)),
        Err(why) => Err(unknown_key(why)),
    }
}

async fn key(
    State(inner): State<Shared>,
    headers: HeaderMap,
    uri: Uri,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Response {
    let (group, key) = match reading(&inner, &headers, &uri, path) {
        Ok(both) => both,
        Err(refused) => return refused,
    };
    match find_key(&inner, &group, &key) {
        Ok(breaker) => answer(
            StatusCode::OK,
            &json!({"group": group, "key": key, "breaker": inner.breaker_json(&breaker)}),
        ),
        Err(refused) => refused,
    }
}

/// What a `POST` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    ForceOpen,
    ForceClosed,
    Reset,
    /// Ends a hold in force (the server asked to wait) at once.
    ReleaseHold,
    /// Shadow mode on (`true`) or off: the `.../shadow` routes' one action.
    Shadow(bool),
}

impl Action {
    /// The actions `POST /breakers/{group}` takes by name.
    const ALL: [Action; 4] = [
        Action::ForceOpen,
        Action::ForceClosed,
        Action::Reset,
        Action::ReleaseHold,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Action::ForceOpen => "force_open",
            Action::ForceClosed => "force_closed",
            Action::Reset => "reset",
            Action::ReleaseHold => "release_hold",
            Action::Shadow(true) => "shadow_on",
            Action::Shadow(false) => "shadow_off",
        }
    }

    fn apply(self, breaker: &Breaker) -> BreakerState {
        match self {
            Action::ForceOpen => breaker.force_open(),
            Action::ForceClosed => breaker.force_closed(),
            Action::Reset => breaker.reset(),
            Action::ReleaseHold => {
                breaker.release_hold();
            }
            Action::Shadow(on) => {
                breaker.set_shadow(on);
            }
        }
        breaker.state()
    }
}

/// The body a `.../shadow` route takes.
const SHADOW_BODY: &str = "expected {\"on\": true | false, \"reason\"?: text}";

/// An action's parsed body.
struct Asked {
    action: Action,
    reason: Option<String>,
}

/// Reads and parses an action's body within the router's bounds: a
/// `.../shadow` route's (`{"on", "reason"?}`) when `shadow`, else one that
/// names its action. A declared length over the size bound is refused before
/// any byte is read, and a body that takes longer than the time bound to
/// arrive is refused when the bound passes.
async fn read_asked(
    inner: &Inner,
    headers: &HeaderMap,
    body: axum::body::Body,
    shadow: bool,
) -> Result<Asked, Response> {
    let too_large = |what: String| {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("{what}; the bound is {} bytes", inner.max_body),
        )
    };
    if let Some(declared) = headers.get(header::CONTENT_LENGTH) {
        // hyper has refused a malformed length before the router sees it.
        let declared = declared.to_str().ok().and_then(|v| v.parse::<u64>().ok());
        match declared {
            Some(n) if n > inner.max_body as u64 => {
                return Err(too_large(format!("the body declares {n} bytes")));
            }
            Some(_) => {}
            None => {
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    "`Content-Length` is not a length",
                ))
            }
        }
    }
    let read = axum::body::to_bytes(body, inner.max_body);
    let bytes = match tokio::time::timeout(inner.body_timeout, read).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return Err(too_large(
                "the body is over the bound, or was cut short".to_owned(),
            ))
        }
        Err(_) => {
            return Err(refuse(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!(
                    "the body did not arrive within {} ms",
                    inner.body_timeout.as_millis()
                ),
            ))
        }
    };
    let bad = |message: String| refuse(StatusCode::BAD_REQUEST, "bad_request", message);
    let expected = if shadow {
        SHADOW_BODY
    } else {
        "expected {\"action\": \"force_open\" | \"force_closed\" | \"reset\" | \"release_hold\", \"reason\"?: text}"
    };
    let field = if shadow { "on" } else { "action" };
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| bad(format!("the body is not JSON ({e}); {expected}")))?;
    let Value::Object(fields) = value else {
        return Err(bad(format!("the body is not an object; {expected}")));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| k.as_str() != field && k.as_str() != "reason")
    {
        return Err(bad(format!(
            "unknown field `{}`; {expected}",
            unknown.escape_debug()
        )));
    }
    let action = match fields.get(field) {
        Some(&Value::Bool(on)) if shadow => Action::Shadow(on),
        Some(_) if shadow => return Err(bad(format!("`on` is not true or false; {expected}"))),
        Some(Value::String(name)) => Action::ALL
            .into_iter()
            .find(|a| a.as_str() == name)
            .ok_or_else(|| {
                bad(format!(
                    "unknown action `{}`; {expected}",
                    name.escape_debug()
                ))
            })?,
        _ => return Err(bad(format!("no action; {expected}"))),
    };
    let reason = match fields.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) if text.len() <= MAX_REASON => Some(text.clone()),
        Some(Value::String(_)) => return Err(bad(format!("`reason` is over {MAX_REASON} bytes"))),
        Some(_) => return Err(bad(format!("`reason` is not text; {expected}"))),
    };
    Ok(Asked { action, reason })
}

async fn act_on_group(
    State(inner): State<Shared>,
    headers: HeaderMap,
    uri: Uri,
    path: Result<Path<String>, PathRejection>,
    body: axum::body::Body,
) -> Response {
    let Mutation {
        caller,
        path: name,
        asked,
    } = match mutation(&inner, &headers, &uri, path, body, false).await {
        Ok(asked) => asked,
        Err(refused) => return refused,
    };
    let Some(breaker) = inner.registry.get(&name) else {
        if inner.registry.keyed_names().contains(&name.as_str()) {
            return refuse(
                StatusCode::NOT_FOUND,
                "unknown_group",
                format!(
                    "`{}` is a keyed group: act on one key, at /breakers/{{group}}/keys/{{key}}",
                    name.escape_debug()
                ),
            );
        }
        return unknown_group(&name);
    };
    let after = asked.action.apply(&breaker);
    inner.tell(&asked, &name, None, &caller, Some(after));
    answer(
        StatusCode::OK,
        &json!({
            "applied": asked.action.as_str(),
            "group": name,
            "key": null,
            "state": after.as_str(),
        }),
    )
}

async fn act_on_key(
    State(inner): State<Shared>,
    headers: HeaderMap,
    uri: Uri,
    path: Result<Path<(String, String)>, PathRejection>,
    body: axum::body::Body,
) -> Response {
    on_key(&inner, &headers, &uri, path, body, false).await
}

/// `POST /breakers/{group}/shadow`: shadow mode on or off for an unkeyed
/// group, and for every key of a keyed group of that name and the keys it
/// creates from now on.
async fn shadow_group(
    State(inner): State<Shared>,
    headers: HeaderMap,
    uri: Uri,
    path: Result<Path<String>, PathRejection>,
    body: axum::body::Body,
) -> Response {
    let Mutation {
        caller,
        path: name,
        asked,
    } = match mutation(&inner, &headers, &uri, path, body, true).await {
        Ok(asked) => asked,
        Err(refused) => return refused,
    };
    let Action::Shadow(on) = asked.action else {
        unreachable!("a shadow body asks for shadow mode")
    };
    let breaker = inner.registry.get(&name);
    let keyed = inner.registry.keyed_names().contains(&name.as_str());
    if breaker.is_none() && !keyed {
        return unknown_group(&name);
    }
    let after = breaker.map(|breaker| asked.action.apply(&breaker));
    if keyed {
        inner.registry.set_keyed_shadow(&name, on);
    }
    inner.tell(&asked, &name, None, &caller, after);
    answer(
        StatusCode::OK,
        &json!({
            "applied": asked.action.as_str(),
            "group": name,
            "key": null,
            "shadow": on,
            "state": after.map(BreakerState::as_str),
        }),
    )
}

/// `POST /breakers/{group}/keys/{key}/shadow`: shadow mode on or off for one
/// key the group holds.
async fn shadow_key(
    State(inner): State<Shared>,
    headers: HeaderMap,
    uri: Uri,
    path: Result<Path<(String, String)>, PathRejection>,
    body: axum::body::Body,
) -> Response {
    on_key(&inner, &headers, &uri, path, body, true).await
}

/// An action (a `.../shadow` route's when `shadow`) on one key a group holds.
async fn on_key(
    inner: &Inner,
    headers: &HeaderMap,
    uri: &Uri,
    path: Result<Path<(String, String)>, PathRejection>,
    body: axum::body::Body,
    shadow: bool,
) -> Response {
    let Mutation {
        caller,
        path: (group, key),
        asked,
    } = match mutation(inner, headers, uri, path, body, shadow).await {
        Ok(asked) => asked,
        Err(refused) => return refused,
    };
    let breaker = match find_key(inner, &group, &key) {
        Ok(breaker) => breaker,
        Err(refused) => return refused,
    };
    let after = asked.action.apply(&breaker);
    inner.tell(&asked, &group, Some(&key), &caller, Some(after));
    let mut answered = json!({
        "applied": asked.action.as_str(),
        "group": group,
        "key": key,
        "state": after.as_str(),
    });
    if shadow {
        answered["shadow"] = Value::Bool(breaker.is_shadow());
    }
    answer(StatusCode::OK, &answered)
}

/// The `limit` of an `/events` query: `None` for all, or the refusal of a bad query.
fn limit(uri: &Uri) -> Result<Option<usize>, Response> {
    let Some(query) = uri.query() else {
        return Ok(None);
    };
    let mut limit = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("limit", n)) if n.len() <= 10 => {
                limit = Some(n.parse::<usize>().map_err(|_| {
                    refuse(
                        StatusCode::BAD_REQUEST,
                        "bad_request",
                        "`limit` is not a count",
                    )
                })?);
            }
            _ => {
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    "the only query is `limit=N`",
                ))
            }
        }
    }
    Ok(limit)
}

fn events_off() -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        "events_off",
        "this router keeps no events: the app turns them on with `AdminBuilder::events`",
    )
}

async fn events(State(inner): State<Shared>, headers: HeaderMap, uri: Uri) -> Response {
    if let Err(refused) = inner.may_read(&headers, &uri) {
        return refused;
    }
    let limit = match limit(&uri) {
        Ok(limit) => limit,
        Err(refused) => return refused,
    };
    let Some(ring) = &inner.ring else {
        return events_off();
    };
    let last = ring.last(limit.unwrap_or(usize::MAX));
    answer(StatusCode::OK, &json!({"events": last}))
}

async fn stream(State(inner): State<Shared>, headers: HeaderMap, uri: Uri) -> Response {
    if let Err(refused) = inner.may_read(&headers, &uri) {
        return refused;
    }
    let Some(ring) = &inner.ring else {
        return events_off();
    };
    let receiver = ring.follow();
    let events = futures_util::stream::unfold(receiver, |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(entry) => {
                    let kind = entry["kind"].as_str().unwrap_or("event").to_owned();
                    let seq = entry["seq"].as_u64().unwrap_or(0);
                    let sse = SseEvent::default()
                        .event(kind)
                        .id(seq.to_string())
                        .data(entry.to_string());
                    return Some((Ok::<_, Infallible>(sse), receiver));
                }
                // A reader that fell behind skips what it missed; `id` shows the gap.
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(events).into_response()
}

async fn health(State(inner): State<Shared>) -> Response {
    let mut groups = serde_json::Map::new();
    let mut up = true;
    for name in &inner.unready_when_open {
        let state = inner.registry.get(name).map(|b| b.state());
        let ready = !matches!(state, Some(BreakerState::Open | BreakerState::ForcedOpen));
        up &= ready;
        groups.insert(
            name.clone(),
            json!({"state": state.map(BreakerState::as_str), "ready": ready}),
        );
    }
    let (status, word) = if up {
        (StatusCode::OK, "UP")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "DOWN")
    };
    answer(status, &json!({"status": word, "groups": groups}))
}

/// The policy the page runs under: its own inline script and style, requests
/// to this origin only.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; \
    style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'";

/// The status page, its table rendered as of this request (for a caller who
/// may read: the shell alone otherwise), then following the event stream.
async fn page(State(inner): State<Shared>, headers: HeaderMap, uri: Uri) -> Response {
    let document = match inner.may_read(&headers, &uri) {
        Ok(()) => {
            let events = inner.ring.as_ref().map(|ring| ring.last(usize::MAX));
            page::render(&every_breaker(&inner), events.as_deref().unwrap_or(&[]))
        }
        Err(_) => page::shell(),
    };
    let mut response = document.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_POLICY),
    );
    response
}

async fn not_found(uri: Uri) -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no admin route at `{}`", uri.path().escape_debug()),
    )
}

async fn wrong_method(method: Method, uri: Uri) -> Response {
    refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "`{method}` is not allowed at `{}`",
            uri.path().escape_debug()
        ),
    )
}
