//! A store entry checked against its name: every file hashed (within a
//! skill's bounds), the skill's digest compared with the digest that names
//! the entry, and the version of every file and folder noted for the
//! [`Record`](super::Record).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Code, Diagnostic, Finding};
use crate::digest::{self, Sum};
use crate::disk::{self, ReadError, Stamp};
use crate::lock::{Locked, LockedSkill};
use crate::roots::SKILL_FILES;
use crate::spec;

/// Folders deeper than this in a store entry make it invalid.
const MAX_ENTRY_DEPTH: usize = 16;

/// Why a store entry is not served.
#[derive(Debug, PartialEq, Eq)]
pub enum EntryProblem {
    /// The entry's folder does not exist.
    Missing,
    /// Its files are not what its digest says (the reason).
    Tampered(String),
}

impl EntryProblem {
    /// The diagnostic naming the source and what to do (`scope`: whose
    /// lock names it).
    pub fn diagnostic(
        &self,
        source: &Locked,
        skill: &LockedSkill,
        entry: &Path,
        scope: crate::lock::Scope,
    ) -> Diagnostic {
        let project = match scope {
            crate::lock::Scope::User => "",
            crate::lock::Scope::Project => " --project",
        };
        let hint = format!(
            "run `skillserve sync` to install the version the lock pins again, or `skillserve remove{project} {id}`",
            id = source.id
        );
        match self {
            EntryProblem::Missing => Finding::error(
                Code::StoreMissing,
                format!(
                    "the store holds no copy of skill '{}' of source '{}' ({}); it is not served",
                    skill.name, source.id, source.url
                ),
                hint,
            )
            .at(entry),
            EntryProblem::Tampered(why) => Finding::error(
                Code::StoreTampered,
                format!(
                    "the files of skill '{}' of source '{}' ({}) were changed in the store ({why}); it is not served",
                    skill.name, source.id, source.url
                ),
                hint,
            )
            .at(entry),
        }
    }
}

/// What hashing a store entry found: its files (path, SHA-256, size),
/// sorted by path, and the version of each file and folder.
#[derive(Debug, Default)]
pub struct Verified {
    pub files: Vec<(String, Sum, u64)>,
    pub(super) stamps: Vec<(String, Stamp)>,
}

impl Verified {
    /// The versions of the entry's files and folders, for
    /// [`Record::record_entry`](super::Record::record_entry).
    pub fn stamps(self) -> Vec<(String, Stamp)> {
        self.stamps
    }

    /// The skill's own file in `entry` (`SKILL.md`, or `skill.md`) and its
    /// version, as hashed.
    pub(super) fn own_file(&self, entry: &Path) -> Option<(PathBuf, Stamp)> {
        own_file(entry, &self.stamps)
    }
}

/// The first of [`SKILL_FILES`] among `stamps` (an entry's), with its path
/// below `entry`.
fn own_file(entry: &Path, stamps: &[(String, Stamp)]) -> Option<(PathBuf, Stamp)> {
    SKILL_FILES.iter().find_map(|name| {
        stamps
            .iter()
            .find(|(rel, _)| rel == name)
            .map(|(rel, stamp)| (entry.join(rel), *stamp))
    })
}

/// Hashes the store entry `entry` and checks it against `digest`.
pub fn verify_entry(entry: &Path, digest: &str) -> Result<Verified, EntryProblem> {
    let verified = match hash_tree(entry) {
        Ok(verified) => verified,
        Err(err) if disk::is_gone(&err) => return Err(EntryProblem::Missing),
        Err(err) => return Err(EntryProblem::Tampered(err.to_string())),
    };
    let actual = digest::skill(
        verified
            .files
            .iter()
            .map(|(path, sum, _)| (path.as_str(), sum)),
    );
    if actual != digest {
        return Err(EntryProblem::Tampered(format!(
            "they hash to {actual}, not to its name"
        )));
    }
    Ok(verified)
}

/// Every file below `dir` hashed, with the versions of files and folders.
/// Only folders and regular files may be there (the store holds nothing
/// else); at most the files and bytes a skill may have.
pub fn hash_tree(dir: &Path) -> io::Result<Verified> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let mut out = Verified::default();
    let mut bytes = 0u64;
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    while let Some((path, rel, depth)) = stack.pop() {
        let meta = fs::symlink_metadata(&path)?;
        if !meta.is_dir() {
            return Err(invalid(format!("{} is not a folder", shown(&rel))));
        }
        let mut children = Vec::new();
        for entry in fs::read_dir(&path)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                return Err(invalid(format!("a name in {} is not UTF-8", shown(&rel))));
            };
            children.push((name.to_owned(), entry.file_type()?));
        }
        // The folder's version after listing it: an entry added since
        // changes it.
        out.stamps.push((
            shown(&rel).to_owned(),
            Stamp::of(&fs::symlink_metadata(&path)?),
        ));
        for (name, kind) in children {
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if kind.is_dir() {
                if depth + 1 > MAX_ENTRY_DEPTH {
                    return Err(invalid(format!("{child_rel} is too deep")));
                }
                stack.push((path.join(&name), child_rel, depth + 1));
            } else if kind.is_file() {
                if out.files.len() == spec::MAX_SKILL_FILES {
                    return Err(invalid("it holds more files than a skill may".into()));
                }
                let (mut file, len) = disk::open_regular(&path.join(&name), spec::MAX_SKILL_BYTES)
                    .map_err(|err| match err {
                        ReadError::Io(err) => err,
                        other => invalid(format!("{child_rel}: {other}")),
                    })?;
                let version = Stamp::of(&file.metadata()?);
                bytes += len;
                if bytes > spec::MAX_SKILL_BYTES {
                    return Err(invalid("it holds more bytes than a skill may".into()));
                }
                let (sum, size) = digest::sum_of(&mut file)?;
                out.files.push((child_rel.clone(), sum, size));
                out.stamps.push((child_rel, version));
            } else {
                return Err(invalid(format!(
                    "{child_rel} is a symlink or a special file"
                )));
            }
        }
    }
    out.files
        .sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}

/// A relative path as shown: `.` for the entry itself.
fn shown(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}
