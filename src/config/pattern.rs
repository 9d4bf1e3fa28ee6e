//! The patterns of `include` and `exclude` (behaviour.md §17.2): a glob on
//! a skill's name, or a selector of where skills come from (`source:user`,
//! `dir:~/skills`). Parsed here, with the place in `config.toml` each came
//! from; matched against skills by `profiles`, which knows what a skill is.
//!
//! Globs are matched by a few lines of code rather than the `globset` crate:
//! they only ever see skill names and client names (`*` and `?`, compared
//! case-insensitively), and `globset` would bring `regex` into the build for
//! path syntax (`**`, `{a,b}`, `[...]`) that names do not need.

use std::fmt;
use std::path::PathBuf;

use super::Origin;

/// A glob on a name: `*` matches any run of characters (also none), `?`
/// one character, everything else itself; case does not matter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    /// The pattern's characters, lowercased.
    chars: Vec<char>,
    /// The same as bytes when the pattern is ASCII: matched against an
    /// ASCII name without allocating (the server matches the client's name
    /// against every profile and row on each request).
    ascii: Option<Vec<u8>>,
    /// Whether it holds `*` or `?` (a literal compares faster).
    wild: bool,
}

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        let chars: Vec<char> = pattern.chars().flat_map(char::to_lowercase).collect();
        let wild = chars.iter().any(|&c| c == '*' || c == '?');
        let ascii = chars
            .iter()
            .all(char::is_ascii)
            .then(|| chars.iter().map(|&c| c as u8).collect());
        Glob { chars, ascii, wild }
    }

    /// Whether `text` matches, ignoring case.
    pub fn matches(&self, text: &str) -> bool {
        if let Some(pattern) = self.ascii.as_deref().filter(|_| text.is_ascii()) {
            let text = text.as_bytes();
            if !self.wild {
                return text.eq_ignore_ascii_case(pattern);
            }
            return wildcard(pattern, text, b'*', b'?', |p, t| {
                p == t.to_ascii_lowercase()
            });
        }
        let mut lower = text.chars().flat_map(char::to_lowercase);
        if !self.wild {
            return lower.by_ref().eq(self.chars.iter().copied());
        }
        let text: Vec<char> = lower.collect();
        wildcard(&self.chars, &text, '*', '?', |p, t| p == t)
    }
}

/// The classic wildcard match: on a mismatch after a `*`, let that `*`
/// swallow one more character and try again. Linear for patterns with one
/// `*`, at worst the product of the lengths (names are short). `same` says
/// whether a pattern character matches a text character.
fn wildcard<T: Copy + PartialEq>(
    pattern: &[T],
    text: &[T],
    star: T,
    any: T,
    same: impl Fn(T, T) -> bool,
) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(&c) if c == star => {
                backtrack = Some((p, t));
                p += 1;
            }
            Some(&c) if c == any || same(c, text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match backtrack {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    backtrack = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == star)
}

/// One entry of `include` or `exclude`, with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// As written, for messages (`"pdf*"`, `"source:plugin"`).
    pub text: String,
    pub selects: Selector,
    pub origin: Origin,
}

/// What a pattern selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// Skills whose full name matches (`pdf*`, `*:pdf`).
    Name(Glob),
    /// Skills from one kind of source (`source:user`).
    Source(SourceSelector),
    /// Skills in a folder: a skills folder or one skill's folder (`dir:~/x`),
    /// expanded and absolute.
    Dir(PathBuf),
}

/// `source:...`: where skills come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceSelector {
    Custom,
    Project,
    User,
    /// `source:plugin`, or one plugin: `source:plugin:name@marketplace` (a
    /// glob on the plugin's key).
    Plugin(Option<Glob>),
    /// `source:installed`, or one installed source by its id (a glob).
    Installed(Option<Glob>),
}

/// The words `source:` accepts, for messages.
pub const SOURCES: &str =
    "custom, project, user, plugin, plugin:NAME@MARKETPLACE, installed, installed:ID";

/// Why a pattern cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternProblem {
    Empty,
    UnknownSource(String),
    EmptyDir,
}

impl fmt::Display for PatternProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternProblem::Empty => f.write_str("a pattern cannot be empty"),
            PatternProblem::UnknownSource(source) => write!(
                f,
                "`source:{source}` names no source; use one of source:{}",
                SOURCES.replace(", ", ", source:")
            ),
            PatternProblem::EmptyDir => f.write_str("`dir:` needs a folder after it"),
        }
    }
}

