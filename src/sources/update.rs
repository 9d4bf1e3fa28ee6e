//! `update`: each source fetched again exactly as it was added and compared
//! with what is installed ([`prepare`]: a [`Pending`] per source, the
//! change report a person reviews), then what was fetched installed
//! ([`apply`]); and [`auto_update`], the same without asking, for a server.

use serde::Serialize;
use serde::ser::SerializeStruct;
use sha2::{Digest, Sha256};

use crate::installed::Record;
use crate::lock::{self, Lock, LockFile, Locked};

use super::add::locked_skill;
use super::changes::{self, Change, Status};
use super::fetch::{self, Fetched, Request};
use super::signature;
use super::{Context, SourceError, finish, store, unknown_source};

/// Options of `skillserve update`.
#[derive(Clone, Debug, Default)]
pub struct UpdateOptions {
    /// The sources to update; empty: all.
    pub ids: Vec<String>,
    /// Only say whether there are updates (exit 10 when there are).
    pub check: bool,
    pub allow_risky: bool,
    /// `--allow-signer-change`: install a version signed by another key
    /// than the one recorded (or by no trusted key).
    pub allow_signer_change: bool,
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

    /// How many skills changed, appeared or went away.
    pub fn changed(&self) -> usize {
        self.changes
            .iter()
            .filter(|c| c.status != Status::Unchanged)
            .count()
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

    /// A digest of what applying installs: the source, the version it
    /// moves from and to, and each skill's name, status and digest.
    pub fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        for part in [
            self.source.id.as_str(),
            self.source.version.as_str(),
            self.fetched.version.as_str(),
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        for change in &self.changes {
            let digest = change
                .candidate
                .map_or("", |i| &self.fetched.found.candidates[i].digest);
            for part in [change.name.as_str(), change.status.word(), digest] {
                hasher.update(part.as_bytes());
                hasher.update([0]);
            }
            hasher.update(b"\n");
        }
        crate::digest::text(&hasher.finalize().into())
    }

    /// Whether what was fetched is signed by another key than the one
    /// recorded (or by no trusted key) — which `apply` refuses unless
    /// told otherwise.
    pub fn signer_changed(&self) -> bool {
        signature::check_change(
            &self.source.id,
            self.source.signer.as_ref(),
            self.fetched.signature.signer.as_ref(),
            false,
        )
        .is_err()
    }

    /// The refusal of a new signer, unless `allow` (`--allow-signer-change`).
    pub fn check_signer(&self, allow: bool) -> Result<(), SourceError> {
        signature::check_change(
            &self.source.id,
            self.source.signer.as_ref(),
            self.fetched.signature.signer.as_ref(),
            allow,
        )
    }

    /// The source as it will be locked once applied.
    fn locked(&self, allow_risky: bool) -> Locked {
        let candidates = &self.fetched.found.candidates;
        Locked {
            version: self.fetched.version.clone(),
            signer: self.fetched.signature.signer.clone(),
            allow_risky: self.source.allow_risky || allow_risky,
            updated: lock::now(),
            skills: candidates.iter().map(locked_skill).collect(),
            ..self.source.clone()
        }
    }
}

/// The change report as the skills app receives it: the source, the
/// versions, per skill its change (the `SKILL.md` diff side by side, the
/// scripts among the files that changed) and, for new and changed skills,
/// the fetched skill with its findings.
impl Serialize for Pending {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Entry<'a> {
            #[serde(flatten)]
            change: &'a Change,
            skill: Option<&'a super::found::Candidate>,
        }
        let candidates = &self.fetched.found.candidates;
        let entries: Vec<Entry> = self
            .changes
            .iter()
            .map(|change| Entry {
                change,
                skill: change
                    .candidate
                    .filter(|_| matches!(change.status, Status::Changed | Status::New))
                    .map(|i| &candidates[i]),
            })
            .collect();
        let mut out = serializer.serialize_struct("Pending", 12)?;
        out.serialize_field("id", &self.source.id)?;
        out.serialize_field("url", &self.source.url)?;
        out.serialize_field("from", &self.source.version)?;
        out.serialize_field("to", &self.fetched.version)?;
        out.serialize_field("signed_by", &self.fetched.signature.signer)?;
        out.serialize_field("signer_changed", &self.signer_changed())?;
        out.serialize_field("has_changes", &self.has_changes())?;
        out.serialize_field("changes", &entries)?;
        out.serialize_field("skipped", &self.fetched.found.skipped)?;
        out.serialize_field("notes", &self.fetched.notes)?;
        out.serialize_field("risky", &self.risky())?;
        out.serialize_field("digest", &self.digest())?;
        out.end()
    }
}

