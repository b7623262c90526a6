//! Durations as people write them in pipelines: `70s`, `200ms`, `1.5s`, `2m`, `1h`.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A non-negative duration read from YAML. Deserializing a malformed one fails at the value, so
/// the error carries its line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span(pub Duration);

const UNITS: [(&str, f64); 6] = [
    ("ns", 1e-9),
    ("us", 1e-6),
    ("ms", 1e-3),
    ("s", 1.0),
    ("m", 60.0),
    ("h", 3600.0),
];

/// The longest duration: what fits in the tables' `*_ns` columns (int64 nanoseconds, 292 years).
const LONGEST: Duration = Duration::from_nanos(i64::MAX as u64);

/// Parses `70s`, `200ms`, `1.5s`, `2m`. A bare number is refused: seconds or milliseconds is
/// exactly the ambiguity that makes a typo silently wrong. A duration longer than `LONGEST` is
/// refused too, so that no later sum or conversion to nanoseconds can overflow.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let hint =
        "write a number and a unit with no space: 500ms, 70s, 2m (units: ns, us, ms, s, m, h)";
    let value: f64 = number
        .parse()
        .map_err(|_| format!("invalid duration `{text}`; {hint}"))?;
    let Some((_, scale)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(format!(
            "invalid duration `{text}`: unknown unit `{}`; {hint}",
            unit.trim()
        ));
    };
    match Duration::try_from_secs_f64(value * scale) {
        Ok(duration) if duration <= LONGEST => Ok(duration),
        _ => Err(format!(
            "duration `{text}` is too long; the longest is {}h",
            LONGEST.as_secs() / 3600
        )),
    }
}

/// A duration as a pipeline would write it, in its largest exact unit: `1500ms`, `70s`.
pub fn format_duration(duration: Duration) -> String {
    match duration.as_nanos() {
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_duration(&text)
            .map(Span)
            .map_err(serde::de::Error::custom)
    }
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Serializes a plan's duration as its pipeline wrote it (`"200ms"`), the form the stage digests
/// have always been made from (a bare `Duration` would be `{"secs":0,"nanos":200000000}`).
pub(crate) fn serialize_as_written<S: Serializer>(
    duration: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    Span(*duration).serialize(serializer)
}

/// [`serialize_as_written`] for an optional duration (`null` when absent).
pub(crate) fn serialize_option_as_written<S: Serializer>(
    duration: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    duration.map(Span).serialize(serializer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_scale_and_bad_forms_explain_themselves() {
        assert_eq!(parse_duration("70s").unwrap(), Duration::from_secs(70));
        assert_eq!(parse_duration("200ms").unwrap(), Duration::from_millis(200));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(
            parse_duration("70 secs")
                .unwrap_err()
                .contains("unknown unit `secs`")
        );
        assert!(
            parse_duration("70")
                .unwrap_err()
                .contains("unknown unit ``")
        );
        assert!(
            parse_duration("fast")
                .unwrap_err()
                .starts_with("invalid duration `fast`")
        );
        assert_eq!(
            parse_duration("99999999999999999999h").unwrap_err(),
            "duration `99999999999999999999h` is too long; the longest is 2562047h"
        );
        assert!(parse_duration("2562048h").is_err());
        assert!(parse_duration("2562047h").is_ok());
        assert!(
            parse_duration("-1s")
                .unwrap_err()
                .starts_with("invalid duration `-1s`")
        );
        assert!(parse_duration("NaNs").is_err());
        assert_eq!(Span(Duration::from_millis(200)).to_string(), "200ms");
    }
}
