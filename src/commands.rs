//! The `list`, `show` and `check` commands: front ends over one snapshot for
//! people debugging their setup. They write to the given stream and return the
//! exit code; they never log.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::json;

use crate::answer::{self, FileAnswer};
use crate::contents::Contents;
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::exit_codes::ExitCode;
use crate::files::Files;
use crate::lint;
use crate::roots::Source;
use crate::snapshot::{Skill, Snapshot};

/// Longest description shown under a skill in `list`.
const LIST_DESCRIPTION_CHARS: usize = 160;

/// `skillserve list [--json] [--all]`.
pub fn list(
    snapshot: &Snapshot,
    json: bool,
    all: bool,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    let shadowed = if all { snapshot.shadowed() } else { &[] };
    if json {
        let mut items: Vec<ListItem> = snapshot
            .skills()
            .iter()
            .map(|s| ListItem::new(s, None))
            .collect();
        items.extend(
            shadowed
                .iter()
                .map(|s| ListItem::new(&s.skill, Some(&s.by))),
        );
        serde_json::to_writer_pretty(&mut *out, &items)?;
        writeln!(out)?;
        return Ok(ExitCode::Success);
    }

    let skills: Vec<&Skill> = snapshot
        .skills()
        .iter()
        .chain(shadowed.iter().map(|s| &s.skill))
        .collect();
    let width = skills
        .iter()
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
    if snapshot.skills().is_empty() {
        writeln!(out, "No skills found. Looked in:")?;
        for root in &snapshot.roots {
            writeln!(out, "  {:<8} {}", root.source, root.path.display())?;
        }
    } else {
        writeln!(
            out,
            "\n{} skill{} ({}){}",
            snapshot.skills().len(),
            plural(snapshot.skills().len()),
            snapshot.count_by_source(),
            match snapshot.shadowed().len() {
                0 => String::new(),
                n if all => format!("; {n} hidden"),
                n => format!("; {n} hidden (see --all)"),
            }
        )?;
    }
    let problems = snapshot
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Note && d.code != Code::Shadowed)
        .count();
    if problems > 0 {
        writeln!(
            out,
            "{problems} problem{} found; run `skillserve check` for details",
            plural(problems)
        )?;
    }
    Ok(ExitCode::Success)
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

pub(crate) use crate::render::printable;

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[derive(Serialize)]
struct ListItem<'a> {
    name: &'a str,
    description: &'a str,
    source: Source,
    dir: &'a Path,
    file: &'a Path,
    root: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    plugin: Option<PluginItem<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shadowed_by: Option<&'a Path>,
}

#[derive(Serialize)]
struct PluginItem<'a> {
    key: &'a str,
    version: Option<&'a str>,
    install_path: &'a Path,
}

impl<'a> ListItem<'a> {
    fn new(skill: &'a Skill, shadowed_by: Option<&'a Path>) -> Self {
        ListItem {
            name: &skill.name,
            description: skill.description(),
            source: skill.source,
            dir: &skill.dir,
            file: &skill.file,
            root: &skill.root,
            plugin: skill.plugin.as_ref().map(|p| PluginItem {
                key: &p.key,
                version: p.version.as_deref(),
                install_path: &p.install_path,
            }),
            shadowed_by,
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
        None => answer::answer(snapshot, name, &Contents::new(max_file_bytes), &files),
        Some(file) => match answer::answer_file(snapshot, name, file, &files) {
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

/// `skillserve check [--json]`: what the scan found plus the Agent Skills
/// rules ([`lint`]), grouped by file; exit 1 when there is an error.
pub fn check(
    snapshot: &Snapshot,
    max_file_bytes: u64,
    json: bool,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    let mut diagnostics = snapshot.diagnostics.clone();
    diagnostics.extend(lint::lint(snapshot, max_file_bytes));
    let count = |severity| {
        diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    };
    let (errors, warnings, notes) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Note),
    );
    let code = if errors > 0 {
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

    if json {
        let report = json!({
            "skills": snapshot.skills().len(),
            "errors": errors,
            "warnings": warnings,
            "notes": notes,
            "diagnostics": by_file.values().flatten().collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
        return Ok(code);
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
    if diagnostics.is_empty() {
        writeln!(
            out,
            "No problems found ({skills} skill{} served).",
            plural(skills)
        )?;
    } else {
        writeln!(
            out,
            "{errors} error{}, {warnings} warning{}, {notes} note{} in {} file{} ({skills} skill{} served).",
            plural(errors),
            plural(warnings),
            plural(notes),
            by_file.len(),
            plural(by_file.len()),
            plural(skills),
        )?;
    }
    Ok(code)
}