/// The selector `text` spells, with the folder of `dir:` still unexpanded:
/// `Err` for what no pattern can be. A pattern starting with `source:` or
/// `dir:` is a selector; anything else a glob on names.
pub fn parse_selector(text: &str) -> Result<Unexpanded, PatternProblem> {
    if text.trim().is_empty() {
        return Err(PatternProblem::Empty);
    }
    if let Some(source) = text.strip_prefix("source:") {
        let (kind, detail) = match source.split_once(':') {
            Some((kind, detail)) => (kind, Some(detail)),
            None => (source, None),
        };
        let glob = detail.filter(|d| !d.is_empty()).map(Glob::new);
        let selector = match (kind, detail) {
            ("custom", None) => SourceSelector::Custom,
            ("project", None) => SourceSelector::Project,
            ("user", None) => SourceSelector::User,
            ("plugin", _) if detail != Some("") => SourceSelector::Plugin(glob),
            ("installed", _) if detail != Some("") => SourceSelector::Installed(glob),
            _ => return Err(PatternProblem::UnknownSource(source.to_owned())),
        };
        return Ok(Unexpanded::Selector(Selector::Source(selector)));
    }
    if let Some(dir) = text.strip_prefix("dir:") {
        if dir.trim().is_empty() {
            return Err(PatternProblem::EmptyDir);
        }
        return Ok(Unexpanded::Dir(dir.to_owned()));
    }
    Ok(Unexpanded::Selector(Selector::Name(Glob::new(text))))
}

/// A parsed pattern before its folder (for `dir:`) is expanded.
#[derive(Debug, PartialEq, Eq)]
pub enum Unexpanded {
    Selector(Selector),
    /// The text after `dir:`.
    Dir(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names_ignoring_case() {
        let glob = Glob::new("pdf*");
        assert!(glob.matches("pdf"));
        assert!(glob.matches("PDF-tools"));
        assert!(!glob.matches("my-pdf"));
        assert!(Glob::new("*-old").matches("Pdf-OLD"));
        assert!(Glob::new("a?c").matches("abc"));
        assert!(!Glob::new("a?c").matches("ac"));
        assert!(Glob::new("*:pdf").matches("document-skills:pdf"));
        assert!(Glob::new("*a*b*").matches("xxaxxbxx"));
        assert!(!Glob::new("*a*b").matches("xxaxxbxx"));
        assert!(Glob::new("*").matches(""));
        assert!(Glob::new("Visual Studio Code*").matches("visual studio code - insiders"));
        assert!(Glob::new("Ünïcode").matches("üNÏCODE"));
        assert!(Glob::new("ü*").matches("ÜBER"));
        assert!(Glob::new("*x").matches("éX"));
        assert!(!Glob::new("*x?").matches("éx"));
        assert!(!Glob::new("pdf").matches("pdf2"));
    }

    #[test]
    fn selectors_and_names() {
        assert_eq!(
            parse_selector("source:user"),
            Ok(Unexpanded::Selector(Selector::Source(SourceSelector::User)))
        );
        assert_eq!(
            parse_selector("source:plugin:doc*@anthropic-agent-skills"),
            Ok(Unexpanded::Selector(Selector::Source(
                SourceSelector::Plugin(Some(Glob::new("doc*@anthropic-agent-skills")))
            )))
        );
        assert_eq!(
            parse_selector("source:installed:team"),
            Ok(Unexpanded::Selector(Selector::Source(
                SourceSelector::Installed(Some(Glob::new("team")))
            )))
        );
        assert_eq!(
            parse_selector("dir:~/skills"),
            Ok(Unexpanded::Dir("~/skills".into()))
        );
        assert_eq!(
            parse_selector("pdf*"),
            Ok(Unexpanded::Selector(Selector::Name(Glob::new("pdf*"))))
        );
        for bad in ["source:users", "source:user:x", "source:plugin:", "source:"] {
            assert!(
                matches!(parse_selector(bad), Err(PatternProblem::UnknownSource(_))),
                "{bad}"
            );
        }
        assert_eq!(parse_selector("dir: "), Err(PatternProblem::EmptyDir));
        assert_eq!(parse_selector(""), Err(PatternProblem::Empty));
        assert_eq!(
            PatternProblem::UnknownSource("users".into()).to_string(),
            "`source:users` names no source; use one of source:custom, source:project, source:user, source:plugin, source:plugin:NAME@MARKETPLACE, source:installed, source:installed:ID"
        );
    }
}
