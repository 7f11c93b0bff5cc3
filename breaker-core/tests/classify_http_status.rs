//! `classify::http_status`: which HTTP status codes count against the server,
//! row by row, and every code from 0 to 999 against the rule.

use breaker_core::classify::{self, HttpStatus};
use breaker_core::{Breaker, Classifier, Config, State};

const TABLE: &[(u16, bool)] = &[
    (100, false),
    (101, false),
    (200, false),
    (204, false),
    (301, false),
    (304, false),
    (399, false),
    (400, false),
    (401, false),
    (403, false),
    (404, false),
    (407, false),
    (408, true),
    (409, false),
    (422, false),
    (429, false),
    (499, false),
    (500, true),
    (502, true),
    (503, true),
    (504, true),
    (599, true),
    (0, true),
    (99, true),
    (600, true),
    (999, true),
    (u16::MAX, true),
];

#[test]
fn each_status_row_counts_or_is_ignored_as_the_table_says() {
    for &(code, counts) in TABLE {
        assert_eq!(classify::http_status(&code), counts, "{code}");
        assert_eq!(classify::status_is_failure(code), counts, "{code}");
        let as_attribute: fn(&u16) -> bool = classify::http_status;
        assert_eq!(as_attribute.is_failure(&code), counts, "{code}");
    }
}

#[test]
fn exactly_5xx_408_and_invalid_codes_count() {
    for code in 0..=999u16 {
        let expected = (500..=599).contains(&code) || code == 408 || !(100..=599).contains(&code);
        assert_eq!(classify::http_status(&code), expected, "{code}");
    }
}

#[derive(Debug)]
enum ApiError {
    Status(u16),
    Transport,
}

impl HttpStatus for ApiError {
    fn http_status(&self) -> Option<u16> {
        match self {
            ApiError::Status(code) => Some(*code),
            ApiError::Transport => None,
        }
    }
}

#[test]
fn an_error_without_a_response_counts_as_a_failure() {
    assert!(classify::http_status(&ApiError::Transport));
    assert!(!classify::http_status(&ApiError::Status(429)));
    assert!(classify::http_status(&&ApiError::Status(503)));
}

#[test]
fn rate_limited_and_not_found_responses_never_open_the_breaker() {
    let b = Breaker::new("http", Config::builder().threshold(2).build().unwrap());
    for code in [404, 429, 400, 429] {
        let _ = b.call_with(&classify::http_status, || {
            Err::<(), _>(ApiError::Status(code))
        });
    }
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().ignored, 4);
    for code in [503, 408] {
        let _ = b.call_with(&classify::http_status, || {
            Err::<(), _>(ApiError::Status(code))
        });
    }
    assert_eq!(b.state(), State::Open);
}
