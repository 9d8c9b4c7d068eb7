//! Resource limits of a profile (R-H5): processes, memory, temporary storage, open files,
//! CPU time and wall-clock time, bounded by default.
//!
//! The profile holds spellings ([`Limits`]: `pids = 64`, `memory = "512M"`, `tmpfs =
//! "25%"`, `timeout = "200ms"`, `"unlimited"`); [`Limits::resolve`] turns them into numbers
//! for one host (percentages are of its RAM). Pure: the host's RAM is an argument. How each
//! limit is enforced (cgroup, rlimit, tmpfs `size=`) is the sandbox's business.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One limit as written in a profile: a number (count, bytes or seconds) or a string
/// (`"512M"`, `"50%"`, `"30s"`, `"200ms"`, `"unlimited"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum LimitValue {
    /// A plain number: a count, bytes, or seconds (by field).
    Number(u64),
    /// A spelling with a unit, a percentage of RAM, or `unlimited`.
    Text(String),
}

/// A number or a string, with an error that says what is accepted (an untagged derive
/// said "data did not match any variant of untagged enum LimitValue" to a user who wrote
/// `pids = -1`: new user, stop 18).
impl<'de> Deserialize<'de> for LimitValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        const WANT: &str = "a positive number, or a text such as \"512M\", \"50%\", \
                            \"30s\", \"200ms\" or \"unlimited\"";
        impl serde::de::Visitor<'_> for V {
            type Value = LimitValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(WANT)
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<LimitValue, E> {
                Ok(LimitValue::Number(n))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<LimitValue, E> {
                u64::try_from(n)
                    .map(LimitValue::Number)
                    .map_err(|_| E::custom(format!("a limit cannot be negative ({n}): use {WANT}")))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<LimitValue, E> {
                Err(E::custom(format!("{n} is not a whole number: use {WANT}")))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<LimitValue, E> {
                Ok(LimitValue::Text(s.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl fmt::Display for LimitValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitValue::Number(n) => write!(f, "{n}"),
            LimitValue::Text(s) => f.write_str(s),
        }
    }
}

fn text(s: &str) -> Option<LimitValue> {
    Some(LimitValue::Text(s.to_string()))
}

/// Resource limits (R-H5). Every field is a [`LimitValue`]; a missing field takes the
/// default of [`Limits::default`] (the built-in profiles' values); `"unlimited"` removes a
/// limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Processes and threads the command may have at once (default 4096).
    pub pids: Option<LimitValue>,
    /// Memory of the whole process tree: bytes, `K`/`M`/`G`/`T` suffixes, or a
    /// percentage of RAM (default `"50%"`).
    pub memory: Option<LimitValue>,
    /// Size of each private tmpfs (`/tmp`, `/dev/shm`): bytes, suffixes or a percentage of
    /// RAM (default `"25%"`).
    pub tmpfs: Option<LimitValue>,
    /// Open files per process (default 16384).
    pub open_files: Option<LimitValue>,
    /// CPU time per process: seconds or `"30s"`, `"10m"`, `"2h"` (default `"2h"`).
    pub cpu_time: Option<LimitValue>,
    /// Wall-clock time of the whole run: seconds or `"200ms"`, `"30s"`, `"2h"` (default
    /// `"2h"`). When it passes, the command and every process it started are killed.
    pub timeout: Option<LimitValue>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            pids: Some(LimitValue::Number(4096)),
            memory: text("50%"),
            tmpfs: text("25%"),
            open_files: Some(LimitValue::Number(16384)),
            cpu_time: text("2h"),
            timeout: text("2h"),
        }
    }
}

/// [`Limits`] in numbers for one host; `None` = unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResolvedLimits {
    /// Processes and threads.
    pub pids: Option<u64>,
    /// Bytes of memory for the process tree.
    pub memory_bytes: Option<u64>,
    /// Bytes of each private tmpfs.
    pub tmpfs_bytes: Option<u64>,
    /// Open files per process.
    pub open_files: Option<u64>,
    /// CPU seconds per process.
    pub cpu_seconds: Option<u64>,
    /// Wall-clock milliseconds of the run.
    pub timeout_ms: Option<u64>,
}

