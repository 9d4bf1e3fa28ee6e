//! Sources: skills from git repositories and published indexes, reviewed
//! before they are installed, locked, and kept in a content-addressed store
//! (behaviour.md, "Sources"). The commands `add`, `update`, `remove`, `sources`
//! and `publish` live here; the lock's format is `lock`'s, and what `serve`
//! reads back (the lock and the store) is `installed`.
//!
//! Every command that changes installed skills works the same way: fetch
//! into a temporary folder ([`fetch`]), show the plan, get the user's yes
//! ([`Confirm`]), then write the store entries ([`store`]) and, last, the
//! lock (`lock::LockFile`) in one atomic rename. A failure before that rename
//! leaves the lock as it was; at worst unreferenced store entries remain,
//! which the next command removes.

mod archive;
mod fetch;
mod found;
mod git;
mod http;
mod index;
mod location;
mod plan;
mod publish;
mod store;

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::config::{Config, Env};
use crate::exit_codes::ExitCode;
use crate::installed::{self, Paths, Record};
use crate::lock::{self, Lock, LockError, LockFile, Locked, LockedSkill, SaveError, SourceKind};
use crate::program::SearchEnv;
use crate::text::plural;

pub use fetch::{Fetched, Request};
pub use found::is_script;
pub use location::Location;
pub use plan::{Change, Status};
pub use publish::publish;

/// Why a sources command stopped. Each says what went wrong, where, and
/// what to do, on one line; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{0}; fix the file by hand (or restore it from a backup); nothing was changed")]
    Lock(#[from] LockError),
    #[error(
        "cannot find your config and data folders (HOME is not set): set HOME, or XDG_CONFIG_HOME and XDG_DATA_HOME"
    )]
    NoFolders,
    #[error(
        "cannot tell what `{0}` is: give owner/repo (GitHub), a git URL, the path of a local git checkout, or https://host for a published index"
    )]
    UnknownSource(String),
    #[error(
        "the `git` program was not found: install git (https://git-scm.com/downloads) and make sure it is on PATH"
    )]
    GitMissing,
    #[error("git could not fetch {url}: {message}{hint}")]
    Git {
        url: String,
        message: String,
        hint: String,
    },
    #[error("could not fetch {url}: {message}")]
    Http { url: String, message: String },
    #[error("{url}: {problem}")]
    Index { url: String, problem: String },
    #[error("{}", no_skills(url, subdir.as_deref(), skipped))]
    NoSkills {
        url: String,
        subdir: Option<String>,
        skipped: Vec<String>,
    },
    #[error(
        "{url} has no skill named {}; it has: {}",
        quoted(unknown),
        if available.is_empty() { "none".to_owned() } else { available.join(", ") }
    )]
    UnknownSkills {
        url: String,
        unknown: Vec<String>,
        available: Vec<String>,
    },
    #[error("{0}")]
    Usage(String),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("nothing was {done}: {why}")]
    NotConfirmed { done: &'static str, why: String },
    #[error(
        "nothing was {done}: {} {} error-level security findings (shown above); review them, then run again with --allow-risky to install anyway, or leave {} out with --skill",
        quoted(skills),
        if skills.len() == 1 { "has" } else { "have" },
        if skills.len() == 1 { "it" } else { "them" }
    )]
    Risky {
        done: &'static str,
        skills: Vec<String>,
    },
}

impl From<SaveError> for SourceError {
    fn from(err: SaveError) -> SourceError {
        match err {
            SaveError::Lock(err) => SourceError::Lock(err),
            SaveError::Changed { .. } => SourceError::Usage(err.to_string()),
            SaveError::Write { path, source } => SourceError::Io { path, source },
        }
    }
}

fn quoted(names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    names.join(", ")
}

fn no_skills(url: &str, subdir: Option<&str>, skipped: &[String]) -> String {
    let place = match subdir {
        Some(subdir) => format!("{url} (in {subdir})"),
        None => url.to_owned(),
    };
    let mut out = format!(
        "no skills found in {place}: a skill is a folder with a SKILL.md (up to four levels down, or listed in .claude-plugin/marketplace.json)"
    );
    if !skipped.is_empty() {
        out.push_str("; folders that could not be used: ");
        out.push_str(&skipped.join("; "));
    }
    out
}

