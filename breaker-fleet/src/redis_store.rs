//! [`RedisStore`]: the fleet store on Redis. Every change is one Lua script
//! (atomic, timed by Redis `TIME`), notices go out by pub/sub, and every call is
//! bounded by a short timeout.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::Script;
use tokio::sync::{mpsc, OnceCell};

use crate::store::{Cas, FleetState, FleetStore, GroupRecord, Notice, StoreError, Trip};

/// Shared by every script: the store's time in ms, the run (created by the
/// first write), and one group's record.
const PRELUDE: &str = r#"
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function run_id(create)
  local r = redis.call('GET', KEYS[1])
  if (not r) and create then
    local t = redis.call('TIME')
    r = t[1] .. '.' .. t[2]
    redis.call('SET', KEYS[1], r)
  end
  return r or ''
end
local function record(key)
  local h = redis.call('HMGET', key, 'epoch', 'state', 'until', 'origin')
  return tonumber(h[1] or '0'), (h[2] or 'closed'), tonumber(h[3] or '0'), (h[4] or '')
end
local function hold_of(key)
  local h = redis.call('HMGET', key, 'hold', 'hold_origin')
  local hold = tonumber(h[1] or '0')
  if not hold or hold ~= hold or hold < 0 or hold >= 9007199254740992 or hold % 1 ~= 0 then
    return 0, ''
  end
  return hold, (h[2] or '')
end
local function n(x) return string.format('%d', x) end
local function reply(status, run, epoch, state, untl, now, origin, votes, key)
  local hold, hold_origin = hold_of(key)
  return {status, run, n(epoch), state, n(untl), n(now), origin, n(votes), n(hold), hold_origin}
end
local function publish(channel, group, run, epoch, state, untl, now, origin, key)
  local hold, hold_origin = hold_of(key)
  redis.call('PUBLISH', channel,
    table.concat({run, n(epoch), state, n(untl), n(now), origin, n(hold), hold_origin, group}, '\n'))
end
"#;

/// KEYS: run, group. ARGV: expected, run, open_ms, origin, quorum, channel,
/// group, votes key base.
const TRIP: &str = r#"
local now = now_ms()
local run = run_id(true)
local epoch, state, untl, origin = record(KEYS[2])
local fresh
if ARGV[2] == run then fresh = (epoch == tonumber(ARGV[1])) else fresh = (state == 'closed') end
if not fresh then return reply('lost', run, epoch, state, untl, now, origin, 0, KEYS[2]) end
local quorum = tonumber(ARGV[5])
if quorum > 1 then
  local vk = ARGV[8] .. ':' .. run .. ':' .. n(epoch)
  redis.call('SADD', vk, ARGV[4])
  redis.call('PEXPIRE', vk, math.max(tonumber(ARGV[3]), 1))
  local votes = redis.call('SCARD', vk)
  if votes < quorum then return reply('voted', run, epoch, state, untl, now, origin, votes, KEYS[2]) end
  redis.call('DEL', vk)
end
epoch = epoch + 1
untl = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[2], 'epoch', n(epoch), 'state', 'open', 'until', n(untl), 'origin', ARGV[4])
publish(ARGV[6], ARGV[7], run, epoch, 'open', untl, now, ARGV[4], KEYS[2])
return reply('applied', run, epoch, 'open', untl, now, ARGV[4], 0, KEYS[2])
"#;

/// KEYS: run, group. ARGV: run, expected, origin, channel, group.
const CLOSE: &str = r#"
local now = now_ms()
local run = run_id(false)
local epoch, state, untl, origin = record(KEYS[2])
if run ~= ARGV[1] or epoch ~= tonumber(ARGV[2]) or state ~= 'open' then
  return reply('lost', run, epoch, state, untl, now, origin, 0, KEYS[2])
end
epoch = epoch + 1
redis.call('HSET', KEYS[2], 'epoch', n(epoch), 'state', 'closed', 'until', '0', 'origin', ARGV[3])
publish(ARGV[4], ARGV[5], run, epoch, 'closed', 0, now, ARGV[3], KEYS[2])
return reply('applied', run, epoch, 'closed', 0, now, ARGV[3], 0, KEYS[2])
"#;

