//! Quantities with units, as scenario files write them: `"10Gbps"`, `"2us"`, `"1MB"`.
//!
//! Every quantity is parsed exactly with integer arithmetic (no floating point), so
//! `"1.5Gbps"` is 1 500 000 000 bit/s and `"2.5us"` is 2 500 000 ps. A value that does
//! not come out as a whole number of the base unit (bit/s, picoseconds, bytes) is
//! rejected rather than rounded.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// Picoseconds in one second.
pub const PS_PER_SEC: u64 = 1_000_000_000_000;

/// The longest duration a scenario may write: 10^18 ps = 1 000 000 s (11.6 days).
/// Every time the simulator computes is a sum of a few such spans (a start, a
/// serialization time, a delay, a timeout), so integer time in `u64` (up to 1.8·10^19
/// ps) never wraps.
pub const MAX_DURATION: u64 = 1_000_000 * PS_PER_SEC;

/// The shortest period any timer may have, picoseconds: 1 µs (a datacenter RTT is
/// 5–100 µs). A timer that fired every picosecond would never let a run finish.
pub const MIN_TIMER: u64 = 1_000_000;

/// What a timer shorter than [`MIN_TIMER`] is told.
pub const MIN_TIMER_TEXT: &str = "expected at least 1us (the shortest timer tenantnet runs)";

/// `ps` if it is a timer's period of at least [`MIN_TIMER`], else the message (the
/// error that carries it quotes the value).
pub fn check_timer(ps: u64) -> Result<u64, String> {
    if ps < MIN_TIMER {
        return Err(MIN_TIMER_TEXT.to_string());
    }
    Ok(ps)
}

/// The fastest link rate a scenario may write: 100 Tb/s (today's fastest Ethernet is
/// 1.6 Tb/s). Together with [`MAX_PACKET`] it keeps `bytes · 8 · 10^12` and the
/// serialization times derived from it within `u64`.
pub const MAX_RATE_BPS: u64 = 100_000_000_000_000;

/// The largest packet on the wire, headers included: 65 535 bytes (IPv4's total-length
/// limit). Data segments (MSS + header), ACKs and UDP packets are all checked against it.
pub const MAX_PACKET: u64 = 65_535;

/// `s` in double quotes as a TOML basic string writes it (control characters as
/// `\uXXXX`), cut to [`QUOTED_MAX`] characters with `…`: how messages show a value.
pub fn quoted(s: &str) -> String {
    let mut out = String::from('"');
    for (i, c) in s.chars().enumerate() {
        if i == QUOTED_MAX {
            out.push('…');
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The most characters of a value a message shows.
pub const QUOTED_MAX: usize = 60;

/// Splits `"12.5 Gbps"` into the digits without the point (`125`), the number of
/// fraction digits (`1`) and the unit (`"Gbps"`).
fn split_number(s: &str) -> Result<(u128, u32, &str), String> {
    let t = s.trim();
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let unit = unit.trim();
    if num.is_empty() && t.starts_with('-') {
        return Err("a negative number".into());
    }
    if num.is_empty() {
        return Err("no number before the unit".into());
    }
    let exponent = unit
        .strip_prefix(['e', 'E'])
        .map(|r| r.trim_start_matches(['+', '-']));
    if exponent.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit())) {
        return Err("written with an exponent; write the number out in full".into());
    }
    let mut parts = num.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next().unwrap_or("");
    if int.is_empty() || frac.contains('.') || (num.contains('.') && frac.is_empty()) {
        return Err(format!("{} is not a decimal number", quoted(num)));
    }
    if int.len() + frac.len() > 30 {
        return Err("number too large".into());
    }
    let digits: u128 = format!("{int}{frac}")
        .parse()
        .map_err(|_| format!("{} is not a decimal number", quoted(num)))?;
    Ok((digits, frac.len() as u32, unit))
}

/// `digits / 10^frac * mult`, exactly, or an error if it is not a whole number.
fn scale(digits: u128, frac: u32, mult: u128, what: &str) -> Result<u64, String> {
    let num = digits
        .checked_mul(mult)
        .ok_or_else(|| "value too large".to_string())?;
    let den = 10u128.pow(frac);
    if num % den != 0 {
        return Err(format!("not a whole number of {what}"));
    }
    u64::try_from(num / den).map_err(|_| "value too large".to_string())
}

/// `limit` in place of `scale`'s overflow message.
fn too_large(e: String, limit: &str) -> String {
    if e == "value too large" || e == "number too large" {
        limit.to_string()
    } else {
        e
    }
}

/// Parses a data rate into bit/s. Units: `bps`, `Kbps`, `Mbps`, `Gbps`, `Tbps`
/// (decimal prefixes; `k` and `K` both mean 1000; `b/s` spellings accepted).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let prefix = |u: &str| match u.replace("b/s", "bps").as_str() {
        "bps" => Some(1),
        "kbps" | "Kbps" => Some(1_000),
        "Mbps" => Some(1_000_000),
        "Gbps" => Some(1_000_000_000),
        "Tbps" => Some(1_000_000_000_000),
        _ => None,
    };
    let fast = "faster than the fastest link tenantnet simulates, 100Tbps";
    positive(s, prefix, ("bit/s", "a rate"), MAX_RATE_BPS, fast)
}