/// What the sources commands work with.
#[derive(Clone, Debug)]
pub struct Context {
    pub paths: Paths,
    /// `--max-file-bytes`: the scan's cap on a `SKILL.md`.
    pub max_file_bytes: u64,
    /// Where relative paths of a local checkout start.
    pub cwd: PathBuf,
    /// Where `git` is looked for.
    pub search: SearchEnv,
}

impl Context {
    /// The context for `config`; an error when the user's folders are
    /// unknown.
    pub fn new(config: &Config, env: &Env) -> Result<Context, SourceError> {
        Ok(Context {
            paths: Paths::of(&config.folders).ok_or(SourceError::NoFolders)?,
            max_file_bytes: config.max_file_bytes,
            cwd: env.cwd.clone(),
            search: SearchEnv::from_env(env),
        })
    }
}

/// How a command that changes installed skills gets the user's yes.
pub enum Confirm<'a> {
    /// `--yes`.
    Given,
    /// On a terminal: asks the question, returns the answer.
    Ask(&'a mut dyn FnMut(&str) -> io::Result<bool>),
    /// No terminal and no `--yes`: the plan is shown, nothing is done.
    NoTerminal,
}

impl Confirm<'_> {
    /// Whether to go ahead; `done` names what would not happen
    /// ("installed", "updated", "removed").
    fn get(&mut self, question: &str, done: &'static str) -> Result<(), SourceError> {
        match self {
            Confirm::Given => Ok(()),
            Confirm::NoTerminal => Err(SourceError::NotConfirmed {
                done,
                why: "there is no terminal to ask on; run again with --yes to go ahead".into(),
            }),
            Confirm::Ask(ask) => match ask(question) {
                Ok(true) => Ok(()),
                Ok(false) => Err(SourceError::NotConfirmed {
                    done,
                    why: "you said no".into(),
                }),
                Err(err) => Err(SourceError::NotConfirmed {
                    done,
                    why: format!("no answer ({err})"),
                }),
            },
        }
    }
}

/// Options of `skillserve add`.
#[derive(Clone, Debug, Default)]
pub struct AddOptions {
    pub source: String,
    pub id: Option<String>,
    pub reference: Option<String>,
    pub subdir: Option<String>,
    pub skills: Vec<String>,
    pub allow_risky: bool,
}

/// `skillserve add`: fetch, show the plan, and on the user's yes install.
pub fn add(
    context: &Context,
    options: &AddOptions,
    confirm: &mut Confirm<'_>,
    out: &mut dyn Write,
) -> Result<ExitCode, SourceError> {
    let location = Location::parse(&options.source, &context.cwd)?;
    let mut lock = LockFile::open(&context.paths.lock)?;
    let id = match &options.id {
        Some(id) if !lock::is_source_id(id) => {
            return Err(SourceError::Usage(format!(
                "--id {id}: an id is 1-64 lowercase letters, digits, `-` and `_`"
            )));
        }
        Some(id) => id.clone(),
        None => location.default_id(),
    };
    check_new(&lock.lock, &location, options, &id)?;
    let request = Request {
        location: location.clone(),
        id: id.clone(),
        reference: options.reference.clone(),
        subdir: options.subdir.clone(),
        picked: options.skills.clone(),
    };
    let fetched = fetch::fetch(context, &request, None)?;
    plan::write_plan(out, &request, &fetched)?;
    let candidates = &fetched.found.candidates;
    let risky: Vec<String> = candidates
        .iter()
        .filter(|c| c.is_risky())
        .map(|c| c.name.clone())
        .collect();
    if !risky.is_empty() && !options.allow_risky {
        return Err(SourceError::Risky {
            done: "installed",
            skills: risky,
        });
    }
    out.flush().map_err(output)?;
    let question = format!(
        "Install {} skill{} as source '{id}'?",
        candidates.len(),
        plural(candidates.len())
    );
    confirm.get(&question, "installed")?;

    let now = lock::now();
    let locked = Locked {
        id: id.clone(),
        kind: location.kind,
        url: location.url.clone(),
        reference: options.reference.clone(),
        version: fetched.version.clone(),
        subdir: options.subdir.clone(),
        picked: options.skills.clone(),
        allow_risky: options.allow_risky,
        added: now.clone(),
        updated: now,
        skills: candidates.iter().map(locked_skill).collect(),
    };
    let mut record = Record::read(&context.paths.record());
    for candidate in candidates {
        store::write_entry(&context.paths, candidate, &mut record)?;
    }
    lock.set_source(&locked);
    lock.save()?;
    finish(context, &lock.lock, &mut record)?;
    writeln!(
        out,
        "Installed {} skill{} from {} as source '{id}'. `skillserve update {id}` fetches them again; `skillserve remove {id}` removes them.",
        candidates.len(),
        plural(candidates.len()),
        locked.label()
    )
    .map_err(output)?;
    Ok(ExitCode::Success)
}

