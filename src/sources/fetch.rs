//! Fetching a source into a temporary folder and finding its skills: a
//! git repository (one commit) or a published index (each artifact
//! verified against its digest). Nothing outside the temporary folder is
//! touched; the folder goes away with the [`Fetched`].

use std::path::{Component, Path, PathBuf};

use crate::diagnostic::Code;
use crate::disk;
use crate::installed::{self, Paths};
use crate::lock::{Access, Locked, SignedObject, SourceKind, Trust};
use crate::plugins;
use crate::roots::Layout;

use super::credentials::Credentials;
use super::found::{self, Found};
use super::http::Client;
use super::index;
use super::location::Location;
use super::signature::{self, Check, Policy, Signature};
use super::{Context, SourceError};

/// What to fetch.
#[derive(Clone, Debug)]
pub struct Request {
    pub location: Location,
    /// The source's id (names the checkout's folder, so that a repository
    /// that is one skill takes it as its fallback name).
    pub id: String,
    pub reference: Option<String>,
    pub subdir: Option<String>,
    /// `--skill` names; empty: every skill.
    pub picked: Vec<String>,
    /// What the source asks of signatures.
    pub trust: Trust,
    /// How a private index is reached.
    pub access: Access,
    /// `sync` of an index: only the entries whose artifacts have these
    /// digests (the skills the store lacks, as the lock pins them).
    pub only_artifacts: Option<Vec<String>>,
}

impl Request {
    /// The request that fetches `source` again (`update`).
    pub fn again(source: &Locked) -> Request {
        Request {
            location: Location {
                kind: source.kind,
                url: source.url.clone(),
            },
            id: source.id.clone(),
            reference: source.reference.clone(),
            subdir: source.subdir.clone(),
            picked: source.picked.clone(),
            trust: source.trust.clone(),
            access: source.access.clone(),
            only_artifacts: None,
        }
    }
}

/// A source fetched into a temporary folder.
#[derive(Debug)]
pub struct Fetched {
    /// The commit (git) or the index's digest.
    pub version: String,
    pub found: Found,
    /// What the plan should also say (entries of an index skipped).
    pub notes: Vec<String>,
    /// Who signed it (a trusted signer), or what the plan should say of
    /// its signature.
    pub signature: Signature,
    /// Holds the files until the candidates are installed.
    _tree: tempfile::TempDir,
}