/// Fetches the source `id` of `lock` again and compares it with what is
/// installed; changes nothing. A blocking call (it runs git or
/// downloads), usable from any thread.
pub fn prepare(context: &Context, lock: &Lock, id: &str) -> Result<Pending, SourceError> {
    let source = lock.source(id).ok_or_else(|| unknown_source(lock, id))?;
    let fetched = fetch::fetch(context, &Request::again(source), Some(source))?;
    let changes = changes::compare(context, source, &fetched);
    Ok(Pending {
        source: source.clone(),
        fetched,
        changes,
    })
}

/// [`prepare`] for each source of `ids` (every source when empty), all
/// fetched before anything is returned: a source that cannot be fetched
/// is the error, with nothing changed. An unknown id is an error naming
/// the installed ones; no sources at all is an empty list.
pub fn prepare_all(context: &Context, ids: &[String]) -> Result<Vec<Pending>, SourceError> {
    let lock = lock::read(&context.lock)?.unwrap_or_default();
    let ids: Vec<String> = if ids.is_empty() {
        lock.sources.iter().map(|s| s.id.clone()).collect()
    } else {
        for id in ids {
            lock.source(id).ok_or_else(|| unknown_source(&lock, id))?;
        }
        ids.to_vec()
    };
    ids.iter().map(|id| prepare(context, &lock, id)).collect()
}

/// One source [`apply`] moved to a new version.
#[derive(Clone, Debug, Serialize)]
pub struct Updated {
    pub id: String,
    pub from: String,
    pub to: String,
    /// Skills changed, new or gone.
    pub changed: usize,
}

/// Installs what `pending` fetched: the store entries first, then the lock
/// in one atomic rename, then unreferenced entries are removed. Sources
/// without changes are left as they are; one whose entry in the lock
/// changed since it was fetched stops it all, nothing written. Error-level
/// security findings in new or changed skills need `allow_risky`; a source
/// now signed by another key than the one recorded needs
/// `allow_signer_change`.
pub fn apply(
    context: &Context,
    pending: &[Pending],
    allow_risky: bool,
    allow_signer_change: bool,
) -> Result<Vec<Updated>, SourceError> {
    for update in pending.iter().filter(|p| p.has_changes()) {
        update.check_signer(allow_signer_change)?;
    }
    let risky: Vec<String> = pending.iter().flat_map(Pending::risky).collect();
    if !risky.is_empty() && !allow_risky {
        return Err(SourceError::Risky {
            done: "updated",
            skills: risky,
        });
    }
    let mut lock = LockFile::open(&context.lock, &context.paths.store)?;
    let mut record = Record::read(&context.paths.record());
    let mut updated = Vec::new();
    for update in pending.iter().filter(|p| p.has_changes()) {
        if lock.lock.source(&update.source.id) != Some(&update.source) {
            return Err(SourceError::Usage(format!(
                "source '{}' changed in {} while it was being fetched; nothing was updated: run the command again",
                update.source.id,
                context.lock.display()
            )));
        }
        for candidate in &update.fetched.found.candidates {
            store::write_entry(&context.paths, candidate, &mut record)?;
        }
        lock.set_source(&update.locked(allow_risky));
        updated.push(Updated {
            id: update.source.id.clone(),
            from: update.source.version.clone(),
            to: update.fetched.version.clone(),
            changed: update.changed(),
        });
    }
    lock.save()?;
    finish(context, &lock.lock, &mut record)?;
    Ok(updated)
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
/// with `--allow-risky`, and a new signer always is (a person must say
/// yes to it: `update --allow-signer-change`).
pub fn auto_update(context: &Context, id: &str) -> Result<AutoUpdated, SourceError> {
    let lock = lock::read(&context.lock)?.unwrap_or_default();
    let pending = prepare(context, &lock, id)?;
    if !pending.has_changes() {
        return Ok(AutoUpdated::Unchanged);
    }
    let changed = pending.changed();
    let allow_risky = pending.source.allow_risky;
    apply(context, &[pending], allow_risky, false)?;
    Ok(AutoUpdated::Applied { changed })
}
