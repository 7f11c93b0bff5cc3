//! The `grpc-timeout` header: read from an outgoing request, written back
//! when the group's `timeout_ms` is shorter.

use std::time::Duration;

use http::{HeaderMap, HeaderValue};

const GRPC_TIMEOUT: &str = "grpc-timeout";

/// The `grpc-timeout` of `headers`: one to eight digits and a unit (`H`,
/// `M`, `S`, `m`, `u`, `n`). `None` when it is absent or malformed, as a
/// gRPC server takes it.
pub(super) fn grpc_timeout(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(GRPC_TIMEOUT)?.as_bytes();
    let (&unit, digits) = value.split_last()?;
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let amount = digits
        .iter()
        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    Some(match unit {
        b'H' => Duration::from_secs(amount * 3600),
        b'M' => Duration::from_secs(amount * 60),
        b'S' => Duration::from_secs(amount),
        b'm' => Duration::from_millis(amount),
        b'u' => Duration::from_micros(amount),
        b'n' => Duration::from_nanos(amount),
        _ => return None,
    })
}

/// The deadline of a call: the smaller of the request's `grpc-timeout` and
/// the group's `timeout`, written into the request's `grpc-timeout` when the
/// group's is the smaller (or the request has none), so that the server
/// knows it too.
pub(super) fn apply(headers: &mut HeaderMap, group: Option<Duration>) -> Option<Duration> {
    let asked = grpc_timeout(headers);
    match (asked, group) {
        (Some(asked), Some(group)) if asked <= group => Some(asked),
        (_, Some(group)) => {
            headers.insert(GRPC_TIMEOUT, encode(group));
            Some(group)
        }
        (asked, None) => asked,
    }
}

/// `after` in the header's form, in the finest unit that fits eight digits,
/// rounded up (a deadline told to the server is never shorter than ours).
fn encode(after: Duration) -> HeaderValue {
    const MAX: u128 = 99_999_999;
    let nanos = after.as_nanos();
    let units: [(u128, char); 6] = [
        (1, 'n'),
        (1_000, 'u'),
        (1_000_000, 'm'),
        (1_000_000_000, 'S'),
        (60_000_000_000, 'M'),
        (3_600_000_000_000, 'H'),
    ];
    let (amount, unit) = units
        .iter()
        .map(|&(per, unit)| (nanos.div_ceil(per), unit))
        .find(|&(amount, _)| amount <= MAX)
        .unwrap_or((MAX, 'H'));
    HeaderValue::from_str(&format!("{amount}{unit}")).expect("digits and a letter")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(timeout: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(GRPC_TIMEOUT, HeaderValue::from_str(timeout).unwrap());
        headers
    }

    #[test]
    fn every_unit_reads() {
        assert_eq!(
            grpc_timeout(&headers("2H")),
            Some(Duration::from_secs(7200))
        );
        assert_eq!(grpc_timeout(&headers("3M")), Some(Duration::from_secs(180)));
        assert_eq!(grpc_timeout(&headers("4S")), Some(Duration::from_secs(4)));
        assert_eq!(
            grpc_timeout(&headers("250m")),
            Some(Duration::from_millis(250))
        );
        assert_eq!(grpc_timeout(&headers("7u")), Some(Duration::from_micros(7)));
        assert_eq!(
            grpc_timeout(&headers("99999999n")),
            Some(Duration::from_nanos(99_999_999))
        );
    }

    #[test]
    fn malformed_timeouts_read_as_none() {
        for bad in ["", "S", "123456789S", "12x", "-1S", "1.5S", "10"] {
            assert_eq!(grpc_timeout(&headers(bad)), None, "{bad:?}");
        }
    }

    #[test]
    fn the_smaller_deadline_holds_and_the_groups_is_written() {
        let mut asked = headers("100m");
        assert_eq!(
            apply(&mut asked, Some(Duration::from_secs(1))),
            Some(Duration::from_millis(100))
        );
        assert_eq!(asked[GRPC_TIMEOUT], "100m");

        let mut asked = headers("5S");
        assert_eq!(
            apply(&mut asked, Some(Duration::from_millis(300))),
            Some(Duration::from_millis(300))
        );
        assert_eq!(grpc_timeout(&asked), Some(Duration::from_millis(300)));

        let mut none = HeaderMap::new();
        assert_eq!(apply(&mut none, None), None);
        assert!(none.is_empty());
        assert_eq!(
            apply(&mut none, Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(grpc_timeout(&none), Some(Duration::from_secs(2)));
    }

    #[test]
    fn encoding_rounds_up_and_caps() {
        assert_eq!(encode(Duration::from_nanos(250)), "250n");
        assert_eq!(encode(Duration::from_millis(300)), "300000u");
        assert_eq!(encode(Duration::from_nanos(1_500_000_001)), "1500001u");
        assert_eq!(encode(Duration::from_secs(200_000)), "200000S");
        assert_eq!(encode(Duration::MAX), "99999999H");
    }
}
