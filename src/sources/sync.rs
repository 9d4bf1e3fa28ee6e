//! `sync`: the store made to hold exactly what a lock pins (behaviour.md,
//! "sync"). [`status`] compares the lock with the store without touching
//! the network; [`sync`] fetches, for each source that lacks something,
//! the version the lock pins — the commit (or the tag a signature came
//! with), or the index's artifacts the lock names — checks the signer the
//! lock records, and installs each missing skill whose files hash to the
//! digest the lock pins; any other is refused, by name. The lock itself is
//! never changed: that is `update`'s job.

use std::path::PathBuf;

use serde::Serialize;

use crate::installed::{self, EntryProblem, Record};
use crate::lock::{self, Lock, Locked, LockedSkill, Scope, SignedObject, SourceKind};

use super::changes::short;
use super::fetch::{self, Request};
use super::{Context, SourceError, store};

/// Where one skill of the lock stands in the store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "state", content = "why")]
pub enum State {
    /// Its entry holds exactly its files.
    Present,
    /// The store has no entry for it.
    Missing,
    /// Its entry's files are not what its digest says.
    Tampered(String),
}

/// One skill of the lock and its entry.
#[derive(Clone, Debug, Serialize)]
pub struct SkillState {
    pub name: String,
    pub digest: String,
    #[serde(flatten)]
    pub state: State,
}

/// One source of the lock and its skills' entries.
#[derive(Clone, Debug, Serialize)]
pub struct SourceState {
    pub id: String,
    pub url: String,
    pub version: String,
    pub skills: Vec<SkillState>,
}

impl SourceState {
    /// The skills whose entries must be installed (again).
    pub fn lacking(&self) -> impl Iterator<Item = &SkillState> {
        self.skills.iter().filter(|s| s.state != State::Present)
    }
}

/// How the store stands against one lock.
#[derive(Clone, Debug, Serialize)]
pub struct StoreStatus {
    pub lock: PathBuf,
    pub scope: Scope,
    pub sources: Vec<SourceState>,
    /// Store entries that no lock in use names (what `--prune` removes).
    pub unreferenced: Vec<String>,
    /// The lock, as read.
    #[serde(skip)]
    pub read: Lock,
}

impl StoreStatus {
    /// How many skills the store lacks (missing or damaged entries).
    pub fn lacking(&self) -> usize {
        self.sources.iter().map(|s| s.lacking().count()).sum()
    }
}

/// Compares the lock of `context` with the store: every entry hashed (a
/// lock is small; this is what `sync --check` promises). No network.
pub fn status(context: &Context) -> Result<StoreStatus, SourceError> {
    let read = lock::read(&context.lock)?.unwrap_or_default();
    let sources = read
        .sources
        .iter()
        .map(|source| SourceState {
            id: source.id.clone(),
            url: source.url.clone(),
            version: source.version.clone(),
            skills: source
                .skills
                .iter()
                .map(|skill| SkillState {
                    name: skill.name.clone(),
                    digest: skill.digest.clone(),
                    state: match installed::verify_entry(
                        &context.paths.entry(&skill.digest),
                        &skill.digest,
                    ) {
                        Ok(_) => State::Present,
                        Err(EntryProblem::Missing) => State::Missing,
                        Err(EntryProblem::Tampered(why)) => State::Tampered(why),
                    },
                })
                .collect(),
        })
        .collect();
    let unreferenced = match store::locks_in_use(&context.paths, &context.lock, &read) {
        Some(locks) => store::entries(&context.paths)?
            .into_iter()
            .filter(|digest| !locks.iter().any(|l| l.references(digest)))
            .collect(),
        None => Vec::new(),
    };
    Ok(StoreStatus {
        lock: context.lock.clone(),
        scope: context.scope(),
        sources,
        unreferenced,
        read,
    })
}

/// Why a skill of the lock was not installed.
#[derive(Clone, Debug, Serialize)]
pub struct Refused {
    pub skill: String,
    pub why: String,
}

/// What [`sync`] did for one source.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SourceSynced {
    pub id: String,
    /// `url@version`, as the lock pins it.
    pub source: String,
    /// The skills installed (again).
    pub installed: Vec<String>,
    /// The skills refused, each with why.
    pub refused: Vec<Refused>,
}

/// What [`sync`] did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Synced {
    pub lock: PathBuf,
    /// The sources that lacked something, in lock order.
    pub sources: Vec<SourceSynced>,
    /// Store entries removed (`prune`).
    pub removed: usize,
}

impl Synced {
    /// Whether a skill was refused.
    pub fn refused(&self) -> bool {
        self.sources.iter().any(|s| !s.refused.is_empty())
    }
}