/// KEYS: run, group... Returns one reply per group.
const READ: &str = r#"
local now = now_ms()
local run = run_id(false)
local out = {}
for i = 2, #KEYS do
  local epoch, state, untl, origin = record(KEYS[i])
  for _, v in ipairs(reply('read', run, epoch, state, untl, now, origin, 0, KEYS[i])) do
    table.insert(out, v)
  end
end
return out
"#;

/// KEYS: run, group. ARGV: hold_ms, origin, channel, group.
const HOLD: &str = r#"
local now = now_ms()
local run = run_id(false)
local epoch, state, untl, origin = record(KEYS[2])
local hold = hold_of(KEYS[2])
local ends = now + tonumber(ARGV[1])
if ends > hold then
  redis.call('HSET', KEYS[2], 'hold', n(ends), 'hold_origin', ARGV[2])
  publish(ARGV[3], ARGV[4], run, epoch, state, untl, now, origin, KEYS[2])
end
return reply('read', run, epoch, state, untl, now, origin, 0, KEYS[2])
"#;

/// KEYS: run. ARGV: lease key base, epoch, slots, lease_ms, origin.
const LEASE: &str = r#"
local run = run_id(false)
for slot = 0, tonumber(ARGV[3]) - 1 do
  local key = ARGV[1] .. ':' .. run .. ':' .. ARGV[2] .. ':' .. slot
  local holder = redis.call('GET', key)
  if not holder then
    redis.call('SET', key, ARGV[5], 'PX', ARGV[4])
    return 1
  elseif holder == ARGV[5] then
    return 1
  end
end
return 0
"#;

/// KEYS: run. ARGV: counts key base, window_ms, calls, failures.
const COUNTS: &str = r#"
local width = tonumber(ARGV[2])
local bucket = math.floor(now_ms() / width)
local key = ARGV[1] .. ':' .. n(bucket)
local calls = redis.call('HINCRBY', key, 'calls', ARGV[3])
local failures = redis.call('HINCRBY', key, 'failures', ARGV[4])
redis.call('PEXPIRE', key, 2 * width + 1000)
local prev = redis.call('HMGET', ARGV[1] .. ':' .. n(bucket - 1), 'calls', 'failures')
return {calls + tonumber(prev[1] or '0'), failures + tonumber(prev[2] or '0')}
"#;

struct Scripts {
    trip: Script,
    close: Script,
    read: Script,
    lease: Script,
    counts: Script,
    hold: Script,
}

impl Scripts {
    fn new() -> Self {
        let s = |body: &str| Script::new(&format!("{PRELUDE}\n{body}"));
        Scripts {
            trip: s(TRIP),
            close: s(CLOSE),
            read: s(READ),
            lease: s(LEASE),
            counts: s(COUNTS),
            hold: s(HOLD),
        }
    }
}

/// The fleet store on one Redis server (standalone; the scripts name keys they
/// build, so Redis Cluster is not supported).
///
/// Built on the `redis` crate's [`ConnectionManager`], which reconnects by itself;
/// every call is additionally bounded by [`RedisStore::timeout`] (default 50 ms),
/// so a slow or gone Redis costs the agent one timeout, never a user's call.
///
/// Keys, under a prefix (default `breaker:fleet`): `{prefix}:run` (the
/// incarnation), `{prefix}:g:{group}` (a hash: epoch, state, until, origin,
/// and the group-scope hold's end and origin; a hold that is not a whole
/// number of milliseconds reads as no hold, and the next hold replaces it),
/// `{prefix}:l:{group}:...` (probe leases, with expiry), `{prefix}:v:{group}:...`
/// (quorum votes, with expiry), `{prefix}:a:{group}:{bucket}` (counts, with
/// expiry); notices on the channel `{prefix}:notices`.
///
/// ```no_run
/// use breaker_fleet::{AgentConfig, FleetAgent, RedisStore};
///
/// let store = RedisStore::new("redis://127.0.0.1:6379/")?;
/// let agent = FleetAgent::spawn(store, breakerbox::registry(), AgentConfig::new("web-1"));
/// // ... serve; the agent works in the background ...
/// println!("{:?}", agent.stats());
/// # Ok::<(), breaker_fleet::StoreError>(())
/// ```
#[derive(Clone)]
pub struct RedisStore {
    client: redis::Client,
    conn: Arc<OnceCell<ConnectionManager>>,
    prefix: String,
    timeout: Duration,
    scripts: Arc<Scripts>,
}

