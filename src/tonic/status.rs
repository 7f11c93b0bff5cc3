//! What a gRPC answer says: its [`Code`], read from the headers or the
//! trailers into a [`GrpcStatus`], and the default verdict on it,
//! [`GrpcStatuses`].

use std::time::Duration;

use breaker_core::hold::Wait;
use http::HeaderMap;

use crate::tower::{Classify, Verdict};

/// The status codes of gRPC, by their numbers on the wire.
///
/// A number outside `0..=16` reads as [`Unknown`](Code::Unknown), as gRPC
/// says an unknown code is to be taken.
///
/// ```
/// use breakerbox::tonic::Code;
///
/// assert_eq!(Code::from_i32(14), Code::Unavailable);
/// assert_eq!(Code::from_i32(99), Code::Unknown);
/// assert_eq!(Code::Unavailable as i32, 14);
/// assert_eq!(Code::DeadlineExceeded.as_str(), "DEADLINE_EXCEEDED");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// `OK` (0).
    Ok = 0,
    /// `CANCELLED` (1): the caller cancelled the call.
    Cancelled = 1,
    /// `UNKNOWN` (2).
    Unknown = 2,
    /// `INVALID_ARGUMENT` (3).
    InvalidArgument = 3,
    /// `DEADLINE_EXCEEDED` (4).
    DeadlineExceeded = 4,
    /// `NOT_FOUND` (5).
    NotFound = 5,
    /// `ALREADY_EXISTS` (6).
    AlreadyExists = 6,
    /// `PERMISSION_DENIED` (7).
    PermissionDenied = 7,
    /// `RESOURCE_EXHAUSTED` (8): a quota or a rate limit.
    ResourceExhausted = 8,
    /// `FAILED_PRECONDITION` (9).
    FailedPrecondition = 9,
    /// `ABORTED` (10): a conflict, such as a transaction aborted.
    Aborted = 10,
    /// `OUT_OF_RANGE` (11).
    OutOfRange = 11,
    /// `UNIMPLEMENTED` (12).
    Unimplemented = 12,
    /// `INTERNAL` (13).
    Internal = 13,
    /// `UNAVAILABLE` (14).
    Unavailable = 14,
    /// `DATA_LOSS` (15).
    DataLoss = 15,
    /// `UNAUTHENTICATED` (16).
    Unauthenticated = 16,
}

impl Code {
    /// The code numbered `number`; [`Unknown`](Code::Unknown) for a number
    /// gRPC does not define.
    pub const fn from_i32(number: i32) -> Code {
        match number {
            0 => Code::Ok,
            1 => Code::Cancelled,
            3 => Code::InvalidArgument,
            4 => Code::DeadlineExceeded,
            5 => Code::NotFound,
            6 => Code::AlreadyExists,
            7 => Code::PermissionDenied,
            8 => Code::ResourceExhausted,
            9 => Code::FailedPrecondition,
            10 => Code::Aborted,
            11 => Code::OutOfRange,
            12 => Code::Unimplemented,
            13 => Code::Internal,
            14 => Code::Unavailable,
            15 => Code::DataLoss,
            16 => Code::Unauthenticated,
            _ => Code::Unknown,
        }
    }

    /// The code's name as gRPC spells it: `"UNAVAILABLE"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::Cancelled => "CANCELLED",
            Code::Unknown => "UNKNOWN",
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Aborted => "ABORTED",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Internal => "INTERNAL",
            Code::Unavailable => "UNAVAILABLE",
            Code::DataLoss => "DATA_LOSS",
            Code::Unauthenticated => "UNAUTHENTICATED",
        }
    }

    /// The code a gRPC client takes from an HTTP status when the answer
    /// carries no `grpc-status` (gRPC's HTTP-to-gRPC mapping): `400` is
    /// `INTERNAL`, `401` `UNAUTHENTICATED`, `403` `PERMISSION_DENIED`, `404`
    /// `UNIMPLEMENTED`, `429`, `502`, `503` and `504` `UNAVAILABLE`, any
    /// other `UNKNOWN`.
    pub const fn from_http_status(status: u16) -> Code {
        match status {
            400 => Code::Internal,
            401 => Code::Unauthenticated,
            403 => Code::PermissionDenied,
            404 => Code::Unimplemented,
            429 | 502 | 503 | 504 => Code::Unavailable,
            _ => Code::Unknown,
        }
    }
}

