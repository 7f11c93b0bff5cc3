//! The table of configuration keys, [`config_keys!`], and what this crate makes
//! of it: the set values ([`Values`]), which keys are set ([`KeySet`]), the key
//! list with each key's type, role and class ([`KEYS`]), and a key's value as
//! one type ([`KeyValue`]).

use crate::choice::Abandoned;

/// The table of configuration keys: one entry per key, in the order every list
/// of keys follows. Each entry is the docs of the key's builder method, then
/// `name: type, role, class;` or `name: u64 as method, role, class;`. The name
/// is the attribute's and the file's key; the type is its value there; a `u64`
/// key is a duration in whole milliseconds (its name ends in `_ms`), and its
/// builder method, named after `as`, takes a [`Duration`](core::time::Duration).
/// That method is the key's name without `_ms` (`open_ms: u64 as open`; a test
/// holds every entry to it): a `macro_rules!` cannot cut a suffix off an
/// identifier, so the entry spells it out.
/// The role ([`Role`]) is how the key takes part in choosing the failure
/// policy; the class ([`Class`]) whether a live breaker may take a new value.
///
/// The table is handed to a macro of the caller, `callback`, which makes of it
/// what that crate needs (the builder's methods and getters, the attribute's
/// parser, the loader's table):
///
/// ```
/// macro_rules! names {
///     ($($(#[$doc:meta])* $name:ident: $ty:ty $(as $method:ident)?, $role:ident, $class:ident;)*) => {
///         [$(stringify!($name)),*]
///     };
/// }
/// let names = breaker_rules::config_keys!(names);
/// assert_eq!(names, breaker_rules::NAMES);
/// ```
///
/// Adding a key is one entry here, and the compiler asks for the rest: its
/// rule in [`check`](crate::check) (which takes [`Values`] apart field by
/// field), its field of [`Checked`](crate::Checked) and its value read back
/// ([`Checked::values`](crate::Checked::values), which takes `Checked` apart
/// the same way), and a getter of the builder method's name on `Config`. A
/// test asks for a row in each docs table, with the key's type.
#[macro_export]
macro_rules! config_keys {
    ($callback:ident) => {
        $callback! {
            /// Consecutive failures that open the circuit: `3` means the third trips.
            /// Selects the consecutive policy; refused together with a window key.
            threshold: u32, Picks, Live;
            /// Judge the failure rate over the last `window` (at least
            /// [`Config::MIN_WINDOW_MS`] milliseconds; attribute and file key
            /// `window_ms`): selects the time window policy.
            ///
            /// The window is [`Config::WINDOW_BUCKETS`] buckets of `window / 10`, aligned on
            /// the clock; outcomes expire a bucket at a time, lazily, on the next record or
            /// query. An outcome counts for at least nine tenths of `window` and never for
            /// `window` or longer: one exactly `window` old no longer counts.
            ///
            /// On the default clock, a window of 1 s or more without `slow_call_ms` places
            /// outcomes by [the coarse reading](crate#the-coarse-reading), which lags
            /// by at most one tick: a few per cent of a bucket.
            window_ms: u64 as window, Picks, Fixed;
            /// Judge the failure rate over the last `calls` recorded outcomes (1 to
            /// [`Config::MAX_WINDOW_CALLS`]): selects the count window policy.
            window_calls: u32, Picks, Fixed;
            /// Share of failures in the window, in `(0, 1]`, that opens the circuit
            /// (default [`Config::DEFAULT_FAILURE_RATE`]); `0.5` trips at 50%, not above it.
            /// Needs a window.
            failure_rate: f64, Window, Live;
            /// Outcomes (successes and failures; ignored errors do not count) the window
            /// must hold before it judges; default [`Config::DEFAULT_MIN_CALLS`] for a time
            /// window and `window_calls` for a count window, which may not be exceeded.
            /// Needs a window.
            min_calls: u32, Window, Live;
            /// A call taking longer than `slow` (key `slow_call_ms`), measured from
            /// claim to verdict on the breaker's clock, is slow, whether it succeeded or
            /// failed; exactly `slow` is not slow. Needs a window; trips at
            /// `slow_call_rate` (default 1.0: every call in the window slow).
            slow_call_ms: u64 as slow_call, Window, Bound;
            /// Share of slow calls in the window, in `(0, 1]`, that opens the circuit,
            /// even if every call succeeded. Needs `slow_call_ms`.
            slow_call_rate: f64, Window, Live;
            /// How long the circuit stays open before the next claim may probe (key
            /// `open_ms`; default 30 s; at least 1 ms).
            open_ms: u64 as open, Any, Live;
            /// Probes allowed in flight at once while half-open (default 1; 1 to
            /// [`Config::MAX_PROBES`]).
            half_open_probes: u32, Any, Live;
            /// Probe successes that close the circuit (default 1; 1 to
            /// [`Config::MAX_PROBES`]).
            successes_to_close: u32, Any, Live;
            /// Factor (`>= 1.0`) the open duration grows by after each failed probe;
            /// `1.0` keeps it constant (default 1.0).
            backoff: f64, Any, Live;
            /// Cap on the grown open duration (key `max_open_ms`). Must be at least the
            /// open duration (default: the longer of the open duration and 300 s).
            max_open_ms: u64 as max_open, Any, Live;
            /// How long a probe may stay in flight before its slot is reclaimed and its
            /// outcome, when it finally comes, is counted as stale (key
            /// `probe_timeout_ms`; default 30 s).
            probe_timeout_ms: u64 as probe_timeout, Any, Live;
            /// Deadline of one async call (key `timeout_ms`): when it passes first, the
            /// call's future is dropped, the call counts as a **failure** (and, lasting
            /// at least the deadline on the breaker's clock, as a slow call when the
            /// slow-call duration is shorter), and the caller gets a
            /// [`TimedOut`](crate::TimedOut) error.
            ///
            /// Enforced by the async helpers that take a [`Timer`](crate::Timer)
            /// ([`Breaker::call_async_guarded`](crate::Breaker::call_async_guarded)), by
            /// the tower layer, the reqwest middleware and the tonic layer (on tokio's
            /// timer), and by `#[circuit_breaker]` on an async fn that names the key. A sync call
            /// cannot be interrupted from outside its thread, so the sync helpers ignore
            /// it and the attribute refuses it on a sync fn. Costs one timer registration
            /// per call.
            timeout_ms: u64 as timeout, Any, Fixed;
            /// Bulkhead: at most `calls` calls of the group in flight at once (probes
            /// included). A call over the cap is refused at once with
            /// [`OpenReason::BulkheadFull`](crate::OpenReason::BulkheadFull), counted in
            /// `rejected` and `bulkhead_rejected`, never as a failure of the dependency.
            ///
            /// Enforced by the guarded helpers
            /// ([`Breaker::call_in_bulkhead`](crate::Breaker::call_in_bulkhead),
            /// [`Breaker::call_async_guarded`](crate::Breaker::call_async_guarded),
            /// [`Breaker::enter_bulkhead`](crate::Breaker::enter_bulkhead)), by the tower
            /// layer and the reqwest middleware, and by `#[circuit_breaker]`
            /// when it names the key; the plain `call` helpers and `try_acquire` do not
            /// look at it, so a group without it pays nothing.
            max_concurrent: u32, Any, Fixed;
            /// Opens the circuit when the p99 latency of the calls in the window
            /// (successes and failures, claim to verdict on the breaker's clock) is
            /// above `p99` (key `latency_p99_ms`), once the window holds `min_calls` of them: a
            /// dependency that answers every call, but slowly, trips. Needs `window_ms`
            /// or `window_calls`.
            ///
            /// The judgement over the window's calls is exact (p99, by nearest rank,
            /// is above `p99` exactly when more than 1% of them took longer than `p99`).
            /// The window is kept in ten buckets, as a time window is: a tenth of
            /// `window_ms`, or of `window_calls` calls (a count window's latency view
            /// then holds the last `window_calls` calls and at most a tenth more). Each
            /// bucket also keeps a fixed latency histogram (240 log-linear bins, about
            /// 1 KiB, no allocation per call) for the p99 in
            /// [`Metrics`](crate::Metrics): bins are 1,024 ns wide below 16,384 ns and
            /// at most 1/8 of their lower bound (12.5%) above, up to 2^32 units of
            /// 1,024 ns (about 73 min); longer calls share the last bin. A recorded
            /// call takes no lock: a few relaxed atomic adds to its bucket.
            latency_p99_ms: u64 as latency_p99, Window, Bound;
            /// After the circuit closes, ramp traffic back in over `ms` milliseconds
            /// instead of admitting every call at once: the share of calls admitted
            /// rises linearly from none (the half-open probes were all that went) to
            /// every call at `ms`. A call the ramp does not admit is refused at once
            /// with [`OpenReason::Ramping`](crate::OpenReason::Ramping) and the time
            /// until a call would be admitted; admission is a deterministic credit, so
            /// of any `n` consecutive calls the number admitted is within one of the
            /// curve's share of them. A trip during the ramp reopens with the grown
            /// open duration of a failed probe; a ramp that completes resets it.
            /// Unset (the default): the circuit closes to every call at once.
            ///
            /// ```
            /// # use breaker_core as breakerbox;
            /// use std::time::Duration;
            /// use breakerbox::Config;
            ///
            /// let config = Config::builder().ramp(Duration::from_secs(10)).build().unwrap();
            /// assert_eq!(config.ramp(), Some(Duration::from_secs(10)));
            /// assert_eq!(Config::DEFAULT.ramp(), None);
            /// ```
            ramp_ms: u64 as ramp, Any, Live;
            /// Share, in `[0, 1)`, by which each open duration is stretched or
            /// shortened at random (default 0: none): with `0.2`, each open lasts a
            /// uniformly random 80% to 120% of its backed-off, capped duration, so
            /// instances that tripped together do not probe together. Drawn once per
            /// trip from the breaker's own generator (seeded by
            /// [`Clock::jitter_seed`](crate::Clock::jitter_seed), so tests are
            /// repeatable); `retry_after` tells the drawn time.
            jitter: f64, Any, Live;
            /// Shadow mode (default `false`): the breaker counts, transitions,
            /// tells events and exports as usual but never refuses a call. A
            /// claim it would have refused (open, half-open with every probe slot
            /// taken, held back by a ramp or the throttle) runs as an ordinary call, whose outcome
            /// is counted and never moves the breaker (a ramp's: as any closed
            /// call's), and is counted in `shadow_refused`; a fallback is never
            /// called for it. A full bulkhead and a forced open still refuse: the
            /// one protects the process, the other is an operator's order.
            ///
            /// The way to tune thresholds in production before enforcing them:
            /// run a new group in shadow mode, read how often it would have
            /// refused, then switch it off, live, from the admin router,
            /// [`Breaker::set_shadow`](crate::Breaker::set_shadow) or a config
            /// reload. The switch costs the closed and open paths nothing.
            ///
            /// ```
            /// # use breaker_core as breakerbox;
            /// use breakerbox::{Breaker, Config, State};
            ///
            /// let config = Config::builder().threshold(1).shadow(true).build().unwrap();
            /// let breaker = Breaker::new("search", config);
            /// breaker.try_acquire().unwrap().failure();
            /// assert_eq!(breaker.state(), State::Open);
            /// let call = breaker.try_acquire().expect("shadow mode refuses nothing");
            /// call.success();
            /// assert_eq!(breaker.metrics().shadow_refused, 1);
            /// assert_eq!(breaker.state(), State::Open, "and moves nothing");
            /// ```
            shadow: bool, Any, Live;
            /// Keep a call-duration histogram of the group (key `histogram_ms`), by
            /// outcome (successful, failed, ignored), for the exporters'
            /// `breaker_calls_seconds`: buckets at 1, 2.5 and 5 times each power of ten
            /// of milliseconds, from 1 ms up to the first at or above `max` (1 ms to
            /// [`Config::MAX_HISTOGRAM_MS`]), and one for every longer call. `10_000`
            /// gives the 14 buckets from 1 ms to 10 s.
            ///
            /// Durations run from claim to verdict on the breaker's clock, as slow-call
            /// judging reads them (a call dropped at `timeout_ms` lasted at least its
            /// deadline). A keyed group keeps one histogram for all its keys. The
            /// group's claims read the clock, and each verdict adds to two relaxed
            /// atomics; a group without the key pays nothing. Fixed when the breaker is
            /// built: a live reconfiguration that sets, clears or changes it is refused.
            ///
            /// ```
            /// # use breaker_core as breakerbox;
            /// use std::time::Duration;
            /// use breakerbox::Config;
            ///
            /// let config = Config::builder().histogram(Duration::from_secs(10)).build().unwrap();
            /// assert_eq!(config.histogram(), Some(Duration::from_secs(10)));
            /// assert_eq!(Config::DEFAULT.histogram(), None);
            /// ```
            histogram_ms: u64 as histogram, Any, Fixed;
            /// In a keyed group: the share of its keys, in `(0, 1]`, that failing at
            /// once open the whole group (unset, the default: keys are judged one by
            /// one and the group never opens as one). The group then also judges as
            /// one: it counts the keys that begin a failure run while no key
            /// recovers (a success after a failure, or a key's probe closing it), and
            /// opens when that count reaches `systemic_share` of the keys it holds
            /// (two keys at least), or `threshold` keys (two at least) while no key of the
            /// group succeeded since the first of them began, whichever comes first. While
            /// the group is open, every key's call is refused with
            /// [`OpenReason::Group`](crate::OpenReason::Group) and one probe at a
            /// time goes for the whole group; when it succeeds, each key resumes in
            /// the state it was in. Means nothing on a breaker of its own. Whether
            /// it is set is fixed with the group; its value may change live. Kept to a whole
            /// percent.
            systemic_share: f64, Any, Bound;
            /// In a keyed group: the most keys, as a share in `(0, 1]` of the keys
            /// it holds (at least one key), open at once on their own (unset, the
            /// default: no cap), as Envoy's `max_ejection_percent`. A key that
            /// would trip past the cap opens the whole group instead, as a
            /// systemic fault: one bad deploy upstream cannot take every key out
            /// one by one. Means nothing on a breaker of its own. Whether it is set
            /// is fixed with the group; its value may change live. Kept to a whole
            /// percent.
            max_open_keys: f64, Any, Bound;
            /// Client-side adaptive throttling (Google SRE): the multiplier `K`
            /// (`>= 1.0`). Over the last `throttle_window_ms` the group counts the
            /// calls it was asked to make (`requests`, those it throttled among them)
            /// and the calls the dependency accepted (`accepts`: successes and
            /// errors the classifier ignores, since the dependency answered), and
            /// refuses a call with the share
            /// `max(0, (requests - K * accepts) / (requests + 1))`, at most
            /// `throttle_max_reject`. The calls that reach the dependency settle
            /// at about `K` times what it accepts, with no hard open: `2.0` sends
            /// twice what it takes, `1.1` sheds harder. A refused call gets
            /// [`OpenReason::Throttled`](crate::OpenReason::Throttled) at once,
            /// answered by a fallback like any refusal and never retried.
            ///
            /// Admission is a deterministic credit, as a ramp's: of any `n`
            /// consecutive calls at one share the number admitted is within one of
            /// it. The throttle judges the claims of a closed or half-open breaker
            /// (an open one refuses as open), and composes with a ramp and shadow
            /// mode (which counts what it would refuse). Unset (the default): no
            /// throttling, and the group's calls pay nothing for it. Whether it
            /// is set is laid out with the breaker; `K` may change live.
            ///
            /// ```
            /// # use breaker_core as breakerbox;
            /// use breakerbox::Config;
            ///
            /// let config = Config::builder().throttle(2.0).build().unwrap();
            /// assert_eq!(config.throttle(), Some(2.0));
            /// assert_eq!(config.throttle_max_reject(), Some(0.9));
            /// assert!(Config::builder().throttle(0.5).build().is_err());
            /// ```
            throttle: f64, Any, Bound;
            /// The throttle's window (key `throttle_window_ms`; default
            /// [`Config::DEFAULT_THROTTLE_WINDOW_MS`], at least
            /// [`Config::MIN_WINDOW_MS`]): requests and accepts of the last
            /// `window`, in ten buckets, as a time window keeps outcomes. Needs
            /// `throttle`; fixed when the breaker is built.
            throttle_window_ms: u64 as throttle_window, Any, Fixed;
            /// The most the throttle refuses, a share in `(0, 1)` (default
            /// [`Config::DEFAULT_THROTTLE_MAX_REJECT`]): however badly the
            /// dependency does, at least `1 - cap` of the calls still go, and
            /// tell when it heals. Needs `throttle`.
            throttle_max_reject: f64, Any, Live;
            /// The request rate (calls a second over the throttle's window, `>= 0`;
            /// default 0) below which nothing is throttled: a quiet group's few
            /// calls all go. Needs `throttle`.
            throttle_min_rps: f64, Any, Live;
            /// The longest a hold lasts (key `max_hold_ms`; default 1 h; whole seconds
            /// from 1 s to [`Config::MAX_HOLD_MS`], about 18 h):
            /// a server's wait (`Retry-After`, `grpc-retry-pushback-ms`, the app's own
            /// hint) longer than this holds the group for this long, never longer, and
            /// is counted as capped, never turned into an error. The release spread
            /// (up to a tenth of the hold) stays within it too. Live: a new value
            /// caps the next hold.
            ///
            /// ```
            /// # use breaker_core as breakerbox;
            /// use std::time::Duration;
            /// use breakerbox::Config;
            ///
            /// let config = Config::builder().max_hold(Duration::from_secs(120)).build().unwrap();
            /// assert_eq!(config.max_hold(), Duration::from_secs(120));
            /// assert_eq!(Config::DEFAULT.max_hold(), Duration::from_secs(3_600));
            /// ```
            max_hold_ms: u64 as max_hold, Any, Live;
            /// What a call dropped before its verdict counts as: `"ignore"` (the
            /// default) or `"failure"` ([`Abandoned`](crate::Abandoned)). A call is
            /// abandoned when its future is dropped (a caller's own timeout, a hedge
            /// that lost, a cancelled request) or its permit is dropped without a
            /// verdict. Under `"ignore"` it is counted in `abandoned` and moves
            /// nothing (an abandoned probe gives its slot back); under `"failure"`
            /// it is a failure, in the closed state and as a probe alike, so a
            /// dependency that hangs while every caller times out by itself trips
            /// the breaker. The default is `"ignore"` because one caller giving up
            /// says nothing certain about the dependency. `"failure"` is for
            /// client-side callers: a server-side layer (tower, tonic) sees a
            /// client's cancel or disconnect as an abandoned call, so under
            /// `"failure"` clients that go away trip it. A permit given back
            /// before its call ran is abandoned under either value. Live: a new
            /// value applies to the next call dropped.
            ///
            /// ```
            /// # use breaker_core as breakerbox;
            /// use breakerbox::config::Abandoned;
            /// use breakerbox::Config;
            ///
            /// let config = Config::builder().abandoned(Abandoned::Failure).build().unwrap();
            /// assert_eq!(config.abandoned(), Abandoned::Failure);
            /// assert_eq!(Config::DEFAULT.abandoned(), Abandoned::Ignore);
            /// ```
            abandoned: Abandoned, Any, Live;
        }
    };
}

