//! Days as the usage file counts them: UTC days since the Unix epoch,
//! written `YYYY-MM-DD` (the proleptic Gregorian calendar; Howard Hinnant's
//! `days_from_civil` and `civil_from_days`). A crate for dates would bring
//! time zones and formatting this file does not need.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC day: days since 1970-01-01.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(pub u32);

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// The day of a time in seconds since the epoch.
pub fn day_of(secs: u64) -> Day {
    Day(u32::try_from(secs / 86_400).unwrap_or(u32::MAX))
}

impl Day {
    /// Today, in UTC.
    pub fn today() -> Day {
        day_of(now_secs())
    }

    /// The day `days` before this one (the epoch at the earliest).
    pub fn minus(self, days: u32) -> Day {
        Day(self.0.saturating_sub(days))
    }

    /// Year, month (1–12) and day (1–31).
    fn civil(self) -> (i64, u32, u32) {
        let z = i64::from(self.0) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let y = yoe + era * 400 + i64::from(m <= 2);
        (y, m, d)
    }

    /// The day written `YYYY-MM-DD`, if it is one on or after the epoch.
    pub fn parse(text: &str) -> Option<Day> {
        let bytes = text.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return None;
        }
        let number = |range: std::ops::Range<usize>| -> Option<i64> {
            let part = text.get(range)?;
            part.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| part.parse().ok())?
        };
        let (y, m, d) = (number(0..4)?, number(5..7)?, number(8..10)?);
        if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
            return None;
        }
        let y = y - i64::from(m <= 2);
        let era = y.div_euclid(400);
        let yoe = y.rem_euclid(400);
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        u32::try_from(days).ok().map(Day)
    }
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.civil();
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

/// A time in seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn timestamp(secs: u64) -> String {
    let rest = secs % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        day_of(secs),
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_written_and_read_as_the_calendar_has_them() {
        assert_eq!(Day(0).to_string(), "1970-01-01");
        assert_eq!(Day(59).to_string(), "1970-03-01");
        assert_eq!(Day(11_016).to_string(), "2000-02-29");
        assert_eq!(Day(20_787).to_string(), "2026-11-30");
        for day in (0..80_000).step_by(7).map(Day) {
            assert_eq!(Day::parse(&day.to_string()), Some(day));
        }
        assert_eq!(Day::parse("2026-02-29"), None);
        assert_eq!(Day::parse("2024-02-29"), Some(Day(19_782)));
        assert_eq!(Day::parse("2026-13-01"), None);
        assert_eq!(Day::parse("1969-12-31"), None);
        assert_eq!(Day::parse("2026-1-01"), None);
        assert_eq!(Day::parse("+026-01-01"), None);
        assert_eq!(timestamp(1_764_510_000), "2025-11-30T13:40:00Z");
        assert_eq!(day_of(86_399), Day(0));
        assert_eq!(Day(5).minus(9), Day(0));
    }
}