/// Refuses a source that is already installed, or an id already taken.
fn check_new(
    lock: &Lock,
    location: &Location,
    options: &AddOptions,
    id: &str,
) -> Result<(), SourceError> {
    let same = lock.sources.iter().find(|s| {
        s.url == location.url && s.reference == options.reference && s.subdir == options.subdir
    });
    if let Some(same) = same {
        return Err(SourceError::Usage(format!(
            "{} is already installed as source '{}'; `skillserve update {}` fetches it again",
            location.url, same.id, same.id
        )));
    }
    if let Some(taken) = lock.source(id) {
        return Err(SourceError::Usage(format!(
            "there is already a source called '{id}' ({}); choose another name with --id",
            taken.url
        )));
    }
    Ok(())
}

fn locked_skill(candidate: &found::Candidate) -> LockedSkill {
    LockedSkill {
        name: candidate.name.clone(),
        path: candidate.path.clone(),
        digest: candidate.digest.clone(),
        artifact: candidate.artifact.clone(),
    }
}

/// After the lock was written: drop what nothing refers to, and record
/// the lock and the entries as verified.
fn finish(context: &Context, lock: &Lock, record: &mut Record) -> Result<(), SourceError> {
    store::collect(&context.paths, lock, record)?;
    // The record only saves time at the next start: failing to write it
    // is not the command's failure.
    if let Err(err) = installed::record_lock(&context.paths, lock, record) {
        tracing::warn!(
            "could not write {}: {err}",
            context.paths.record().display()
        );
    }
    Ok(())
}

fn output(err: io::Error) -> SourceError {
    SourceError::Io {
        path: PathBuf::from("<stdout>"),
        source: err,
    }
}

/// Options of `skillserve update`.
#[derive(Clone, Debug, Default)]
pub struct UpdateOptions {
    /// The sources to update; empty: all.
    pub ids: Vec<String>,
    /// Only say whether there are updates (exit 10 when there are).
    pub check: bool,
    pub allow_risky: bool,
}

/// A source fetched again and compared with what is installed: what
/// [`apply`] writes. Build one with [`prepare`].
#[derive(Debug)]
pub struct Pending {
    /// The source as locked now.
    pub source: Locked,
    pub fetched: Fetched,
    /// Per skill, in name order.
    pub changes: Vec<Change>,
}

impl Pending {
    /// Whether any skill changed, appeared or went away.
    pub fn has_changes(&self) -> bool {
        self.changes.iter().any(|c| c.status != Status::Unchanged)
    }

    /// The names of new or changed skills with error-level security
    /// findings.
    pub fn risky(&self) -> Vec<String> {
        self.changes
            .iter()
            .filter(|c| c.status != Status::Unchanged && c.status != Status::Gone)
            .filter_map(|c| c.candidate.map(|i| &self.fetched.found.candidates[i]))
            .filter(|c| c.is_risky())
            .map(|c| c.name.clone())
            .collect()
    }

    /// The source as it will be locked once applied.
    fn locked(&self, allow_risky: bool) -> Locked {
        let candidates = &self.fetched.found.candidates;
        Locked {
            version: self.fetched.version.clone(),
            allow_risky: self.source.allow_risky || allow_risky,
            updated: lock::now(),
            skills: candidates.iter().map(locked_skill).collect(),
            ..self.source.clone()
        }
    }
}

/// Fetches the source `id` of the lock at `context.paths.lock` again and
/// compares it with what is installed; changes nothing. A blocking call
/// (it runs git or downloads), usable from any thread.
pub fn prepare(context: &Context, lock: &Lock, id: &str) -> Result<Pending, SourceError> {
    let source = lock.source(id).ok_or_else(|| unknown_source(lock, id))?;
    let fetched = fetch::fetch(context, &Request::again(source), Some(source))?;
    let changes = plan::compare(context, source, &fetched);
    Ok(Pending {
        source: source.clone(),
        fetched,
        changes,
    })
}