/// The type a key takes: the type of its builder method's parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `u32`: counts (`threshold`, `window_calls`, `min_calls`, ...).
    U32,
    /// `u64`: durations in whole milliseconds (the `*_ms` keys, whose builder
    /// methods take a `Duration`).
    U64,
    /// `f64`: rates and factors (`failure_rate`, `slow_call_rate`, `backoff`).
    F64,
    /// `bool`: switches (`shadow`).
    Bool,
    /// One of a few words (`abandoned`: `"ignore"` or `"failure"`), given here.
    Choice(&'static [&'static str]),
}

/// How a key takes part in choosing the failure policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `threshold`, `window_ms`, `window_calls`: picks the policy.
    Picks,
    /// Tunes a window; means nothing under the consecutive policy.
    Window,
    /// Applies under every policy.
    Any,
}

/// Whether a live breaker takes a new value of the key (a reconfiguration
/// keeps the breaker's state and counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A new value applies from the next call or outcome.
    Live,
    /// Whether the key is set is laid out with the breaker (a structure is
    /// built for it); while set, its value may change live.
    Bound,
    /// Laid out with the breaker: a live change that sets, clears or changes
    /// it is refused.
    Fixed,
}

/// One key of the table: its name, builder method, type, role and class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyInfo {
    /// The key of the attribute, the file and the variables.
    pub name: &'static str,
    /// Its builder method: the key's name, or the name the table gives after
    /// `as` (`open_ms` is `open`; the retry key `retry` is
    /// `RetryPolicy::new`).
    pub method: &'static str,
    /// The type of its value.
    pub ty: Ty,
    /// How it takes part in choosing the failure policy.
    pub role: Role,
    /// Whether a live breaker takes a new value.
    pub class: Class,
}

