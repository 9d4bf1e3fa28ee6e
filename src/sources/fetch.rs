//! Fetching a source into a temporary folder and finding its skills: a
//! git repository (one commit) or a published index (each artifact
//! verified against its digest). Nothing outside the temporary folder is
//! touched; the folder goes away with the [`Fetched`].

use std::path::{Component, Path, PathBuf};

use crate::diagnostic::Code;
use crate::disk;
use crate::installed::{self, Paths};
use crate::lock::{Locked, SourceKind};
use crate::plugins;
use crate::roots::Layout;

use super::found::{self, Found};
use super::http::Client;
use super::index;
use super::location::Location;
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
    let tree = tempfile::Builder::new()
        .prefix("skillserve-fetch-")
        .tempdir()
        .map_err(|source| SourceError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
    let mut fetched = match request.location.kind {
        SourceKind::Git => fetch_git(context, request, tree)?,
        SourceKind::Index => fetch_index(context, request, previous, tree)?,
    };
    if !request.picked.is_empty() && request.location.kind == SourceKind::Git {
        pick(&mut fetched.found, &request.picked, &request.location.url)?;
    }
    if fetched.found.candidates.is_empty() {
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
    tree: tempfile::TempDir,
) -> Result<Fetched, SourceError> {
    let url = &request.location.url;
    let checkout = tree.path().join(&request.id);
    let git = super::git::find(&context.search)?;
    let commit = super::git::fetch(&git, url, request.reference.as_deref(), &checkout)?;
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
    tree: tempfile::TempDir,
) -> Result<Fetched, SourceError> {
    if request.subdir.is_some() || request.reference.is_some() {
        return Err(SourceError::Usage(
            "--path and --ref apply to git sources; an index lists its skills itself".into(),
        ));
    }
    let client = Client::default();
    let index = index::read(&client, &request.location.url)?;
    let mut entries = index.entries.clone();
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
            index::fetch_artifact(&client, entry, &dest)?;
        }
        look.push((dest, Layout::Skill));
    }
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
        _tree: tree,
    })
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
