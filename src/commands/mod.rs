//! The `list`, `show`, `check`, `config`, `enable` and `disable` commands:
//! front ends over one snapshot (as one client sees it) and the settings, for
//! people debugging their setup. They write to the given stream and return
//! the exit code; they never log.

mod list;
mod security;
mod settings;

pub use list::{ListOptions, list};
pub use settings::{config, toggle};

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde_json::json;

use crate::answer::{self, Answer, FileAnswer};
use crate::contents::Contents;
use crate::diagnostic::{Diagnostic, Severity};
use crate::exit_codes::ExitCode;
use crate::files::Files;
use crate::lint;
use crate::profiles::{Decision, View};
use crate::render::Base;
use crate::roots::Origin;
use crate::scan;
use crate::security::FileFinding;
use crate::snapshot::Snapshot;
use crate::text::{plural, printable, printable_path};

/// How a command prints its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Lines for a person at a terminal.
    Text,
    /// One JSON document, for scripts.
    Json,
}

impl Format {
    /// JSON when `--json` was given.
    pub fn of(json: bool) -> Format {
        if json { Format::Json } else { Format::Text }
    }
}

/// `skillserve list --description`: the `skill` tool's description exactly as
/// the client receives it, for checking it against a client's own limits.
pub fn description(view: &View, out: &mut dyn Write) -> io::Result<ExitCode> {
    writeln!(out, "{}", view.description())?;
    Ok(ExitCode::Success)
}

/// `skillserve list --instructions`: the server's `instructions` exactly as
/// the client receives them (with the catalog when it goes there).
pub fn instructions(view: &View, out: &mut dyn Write) -> io::Result<ExitCode> {
    writeln!(out, "{}", view.instructions())?;
    Ok(ExitCode::Success)
}

/// Everything `check` reports: the scan's diagnostics, the skills in hidden
/// folders, and the Agent Skills rules. `list` counts the same.
fn report(snapshot: &Snapshot, max_file_bytes: u64) -> Vec<Diagnostic> {
    let mut diagnostics = snapshot.diagnostics.clone();
    diagnostics.extend(scan::hidden_skills(&snapshot.roots, &snapshot.hidden));
    diagnostics.extend(lint::lint(snapshot, max_file_bytes));
    diagnostics
}

/// How many diagnostics of each severity, in how many files.
struct Counts {
    errors: usize,
    warnings: usize,
    notes: usize,
    files: usize,
}

impl Counts {
    fn of(diagnostics: &[Diagnostic]) -> Counts {
        let count = |severity| {
            diagnostics
                .iter()
                .filter(|d| d.severity == severity)
                .count()
        };
        let files: std::collections::HashSet<&Path> =
            diagnostics.iter().map(|d| d.path.as_path()).collect();
        Counts {
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
            notes: count(Severity::Note),
            files: files.len(),
        }
    }

    fn any(&self) -> bool {
        self.errors + self.warnings + self.notes > 0
    }
}

impl std::fmt::Display for Counts {
    /// `2 errors, 1 warning, 0 notes in 3 files`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} error{}, {} warning{}, {} note{} in {} file{}",
            self.errors,
            plural(self.errors),
            self.warnings,
            plural(self.warnings),
            self.notes,
            plural(self.notes),
            self.files,
            plural(self.files),
        )
    }
}

/// `skillserve show NAME [FILE]`: the text blocks a `skill` call (with
/// `file` when FILE is given) returns, on stdout when it succeeds and on
/// stderr (exit 1) when it is an error. Each block ends with a line break
/// (one is added when the text has none) and blocks are separated by a blank
/// line. An image is not printed: its text block says what it is. When the
/// name finds nothing because the client is not shown the skill, a `note:`
/// line on stderr says why (`decision`); the client itself only reads "not
/// found".
pub fn show(
    view: &View,
    decision: &Decision,
    name: &str,
    file: Option<&str>,
    max_file_bytes: u64,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    let files = Files::new(max_file_bytes);
    let answer = match file {
        None => answer::answer(
            view,
            name,
            &Contents::new(max_file_bytes),
            &files,
            Base::Path,
        ),
        Some(file) => match answer::answer_file(view, name, file, &files, Base::Path) {
            FileAnswer::Text(text) | FileAnswer::Image { text, .. } => {
                return write_blocks(out, [text]).map(|()| ExitCode::Success);
            }
            FileAnswer::Skill(answer) => answer,
            FileAnswer::Refused { text, .. } => {
                writeln!(err, "{text}")?;
                return Ok(ExitCode::Failure);
            }
        },
    };
    if answer.is_error() {
        writeln!(err, "{}", answer.text())?;
        if let Answer::NotFound { .. } = answer {
            let snapshot = view.snapshot();
            let wanted = name.trim().to_lowercase();
            let hidden = snapshot.candidates().iter().zip(&decision.verdicts);
            for (skill, verdict) in hidden.filter(|(s, _)| s.name.to_lowercase() == wanted) {
                if let Some(reason) = verdict.reason(snapshot) {
                    writeln!(
                        err,
                        "note: '{}' ({}) is not offered: {reason}",
                        skill.name,
                        skill.dir.display()
                    )?;
                }
            }
        }
        return Ok(ExitCode::Failure);
    }
    write_blocks(out, answer.into_blocks())?;
    Ok(ExitCode::Success)
}

