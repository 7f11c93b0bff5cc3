//! Ready classifiers that decide which errors count against a dependency's health:
//! [`io_error`] for `std::io::Error` and [`http_status`] for HTTP status codes.
//!
//! Each is a plain fn taking `&E` and returning `true` when the error counts as a
//! failure and `false` when it is ignored (neither success nor failure: it frees a
//! probe slot and moves nothing). Pass one wherever a [`Classifier`]
//! goes, or name it in the attribute:
//!
//! ```
//! # use breaker_core as breakerbox;
//! use std::io;
//! use breakerbox::{classify, Breaker, Config};
//!
//! let breaker = Breaker::new("files", Config::builder().threshold(1).build()?);
//! let missing = breaker.call_with(&classify::io_error, || {
//!     Err::<(), _>(io::Error::from(io::ErrorKind::NotFound))
//! });
//! assert!(missing.is_err());
//! assert_eq!(breaker.metrics().ignored, 1); // the caller's mistake, not the disk's
//! assert!(breaker.would_admit());
//! # Ok::<(), breakerbox::ConfigError>(())
//! ```
//!
//! With the attribute: `#[circuit_breaker(group = "files", is_failure = breakerbox::classify::io_error)]`.

use std::io::{self, ErrorKind};

pub use crate::breaker::permit::{Classifier, EveryError, Scope};

/// Whether an I/O error counts as a failure of the dependency.
///
/// The rule: an error counts unless it is known to describe the *request* rather
/// than the dependency's health. Ignored (`false`):
///
/// | kind | why it says nothing about the dependency |
/// |---|---|
/// | `NotFound`, `AlreadyExists` | an answer about the thing asked for |
/// | `PermissionDenied` | the caller lacks rights; retrying elsewhere will not help |
/// | `InvalidInput`, `InvalidData` | a malformed request, or data the caller could not parse |
/// | `Unsupported` | the operation is not offered at all |
/// | `WouldBlock`, `Interrupted` | not an outcome: try again (non-blocking I/O, a signal) |
/// | `OutOfMemory` | this process is short of memory, not the dependency |
/// | `NotADirectory`, `IsADirectory`, `DirectoryNotEmpty`, `NotSeekable`, `FileTooLarge`, `TooManyLinks`, `ArgumentListTooLong` | a request that does not fit the file system object |
///
/// Everything else counts (`true`), among them `ConnectionRefused`,
/// `ConnectionReset`, `ConnectionAborted`, `NotConnected`, `BrokenPipe`, `TimedOut`,
/// `UnexpectedEof`, `WriteZero`, `AddrInUse`, `AddrNotAvailable`,
/// `HostUnreachable`, `NetworkUnreachable`, `NetworkDown`, `StorageFull`,
/// `ReadOnlyFilesystem`, `ResourceBusy`, `StaleNetworkFileHandle`, `Deadlock`,
/// `Other`, and any kind a later Rust adds: an error nobody classified is
/// treated as the dependency's, so an unknown failure mode still opens the circuit.
/// (Kinds stabilised after the crate's minimum Rust, 1.85, such as
/// `InvalidFilename`, are in that last group until the minimum moves.)
///
/// ```
/// # use breaker_core as breakerbox;
/// use std::io::{Error, ErrorKind};
/// use breakerbox::classify::io_error;
///
/// assert!(io_error(&Error::from(ErrorKind::ConnectionRefused)));
/// assert!(io_error(&Error::new(ErrorKind::TimedOut, "read timed out")));
/// assert!(!io_error(&Error::from(ErrorKind::NotFound)));
/// ```
pub fn io_error(error: &io::Error) -> bool {
    io_error_kind(error.kind())
}

/// [`io_error`] by kind alone.
pub const fn io_error_kind(kind: ErrorKind) -> bool {
    !matches!(
        kind,
        ErrorKind::NotFound
            | ErrorKind::AlreadyExists
            | ErrorKind::PermissionDenied
            | ErrorKind::InvalidInput
            | ErrorKind::InvalidData
            | ErrorKind::Unsupported
            | ErrorKind::WouldBlock
            | ErrorKind::Interrupted
            | ErrorKind::OutOfMemory
            | ErrorKind::NotADirectory
            | ErrorKind::IsADirectory
            | ErrorKind::DirectoryNotEmpty
            | ErrorKind::NotSeekable
            | ErrorKind::FileTooLarge
            | ErrorKind::TooManyLinks
            | ErrorKind::ArgumentListTooLong
    )
}

/// An error that may carry an HTTP status code, for [`http_status`].
///
/// Implemented for `u16`; implement it for your client's error type so that
/// `is_failure = breakerbox::classify::http_status` works on it directly.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::classify::{http_status, HttpStatus};
///
/// enum ApiError { Status(u16), Connect }
///
/// impl HttpStatus for ApiError {
///     fn http_status(&self) -> Option<u16> {
///         match self {
///             ApiError::Status(code) => Some(*code),
///             ApiError::Connect => None, // no response at all
///         }
///     }
/// }
/// assert!(http_status(&ApiError::Status(503)));
/// assert!(!http_status(&ApiError::Status(404)));
/// assert!(http_status(&ApiError::Connect));
/// ```
pub trait HttpStatus {
    /// The status code of the response, or `None` when no response came (a
    /// connection or transport error), which counts as a failure.
    fn http_status(&self) -> Option<u16>;
}

impl HttpStatus for u16 {
    fn http_status(&self) -> Option<u16> {
        Some(*self)
    }
}

impl<T: HttpStatus + ?Sized> HttpStatus for &T {
    fn http_status(&self) -> Option<u16> {
        (**self).http_status()
    }
}

/// Whether an HTTP error counts as a failure of the server: a response with a
/// status [`status_is_failure`] counts, and so does no response at all.
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::classify::http_status;
///
/// assert!(http_status(&503u16));
/// assert!(http_status(&408u16));
/// assert!(!http_status(&429u16)); // rate limited: the client's pace, not the server's health
/// ```
pub fn http_status<E: HttpStatus + ?Sized>(error: &E) -> bool {
    match error.http_status() {
        Some(code) => status_is_failure(code),
        None => true,
    }
}

/// Whether a status code says the server is unhealthy:
///
/// | status | counts | why |
/// |---|---|---|
/// | 500–599 | yes | the server failed |
/// | 408 Request Timeout | yes | the server gave up waiting: it is slow or overloaded |
/// | other 400–499, 429 included | no | the request was wrong, unauthorised, missing, or too frequent: a breaker would not fix it (back off on 429 instead) |
/// | 100–399 | no | not an error (informational, success, redirect) |
/// | below 100 or above 599 | yes | not a valid status: the server is misbehaving |
pub const fn status_is_failure(code: u16) -> bool {
    match code {
        408 => true,
        100..=499 => false,
        _ => true,
    }
}
