//! The server's delay in an HTTP answer: [`retry_after`] reads `Retry-After`
//! on a `429` or `503` for a retry's next wait, and [`server_wait`] reads it
//! without loss for a hold (see [`breakerbox::hold`](crate::hold)).

use std::time::{Duration, SystemTime};

use breaker_core::hold::Wait;
use http::header::{DATE, RETRY_AFTER};
use http::HeaderMap;

/// The delay a `429 Too Many Requests` or `503 Service Unavailable` answer
/// asks for in its `Retry-After` header, in either form: whole seconds
/// (`Retry-After: 2`) or an HTTP date (`Retry-After: Wed, 21 Oct 2026
/// 07:28:00 GMT`), which is measured from the answer's own `Date` header
/// (the server's clock, so the two clocks' skew does not count) or, without
/// one, from this machine's wall clock; a date already past is no delay.
///
/// `None` for any other status, without the header, or when the header is
/// not one of the two forms (a bad header is ignored, as if absent). Seconds
/// too many for a `u64` read as `u64::MAX` seconds, which a hold caps at the
/// group's `max_hold_ms`.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::tower::retry_after;
///
/// let mut headers = http::HeaderMap::new();
/// headers.insert("retry-after", "2".parse().unwrap());
/// assert_eq!(retry_after(429, &headers), Some(Duration::from_secs(2)));
/// assert_eq!(retry_after(500, &headers), None);
///
/// headers.insert("date", "Wed, 21 Oct 2026 07:28:00 GMT".parse().unwrap());
/// headers.insert("retry-after", "Wed, 21 Oct 2026 07:28:30 GMT".parse().unwrap());
/// assert_eq!(retry_after(503, &headers), Some(Duration::from_secs(30)));
///
/// headers.insert("retry-after", "soon".parse().unwrap());
/// assert_eq!(retry_after(503, &headers), None);
/// ```
pub fn retry_after(status: u16, headers: &HeaderMap) -> Option<Duration> {
    match read(status, headers)? {
        Ok(wait) => Some(wait),
        Err(Bad::Past) => Some(Duration::ZERO),
        Err(Bad::Unreadable) => None,
    }
}

/// What a `429 Too Many Requests` or `503 Service Unavailable` answer asks of
/// every caller, read as [`retry_after`] reads it, for a hold:
/// [`Wait::For`] a delay above zero; [`Wait::Bad`] a header that is there but
/// not usable (not whole seconds or an HTTP date, negative, a date already
/// past), which an integration counts and otherwise ignores; [`Wait::None`]
/// for `Retry-After: 0`, any other status, or no header. Never panics;
/// a delay too long for a `Duration`'s seconds is `u64::MAX` seconds, which
/// the hold caps at `max_hold_ms`.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::hold::Wait;
/// use breakerbox::tower::server_wait;
///
/// let mut headers = http::HeaderMap::new();
/// headers.insert("retry-after", "5".parse().unwrap());
/// assert_eq!(server_wait(429, &headers), Wait::For(Duration::from_secs(5)));
/// assert_eq!(server_wait(200, &headers), Wait::None);
/// headers.insert("retry-after", "-5".parse().unwrap());
/// assert_eq!(server_wait(429, &headers), Wait::Bad);
/// ```
pub fn server_wait(status: u16, headers: &HeaderMap) -> Wait {
    match read(status, headers) {
        None => Wait::None,
        Some(Ok(wait)) => Wait::of(wait),
        Some(Err(_)) => Wait::Bad,
    }
}

/// Why a `Retry-After` there gives no delay.
enum Bad {
    /// Neither whole seconds nor an HTTP date.
    Unreadable,
    /// A date at or before the answer's.
    Past,
}