/// Installs what `pending` fetched: the store entries first, then the lock
/// in one atomic rename, then unreferenced entries are removed. Sources
/// without changes are left as they are. Error-level security findings in
/// new or changed skills need `allow_risky`.
pub fn apply(context: &Context, pending: &[Pending], allow_risky: bool) -> Result<(), SourceError> {
    let risky: Vec<String> = pending.iter().flat_map(Pending::risky).collect();
    if !risky.is_empty() && !allow_risky {
        return Err(SourceError::Risky {
            done: "updated",
            skills: risky,
        });
    }
    let mut lock = LockFile::open(&context.paths.lock)?;
    let mut record = Record::read(&context.paths.record());
    for update in pending.iter().filter(|p| p.has_changes()) {
        if lock.lock.source(&update.source.id) != Some(&update.source) {
            return Err(SourceError::Usage(format!(
                "source '{}' changed in {} while it was being fetched; nothing was updated: run the command again",
                update.source.id,
                context.paths.lock.display()
            )));
        }
        for candidate in &update.fetched.found.candidates {
            store::write_entry(&context.paths, candidate, &mut record)?;
        }
        lock.set_source(&update.locked(allow_risky));
    }
    lock.save()?;
    finish(context, &lock.lock, &mut record)
}

/// What [`auto_update`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum AutoUpdated {
    /// Nothing changed upstream.
    Unchanged,
    /// The source now holds what its remote holds (the number of skills
    /// changed, new or gone).
    Applied { changed: usize },
}

/// Fetches the source `id` again and installs any change without asking:
/// for a server that keeps a source up to date on a schedule. Blocking;
/// on any error nothing changes (the last good version stays served). New
/// error-level security findings are refused unless the source was added
/// with `--allow-risky`.
pub fn auto_update(context: &Context, id: &str) -> Result<AutoUpdated, SourceError> {
    let lock = lock::read(&context.paths.lock)?.unwrap_or_default();
    let pending = prepare(context, &lock, id)?;
    if !pending.has_changes() {
        return Ok(AutoUpdated::Unchanged);
    }
    let changed = pending
        .changes
        .iter()
        .filter(|c| c.status != Status::Unchanged)
        .count();
    let allow_risky = pending.source.allow_risky;
    apply(context, &[pending], allow_risky)?;
    Ok(AutoUpdated::Applied { changed })
}

fn unknown_source(lock: &Lock, id: &str) -> SourceError {
    let ids: Vec<&str> = lock.sources.iter().map(|s| s.id.as_str()).collect();
    SourceError::Usage(if ids.is_empty() {
        format!(
            "there is no source '{id}': no sources are installed (add one with `skillserve add owner/repo`)"
        )
    } else {
        format!(
            "there is no source '{id}'; installed sources: {}",
            ids.join(", ")
        )
    })
}