/// A positive quantity in one of the units `mult` knows (its multiple of the base
/// unit, `what.0`), exactly, at most `max` (else the error `over`).
fn positive(
    s: &str,
    mult: impl Fn(&str) -> Option<u128>,
    what: (&str, &str),
    max: u64,
    over: &str,
) -> Result<u64, String> {
    let (d, f, unit) = split_number(s)?;
    let m = match (unit, mult(unit)) {
        (_, Some(m)) => m,
        ("", None) => return Err("missing unit".into()),
        (other, None) => return Err(format!("unknown unit {}", quoted(other))),
    };
    let v = scale(d, f, m, what.0).map_err(|e| too_large(e, over))?;
    if v == 0 {
        return Err(format!("{} must be positive", what.1));
    }
    if v > max {
        return Err(over.into());
    }
    Ok(v)
}

/// Parses a duration into picoseconds. Units: `ps`, `ns`, `us` (or `µs`), `ms`, `s`.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let (d, f, unit) = split_number(s)?;
    let mult: u128 = match unit {
        "ps" => 1,
        "ns" => 1_000,
        "us" | "µs" => 1_000_000,
        "ms" => 1_000_000_000,
        "s" => PS_PER_SEC as u128,
        "" => return Err("missing unit".into()),
        other => return Err(format!("unknown unit {}", quoted(other))),
    };
    const LONG: &str = "longer than the longest duration tenantnet simulates, 1000000s (11.6 days)";
    let v = scale(d, f, mult, "picoseconds").map_err(|e| too_large(e, LONG))?;
    if v > MAX_DURATION {
        return Err(LONG.into());
    }
    Ok(v)
}

/// The fastest clock a scenario may write: 1 THz (CPU cores run at a few GHz). It
/// keeps `cycles · 10^12` within `u128` arithmetic's comfortable range for any run.
pub const MAX_FREQUENCY_HZ: u64 = 1_000_000_000_000;

/// Parses a frequency (a CPU core's clock, or cycles per second) into Hz. Units:
/// `Hz`, `kHz`, `MHz`, `GHz` (decimal prefixes; `KHz` accepted).
pub fn parse_frequency(s: &str) -> Result<u64, String> {
    let prefix = |u: &str| match u {
        "Hz" => Some(1),
        "kHz" | "KHz" => Some(1_000),
        "MHz" => Some(1_000_000),
        "GHz" => Some(1_000_000_000),
        _ => None,
    };
    let fast = "faster than the fastest clock tenantnet models, 1000GHz";
    positive(s, prefix, ("Hz", "a frequency"), MAX_FREQUENCY_HZ, fast)
}

/// Formats Hz the way a person would write it (`2.2GHz`).
pub fn format_frequency(hz: u64) -> String {
    for (m, u) in [
        (1_000_000_000u64, "GHz"),
        (1_000_000, "MHz"),
        (1_000, "kHz"),
    ] {
        if hz >= m {
            return trim_float(hz as f64 / m as f64, u);
        }
    }
    format!("{hz}Hz")
}

/// A buffer or threshold size: bytes, or a number of full-size packets that the
/// scenario builder converts with the scenario's packet size (MSS + headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteSize {
    /// An exact number of bytes.
    Bytes(u64),
    /// A number of maximum-size packets.
    Packets(u64),
}

