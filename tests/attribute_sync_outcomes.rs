//! A sync fn records exactly one outcome on every way out: normal return, each
//! `?`, an explicit `return`, and a panic (a failure; the panic goes on).

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use breakerbox::circuit_breaker;
use support::{tally, AppError, Tally, REG};

#[circuit_breaker(group = "sync-tail", registry = &REG)]
fn tail(fail: bool) -> Result<u32, AppError> {
    if fail {
        Err(AppError::Down)
    } else {
        Ok(7)
    }
}

#[test]
fn a_tail_ok_is_one_success_and_a_tail_err_is_one_failure() {
    assert_eq!(tail(false), Ok(7));
    assert_eq!(tally("sync-tail"), Tally::calls(1).successes(1));
    assert_eq!(tail(true), Err(AppError::Down));
    assert_eq!(tally("sync-tail"), Tally::calls(2).successes(1).failures(1));
}

fn step(ok: bool) -> Result<u32, AppError> {
    if ok {
        Ok(1)
    } else {
        Err(AppError::Down)
    }
}

#[circuit_breaker(group = "sync-question", registry = &REG)]
fn two_questions(first: bool, second: bool) -> Result<u32, AppError> {
    let a = step(first)?;
    let b = step(second)?;
    Ok(a + b)
}

#[test]
fn each_question_mark_exit_is_one_failure() {
    assert_eq!(two_questions(false, true), Err(AppError::Down));
    assert_eq!(tally("sync-question"), Tally::calls(1).failures(1));
    assert_eq!(two_questions(true, false), Err(AppError::Down));
    assert_eq!(tally("sync-question"), Tally::calls(2).failures(2));
    assert_eq!(two_questions(true, true), Ok(2));
    assert_eq!(
        tally("sync-question"),
        Tally::calls(3).successes(1).failures(2)
    );
}

#[circuit_breaker(group = "sync-return", registry = &REG)]
fn early_return(n: u32) -> Result<u32, AppError> {
    if n == 0 {
        return Err(AppError::Down);
    }
    if n == 1 {
        return Ok(1);
    }
    Ok(n * 2)
}

#[test]
fn an_explicit_return_records_its_own_value_once() {
    assert_eq!(early_return(0), Err(AppError::Down));
    assert_eq!(tally("sync-return"), Tally::calls(1).failures(1));
    assert_eq!(early_return(1), Ok(1));
    assert_eq!(
        tally("sync-return"),
        Tally::calls(2).successes(1).failures(1)
    );
    assert_eq!(early_return(4), Ok(8));
    assert_eq!(
        tally("sync-return"),
        Tally::calls(3).successes(2).failures(1)
    );
}

#[circuit_breaker(group = "sync-panic", registry = &REG)]
fn panics(really: bool) -> Result<u32, AppError> {
    if really {
        panic!("boom in the body");
    }
    Ok(0)
}

#[test]
fn a_panic_is_one_failure_and_keeps_unwinding_with_its_payload() {
    let caught = catch_unwind(AssertUnwindSafe(|| panics(true))).unwrap_err();
    assert_eq!(caught.downcast_ref::<&str>(), Some(&"boom in the body"));
    assert_eq!(tally("sync-panic"), Tally::calls(1).failures(1));
    assert_eq!(panics(false), Ok(0));
    assert_eq!(
        tally("sync-panic"),
        Tally::calls(2).successes(1).failures(1)
    );
}

#[circuit_breaker(group = "sync-plain", registry = &REG, fallback = no_value)]
fn not_a_result(n: u32) -> Option<u32> {
    n.checked_sub(1)
}

fn no_value(_n: u32) -> Option<u32> {
    None
}

#[test]
fn a_value_that_is_not_a_result_counts_as_success_even_when_none() {
    assert_eq!(not_a_result(0), None);
    assert_eq!(not_a_result(2), Some(1));
    assert_eq!(tally("sync-plain"), Tally::calls(2).successes(2));
}

#[circuit_breaker(group = "sync-unit", registry = &REG, fallback = unit_fallback)]
fn returns_unit(counter: &std::sync::atomic::AtomicU32) {
    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

fn unit_fallback(_counter: &std::sync::atomic::AtomicU32) {}

#[test]
fn a_unit_fn_counts_each_run_as_a_success() {
    let counter = std::sync::atomic::AtomicU32::new(0);
    returns_unit(&counter);
    returns_unit(&counter);
    assert_eq!(counter.into_inner(), 2);
    assert_eq!(tally("sync-unit"), Tally::calls(2).successes(2));
}

fn is_server_side(e: &AppError) -> bool {
    matches!(e, AppError::Down)
}

#[circuit_breaker(group = "sync-classified", registry = &REG, is_failure = is_server_side)]
fn classified(e: Option<AppError>) -> Result<(), AppError> {
    match e {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[test]
fn is_failure_decides_which_errors_count_and_the_rest_are_ignored() {
    let _ = classified(Some(AppError::BadRequest));
    assert_eq!(tally("sync-classified"), Tally::calls(1).ignored(1));
    let _ = classified(Some(AppError::Down));
    assert_eq!(
        tally("sync-classified"),
        Tally::calls(2).failures(1).ignored(1)
    );
    let _ = classified(None);
    assert_eq!(
        tally("sync-classified"),
        Tally::calls(3).successes(1).failures(1).ignored(1)
    );
}