/// What the server asked of a client's retries with
/// `grpc-retry-pushback-ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pushback {
    /// Retry no sooner than this (a value of zero or more).
    After(Duration),
    /// Do not retry this call (a negative or unreadable value).
    DoNotRetry,
}

/// The status of one gRPC call as the breaker sees it: its code and the
/// server's retry pushback, read from the headers of a trailers-only answer
/// or from the trailers at the end of the body.
///
/// ```
/// use breakerbox::tonic::{Code, GrpcStatus, Pushback};
/// use std::time::Duration;
///
/// let mut trailers = http::HeaderMap::new();
/// trailers.insert("grpc-status", "8".parse().unwrap());
/// trailers.insert("grpc-retry-pushback-ms", "250".parse().unwrap());
/// let status = GrpcStatus::from_headers(&trailers).unwrap();
/// assert_eq!(status.code(), Code::ResourceExhausted);
/// assert_eq!(status.pushback(), Some(Pushback::After(Duration::from_millis(250))));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GrpcStatus {
    code: Code,
    pushback: Option<Pushback>,
}

impl GrpcStatus {
    /// A status of `code`, without a pushback.
    pub const fn new(code: Code) -> Self {
        GrpcStatus {
            code,
            pushback: None,
        }
    }

    /// The status in `headers` (a trailers-only answer's headers, or the
    /// trailers), or `None` without a `grpc-status`. A `grpc-status` that is
    /// not a number reads as [`Code::Unknown`].
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        let code = headers.get("grpc-status")?;
        let code = std::str::from_utf8(code.as_bytes())
            .ok()
            .and_then(|code| code.trim().parse::<i32>().ok())
            .map_or(Code::Unknown, Code::from_i32);
        let pushback =
            headers.get("grpc-retry-pushback-ms").map(|value| {
                match std::str::from_utf8(value.as_bytes())
                    .ok()
                    .and_then(|value| value.trim().parse::<i64>().ok())
                {
                    Some(ms) if ms >= 0 => {
                        Pushback::After(Duration::from_millis(ms.unsigned_abs()))
                    }
                    _ => Pushback::DoNotRetry,
                }
            });
        Some(GrpcStatus { code, pushback })
    }

    /// The status code.
    pub const fn code(&self) -> Code {
        self.code
    }

    /// The server's `grpc-retry-pushback-ms`, if it sent one.
    pub const fn pushback(&self) -> Option<Pushback> {
        self.pushback
    }
}

/// The default verdict on a gRPC status code, the rule of [`GrpcStatuses`]:
///
/// - `OK` succeeds;
/// - `UNAVAILABLE`, `DEADLINE_EXCEEDED`, `INTERNAL`, `DATA_LOSS` and
///   `UNKNOWN` fail: the server, or the way to it, is unwell;
/// - `INVALID_ARGUMENT`, `NOT_FOUND`, `ALREADY_EXISTS`, `PERMISSION_DENIED`,
///   `UNAUTHENTICATED`, `FAILED_PRECONDITION`, `OUT_OF_RANGE`,
///   `UNIMPLEMENTED`, `CANCELLED` and `ABORTED` are ignored: they are about the
///   request or the caller, not the server's health;
/// - `RESOURCE_EXHAUSTED` is ignored: the server is well and asks callers to
///   slow down, which says nothing against it (see [`resource_exhausted`]).
///
/// ```
/// use breakerbox::tonic::{code_verdict, Code};
/// use breakerbox::tower::Verdict;
///
/// assert_eq!(code_verdict(Code::Ok), Verdict::Success);
/// assert_eq!(code_verdict(Code::Unavailable), Verdict::Failure);
/// assert_eq!(code_verdict(Code::InvalidArgument), Verdict::Ignored);
/// assert_eq!(code_verdict(Code::ResourceExhausted), Verdict::Ignored);
/// ```
pub const fn code_verdict(code: Code) -> Verdict {
    match code {
        Code::Ok => Verdict::Success,
        Code::Unavailable
        | Code::DeadlineExceeded
        | Code::Internal
        | Code::DataLoss
        | Code::Unknown => Verdict::Failure,
        Code::InvalidArgument
        | Code::NotFound
        | Code::AlreadyExists
        | Code::PermissionDenied
        | Code::Unauthenticated
        | Code::FailedPrecondition
        | Code::OutOfRange
        | Code::Unimplemented
        | Code::Cancelled
        | Code::Aborted => Verdict::Ignored,
        Code::ResourceExhausted => resource_exhausted(),
    }
}