impl ByteSize {
    /// Bytes, converting packets with `packet_bytes` per packet.
    pub fn bytes(self, packet_bytes: u64) -> u64 {
        match self {
            ByteSize::Bytes(b) => b,
            ByteSize::Packets(p) => p.saturating_mul(packet_bytes),
        }
    }
}

/// Parses a size. Units: `B`, `KB`, `MB`, `GB` (powers of 1000), `KiB`, `MiB`, `GiB`
/// (powers of 1024), and `pkt`/`pkts`/`packets` (full-size packets).
pub fn parse_bytes(s: &str) -> Result<ByteSize, String> {
    let (d, f, unit) = split_number(s)?;
    let mult: u128 = match unit {
        "pkt" | "pkts" | "packet" | "packets" => {
            return scale(d, f, 1, "packets").map(ByteSize::Packets);
        }
        "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "" => return Err("missing unit".into()),
        other => return Err(format!("unknown unit {}", quoted(other))),
    };
    scale(d, f, mult, "bytes").map(ByteSize::Bytes)
}

/// Formats bit/s the way a person would write it (`10Gbps`).
pub fn format_rate(bps: u64) -> String {
    for (m, u) in [
        (1_000_000_000_000u64, "Tbps"),
        (1_000_000_000, "Gbps"),
        (1_000_000, "Mbps"),
        (1_000, "Kbps"),
    ] {
        if bps >= m {
            return trim_float(bps as f64 / m as f64, u);
        }
    }
    format!("{bps}bps")
}

/// Formats picoseconds with the largest unit that keeps the number at least 1.
pub fn format_duration(ps: u64) -> String {
    for (m, u) in [
        (PS_PER_SEC, "s"),
        (1_000_000_000, "ms"),
        (1_000_000, "us"),
        (1_000, "ns"),
    ] {
        if ps >= m {
            return trim_float(ps as f64 / m as f64, u);
        }
    }
    format!("{ps}ps")
}

fn trim_float(v: f64, unit: &str) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{unit}")
}

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:ident, $expect:expr, $pattern:expr, $fmt:expr) => {
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s)
                            .map($name)
                            .map_err(|why| E::custom(format!("{why}; expected {}", $expect)))
                    }
                }
                d.deserialize_str(V)
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                #[allow(clippy::redundant_closure_call)]
                s.serialize_str(&($fmt)(self.0))
            }
        }
        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string",
                    "pattern": $pattern,
                    "description": $expect,
                })
            }
        }
    };
}

/// A data rate in bit/s, written `"10Gbps"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(pub u64);
unit_type!(
    Rate,
    u64,
    parse_rate,
    "a data rate such as \"10Gbps\", \"400Mbps\" or \"1.5Tbps\" (units bps, Kbps, Mbps, Gbps, Tbps)",
    "^\\s*[0-9]+(\\.[0-9]+)?\\s*([kKMGT]?(bps|b/s))\\s*$",
    format_rate
);

/// A time span in picoseconds, written `"2us"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimeSpan(pub u64);
unit_type!(
    TimeSpan,
    u64,
    parse_duration,
    "a duration such as \"2us\", \"500ns\" or \"1.5ms\" (units ps, ns, us, ms, s)",
    "^\\s*[0-9]+(\\.[0-9]+)?\\s*(ps|ns|us|µs|ms|s)\\s*$",
    format_duration
);

/// A frequency in Hz, written `"2.2GHz"`: a core's clock, or a number of CPU
/// cycles per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Frequency(pub u64);
unit_type!(
    Frequency,
    u64,
    parse_frequency,
    "a frequency such as \"2.2GHz\" or \"400MHz\" (units Hz, kHz, MHz, GHz)",
    "^\\s*[0-9]+(\\.[0-9]+)?\\s*([kKMG]?Hz)\\s*$",
    format_frequency
);

