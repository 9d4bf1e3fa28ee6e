//! One skill as the manager shows it: its `SKILL.md` text (the page renders
//! it as untrusted Markdown), its files with sizes and digests, one file's
//! contents, and the security findings with the lines they point at.
//!
//! Every file is opened through the gate, as a client's call opens it; the
//! findings come from the same scan that quarantines skills
//! ([`crate::security::scan_dir`]), run again for the skill shown, so they
//! are those of the files as they are now.

use std::collections::HashMap;

use serde::Serialize;

use super::Provenance;
use super::Status;
use super::catalog::Found;
use crate::diagnostic::Severity;
use crate::files::Files;
use crate::gate::{FileError, Gate};
use crate::mime::Content;
use crate::security;
use crate::skill::Skill;

/// Characters of a line a finding points at that are shown with it.
pub const EXCERPT_CHARS: usize = 300;

/// A skill's page in the manager.
#[derive(Clone, Debug, Serialize)]
pub struct SkillView {
    pub id: String,
    pub name: String,
    pub description: String,
    pub provenance: Provenance,
    pub dir: String,
    /// The skills folder it was found in, and its label
    /// ([`super::root_label`]).
    pub root: String,
    pub root_label: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub clients: Vec<String>,
    /// The `SKILL.md` as it is now (frontmatter included); `None` with
    /// `text_error` when it cannot be read.
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_error: Option<String>,
    pub files: Vec<FileEntry>,
    /// Why the listing stops short, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_truncated: Option<String>,
    /// The digest of the whole skill (what `trust` approves), when every
    /// file is listed and hashed.
    pub digest: Option<String>,
    pub findings: Vec<FindingView>,
}

/// A file of a skill.
#[derive(Clone, Debug, Serialize)]
pub struct FileEntry {
    pub path: String,
    pub size: u64,
    /// `sha256:` and hex; `None` when the file cannot be hashed now.
    pub digest: Option<String>,
    /// Whether it is a script (in `scripts/`, or by its extension): what
    /// a reviewer reads first.
    pub script: bool,
}

/// A security finding, with the line it points at.
#[derive(Clone, Debug, Serialize)]
pub struct FindingView {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub severity: Severity,
    pub code: String,
    pub message: String,
    pub hint: String,
    /// The line's text, control characters escaped, at most
    /// [`EXCERPT_CHARS`] characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
}

/// One file of a skill, for the file viewer.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FileView {
    Text {
        path: String,
        mime: &'static str,
        text: String,
    },
    Image {
        path: String,
        mime: &'static str,
        /// Base64.
        data: String,
    },
    Binary {
        path: String,
        mime: &'static str,
        size: u64,
    },
}

/// The page of the skill `found`: reads its files through the gate
/// (blocking: call it off the async runtime).
pub fn view(found: &Found, files: &Files) -> SkillView {
    let skill = found.skill;
    let (text, text_error) = match read_text(skill, files, skill.file_name.as_str()) {
        Ok(text) => (Some(text), None),
        Err(err) => (None, Some(err)),
    };
    let dir: std::sync::Arc<std::path::Path> = std::sync::Arc::clone(&skill.dir);
    let (entries, truncated, digest) = match files.listing(skill.place(), &dir) {
        Ok(listing) => {
            let digests = files.digests(skill.place(), &dir, &listing).ok();
            let entries: Vec<FileEntry> = listing
                .files
                .iter()
                .enumerate()
                .map(|(i, entry)| FileEntry {
                    path: entry.path.clone(),
                    size: entry.size,
                    digest: digests.as_ref().map(|d| d[i].digest.clone()),
                    script: crate::sources::is_script(&entry.path, false, &[]),
                })
                .collect();
            let truncated = listing
                .truncated
                .map(|limit| format!("{limit:?}").to_lowercase());
            let digest = files.skill_digest(skill.place()).ok().flatten();
            (entries, truncated, digest)
        }
        Err(err) => (Vec::new(), Some(err.to_string()), None),
    };
    let report = match found.withheld {
        Some(withheld) => {
            let crate::snapshot::Why::Quarantined(report) = &withheld.why;
            (**report).clone()
        }
        None => security::scan_dir(skill.place()),
    };
    let findings = findings(skill, files, &report, text.as_deref());
    SkillView {
        id: skill.dir.display().to_string(),
        name: skill.name.to_string(),
        description: skill.parsed.description.to_string(),
        provenance: Provenance::of(skill),
        dir: skill.dir.display().to_string(),
        root: found.root.clone(),
        root_label: found.root_label.clone(),
        status: found.status,
        reason: found.reason.clone(),
        clients: found.clients.clone(),
        text,
        text_error,
        files: entries,
        files_truncated: truncated,
        digest,
        findings,
    }
}

/// The file `path` of `skill`, through the gate, with the server's cap.
pub fn file(skill: &Skill, files: &Files, path: &str) -> Result<FileView, FileError> {
    let target = Gate::open(skill.place())?.resolve(path)?;
    let rel = target.rel().to_owned();
    // Shown to the person reviewing the skill (quarantined ones too, which is
    // what the manager is for), not served to a model: no digest to check.
    Ok(match files.read(target, false)?.0 {
        Content::Text { text, mime } => FileView::Text {
            path: rel,
            mime,
            text,
        },
        Content::Image { bytes, mime } => {
            use base64::Engine;
            FileView::Image {
                path: rel,
                mime,
                data: base64::engine::general_purpose::STANDARD.encode(bytes),
            }
        }
        Content::Binary { size, mime } => FileView::Binary {
            path: rel,
            mime,
            size,
        },
    })
}

fn read_text(skill: &Skill, files: &Files, path: &str) -> Result<String, String> {
    match file(skill, files, path) {
        Ok(FileView::Text { text, .. }) => Ok(text),
        Ok(_) => Err(format!("{path} is not text")),
        Err(err) => Err(err.to_string()),
    }
}

/// The report's findings, each with the text of its line.
fn findings(
    skill: &Skill,
    files: &Files,
    report: &security::Report,
    skill_md: Option<&str>,
) -> Vec<FindingView> {
    let mut texts: HashMap<&str, Option<String>> = HashMap::new();
    if let Some(text) = skill_md {
        texts.insert(skill.file_name.as_str(), Some(text.to_owned()));
    }
    report
        .findings
        .iter()
        .map(|found| {
            let finding = &found.finding;
            let excerpt = finding.line.and_then(|line| {
                let text = texts
                    .entry(found.file.as_str())
                    .or_insert_with(|| read_text(skill, files, &found.file).ok());
                let line = text.as_deref()?.lines().nth(line.checked_sub(1)?)?;
                Some(excerpt(line))
            });
            FindingView {
                file: found.file.clone(),
                line: finding.line,
                severity: finding.severity,
                code: finding.code.as_str().to_owned(),
                message: finding.message.clone(),
                hint: finding.hint.clone(),
                excerpt,
            }
        })
        .collect()
}

/// A line as shown beside a finding: control and invisible characters
/// escaped (a finding is often about exactly those), cut to
/// [`EXCERPT_CHARS`].
fn excerpt(line: &str) -> String {
    let mut out = String::new();
    for (n, c) in line.chars().enumerate() {
        if n == EXCERPT_CHARS {
            out.push('…');
            break;
        }
        let invisible = c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}');
        if invisible && c != '\t' {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}
