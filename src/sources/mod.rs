//! Sources: skills from git repositories and published indexes, reviewed
//! before they are installed, locked, and kept in a content-addressed store
//! (behaviour.md, "Sources"). The commands `add`, `update`, `remove`, `sources`
//! and `publish` live here; the lock's format is `lock`'s, and what `serve`
//! reads back (the lock and the store) is `installed`.
//!
//! Every command that changes installed skills works the same way: fetch
//! into a temporary folder ([`fetch`]) and return what would change (the
//! [`Plan`] of `add`, the [`Pending`] report of `update`) without writing
//! anything; then, once a person said yes (the command line asks on the
//! terminal, the skills app on its page), write the store entries
//! ([`store`]) and, last, the lock (`lock::LockFile`) in one atomic rename.
//! A failure before that rename leaves the lock as it was; at worst
//! unreferenced store entries remain, which the next command removes.
//!
//! These are library functions that return what happened and print
//! nothing: `commands::sources` words them for the terminal, and the
//! skills app's tools return them as structured content.

mod add;
mod archive;
mod changes;
mod fetch;
mod found;
mod git;
mod http;
mod index;
mod location;
mod publish;
mod store;
mod update;

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::config::{Config, Env};
use crate::installed::{self, Paths, Record};
use crate::lock::{self, Lock, LockError, LockFile, Locked, SaveError, SourceKind};
use crate::program::SearchEnv;

pub use add::{AddOptions, Installed, Plan, install, plan};
pub use changes::{Change, Hunk, Line, Row, RowKind, SideBySide, Status, TextChange, short};
pub use fetch::{Fetched, Request};
pub use found::{Candidate, Shown, Skipped, is_script};
pub use location::Location;
pub use publish::publish;
pub use update::{
    AutoUpdated, Pending, UpdateOptions, Updated, apply, auto_update, prepare, prepare_all,
};

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

/// The installed sources, as `sources.lock` holds them (none when there is
/// no lock).
pub fn installed(context: &Context) -> Result<Lock, SourceError> {
    Ok(lock::read(&context.paths.lock)?.unwrap_or_default())
}

/// The installed source `id`; an unknown id is an error naming the
/// installed ones.
pub fn source(context: &Context, id: &str) -> Result<Locked, SourceError> {
    let lock = installed(context)?;
    lock.source(id)
        .cloned()
        .ok_or_else(|| unknown_source(&lock, id))
}

/// What [`remove`] did.
#[derive(Clone, Debug, Serialize)]
pub struct Removed {
    pub id: String,
    pub url: String,
    /// The skills it held, which are no longer installed.
    pub skills: Vec<String>,
    /// The lock written.
    pub lock: PathBuf,
}

/// Removes the source `id` from the lock (in one rename), then the store
/// entries no other source uses.
pub fn remove(context: &Context, id: &str) -> Result<Removed, SourceError> {
    let mut lock = LockFile::open(&context.paths.lock)?;
    let source = lock
        .lock
        .source(id)
        .cloned()
        .ok_or_else(|| unknown_source(&lock.lock, id))?;
    lock.remove_source(id);
    lock.save()?;
    let mut record = Record::read(&context.paths.record());
    finish(context, &lock.lock, &mut record)?;
    Ok(Removed {
        id: source.id,
        url: source.url,
        skills: source.skills.into_iter().map(|s| s.name).collect(),
        lock: context.paths.lock.clone(),
    })
}

/// One source as `skillserve sources --json` and the skills app list it.
#[derive(Serialize)]
pub struct Listed<'a> {
    pub id: &'a str,
    pub kind: SourceKind,
    pub url: &'a str,
    #[serde(rename = "ref")]
    pub reference: Option<&'a str>,
    pub version: &'a str,
    pub path: Option<&'a str>,
    pub picked: &'a [String],
    pub allow_risky: bool,
    pub added: &'a str,
    pub updated: &'a str,
    pub skills: Vec<ListedSkill<'a>>,
}

#[derive(Serialize)]
pub struct ListedSkill<'a> {
    pub name: &'a str,
    pub path: &'a str,
    pub digest: &'a str,
}

/// Every source of `lock`, listed.
pub fn listed(lock: &Lock) -> Vec<Listed<'_>> {
    lock.sources
        .iter()
        .map(|s| Listed {
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
                .map(|k| ListedSkill {
                    name: &k.name,
                    path: &k.path,
                    digest: &k.digest,
                })
                .collect(),
        })
        .collect()
}