/// A limit that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("limits.{field} = {value:?}: {why}")]
pub struct LimitError {
    /// The field (`memory`).
    pub field: &'static str,
    /// The spelling.
    pub value: String,
    /// What is wrong and how to write it.
    pub why: &'static str,
}

fn is_unlimited(v: &LimitValue) -> bool {
    matches!(v, LimitValue::Text(s) if s.trim().eq_ignore_ascii_case("unlimited") || s.trim().eq_ignore_ascii_case("none"))
}

fn split_num(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let n: f64 = s[..end].parse().ok()?;
    Some((n, s[end..].trim()))
}

/// Parses a size: bytes, `K`/`M`/`G`/`T` (powers of 1024, optional `B`/`iB`), or `N%` of
/// `ram_bytes`.
pub fn parse_size(v: &LimitValue, ram_bytes: u64) -> Option<u64> {
    match v {
        LimitValue::Number(n) => Some(*n),
        LimitValue::Text(s) => {
            let (n, unit) = split_num(s)?;
            let unit = unit.to_ascii_uppercase();
            let unit = unit.trim_end_matches("IB").trim_end_matches('B');
            let mult = match unit {
                "" => 1.0,
                "K" => 1024.0,
                "M" => 1024.0 * 1024.0,
                "G" => 1024.0 * 1024.0 * 1024.0,
                "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
                "%" if n > 0.0 && n <= 100.0 => return Some((ram_bytes as f64 * n / 100.0) as u64),
                _ => return None,
            };
            Some((n * mult) as u64)
        }
    }
}

/// Parses a duration into milliseconds: seconds, or `ms`/`s`/`m`/`h` suffixes.
pub fn parse_duration_ms(v: &LimitValue) -> Option<u64> {
    match v {
        LimitValue::Number(n) => n.checked_mul(1000),
        LimitValue::Text(s) => {
            let (n, unit) = split_num(s)?;
            let mult = match unit {
                "ms" => 1.0,
                "" | "s" => 1000.0,
                "m" | "min" => 60_000.0,
                "h" => 3_600_000.0,
                _ => return None,
            };
            Some((n * mult) as u64)
        }
    }
}

fn count(v: &LimitValue) -> Option<u64> {
    match v {
        LimitValue::Number(n) => Some(*n),
        LimitValue::Text(s) => s.trim().parse().ok(),
    }
}

impl Limits {
    /// No limit at all (every field `"unlimited"`), e.g. for tests.
    pub fn unlimited() -> Limits {
        Limits {
            pids: text("unlimited"),
            memory: text("unlimited"),
            tmpfs: text("unlimited"),
            open_files: text("unlimited"),
            cpu_time: text("unlimited"),
            timeout: text("unlimited"),
        }
    }

