//! What the sources commands show before they change anything: the plan of
//! `add` (each skill's name, description, files, scripts and findings), the
//! changes of `update` (per skill unchanged, changed with a diff of its
//! `SKILL.md`, new or gone), and the table of `sources` (behaviour.md, "Sources").

use std::collections::BTreeMap;
use std::io::{self, Write};

use similar::TextDiff;

use crate::installed::{self, Paths};
use crate::lock::{self, Lock, Locked, SourceKind};
use crate::render::human_size;
use crate::roots::SKILL_FILES;
use crate::text::{plural, printable};

use super::fetch::{Fetched, Request};
use super::found::{Candidate, is_script};
use super::{Context, Pending, SourceError, output};

/// Longest description shown in a plan.
const DESCRIPTION_CHARS: usize = 100;
/// Scripts named in a plan line before "and N more".
const SCRIPTS_NAMED: usize = 3;
/// Lines of a `SKILL.md` diff shown before the rest is counted.
const DIFF_LINES: usize = 200;

/// The first 12 characters of a commit id; an index digest as it is.
pub fn short(version: &str) -> &str {
    if version.starts_with(crate::digest::PREFIX) {
        version
    } else {
        &version[..version.len().min(12)]
    }
}

/// The plan of `add`.
pub fn write_plan(
    out: &mut dyn Write,
    request: &Request,
    fetched: &Fetched,
) -> Result<(), SourceError> {
    write_plan_inner(out, request, fetched).map_err(output)
}

fn write_plan_inner(out: &mut dyn Write, request: &Request, fetched: &Fetched) -> io::Result<()> {
    let location = &request.location;
    match location.kind {
        SourceKind::Git => {
            let reference = request.reference.as_deref().unwrap_or("the default branch");
            writeln!(
                out,
                "Source: {} ({reference}, commit {})",
                location.url,
                short(&fetched.version)
            )?;
        }
        SourceKind::Index => writeln!(
            out,
            "Source: {} (index {})",
            location.url,
            short(&fetched.version)
        )?,
    }
    if let Some(subdir) = &request.subdir {
        writeln!(out, "Looking in: {subdir}")?;
    }
    let candidates = &fetched.found.candidates;
    writeln!(
        out,
        "\n{} skill{} to install as source '{}':\n",
        candidates.len(),
        plural(candidates.len()),
        request.id
    )?;
    let width = candidates
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(32);
    for candidate in candidates {
        write_candidate(out, candidate, location.kind, width)?;
    }
    write_skipped(out, fetched)?;
    writeln!(out)
}

/// One skill of a plan: name and description, then where it is, its
/// files and scripts, then its findings.
fn write_candidate(
    out: &mut dyn Write,
    candidate: &Candidate,
    kind: SourceKind,
    width: usize,
) -> io::Result<()> {
    writeln!(
        out,
        "  {:<width$}  {}",
        printable(&candidate.name),
        printable(&cut(&candidate.description, DESCRIPTION_CHARS))
    )?;
    let place = match (kind, candidate.path.as_str()) {
        (SourceKind::Git, "") => "the repository itself".to_owned(),
        (_, path) => path.to_owned(),
    };
    writeln!(
        out,
        "      {} · {} file{}, {}{}",
        printable(&place),
        candidate.files.len(),
        plural(candidate.files.len()),
        human_size(candidate.size()),
        scripts_note(candidate)
    )?;
    for finding in &candidate.findings {
        writeln!(out, "      {}", printable(&finding.to_string()))?;
    }
    Ok(())
}

/// `, scripts: a.py, b.sh` (or `, no scripts`).
fn scripts_note(candidate: &Candidate) -> String {
    let scripts: Vec<&str> = candidate.scripts().map(|f| f.path.as_str()).collect();
    if scripts.is_empty() {
        return ", no scripts".into();
    }
    let mut note = format!(", {} script{}: ", scripts.len(), plural(scripts.len()));
    note.push_str(&scripts[..scripts.len().min(SCRIPTS_NAMED)].join(", "));
    if scripts.len() > SCRIPTS_NAMED {
        note.push_str(&format!(" and {} more", scripts.len() - SCRIPTS_NAMED));
    }
    note
}

fn write_skipped(out: &mut dyn Write, fetched: &Fetched) -> io::Result<()> {
    if !fetched.found.skipped.is_empty() {
        writeln!(out, "\nNot installed:")?;
        for skipped in &fetched.found.skipped {
            writeln!(
                out,
                "  {}: {}",
                printable(&skipped.place),
                printable(&skipped.reason)
            )?;
        }
    }
    for note in &fetched.notes {
        writeln!(out, "Note: {}", printable(note))?;
    }
    Ok(())
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", text[..end].trim_end()),
        None => text.to_owned(),
    }
}

