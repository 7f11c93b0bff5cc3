//! Coming from resilience4j, Polly or failsafe-go: each library's circuit
//! breaker settings mapped to breakerbox's keys (the attribute's, the
//! configuration file's and [`ConfigBuilder`](crate::ConfigBuilder)'s, which
//! share one name each), then each difference in behaviour in one line.
//!
//! Rates are shares in breakerbox (`failure_rate = 0.5`), where resilience4j
//! and failsafe-go take percentages (`50`); durations are `*_ms` keys, which a
//! file and the `BREAKER_` variables also take as `"30s"`.
//!
//! # resilience4j
//!
//! | resilience4j | breakerbox |
//! |---|---|
//! | `failureRateThreshold` (percent) | `failure_rate` (share, `0.5` for `50`), with a window |
//! | `slidingWindowType = COUNT_BASED`, `slidingWindowSize` | `window_calls` |
//! | `slidingWindowType = TIME_BASED`, `slidingWindowSize` (seconds) | `window_ms` (milliseconds) |
//! | `minimumNumberOfCalls` | `min_calls` |
//! | `slowCallDurationThreshold` | `slow_call_ms` |
//! | `slowCallRateThreshold` (percent) | `slow_call_rate` (share) |
//! | `waitDurationInOpenState` | `open_ms` |
//! | `enableExponentialBackoff`, `exponentialBackoffMultiplier`, `exponentialMaxWaitDurationInOpenState` | `backoff` (off by default: 1.0 keeps the open time constant), `max_open_ms` |
//! | `enableRandomizedWait`, `randomizedWaitFactor` | `jitter` |
//! | `permittedNumberOfCallsInHalfOpenState` | `half_open_probes`, and `successes_to_close` (see below) |
//! | `maxWaitDurationInHalfOpenState` | `probe_timeout_ms` (see below) |
//! | `automaticTransitionFromOpenToHalfOpenEnabled` | none: open turns half-open on the next claim |
//! | `recordExceptions`, `recordFailurePredicate` | `is_failure` returning true |
//! | `ignoreExceptions` | `is_failure` returning false |
//! | states `FORCED_OPEN`, `DISABLED`, `METRICS_ONLY` | [`Breaker::force_open`](crate::Breaker::force_open), [`Breaker::force_closed`](crate::Breaker::force_closed), `shadow = true` |
//! | `transitionToClosedState()` | [`Breaker::reset`](crate::Breaker::reset) |
//! | TimeLimiter `timeoutDuration` | `timeout_ms` (async fns) |
//! | Bulkhead `maxConcurrentCalls` | `max_concurrent` |
//! | Retry `maxAttempts` | `retry = maxAttempts - 1`, with `idempotent = true` |
//! | `CallNotPermittedException` | [`CircuitOpen`](crate::CircuitOpen), or the `fallback` |
//!
//! # Polly (v8)
//!
//! | Polly `CircuitBreakerStrategyOptions` | breakerbox |
//! |---|---|
//! | `FailureRatio` | `failure_rate` |
//! | `SamplingDuration` | `window_ms` |
//! | `MinimumThroughput` | `min_calls` |
//! | `BreakDuration` | `open_ms` |
//! | `BreakDurationGenerator` | `backoff`, `max_open_ms`, `jitter` (a factor, a cap and a share, not a function) |
//! | `ShouldHandle` | `is_failure` |
//! | `ManualControl` (`IsolateAsync`, `CloseAsync`) | [`Breaker::force_open`](crate::Breaker::force_open), [`Breaker::reset`](crate::Breaker::reset) |
//! | `StateProvider` | [`Breaker::state`](crate::Breaker::state) |
//! | `OnOpened`, `OnClosed`, `OnHalfOpened` | [`Registry::subscribe`](crate::Registry::subscribe): one event per transition |
//! | Timeout strategy | `timeout_ms` |
//! | Retry strategy `MaxRetryAttempts` | `retry`, with `idempotent = true` |
//! | Fallback strategy | `fallback` (refusals), with `fallback_on = "failure"` (failures and timeouts too) |
//! | `BrokenCircuitException`, `IsolatedCircuitException` | [`CircuitOpen`](crate::CircuitOpen), its [`reason`](crate::CircuitOpen::reason) telling which |
//!
//! # failsafe-go
//!
//! | failsafe-go `circuitbreaker.Builder` | breakerbox |
//! |---|---|
//! | `WithFailureThreshold(n)` (consecutive) | `threshold = n` |
//! | `WithFailureThresholdRatio(f, n)` | `window_calls = n`, `failure_rate = f / n` |
//! | `WithFailureThresholdPeriod(n, period)` | `window_ms = period` with `failure_rate` and `min_calls` (a rate, not a count) |
//! | `WithFailureRateThreshold(rate, minExecutions, period)` | `failure_rate = rate / 100`, `min_calls = minExecutions`, `window_ms = period` |
//! | `WithDelay(d)` | `open_ms` |
//! | `WithDelayFunc` | `backoff`, `max_open_ms`, `jitter` |
//! | `WithSuccessThreshold(n)` | `successes_to_close = n`, `half_open_probes = n` |
//! | `WithSuccessThresholdRatio` | none: any probe failure reopens |
//! | `HandleErrors`, `HandleIf` | `is_failure` |
//! | `Open()`, `Close()` | [`Breaker::force_open`](crate::Breaker::force_open), [`Breaker::reset`](crate::Breaker::reset) |
//! | `OnStateChanged`, `OnOpen`, `OnClose`, `OnHalfOpen` | [`Registry::subscribe`](crate::Registry::subscribe) |
//! | timeout policy | `timeout_ms` |
//! | bulkhead `With(maxConcurrency)` | `max_concurrent` |
//! | retry policy `WithMaxRetries(n)` | `retry = n`, with `idempotent = true` |
//! | `ErrOpen` | [`CircuitOpen`](crate::CircuitOpen) |
//!
//! # What behaves differently
//!
//! - **Defaults**: 5 consecutive failures trip, the circuit stays open 30 s,
//!   one probe closes it, and the open time stays the same after a failed probe
//!   unless `backoff` asks it to grow. resilience4j starts with a failure rate
//!   over a window of calls, Polly with a failure ratio over a sampling time,
//!   failsafe-go with a single failure.
//! - **Half-open closes on successes, not a rate**: `successes_to_close` probe
//!   successes close the circuit and the first probe failure reopens it at
//!   once; the permitted calls' failure rate is never judged.
//! - **A probe is no outcome of the window**, and every window starts empty
//!   after each transition: a closed circuit judges only calls made since it
//!   closed.
//! - **`false` from the classifier means ignored**, neither success nor
//!   failure (not a success, as an unhandled outcome is elsewhere); an ignored
//!   outcome takes no place in a window.
//! - **Open to half-open is lazy**: no timer fires; the first claim after
//!   `open_ms` becomes the probe.
//! - **A hung probe loses its slot** after `probe_timeout_ms` (30 s), and its
//!   late outcome counts as stale; the breaker stays half-open for the next
//!   probe instead of reopening.
//! - **Events are per transition**, never per call: per-call counts are in
//!   [`Breaker::metrics`](crate::Breaker::metrics) and the exporters.
//! - **A refusal is a value**: `Err(CircuitOpen.into())` or the fallback's
//!   answer, never a panic; a fallback's value is never counted as an outcome.
//! - **A timeout is a failure** of the breaker's call, counted in its window,
//!   not a separate policy's outcome.
//!
//! Each line above holds for the code as it is; the examples below check the
//! ones a translated test meets first.
//!
//! ```
//! use std::time::Duration;
//! use breakerbox::{Breaker, Config, ManualClock, State};
//!
//! // The defaults.
//! let config = Config::default();
//! assert_eq!(config.threshold(), 5);
//! assert_eq!(config.open(), Duration::from_secs(30));
//! assert_eq!(config.backoff(), 1.0);
//! assert_eq!(config.max_open(), Duration::from_secs(300));
//! assert_eq!((config.half_open_probes(), config.successes_to_close()), (1, 1));
//! assert_eq!(config.probe_timeout(), Duration::from_secs(30));
//!
//! // Half-open closes after `successes_to_close` successes; a failure reopens.
//! let config = Config::builder()
//!     .threshold(1)
//!     .open(Duration::from_secs(1))
//!     .half_open_probes(2)
//!     .successes_to_close(2)
//!     .build()?;
//! let clock = ManualClock::new();
//! let breaker = Breaker::with_clock("migrating", config, clock.clone());
//! breaker.try_acquire()?.failure();
//! assert_eq!(breaker.state(), State::Open);
//! clock.advance(Duration::from_secs(1));
//! assert_eq!(breaker.state(), State::Open, "lazy: nothing moved yet");
//! breaker.try_acquire()?.success();
//! assert_eq!(breaker.state(), State::HalfOpen);
//! breaker.try_acquire()?.success();
//! assert_eq!(breaker.state(), State::Closed);
//!
//! // `false` from the classifier: ignored, neither success nor failure.
//! let permit = breaker.try_acquire()?;
//! permit.record_with(&Err::<(), &str>("not found"), &|_: &&str| false);
//! let m = breaker.metrics();
//! assert_eq!((m.ignored, m.failures), (1, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