/// Text blocks, each ending with a line break, a blank line between two.
fn write_blocks(out: &mut dyn Write, blocks: impl IntoIterator<Item = String>) -> io::Result<()> {
    for (index, block) in blocks.into_iter().enumerate() {
        if index > 0 {
            out.write_all(b"\n")?;
        }
        out.write_all(block.as_bytes())?;
        if !block.ends_with('\n') {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// `from source 'skills': url@version (skills/pdf)`: where an installed
/// skill came from, on one line.
fn provenance(origin: &Origin) -> String {
    format!(
        "from source '{}': {} ({})",
        origin.id,
        origin.label(),
        origin.path
    )
}

/// The folder of every installed skill (served or shadowed) with its origin.
fn origins_by_path(snapshot: &Snapshot) -> Vec<(&Path, &Origin)> {
    let shadowed = snapshot.shadowed().map(|s| s.skill);
    snapshot
        .skills()
        .iter()
        .chain(shadowed)
        .filter_map(|s| Some((&*s.dir, s.origin()?)))
        .collect()
}

/// `skillserve check [--json] [--security]`: what the scan found plus the
/// Agent Skills rules ([`lint`]), and with `security` (a cache to scan
/// through) the security scan of every skill, grouped by file; exit 1 when
/// there is an error.
pub fn check(
    snapshot: &Snapshot,
    max_file_bytes: u64,
    format: Format,
    security: Option<&mut crate::security::Cache>,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    let mut diagnostics = report(snapshot, max_file_bytes);
    let scanned = security.map(|cache| security::SecurityScan::of(snapshot, cache));
    let mut all = diagnostics.clone();
    if let Some(scanned) = &scanned {
        all.extend(scanned.diagnostics());
    }
    let counts = Counts::of(&all);
    let code = if counts.errors > 0 {
        ExitCode::Failure
    } else {
        ExitCode::Success
    };

    // Installed skills live in the store under their digests: say which
    // source each of their files belongs to.
    let origins = origins_by_path(snapshot);
    let origin_of = |path: &Path| {
        origins
            .iter()
            .find(|(dir, _)| path.starts_with(dir))
            .map(|(_, origin)| *origin)
    };
    if format == Format::Json {
        sort_by_file(&mut diagnostics);
        let diagnostics: Vec<serde_json::Value> = diagnostics
            .iter()
            .map(|d| {
                let mut value = json!(d);
                if let Some(origin) = origin_of(&d.path) {
                    value["source"] = json!({"id": origin.id, "url": origin.url, "version": origin.version, "path": origin.path});
                }
                value
            })
            .collect();
        let mut report = json!({
            "skills": snapshot.skills().len(),
            "errors": counts.errors,
            "warnings": counts.warnings,
            "notes": counts.notes,
            "diagnostics": diagnostics,
        });
        if let Some(scanned) = &scanned {
            report["security"] = scanned.json();
        }
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
        return Ok(code);
    }

    sort_by_file(&mut all);
    let mut by_file: BTreeMap<&Path, Vec<&Diagnostic>> = BTreeMap::new();
    for diagnostic in &all {
        by_file
            .entry(&diagnostic.path)
            .or_default()
            .push(diagnostic);
    }
    for (path, list) in &by_file {
        writeln!(out, "{}", printable_path(path))?;
        if let Some(origin) = origin_of(path) {
            writeln!(out, "  ({})", printable(&provenance(origin)))?;
        }
        for d in list {
            let line = d.line.map(|l| format!(" line {l}")).unwrap_or_default();
            writeln!(
                out,
                "  {}[{}]{line}: {}",
                d.severity,
                d.code,
                printable(&d.message)
            )?;
            if !d.hint.is_empty() {
                writeln!(out, "    fix: {}", d.hint)?;
            }
        }
        writeln!(out)?;
    }
    let skills = snapshot.skills().len();
    if all.is_empty() {
        writeln!(
            out,
            "No problems found ({skills} skill{} served).",
            plural(skills)
        )?;
    } else {
        writeln!(out, "{counts} ({skills} skill{} served).", plural(skills))?;
    }
    if let Some(scanned) = &scanned {
        writeln!(out, "{}", scanned.summary())?;
    }
    Ok(code)
}

/// Diagnostics by file, then line (a finding about the whole file first),
/// then severity.
fn sort_by_file(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| (&a.path, a.line, a.severity).cmp(&(&b.path, b.line, b.severity)));
}

/// A security finding in JSON (`check --json --security`, `list --json
/// --all`).
#[derive(serde::Serialize)]
struct FindingItem<'a> {
    file: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    severity: Severity,
    code: crate::diagnostic::Code,
    message: &'a str,
    hint: &'a str,
}

impl<'a> FindingItem<'a> {
    fn new(found: &'a FileFinding) -> Self {
        FindingItem {
            file: &found.file,
            line: found.finding.line,
            severity: found.finding.severity,
            code: found.finding.code,
            message: &found.finding.message,
            hint: &found.finding.hint,
        }
    }
}
