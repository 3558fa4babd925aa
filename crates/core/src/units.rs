//! Bit rates and durations as people write them in configs and on the command line.
//!
//! Rates follow tc(8)'s *bit* units (`1.5mbit`, `50Mbit`, `800kbit`) because that is
//! what network engineers type; tc's ambiguous byte units (`mbps` means megabytes
//! per second there) are rejected rather than guessed.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A link or lane rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(u64);

impl BitRate {
    /// A rate of `bps` bits per second.
    pub const fn from_bps(bps: u64) -> Self {
        Self(bps)
    }

    /// The rate in bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }

    /// The rate in bytes per second (rounded down).
    pub const fn bytes_per_sec(self) -> u64 {
        self.0 / 8
    }

    /// The rate in megabits per second, for reports.
    pub fn mbps(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// This rate scaled by `factor` (clamped to at least 1 bit/s).
    pub fn scaled(self, factor: f64) -> Self {
        Self(((self.0 as f64 * factor).round() as u64).max(1))
    }

    /// How long `bytes` take to cross a link of this rate.
    pub fn transmit_time(self, bytes: u64) -> Duration {
        Duration::from_nanos((bytes as u128 * 8 * 1_000_000_000 / self.0.max(1) as u128) as u64)
    }
}

/// Why a rate or a duration could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The text is not a number followed by a known unit.
    #[error("`{text}` is not a {what}: expected a number and one of the units {units}")]
    Malformed {
        /// The text that was given.
        text: String,
        /// "bit rate" or "duration".
        what: &'static str,
        /// The accepted units, for the message.
        units: &'static str,
    },
    /// The value is zero or negative where that makes no sense.
    #[error("`{text}` must be greater than zero")]
    NotPositive {
        /// The text that was given.
        text: String,
    },
    /// A byte-per-second unit that tc and people read differently.
    #[error("`{text}`: byte-rate units are ambiguous; write the rate in bits, e.g. `12mbit`")]
    AmbiguousByteUnit {
        /// The text that was given.
        text: String,
    },
}

const RATE_UNITS: &str = "bit, kbit, mbit, gbit (or a plain number of bit/s)";
const DURATION_UNITS: &str = "ns, us, ms, s";

/// Splits `12.5mbit` into (12.5, "mbit").
fn split_number(text: &str) -> Option<(f64, String)> {
    let t = text.trim();
    let end =
        t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e')).unwrap_or(t.len());
    // `e` may start a unit; only accept it as exponent when digits follow.
    let (mut num, mut unit) = t.split_at(end);
    if num.ends_with('e') {
        num = &num[..num.len() - 1];
        unit = &t[num.len()..];
    }
    let value: f64 = num.parse().ok()?;
    Some((value, unit.trim().to_ascii_lowercase()))
}

impl FromStr for BitRate {
    type Err = UnitError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let malformed = || UnitError::Malformed { text: text.to_string(), what: "bit rate", units: RATE_UNITS };
        let (value, unit) = split_number(text).ok_or_else(malformed)?;
        let scale = match unit.as_str() {
            "" | "bit" | "bits" => 1.0,
            "kbit" | "kbits" => 1e3,
            "mbit" | "mbits" => 1e6,
            "gbit" | "gbits" => 1e9,
            "bps" | "kbps" | "mbps" | "gbps" => {
                return Err(UnitError::AmbiguousByteUnit { text: text.to_string() });
            }
            _ => return Err(malformed()),
        };
        let bps = value * scale;
        if !bps.is_finite() || bps < 1.0 {
            return Err(UnitError::NotPositive { text: text.to_string() });
        }
        if bps > 1e12 {
            return Err(malformed());
        }
        Ok(Self(bps.round() as u64))
    }
}

impl fmt::Display for BitRate {
    /// Prints in the largest unit that keeps the value exact, as tc accepts it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bps = self.0;
        for (unit, scale) in [("gbit", 1_000_000_000), ("mbit", 1_000_000), ("kbit", 1_000)] {
            if bps >= scale && bps.is_multiple_of(scale) {
                return write!(f, "{}{unit}", bps / scale);
            }
        }
        write!(f, "{bps}bit")
    }
}

/// Parses `150ms`, `2s`, `500us`, `0.5s` into a [`Duration`].
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let malformed = || UnitError::Malformed { text: text.to_string(), what: "duration", units: DURATION_UNITS };
    let (value, unit) = split_number(text).ok_or_else(malformed)?;
    let scale = match unit.as_str() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" => 1.0,
        _ => return Err(malformed()),
    };
    let secs = value * scale;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(UnitError::NotPositive { text: text.to_string() });
    }
    Duration::try_from_secs_f64(secs).map_err(|_| malformed())
}

