//! The server's delay in an HTTP answer: [`retry_after`] reads `Retry-After`
//! on a `429` or `503`, and [`MAX_RETRY_AFTER`] bounds what a retry waits for.

use std::time::{Duration, SystemTime};

use http::header::{DATE, RETRY_AFTER};
use http::HeaderMap;

/// The longest `Retry-After` a retry waits for. A server asking for longer
/// (a maintenance window, a day's quota) is not retried: its answer is
/// returned at once, with the header, for the caller to act on. A wait is
/// never cut short of what the server asked.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The delay a `429 Too Many Requests` or `503 Service Unavailable` answer
/// asks for in its `Retry-After` header, in either form: whole seconds
/// (`Retry-After: 2`) or an HTTP date (`Retry-After: Wed, 21 Oct 2026
/// 07:28:00 GMT`), which is measured from the answer's own `Date` header
/// (the server's clock, so the two clocks' skew does not count) or, without
/// one, from this machine's wall clock; a date already past is no delay.
///
/// `None` for any other status, without the header, or when the header is
/// not one of the two forms (a bad header is ignored, as if absent). Seconds
/// too many for a `u64` read as `u64::MAX` seconds, which a retry then
/// declines as longer than [`MAX_RETRY_AFTER`].
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
    if status != 429 && status != 503 {
        return None;
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let now = headers
        .get(DATE)
        .and_then(|date| date.to_str().ok())
        .and_then(|date| httpdate::parse_http_date(date).ok())
        .unwrap_or_else(SystemTime::now);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
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
        assert!(huge > MAX_RETRY_AFTER);
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
}