impl RedisStore {
    /// A store at `url` (`redis://host:port/db`). Connects lazily, on the first
    /// call, so an agent can start while Redis is down.
    pub fn new(url: &str) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(unavailable)?;
        Ok(RedisStore {
            client,
            conn: Arc::default(),
            prefix: "breaker:fleet".to_owned(),
            timeout: Duration::from_millis(50),
            scripts: Arc::new(Scripts::new()),
        })
    }

    /// Keys and channel under `prefix` instead of `breaker:fleet` (fleets sharing
    /// a Redis, or tests).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The bound on every call (default 50 ms).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn key(&self, kind: &str, group: &str) -> String {
        format!("{}:{kind}:{group}", self.prefix)
    }

    fn run_key(&self) -> String {
        format!("{}:run", self.prefix)
    }

    fn channel(&self) -> String {
        format!("{}:notices", self.prefix)
    }

    async fn bounded<T>(
        &self,
        f: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        tokio::time::timeout(self.timeout, f)
            .await
            .unwrap_or(Err(StoreError::Timeout))
    }

    async fn conn(&self) -> Result<ConnectionManager, StoreError> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(100));
        let client = self.client.clone();
        self.conn
            .get_or_try_init(|| async move {
                ConnectionManager::new_lazy_with_config(client, config).map_err(unavailable)
            })
            .await
            .cloned()
    }

    async fn invoke<T: redis::FromRedisValue>(
        &self,
        invocation: redis::ScriptInvocation<'_>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn().await?;
        self.bounded(async {
            invocation
                .invoke_async(&mut conn)
                .await
                .map_err(unavailable)
        })
        .await
    }
}

