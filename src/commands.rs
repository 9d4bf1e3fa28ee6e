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
use crate::lint;
use crate::render::{self, Base};
use crate::roots::{Origin, Source, SourceKind};
use crate::skill::Skill;
use crate::snapshot::{Shadowed, Snapshot};
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
    /// Also the skills hidden by a same-named skill (`--all`).
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
    let shadowed = if options.all {
        snapshot.shadowed()
    } else {
        &[]
    };
    match options.format {
        Format::Json => list_json(snapshot, shadowed, out)?,
        Format::Text => {
            list_text(snapshot, shadowed, out)?;
            list_summary(snapshot, max_file_bytes, options.all, out)?;
        }
    }
    Ok(ExitCode::Success)
}

fn list_json(snapshot: &Snapshot, shadowed: &[Shadowed], out: &mut dyn Write) -> io::Result<()> {
    let served = snapshot.skills().iter().map(|s| ListItem::new(s, None));
    let hidden = shadowed
        .iter()
        .map(|s| ListItem::new(&s.skill, Some(&s.by)));
    let items: Vec<ListItem> = served.chain(hidden).collect();
    serde_json::to_writer_pretty(&mut *out, &items)?;
    writeln!(out)
}

/// Each skill, then those `shadowed`, with names in one column.
fn list_text(snapshot: &Snapshot, shadowed: &[Shadowed], out: &mut dyn Write) -> io::Result<()> {
    let width = snapshot
        .skills()
        .iter()
        .chain(shadowed.iter().map(|s| &s.skill))
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
        writeln!(
            out,
            "\n{served} skill{} ({}){hidden}",
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
    if let Some(origin) = &skill.origin {
        writeln!(out, "    {}", printable(&provenance(origin)))?;
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
    installed: Option<OriginItem<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shadowed_by: Option<Cow<'a, str>>,
}

/// Where an installed skill came from, in `list --json`.
#[derive(Serialize)]
struct OriginItem<'a> {
    id: &'a str,
    kind: SourceKind,
    url: &'a str,
    version: &'a str,
    path: &'a str,
    digest: &'a str,
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
            installed: skill.origin.as_deref().map(|o| OriginItem {
                id: &o.id,
                kind: o.kind,
                url: &o.url,
                version: &o.version,
                path: &o.path,
                digest: &o.digest,
            }),
            shadowed_by: shadowed_by.map(Path::to_string_lossy),
        }
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

/// The folder of every installed skill (served or shadowed) with its origin.
fn origins_by_path(snapshot: &Snapshot) -> Vec<(&Path, &Origin)> {
    let shadowed = snapshot.shadowed().iter().map(|s| &s.skill);
    snapshot
        .skills()
        .iter()
        .chain(shadowed)
        .filter_map(|s| Some((s.dir.as_path(), s.origin.as_deref()?)))
        .collect()
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

/// `skillserve check [--json]`: what the scan found plus the Agent Skills
/// rules ([`lint`]), grouped by file; exit 1 when there is an error.
pub fn check(
    snapshot: &Snapshot,
    max_file_bytes: u64,
    format: Format,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    let diagnostics = report(snapshot, max_file_bytes);
    let counts = Counts::of(&diagnostics);
    let code = if counts.errors > 0 {
        ExitCode::Failure
    } else {
        ExitCode::Success
    };

    let mut by_file: BTreeMap<&Path, Vec<&Diagnostic>> = BTreeMap::new();
    for diagnostic in &diagnostics {
        by_file
            .entry(&diagnostic.path)
            .or_default()
            .push(diagnostic);
    }
    for list in by_file.values_mut() {
        list.sort_by_key(|d| (d.line, d.severity));
    }

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
        let diagnostics: Vec<serde_json::Value> = by_file
            .values()
            .flatten()
            .map(|d| {
                let mut value = json!(d);
                if let Some(origin) = origin_of(&d.path) {
                    value["source"] = json!({"id": origin.id, "url": origin.url, "version": origin.version, "path": origin.path});
                }
                value
            })
            .collect();
        let report = json!({
            "skills": snapshot.skills().len(),
            "errors": counts.errors,
            "warnings": counts.warnings,
            "notes": counts.notes,
            "diagnostics": diagnostics,
        });
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
        return Ok(code);
    }

    for (path, list) in &by_file {
        writeln!(out, "{}", printable(&path.display().to_string()))?;
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
    if diagnostics.is_empty() {
        writeln!(
            out,
            "No problems found ({skills} skill{} served).",
            plural(skills)
        )?;
    } else {
        writeln!(out, "{counts} ({skills} skill{} served).", plural(skills))?;
    }
    Ok(code)
}