/// `skillserve update [ID]... [--check]`: fetch again, show per skill what
/// changed, and on the user's yes install it.
pub fn update(
    context: &Context,
    options: &UpdateOptions,
    confirm: &mut Confirm<'_>,
    out: &mut dyn Write,
) -> Result<ExitCode, SourceError> {
    let lock = lock::read(&context.paths.lock)?.unwrap_or_default();
    let ids: Vec<String> = if options.ids.is_empty() {
        lock.sources.iter().map(|s| s.id.clone()).collect()
    } else {
        for id in &options.ids {
            lock.source(id).ok_or_else(|| unknown_source(&lock, id))?;
        }
        options.ids.clone()
    };
    if ids.is_empty() {
        writeln!(
            out,
            "No sources are installed; add one with `skillserve add owner/repo`."
        )
        .map_err(output)?;
        return Ok(ExitCode::Success);
    }
    // Everything is fetched before anything is shown or written: a source
    // that cannot be fetched stops the command with nothing changed.
    let mut pending = Vec::with_capacity(ids.len());
    for id in &ids {
        pending.push(prepare(context, &lock, id)?);
    }
    for update in &pending {
        plan::write_changes(out, update)?;
    }
    let changed: usize = pending
        .iter()
        .map(|p| {
            p.changes
                .iter()
                .filter(|c| c.status != Status::Unchanged)
                .count()
        })
        .sum();
    let sources = pending.iter().filter(|p| p.has_changes()).count();
    if changed == 0 {
        writeln!(out, "Everything is up to date.").map_err(output)?;
        return Ok(ExitCode::Success);
    }
    let summary = format!(
        "{changed} skill{} to update in {sources} source{}",
        plural(changed),
        plural(sources)
    );
    if options.check {
        writeln!(
            out,
            "{summary}; run `skillserve update` to review and install them."
        )
        .map_err(output)?;
        return Ok(ExitCode::UpdatesAvailable);
    }
    writeln!(out, "{summary}.").map_err(output)?;
    let risky: Vec<String> = pending.iter().flat_map(Pending::risky).collect();
    if !risky.is_empty() && !options.allow_risky {
        return Err(SourceError::Risky {
            done: "updated",
            skills: risky,
        });
    }
    out.flush().map_err(output)?;
    confirm.get("Install these updates?", "updated")?;
    apply(context, &pending, options.allow_risky)?;
    for update in pending.iter().filter(|p| p.has_changes()) {
        writeln!(
            out,
            "Updated source '{}' to {}.",
            update.source.id,
            plan::short(&update.fetched.version)
        )
        .map_err(output)?;
    }
    Ok(ExitCode::Success)
}

/// `skillserve remove ID`: drop a source and the store entries nothing
/// else refers to.
pub fn remove(
    context: &Context,
    id: &str,
    confirm: &mut Confirm<'_>,
    out: &mut dyn Write,
) -> Result<ExitCode, SourceError> {
    let mut lock = LockFile::open(&context.paths.lock)?;
    let source = lock
        .lock
        .source(id)
        .cloned()
        .ok_or_else(|| unknown_source(&lock.lock, id))?;
    let names: Vec<&str> = source.skills.iter().map(|s| s.name.as_str()).collect();
    writeln!(
        out,
        "Source '{id}' ({}) and its {} skill{}: {}",
        source.url,
        names.len(),
        plural(names.len()),
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    )
    .map_err(output)?;
    out.flush().map_err(output)?;
    confirm.get(&format!("Remove source '{id}'?"), "removed")?;
    lock.remove_source(id);
    lock.save()?;
    let mut record = Record::read(&context.paths.record());
    finish(context, &lock.lock, &mut record)?;
    writeln!(out, "Removed source '{id}'.").map_err(output)?;
    Ok(ExitCode::Success)
}

/// One source in `skillserve sources --json`.
#[derive(Serialize)]
struct SourceItem<'a> {
    id: &'a str,
    kind: SourceKind,
    url: &'a str,
    #[serde(rename = "ref")]
    reference: Option<&'a str>,
    version: &'a str,
    path: Option<&'a str>,
    picked: &'a [String],
    allow_risky: bool,
    added: &'a str,
    updated: &'a str,
    skills: Vec<SkillItem<'a>>,
}

#[derive(Serialize)]
struct SkillItem<'a> {
    name: &'a str,
    path: &'a str,
    digest: &'a str,
}

/// `skillserve sources [--json]`: the installed sources.
pub fn list(context: &Context, json: bool, out: &mut dyn Write) -> Result<ExitCode, SourceError> {
    let lock = lock::read(&context.paths.lock)?.unwrap_or_default();
    if json {
        let items: Vec<SourceItem> = lock
            .sources
            .iter()
            .map(|s| SourceItem {
                id: &s.id,
                kind: s.kind,
                url: &s.url,
                reference: s.reference.as_deref(),
                version: &s.version,
                path: s.subdir.as_deref(),
                picked: &s.picked,
                allow_risky: s.allow_risky,
                added: &s.added,
                updated: &s.updated,
                skills: s
                    .skills
                    .iter()
                    .map(|k| SkillItem {
                        name: &k.name,
                        path: &k.path,
                        digest: &k.digest,
                    })
                    .collect(),
            })
            .collect();
        serde_json::to_writer_pretty(&mut *out, &items)
            .map_err(|err| output(io::Error::other(err)))?;
        writeln!(out).map_err(output)?;
        return Ok(ExitCode::Success);
    }
    plan::write_sources(out, &lock, &context.paths).map_err(output)?;
    Ok(ExitCode::Success)
}
