//! Reading and parsing SKILL.md (design §4).
//!
//! Start-up cost must scale with the number of skills, not their size, so the
//! scan reads only as much of each file as the frontmatter needs
//! ([`read_frontmatter`]); the body is read when the skill is called
//! ([`read_skill_file`]). Nothing here opens anything that is not a regular file:
//! a FIFO named `SKILL.md` would otherwise hang the reader forever.
//!
//! The YAML inside the frontmatter is parsed with `gray_matter`'s YAML engine.
//! When that fails, the common hand-written mistake (an unquoted `: ` inside a
//! value) is repaired the way Claude Code does it and the parse retried; a skill
//! loaded that way carries a warning.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use gray_matter::Pod;
use gray_matter::engine::{Engine, YAML};
use serde_json::{Map, Value};

use crate::diagnostic::Finding;

/// The frontmatter of one SKILL.md, as the server needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The frontmatter `name`, or the folder name when it has none.
    pub name: String,
    /// Whether `name` came from the frontmatter (not the folder).
    pub name_given: bool,
    /// One line, whitespace collapsed; may be empty (with a warning).
    pub description: String,
    /// Every frontmatter key but `name` and `description` (kept above), as JSON
    /// values (numbers stay numbers).
    pub fields: Map<String, Value>,
    /// Characters in the frontmatter `description` as written (before it was
    /// put on one line), for the specification's length limit.
    pub description_chars: usize,
    /// Warnings about what had to be guessed or repaired.
    pub findings: Vec<Finding>,
}

/// Why a file could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("not a regular file")]
    NotRegular,
    #[error("file is {len} bytes, over the {max}-byte limit")]
    TooLarge { len: u64, max: u64 },
    #[error("not valid UTF-8 (line {line})")]
    InvalidUtf8 { line: usize },
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl ReadError {
    /// The diagnostic for a SKILL.md that could not be read.
    pub fn finding(&self) -> Finding {
        match self {
            ReadError::NotRegular => Finding::error(
                "not-a-file",
                "SKILL.md is not a regular file (a directory, FIFO or device)",
                "replace it with a regular Markdown file",
            ),
            ReadError::TooLarge { len, max } => Finding::error(
                "file-too-large",
                format!("file is {len} bytes, over the {max}-byte limit"),
                "move long material into references/ files, or raise --max-file-bytes",
            ),
            ReadError::InvalidUtf8 { line } => Finding::error(
                "invalid-utf8",
                "file is not valid UTF-8",
                "save the file as UTF-8",
            )
            .on_line(*line),
            ReadError::Io(err) => Finding::error(
                "unreadable",
                format!("cannot read the file: {err}"),
                "check the file's permissions",
            ),
        }
    }
}

/// Bytes read at first; most frontmatter fits in one read of this size.
const FIRST_READ: usize = 8 * 1024;
/// How much body text to have in hand when the description must come from it.
const BODY_FOR_DESCRIPTION: usize = 16 * 1024;
/// Descriptions taken from the body are cut to the agentskills.io maximum.
const MAX_FALLBACK_DESCRIPTION: usize = 1024;

/// Opens `path` for reading only if it is a regular file of at most `max` bytes.
///
/// The open is non-blocking so that a FIFO swapped in after the scan's `stat`
/// cannot block; the type is then checked on the open handle.
fn open_regular(path: &Path, max: u64) -> Result<(File, u64), ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > max {
        return Err(ReadError::TooLarge {
            len: meta.len(),
            max,
        });
    }
    Ok((file, meta.len()))
}

/// Reads `file` until `buf` holds `want` bytes or the file ends. Returns whether
/// it ended. Never reads more than `max + 1` bytes in total, so a file that grew
/// past the cap after it was opened is still caught. Reads into spare capacity:
/// nothing is zero-filled (that used to cost a 1 MiB memset per call).
fn fill(file: &mut File, buf: &mut Vec<u8>, want: usize, max: u64) -> Result<bool, ReadError> {
    let want = (want as u64).min(max.saturating_add(1));
    let ask = want.saturating_sub(buf.len() as u64);
    let got = file.by_ref().take(ask).read_to_end(buf)? as u64;
    if buf.len() as u64 > max {
        return Err(ReadError::TooLarge {
            len: buf.len() as u64,
            max,
        });
    }
    // Nothing more may be read (`ask == 0`) counts as the end: the caller must
    // not ask again.
    Ok(got < ask || ask == 0)
}

