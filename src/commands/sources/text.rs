//! What the sources commands print (behaviour.md, "Sources"): the plan of
//! `add` (each skill's name, description, files, scripts and findings), the
//! changes of `update` (per skill unchanged, changed with a unified diff of
//! its `SKILL.md`, new or gone), and the table of `sources`. Words only: the
//! values are [`crate::sources`]'.

use std::io::{self, Write};

use std::path::Path;

use crate::exit_codes::ExitCode;
use crate::lock::{Lock, SourceKind};
use crate::render::human_size;
use crate::sources::{Candidate, Pending, Plan, State, Status, StoreStatus, Synced, short};
use crate::text::{plural, printable};

/// Longest description shown in a plan.
const DESCRIPTION_CHARS: usize = 100;
/// Scripts named in a plan line before "and N more".
const SCRIPTS_NAMED: usize = 3;
/// Lines of a `SKILL.md` diff shown before the rest is counted.
const DIFF_LINES: usize = 200;

/// The plan of `add`.
pub fn write_plan(out: &mut dyn Write, plan: &Plan) -> io::Result<()> {
    let request = &plan.request;
    let fetched = &plan.fetched;
    let location = &request.location;
    match location.kind {
        SourceKind::Git => {
            let reference = request.reference.as_deref().unwrap_or("the default branch");
            writeln!(
                out,
                "Source: {} ({}, commit {})",
                printable(&location.url),
                printable(reference),
                short(&fetched.version)
            )?;
        }
        SourceKind::Index => writeln!(
            out,
            "Source: {} (index {})",
            printable(&location.url),
            short(&fetched.version)
        )?,
    }
    write_signature(out, &fetched.signature)?;
    if let Some(subdir) = &request.subdir {
        writeln!(out, "Looking in: {}", printable(subdir))?;
    }
    let candidates = plan.candidates();
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

fn write_skipped(out: &mut dyn Write, fetched: &crate::sources::Fetched) -> io::Result<()> {
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

/// `Signed-by: principal (key)` under `Source:`, or what was found of a
/// signature that is not trusted.
fn write_signature(
    out: &mut dyn Write,
    signature: &crate::sources::signature::Signature,
) -> io::Result<()> {
    match (&signature.signer, &signature.note) {
        (Some(signer), _) => writeln!(out, "Signed-by: {}", printable(&signer.label())),
        (None, Some(note)) => writeln!(out, "Signature: {} (not required)", printable(note)),
        (None, None) => Ok(()),
    }
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", text[..end].trim_end()),
        None => text.to_owned(),
    }
}

/// The changes of one source, as `update` shows them.
pub fn write_changes(out: &mut dyn Write, pending: &Pending) -> io::Result<()> {
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
    if pending.has_changes() {
        let signature = &pending.fetched.signature;
        if pending.signer_changed() {
            let was = source.signer.as_ref().map_or(String::new(), |s| s.label());
            match &signature.signer {
                Some(now) => writeln!(
                    out,
                    "  signer changed: {} (was {})",
                    printable(&now.label()),
                    printable(&was)
                )?,
                None => writeln!(
                    out,
                    "  signer changed: {} (was {})",
                    printable(signature.note.as_deref().unwrap_or("no trusted signer")),
                    printable(&was)
                )?,
            }
        } else {
            write_signature(out, signature)?;
        }
    }
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
                let scripts = &change.scripts;
                if !scripts.is_empty() {
                    writeln!(
                        out,
                        "      scripts changed: {} (review them before installing)",
                        printable(&scripts.join(", "))
                    )?;
                }
                if let Some(text) = &change.skill_md {
                    write_diff(out, &text.unified())?;
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

/// The table of `skillserve sources`, then where the lock and the store
/// are.
pub fn write_sources(
    out: &mut dyn Write,
    lock: &Lock,
    lock_path: &Path,
    store: &Path,
) -> io::Result<()> {
    if lock.sources.is_empty() {
        let project = match crate::lock::Scope::of(lock_path) {
            crate::lock::Scope::User => "",
            crate::lock::Scope::Project => " --project",
        };
        writeln!(
            out,
            "No sources are installed in {}; add one with `skillserve add{project} owner/repo`.",
            lock_path.display()
        )?;
        return Ok(());
    }
    let rows: Vec<[String; 8]> = lock
        .sources
        .iter()
        .map(|s| {
            [
                s.id.clone(),
                s.kind.to_string(),
                printable(&s.url).into_owned(),
                s.reference
                    .as_deref()
                    .map_or_else(|| "-".into(), |r| printable(r).into_owned()),
                short(&s.version).to_owned(),
                s.skills.len().to_string(),
                s.signer.as_ref().map_or_else(
                    || "-".into(),
                    |signer| printable(&signer.label()).into_owned(),
                ),
                s.updated.clone(),
            ]
        })
        .collect();
    let header = [
        "ID",
        "KIND",
        "URL",
        "REF",
        "VERSION",
        "SKILLS",
        "SIGNED-BY",
        "UPDATED",
    ];
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
        lock_path.display(),
        store.display()
    )
}

/// How the store stands against one lock (`sync`, `sync --check`).
pub fn write_status(out: &mut dyn Write, status: &StoreStatus, prune: bool) -> io::Result<()> {
    writeln!(out, "Lock: {}", status.lock.display())?;
    if status.sources.is_empty() {
        writeln!(out, "  no sources")?;
    }
    let width = status.sources.iter().map(|s| s.id.len()).max().unwrap_or(0);
    for source in &status.sources {
        let total = source.skills.len();
        let present = source
            .skills
            .iter()
            .filter(|s| s.state == State::Present)
            .count();
        let mut line = format!(
            "  {:<width$}  {present} of {total} skill{} in the store",
            source.id,
            plural(total)
        );
        let missing: Vec<&str> = source
            .skills
            .iter()
            .filter(|s| s.state == State::Missing)
            .map(|s| s.name.as_str())
            .collect();
        if !missing.is_empty() {
            line.push_str(&format!("; missing: {}", missing.join(", ")));
        }
        let damaged: Vec<&str> = source
            .skills
            .iter()
            .filter(|s| matches!(s.state, State::Tampered(_)))
            .map(|s| s.name.as_str())
            .collect();
        if !damaged.is_empty() {
            line.push_str(&format!("; changed in the store: {}", damaged.join(", ")));
        }
        writeln!(out, "{}", printable(&line))?;
    }
    if prune && !status.unreferenced.is_empty() {
        let n = status.unreferenced.len();
        writeln!(
            out,
            "  {n} store entr{} no lock names",
            if n == 1 { "y" } else { "ies" }
        )?;
    }
    Ok(())
}

/// The end of `sync --check`: whether the store and the locks differ.
pub fn write_check(out: &mut dyn Write, lacking: usize, extra: usize) -> io::Result<ExitCode> {
    if lacking == 0 && extra == 0 {
        writeln!(out, "The store holds exactly what the locks pin.")?;
        return Ok(ExitCode::Success);
    }
    let mut parts = Vec::new();
    if lacking > 0 {
        parts.push(format!(
            "{lacking} skill{} the locks pin {} missing or changed in the store",
            plural(lacking),
            if lacking == 1 { "is" } else { "are" }
        ));
    }
    if extra > 0 {
        parts.push(format!(
            "{extra} store entr{} no lock names",
            if extra == 1 { "y" } else { "ies" }
        ));
    }
    let fix = if extra > 0 {
        "skillserve sync --prune"
    } else {
        "skillserve sync"
    };
    writeln!(
        out,
        "{}; run `{fix}` to install exactly what they pin.",
        parts.join("; ")
    )?;
    Ok(ExitCode::StoreDiffers)
}

/// What `sync` did for one lock.
pub fn write_synced(out: &mut dyn Write, synced: &Synced) -> io::Result<()> {
    for source in &synced.sources {
        if !source.installed.is_empty() {
            writeln!(
                out,
                "Source '{}' ({}): installed {}",
                source.id,
                printable(&source.source),
                printable(&source.installed.join(", "))
            )?;
        }
        for refused in &source.refused {
            writeln!(
                out,
                "Source '{}' ({}): refused skill '{}': {}",
                source.id,
                printable(&source.source),
                printable(&refused.skill),
                printable(&refused.why)
            )?;
        }
    }
    if synced.removed > 0 {
        writeln!(
            out,
            "Removed {} store entr{} that no lock names.",
            synced.removed,
            if synced.removed == 1 { "y" } else { "ies" }
        )?;
    }
    Ok(())
}
