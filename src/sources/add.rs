//! `add`: a source fetched and its skills found ([`plan`]: the [`Plan`],
//! which a person reviews), then installed exactly as planned
//! ([`install`]: the store entries from the plan's own files, each hashed
//! again as it is copied, then the lock).

use std::path::PathBuf;

use serde::Serialize;
use serde::ser::SerializeStruct;
use sha2::{Digest, Sha256};

use crate::installed::Record;
use crate::lock::{self, Access, Lock, LockFile, Locked, LockedSkill, Scope, Trust};

use super::fetch::{self, Fetched, Request};
use super::found::Candidate;
use super::location::Location;
use super::{Context, SourceError, finish, store};

/// Options of `skillserve add`.
#[derive(Clone, Debug, Default)]
pub struct AddOptions {
    pub source: String,
    pub id: Option<String>,
    pub reference: Option<String>,
    pub subdir: Option<String>,
    pub skills: Vec<String>,
    /// `--allow-risky`: what [`install`] is given.
    pub allow_risky: bool,
    /// `--trusted-signers`, `--revoked-signers` (absolute, or relative to
    /// the project for a project's lock) and `--require-signature`.
    pub trust: Trust,
    /// `--header` and `--netrc` (index sources).
    pub access: Access,
}

/// A source fetched, with the skills that would be installed from it:
/// what `add` shows before it asks. It holds the fetched files (in a
/// temporary folder, removed with it) until [`install`] copies them.
#[derive(Debug)]
pub struct Plan {
    pub request: Request,
    pub fetched: Fetched,
}

impl Plan {
    /// The skills to install, in name order.
    pub fn candidates(&self) -> &[Candidate] {
        &self.fetched.found.candidates
    }

    /// The names of skills with error-level security findings (those
    /// need `allow_risky`).
    pub fn risky(&self) -> Vec<String> {
        self.candidates()
            .iter()
            .filter(|c| c.is_risky())
            .map(|c| c.name.clone())
            .collect()
    }

    /// The refusal of a plan with risky skills, unless `allow_risky`.
    pub fn check_risky(&self, allow_risky: bool) -> Result<(), SourceError> {
        let risky = self.risky();
        if risky.is_empty() || allow_risky {
            return Ok(());
        }
        Err(SourceError::Risky {
            done: "installed",
            skills: risky,
        })
    }

    /// A digest of what the plan installs: the source, its version, and
    /// each skill's name, place and digest. Two plans with the same digest
    /// install the same files under the same names.
    pub fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        let location = &self.request.location;
        for part in [
            self.request.id.as_str(),
            location.kind.as_str(),
            location.url.as_str(),
            self.request.reference.as_deref().unwrap_or(""),
            self.request.subdir.as_deref().unwrap_or(""),
            self.fetched.version.as_str(),
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        for candidate in self.candidates() {
            for part in [&candidate.name, &candidate.path, &candidate.digest] {
                hasher.update(part.as_bytes());
                hasher.update([0]);
            }
            hasher.update(b"\n");
        }
        crate::digest::text(&hasher.finalize().into())
    }
}

/// A plan as the skills app receives it: the source, the version
/// fetched, each skill with its files, scripts and findings, what was not
/// installable, and the plan's [`digest`](Plan::digest).
impl Serialize for Plan {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = &self.request;
        let mut out = serializer.serialize_struct("Plan", 12)?;
        out.serialize_field("id", &request.id)?;
        out.serialize_field("kind", &request.location.kind)?;
        out.serialize_field("url", &request.location.url)?;
        out.serialize_field("reference", &request.reference)?;
        out.serialize_field("subdir", &request.subdir)?;
        out.serialize_field("picked", &request.picked)?;
        out.serialize_field("version", &self.fetched.version)?;
        out.serialize_field("skills", self.candidates())?;
        out.serialize_field("skipped", &self.fetched.found.skipped)?;
        out.serialize_field("notes", &self.fetched.notes)?;
        out.serialize_field("risky", &self.risky())?;
        out.serialize_field("digest", &self.digest())?;
        out.end()
    }
}

/// What [`install`] did.
#[derive(Clone, Debug, Serialize)]
pub struct Installed {
    /// The source's id.
    pub id: String,
    /// `url@version`.
    pub source: String,
    /// The skills installed, in name order.
    pub skills: Vec<String>,
    /// The lock written.
    pub lock: PathBuf,
}

/// Fetches the source `options` names and finds its skills; changes
/// nothing. Blocking (it runs git or downloads). Refuses an id that is
/// not one, a source already installed and an id already taken.
pub fn plan(context: &Context, options: &AddOptions) -> Result<Plan, SourceError> {
    let location = Location::parse(&options.source, &context.cwd)?;
    let lock = lock::read(&context.lock)?.unwrap_or_default();
    let id = match &options.id {
        Some(id) if !lock::is_source_id(id) => {
            return Err(SourceError::Usage(format!(
                "--id {id}: an id is 1-64 lowercase letters, digits, `-` and `_`"
            )));
        }
        Some(id) => id.clone(),
        None => location.default_id(),
    };
    let request = Request {
        location,
        id,
        reference: options.reference.clone(),
        subdir: options.subdir.clone(),
        picked: options.skills.clone(),
        trust: lock_trust(context, &options.trust)?,
        access: options.access.clone(),
        only_artifacts: None,
    };
    check_new(&lock, &request)?;
    check_place(context, &request)?;
    let fetched = fetch::fetch(context, &request, None)?;
    Ok(Plan { request, fetched })
}