/// The whole SKILL.md as text: strict UTF-8, a leading BOM removed, everything
/// else (line endings, trailing spaces, tabs) exactly as on disk.
pub fn read_skill_file(path: &Path, max: u64) -> Result<String, ReadError> {
    let (mut file, len) = open_regular(path, max)?;
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    fill(&mut file, &mut buf, usize::MAX, max)?;
    let mut text = String::from_utf8(buf).map_err(|e| {
        let bytes = e.as_bytes();
        ReadError::InvalidUtf8 {
            line: line_of(bytes, e.utf8_error().valid_up_to()),
        }
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Reads the frontmatter of `path` (and, only when the description must come
/// from it, the start of the body). `folder` is the skill folder's name, the
/// fallback for a missing `name`.
pub fn read_frontmatter(path: &Path, folder: &str, max: u64) -> Result<Parsed, Finding> {
    let (mut file, _) = open_regular(path, max).map_err(|e| e.finding())?;
    let mut buf = Vec::with_capacity(FIRST_READ);
    let mut want = FIRST_READ;
    loop {
        let eof = fill(&mut file, &mut buf, want, max).map_err(|e| e.finding())?;
        let text = valid_prefix(&buf, eof).map_err(|e| e.finding())?;
        match parse_prefix(text, eof, folder) {
            Step::Done(result) => return result,
            Step::NeedMore => want = want.saturating_mul(4),
        }
    }
}

/// Parses a complete SKILL.md held in memory.
pub fn parse_text(text: &str, folder: &str) -> Result<Parsed, Finding> {
    match parse_prefix(text, true, folder) {
        Step::Done(result) => result,
        Step::NeedMore => unreachable!("a complete text never needs more input"),
    }
}

/// The longest valid UTF-8 prefix of `buf`. An incomplete character at the end
/// is fine while more is to come; any other invalid byte is an error.
fn valid_prefix(buf: &[u8], eof: bool) -> Result<&str, ReadError> {
    match std::str::from_utf8(buf) {
        Ok(text) => Ok(text),
        Err(e) if e.error_len().is_none() && !eof => {
            // Safe to unwrap: `valid_up_to` is by definition a valid prefix.
            Ok(std::str::from_utf8(&buf[..e.valid_up_to()]).unwrap())
        }
        Err(e) => Err(ReadError::InvalidUtf8 {
            line: line_of(buf, e.valid_up_to()),
        }),
    }
}

/// 1-based line number of byte `offset`.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count()
}

enum Step {
    Done(Result<Parsed, Finding>),
    NeedMore,
}

/// The frontmatter's YAML starts on the line after the opening `---`.
const YAML_FIRST_LINE: usize = 2;

/// Where the frontmatter is in a text.
enum Split<'a> {
    /// The first line is not `---`.
    Missing { body: &'a str },
    /// `---` opens a block that never closes (within the text seen so far).
    Unterminated,
    /// The YAML between the delimiters (it starts on line 2) and the rest.
    Found { yaml: &'a str, body: &'a str },
}

fn is_delimiter(line: &str) -> bool {
    line.trim_end() == "---"
}

/// Finds the frontmatter. `complete` says whether `text` is the whole file:
/// a `---` at the very end of a partial read may be the start of `----x`.
fn split(text: &str, complete: bool) -> Split<'_> {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Split::Missing { body: text };
    };
    if !is_delimiter(first) {
        return Split::Missing { body: text };
    }
    if !first.ends_with('\n') && !complete {
        return Split::Unterminated;
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    for line in lines {
        // A delimiter must end with a newline, or end the whole file.
        let whole_line = line.ends_with('\n') || (complete && offset + line.len() == text.len());
        if whole_line && is_delimiter(line) {
            return Split::Found {
                yaml: &text[yaml_start..offset],
                body: &text[offset + line.len()..],
            };
        }
        offset += line.len();
    }
    Split::Unterminated
}

fn parse_prefix(text: &str, complete: bool, folder: &str) -> Step {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (yaml, body, mut findings) = match split(text, complete) {
        Split::Unterminated if !complete => return Step::NeedMore,
        Split::Unterminated => {
            return Step::Done(Err(Finding::error(
                "frontmatter-unterminated",
                "the frontmatter opened by `---` on line 1 is never closed",
                "add a line `---` after the last frontmatter key",
            )
            .on_line(1)));
        }
        Split::Missing { body } => {
            if complete && body.trim().is_empty() {
                return Step::Done(Err(Finding::error(
                    "empty-file",
                    "SKILL.md is empty",
                    "add frontmatter with `name` and `description`, then the instructions",
                )));
            }
            let warning = Finding::warning(
                "frontmatter-missing",
                "no YAML frontmatter; using the folder name and the first paragraph",
                "start the file with `---`, `name: ...`, `description: ...`, `---`",
            );
            ("", body, vec![warning])
        }
        Split::Found { yaml, body } => (yaml, body, Vec::new()),
    };

    let has_frontmatter = findings.is_empty();
    let fields = match parse_yaml(yaml, YAML_FIRST_LINE) {
        Ok((fields, repaired)) => {
            if let Some(warning) = repaired {
                findings.push(warning);
            }
            fields
        }
        Err(finding) => return Step::Done(Err(finding)),
    };

    // `name` and `description` are kept once, in their own fields: a map
    // holding either would cost a map node per skill (~600 bytes).
    let mut fields = fields;
    let raw_name = fields.remove("name");
    let mut name_given = false;
    let name = match raw_name.as_ref().map(scalar) {
        None | Some(Scalar::Null) => folder.to_owned(),
        Some(Scalar::Text(name)) => {
            let name = name.trim();
            if name.is_empty() {
                findings.push(name_fallback("`name` is empty"));
                folder.to_owned()
            } else if name.chars().any(char::is_control) {
                findings.push(name_fallback(
                    "`name` contains a line break or control character",
                ));
                folder.to_owned()
            } else {
                name_given = true;
                name.to_owned()
            }
        }
        Some(Scalar::Structured) => {
            findings.push(name_fallback("`name` is a list or map, not a string"));
            folder.to_owned()
        }
    };

    let raw_description = fields.remove("description");
    if fields.is_empty() {
        // An emptied map still holds its node; most skills have no other keys.
        fields = Map::new();
    }
    let description_chars = match &raw_description {
        Some(Value::String(text)) => text.trim().chars().count(),
        _ => 0,
    };
    let mut structured = false;
    let description = match raw_description.as_ref().map(scalar) {
        Some(Scalar::Text(text)) => one_line(&text),
        Some(Scalar::Structured) => {
            findings.push(Finding::warning(
                "description-not-text",
                "`description` is a list or map, not a string; using the first paragraph",
                "write the description as one string",
            ));
            structured = true;
            String::new()
        }
        None | Some(Scalar::Null) => String::new(),
    };
    let description = if description.is_empty() {
        if !complete && body.len() < BODY_FOR_DESCRIPTION {
            return Step::NeedMore;
        }
        let fallback = first_paragraph(body);
        // `frontmatter-missing` or `description-not-text` already said so.
        if has_frontmatter && !structured {
            findings.push(Finding::warning(
                "description-missing",
                if fallback.is_empty() {
                    "no `description` (the spec requires one), and no paragraph in the body to use instead"
                } else {
                    "no `description` (the spec requires one); using the first paragraph of the body"
                },
                "add a `description` that says what the skill does and when to use it",
            ));
        }
        fallback
    } else {
        description
    };

    Step::Done(Ok(Parsed {
        name,
        name_given,
        description,
        fields,
        description_chars,
        findings,
    }))
}

fn name_fallback(what: &str) -> Finding {
    Finding::warning(
        "name-fallback",
        format!("{what}; using the folder name"),
        "set `name` to the skill's name, e.g. `name: pdf-tools`",
    )
}

/// Parses the YAML of a frontmatter block into a JSON map. Returns the map and,
/// when the YAML needed repairing, a warning that says so.
fn parse_yaml(
    yaml: &str,
    yaml_line: usize,
) -> Result<(Map<String, Value>, Option<Finding>), Finding> {
    if yaml.trim().is_empty() {
        return Ok((Map::new(), None));
    }
    let first_error = match YAML::parse(yaml) {
        Ok(pod) => return mapping(pod, yaml_line).map(|m| (m, None)),
        Err(err) => err,
    };
    let (message, line) = describe_yaml_error(&first_error, yaml_line, yaml.lines().count());
    if let Some(repaired) = repair_yaml(yaml)
        && let Ok(pod) = YAML::parse(&repaired)
    {
        let fields = mapping(pod, yaml_line)?;
        let warning = Finding::warning(
            "yaml-recovered",
            format!("invalid YAML ({message}); loaded after quoting values that contain `: `"),
            "put values that contain `: ` in quotes, e.g. description: \"Use when: ...\"",
        );
        return Ok((fields, Some(warning.on_line(line))));
    }
    Err(Finding::error(
        "yaml-invalid",
        format!("the frontmatter is not valid YAML: {message}"),
        "fix the YAML; quote values that contain `: `, `#` or start with a special character",
    )
    .on_line(line))
}

/// The YAML engine's message without its position, and the 1-based file line.
fn describe_yaml_error(
    err: &gray_matter::Error,
    yaml_line: usize,
    yaml_lines: usize,
) -> (String, usize) {
    let text = match err {
        gray_matter::Error::DeserializeError(text) => text.clone(),
        other => other.to_string(),
    };
    // yaml-rust2 formats errors as "<info> at byte B line L column C", L 1-based.
    let line = text
        .split(" line ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<usize>().ok());
    let message = match text.find(" at byte ") {
        Some(pos) => text[..pos].to_owned(),
        None => text,
    };
    // The engine may notice a problem only at the end of the input; point at
    // the last YAML line rather than at the closing `---`.
    let last = yaml_line + yaml_lines.saturating_sub(1);
    let line = line.map_or(yaml_line, |l| (yaml_line + l.saturating_sub(1)).min(last));
    (message, line)
}

fn mapping(pod: Pod, yaml_line: usize) -> Result<Map<String, Value>, Finding> {
    match json(pod) {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        _ => Err(Finding::error(
            "frontmatter-not-a-map",
            "the frontmatter is not a set of `key: value` lines",
            "write the frontmatter as `name: ...` and `description: ...` lines",
        )
        .on_line(yaml_line)),
    }
}

fn json(pod: Pod) -> Value {
    match pod {
        Pod::Null => Value::Null,
        Pod::String(s) => Value::String(s),
        Pod::Integer(i) => Value::from(i),
        Pod::Float(f) => serde_json::Number::from_f64(f)
            .map_or_else(|| Value::String(f.to_string()), Value::Number),
        Pod::Boolean(b) => Value::Bool(b),
        Pod::Array(items) => Value::Array(items.into_iter().map(json).collect()),
        Pod::Hash(map) => Value::Object(map.into_iter().map(|(k, v)| (k, json(v))).collect()),
    }
}

enum Scalar {
    Null,
    Text(String),
    Structured,
}

/// Strings as they are; numbers and booleans coerced to their text (design §4).
fn scalar(value: &Value) -> Scalar {
    match value {
        Value::Null => Scalar::Null,
        Value::String(s) => Scalar::Text(s.clone()),
        Value::Number(n) => Scalar::Text(n.to_string()),
        Value::Bool(b) => Scalar::Text(b.to_string()),
        Value::Array(_) | Value::Object(_) => Scalar::Structured,
    }
}

/// Collapses every run of whitespace (including line breaks) to one space and
/// drops other control characters, which have no business in a one-line text
/// that ends up in a terminal or a model's context.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().filter(|c| !c.is_control()));
    }
    out
}

/// The first paragraph of Markdown text that is not a heading or code, on one
/// line; the first heading's text when there is no such paragraph.
fn first_paragraph(body: &str) -> String {
    let mut paragraph = String::new();
    let mut heading = None;
    let mut in_fence = false;
    for line in body.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            if !paragraph.is_empty() {
                break;
            }
            continue;
        }
        if in_fence {
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            if !paragraph.is_empty() {
                break;
            }
            if heading.is_none() && trimmed.starts_with('#') {
                heading = Some(trimmed.trim_start_matches('#').trim());
            }
            continue;
        }
        paragraph.push(' ');
        paragraph.push_str(trimmed);
    }
    let text = if paragraph.is_empty() {
        one_line(heading.unwrap_or(""))
    } else {
        one_line(&paragraph)
    };
    match text.char_indices().nth(MAX_FALLBACK_DESCRIPTION) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text,
    }
}

