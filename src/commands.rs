//! The `list`, `show` and `check` commands: front ends over one snapshot for
//! people debugging their setup. They write to the given stream and return the
//! exit code; they never log.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::json;

use crate::answer::{self, FileAnswer};
use crate::contents::Contents;
use crate::diagnostic::{Diagnostic, Severity};
use crate::exit_codes::ExitCode;
use crate::files::Files;
use crate::gate::Place;
use crate::lint;
use crate::render::{self, Base};
use crate::roots::Source;
use crate::security::{self, FileFinding, Names, Report};
use crate::skill::Skill;
use crate::snapshot::{Shadowed, Snapshot, Why, Withheld};
use crate::text::{plural, printable};

/// Longest description shown under a skill in `list`.
const LIST_DESCRIPTION_CHARS: usize = 160;

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

/// What `skillserve list` shows.
#[derive(Clone, Copy, Debug)]
pub struct ListOptions {
    pub format: Format,
    /// Also the skills hidden by a same-named skill and those not served
    /// (quarantined), with the reason (`--all`).
    pub all: bool,
}

/// `skillserve list [--json] [--all]`. The problem count is `check`'s, and
/// problems with the skills folders themselves are named.
pub fn list(
    snapshot: &Snapshot,
    max_file_bytes: u64,
    options: ListOptions,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    let (shadowed, withheld) = if options.all {
        (snapshot.shadowed(), snapshot.withheld())
    } else {
        (&[][..], &[][..])
    };
    match options.format {
        Format::Json => list_json(snapshot, shadowed, withheld, out)?,
        Format::Text => {
            list_text(snapshot, shadowed, withheld, out)?;
            list_summary(snapshot, max_file_bytes, options.all, out)?;
        }
    }
    Ok(ExitCode::Success)
}

fn list_json(
    snapshot: &Snapshot,
    shadowed: &[Shadowed],
    withheld: &[Withheld],
    out: &mut dyn Write,
) -> io::Result<()> {
    let served = snapshot.skills().iter().map(|s| ListItem::new(s, None));
    let hidden = shadowed
        .iter()
        .map(|s| ListItem::new(&s.skill, Some(&s.by)));
    let held = withheld.iter().map(ListItem::withheld);
    let items: Vec<ListItem> = served.chain(hidden).chain(held).collect();
    serde_json::to_writer_pretty(&mut *out, &items)?;
    writeln!(out)
}

