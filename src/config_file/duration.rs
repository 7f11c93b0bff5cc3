//! Durations as a file or a variable writes them, read into the milliseconds
//! the `*_ms` keys hold: a file's string (`"30s"`, `"250ms"`, `"1m30s"`, always
//! with a unit) and a variable's text (the same, or whole milliseconds as
//! digits).

/// The units a duration may use, with their length in microseconds. Parts are
/// written from the longest unit down, each unit once, so a length in
/// microseconds also orders them.
const UNITS: [(&str, u128); 5] = [
    ("h", 3_600_000_000),
    ("m", 60_000_000),
    ("s", 1_000_000),
    ("ms", 1_000),
    ("us", 1),
];

/// What the units are called in a refusal.
const UNIT_LIST: &str = "`h`, `m`, `s`, `ms`, `us`";

/// Reads `text` as a duration in whole milliseconds: whole milliseconds as
/// digits (`250`, `30_000`), or one or more parts of a number and a unit
/// (`30s`, `1m30s`, `1.5s`, `250ms`), units `h`, `m`, `s`, `ms` and `us`, each
/// number with an optional decimal fraction, the parts from the longest unit
/// down and each unit once. Refused, with the reason, when it is empty, has a
/// part without a unit or with another unit, repeats a unit or puts a shorter
/// one first (`1s1s`, `30s1m`: a slip more often than a meaning), overflows a
/// `u64` of milliseconds, or is not a whole number of milliseconds (`1.5ms`).
///
/// The reason is written to follow "`text` is refused: ".
///
/// For a variable's text, where digits are the only way to write an integer;
/// a file's string goes through [`parse_quoted_millis`].
pub(crate) fn parse_millis(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(
            "an empty string is no duration; write one like \"30s\", \"250ms\", \"1m30s\", \
             or a whole number of milliseconds"
                .to_owned(),
        );
    }
    if let Some(ms) = whole_number(text) {
        return ms.ok_or_else(too_long);
    }
    // Counted exactly, in microseconds: `0.1s` is 100 ms.
    let mut micros: u128 = 0;
    // The previous part's unit: each next one must be shorter.
    let mut last: Option<(&str, u128)> = None;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(digits);
        if number.is_empty() {
            return Err(format!(
                "expected a number at `{rest}`; write a duration like \"1m30s\" (units {UNIT_LIST})"
            ));
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(format!(
                "`{number}` has no unit; add one of {UNIT_LIST} (a number alone is milliseconds \
                 only when it is the whole value)"
            ));
        }
        let Some(&(_, per)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(format!("unknown unit `{unit}`; the units are {UNIT_LIST}"));
        };
        if let Some((before, longer)) = last {
            if per >= longer {
                return Err(format!(
                    "`{unit}` comes after `{before}`; write each unit once, from the longest \
                     down, like \"1h30m\" or \"1m30s\""
                ));
            }
        }
        last = Some((unit, per));
        let part = match scaled(number, per) {
            Ok(part) => part,
            Err(Bad::Overflow) => return Err(too_long()),
            Err(Bad::NotNumber) => {
                return Err(format!(
                    "`{number}{unit}` is not a number of {unit}, like `1{unit}` or `1.5{unit}`"
                ))
            }
        };
        micros = micros.checked_add(part).ok_or_else(too_long)?;
        rest = next;
    }
    if micros % 1_000 != 0 {
        return Err(
            "not a whole number of milliseconds; durations are kept in milliseconds".into(),
        );
    }
    u64::try_from(micros / 1_000).map_err(|_| too_long())
}

/// Reads a file's string value as [`parse_millis`] does, but for digits alone
/// (`"30"`), which are refused: a file writes whole milliseconds as an integer
/// (`open_ms = 30`), so a quoted number is a duration whose unit is missing,
/// and taking it as milliseconds would read `"30"` meant as seconds as 30 ms.
pub(crate) fn parse_quoted_millis(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    if whole_number(trimmed).is_some() {
        return Err(format!(
            "`{trimmed}` has no unit; add one of {UNIT_LIST} (\"{trimmed}ms\", \"{trimmed}s\"), \
             or write whole milliseconds as an integer, without quotes"
        ));
    }
    parse_millis(text)
}

fn too_long() -> String {
    format!("longer than the longest duration, {} ms", u64::MAX)
}

/// Digits alone (with `_` between them, as in TOML): `Some(None)` when they
/// overflow a `u64`; `None` when `text` is not digits alone.
fn whole_number(text: &str) -> Option<Option<u64>> {
    let digits_only = text.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        && text.starts_with(|c: char| c.is_ascii_digit())
        && !text.ends_with('_')
        && !text.contains("__");
    digits_only.then(|| text.replace('_', "").parse().ok())
}

