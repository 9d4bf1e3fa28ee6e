//! `skill://` URIs (behaviour.md §11): the address of every file of a served
//! skill, for MCP resources and the skills extension.
//!
//! A URI is `skill://{skill path}/{file path}`. The skill path is the skill's
//! name with a plugin skill's `plugin:skill` written `plugin/skill`, so its
//! last segment is the frontmatter name (`skill://document-skills/pdf/SKILL.md`).
//! Every segment is percent-encoded but for the unreserved characters
//! (letters, digits, `-._~`), so any name and any file name make a valid URI.
//!
//! Also here: whether a skill may be listed by `skills/list`. An entry
//! shows the skill's frontmatter exactly as written, and the skills
//! extension requires a `name` and a `description` there and holds names to
//! a rule the `skill` tool does not (lowercase letters, digits and single
//! hyphens, at most 64 characters); rmcp refuses a whole `skills/list` page
//! that holds one entry breaking it. So the server leaves out skills whose
//! frontmatter lacks either (the tool serves them with a name from the
//! folder, a description from the body), whose description is longer than
//! the specification allows, or whose name breaks the rule, and
//! `skillserve check` says which, both asking this module (and for names,
//! rmcp's own validator).

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use rmcp::model::{Skill as SpecSkill, SkillFrontmatter, SkillResources};

use crate::parse::{DescriptionFrom, NameFrom};
use crate::profiles::View;
use crate::skill::Skill;
use crate::spec;

/// The scheme, with its `//`.
pub const SCHEME: &str = "skill://";

/// The file every skill has, whatever its name on disk (`skill.md` counts).
pub const SKILL_MD: &str = "SKILL.md";

/// A URI longer than this is not looked up (a skill's files have paths of at
/// most 1 KiB; names are short).
pub const MAX_URI_BYTES: usize = 4096;

/// Everything but the unreserved characters of RFC 3986 is encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The URI of `rel`, a `/`-separated path inside the skill `name` ("" for the
/// skill folder itself: `skill://pdf`).
pub fn of(name: &str, rel: &str) -> String {
    // Sized once: a `skills/list` page makes a URI per file, and growing
    // the string as it was written cost a seventh of a cached page.
    let mut uri = String::with_capacity(SCHEME.len() + name.len() + 1 + rel.len());
    uri.push_str(SCHEME);
    push_segments(&mut uri, name, ':');
    if !rel.is_empty() {
        uri.push('/');
        push_segments(&mut uri, rel, '/');
    }
    uri
}

/// The URI of the skill's `SKILL.md`: the skill's own URI in the extension.
pub fn skill_md(name: &str) -> String {
    of(name, SKILL_MD)
}

/// `path`'s segments (split at `separator`) percent-encoded, joined by `/`.
fn push_segments(uri: &mut String, path: &str, separator: char) {
    for (i, segment) in path.split(separator).enumerate() {
        if i > 0 {
            uri.push('/');
        }
        uri.extend(utf8_percent_encode(segment, SEGMENT));
    }
}

/// The decoded path segments of a `skill://` URI, or `None` when it is not
/// one this server could have given out: another scheme (the scheme's case
/// does not matter), a query or fragment, a segment that does not decode to
/// UTF-8, or more than [`MAX_URI_BYTES`]. A trailing `/` is dropped
/// (`skill://pdf/references/` is the folder `references`). Decoding happens
/// here only: a `%2e%2e` segment comes out as `..`, which the file lookup
/// then refuses like any `..`.
pub fn segments(uri: &str) -> Option<Vec<String>> {
    if uri.len() > MAX_URI_BYTES || uri.contains(['?', '#']) {
        return None;
    }
    let (scheme, path) = uri.split_at_checked(SCHEME.len())?;
    if !scheme.eq_ignore_ascii_case(SCHEME) {
        return None;
    }
    let path = path.strip_suffix('/').unwrap_or(path);
    if path.is_empty() {
        return None;
    }
    path.split('/')
        .map(|segment| {
            percent_decode_str(segment)
                .decode_utf8()
                .ok()
                .map(|s| s.into_owned())
        })
        .collect()
}

/// The shown skill a URI points into, and the path inside its folder it
/// names ("" for the folder itself; the `SKILL.md` segment is returned as
/// is). The longest run of leading segments that is a skill's name wins, so
/// `skill://a/b/SKILL.md` is the skill `a:b` when there is one, else the file
/// `b/SKILL.md` of `a`. Names compare as the `skill` tool compares them
/// (case does not matter).
pub fn locate<'a>(view: &'a View, uri: &str) -> Option<(&'a Skill, String)> {
    let segments = segments(uri)?;
    (1..=segments.len()).rev().find_map(|n| {
        let name = segments[..n].join(":").to_lowercase();
        let skill = view.by_name(&name)?;
        Some((skill, segments[n..].join("/")))
    })
}

/// Why the skills extension cannot list a skill, and what would let it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlistable {
    pub why: String,
    pub fix: String,
}

