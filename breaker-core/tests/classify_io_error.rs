//! `classify::io_error`: which `std::io::Error` kinds count against the
//! dependency, row by row, through the same fn path the attribute takes.

use std::io::{Error, ErrorKind};
use std::time::Duration;

use breaker_core::{classify, Breaker, Classifier, Config, State};

/// Every stable kind with its verdict: `true` counts as a failure.
const TABLE: &[(ErrorKind, bool)] = &[
    // The dependency is unreachable, slow or broke the connection: count.
    (ErrorKind::ConnectionRefused, true),
    (ErrorKind::ConnectionReset, true),
    (ErrorKind::ConnectionAborted, true),
    (ErrorKind::NotConnected, true),
    (ErrorKind::BrokenPipe, true),
    (ErrorKind::TimedOut, true),
    (ErrorKind::UnexpectedEof, true),
    (ErrorKind::WriteZero, true),
    (ErrorKind::AddrInUse, true),
    (ErrorKind::AddrNotAvailable, true),
    (ErrorKind::HostUnreachable, true),
    (ErrorKind::NetworkUnreachable, true),
    (ErrorKind::NetworkDown, true),
    (ErrorKind::StaleNetworkFileHandle, true),
    (ErrorKind::StorageFull, true),
    (ErrorKind::ReadOnlyFilesystem, true),
    (ErrorKind::ResourceBusy, true),
    (ErrorKind::ExecutableFileBusy, true),
    (ErrorKind::Deadlock, true),
    (ErrorKind::Other, true),
    // The request itself was wrong or was answered: ignore.
    (ErrorKind::NotFound, false),
    (ErrorKind::AlreadyExists, false),
    (ErrorKind::PermissionDenied, false),
    (ErrorKind::InvalidInput, false),
    (ErrorKind::InvalidData, false),
    (ErrorKind::Unsupported, false),
    (ErrorKind::WouldBlock, false),
    (ErrorKind::Interrupted, false),
    (ErrorKind::OutOfMemory, false),
    (ErrorKind::NotADirectory, false),
    (ErrorKind::IsADirectory, false),
    (ErrorKind::DirectoryNotEmpty, false),
    (ErrorKind::NotSeekable, false),
    (ErrorKind::FileTooLarge, false),
    (ErrorKind::TooManyLinks, false),
    (ErrorKind::ArgumentListTooLong, false),
];

#[test]
fn each_io_error_kind_counts_or_is_ignored_as_the_table_says() {
    for &(kind, counts) in TABLE {
        let error = Error::new(kind, "from the test table");
        assert_eq!(classify::io_error(&error), counts, "{kind:?}");
        assert_eq!(classify::io_error_kind(kind), counts, "{kind:?}");
        // The same fn, taken as the attribute takes it: a path to `fn(&E) -> bool`.
        let as_attribute: fn(&Error) -> bool = classify::io_error;
        assert_eq!(as_attribute.is_failure(&error), counts, "{kind:?}");
    }
}

#[test]
fn a_breaker_opens_on_refused_connections_and_stays_closed_on_not_found() {
    let config = Config::builder().threshold(3).build().unwrap();
    let b = Breaker::new("io-refused", config);
    for _ in 0..3 {
        let _ = b.call_with(&classify::io_error, || {
            Err::<(), _>(Error::from(ErrorKind::NotFound))
        });
    }
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().ignored, 3);
    for _ in 0..3 {
        let _ = b.call_with(&classify::io_error, || {
            Err::<(), _>(Error::from(ErrorKind::ConnectionRefused))
        });
    }
    assert_eq!(b.state(), State::Open);
}

#[test]
fn an_ignored_probe_error_frees_the_slot_and_moves_nothing() {
    let clock = breaker_core::ManualClock::new();
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_millis(10))
        .build()
        .unwrap();
    let b = Breaker::with_clock("io-probe", config, clock.clone());
    let _ = b.call(|| Err::<(), _>(Error::from(ErrorKind::TimedOut)));
    clock.advance(std::time::Duration::from_millis(10));
    let _ = b.call_with(&classify::io_error, || {
        Err::<(), _>(Error::from(ErrorKind::PermissionDenied))
    });
    assert_eq!(b.state(), State::HalfOpen);
    assert!(b.would_admit(), "the probe slot is free again");
}
