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
mod credentials;
mod fetch;
mod found;
mod git;
mod http;
mod index;
mod location;
mod publish;
pub mod signature;
mod store;
mod sync;
mod update;

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::config::{Env, Settings, SignatureSettings, Vars};
use crate::installed::{self, Paths, Record};
use crate::lock::{self, Lock, LockError, LockFile, Locked, SaveError, Scope, SourceKind, Trust};
use crate::program::SearchEnv;
use crate::text;

pub use add::{AddOptions, Installed, Plan, install, plan};
pub use changes::{Change, Hunk, Line, Row, RowKind, SideBySide, Status, TextChange, short};
pub use fetch::{Fetched, Request};
pub use found::{Candidate, Shown, Skipped, is_script};
pub use location::Location;
pub use publish::publish;
pub use sync::{
    Refused, SkillState, SourceState, SourceSynced, State, StoreStatus, Synced, status, sync,
};
pub use update::{
    AutoUpdated, Pending, UpdateOptions, Updated, apply, auto_update, prepare, prepare_all,
};

/// Why a sources command stopped. Each says what went wrong, where, and
/// what to do, on one line; nothing was changed.
///
/// Much of it comes from the source: git's messages (which quote the
/// repository's folder names), an archive's entry paths, an index's names,
/// URLs, digests and `$schema`. So the text is escaped whole
/// ([`text::printable`]): whoever shows an error (the command line, a
/// server's log, the skills app) shows no control character a source put
/// there, and an escape sequence cannot forge a line.
#[derive(Debug)]
pub enum SourceError {
    Lock(LockError),
    NoFolders,
    UnknownSource(String),
    GitMissing,
    Git {
        url: String,
        message: String,
        hint: String,
    },
    Http {
        url: String,
        message: String,
    },
    Index {
        url: String,
        problem: String,
    },
    NoSkills {
        url: String,
        subdir: Option<String>,
        skipped: Vec<String>,
    },
    UnknownSkills {
        url: String,
        unknown: Vec<String>,
        available: Vec<String>,
    },
    Signature {
        subject: String,
        problem: String,
        hint: String,
    },
    SignerChanged {
        id: String,
        recorded: String,
        now: String,
    },
    Usage(String),
    Io {
        path: PathBuf,
        source: io::Error,
    },
    NotConfirmed {
        done: &'static str,
        why: String,
    },
    Risky {
        done: &'static str,
        skills: Vec<String>,
    },
}

impl SourceError {
    /// The text, before it is escaped.
    fn words(&self) -> String {
        match self {
            SourceError::Lock(err) => format!(
                "{err}; fix the file by hand (or restore it from a backup); nothing was changed"
            ),
            SourceError::NoFolders => "cannot find your config and data folders (HOME is not set): set HOME, or XDG_CONFIG_HOME and XDG_DATA_HOME".into(),
            SourceError::UnknownSource(source) => format!(
                "cannot tell what `{source}` is: give owner/repo (GitHub), a git URL, the path of a local git checkout, or https://host for a published index"
            ),
            SourceError::GitMissing => "the `git` program was not found: install git (https://git-scm.com/downloads) and make sure it is on PATH".into(),
            SourceError::Git { url, message, hint } => {
                format!("git could not fetch {url}: {message}{hint}")
            }
            SourceError::Http { url, message } => format!("could not fetch {url}: {message}"),
            SourceError::Index { url, problem } => format!("{url}: {problem}"),
            SourceError::NoSkills {
                url,
                subdir,
                skipped,
            } => no_skills(url, subdir.as_deref(), skipped),
            SourceError::UnknownSkills {
                url,
                unknown,
                available,
            } => format!(
                "{url} has no skill named {}; it has: {}",
                quoted(unknown),
                if available.is_empty() {
                    "none".to_owned()
                } else {
                    available.join(", ")
                }
            ),
            SourceError::Signature {
                subject,
                problem,
                hint,
            } => format!("{subject}: {problem}; {hint}"),
            SourceError::SignerChanged { id, recorded, now } => format!(
                "the new version of source '{id}' {now}, but {recorded} signed what is installed; nothing was changed: if its publisher changed keys, run `skillserve update {id} --allow-signer-change`"
            ),
            SourceError::Usage(text) => text.clone(),
            SourceError::Io { path, source } => format!("{}: {source}", path.display()),
            SourceError::NotConfirmed { done, why } => format!("nothing was {done}: {why}"),
            SourceError::Risky { done, skills } => format!(
                "nothing was {done}: {} {} error-level security findings (shown above); review them, then run again with --allow-risky to install anyway, or leave {} out with --skill",
                quoted(skills),
                if skills.len() == 1 { "has" } else { "have" },
                if skills.len() == 1 { "it" } else { "them" }
            ),
        }
    }
}

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&text::printable(&self.words()))
    }
}