    /// Numbers for a host with `ram_bytes` of RAM. Errors name the field and the accepted
    /// spellings; a zero limit is an error (it would refuse everything).
    pub fn resolve(&self, ram_bytes: u64) -> Result<ResolvedLimits, LimitError> {
        fn one(
            field: &'static str,
            v: &Option<LimitValue>,
            parse: impl Fn(&LimitValue) -> Option<u64>,
            why: &'static str,
        ) -> Result<Option<u64>, LimitError> {
            let Some(v) = v else { return Ok(None) };
            if is_unlimited(v) {
                return Ok(None);
            }
            match parse(v) {
                Some(n) if n > 0 => Ok(Some(n)),
                _ => Err(LimitError {
                    field,
                    value: v.to_string(),
                    why,
                }),
            }
        }
        const SIZE: &str = "write bytes, a size like \"512M\" or \"2G\", a share of RAM like \"50%\", or \"unlimited\"";
        const TIME: &str = "write seconds, or a duration like \"200ms\", \"30s\", \"10m\", \"2h\", or \"unlimited\"";
        const COUNT: &str = "write a positive number, or \"unlimited\"";
        // A bare number is bytes: `memory = 512` killed every command (new user, stop 19).
        const TINY: &str = "that is under 1 MiB (a bare number is bytes): write a size like \
                            \"512M\" or \"2G\", a share of RAM like \"50%\", or \"unlimited\"";
        let size = |field: &'static str, v: &Option<LimitValue>| {
            let n = one(field, v, |v| parse_size(v, ram_bytes), SIZE)?;
            match (n, v) {
                (Some(b), Some(v)) if b < 1 << 20 => Err(LimitError {
                    field,
                    value: v.to_string(),
                    why: TINY,
                }),
                _ => Ok(n),
            }
        };
        Ok(ResolvedLimits {
            pids: one("pids", &self.pids, count, COUNT)?,
            memory_bytes: size("memory", &self.memory)?,
            tmpfs_bytes: size("tmpfs", &self.tmpfs)?,
            open_files: one("open_files", &self.open_files, count, COUNT)?,
            cpu_seconds: one(
                "cpu_time",
                &self.cpu_time,
                |v| parse_duration_ms(v).map(|ms| ms.div_ceil(1000)),
                TIME,
            )?,
            timeout_ms: one("timeout", &self.timeout, parse_duration_ms, TIME)?,
        })
    }

    /// Overrides the fields `other` sets (a config file's `[profiles.x.limits]` table).
    pub fn merge(&mut self, other: &LimitsDef) {
        let set = |dst: &mut Option<LimitValue>, src: &Option<LimitValue>| {
            if let Some(v) = src {
                *dst = Some(v.clone());
            }
        };
        set(&mut self.pids, &other.pids);
        set(&mut self.memory, &other.memory);
        set(&mut self.tmpfs, &other.tmpfs);
        set(&mut self.open_files, &other.open_files);
        set(&mut self.cpu_time, &other.cpu_time);
        set(&mut self.timeout, &other.timeout);
    }
}

/// A `[profiles.x.limits]` table as written: only the fields given (merged onto the base
/// profile's limits).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsDef {
    /// See [`Limits::pids`].
    pub pids: Option<LimitValue>,
    /// See [`Limits::memory`].
    pub memory: Option<LimitValue>,
    /// See [`Limits::tmpfs`].
    pub tmpfs: Option<LimitValue>,
    /// See [`Limits::open_files`].
    pub open_files: Option<LimitValue>,
    /// See [`Limits::cpu_time`].
    pub cpu_time: Option<LimitValue>,
    /// See [`Limits::timeout`].
    pub timeout: Option<LimitValue>,
}

/// Which limit ended a run (`limit-exceeded{which}` in the `--json` report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitKind {
    /// Too many processes.
    Pids,
    /// Memory of the process tree.
    Memory,
    /// Wall-clock timeout.
    Timeout,
    /// CPU time.
    CpuTime,
}

