//! Parsing SKILL.md (behaviour.md §4).
//!
//! Start-up cost must scale with the number of skills, not their size, so the
//! scan reads only as much of each file as the frontmatter needs
//! ([`read_frontmatter`]); the body is read when the skill is called.
//!
//! The YAML inside the frontmatter is parsed with `gray_matter`'s YAML engine,
//! unless it is only `key: text` lines, which [`flat`] reads itself (most
//! frontmatters; the engine was a third of start-up).
//! When that fails, the common hand-written mistake (an unquoted `: ` inside a
//! value) is repaired the way Claude Code does it and the parse retried; a skill
//! loaded that way carries a warning.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use gray_matter::Pod;
use gray_matter::engine::{Engine, YAML};
use serde_json::{Map, Value};

use crate::diagnostic::{Code, Finding};
use crate::disk::{self, ReadError};

mod flat;

/// The frontmatter of one SKILL.md, as the server needs it.
///
/// One per skill, so kept to 48 bytes and the texts: what most skills lack
/// (other keys, warnings) sits behind one pointer.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The frontmatter `name`, or the folder name when it has none (shared
    /// with the skill's name when no plugin prefixes it).
    pub name: Arc<str>,
    /// The frontmatter `description` exactly as YAML gives it (a `|` block
    /// keeps its line breaks, a `>` block is folded as YAML folds it), or the
    /// first paragraph of the body when the frontmatter has no usable one;
    /// may be empty (with a warning). Shown on one line:
    /// [`Parsed::one_line_description`].
    pub description: Box<str>,
    /// Where `name` came from.
    pub name_from: NameFrom,
    /// Where `description` came from.
    pub description_from: DescriptionFrom,
    more: Option<Box<More>>,
}

/// The rest of a frontmatter, when there is any.
#[derive(Clone, Debug, PartialEq, Default)]
struct More {
    fields: Map<String, Value>,
    findings: Vec<Finding>,
}

impl Parsed {
    /// A parse with a name and a description, without other keys or
    /// warnings (see [`Parsed::with_fields`], [`Parsed::with_findings`]).
    pub fn new(
        name: impl Into<Arc<str>>,
        name_from: NameFrom,
        description: impl Into<Box<str>>,
        description_from: DescriptionFrom,
    ) -> Parsed {
        Parsed {
            name: name.into(),
            description: description.into(),
            name_from,
            description_from,
            more: None,
        }
    }

    /// The same with these other frontmatter keys.
    pub fn with_fields(mut self, fields: Map<String, Value>) -> Parsed {
        if !fields.is_empty() {
            self.more.get_or_insert_default().fields = fields;
        }
        self
    }

    /// The same with these warnings.
    pub fn with_findings(mut self, findings: Vec<Finding>) -> Parsed {
        if !findings.is_empty() {
            self.more.get_or_insert_default().findings = findings;
        }
        self
    }

    /// Every frontmatter key but `name` and `description` (kept apart), as
    /// JSON values (numbers stay numbers).
    pub fn fields(&self) -> &Map<String, Value> {
        static NONE: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        match &self.more {
            Some(more) => &more.fields,
            None => NONE.get_or_init(Map::new),
        }
    }

    /// Warnings about what had to be guessed or repaired.
    pub fn findings(&self) -> &[Finding] {
        self.more.as_deref().map_or(&[], |more| &more.findings)
    }

    /// The description on one line, whitespace collapsed, control characters
    /// dropped: what listings, prompts and the tool description show.
    pub fn one_line_description(&self) -> Cow<'_, str> {
        one_line_cow(&self.description)
    }

    /// Characters in the frontmatter `description` as written (0 when the
    /// frontmatter has no text there), for the specification's length limit.
    pub fn description_chars(&self) -> usize {
        match self.description_from {
            DescriptionFrom::Frontmatter => self.description.trim().chars().count(),
            DescriptionFrom::Coerced | DescriptionFrom::Body => 0,
        }
    }

    /// Whether `name` and `description` are the frontmatter's own strings,
    /// exactly as YAML gives them: only then can the frontmatter be shown as
    /// it is written (the MCP skills extension's entries).
    pub fn is_verbatim(&self) -> bool {
        self.name_from == NameFrom::Frontmatter
            && self.description_from == DescriptionFrom::Frontmatter
    }
}