/// Each skill, then those `shadowed`, then those `withheld` with the
/// reason, with names in one column.
fn list_text(
    snapshot: &Snapshot,
    shadowed: &[Shadowed],
    withheld: &[Withheld],
    out: &mut dyn Write,
) -> io::Result<()> {
    let width = snapshot
        .skills()
        .iter()
        .chain(shadowed.iter().map(|s| &s.skill))
        .chain(withheld.iter().map(|w| &w.skill))
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    for skill in snapshot.skills() {
        write_skill(out, skill, width)?;
    }
    if !shadowed.is_empty() {
        writeln!(
            out,
            "\nHidden by a skill of the same name with higher precedence:"
        )?;
        for entry in shadowed {
            write_skill(out, &entry.skill, width)?;
            writeln!(out, "    hidden by {}", entry.by.display())?;
        }
    }
    if !withheld.is_empty() {
        writeln!(
            out,
            "\nNot served (`skillserve check --security` lists every finding):"
        )?;
        for entry in withheld {
            write_skill(out, &entry.skill, width)?;
            match &entry.why {
                Why::Quarantined(report) => {
                    if let Some(first) = report.errors().next() {
                        writeln!(
                            out,
                            "    quarantined: {}: {}",
                            first.short(),
                            printable(&first.finding.message)
                        )?;
                    }
                    writeln!(
                        out,
                        "    to serve it: skillserve trust {}",
                        entry.skill.name
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// The count of skills by source (or where nothing was found), problems
/// with the skills folders, and `check`'s count of problems.
fn list_summary(
    snapshot: &Snapshot,
    max_file_bytes: u64,
    all: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let served = snapshot.skills().len();
    if served == 0 {
        writeln!(out, "No skills found. Looked in:")?;
        for root in &snapshot.roots {
            writeln!(out, "  {:<8} {}", root.source, root.path.display())?;
        }
    } else {
        let hidden = match snapshot.shadowed().len() {
            0 => String::new(),
            n if all => format!("; {n} hidden"),
            n => format!("; {n} hidden (see --all)"),
        };
        let quarantined = match snapshot.withheld().len() {
            0 => String::new(),
            n if all => format!("; {n} quarantined"),
            n => format!("; {n} quarantined (see --all)"),
        };
        writeln!(
            out,
            "\n{served} skill{} ({}){hidden}{quarantined}",
            plural(served),
            snapshot.count_by_source(),
        )?;
    }
    let report = report(snapshot, max_file_bytes);
    for diagnostic in report.iter().filter(|d| d.code.is_about_a_root()) {
        writeln!(out, "{}", printable(&diagnostic.to_string()))?;
    }
    let counts = Counts::of(&report);
    if counts.any() {
        writeln!(out, "{counts}; run `skillserve check` for details")?;
    }
    Ok(())
}

/// `skillserve list --description`: the `skill` tool's description exactly as
/// a client receives it, for checking it against a client's own limits.
pub fn description(
    snapshot: &Snapshot,
    budget: usize,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    writeln!(
        out,
        "{}",
        render::tool_description(snapshot.skills(), budget)
    )?;
    Ok(ExitCode::Success)
}

/// Everything `check` reports: the scan's diagnostics and the Agent Skills
/// rules. `list` counts the same.
fn report(snapshot: &Snapshot, max_file_bytes: u64) -> Vec<Diagnostic> {
    let mut diagnostics = snapshot.diagnostics.clone();
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

fn write_skill(out: &mut dyn Write, skill: &Skill, width: usize) -> io::Result<()> {
    writeln!(
        out,
        "{:<width$}  {:<7}  {}",
        skill.name,
        skill.source.as_str(),
        printable(&skill.dir.display().to_string())
    )?;
    let description = skill.description();
    if !description.is_empty() {
        writeln!(out, "    {}", cut(description, LIST_DESCRIPTION_CHARS))?;
    }
    if let Some(plugin) = &skill.plugin {
        writeln!(
            out,
            "    plugin {} {}, installed at {}",
            plugin.key,
            plugin.version.as_deref().unwrap_or("(no version)"),
            plugin.install_path.display()
        )?;
    }
    Ok(())
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", text[..end].trim_end()),
        None => text.to_owned(),
    }
}

/// One skill in `list --json`. Paths are text: bytes that are not UTF-8
/// become U+FFFD, so that the output is valid JSON whatever the file names.
#[derive(Serialize)]
struct ListItem<'a> {
    name: &'a str,
    description: &'a str,
    source: Source,
    dir: Cow<'a, str>,
    file: Cow<'a, str>,
    root: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    plugin: Option<PluginItem<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shadowed_by: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    withheld: Option<WithheldItem<'a>>,
}

/// Why a skill in `list --json --all` is not served.
#[derive(Serialize)]
struct WithheldItem<'a> {
    /// `quarantined`.
    reason: &'static str,
    /// The first error-level finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    finding: Option<FindingItem<'a>>,
    /// How many error-level findings there are.
    errors: usize,
    /// The command that approves the skill as it is now.
    approve: String,
}

/// A security finding in JSON.
#[derive(Serialize)]
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

#[derive(Serialize)]
struct PluginItem<'a> {
    key: &'a str,
    version: Option<&'a str>,
    install_path: Cow<'a, str>,
}

impl<'a> ListItem<'a> {
    fn new(skill: &'a Skill, shadowed_by: Option<&'a Path>) -> Self {
        ListItem {
            name: &skill.name,
            description: skill.description(),
            source: skill.source,
            dir: skill.dir.to_string_lossy(),
            file: skill.file.to_string_lossy(),
            root: skill.root.to_string_lossy(),
            plugin: skill.plugin.as_ref().map(|p| PluginItem {
                key: &p.key,
                version: p.version.as_deref(),
                install_path: p.install_path.to_string_lossy(),
            }),
            shadowed_by: shadowed_by.map(Path::to_string_lossy),
            withheld: None,
        }
    }

    fn withheld(withheld: &'a Withheld) -> Self {
        let mut item = ListItem::new(&withheld.skill, None);
        item.withheld = Some(match &withheld.why {
            Why::Quarantined(report) => WithheldItem {
                reason: "quarantined",
                finding: report.errors().next().map(FindingItem::new),
                errors: report.errors().count(),
                approve: format!("skillserve trust {}", withheld.skill.name),
            },
        });
        item
    }
}

/// `skillserve show NAME [FILE]`: the text blocks a `skill` call (with
/// `file` when FILE is given) returns, on stdout when it succeeds and on
/// stderr (exit 1) when it is an error. Each block ends with a line break
/// (one is added when the text has none) and blocks are separated by a blank
/// line. An image is not printed: its text block says what it is.
pub fn show(
    snapshot: &Snapshot,
    name: &str,
    file: Option<&str>,
    max_file_bytes: u64,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    let files = Files::new(max_file_bytes);
    let answer = match file {
        None => answer::answer(
            snapshot,
            name,
            &Contents::new(max_file_bytes),
            &files,
            Base::Path,
        ),
        Some(file) => match answer::answer_file(snapshot, name, file, &files, Base::Path) {
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

/// `skillserve check [--json] [--security]`: what the scan found plus the
/// Agent Skills rules ([`lint`]), and with `security` (a cache to scan
/// through) the security scan of every skill, grouped by file; exit 1 when
/// there is an error.
pub fn check(
    snapshot: &Snapshot,
    max_file_bytes: u64,
    format: Format,
    security: Option<&mut security::Cache>,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    let mut diagnostics = report(snapshot, max_file_bytes);
    let scanned = security.map(|cache| SecurityScan::of(snapshot, cache));
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

    if format == Format::Json {
        sort_by_file(&mut diagnostics);
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
        writeln!(out, "{}", printable(&path.display().to_string()))?;
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

/// The security scan of every skill of a snapshot: served, shadowed and
/// withheld, whatever its source.
struct SecurityScan<'a> {
    skills: Vec<Scanned<'a>>,
}

/// One skill's report, and what it means for the skill.
struct Scanned<'a> {
    skill: &'a Skill,
    report: std::sync::Arc<Report>,
    status: &'static str,
}

impl<'a> SecurityScan<'a> {
    fn of(snapshot: &'a Snapshot, cache: &mut security::Cache) -> SecurityScan<'a> {
        let skills: Vec<(&Skill, bool)> = snapshot
            .skills()
            .iter()
            .map(|s| (s, false))
            .chain(snapshot.shadowed().iter().map(|s| (&s.skill, false)))
            .chain(snapshot.withheld().iter().map(|w| (&w.skill, true)))
            .collect();
        let places: Vec<Place> = skills.iter().map(|(s, _)| s.place()).collect();
        let reports = cache.reports(&places);
        let names = Names::new(skills.iter().map(|(s, _)| s.parsed.name.as_str()));
        let skills = skills
            .into_iter()
            .zip(reports)
            .map(|((skill, withheld), mut report)| {
                if let Some(finding) =
                    security::crowding(skill.description(), &skill.parsed.name, &names)
                {
                    let file = skill
                        .file
                        .file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                    report = std::sync::Arc::new(report.with(&[FileFinding { file, finding }]));
                }
                let status = if withheld {
                    "quarantined"
                } else if skill.source.is_own() {
                    "own"
                } else if report.has_errors() {
                    "approved"
                } else {
                    "scanned"
                };
                Scanned {
                    skill,
                    report,
                    status,
                }
            })
            .collect();
        SecurityScan { skills }
    }

    fn diagnostics(&self) -> impl Iterator<Item = Diagnostic> + '_ {
        self.skills.iter().flat_map(|scanned| {
            scanned
                .report
                .findings
                .iter()
                .map(|f| f.at(&scanned.skill.dir))
        })
    }

    fn count(&self, status: &str) -> usize {
        self.skills.iter().filter(|s| s.status == status).count()
    }

    /// `Security scan: 4 skills, 9 files, 12,345 bytes; 1 quarantined, 1 approved.`
    fn summary(&self) -> String {
        let files: usize = self.skills.iter().map(|s| s.report.files_scanned).sum();
        let bytes: u64 = self.skills.iter().map(|s| s.report.bytes_scanned).sum();
        let skills = self.skills.len();
        let mut text = format!(
            "Security scan: {skills} skill{}, {files} file{}, {} scanned",
            plural(skills),
            plural(files),
            render::human_size(bytes)
        );
        let held: Vec<String> = [
            ("quarantined", self.count("quarantined")),
            ("approved", self.count("approved")),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
        if !held.is_empty() {
            text.push_str("; ");
            text.push_str(&held.join(", "));
        }
        text.push('.');
        text
    }

    fn json(&self) -> serde_json::Value {
        let mut findings = Vec::new();
        for scanned in &self.skills {
            for found in &scanned.report.findings {
                let mut item = serde_json::to_value(FindingItem::new(found)).unwrap_or_default();
                item["skill"] = json!(scanned.skill.name);
                item["source"] = json!(scanned.skill.source);
                item["status"] = json!(scanned.status);
                item["path"] = json!(scanned.skill.dir.join(&found.file).to_string_lossy());
                findings.push(item);
            }
        }
        json!({
            "skills_scanned": self.skills.len(),
            "files_scanned": self.skills.iter().map(|s| s.report.files_scanned).sum::<usize>(),
            "bytes_scanned": self.skills.iter().map(|s| s.report.bytes_scanned).sum::<u64>(),
            "quarantined": self.skills.iter().filter(|s| s.status == "quarantined").map(|s| &s.skill.name).collect::<Vec<_>>(),
            "approved": self.skills.iter().filter(|s| s.status == "approved").map(|s| &s.skill.name).collect::<Vec<_>>(),
            "findings": findings,
        })
    }
}