/// Formats a duration the way [`parse_duration`] reads it back.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

impl Serialize for BitRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for BitRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_from_str(d)
    }
}

/// Deserializes any value written as text (or as a bare number) through its `FromStr`.
///
/// The parse happens inside the deserializer's visitor, so a format that tracks
/// positions (YAML) reports the line and key of a bad value.
pub fn deserialize_from_str<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: fmt::Display,
{
    struct TextVisitor<T>(std::marker::PhantomData<T>);
    impl<T: FromStr> serde::de::Visitor<'_> for TextVisitor<T>
    where
        T::Err: fmt::Display,
    {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a value written as text")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
            v.parse().map_err(E::custom)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<T, E> {
            self.visit_str(&v.to_string())
        }
    }
    d.deserialize_any(TextVisitor(std::marker::PhantomData))
}

/// A [`Duration`] as text, for `FromStr` through [`parse_duration`]; duration fields name it
/// as their JSON Schema (`#[schemars(with = "DurationText")]`).
pub struct DurationText(Duration);

/// Gives `$ty`, a value written as text, the JSON Schema of a string (or a bare number, as
/// [`deserialize_from_str`] also takes) in the format `$format`, a name the generated
/// reference explains (`bit-rate`, `duration`, …).
macro_rules! text_schema {
    ($ty:ty, $format:literal $(, $also:literal)?) => {
        impl schemars::JsonSchema for $ty {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $format.into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({"type": ["string" $(, $also)?], "format": $format})
            }
        }
    };
}
pub(crate) use text_schema;

text_schema!(BitRate, "bit-rate", "integer");
text_schema!(DurationText, "duration");

impl FromStr for DurationText {
    type Err = UnitError;
    fn from_str(text: &str) -> Result<Self, UnitError> {
        parse_duration(text).map(DurationText)
    }
}

/// Serde adapter for `Duration` fields written as `150ms`.
pub mod duration_text {
    use super::*;

    /// Writes the duration as text.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    /// Reads the duration from text.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        deserialize_from_str::<D, DurationText>(d).map(|t| t.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_in_tc_bit_units() {
        assert_eq!("1.5mbit".parse::<BitRate>().unwrap().bps(), 1_500_000);
        assert_eq!("50Mbit".parse::<BitRate>().unwrap().bps(), 50_000_000);
        assert_eq!("800kbit".parse::<BitRate>().unwrap().bps(), 800_000);
        assert_eq!("1gbit".parse::<BitRate>().unwrap().bps(), 1_000_000_000);
        assert_eq!("9600".parse::<BitRate>().unwrap().bps(), 9600);
        assert_eq!("9600bit".parse::<BitRate>().unwrap().bps(), 9600);
    }

    #[test]
    fn bad_rates_are_rejected_with_the_reason() {
        assert!(matches!("0mbit".parse::<BitRate>(), Err(UnitError::NotPositive { .. })));
        assert!(matches!("-3mbit".parse::<BitRate>(), Err(UnitError::NotPositive { .. })));
        assert!(matches!("fast".parse::<BitRate>(), Err(UnitError::Malformed { .. })));
        assert!(matches!("3furlong".parse::<BitRate>(), Err(UnitError::Malformed { .. })));
        assert!(matches!("12mbps".parse::<BitRate>(), Err(UnitError::AmbiguousByteUnit { .. })));
    }

    #[test]
    fn rates_print_back_to_what_parses() {
        for text in ["1500kbit", "50mbit", "1gbit", "1234bit"] {
            let rate: BitRate = text.parse().unwrap();
            assert_eq!(rate.to_string().parse::<BitRate>().unwrap(), rate);
        }
        assert_eq!(BitRate::from_bps(1_500_000).to_string(), "1500kbit");
    }

    #[test]
    fn transmit_time_is_bits_over_rate() {
        let r = BitRate::from_bps(1_500_000);
        assert_eq!(r.transmit_time(1500), Duration::from_millis(8));
    }

    #[test]
    fn durations_parse_and_print() {
        assert_eq!(parse_duration("150ms").unwrap(), Duration::from_millis(150));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("0.5s").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("10parsecs").is_err());
        assert!(parse_duration("1e300s").is_err(), "too long to represent: an error, not a panic");
        assert_eq!(format_duration(Duration::from_millis(150)), "150ms");
        assert_eq!(format_duration(Duration::from_secs(3)), "3s");
    }
}