/// Why the skills extension cannot list `skill`, or `None` when it can. Its
/// entry would carry the skill's `SKILL.md` URI and its frontmatter as
/// written, whose `name` and `description` must be text; the name must
/// follow the rule above (in rmcp's words when it does not) and equal the
/// URI's last segment.
pub fn unlistable(skill: &Skill) -> Option<Unlistable> {
    let parsed = &skill.parsed;
    let not_written = |why: &str, fix: String| {
        Some(Unlistable {
            why: format!("{why}, and an entry shows the frontmatter as written"),
            fix,
        })
    };
    match parsed.name_from {
        NameFrom::Frontmatter => {}
        NameFrom::Folder | NameFrom::Replaced => {
            return not_written(
                "its frontmatter has no usable `name`",
                format!("add `name: {}` to the frontmatter", skill.short_name()),
            );
        }
        NameFrom::Coerced => {
            return not_written(
                "its frontmatter `name` is not plain text (a number, or spaces around it)",
                format!("write it as `name: {}`", skill.short_name()),
            );
        }
    }
    match parsed.description_from {
        DescriptionFrom::Frontmatter => {}
        DescriptionFrom::Body => {
            return not_written(
                "its frontmatter has no `description`",
                "add a `description` that says what the skill does and when to use it".into(),
            );
        }
        DescriptionFrom::Coerced => {
            return not_written(
                "its frontmatter `description` is not text",
                "write the description as text (in quotes if it is a number)".into(),
            );
        }
    }
    // Counted as the extension counts (Unicode code points, as written).
    let chars = parsed.description.chars().count();
    if chars > spec::MAX_DESCRIPTION_CHARS {
        return Some(Unlistable {
            why: format!(
                "its description has {chars} characters, over the {} the Agent Skills specification allows",
                spec::MAX_DESCRIPTION_CHARS
            ),
            fix: format!(
                "keep the description to {} characters: what the skill does and when to use it",
                spec::MAX_DESCRIPTION_CHARS
            ),
        });
    }
    let name = parsed.name.as_ref();
    // Most names are plain lowercase ASCII: accepted without the Unicode
    // normalization rmcp's validator runs (a tenth of a cold `skills/list`
    // at 10,000 skills).
    if is_plain(name) && skill.short_name() == name {
        return None;
    }
    let frontmatter = SkillFrontmatter::new(name, "");
    let entry = SpecSkill::new(skill_md(&skill.name), frontmatter, SkillResources::Dynamic);
    entry.validate().err().map(|err| Unlistable {
        why: err.to_string(),
        fix: "name it with lowercase letters, digits and single hyphens, at most 64 characters, like its folder".into(),
    })
}

/// 1–64 lowercase ASCII letters, digits and single hyphens, not at either
/// end: names the extension's rule accepts as they are (a subset of what it
/// accepts, so a name this refuses is left to the full rule).
fn is_plain(name: &str) -> bool {
    (1..=spec::MAX_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths_become_encoded_segments() {
        assert_eq!(skill_md("pdf"), "skill://pdf/SKILL.md");
        assert_eq!(
            of("document-skills:pdf", "references/forms.md"),
            "skill://document-skills/pdf/references/forms.md"
        );
        assert_eq!(of("pdf", ""), "skill://pdf");
        assert_eq!(
            of("PDF Tools", "a b/ü#?.md"),
            "skill://PDF%20Tools/a%20b/%C3%BC%23%3F.md"
        );
    }

    #[test]
    fn segments_decode_and_refuse_what_is_not_ours() {
        let decoded = |uri| segments(uri).unwrap();
        assert_eq!(decoded("skill://pdf/SKILL.md"), ["pdf", "SKILL.md"]);
        assert_eq!(decoded("SKILL://pdf/references/"), ["pdf", "references"]);
        assert_eq!(
            decoded("skill://PDF%20Tools/a%20b/%C3%BC%23%3F.md"),
            ["PDF Tools", "a b", "ü#?.md"]
        );
        assert_eq!(decoded("skill://pdf/%2e%2e/x"), ["pdf", "..", "x"]);
        for bad in [
            "file:///etc/passwd",
            "skill://",
            "skill:///",
            "skill://pdf/SKILL.md?x",
            "skill://pdf/SKILL.md#x",
            "skill://pdf/%FF",
            "skil",
        ] {
            assert_eq!(segments(bad), None, "{bad}");
        }
        assert_eq!(segments(&format!("skill://{}", "a".repeat(5000))), None);
    }

    #[test]
    fn plain_names_are_names_the_extension_accepts() {
        let accepts = |name: &str| {
            let frontmatter = SkillFrontmatter::new(name, "");
            let uri = skill_md(name);
            SpecSkill::new(uri, frontmatter, SkillResources::Dynamic)
                .validate()
                .is_ok()
        };
        for name in [
            "pdf",
            "a",
            "a-b",
            "x1-2y",
            "0",
            "-a",
            "a-",
            "a--b",
            "A",
            "pdf_tools",
            "a b",
            "é",
            "",
            "a:b",
            "日本語",
        ] {
            if is_plain(name) {
                assert!(accepts(name), "{name:?}");
            }
        }
        assert!(is_plain(&"a".repeat(64)) && accepts(&"a".repeat(64)));
        assert!(!is_plain(&"a".repeat(65)) && !accepts(&"a".repeat(65)));
        // Left to the full rule, which accepts letters of other scripts.
        assert!(!is_plain("日本語") && accepts("日本語"));
    }

    #[test]
    fn every_uri_made_here_reads_back() {
        for (name, rel) in [
            ("pdf", "SKILL.md"),
            ("a:b", "x/y z/ü.md"),
            ("日本語", "%41.md"),
        ] {
            let mut expected: Vec<String> = name.split(':').map(str::to_owned).collect();
            expected.extend(rel.split('/').map(str::to_owned));
            assert_eq!(segments(&of(name, rel)).unwrap(), expected);
        }
    }
}
