//! Small text helpers shared by the commands, `import` and the server: text
//! safe to print, plurals, the kind of a JSON value in words, times as
//! RFC 3339.

use std::borrow::Cow;

use serde_json::Value;

/// `text` with control characters escaped, so that a hostile name cannot
/// forge a line or drive a terminal (escape sequences, bells, carriage
/// returns).
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A path as [`printable`] shows it.
pub fn printable_path(path: &std::path::Path) -> String {
    printable(&path.display().to_string()).into_owned()
}

/// `text` on one line: every run of whitespace (line breaks and tabs
/// included) one space, ends trimmed, and the other control characters
/// escaped as [`printable`] does.
pub fn printable_line(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    printable(&words.join(" ")).into_owned()
}

/// `text` as lines: line breaks (`\r\n` made `\n`) and tabs kept, every
/// other control character escaped as [`printable`] does, a lone carriage
/// return included (it would overwrite a line on a terminal).
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    let kept = |c: char| c == '\n' || c == '\t';
    if !text.chars().any(|c| c.is_control() && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let text = text.replace("\r\n", "\n");
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && !kept(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `"s"` unless `n` is one: `format!("{n} skill{}", plural(n))`.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What a JSON value is, in words for whoever wrote it ("an array").
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `time` in UTC as RFC 3339 to the second (`2026-10-01T12:00:00Z`), as
/// skillserve records when something was done. Times before 1970 are
/// written as 1970.
pub fn utc_time(time: std::time::SystemTime) -> String {
    let seconds = time
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert!(matches!(printable("plain ü"), Cow::Borrowed("plain ü")));
        assert_eq!(printable("a\nb\u{1b}[31m\u{7}"), "a\\nb\\u{1b}[31m\\u{7}");
    }

    #[test]
    fn lines_keep_their_breaks_and_tabs_and_lose_the_rest() {
        assert_eq!(
            printable_line(" a\tb\r\nc \u{1b}[1m\u{7} "),
            "a b c \\u{1b}[1m\\u{7}"
        );
        assert_eq!(printable_lines("a\r\nb\tc\rd\u{85}"), "a\nb\tc\\rd\\u{85}");
        assert!(matches!(printable_lines("a\n\tb"), Cow::Borrowed(_)));
    }

    #[test]
    fn plurals_and_kinds() {
        assert_eq!(
            format!("1 skill{}, 2 file{}", plural(1), plural(2)),
            "1 skill, 2 files"
        );
        assert_eq!(json_kind(&serde_json::json!([1])), "an array");
        assert_eq!(json_kind(&serde_json::json!({})), "an object");
    }

    #[test]
    fn utc_times_are_rfc_3339() {
        use std::time::{Duration, UNIX_EPOCH};
        assert_eq!(utc_time(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2024-02-29 (a leap day) 23:59:59.
        let leap = UNIX_EPOCH + Duration::from_secs(1_709_251_199);
        assert_eq!(utc_time(leap), "2024-02-29T23:59:59Z");
        let later = UNIX_EPOCH + Duration::from_secs(4_102_444_800);
        assert_eq!(utc_time(later), "2100-01-01T00:00:00Z");
    }
}