/// Fetches `request`. `previous` (the source as locked, for `update`)
/// lets an index skill whose artifact did not change come from the store
/// instead of the network.
pub fn fetch(
    context: &Context,
    request: &Request,
    previous: Option<&Locked>,
) -> Result<Fetched, SourceError> {
    let policy = context.policy(&request.trust, &request.id);
    policy.check_files()?;
    let tree = tempfile::Builder::new()
        .prefix("skillserve-fetch-")
        .tempdir()
        .map_err(|source| SourceError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
    let mut fetched = match request.location.kind {
        SourceKind::Git => fetch_git(context, request, &policy, tree)?,
        SourceKind::Index => fetch_index(context, request, previous, &policy, tree)?,
    };
    if !request.picked.is_empty() && request.location.kind == SourceKind::Git {
        pick(&mut fetched.found, &request.picked, &request.location.url)?;
    }
    if fetched.found.candidates.is_empty() && request.only_artifacts.is_none() {
        return Err(SourceError::NoSkills {
            url: request.location.url.clone(),
            subdir: request.subdir.clone(),
            skipped: fetched
                .found
                .skipped
                .iter()
                .map(|s| format!("{}: {}", s.place, s.reason))
                .collect(),
        });
    }
    Ok(fetched)
}

fn fetch_git(
    context: &Context,
    request: &Request,
    policy: &Policy,
    tree: tempfile::TempDir,
) -> Result<Fetched, SourceError> {
    let url = &request.location.url;
    let checkout = tree.path().join(&request.id);
    let git = super::git::find(&context.search)?;
    let commit = super::git::fetch(&git, url, request.reference.as_deref(), &checkout)?;
    let check = signature::git::check(&git, &checkout, &commit, policy)?;
    let subject = match (&check, &request.reference) {
        (
            Check::Trusted(crate::lock::Signer {
                object: SignedObject::Tag,
                ..
            })
            | Check::Untrusted {
                object: SignedObject::Tag,
                ..
            },
            Some(tag),
        ) => format!("{url} at tag {tag} (commit {})", &commit[..12]),
        _ => format!("{url} at commit {}", &commit[..12]),
    };
    let signature = check.decide(policy, &subject)?;
    let base = match &request.subdir {
        None => checkout.clone(),
        Some(subdir) => {
            let base = checkout.join(checked_subdir(subdir)?);
            if !base.is_dir() {
                return Err(SourceError::Usage(format!(
                    "--path {subdir}: {url} has no such folder at commit {}",
                    &commit[..12]
                )));
            }
            base
        }
    };
    let mut look = vec![(base.clone(), Layout::SkillOrFolders)];
    let mut manifest_problems = Vec::new();
    for declared in plugins::declared_skill_paths(&checkout, &mut manifest_problems) {
        if declared.starts_with(&base) && declared != base {
            look.push((declared, Layout::SkillOrFolders));
        }
    }
    let found = found::find(&checkout, &look, context.max_file_bytes, &|dir| {
        found::relative(&checkout, dir)
    });
    let notes = manifest_problems
        .iter()
        .map(|d| format!("{}: {}", found::relative(&checkout, &d.path), d.message))
        .collect();
    Ok(Fetched {
        version: commit,
        found,
        notes,
        signature,
        _tree: tree,
    })
}

/// `--path`: relative, inside the repository.
fn checked_subdir(subdir: &str) -> Result<PathBuf, SourceError> {
    let path = Path::new(subdir);
    let inside = path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if subdir.trim().is_empty() || !inside {
        return Err(SourceError::Usage(format!(
            "--path {subdir}: give a folder inside the repository, like `skills`"
        )));
    }
    Ok(path.to_path_buf())
}

fn fetch_index(
    context: &Context,
    request: &Request,
    previous: Option<&Locked>,
    policy: &Policy,
    tree: tempfile::TempDir,
) -> Result<Fetched, SourceError> {
    if request.subdir.is_some() || request.reference.is_some() {
        return Err(SourceError::Usage(
            "--path and --ref apply to git sources; an index lists its skills itself".into(),
        ));
    }
    let url = &request.location.url;
    let client = Client::with_credentials(Credentials::read(
        &request.access,
        url,
        &context.vars,
        context.home.as_deref(),
    )?);
    let bytes = index::download(&client, url)?;
    let index = index::parse(&bytes, url)?;
    let signature = check_index_signature(context, &client, url, &bytes, policy, tree.path())?
        .decide(policy, url)?;
    let mut entries = index.entries.clone();
    if let Some(wanted) = &request.only_artifacts {
        entries.retain(|e| wanted.contains(&e.digest));
    }
    if !request.picked.is_empty() {
        let available: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
        check_picks(&request.picked, &available, &request.location.url)?;
        entries.retain(|e| {
            request
                .picked
                .iter()
                .any(|p| p.eq_ignore_ascii_case(&e.name))
        });
    }
    let mut look = Vec::new();
    let mut downloads = Vec::new();
    for entry in &entries {
        let dest = tree.path().join(&entry.name);
        let reused = previous.and_then(|locked| {
            let skill = locked
                .skills
                .iter()
                .find(|s| s.artifact.as_deref() == Some(entry.digest.as_str()))?;
            copy_entry(&context.paths, &skill.digest, &dest).ok()
        });
        if reused.is_none() {
            downloads.push((entry, dest.clone()));
        }
        look.push((dest, Layout::Skill));
    }
    fetch_artifacts(&client, &downloads)?;
    let mut found = found::find(tree.path(), &look, context.max_file_bytes, &|dir| {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        entries
            .iter()
            .find(|e| Some(&e.name) == name.as_ref())
            .map_or_else(String::new, |e| e.url.clone())
    });
    for candidate in &mut found.candidates {
        let folder = candidate
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        if let Some(entry) = entries.iter().find(|e| Some(&e.name) == folder.as_ref()) {
            candidate.artifact = Some(entry.digest.clone());
            if entry.name != candidate.name {
                candidate.findings.push(found::Shown {
                    severity: crate::diagnostic::Severity::Warning,
                    code: Code::IndexNameMismatch,
                    place: format!("{}/SKILL.md", entry.name),
                    message: format!(
                        "the index calls it '{}', its SKILL.md '{}'; it is served as '{}'",
                        entry.name, candidate.name, candidate.name
                    ),
                    security: false,
                });
            }
        }
    }
    Ok(Fetched {
        version: index.digest,
        found,
        notes: index.notes,
        signature,
        _tree: tree,
    })
}

/// Artifacts downloaded at once, at most: an index of a thousand skills
/// takes a thousand round trips, which one at a time is most of a minute.
const PARALLEL_DOWNLOADS: usize = 8;

/// Downloads each `(entry, dest)`, [`PARALLEL_DOWNLOADS`] at a time on
/// scoped threads (the client blocks). On failure, the first failing entry
/// in the index's order is reported and the rest are not started.
fn fetch_artifacts(
    client: &Client,
    downloads: &[(&index::Entry, PathBuf)],
) -> Result<(), SourceError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut errors: Vec<(usize, SourceError)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..PARALLEL_DOWNLOADS.min(downloads.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut errors = Vec::new();
                    while !failed.load(Ordering::Relaxed) {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        let Some((entry, dest)) = downloads.get(at) else {
                            break;
                        };
                        if let Err(err) = index::fetch_artifact(client, entry, dest) {
                            failed.store(true, Ordering::Relaxed);
                            errors.push((at, err));
                        }
                    }
                    errors
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    errors.sort_by_key(|(at, _)| *at);
    match errors.into_iter().next() {
        Some((_, err)) => Err(err),
        None => Ok(()),
    }
}

/// The index's signature, `index.json.sig` beside it: none (the host
/// answers 404), or checked by `ssh-keygen` against the policy. The files
/// `ssh-keygen` reads are written into `dir` (the fetch's own folder).
fn check_index_signature(
    context: &Context,
    client: &Client,
    url: &str,
    bytes: &[u8],
    policy: &Policy,
    dir: &Path,
) -> Result<Check, SourceError> {
    let unsigned = Check::Unsigned {
        object: SignedObject::Index,
    };
    let Some(armored) =
        client.get_if_present(&index::signature_url(url), index::MAX_SIGNATURE_BYTES)?
    else {
        return Ok(unsigned);
    };
    let armored = String::from_utf8_lossy(&armored).into_owned();
    let keygen = match signature::ssh::find(&context.search) {
        Ok(keygen) => keygen,
        // Without ssh-keygen the signature cannot be checked: what the
        // policy makes of an unchecked signature decides.
        Err(err) => {
            return Ok(Check::Untrusted {
                format: crate::lock::SignatureFormat::Ssh,
                key: signature::ssh::key_of(&armored)
                    .map(|(k, _)| k)
                    .unwrap_or_default(),
                principal: None,
                object: SignedObject::Index,
                why: signature::Untrusted::Unchecked(err.to_string()),
            });
        }
    };
    let data = dir.join("index.json");
    let sig = dir.join("index.json.sig");
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SourceError::Io { path, source }
    };
    crate::disk::write_atomic(&data, bytes, crate::disk::NewFile::Shared).map_err(io(&data))?;
    crate::disk::write_atomic(&sig, armored.as_bytes(), crate::disk::NewFile::Shared)
        .map_err(io(&sig))?;
    signature::ssh::check_index(&keygen, &data, &sig, &armored, policy)
}