/// The value of one key, as its type ([`Ty`]) holds it: a duration in whole
/// milliseconds.
///
/// ```
/// use breaker_rules::{check, KeyValue, Values};
///
/// let checked = check(&Values { threshold: Some(3), ..Values::EMPTY }).unwrap();
/// assert_eq!(checked.values().get("threshold"), Some(KeyValue::U32(3)));
/// assert_eq!(checked.values().get("open_ms"), Some(KeyValue::U64(30_000)));
/// assert_eq!(checked.values().get("window_ms"), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyValue {
    /// A count.
    U32(u32),
    /// A duration, in whole milliseconds.
    U64(u64),
    /// A rate or a factor.
    F64(f64),
    /// A switch.
    Bool(bool),
    /// A word of a [`Ty::Choice`] key.
    Choice(&'static str),
}

impl KeyValue {
    /// The type of the value.
    pub const fn ty(self) -> Ty {
        match self {
            KeyValue::U32(_) => Ty::U32,
            KeyValue::U64(_) => Ty::U64,
            KeyValue::F64(_) => Ty::F64,
            KeyValue::Bool(_) => Ty::Bool,
            // `abandoned` is the one key of words.
            KeyValue::Choice(_) => Ty::Choice(Abandoned::WORDS),
        }
    }
}

