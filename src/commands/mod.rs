//! The commands of the command line, one function each, which `main`
//! calls: `list`, `show`, `check`, `config`, `enable` and `disable` (front
//! ends over one snapshot, as one client sees it, and the settings, for
//! people debugging their setup), `stats` (what was used), `trust`, the
//! sources commands (`add`, `update`, `remove`, `sources`, `publish`:
//! [`sources`]) and `token new`. They write to the streams they are given
//! and return the exit code; they never log. Where a command changes
//! something another front end (the skills app) also changes, the change is
//! a library function that returns what happened ([`toggle`]), and the
//! command only words it.

mod list;
mod security;
mod settings;
mod sources;
mod stats;
mod token;

pub use list::ListOptions;
pub use settings::{Switch, ToggleError, ToggleRequest, Toggled, config, enable_disable, toggle};
pub use sources::{SyncOptions, WhichLock, add, publish, remove, sources, sync, update};
pub use stats::{
    DAYS as STATS_DAYS, DEFAULT_DAYS as STATS_DEFAULT_DAYS, Stats, StatsError, stats, stats_command,
};
pub use token::token_new;

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use crate::answer::{self, Answer, FileAnswer};
use crate::config::Settings;
use crate::contents::Contents;
use crate::diagnostic::{Diagnostic, Severity};
use crate::exit_codes::ExitCode;
use crate::files::Files;
use crate::installed::Verify;
use crate::lint;
use crate::profiles::{self, Decision, Key, Profiles, View};
use crate::render::Base;
use crate::roots::Origin;
use crate::scan;
use crate::security::FileFinding;
use crate::snapshot::{self, Cache, Snapshot};
use crate::text::{plural, printable, printable_path};
use crate::trust::{self, Confirm};

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

/// Where a command writes, and how it asks the user.
pub struct Console<'a> {
    /// stdout: what the command reports.
    pub out: &'a mut dyn Write,
    /// stderr: errors, warnings, notes and questions.
    pub err: &'a mut dyn Write,
    /// stdin: the answers to questions.
    pub input: &'a mut dyn BufRead,
    /// Whether `input` is a terminal, where a person can answer; without
    /// one, a command that needs a yes shows its plan and changes nothing.
    pub interactive: bool,
}

/// What one client is offered, from a snapshot loaded now: the client named
/// by `--client`, or one that matches no profile.
struct ClientView {
    profiles: Profiles,
    snapshot: Arc<Snapshot>,
    key: Key,
    /// "Offered to NAME: …" and where its catalog goes, when a client was
    /// named.
    header: Option<String>,
}

impl ClientView {
    fn load(settings: &Settings, client: Option<&str>) -> ClientView {
        let snapshot = Arc::new(snapshot::load(
            &settings.config,
            &mut Cache::default(),
            None,
        ));
        // The catalog over its budget is ordered by use, as the server's.
        let ranks = crate::usage::path(&settings.config.folders)
            .filter(|_| settings.serve.usage)
            .map(|path| crate::usage::Ranks::read(&path))
            .unwrap_or_default();
        let profiles = Profiles::new(settings).ranked(Arc::new(ranks));
        let name = client.map(profiles::client_name);
        let key = profiles.key(name.as_deref());
        let header = name.map(|name| {
            format!(
                "Offered to {name}: {}\n{}",
                profiles.describe(key),
                profiles.describe_catalog(key, &name)
            )
        });
        ClientView {
            profiles,
            snapshot,
            key,
            header,
        }
    }

    fn view(&self) -> View {
        self.profiles.view(&self.snapshot, self.key)
    }

    fn decide(&self) -> Decision<'_> {
        self.profiles.decide(&self.snapshot, self.key)
    }
}

/// `skillserve list --description`: the `skill` tool's description exactly as
/// the client receives it, for checking it against a client's own limits.
pub fn description(
    settings: &Settings,
    client: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    writeln!(
        out,
        "{}",
        ClientView::load(settings, client).view().description()
    )?;
    Ok(ExitCode::Success)
}

/// `skillserve list --instructions`: the server's `instructions` exactly as
/// the client receives them (with the catalog when it goes there).
pub fn instructions(
    settings: &Settings,
    client: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    writeln!(
        out,
        "{}",
        ClientView::load(settings, client).view().instructions()
    )?;
    Ok(ExitCode::Success)
}

/// `skillserve list [--json] [--all] [--client NAME]`: the skills a client
/// is offered, and with `--all` the others and why (`list::write`).
pub fn list(
    settings: &Settings,
    client: Option<&str>,
    options: ListOptions,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    let client = ClientView::load(settings, client);
    list::write(
        &client.view(),
        &client.decide(),
        client.header.as_deref(),
        settings.config.max_file_bytes,
        options,
        out,
    )
}

/// `skillserve show NAME [FILE] [--client NAME]`: [`show_answer`] on what
/// that client is offered.
pub fn show(
    settings: &Settings,
    client: Option<&str>,
    name: &str,
    file: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    let client = ClientView::load(settings, client);
    show_answer(
        &client.view(),
        &client.decide(),
        name,
        file,
        settings.config.max_file_bytes,
        out,
        err,
    )
}

/// `skillserve check [--json] [--security]` on the skills found now, every
/// installed skill's files hashed ([`check_snapshot`]).
pub fn check(
    settings: &Settings,
    format: Format,
    security: bool,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    let mut cache = Cache::default();
    let snapshot = snapshot::load_with(&settings.config, &mut cache, None, Verify::Full);
    let scan = security.then_some(&mut cache.security);
    check_snapshot(&snapshot, settings.config.max_file_bytes, format, scan, out)
}

/// `skillserve trust --list` ([`trust::list`]) on the skills found now.
pub fn trust_list(settings: &Settings, console: &mut Console) -> io::Result<ExitCode> {
    let mut cache = Cache::default();
    let snapshot = snapshot::load(&settings.config, &mut cache, None);
    trust::list(
        &snapshot,
        &cache.security,
        &settings.config,
        console.out,
        console.err,
    )
}

/// `skillserve trust NAME [--yes]` ([`trust::trust`]) on the skills found
/// now: with `--yes` at once, on a terminal after asking, else not at all.
pub fn trust(
    settings: &Settings,
    name: &str,
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let mut cache = Cache::default();
    let snapshot = snapshot::load(&settings.config, &mut cache, None);
    let confirm = if yes {
        Confirm::Yes
    } else if console.interactive {
        Confirm::Ask(&mut *console.input)
    } else {
        Confirm::No
    };
    trust::trust(
        &snapshot,
        &cache.security,
        &settings.config,
        name,
        confirm,
        console.out,
        console.err,
    )
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

/// What `skillserve show NAME [FILE]` prints: the text blocks a `skill` call (with
/// `file` when FILE is given) returns, on stdout when it succeeds and on
/// stderr (exit 1) when it is an error. Each block ends with a line break
/// (one is added when the text has none) and blocks are separated by a blank
/// line. An image is not printed: its text block says what it is. When the
/// name finds nothing because the client is not shown the skill, a `note:`
/// line on stderr says why (`decision`); the client itself only reads "not
/// found".
fn show_answer(
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
            FileAnswer::File { text, .. }
            | FileAnswer::Text(text)
            | FileAnswer::Image { text, .. } => {
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
    let lock = match origin.scope {
        crate::lock::Scope::User => "",
        crate::lock::Scope::Project => " of skills.lock",
    };
    let signed = origin
        .signed_by()
        .map_or_else(String::new, |label| format!(", signed by {label}"));
    format!(
        "from source '{}'{lock}: {} ({}){signed}",
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
fn check_snapshot(
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