/// A size in bytes or packets, written `"1MB"` or `"100pkt"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub ByteSize);
unit_type!(
    Size,
    ByteSize,
    parse_bytes,
    "a size such as \"1MB\", \"64KiB\", \"1500B\" or \"100pkt\" (units B, KB, MB, GB, KiB, MiB, GiB, pkt)",
    "^\\s*[0-9]+(\\.[0-9]+)?\\s*(B|[kK]B|MB|GB|KiB|MiB|GiB|pkts?|packets?)\\s*$",
    |b: ByteSize| match b {
        ByteSize::Bytes(n) => format!("{n}B"),
        ByteSize::Packets(n) => format!("{n}pkt"),
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_exact() {
        assert_eq!(parse_rate("10Gbps"), Ok(10_000_000_000));
        assert_eq!(parse_rate("1.5Tbps"), Ok(1_500_000_000_000));
        assert_eq!(parse_rate(" 400 Mbps "), Ok(400_000_000));
        assert_eq!(parse_rate("10Gb/s"), Ok(10_000_000_000));
        assert_eq!(parse_rate("100kbps"), Ok(100_000));
        assert!(parse_rate("10Gbs").unwrap_err().contains("unknown unit"));
        assert!(parse_rate("10").unwrap_err().contains("missing unit"));
        assert!(parse_rate("0Gbps").is_err());
        assert!(parse_rate("1.5bps").is_err());
        assert!(parse_rate("Gbps").is_err());
        assert!(parse_rate("1..5Gbps").is_err());
        assert_eq!(parse_rate("100Tbps"), Ok(MAX_RATE_BPS));
        assert!(parse_rate("18446744073709551615bps")
            .unwrap_err()
            .contains("fastest link"));
        assert!(parse_rate("1.Gbps").is_err());
    }

    #[test]
    fn frequencies_are_hertz() {
        assert_eq!(parse_frequency("2.2GHz"), Ok(2_200_000_000));
        assert_eq!(parse_frequency("0.792GHz"), Ok(792_000_000));
        assert_eq!(parse_frequency("400 MHz"), Ok(400_000_000));
        assert_eq!(parse_frequency("10kHz"), Ok(10_000));
        assert!(parse_frequency("2.2Ghz")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_frequency("2.2").unwrap_err().contains("missing unit"));
        assert!(parse_frequency("0GHz").is_err());
        assert!(parse_frequency("0.5Hz")
            .unwrap_err()
            .contains("whole number"));
        assert!(parse_frequency("2000GHz")
            .unwrap_err()
            .contains("fastest clock"));
        assert_eq!(format_frequency(2_200_000_000), "2.2GHz");
        assert_eq!(format_frequency(198_000_000), "198MHz");
    }

    #[test]
    fn durations_are_picoseconds() {
        assert_eq!(parse_duration("2us"), Ok(2_000_000));
        assert_eq!(parse_duration("2µs"), Ok(2_000_000));
        assert_eq!(parse_duration("1.5ms"), Ok(1_500_000_000));
        assert_eq!(parse_duration("0.21s"), Ok(210_000_000_000));
        assert_eq!(parse_duration("7ps"), Ok(7));
        assert_eq!(parse_duration("0s"), Ok(0));
        assert!(parse_duration("1.5ps")
            .unwrap_err()
            .contains("whole number"));
        assert!(parse_duration("3 min").is_err());
        assert_eq!(parse_duration("1000000s"), Ok(MAX_DURATION));
        assert!(parse_duration("1000000.000000000001s")
            .unwrap_err()
            .contains("longest duration"));
        assert!(parse_duration("18446744s").is_err());
    }

    #[test]
    fn sizes_bytes_and_packets() {
        assert_eq!(parse_bytes("1MB"), Ok(ByteSize::Bytes(1_000_000)));
        assert_eq!(parse_bytes("64KiB"), Ok(ByteSize::Bytes(65_536)));
        assert_eq!(parse_bytes("1.5KB"), Ok(ByteSize::Bytes(1_500)));
        assert_eq!(parse_bytes("100pkt"), Ok(ByteSize::Packets(100)));
        assert_eq!(ByteSize::Packets(100).bytes(9000), 900_000);
        assert!(parse_bytes("1.5B").is_err());
        assert!(parse_bytes("12mb").is_err());
    }

    #[test]
    fn formatting_round_trips() {
        for s in ["10Gbps", "400Mbps", "1.5Tbps"] {
            assert_eq!(format_rate(parse_rate(s).unwrap()), s);
        }
        for s in ["2us", "1.5ms", "7ps", "3s"] {
            assert_eq!(format_duration(parse_duration(s).unwrap()), s);
        }
    }
}