fn unavailable(e: redis::RedisError) -> StoreError {
    if e.is_timeout() {
        StoreError::Timeout
    } else {
        StoreError::Unavailable(e.to_string())
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn num(s: &str) -> Result<u64, StoreError> {
    s.parse()
        .map_err(|_| StoreError::Protocol(format!("not a number: {s:?}")))
}

/// `reply(...)` of the scripts: status, run, epoch, state, until, now, origin,
/// votes, hold, hold origin.
fn parse_reply(fields: &[String]) -> Result<(String, GroupRecord, u32), StoreError> {
    let [status, run, epoch, state, until, now, origin, votes, hold, hold_origin] = fields else {
        return Err(StoreError::Protocol(format!("{} fields", fields.len())));
    };
    let record = GroupRecord {
        run: run.clone(),
        epoch: num(epoch)?,
        state: FleetState::parse(state)
            .ok_or_else(|| StoreError::Protocol(format!("state {state:?}")))?,
        until_ms: num(until)?,
        now_ms: num(now)?,
        origin: origin.clone(),
        hold_until_ms: 0,
        hold_origin: String::new(),
    };
    // A hold that is no number is no hold: the group's other fields stand.
    let record = match num(hold) {
        Ok(hold_until_ms) => GroupRecord {
            hold_until_ms,
            hold_origin: hold_origin.clone(),
            ..record
        },
        Err(_) => record,
    };
    let votes = u32::try_from(num(votes)?).unwrap_or(u32::MAX);
    Ok((status.clone(), record, votes))
}

fn cas(fields: &[String], quorum: u32) -> Result<Cas, StoreError> {
    let (status, record, votes) = parse_reply(fields)?;
    Ok(match status.as_str() {
        "applied" => Cas::Applied(record),
        "voted" => Cas::Voted {
            votes,
            quorum,
            record,
        },
        _ => Cas::Lost(record),
    })
}

/// A notice as the scripts publish it: run, epoch, state, until, now, origin,
/// hold, hold origin, group (last: it may hold anything but a newline).
pub(crate) fn parse_notice(payload: &str) -> Option<Notice> {
    let mut it = payload.splitn(9, '\n');
    let run = it.next()?.to_owned();
    let epoch = it.next()?.parse().ok()?;
    let state = FleetState::parse(it.next()?)?;
    let until_ms = it.next()?.parse().ok()?;
    let now_ms = it.next()?.parse().ok()?;
    let origin = it.next()?.to_owned();
    // A hold that is no number is no hold.
    let (hold_until_ms, hold_origin) = match (it.next()?.parse(), it.next()?) {
        (Ok(hold), origin) => (hold, origin.to_owned()),
        (Err(_), _) => (0, String::new()),
    };
    let group = it.next()?.to_owned();
    Some(Notice {
        group,
        record: GroupRecord {
            run,
            epoch,
            state,
            until_ms,
            now_ms,
            origin,
            hold_until_ms,
            hold_origin,
        },
    })
}

impl FleetStore for RedisStore {
    async fn trip(&self, trip: Trip<'_>) -> Result<Cas, StoreError> {
        let mut inv = self.scripts.trip.key(self.run_key());
        inv.key(self.key("g", trip.group))
            .arg(trip.expected)
            .arg(trip.run)
            .arg(ms(trip.open_for))
            .arg(trip.origin)
            .arg(trip.quorum.max(1))
            .arg(self.channel())
            .arg(trip.group)
            .arg(self.key("v", trip.group));
        let fields: Vec<String> = self.invoke(inv).await?;
        cas(&fields, trip.quorum)
    }

    async fn close(
        &self,
        group: &str,
        run: &str,
        expected: u64,
        origin: &str,
    ) -> Result<Cas, StoreError> {
        let mut inv = self.scripts.close.key(self.run_key());
        inv.key(self.key("g", group))
            .arg(run)
            .arg(expected)
            .arg(origin)
            .arg(self.channel())
            .arg(group);
        let fields: Vec<String> = self.invoke(inv).await?;
        cas(&fields, 1)
    }

    async fn read(&self, groups: &[String]) -> Result<Vec<GroupRecord>, StoreError> {
        let mut inv = self.scripts.read.key(self.run_key());
        for g in groups {
            inv.key(self.key("g", g));
        }
        let fields: Vec<String> = self.invoke(inv).await?;
        fields
            .chunks(10)
            .map(|chunk| parse_reply(chunk).map(|(_, record, _)| record))
            .collect()
    }

    async fn acquire_probe(
        &self,
        group: &str,
        epoch: u64,
        slots: u32,
        lease: Duration,
        origin: &str,
    ) -> Result<bool, StoreError> {
        let mut inv = self.scripts.lease.key(self.run_key());
        inv.arg(self.key("l", group))
            .arg(epoch)
            .arg(slots.max(1))
            .arg(ms(lease).max(1))
            .arg(origin);
        let won: u64 = self.invoke(inv).await?;
        Ok(won == 1)
    }

    async fn add_counts(
        &self,
        group: &str,
        window: Duration,
        calls: u64,
        failures: u64,
    ) -> Result<(u64, u64), StoreError> {
        let mut inv = self.scripts.counts.key(self.run_key());
        inv.arg(self.key("a", group))
            .arg(ms(window).max(1))
            .arg(calls)
            .arg(failures);
        let (c, f): (u64, u64) = self.invoke(inv).await?;
        Ok((c, f))
    }

    async fn hold(
        &self,
        group: &str,
        hold_for: Duration,
        origin: &str,
    ) -> Result<GroupRecord, StoreError> {
        let mut inv = self.scripts.hold.key(self.run_key());
        inv.key(self.key("g", group))
            .arg(ms(hold_for))
            .arg(origin)
            .arg(self.channel())
            .arg(group);
        let fields: Vec<String> = self.invoke(inv).await?;
        parse_reply(&fields).map(|(_, record, _)| record)
    }

    async fn subscribe(&self) -> Result<mpsc::UnboundedReceiver<Notice>, StoreError> {
        let channel = self.channel();
        let mut pubsub = self
            .bounded(async {
                let mut pubsub = self.client.get_async_pubsub().await.map_err(unavailable)?;
                pubsub.subscribe(&channel).await.map_err(unavailable)?;
                Ok(pubsub)
            })
            .await?;
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut messages = pubsub.on_message();
            loop {
                tokio::select! {
                    message = messages.next() => {
                        let Some(message) = message else { break };
                        let Ok(payload) = message.get_payload::<String>() else { continue };
                        match parse_notice(&payload) {
                            Some(notice) => {
                                if tx.send(notice).is_err() {
                                    break;
                                }
                            }
                            None => log::warn!("unreadable fleet notice {payload:?}"),
                        }
                    }
                    () = tx.closed() => break,
                }
            }
        });
        Ok(rx)
    }
}
