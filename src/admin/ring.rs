//! The event ring: the last events of a registry (transitions, conflicts) and
//! of the router (admin actions), bounded, and a broadcast of each new one for
//! the event stream.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use breaker_core::Event;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use super::json;

/// Events a slow stream reader may fall behind by before it skips some.
const STREAM_LAG: usize = 256;

/// The ring and its broadcast.
pub(super) struct Ring {
    capacity: usize,
    entries: Mutex<Entries>,
    stream: broadcast::Sender<Value>,
}

struct Entries {
    next_seq: u64,
    kept: VecDeque<Value>,
}

impl Ring {
    pub(super) fn new(capacity: usize) -> Self {
        Ring {
            capacity,
            entries: Mutex::new(Entries {
                next_seq: 1,
                kept: VecDeque::with_capacity(capacity),
            }),
            stream: broadcast::channel(STREAM_LAG).0,
        }
    }

    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// A registry subscriber's entry point: keeps what the ring shows.
    pub(super) fn told(&self, event: &Event) {
        if let Some(fields) = json::event(event) {
            self.push(fields);
        }
    }

    /// Keeps `fields` as the newest event, numbered and timed, and sends it
    /// to the streams once the ring's lock is released.
    pub(super) fn push(&self, fields: Map<String, Value>) {
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let entry = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            let mut entry = Map::new();
            entry.insert("seq".into(), entries.next_seq.into());
            entry.insert("unix_ms".into(), unix_ms.into());
            entry.extend(fields);
            let entry = Value::Object(entry);
            entries.next_seq += 1;
            if entries.kept.len() == self.capacity {
                entries.kept.pop_front();
            }
            entries.kept.push_back(entry.clone());
            entry
        };
        // No stream listening is no error.
        let _ = self.stream.send(entry);
    }

    /// The last `limit` events, oldest first.
    pub(super) fn last(&self, limit: usize) -> Vec<Value> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let skip = entries.kept.len().saturating_sub(limit);
        entries.kept.iter().skip(skip).cloned().collect()
    }

    /// A receiver of every event pushed from now on.
    pub(super) fn follow(&self) -> broadcast::Receiver<Value> {
        self.stream.subscribe()
    }
}
