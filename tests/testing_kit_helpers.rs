//! The testkit's helpers: the transitions assertion and the message it fails
//! with, scripts, and forcing.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use breakerbox::testing::{Script, TestKit};
use breakerbox::{circuit_breaker, CircuitOpen};

#[derive(Debug, PartialEq)]
enum Error {
    Down,
    Open,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

#[circuit_breaker(group = "payments", threshold = 2, open_ms = 500)]
fn charge(upstream: &Script<Result<(), Error>>) -> Result<(), Error> {
    upstream.next()
}

fn panic_text(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the assertion should fail");
    match payload.downcast::<String>() {
        Ok(text) => *text,
        Err(payload) => payload.downcast_ref::<&str>().unwrap().to_string(),
    }
}

#[test]
fn a_wrong_expectation_fails_with_both_lists_side_by_side() {
    let kit = TestKit::new();
    let _installed = kit.install();
    let upstream = Script::new([Err(Error::Down), Err(Error::Down)]);
    let _ = charge(&upstream);
    let _ = charge(&upstream);
    let text = panic_text(|| {
        kit.assert_transitions(
            "payments",
            &[
                "closed -> open (tripped by consecutive_failures)",
                "open -> half_open (open_elapsed)",
            ],
        )
    });
    assert_eq!(
        text,
        "group `payments` went through other transitions than expected (first difference at 2):\n\
         \x20    expected                                         | went through\n\
         \x20  1 closed -> open (tripped by consecutive_failures) | closed -> open (tripped by consecutive_failures)\n\
         >  2 open -> half_open (open_elapsed)                 | (nothing)\n"
    );
}

#[test]
fn a_right_expectation_passes_and_an_unreached_group_has_none() {
    let kit = TestKit::new();
    let _installed = kit.install();
    let upstream = Script::new([Err(Error::Down), Err(Error::Down), Ok(())]);
    let _ = charge(&upstream);
    let _ = charge(&upstream);
    assert_eq!(charge(&upstream), Err(Error::Open));
    kit.advance(Duration::from_millis(500));
    assert_eq!(charge(&upstream), Ok(()));
    kit.assert_transitions(
        "payments",
        &[
            "closed -> open (tripped by consecutive_failures)",
            "open -> half_open (open_elapsed)",
            "half_open -> closed (probes_succeeded)",
        ],
    );
    kit.assert_transitions("refunds", &[]);
    let text = panic_text(|| kit.assert_transitions("payments", &[]));
    assert!(text.contains("first difference at 1"), "{text}");
}

#[test]
#[should_panic(expected = "the script ran out: all 1 outcomes were given, and one more call came")]
fn a_script_that_runs_out_says_how_far_it_got() {
    let script = Script::new([1]);
    assert_eq!(script.next(), 1);
    script.next();
}

#[test]
fn forcing_closed_lets_failures_through_without_tripping() {
    let kit = TestKit::new();
    let _installed = kit.install();
    kit.force_closed("payments");
    let upstream = Script::new([Err(Error::Down), Err(Error::Down), Err(Error::Down)]);
    for _ in 0..3 {
        assert_eq!(charge(&upstream), Err(Error::Down));
    }
    kit.assert_transitions("payments", &["closed -> forced_closed (forced_closed)"]);
}

#[test]
#[should_panic(expected = "reads tokio's clock")]
fn a_tokio_kit_refuses_a_manual_advance() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let kit = runtime.block_on(async { TestKit::tokio() });
    kit.advance(Duration::from_secs(1));
}