/// What happened to one skill between what is installed and what was
/// fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Unchanged,
    Changed,
    New,
    Gone,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Unchanged => "unchanged",
            Status::Changed => "changed",
            Status::New => "new",
            Status::Gone => "gone",
        }
    }
}

/// One skill of an update.
#[derive(Clone, Debug)]
pub struct Change {
    pub name: String,
    pub status: Status,
    /// The fetched skill (index into the fetched candidates), unless gone.
    pub candidate: Option<usize>,
    /// Files added, removed and changed (changed skills only).
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    /// The unified diff of `SKILL.md`, when it changed.
    pub skill_md: Option<String>,
    /// The store's copy could not be read: the diff is against nothing.
    pub store_damaged: bool,
}

impl Change {
    fn new(name: &str, status: Status, candidate: Option<usize>) -> Change {
        Change {
            name: name.to_owned(),
            status,
            candidate,
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
            skill_md: None,
            store_damaged: false,
        }
    }

    /// Scripts added, removed or changed.
    pub fn scripts(&self) -> Vec<&str> {
        self.added
            .iter()
            .chain(&self.removed)
            .chain(&self.changed)
            .filter(|path| is_script(path, false))
            .map(String::as_str)
            .collect()
    }
}

/// Compares what `source` has installed with what was fetched: per skill
/// (matched by name, case-insensitively), in name order.
pub fn compare(context: &Context, source: &Locked, fetched: &Fetched) -> Vec<Change> {
    let mut changes: BTreeMap<String, Change> = BTreeMap::new();
    let candidates = &fetched.found.candidates;
    for (i, candidate) in candidates.iter().enumerate() {
        let old = source
            .skills
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(&candidate.name));
        let change = match old {
            None => Change::new(&candidate.name, Status::New, Some(i)),
            // The same files upstream, but the store's copy no longer
            // verifies: installed again (what `store-tampered` advises).
            Some(old) if old.digest == candidate.digest => {
                let entry = context.paths.entry(&old.digest);
                if installed::verify_entry(&entry, &old.digest).is_ok() {
                    Change::new(&candidate.name, Status::Unchanged, Some(i))
                } else {
                    let mut change = Change::new(&candidate.name, Status::Changed, Some(i));
                    change.store_damaged = true;
                    change
                }
            }
            Some(old) => diff(&context.paths, &old.digest, candidate, i),
        };
        changes.insert(candidate.name.to_lowercase(), change);
    }
    for old in &source.skills {
        changes
            .entry(old.name.to_lowercase())
            .or_insert_with(|| Change::new(&old.name, Status::Gone, None));
    }
    changes.into_values().collect()
}

/// A changed skill: its files compared with the store's copy.
fn diff(paths: &Paths, old_digest: &str, candidate: &Candidate, index: usize) -> Change {
    let mut change = Change::new(&candidate.name, Status::Changed, Some(index));
    let entry = paths.entry(old_digest);
    let old = match installed::verify_entry(&entry, old_digest) {
        Ok(verified) => verified.files,
        Err(_) => {
            change.store_damaged = true;
            Vec::new()
        }
    };
    for file in &candidate.files {
        match old.iter().find(|(path, _, _)| *path == file.path) {
            None => change.added.push(file.path.clone()),
            Some((_, sum, _)) if *sum != file.sum => change.changed.push(file.path.clone()),
            Some(_) => {}
        }
    }
    for (path, _, _) in &old {
        if !candidate.files.iter().any(|f| f.path == *path) {
            change.removed.push(path.clone());
        }
    }
    let own = SKILL_FILES
        .iter()
        .find(|name| candidate.files.iter().any(|f| f.path == **name));
    if let Some(own) = own
        && (change.changed.iter().any(|p| p == own) || change.added.iter().any(|p| p == own))
    {
        let read = |path: std::path::PathBuf| {
            crate::disk::read_text(&path, lock::MAX_BYTES).unwrap_or_default()
        };
        let before = if change.store_damaged {
            String::new()
        } else {
            read(entry.join(own))
        };
        let after = read(candidate.dir.join(own));
        let text = TextDiff::from_lines(&before, &after)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{own}"), &format!("b/{own}"))
            .to_string();
        change.skill_md = Some(text);
    }
    change
}