/// Quotes top-level values that hold `: ` (or another character that turns a
/// plain scalar into something else) so that `description: Use when: X` reads as
/// the author meant. Indented continuation lines of such a value are folded
/// into it. Returns `None` when nothing needed quoting.
fn repair_yaml(yaml: &str) -> Option<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out = String::with_capacity(yaml.len() + 16);
    let mut changed = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some((key, value)) = top_level_pair(line)
            && needs_quotes(value)
        {
            let mut full = value.trim().to_owned();
            let mut next = i + 1;
            while let Some(cont) = lines.get(next) {
                if cont.trim().is_empty() || !cont.starts_with([' ', '\t']) {
                    break;
                }
                full.push(' ');
                full.push_str(cont.trim());
                next += 1;
            }
            out.push_str(key);
            out.push_str(": \"");
            for c in full.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '"' => out.push_str("\\\""),
                    _ => out.push(c),
                }
            }
            out.push_str("\"\n");
            changed = true;
            i = next;
            continue;
        }
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    changed.then_some(out)
}

/// `key: value` on a line that starts at column 0, with a simple key.
fn top_level_pair(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let rest = &line[colon + 1..];
    if !simple || !rest.starts_with([' ', '\t']) {
        return None;
    }
    let value = rest.trim();
    (!value.is_empty()).then_some((key, value))
}