/// Installs what `plan` found: each skill's store entry from the plan's
/// own files (each file hashed again as it is copied: what lands is what
/// was planned), then the source in the lock, in one rename. Skills with
/// error-level security findings need `allow_risky`. The lock is read
/// again first, so a source added meanwhile under the same id or URL is
/// refused rather than overwritten.
pub fn install(
    context: &Context,
    plan: &Plan,
    allow_risky: bool,
) -> Result<Installed, SourceError> {
    plan.check_risky(allow_risky)?;
    let request = &plan.request;
    let mut lock = LockFile::open(&context.lock, &context.paths.store)?;
    check_new(&lock.lock, request)?;
    let now = lock::now();
    let candidates = plan.candidates();
    let locked = Locked {
        id: request.id.clone(),
        kind: request.location.kind,
        url: request.location.url.clone(),
        reference: request.reference.clone(),
        version: plan.fetched.version.clone(),
        subdir: request.subdir.clone(),
        picked: request.picked.clone(),
        allow_risky,
        trust: request.trust.clone(),
        signer: plan.fetched.signature.signer.clone(),
        access: request.access.clone(),
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
    Ok(Installed {
        id: locked.id.clone(),
        source: locked.label(),
        skills: candidates.iter().map(|c| c.name.clone()).collect(),
        lock: context.lock.clone(),
    })
}

/// The signature settings as the lock records them: absolute paths in the
/// user's lock; in a project's, paths relative to the project, which must
/// hold the files (a clone has them where the lock says).
fn lock_trust(context: &Context, trust: &Trust) -> Result<Trust, SourceError> {
    let Some(root) = &context.project else {
        return Ok(trust.clone());
    };
    let relative = |flag: &str, path: &Option<String>| -> Result<Option<String>, SourceError> {
        let Some(path) = path else { return Ok(None) };
        let inside = std::path::Path::new(path)
            .strip_prefix(root)
            .ok()
            .map(|rel| {
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/")
            });
        match inside {
            Some(rel) if !rel.is_empty() => Ok(Some(rel)),
            _ => Err(SourceError::Usage(format!(
                "{flag} {path}: a project's skills.lock names files inside the project ({}), so that every clone has them; put the file there and commit it",
                root.display()
            ))),
        }
    };
    Ok(Trust {
        trusted_signers: relative("--trusted-signers", &trust.trusted_signers)?,
        revoked_signers: relative("--revoked-signers", &trust.revoked_signers)?,
        require_signature: trust.require_signature,
    })
}

/// What a lock may record, by whose it is: a project's `skills.lock` is
/// read on every clone, so it names what every clone can fetch (no local
/// folder) and files inside the project; nothing in any lock holds a
/// secret (a URL with a password is refused: git's credential helpers
/// give passwords).
fn check_place(context: &Context, request: &Request) -> Result<(), SourceError> {
    let location = &request.location;
    if location.has_password() {
        return Err(SourceError::Usage(format!(
            "{}: the URL holds a password, which the lock would keep; give the URL without it and let git's credential helper (or --header with $VAR, --netrc for an index) supply it",
            location.redacted()
        )));
    }
    if !request.access.is_empty() && location.kind == crate::lock::SourceKind::Git {
        return Err(SourceError::Usage(
            "--header and --netrc apply to index sources; a git repository is fetched with your git credentials (credential helpers, SSH agent)".into(),
        ));
    }
    if context.scope() == Scope::Project && location.is_local_path() {
        return Err(SourceError::Usage(format!(
            "{}: a project's skills.lock names sources every clone can fetch; give the repository's URL, not a folder of this machine",
            location.url
        )));
    }
    Ok(())
}

/// Refuses a source that is already installed, or an id already taken.
fn check_new(lock: &Lock, request: &Request) -> Result<(), SourceError> {
    let url = &request.location.url;
    let same = lock
        .sources
        .iter()
        .find(|s| s.url == *url && s.reference == request.reference && s.subdir == request.subdir);
    if let Some(same) = same {
        return Err(SourceError::Usage(format!(
            "{url} is already installed as source '{}'; `skillserve update {}` fetches it again",
            same.id, same.id
        )));
    }
    if let Some(taken) = lock.source(&request.id) {
        return Err(SourceError::Usage(format!(
            "there is already a source called '{}' ({}); choose another name with --id",
            request.id, taken.url
        )));
    }
    Ok(())
}

pub(super) fn locked_skill(candidate: &Candidate) -> LockedSkill {
    LockedSkill {
        name: candidate.name.clone(),
        path: candidate.path.clone(),
        digest: candidate.digest.clone(),
        artifact: candidate.artifact.clone(),
    }
}
