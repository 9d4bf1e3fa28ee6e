//! Flat frontmatter: one `key: text` line per key, read without the YAML
//! engine.
//!
//! Most SKILL.md files have nothing else (`name:` and `description:` on a
//! line each), and the engine was a third of start-up at 100,000 skills.
//! [`mapping`] reads such a frontmatter when every line is a simple key, a
//! colon, a space and a text on that one line: plain, in single quotes, or
//! in double quotes without a backslash. Anything else is left to the
//! engine (`None`): a block scalar, a list or map, a comment, a value YAML
//! reads as a number, a boolean or null, an escape, a value that goes on
//! over several lines, a key given twice, a tab or a control character.
//!
//! What it accepts, the engine reads as the same strings: debug builds,
//! which every test runs, check each frontmatter read here against the
//! engine ([`super::parse_yaml`]), and the tests below compare both on
//! lines built from YAML's special characters.

use serde_json::{Map, Value};

/// The keys and texts of `yaml` when every line is `key: text` (or empty);
/// `None` when the YAML engine must read it.
pub fn mapping(yaml: &str) -> Option<Map<String, Value>> {
    let mut map = Map::new();
    for line in yaml.split('\n') {
        if line.is_empty() {
            continue;
        }
        let (key, rest) = line.split_once(':')?;
        if !is_key(key) {
            return None;
        }
        let value = rest.strip_prefix(' ')?.trim_start_matches(' ');
        let value = quoted(value).or_else(|| plain(value))?;
        if map.insert(key.to_owned(), Value::String(value)).is_some() {
            // The engine refuses a key given twice.
            return None;
        }
    }
    Some(map)
}

/// A key as skills write them: a letter or `_`, then letters, digits, `_`
/// and `-`.
fn is_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Characters YAML may treat otherwise, or not allow at all, in a text: a
/// control character (a tab, a carriage return), a byte order mark, a
/// non-character, a Unicode line or paragraph separator.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{feff}' | '\u{fffe}' | '\u{ffff}' | '\u{2028}' | '\u{2029}'
        )
}

/// A text in single quotes (`''` is a quote) or in double quotes without a
/// backslash, the quotes ending the line.
fn quoted(value: &str) -> Option<String> {
    if let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        return (!inner.contains(['"', '\\']) && !inner.contains(is_unsafe))
            .then(|| inner.to_owned());
    }
    let inner = value.strip_prefix('\'')?.strip_suffix('\'')?;
    if inner.contains(is_unsafe) {
        return None;
    }
    let mut text = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some((before, after)) = rest.split_once('\'') {
        // A quote alone would end the text before the line does.
        let after = after.strip_prefix('\'')?;
        text.push_str(before);
        text.push('\'');
        rest = after;
    }
    text.push_str(rest);
    Some(text)
}

/// A plain text that YAML reads as that very string: it does not start
/// with an indicator, a digit, a sign, a dot or `~` (numbers, null), is not
/// `null`, `true` or `false` in any case, holds no `: ` or ` #`, and does
/// not end with `:` or a space.
fn plain(value: &str) -> Option<String> {
    let first = value.chars().next()?;
    let starts_otherwise = "-?:,[]{}#&*!|>'\"%@`+.~".contains(first) || first.is_ascii_digit();
    let special = ["null", "true", "false"]
        .iter()
        .any(|word| value.eq_ignore_ascii_case(word));
    let ok = !starts_otherwise
        && !special
        && !value.contains(": ")
        && !value.contains(" #")
        && !value.ends_with([':', ' '])
        && !value.contains(is_unsafe);
    ok.then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the YAML engine reads, as [`super::super::parse_yaml`] turns it
    /// into JSON; `None` when it fails or is not a map.
    fn engine(yaml: &str) -> Option<Map<String, Value>> {
        use gray_matter::engine::{Engine, YAML};
        match super::super::json(YAML::parse(yaml).ok()?) {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    fn strings(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect()
    }

    #[test]
    fn flat_lines_are_read_as_the_engine_reads_them() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            (
                "name: pdf\ndescription: Fill PDF forms.\n",
                &[("name", "pdf"), ("description", "Fill PDF forms.")],
            ),
            (
                "name:   pdf\n\ndescription: C# and a:b, [x] {y}\n",
                &[("name", "pdf"), ("description", "C# and a:b, [x] {y}")],
            ),
            ("description: 'it''s: #1'\n", &[("description", "it's: #1")]),
            ("description: ''\n", &[("description", "")]),
            (
                "description: \"a 'b': #c\"\n",
                &[("description", "a 'b': #c")],
            ),
            (
                "description: Ünïcode — “quotes” 日本\n",
                &[("description", "Ünïcode — “quotes” 日本")],
            ),
            (
                "license: Apache-2.0\nuser_invocable: yes\n",
                &[("license", "Apache-2.0"), ("user_invocable", "yes")],
            ),
        ];
        for (yaml, expected) in cases {
            let read = mapping(yaml);
            assert_eq!(read, Some(strings(expected)), "{yaml:?}");
            assert_eq!(read, engine(yaml), "{yaml:?}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_engine() {
        for yaml in [
            "description: >-\n  folded\n",
            "description: |\n  kept\n",
            "description: first\n  second line\n",
            "allowed-tools:\n  - Read\n",
            "metadata: {a: b}\n",
            "tags: [a, b]\n",
            "version: 1.0\n",
            "version: 2\n",
            "count: +3\n",
            "empty:\n",
            "empty: \n",
            "flag: True\n",
            "none: ~\n",
            "none: NULL\n",
            "description: use when: asked\n",
            "description: ends with:\n",
            "description: text # comment\n",
            "description: trailing \n",
            "description: \"escaped \\n\"\n",
            "description: \"unterminated\n",
            "description: 'a' b'\n",
            "description: 'a'''\n'",
            "description: a\tb\n",
            "description: a\r\n",
            "description: &anchor a\n",
            "description: *alias\n",
            "description: !tag a\n",
            "description: @at\n",
            "description: `tick\n",
            "description: %pct\n",
            "description: - item\n",
            "description: ? key\n",
            "name: a\nname: b\n",
            "# comment\nname: a\n",
            "\"name\": a\n",
            "name : a\n",
            "name:a\n",
            "  name: a\n",
            "...\n",
        ] {
            assert_eq!(mapping(yaml), None, "{yaml:?}");
        }
    }

    proptest! {
        /// Lines of YAML's special characters: whatever is read here, the
        /// engine reads alike.
        #[test]
        fn whatever_is_read_the_engine_reads_alike(
            values in proptest::collection::vec(
                (
                    prop_oneof!["", "'", "\""],
                    "[a-z0-9 :#'\"\\\\\\-?,\\[\\]{}&*!|>%@`+.~\t\u{e9}\u{2014}]{0,12}",
                ),
                1..4,
            ),
        ) {
            let keys = ["name", "description", "license"];
            let yaml: String = values
                .iter()
                .zip(keys)
                .map(|((quote, value), key)| format!("{key}: {quote}{value}{quote}\n"))
                .collect();
            if let Some(read) = mapping(&yaml) {
                prop_assert_eq!(Some(read), engine(&yaml), "{:?}", yaml);
            }
        }
    }
}