/// Copies the intact store entry of `digest` to `dest` (an index skill
/// whose artifact did not change).
fn copy_entry(paths: &Paths, digest: &str, dest: &Path) -> Result<(), SourceError> {
    let entry = paths.entry(digest);
    let verified = installed::verify_entry(&entry, digest)
        .map_err(|problem| SourceError::Usage(format!("{}: {problem:?}", entry.display())))?;
    for (path, _, _) in &verified.files {
        let to = dest.join(path);
        let io = |source| SourceError::Io {
            path: to.clone(),
            source,
        };
        disk::copy_new(&entry.join(path), &to).map_err(io)?;
        // Copies keep the store's read-only mode: the temporary folder
        // must stay removable.
        let mut permissions = std::fs::metadata(&to).map_err(io)?.permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
        std::fs::set_permissions(&to, permissions).map_err(io)?;
    }
    Ok(())
}

/// Keeps the candidates `picked` names (case-insensitively); an unknown
/// name is an error listing the available ones.
fn pick(found: &mut Found, picked: &[String], url: &str) -> Result<(), SourceError> {
    let available: Vec<String> = found.candidates.iter().map(|c| c.name.clone()).collect();
    check_picks(picked, &available, url)?;
    found
        .candidates
        .retain(|c| picked.iter().any(|p| p.eq_ignore_ascii_case(&c.name)));
    Ok(())
}

fn check_picks(picked: &[String], available: &[String], url: &str) -> Result<(), SourceError> {
    let unknown: Vec<String> = picked
        .iter()
        .filter(|p| !available.iter().any(|a| a.eq_ignore_ascii_case(p)))
        .cloned()
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(SourceError::UnknownSkills {
        url: url.to_owned(),
        unknown,
        available: available.to_vec(),
    })
}