impl LimitKind {
    /// The name used in reports (`pids`, `memory`, `timeout`, `cpu-time`).
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::Pids => "pids",
            LimitKind::Memory => "memory",
            LimitKind::Timeout => "timeout",
            LimitKind::CpuTime => "cpu-time",
        }
    }

    /// Inverse of [`LimitKind::as_str`].
    pub fn parse(s: &str) -> Option<LimitKind> {
        [
            LimitKind::Pids,
            LimitKind::Memory,
            LimitKind::Timeout,
            LimitKind::CpuTime,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// The profile's `[limits]` key that sets it (`raise limits.KEY`).
    pub fn profile_key(self) -> &'static str {
        match self {
            LimitKind::Pids => "pids",
            LimitKind::Memory => "memory",
            LimitKind::Timeout => "timeout",
            LimitKind::CpuTime => "cpu_time",
        }
    }

    /// The one-byte code on the helper's outcome channel.
    pub fn code(self) -> u8 {
        match self {
            LimitKind::Pids => b'p',
            LimitKind::Memory => b'm',
            LimitKind::Timeout => b't',
            LimitKind::CpuTime => b'c',
        }
    }

    /// Inverse of [`LimitKind::code`].
    pub fn from_code(c: u8) -> Option<LimitKind> {
        Some(match c {
            b'p' => LimitKind::Pids,
            b'm' => LimitKind::Memory,
            b't' => LimitKind::Timeout,
            b'c' => LimitKind::CpuTime,
            _ => return None,
        })
    }
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parse` reads back what `as_str` reports, and each kind names its profile key.
    #[test]
    fn limit_kinds_round_trip_and_name_their_key() {
        for k in [
            LimitKind::Pids,
            LimitKind::Memory,
            LimitKind::Timeout,
            LimitKind::CpuTime,
        ] {
            assert_eq!(LimitKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(LimitKind::parse("nope"), None);
        assert_eq!(LimitKind::CpuTime.profile_key(), "cpu_time");
    }

    const G: u64 = 1024 * 1024 * 1024;

    #[test]
    fn defaults_resolve_against_ram() {
        let r = Limits::default().resolve(16 * G).unwrap();
        assert_eq!(r.pids, Some(4096));
        assert_eq!(r.memory_bytes, Some(8 * G));
        assert_eq!(r.tmpfs_bytes, Some(4 * G));
        assert_eq!(r.open_files, Some(16384));
        assert_eq!(r.cpu_seconds, Some(7200));
        assert_eq!(r.timeout_ms, Some(7_200_000));
    }

    /// New user (stop 19): `memory = 512` is 512 bytes and killed every command; a size
    /// under 1 MiB is an error that says a bare number is bytes. `"512M"` works (twin).
    #[test]
    fn tiny_sizes_are_errors() {
        let mut l = Limits {
            memory: Some(LimitValue::Number(512)),
            ..Limits::default()
        };
        let e = l.resolve(16 * G).unwrap_err().to_string();
        assert!(
            e.contains("memory") && e.contains("bare number is bytes"),
            "{e}"
        );
        l.memory = Some(LimitValue::Text("512M".into()));
        assert_eq!(l.resolve(16 * G).unwrap().memory_bytes, Some(512 << 20));
        l.tmpfs = Some(LimitValue::Text("100k".into()));
        assert!(l.resolve(16 * G).is_err());
    }

    #[test]
    fn spellings() {
        let t = |s: &str| LimitValue::Text(s.into());
        assert_eq!(parse_size(&t("16M"), 0), Some(16 << 20));
        assert_eq!(parse_size(&t("1.5GiB"), 0), Some(3 << 29));
        assert_eq!(parse_size(&t("512k"), 0), Some(512 << 10));
        assert_eq!(parse_size(&LimitValue::Number(100), 0), Some(100));
        assert_eq!(parse_size(&t("10%"), 1000), Some(100));
        assert_eq!(parse_size(&t("200%"), 1000), None);
        assert_eq!(parse_size(&t("lots"), 1000), None);
        assert_eq!(parse_duration_ms(&t("200ms")), Some(200));
        assert_eq!(parse_duration_ms(&t("30s")), Some(30_000));
        assert_eq!(parse_duration_ms(&t("2h")), Some(7_200_000));
        assert_eq!(parse_duration_ms(&LimitValue::Number(3)), Some(3000));
        assert_eq!(parse_duration_ms(&t("3 fortnights")), None);
    }

    #[test]
    fn unlimited_and_errors() {
        let r = Limits::unlimited().resolve(G).unwrap();
        assert_eq!(r, ResolvedLimits::default());
        let bad = Limits {
            memory: Some(LimitValue::Text("lots".into())),
            ..Limits::default()
        };
        let e = bad.resolve(G).unwrap_err();
        assert_eq!(e.field, "memory");
        assert!(e.to_string().contains("512M"), "{e}");
        let zero = Limits {
            pids: Some(LimitValue::Number(0)),
            ..Limits::default()
        };
        assert!(zero.resolve(G).is_err());
    }

    #[test]
    fn toml_table_merges_onto_the_base() {
        let def: LimitsDef = toml::from_str("pids = 64\ntimeout = \"200ms\"\n").unwrap();
        let mut l = Limits::default();
        l.merge(&def);
        let r = l.resolve(G).unwrap();
        assert_eq!(r.pids, Some(64));
        assert_eq!(r.timeout_ms, Some(200));
        assert_eq!(r.open_files, Some(16384));
        assert!(toml::from_str::<LimitsDef>("pid = 3").is_err());
    }
}