/// The builder method of a table entry: the name after `as`, or the key's own.
#[doc(hidden)]
#[macro_export]
macro_rules! method_name {
    ($name:ident as $method:ident) => {
        stringify!($method)
    };
    ($name:ident) => {
        stringify!($name)
    };
}

/// The type of a table entry, as a [`Ty`] and a [`KeyValue`].
pub(crate) trait TyOf: Sized {
    const TY: Ty;
    fn wrap(self) -> KeyValue;
    fn unwrap(value: KeyValue) -> Option<Self>;
}

macro_rules! ty_of {
    ($($ty:ty => $variant:ident,)*) => {$(
        impl TyOf for $ty {
            const TY: Ty = Ty::$variant;
            fn wrap(self) -> KeyValue {
                KeyValue::$variant(self)
            }
            fn unwrap(value: KeyValue) -> Option<Self> {
                match value {
                    KeyValue::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    )*};
}

ty_of! {
    u32 => U32,
    u64 => U64,
    f64 => F64,
    bool => Bool,
}

impl TyOf for Abandoned {
    const TY: Ty = Ty::Choice(Abandoned::WORDS);
    fn wrap(self) -> KeyValue {
        KeyValue::Choice(self.as_str())
    }
    fn unwrap(value: KeyValue) -> Option<Self> {
        match value {
            KeyValue::Choice(word) => Abandoned::from_word(word),
            _ => None,
        }
    }
}

/// What this crate makes of a table of keys (the breaker's, or the retry
/// keys'): a struct of the values set, the names, the key list and its length.
macro_rules! define {
    (
        $values:ident, $names:ident, $keys:ident, $count:ident, $what:literal;
        $($(#[$doc:meta])* $name:ident: $ty:ty $(as $method:ident)?, $role:ident, $class:ident;)*
    ) => {
        #[doc = concat!("The values set for each ", $what, ", `None` where a key was")]
        /// left to its default: what a builder, an attribute or a configuration
        /// layer holds before the rules judge it.
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $values {
            $(
                #[doc = concat!("`", stringify!($name), "`, when set.")]
                pub $name: Option<$ty>,
            )*
        }

        impl $values {
            /// No key set.
            pub const EMPTY: $values = $values { $($name: None,)* };

            /// The value of `key`, when it is a key of the table and set.
            pub fn get(&self, key: &str) -> Option<KeyValue> {
                match key {
                    $(stringify!($name) => self.$name.map(TyOf::wrap),)*
                    _ => None,
                }
            }

            /// Sets `key` to `value`; `false` (nothing set) when `key` is not a
            /// key of the table or `value` not of its type.
            pub fn set(&mut self, key: &str, value: KeyValue) -> bool {
                match key {
                    $(stringify!($name) => match TyOf::unwrap(value) {
                        Some(v) => {
                            self.$name = Some(v);
                            true
                        }
                        None => false,
                    },)*
                    _ => false,
                }
            }
        }

        #[doc = concat!("Every ", $what, ", in table order.")]
        pub const $names: [&str; $count] = [$(stringify!($name)),*];

        #[doc = concat!("Every ", $what, " with its builder method, type, role and class, in table order.")]
        pub const $keys: [KeyInfo; $count] = [$(
            KeyInfo {
                name: stringify!($name),
                method: $crate::method_name!($name $(as $method)?),
                ty: <$ty as TyOf>::TY,
                role: Role::$role,
                class: Class::$class,
            },
        )*];

        #[doc = concat!("How many of them the table holds: one per ", $what, ".")]
        pub const $count: usize = [$(stringify!($name)),*].len();
    };
}

macro_rules! define_config {
    ($($entries:tt)*) => {
        define!(Values, NAMES, KEYS, KEY_COUNT, "configuration key"; $($entries)*);
        set_keys!($($entries)*);
    };
}

/// [`Values::set_keys`].
macro_rules! set_keys {
    ($($(#[$doc:meta])* $name:ident: $ty:ty $(as $method:ident)?, $role:ident, $class:ident;)*) => {
        impl Values {
            /// The keys set, by their index in [`NAMES`].
            pub const fn set_keys(&self) -> KeySet {
                let mut bits = 0u64;
                let mut index = 0;
                $(
                    if self.$name.is_some() {
                        bits |= 1 << index;
                    }
                    index += 1;
                )*
                let _ = index;
                KeySet(bits)
            }
        }
    };
}

config_keys!(define_config);

macro_rules! define_retry {
    ($($entries:tt)*) => {
        define!(RetryValues, RETRY_NAMES, RETRY_KEYS, RETRY_KEY_COUNT, "retry key"; $($entries)*);
    };
}

crate::retry_keys!(define_retry);

/// The index of `name` in `names`, found at compile time where `name` is a
/// constant (a misspelt name is then a build error); `usize::MAX` when absent.
pub const fn index_of(names: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < names.len() {
        if bytes_eq(names[i].as_bytes(), name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    usize::MAX
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The bit of the retry key `name` in a set of retry keys (one bit per index
/// in [`RETRY_NAMES`]); a name that is no retry key fails to build where it is
/// a constant.
///
/// ```
/// assert_eq!(breaker_rules::retry_key_bit("retry"), 1);
/// assert_eq!(breaker_rules::retry_key_bit("retry_max_delay_ms"), 1 << 2);
/// ```
pub const fn retry_key_bit(name: &str) -> u8 {
    let index = index_of(&RETRY_NAMES, name);
    assert!(index < RETRY_KEY_COUNT, "not a retry key");
    1 << index
}

const _: () = assert!(
    RETRY_KEY_COUNT <= 8,
    "a RetryPolicy holds one bit per retry key in a u8: widen it before adding a 9th"
);

const _: () = assert!(
    KEY_COUNT <= 64,
    "a KeySet holds one bit per key: widen it before adding a 65th key"
);

/// A set of keys, one bit per index in [`NAMES`]: which keys a configuration
/// was given explicitly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeySet(u64);

impl KeySet {
    /// No key.
    pub const EMPTY: KeySet = KeySet(0);

    /// Whether the key at `index` of [`NAMES`] is in the set.
    pub const fn contains_index(self, index: usize) -> bool {
        index < KEY_COUNT && self.0 & (1 << index) != 0
    }

    /// Whether `key` is in the set.
    pub fn contains(self, key: &str) -> bool {
        self.iter().any(|k| k == key)
    }

    /// The keys in the set, in table order.
    pub fn iter(self) -> impl Iterator<Item = &'static str> {
        NAMES
            .into_iter()
            .enumerate()
            .filter(move |(i, _)| self.contains_index(*i))
            .map(|(_, key)| key)
    }

    /// How many keys the set holds.
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_duration_key_is_in_milliseconds_and_its_method_is_the_key_without_ms() {
        for key in KEYS {
            let duration = key.ty == Ty::U64;
            assert_eq!(duration, key.name.ends_with("_ms"), "{key:?}");
            let method = key.name.strip_suffix("_ms").unwrap_or(key.name);
            assert_eq!(key.method, method, "{key:?}");
        }
        let open = KEYS.iter().find(|k| k.name == "open_ms").unwrap();
        assert_eq!(open.method, "open");
    }

    #[test]
    fn every_set_value_is_in_the_key_set_by_its_table_index() {
        let values = Values {
            window_calls: Some(20),
            latency_p99_ms: Some(5),
            ..Values::EMPTY
        };
        let set = values.set_keys();
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            ["window_calls", "latency_p99_ms"]
        );
        let latency = NAMES.iter().position(|k| *k == "latency_p99_ms").unwrap();
        assert!(set.contains_index(2) && set.contains_index(latency));
        assert!(
            !set.contains_index(KEY_COUNT - 1),
            "the last key is not set"
        );
        assert!(!set.contains("threshold"));
        assert_eq!(Values::EMPTY.set_keys(), KeySet::EMPTY);
    }
}
