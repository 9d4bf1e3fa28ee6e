//! Small text helpers shared by the commands, `import` and the server: text
//! safe to print, plurals, the kind of a JSON value in words.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert!(matches!(printable("plain ü"), Cow::Borrowed("plain ü")));
        assert_eq!(printable("a\nb\u{1b}[31m\u{7}"), "a\\nb\\u{1b}[31m\\u{7}");
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
}