fn needs_quotes(value: &str) -> bool {
    if value.starts_with(['"', '\'', '|', '>', '[', '{']) {
        return false;
    }
    value.contains(": ")
        || value.contains(" #")
        || value.ends_with(':')
        || value.starts_with(['*', '&', '!', '%', '@', '`', ',', '?'])
        || value.starts_with("- ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;

    fn parse(text: &str) -> Parsed {
        parse_text(text, "folder").expect("parses")
    }

    #[test]
    fn name_and_description_from_frontmatter() {
        let p = parse("---\nname: pdf\ndescription: Read  and\n  write PDFs\n---\n# PDF\n");
        assert_eq!(p.name, "pdf");
        assert_eq!(p.description, "Read and write PDFs");
        assert!(p.findings.is_empty());
    }

    #[test]
    fn crlf_and_bom_are_accepted() {
        let p = parse("\u{feff}---\r\nname: x\r\ndescription: y z\r\n---\r\nbody\r\n");
        assert_eq!((p.name.as_str(), p.description.as_str()), ("x", "y z"));
    }

    #[test]
    fn numbers_are_coerced_to_text() {
        let p = parse("---\nname: 123\ndescription: 4.5\n---\n");
        assert_eq!((p.name.as_str(), p.description.as_str()), ("123", "4.5"));
    }

    #[test]
    fn missing_name_falls_back_to_the_folder() {
        let p = parse("---\ndescription: d\n---\n");
        assert_eq!(p.name, "folder");
        assert!(p.findings.is_empty());
    }

    #[test]
    fn structured_name_falls_back_with_a_warning() {
        let p = parse("---\nname: [a, b]\ndescription: d\n---\n");
        assert_eq!(p.name, "folder");
        assert_eq!(p.findings[0].code, "name-fallback");
    }

    #[test]
    fn missing_description_uses_the_first_paragraph() {
        let p = parse("---\nname: x\n---\n# Title\n\nFirst  line\nsecond line.\n\nLater.\n");
        assert_eq!(p.description, "First line second line.");
        assert_eq!(p.findings[0].code, "description-missing");
        assert_eq!(p.findings[0].severity, Severity::Warning);
    }

    #[test]
    fn no_frontmatter_uses_folder_and_paragraph() {
        let p = parse("Just instructions.\n");
        assert_eq!(
            (p.name.as_str(), p.description.as_str()),
            ("folder", "Just instructions.")
        );
        assert_eq!(p.findings.len(), 1);
        assert_eq!(p.findings[0].code, "frontmatter-missing");
    }

    #[test]
    fn unquoted_colon_is_recovered_with_a_warning() {
        let p = parse("---\nname: x\ndescription: Use when: the user asks\n---\n");
        assert_eq!(p.description, "Use when: the user asks");
        assert_eq!(p.findings[0].code, "yaml-recovered");
        assert_eq!(p.findings[0].line, Some(3));
    }

    #[test]
    fn recovery_folds_continuation_lines() {
        let p = parse(
            "---\nname: x\ndescription: Do this: that\n  and more \"quoted\"\nlicense: MIT\n---\n",
        );
        assert_eq!(p.description, "Do this: that and more \"quoted\"");
        assert_eq!(p.fields["license"], "MIT");
    }

    #[test]
    fn broken_yaml_is_an_error_with_a_line() {
        let err = parse_text("---\nname: x\ndescription: [unclosed\n---\n", "f").unwrap_err();
        assert_eq!(err.code, "yaml-invalid");
        assert_eq!(err.severity, Severity::Error);
        assert_eq!(err.line, Some(3), "{err:?}");
    }

    #[test]
    fn unterminated_frontmatter_is_an_error() {
        let err = parse_text("---\nname: x\n", "f").unwrap_err();
        assert_eq!(err.code, "frontmatter-unterminated");
    }

    #[test]
    fn empty_file_is_an_error() {
        assert_eq!(parse_text("", "f").unwrap_err().code, "empty-file");
        assert_eq!(parse_text(" \n\n", "f").unwrap_err().code, "empty-file");
    }

    #[test]
    fn non_mapping_frontmatter_is_an_error() {
        assert_eq!(
            parse_text("---\n- a\n- b\n---\n", "f").unwrap_err().code,
            "frontmatter-not-a-map"
        );
    }

    #[test]
    fn control_characters_in_name_fall_back() {
        let p = parse("---\nname: \"a\\u0007b\"\ndescription: d\n---\n");
        assert_eq!(p.name, "folder");
    }

    #[test]
    fn control_characters_are_dropped_from_descriptions() {
        let p = parse("---\nname: x\ndescription: \"red \\e[31mtext\\u0007\"\n---\n");
        assert_eq!(p.description, "red [31mtext");
    }

    #[test]
    fn structured_description_warns_once() {
        let p = parse("---\nname: x\ndescription: [a]\n---\nBody.\n");
        assert_eq!(p.description, "Body.");
        assert_eq!(p.findings.len(), 1);
        assert_eq!(p.findings[0].code, "description-not-text");
    }

    #[test]
    fn other_keys_are_kept() {
        let p = parse("---\nname: x\ndescription: d\nmetadata:\n  a: b\nversion: 2\n---\n");
        assert_eq!(p.fields["metadata"]["a"], "b");
        assert_eq!(p.fields["version"], 2);
        assert!(!p.fields.contains_key("name") && !p.fields.contains_key("description"));
    }

    #[test]
    fn delimiter_needs_its_own_line() {
        // `---x` is not a delimiter; the block stays open.
        assert!(parse_text("---\nname: x\n---x\n", "f").is_err());
        // A closing delimiter at the very end of the text counts.
        assert_eq!(parse("---\nname: x\ndescription: d\n---").name, "x");
    }

    #[test]
    fn reads_only_the_frontmatter_of_a_large_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        let mut text = String::from("---\nname: big\ndescription: d\n---\n");
        text.push_str(&"x".repeat(100_000));
        text.push('\u{ff}'); // still valid UTF-8 (ÿ), checked at call time
        std::fs::write(&path, &text).unwrap();
        let p = read_frontmatter(&path, "big", 1 << 20).unwrap();
        assert_eq!(p.name, "big");
        assert_eq!(read_skill_file(&path, 1 << 20).unwrap(), text);
    }

    #[test]
    fn a_delimiter_cut_by_the_first_read_is_not_taken_for_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        // `---` ends exactly at the first read's boundary, followed by `x`.
        let mut text = String::from("---\nname: x\ndescription: d\nnotes: |\n");
        while text.len() < FIRST_READ - 4 {
            text.push_str("  pad\n");
        }
        text.truncate(FIRST_READ - 4);
        text.push_str("\n---x: 1\n---\nbody\n");
        std::fs::write(&path, &text).unwrap();
        let whole = parse_text(&text, "x").expect("`---x: 1` is a key, not a delimiter");
        assert_eq!(whole.fields["---x"], 1);
        assert_eq!(read_frontmatter(&path, "x", 1 << 20).unwrap(), whole);
    }

    #[test]
    fn invalid_utf8_reports_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        std::fs::write(&path, b"---\nname: x\ndescription: \xff\n---\n").unwrap();
        let err = read_frontmatter(&path, "x", 1 << 20).unwrap_err();
        assert_eq!((err.code, err.line), ("invalid-utf8", Some(3)));
    }

    #[test]
    fn size_cap_is_enforced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        std::fs::write(&path, "---\nname: x\ndescription: d\n---\nbody\n").unwrap();
        let err = read_frontmatter(&path, "x", 10).unwrap_err();
        assert_eq!(err.code, "file-too-large");
        assert!(matches!(
            read_skill_file(&path, 10),
            Err(ReadError::TooLarge { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo only reads the NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        assert_eq!(
            read_frontmatter(&path, "x", 1 << 20).unwrap_err().code,
            "not-a-file"
        );
        assert!(matches!(
            read_skill_file(&path, 1 << 20),
            Err(ReadError::NotRegular)
        ));
    }
}