/// Why a part's number could not be read.
enum Bad {
    /// Not digits with an optional fraction.
    NotNumber,
    /// More microseconds than a `u128` holds.
    Overflow,
}

/// `number` (digits, an optional `.` and fraction digits, `_` between digits)
/// times `per` microseconds. A fraction finer than a microsecond adds one
/// microsecond, so the whole-millisecond check refuses it.
fn scaled(number: &str, per: u128) -> Result<u128, Bad> {
    let (int, frac) = match number.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (number, None),
    };
    let well_formed = |part: &str| {
        part.starts_with(|c: char| c.is_ascii_digit())
            && !part.ends_with('_')
            && !part.contains("__")
            && part.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    };
    if !well_formed(int) || frac.is_some_and(|f| !well_formed(f)) {
        return Err(Bad::NotNumber);
    }
    let int: u128 = int.replace('_', "").parse().map_err(|_| Bad::Overflow)?;
    let mut total = int.checked_mul(per).ok_or(Bad::Overflow)?;
    if let Some(frac) = frac {
        let frac = frac.replace('_', "");
        // Twenty digits are exact in a u128 times the longest unit; any digit
        // past them is finer than a microsecond.
        let (kept, finer) = frac.split_at(frac.len().min(20));
        let mut scale: u128 = 1;
        let mut value: u128 = 0;
        for digit in kept.bytes() {
            scale *= 10;
            value = value * 10 + u128::from(digit - b'0');
        }
        let exact = value * per;
        total = total.checked_add(exact / scale).ok_or(Bad::Overflow)?;
        if exact % scale != 0 || finer.bytes().any(|d| d != b'0') {
            total = total.checked_add(1).ok_or(Bad::Overflow)?;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::{parse_millis, parse_quoted_millis};

    #[test]
    fn a_quoted_number_needs_its_unit_where_digits_alone_are_milliseconds() {
        for text in ["30", "30_000", " 0 ", "18446744073709551616"] {
            let err = parse_quoted_millis(text).expect_err(text);
            assert!(err.contains("has no unit"), "{text:?}: {err}");
            assert!(parse_millis(text).is_ok() || text.len() > 10, "{text:?}");
        }
        assert_eq!(parse_quoted_millis("30s"), Ok(30_000));
        assert_eq!(parse_quoted_millis(" 250ms "), Ok(250));
        let err = parse_quoted_millis("1m30").unwrap_err();
        assert!(err.contains("`30` has no unit"), "{err}");
    }

    #[test]
    fn units_and_their_sums_read_as_milliseconds() {
        for (text, ms) in [
            ("30s", 30_000),
            ("250ms", 250),
            ("1m30s", 90_000),
            ("1h", 3_600_000),
            ("2h30m", 9_000_000),
            ("1.5s", 1_500),
            ("0.1s", 100),
            ("0.25m", 15_000),
            ("3000us", 3),
            ("1_000ms", 1_000),
            (" 5s ", 5_000),
            ("30000", 30_000),
            ("30_000", 30_000),
            ("0", 0),
            ("0s", 0),
        ] {
            assert_eq!(parse_millis(text), Ok(ms), "{text:?}");
        }
        assert_eq!(parse_millis("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_millis("18446744073709551615ms"), Ok(u64::MAX));
    }

    #[test]
    fn every_bad_duration_is_refused_with_its_reason() {
        let refused = |text: &str, says: &str| {
            let err = parse_millis(text).expect_err(text);
            assert!(err.contains(says), "{text:?}: {err}");
        };
        refused("", "empty string");
        refused("   ", "empty string");
        refused("30sec", "unknown unit `sec`");
        refused("30d", "unknown unit `d`");
        refused("5 s", "unknown unit ` s`");
        refused("1m30", "`30` has no unit");
        refused("s", "expected a number at `s`");
        refused("-5s", "expected a number at `-5s`");
        refused("1.5ms", "not a whole number of milliseconds");
        refused("1500us", "not a whole number of milliseconds");
        refused("0.0001s", "not a whole number of milliseconds");
        refused("1s1s", "`s` comes after `s`; write each unit once");
        refused("30s1m", "`m` comes after `s`");
        refused("1ms1s", "`s` comes after `ms`");
        refused("1.s", "is not a number of s");
        refused("1..5s", "is not a number of s");
        refused("18446744073709551616", "longer than the longest duration");
        refused("18446744073709551616ms", "longer than the longest duration");
        refused("5124095576030432h", "longer than the longest duration");
        refused(
            &format!("{}h", "9".repeat(40)),
            "longer than the longest duration",
        );
    }
}