/// Where a skill's name came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameFrom {
    /// The frontmatter `name`, a string, as written.
    Frontmatter,
    /// The frontmatter `name`, but not a string as written: a number or a
    /// boolean as text, or a quoted string with spaces around it, trimmed.
    Coerced,
    /// The folder name: the frontmatter has no `name`.
    Folder,
    /// The folder name, because the frontmatter `name` was unusable (empty, a
    /// list); a `name-fallback` warning says so.
    Replaced,
}

impl NameFrom {
    /// Whether the name is the folder's (or the plugin's), so that it
    /// changes with the folder.
    pub fn is_fallback(self) -> bool {
        matches!(self, NameFrom::Folder | NameFrom::Replaced)
    }
}

/// Where a skill's description came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescriptionFrom {
    /// The frontmatter `description`, a string.
    Frontmatter,
    /// The frontmatter `description`, a number or a boolean, as text.
    Coerced,
    /// The first paragraph of the body: the frontmatter has no usable
    /// `description` (a warning says so).
    Body,
}

/// Why a SKILL.md yields no skill.
#[derive(Debug)]
pub enum ParseError {
    /// The file could not be read.
    Read(ReadError),
    /// The file was read, but its frontmatter is unusable.
    Invalid(Finding),
}

impl ParseError {
    /// The diagnostic that says what is wrong.
    pub fn finding(&self) -> Finding {
        match self {
            ParseError::Read(err) => err.finding(),
            ParseError::Invalid(finding) => finding.clone(),
        }
    }

    /// Whether the failure may pass without the file being edited (a
    /// permission problem, say): such a result must not be reused while the
    /// file looks unchanged, since fixing permissions changes the file's
    /// version only on file systems that keep an inode change time.
    pub fn is_passing(&self) -> bool {
        matches!(self, ParseError::Read(err) if err.is_passing())
    }
}

impl From<ReadError> for ParseError {
    fn from(err: ReadError) -> Self {
        ParseError::Read(err)
    }
}

/// Bytes read at first; most frontmatter fits in one read of this size.
const FIRST_READ: usize = 8 * 1024;
/// How much body text to have in hand when the description must come from it.
const BODY_FOR_DESCRIPTION: usize = 16 * 1024;
/// Descriptions taken from the body are cut to the agentskills.io maximum.
const MAX_FALLBACK_DESCRIPTION: usize = 1024;

/// Reads the frontmatter of `path` (and, only when the description must come
/// from it, the start of the body). `folder` is the skill folder's name, the
/// fallback for a missing `name`.
pub fn read_frontmatter(path: &Path, folder: &str, max: u64) -> Result<Parsed, ParseError> {
    let (file, len) = disk::open_regular(path, max)?;
    read_frontmatter_from(file, len, folder, max)
}

/// [`read_frontmatter`] of a file already open (through the gate), `len`
/// bytes when it was opened.
pub fn read_frontmatter_from(
    mut file: std::fs::File,
    len: u64,
    folder: &str,
    max: u64,
) -> Result<Parsed, ParseError> {
    if len > max {
        return Err(ReadError::TooLarge { len, max }.into());
    }
    let mut buf = Vec::with_capacity(FIRST_READ);
    let mut want = FIRST_READ;
    loop {
        let eof = disk::fill(&mut file, &mut buf, want, max)?;
        let text = valid_prefix(&buf, eof)?;
        match parse_prefix(text, eof, folder) {
            Step::Done(result) => return result.map_err(ParseError::Invalid),
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

/// Whether a whole SKILL.md text starts with a frontmatter block: a file
/// without one is not a skill (behaviour.md §12), also when it lost it after
/// the scan.
pub fn has_frontmatter(text: &str) -> bool {
    matches!(split(text, true), Split::Found { .. })
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
            line: disk::line_of(buf, e.valid_up_to()),
        }),
    }
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

/// Parses `text`, the start of a SKILL.md (all of it when `complete`), in
/// four steps: find the frontmatter, parse its YAML, take the name, take the
/// description (from the body when the frontmatter has none).
fn parse_prefix(text: &str, complete: bool, folder: &str) -> Step {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (yaml, body) = match locate(text, complete) {
        Located::Frontmatter { yaml, body } => (yaml, body),
        Located::Done(step) => return step,
    };
    let (mut fields, mut findings) = match parse_yaml(yaml, YAML_FIRST_LINE) {
        Ok((fields, repaired)) => (fields, repaired.into_iter().collect()),
        Err(finding) => return Step::Done(Err(finding)),
    };
    // `name` and `description` are kept once, in their own fields: a map
    // holding either would cost a map node per skill (~600 bytes).
    let (name, name_from) = match take_name(&mut fields, folder, &mut findings) {
        Ok(name) => name,
        Err(finding) => return Step::Done(Err(finding)),
    };
    let raw_description = fields.remove("description");
    let (description, description_from) = match description_or_body(raw_description, body, complete)
    {
        Some(Description::Given(text, from)) => (text, from),
        Some(Description::FromBody { text, why }) => {
            findings.push(why.finding(text.is_empty()));
            (text, DescriptionFrom::Body)
        }
        None => return Step::NeedMore,
    };
    Step::Done(Ok(Parsed::new(
        name,
        name_from,
        description,
        description_from,
    )
    .with_fields(fields)
    .with_findings(findings)))
}

/// What the first step found.
enum Located<'a> {
    Frontmatter {
        yaml: &'a str,
        body: &'a str,
    },
    /// Nothing more to do: an error, or more input needed.
    Done(Step),
}