/// The verdict on `RESOURCE_EXHAUSTED`: ignored. The one place that decides
/// it. With a `grpc-retry-pushback-ms`, the answer is a server's wait, and
/// [`GrpcStatuses`] holds the breaker for it ([`Classify::wait`]).
pub const fn resource_exhausted() -> Verdict {
    Verdict::Ignored
}

/// Classifies gRPC calls by their status code ([`code_verdict`]); every
/// error of the service (no answer at all: a refused connection, a reset)
/// is a failure. The default classifier of
/// [`CircuitBreakerLayer`](super::CircuitBreakerLayer).
///
/// Any `Fn(Result<&GrpcStatus, &E>) -> Verdict` classifies too:
///
/// ```
/// use breakerbox::tonic::{code_verdict, Code, CircuitBreakerLayer, GrpcStatus};
/// use breakerbox::tower::Verdict;
///
/// // `NOT_FOUND` fails too: this service answers it only when its index is gone.
/// fn strict<E>(result: Result<&GrpcStatus, &E>) -> Verdict {
///     match result {
///         Ok(status) if status.code() == Code::NotFound => Verdict::Failure,
///         Ok(status) => code_verdict(status.code()),
///         Err(_) => Verdict::Failure,
///     }
/// }
/// let layer = CircuitBreakerLayer::new("docs-grpc-strict").classify(strict::<std::io::Error>);
/// # let _ = layer;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct GrpcStatuses;

impl<E> Classify<GrpcStatus, E> for GrpcStatuses {
    #[inline]
    fn classify(&self, result: Result<&GrpcStatus, &E>) -> Verdict {
        match result {
            Ok(status) => code_verdict(status.code()),
            Err(_) => Verdict::Failure,
        }
    }

    /// A `RESOURCE_EXHAUSTED` or `UNAVAILABLE` answer's
    /// `grpc-retry-pushback-ms`, when it is zero or more.
    fn retry_after(&self, result: Result<&GrpcStatus, &E>) -> Option<Duration> {
        let status = result.ok()?;
        match (status.code(), status.pushback()?) {
            (Code::ResourceExhausted | Code::Unavailable, Pushback::After(after)) => Some(after),
            _ => None,
        }
    }

    /// A `RESOURCE_EXHAUSTED` or `UNAVAILABLE` answer's
    /// `grpc-retry-pushback-ms`: a wait above zero holds the breaker for that
    /// long (the call counts as ignored, whatever its code); a negative or
    /// unreadable one is [`Wait::Bad`], counted, and the code judged as
    /// without it.
    fn wait(&self, result: Result<&GrpcStatus, &E>) -> Wait {
        let Ok(status) = result else {
            return Wait::None;
        };
        match (status.code(), status.pushback()) {
            (Code::ResourceExhausted | Code::Unavailable, Some(Pushback::After(after))) => {
                Wait::of(after)
            }
            (Code::ResourceExhausted | Code::Unavailable, Some(Pushback::DoNotRetry)) => Wait::Bad,
            _ => Wait::None,
        }
    }
}