impl std::error::Error for SourceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SourceError::Lock(err) => Some(err),
            SourceError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<LockError> for SourceError {
    fn from(err: LockError) -> SourceError {
        SourceError::Lock(err)
    }
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
    /// The user's lock and the store.
    pub paths: Paths,
    /// The lock the commands read and change: the user's (`paths.lock`)
    /// or a project's `skills.lock`.
    pub lock: PathBuf,
    /// For a project's lock, the project's folder (where the lock's
    /// relative paths start).
    pub project: Option<PathBuf>,
    /// `--max-file-bytes`: the scan's cap on a `SKILL.md`.
    pub max_file_bytes: u64,
    /// Where relative paths of a local checkout start.
    pub cwd: PathBuf,
    /// Where `git` and `ssh-keygen` are looked for.
    pub search: SearchEnv,
    /// `trusted_signers`, `revoked_signers`, `require_signature` of
    /// `config.toml`.
    pub signatures: SignatureSettings,
    /// The environment, for the `$VAR` of an index's headers, read when
    /// a command fetches.
    pub vars: Vars,
    /// The home folder (`~/.netrc`).
    pub home: Option<PathBuf>,
}

impl Context {
    /// The context of the user's lock; an error when the user's folders
    /// are unknown.
    pub fn new(settings: &Settings, env: &Env) -> Result<Context, SourceError> {
        let config = &settings.config;
        let paths = Paths::of(&config.folders).ok_or(SourceError::NoFolders)?;
        Ok(Context {
            lock: paths.lock.clone(),
            paths,
            project: None,
            max_file_bytes: config.max_file_bytes,
            cwd: env.cwd.clone(),
            search: SearchEnv::from_env(env),
            signatures: settings.signatures.clone(),
            vars: env.vars.clone(),
            home: env.home.dir.clone(),
        })
    }

    /// The context of the project's `skills.lock`, at the root of the
    /// project the settings name (the repository's top folder, or the
    /// project folder itself outside a repository).
    pub fn for_project(settings: &Settings, env: &Env) -> Result<Context, SourceError> {
        let mut context = Context::new(settings, env)?;
        let dir = settings.config.project_dir.as_ref().ok_or_else(|| {
            SourceError::Usage(
                "--project needs a project folder: run the command inside the project (or give --project-dir), without --no-project".into(),
            )
        })?;
        let root = project_root(dir);
        context.lock = root.join(lock::PROJECT_FILE_NAME);
        context.project = Some(root);
        Ok(context)
    }

    /// Whose lock this context changes.
    pub fn scope(&self) -> Scope {
        match self.project {
            Some(_) => Scope::Project,
            None => Scope::User,
        }
    }

    /// The signature policy of the source `id` whose lock says `trust`.
    pub fn policy(&self, trust: &Trust, id: &str) -> signature::Policy {
        let base = self.project.as_deref().unwrap_or(std::path::Path::new("/"));
        signature::Policy::of(trust, self.scope(), base, &self.signatures, id)
    }
}

/// The folder a project's `skills.lock` is in: the top of the project's
/// folders (the repository's, or `dir` itself outside a repository).
pub fn project_root(dir: &std::path::Path) -> PathBuf {
    crate::roots::project_dirs(dir)
        .pop()
        .unwrap_or_else(|| dir.to_path_buf())
}

/// After the lock was written: drop what no lock refers to, and record
/// the lock and the entries as verified.
fn finish(context: &Context, lock: &Lock, record: &mut Record) -> Result<(), SourceError> {
    if context.project.is_some() {
        store::register_project(&context.paths, &context.lock)?;
    }
    if let Some(locks) = store::locks_in_use(&context.paths, &context.lock, lock) {
        store::collect(&context.paths, &locks, record)?;
    }
    // The record only saves time at the next start: failing to write it
    // is not the command's failure. It keeps the user's lock as parsed.
    let recorded = match context.scope() {
        Scope::User => installed::record_lock(&context.paths, lock, record),
        Scope::Project => record.write(&context.paths.record()),
    };
    if let Err(err) = recorded {
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
    Ok(lock::read(&context.lock)?.unwrap_or_default())
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
    let mut lock = LockFile::open(&context.lock, &context.paths.store)?;
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
        lock: context.lock.clone(),
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
    pub trusted_signers: Option<&'a str>,
    pub revoked_signers: Option<&'a str>,
    pub require_signature: bool,
    pub signed_by: Option<&'a crate::lock::Signer>,
    /// `NAME: $VARIABLE`, as `add --header` was given (never a secret).
    pub headers: Vec<String>,
    pub netrc: bool,
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
            trusted_signers: s.trust.trusted_signers.as_deref(),
            revoked_signers: s.trust.revoked_signers.as_deref(),
            require_signature: s.trust.require_signature,
            signed_by: s.signer.as_ref(),
            headers: s.access.headers.iter().map(|h| h.text()).collect(),
            netrc: s.access.netrc,
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