fn locate(text: &str, complete: bool) -> Located<'_> {
    match split(text, complete) {
        Split::Found { yaml, body } => Located::Frontmatter { yaml, body },
        Split::Unterminated if !complete => Located::Done(Step::NeedMore),
        Split::Unterminated => Located::Done(Step::Done(Err(Finding::error(
            Code::FrontmatterUnterminated,
            "the frontmatter opened by `---` on line 1 is never closed",
            "add a line `---` after the last frontmatter key",
        )
        .on_line(1)))),
        Split::Missing { body } if complete && body.trim().is_empty() => {
            Located::Done(Step::Done(Err(Finding::error(
                Code::EmptyFile,
                "SKILL.md is empty",
                "add frontmatter with `name` and `description`, then the instructions",
            ))))
        }
        // Not a skill (behaviour.md §12): taking a name and a description from
        // any file named SKILL.md would put the first lines of whatever it is
        // into the tool description.
        Split::Missing { body } if complete && link_as_text(body).is_some() => {
            let target = link_as_text(body).unwrap_or_default();
            Located::Done(Step::Done(Err(Finding::error(
                Code::SymlinkAsText,
                format!(
                    "SKILL.md holds only `{}`: a symbolic link that git checked out as a text file (`core.symlinks` is false, as on Windows by default), so this skill is not served",
                    target
                ),
                LINK_AS_TEXT_FIX,
            )
            .on_line(1))))
        }
        Split::Missing { .. } => Located::Done(Step::Done(Err(ReadError::NoFrontmatter
            .finding()
            .on_line(1)))),
    }
}

/// Removes `name` from `fields` and returns the skill's name and where it
/// came from (the folder name when `name` is missing or unusable). A name with
/// a control character is an error: it would break the one-line listing.
fn take_name(
    fields: &mut Map<String, Value>,
    folder: &str,
    findings: &mut Vec<Finding>,
) -> Result<(String, NameFrom), Finding> {
    let raw = fields.remove("name");
    let problem = match raw.as_ref().map(scalar) {
        None | Some(Scalar::Null) => return Ok((folder.to_owned(), NameFrom::Folder)),
        Some(Scalar::Text(name)) => {
            let written = name.as_str();
            let name = name.trim();
            if name.chars().any(char::is_control) {
                return Err(Finding::error(
                    Code::NameControl,
                    "`name` contains a line break or control character, so the skill is skipped",
                    "set `name` to one line of plain text, e.g. `name: pdf-tools`",
                )
                .on_line(YAML_FIRST_LINE));
            }
            if !name.is_empty() {
                let from = if matches!(raw, Some(Value::String(_))) && written == name {
                    NameFrom::Frontmatter
                } else {
                    NameFrom::Coerced
                };
                return Ok((name.to_owned(), from));
            }
            "`name` is empty"
        }
        Some(Scalar::Structured) => "`name` is a list or map, not a string",
    };
    findings.push(Finding::warning(
        Code::NameFallback,
        format!("{problem}; using the folder name"),
        "set `name` to the skill's name, e.g. `name: pdf-tools`",
    ));
    Ok((folder.to_owned(), NameFrom::Replaced))
}

/// A skill's description, and where it came from.
enum Description {
    Given(String, DescriptionFrom),
    FromBody { text: String, why: NoDescription },
}