/// Installs what `status` found lacking, source by source; with `prune`,
/// then removes the store entries no lock names. A source that cannot be
/// fetched, whose pinned commit is gone, or whose signer is not the one
/// the lock records has all its lacking skills refused; the others go on.
pub fn sync(context: &Context, status: &StoreStatus, prune: bool) -> Result<Synced, SourceError> {
    // Held to the end: an `add` beside it writes its entries before its
    // lock names them, and this prune must not fall between the two.
    let _editing = store::lock_editors(&context.paths)?;
    let mut record = Record::read(&context.paths.record());
    let mut out = Synced {
        lock: status.lock.clone(),
        ..Synced::default()
    };
    for state in &status.sources {
        let lacking: Vec<&str> = state.lacking().map(|s| s.digest.as_str()).collect();
        if lacking.is_empty() {
            continue;
        }
        let source = status
            .read
            .source(&state.id)
            .expect("the status was made from this lock");
        let missing: Vec<&LockedSkill> = source
            .skills
            .iter()
            .filter(|s| lacking.contains(&s.digest.as_str()))
            .collect();
        out.sources
            .push(sync_source(context, source, &missing, &mut record)?);
    }
    if context.project.is_some() && !status.read.sources.is_empty() {
        store::register_project(&context.paths, &context.lock)?;
    }
    if prune {
        // Read again, under the store's lock: a command that ran since
        // `status` read it may have added entries it names.
        let read = lock::read(&context.lock)?.unwrap_or_default();
        if let Some(locks) = store::locks_in_use(&context.paths, &context.lock, &read) {
            out.removed = store::collect(&context.paths, &locks, &mut record)?;
        }
    }
    if let Err(err) = record.write(&context.paths.record()) {
        tracing::warn!(
            "could not write {}: {err}",
            context.paths.record().display()
        );
    }
    Ok(out)
}

/// Fetches the version of `source` the lock pins and installs `missing`.
fn sync_source(
    context: &Context,
    source: &Locked,
    missing: &[&LockedSkill],
    record: &mut Record,
) -> Result<SourceSynced, SourceError> {
    let mut out = SourceSynced {
        id: source.id.clone(),
        source: source.label(),
        ..SourceSynced::default()
    };
    let refuse_all = |out: &mut SourceSynced, why: String| {
        out.refused = missing
            .iter()
            .map(|s| Refused {
                skill: s.name.clone(),
                why: why.clone(),
            })
            .collect();
    };
    let mut request = Request::again(source);
    let by_tag = source
        .signer
        .as_ref()
        .is_some_and(|s| s.object == SignedObject::Tag);
    match source.kind {
        // The tag a signature came with (checked to point at the pinned
        // commit below), else the pinned commit itself.
        SourceKind::Git if !by_tag => request.reference = Some(source.version.clone()),
        SourceKind::Git => {}
        SourceKind::Index => {
            request.only_artifacts =
                Some(missing.iter().filter_map(|s| s.artifact.clone()).collect());
        }
    }
    // Every skill is matched by its place, whatever `--skill` picked.
    request.picked = Vec::new();
    let fetched = match fetch::fetch(context, &request, Some(source)) {
        Ok(fetched) => fetched,
        Err(err) => {
            refuse_all(&mut out, pinned_failure(source, by_tag, err));
            return Ok(out);
        }
    };
    if source.kind == SourceKind::Git && fetched.version != source.version {
        refuse_all(
            &mut out,
            format!(
                "tag {} now points at commit {}, but the lock pins commit {}; run `skillserve update {}` to review the change",
                source.reference.as_deref().unwrap_or("?"),
                short(&fetched.version),
                short(&source.version),
                source.id
            ),
        );
        return Ok(out);
    }
    if let Some(recorded) = &source.signer {
        let now = fetched.signature.signer.as_ref();
        if now.is_none_or(|now| now.key != recorded.key) {
            let signed = match now {
                Some(now) => format!("is signed by {}", now.label()),
                None => "is not signed by a trusted signer".into(),
            };
            refuse_all(
                &mut out,
                format!(
                    "the lock records {} as its signer, but what {} serves now {signed}",
                    recorded.label(),
                    source.url
                ),
            );
            return Ok(out);
        }
    }
    let candidates = &fetched.found.candidates;
    for skill in missing {
        let candidate = match source.kind {
            SourceKind::Git => candidates.iter().find(|c| c.path == skill.path),
            SourceKind::Index => candidates.iter().find(|c| c.artifact == skill.artifact),
        };
        let why = match candidate {
            Some(candidate) if candidate.digest == skill.digest => {
                store::write_entry(&context.paths, candidate, record)?;
                out.installed.push(skill.name.clone());
                continue;
            }
            Some(candidate) => format!(
                "its files hash to {}, but the lock pins {}",
                candidate.digest, skill.digest
            ),
            None => match source.kind {
                SourceKind::Git => format!(
                    "commit {} has no skill at `{}`",
                    short(&source.version),
                    skill.path
                ),
                SourceKind::Index => format!(
                    "{} no longer lists the artifact the lock pins ({}); run `skillserve update {}` to review what it lists now",
                    source.url,
                    skill.artifact.as_deref().unwrap_or("?"),
                    source.id
                ),
            },
        };
        out.refused.push(Refused {
            skill: skill.name.clone(),
            why,
        });
    }
    Ok(out)
}

/// Why the pinned version could not be fetched: a commit the remote no
/// longer has is said as such.
fn pinned_failure(source: &Locked, by_tag: bool, err: SourceError) -> String {
    if let SourceError::Git { message, .. } = &err {
        let lower = message.to_ascii_lowercase();
        let gone = lower.contains("not our ref")
            || lower.contains("couldn't find remote ref")
            || lower.contains("no such remote ref")
            || lower.contains("unadvertised object");
        if gone && !by_tag {
            return format!(
                "commit {} that the lock pins is no longer in {} (git: {message}); it was probably rewritten away upstream: run `skillserve update {}` to install what the source holds now",
                source.version, source.url, source.id
            );
        }
    }
    err.to_string()
}