/// The `Retry-After` of an answer whose status asks for one: `None` without
/// it (or for another status), the delay, or why it gives none.
fn read(status: u16, headers: &HeaderMap) -> Option<Result<Duration, Bad>> {
    if status != 429 && status != 503 {
        return None;
    }
    let value = headers.get(RETRY_AFTER)?;
    let Ok(value) = value.to_str().map(str::trim) else {
        return Some(Err(Bad::Unreadable));
    };
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Ok(Duration::from_secs(value.parse().unwrap_or(u64::MAX))));
    }
    let Ok(at) = httpdate::parse_http_date(value) else {
        return Some(Err(Bad::Unreadable));
    };
    let now = headers
        .get(DATE)
        .and_then(|date| date.to_str().ok())
        .and_then(|date| httpdate::parse_http_date(date).ok())
        .unwrap_or_else(SystemTime::now);
    Some(match at.duration_since(now) {
        Ok(wait) if !wait.is_zero() => Ok(wait),
        _ => Err(Bad::Past),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn seconds_and_dates_are_read_and_bad_values_ignored() {
        let h = |v: &str| headers(&[("retry-after", v)]);
        assert_eq!(retry_after(429, &h("0")), Some(Duration::ZERO));
        assert_eq!(retry_after(429, &h(" 7 ")), Some(Duration::from_secs(7)));
        for bad in ["-1", "1.5", "2s", "", "tomorrow"] {
            assert_eq!(retry_after(429, &h(bad)), None, "{bad:?}");
        }
        let huge = retry_after(503, &h("99999999999999999999999")).unwrap();
        assert_eq!(huge, Duration::from_secs(u64::MAX));
        assert_eq!(retry_after(200, &h("3")), None);
        assert_eq!(retry_after(502, &h("3")), None);
    }

    #[test]
    fn a_date_is_measured_from_the_answers_date_and_a_past_one_is_no_delay() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT";
        let later = headers(&[
            ("date", date),
            ("retry-after", "Sun, 06 Nov 1994 08:50:00 GMT"),
        ]);
        assert_eq!(retry_after(503, &later), Some(Duration::from_secs(23)));
        // The obsolete RFC 850 and asctime forms are HTTP dates too.
        let rfc850 = headers(&[
            ("date", date),
            ("retry-after", "Sunday, 06-Nov-94 08:49:40 GMT"),
        ]);
        assert_eq!(retry_after(503, &rfc850), Some(Duration::from_secs(3)));
        let past = headers(&[
            ("date", date),
            ("retry-after", "Sun, 06 Nov 1994 08:00:00 GMT"),
        ]);
        assert_eq!(retry_after(429, &past), Some(Duration::ZERO));
        // Without a `Date`, a date in 1994 is long past by this machine's clock.
        let no_date = headers(&[("retry-after", "Sun, 06 Nov 1994 08:50:00 GMT")]);
        assert_eq!(retry_after(429, &no_date), Some(Duration::ZERO));
    }

    #[test]
    fn a_wait_for_a_hold_tells_bad_values_apart_from_none() {
        let h = |v: &str| headers(&[("retry-after", v)]);
        assert_eq!(server_wait(429, &h("5")), Wait::For(Duration::from_secs(5)));
        assert_eq!(server_wait(503, &h("5")), Wait::For(Duration::from_secs(5)));
        assert_eq!(server_wait(429, &h("0")), Wait::None);
        assert_eq!(server_wait(429, &HeaderMap::new()), Wait::None);
        assert_eq!(server_wait(500, &h("5")), Wait::None);
        for bad in ["-1", "1.5", "2s", "", "tomorrow"] {
            assert_eq!(server_wait(429, &h(bad)), Wait::Bad, "{bad:?}");
        }
        let past = headers(&[
            ("date", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("retry-after", "Sun, 06 Nov 1994 08:00:00 GMT"),
        ]);
        assert_eq!(server_wait(429, &past), Wait::Bad);
        assert_eq!(
            server_wait(429, &h("99999999999999999999999")),
            Wait::For(Duration::from_secs(u64::MAX))
        );
        let mut opaque = HeaderMap::new();
        opaque.insert(
            "retry-after",
            http::HeaderValue::from_bytes(b"\xff").unwrap(),
        );
        assert_eq!(server_wait(429, &opaque), Wait::Bad);
    }
}