/// The changes of one source, as `update` shows them.
pub fn write_changes(out: &mut dyn Write, pending: &Pending) -> Result<(), SourceError> {
    write_changes_inner(out, pending).map_err(output)
}

fn write_changes_inner(out: &mut dyn Write, pending: &Pending) -> io::Result<()> {
    let source = &pending.source;
    let version = if pending.has_changes() {
        format!(
            "{} → {}",
            short(&source.version),
            short(&pending.fetched.version)
        )
    } else {
        short(&source.version).to_owned()
    };
    writeln!(
        out,
        "Source '{}' ({}): {version}",
        source.id,
        printable(&source.url)
    )?;
    let candidates = &pending.fetched.found.candidates;
    for change in &pending.changes {
        write!(
            out,
            "  {:<9}  {}",
            change.status.word(),
            printable(&change.name)
        )?;
        match change.status {
            Status::Unchanged | Status::Gone => writeln!(out)?,
            Status::New => {
                let candidate = &candidates[change.candidate.expect("new skills are fetched")];
                writeln!(
                    out,
                    ": {} file{}, {}{}",
                    candidate.files.len(),
                    plural(candidate.files.len()),
                    human_size(candidate.size()),
                    scripts_note(candidate)
                )?;
                writeln!(
                    out,
                    "      {}",
                    printable(&cut(&candidate.description, DESCRIPTION_CHARS))
                )?;
                for finding in &candidate.findings {
                    writeln!(out, "      {}", printable(&finding.to_string()))?;
                }
            }
            Status::Changed => {
                let candidate = &candidates[change.candidate.expect("changed skills are fetched")];
                writeln!(
                    out,
                    ": {} file{} added, {} removed, {} changed",
                    change.added.len(),
                    plural(change.added.len()),
                    change.removed.len(),
                    change.changed.len()
                )?;
                if change.store_damaged {
                    writeln!(
                        out,
                        "      the store's copy was changed or is missing: it is installed again"
                    )?;
                }
                for (word, paths) in [
                    ("added", &change.added),
                    ("removed", &change.removed),
                    ("changed", &change.changed),
                ] {
                    for path in paths {
                        writeln!(out, "      {word} {}", printable(path))?;
                    }
                }
                let scripts = change.scripts();
                if !scripts.is_empty() {
                    writeln!(
                        out,
                        "      scripts changed: {} (review them before installing)",
                        printable(&scripts.join(", "))
                    )?;
                }
                if let Some(diff) = &change.skill_md {
                    write_diff(out, diff)?;
                }
                for finding in &candidate.findings {
                    writeln!(out, "      {}", printable(&finding.to_string()))?;
                }
            }
        }
    }
    if pending.has_changes() {
        write_skipped(out, &pending.fetched)?;
    }
    Ok(())
}

/// A unified diff, indented, at most [`DIFF_LINES`] lines.
fn write_diff(out: &mut dyn Write, diff: &str) -> io::Result<()> {
    let lines: Vec<&str> = diff.lines().collect();
    for line in lines.iter().take(DIFF_LINES) {
        writeln!(out, "      {}", printable(line))?;
    }
    if lines.len() > DIFF_LINES {
        writeln!(
            out,
            "      … and {} more lines of diff",
            lines.len() - DIFF_LINES
        )?;
    }
    Ok(())
}

/// The table of `skillserve sources`.
pub fn write_sources(out: &mut dyn Write, lock: &Lock, paths: &Paths) -> io::Result<()> {
    if lock.sources.is_empty() {
        writeln!(
            out,
            "No sources are installed; add one with `skillserve add owner/repo`."
        )?;
        return Ok(());
    }
    let rows: Vec<[String; 7]> = lock
        .sources
        .iter()
        .map(|s| {
            [
                s.id.clone(),
                s.kind.to_string(),
                printable(&s.url).into_owned(),
                s.reference.clone().unwrap_or_else(|| "-".into()),
                short(&s.version).to_owned(),
                s.skills.len().to_string(),
                s.updated.clone(),
            ]
        })
        .collect();
    let header = ["ID", "KIND", "URL", "REF", "VERSION", "SKILLS", "UPDATED"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut text = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  "));
            }
        }
        text
    };
    writeln!(out, "{}", line(&header))?;
    for row in &rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        writeln!(out, "{}", line(&cells))?;
    }
    writeln!(
        out,
        "\nLock: {}\nStore: {}",
        paths.lock.display(),
        paths.store.display()
    )
}