/// Why the description came from the body.
#[derive(Clone, Copy)]
enum NoDescription {
    Missing,
    NotText,
}

impl NoDescription {
    fn finding(self, body_is_empty: bool) -> Finding {
        match self {
            NoDescription::NotText => Finding::warning(
                Code::DescriptionNotText,
                "`description` is a list or map, not a string; using the first paragraph",
                "write the description as one string",
            ),
            NoDescription::Missing => Finding::warning(
                Code::DescriptionMissing,
                if body_is_empty {
                    "no `description` (the spec requires one), and no paragraph in the body to use instead"
                } else {
                    "no `description` (the spec requires one); using the first paragraph of the body"
                },
                "add a `description` that says what the skill does and when to use it",
            ),
        }
    }
}

/// The description as written, or the first paragraph of `body` when there
/// is none; `None` when the body seen so far is too short to tell.
fn description_or_body(raw: Option<Value>, body: &str, complete: bool) -> Option<Description> {
    let why = match raw {
        Some(Value::String(text)) if !text.trim().is_empty() => {
            return Some(Description::Given(text, DescriptionFrom::Frontmatter));
        }
        Some(other) => match scalar(&other) {
            Scalar::Text(text) if !text.trim().is_empty() => {
                return Some(Description::Given(text, DescriptionFrom::Coerced));
            }
            Scalar::Structured => NoDescription::NotText,
            Scalar::Text(_) | Scalar::Null => NoDescription::Missing,
        },
        None => NoDescription::Missing,
    };
    if !complete && body.len() < BODY_FOR_DESCRIPTION {
        return None;
    }
    Some(Description::FromBody {
        text: first_paragraph(body),
        why,
    })
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
    if let Some(fields) = flat::mapping(yaml) {
        debug_assert_eq!(
            YAML::parse(yaml).ok().map(|pod| mapping(pod, yaml_line)),
            Some(Ok(fields.clone())),
            "{yaml:?}"
        );
        return Ok((fields, None));
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
            Code::YamlRecovered,
            format!("invalid YAML ({message}); loaded after quoting values that contain `: `"),
            "put values that contain `: ` in quotes, e.g. description: \"Use when: ...\"",
        );
        return Ok((fields, Some(warning.on_line(line))));
    }
    Err(Finding::error(
        Code::YamlInvalid,
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
            Code::FrontmatterNotAMap,
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

/// Strings as they are; numbers and booleans coerced to their text (behaviour.md §4).
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

/// [`one_line`], without a copy when `text` is one line already (most
/// descriptions are).
pub fn one_line_cow(text: &str) -> Cow<'_, str> {
    let mut previous_space = true;
    let is_one_line = text.chars().all(|c| {
        let fine = if c == ' ' {
            !previous_space
        } else {
            !c.is_whitespace() && !c.is_control()
        };
        previous_space = c == ' ';
        fine
    }) && !previous_space;
    if is_one_line || text.is_empty() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(one_line(text))
    }
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

/// What to do about a symbolic link git checked out as a text file.
pub const LINK_AS_TEXT_FIX: &str = "run `git config core.symlinks true` in the repository, then `git checkout -- .` to check the links out again; on Windows, turn on Developer Mode first so that git may make links";

/// The target, when `text` is what git writes in place of a symbolic link
/// with `core.symlinks` false: one line (no line break after it), a
/// relative path with at least one `/` or naming `..`, without control
/// characters, at most 1 KiB. A `SKILL.md` so written points at another
/// `SKILL.md`; a skill folder so written at a folder.
///
/// Such a file is named, not followed: following a text file as a link
/// would let any small file point the server elsewhere, past the gate's
/// rules for real links, while the fix is one git setting.
pub fn link_as_text(text: &str) -> Option<&str> {
    let relative = !text.starts_with(['/', '\\']) && text.as_bytes().get(1) != Some(&b':');
    (text.len() <= 1024
        && !text.is_empty()
        && relative
        && !text.chars().any(char::is_control)
        && (text.contains('/') || text == ".."))
        .then_some(text)
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;

    fn parse(text: &str) -> Parsed {
        parse_text(text, "folder").expect("parses")
    }

    #[test]
    fn name_and_description_from_frontmatter() {
        let p = parse("---\nname: pdf\ndescription: Read  and\n  write PDFs\n---\n# PDF\n");
        assert_eq!(&*p.name, "pdf");
        // As YAML folds a plain scalar: line breaks become spaces, the rest stays.
        assert_eq!(&*p.description, "Read  and write PDFs");
        assert_eq!(p.one_line_description(), "Read and write PDFs");
        assert!(p.is_verbatim());
        assert!(p.findings().is_empty());
    }

    #[test]
    fn block_scalars_are_kept_as_yaml_gives_them() {
        let literal = parse("---\nname: x\ndescription: |\n  Line one.\n  Line two.\n---\n");
        assert_eq!(&*literal.description, "Line one.\nLine two.\n");
        assert_eq!(literal.one_line_description(), "Line one. Line two.");
        let folded =
            parse("---\nname: x\ndescription: >\n  Folded\n  text.\n\n  New paragraph.\n---\n");
        assert_eq!(&*folded.description, "Folded text.\nNew paragraph.\n");
        assert!(literal.is_verbatim() && folded.is_verbatim());
    }

    #[test]
    fn a_quoted_name_with_spaces_around_it_is_trimmed_and_not_verbatim() {
        let p = parse("---\nname: \" pdf \"\ndescription: d\n---\n");
        assert_eq!((p.name.as_ref(), p.name_from), ("pdf", NameFrom::Coerced));
    }

    #[test]
    fn one_line_borrows_what_is_one_line_already() {
        for text in ["", "a", "one line of text", "ünïcode ok"] {
            assert!(matches!(one_line_cow(text), Cow::Borrowed(t) if t == text));
        }
        for (text, line) in [
            (" a", "a"),
            ("a ", "a"),
            ("a  b", "a b"),
            ("a\nb", "a b"),
            ("a\tb", "a b"),
            ("a\u{7}", "a"),
        ] {
            assert!(
                matches!(one_line_cow(text), Cow::Owned(ref t) if t == line),
                "{text:?}"
            );
        }
    }

    #[test]
    fn crlf_and_bom_are_accepted() {
        let p = parse("\u{feff}---\r\nname: x\r\ndescription: y z\r\n---\r\nbody\r\n");
        assert_eq!((p.name.as_ref(), p.description.as_ref()), ("x", "y z"));
    }

    #[test]
    fn numbers_are_coerced_to_text() {
        let p = parse("---\nname: 123\ndescription: 4.5\n---\n");
        assert_eq!((p.name.as_ref(), p.description.as_ref()), ("123", "4.5"));
        assert_eq!(
            (p.name_from, p.description_from),
            (NameFrom::Coerced, DescriptionFrom::Coerced)
        );
        assert!(!p.is_verbatim());
    }

    #[test]
    fn missing_name_falls_back_to_the_folder() {
        let p = parse("---\ndescription: d\n---\n");
        assert_eq!(&*p.name, "folder");
        assert!(p.findings().is_empty());
    }

    #[test]
    fn structured_name_falls_back_with_a_warning() {
        let p = parse("---\nname: [a, b]\ndescription: d\n---\n");
        assert_eq!(&*p.name, "folder");
        assert_eq!(p.findings()[0].code, Code::NameFallback);
    }

    #[test]
    fn missing_description_uses_the_first_paragraph() {
        let p = parse("---\nname: x\n---\n# Title\n\nFirst  line\nsecond line.\n\nLater.\n");
        assert_eq!(&*p.description, "First line second line.");
        assert_eq!(p.findings()[0].code, Code::DescriptionMissing);
        assert_eq!(p.findings()[0].severity, Severity::Warning);
    }

    #[test]
    fn a_file_without_frontmatter_is_not_a_skill() {
        // Whatever it is (a private key behind a symlink, say), none of its
        // text becomes a name or a description.
        let err = parse_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn...\n", "f").unwrap_err();
        assert_eq!(
            (err.code, err.severity),
            (Code::FrontmatterMissing, Severity::Error)
        );
        assert!(!err.message.contains("OPENSSH"));
    }

    #[test]
    fn unquoted_colon_is_recovered_with_a_warning() {
        let p = parse("---\nname: x\ndescription: Use when: the user asks\n---\n");
        assert_eq!(&*p.description, "Use when: the user asks");
        assert_eq!(p.findings()[0].code, Code::YamlRecovered);
        assert_eq!(p.findings()[0].line, Some(3));
    }

    #[test]
    fn recovery_folds_continuation_lines() {
        let p = parse(
            "---\nname: x\ndescription: Do this: that\n  and more \"quoted\"\nlicense: MIT\n---\n",
        );
        assert_eq!(&*p.description, "Do this: that and more \"quoted\"");
        assert_eq!(p.fields()["license"], "MIT");
    }

    #[test]
    fn broken_yaml_is_an_error_with_a_line() {
        let err = parse_text("---\nname: x\ndescription: [unclosed\n---\n", "f").unwrap_err();
        assert_eq!(err.code, Code::YamlInvalid);
        assert_eq!(err.severity, Severity::Error);
        assert_eq!(err.line, Some(3), "{err:?}");
    }

    #[test]
    fn unterminated_frontmatter_is_an_error() {
        let err = parse_text("---\nname: x\n", "f").unwrap_err();
        assert_eq!(err.code, Code::FrontmatterUnterminated);
    }

    #[test]
    fn empty_file_is_an_error() {
        assert_eq!(parse_text("", "f").unwrap_err().code, Code::EmptyFile);
        assert_eq!(parse_text(" \n\n", "f").unwrap_err().code, Code::EmptyFile);
    }

    #[test]
    fn non_mapping_frontmatter_is_an_error() {
        assert_eq!(
            parse_text("---\n- a\n- b\n---\n", "f").unwrap_err().code,
            Code::FrontmatterNotAMap
        );
    }

    #[test]
    fn control_characters_in_a_name_are_an_error() {
        for name in ["\"a\\u0007b\"", "\"two\\nlines\""] {
            let text = format!("---\nname: {name}\ndescription: d\n---\n");
            assert_eq!(parse_text(&text, "f").unwrap_err().code, Code::NameControl);
        }
    }

    #[test]
    fn control_characters_are_dropped_from_descriptions() {
        let p = parse("---\nname: x\ndescription: \"red \\e[31mtext\\u0007\"\n---\n");
        assert_eq!(&*p.description, "red \u{1b}[31mtext\u{7}");
        assert_eq!(p.one_line_description(), "red [31mtext");
    }

    #[test]
    fn structured_description_warns_once() {
        let p = parse("---\nname: x\ndescription: [a]\n---\nBody.\n");
        assert_eq!(&*p.description, "Body.");
        assert_eq!(p.findings().len(), 1);
        assert_eq!(p.findings()[0].code, Code::DescriptionNotText);
    }

    #[test]
    fn other_keys_are_kept() {
        let p = parse("---\nname: x\ndescription: d\nmetadata:\n  a: b\nversion: 2\n---\n");
        assert_eq!(p.fields()["metadata"]["a"], "b");
        assert_eq!(p.fields()["version"], 2);
        assert!(!p.fields().contains_key("name") && !p.fields().contains_key("description"));
    }

    #[test]
    fn delimiter_needs_its_own_line() {
        // `---x` is not a delimiter; the block stays open.
        assert!(parse_text("---\nname: x\n---x\n", "f").is_err());
        // A closing delimiter at the very end of the text counts.
        assert_eq!(&*parse("---\nname: x\ndescription: d\n---").name, "x");
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
        assert_eq!(&*p.name, "big");
        assert_eq!(disk::read_text(&path, 1 << 20).unwrap(), text);
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
        assert_eq!(whole.fields()["---x"], 1);
        assert_eq!(read_frontmatter(&path, "x", 1 << 20).unwrap(), whole);
    }

    #[test]
    fn invalid_utf8_reports_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        std::fs::write(&path, b"---\nname: x\ndescription: \xff\n---\n").unwrap();
        let err = read_frontmatter(&path, "x", 1 << 20).unwrap_err().finding();
        assert_eq!((err.code, err.line), (Code::InvalidUtf8, Some(3)));
    }

    #[test]
    fn size_cap_is_enforced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        std::fs::write(&path, "---\nname: x\ndescription: d\n---\nbody\n").unwrap();
        let err = read_frontmatter(&path, "x", 10).unwrap_err().finding();
        assert_eq!(err.code, Code::FileTooLarge);
        assert!(matches!(
            disk::read_text(&path, 10),
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
            read_frontmatter(&path, "x", 1 << 20)
                .unwrap_err()
                .finding()
                .code,
            Code::NotAFile
        );
        assert!(matches!(
            disk::read_text(&path, 1 << 20),
            Err(ReadError::NotRegular)
        ));
    }
}
