//! Writing the store: one read-only folder per skill, named by the hex of
//! the skill's digest (behaviour.md, "Sources").
//!
//! An entry is written into a temporary folder inside the store, every file
//! hashed again as it is copied (so what lands is what was planned), made
//! read-only (files 0444, or 0555 when executable; folders 0555; the
//! read-only attribute on Windows) and renamed into place: a crash leaves a
//! temporary folder, never half an entry. Entries no source refers to any
//! more are removed by [`collect`]; temporary folders older than an hour go
//! with them.
//!
//! One store serves the user's lock and the lock of every project synced
//! on this machine: `store/projects` lists those projects' `skills.lock`
//! files ([`register_project`]), so that what one lock no longer names is
//! removed only when no other lock names it ([`locks_in_use`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::digest;
use crate::disk;
use crate::installed::{self, Paths, Record};
use crate::lock::{self, Lock};
use crate::spec;

use super::SourceError;
use super::found::Candidate;

/// Prefix of the store's temporary folders.
const TEMPORARY: &str = ".tmp-";
/// Temporary folders older than this are left-overs of a crash.
const STALE: Duration = Duration::from_secs(3600);

/// Makes sure the store holds `candidate`'s entry: an intact entry is kept,
/// a damaged one replaced. Records the entry's versions in `record`.
pub fn write_entry(
    paths: &Paths,
    candidate: &Candidate,
    record: &mut Record,
) -> Result<(), SourceError> {
    let entry = paths.entry(&candidate.digest);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source: io::Error| SourceError::Io { path, source }
    };
    match installed::verify_entry(&entry, &candidate.digest) {
        Ok(verified) => {
            record.record_entry(&candidate.digest, verified.stamps());
            return Ok(());
        }
        Err(installed::EntryProblem::Missing) => {}
        Err(installed::EntryProblem::Tampered(_)) => remove_tree(&entry).map_err(io(&entry))?,
    }
    fs::create_dir_all(&paths.store).map_err(io(&paths.store))?;
    let temporary = tempfile::Builder::new()
        .prefix(TEMPORARY)
        .tempdir_in(&paths.store)
        .map_err(io(&paths.store))?;
    let copied = copy_files(candidate, temporary.path());
    if let Err(err) = copied {
        let _ = make_writable(temporary.path());
        return Err(err);
    }
    let temporary = temporary.keep();
    if let Err(err) = fs::rename(&temporary, &entry) {
        let _ = remove_tree(&temporary);
        // Another `add` may have written the same entry meanwhile.
        if installed::verify_entry(&entry, &candidate.digest).is_err() {
            return Err(SourceError::Io {
                path: entry,
                source: err,
            });
        }
    }
    // Versions after the rename (it moves the folder's change time).
    let verified =
        installed::verify_entry(&entry, &candidate.digest).map_err(|problem| SourceError::Io {
            path: entry.clone(),
            source: io::Error::other(format!("the new store entry does not verify: {problem:?}")),
        })?;
    record.record_entry(&candidate.digest, verified.stamps());
    Ok(())
}

/// Copies the candidate's files into `dest`, checking each against its
/// digest, then makes everything read-only.
fn copy_files(candidate: &Candidate, dest: &Path) -> Result<(), SourceError> {
    let io = |path: PathBuf| move |source: io::Error| SourceError::Io { path, source };
    let mut folders = vec![dest.to_path_buf()];
    for file in &candidate.files {
        let from = candidate.dir.join(&file.path);
        let to = dest.join(&file.path);
        if let Some(parent) = to.parent()
            && !parent.exists()
        {
            let mut folder = parent;
            while folder != dest {
                folders.push(folder.to_path_buf());
                folder = folder.parent().unwrap_or(dest);
            }
        }
        let (mut reader, _) =
            disk::open_regular(&from, spec::MAX_SKILL_BYTES).map_err(|err| SourceError::Io {
                path: from.clone(),
                source: io::Error::other(err.to_string()),
            })?;
        let mut writer = disk::create_file(&to).map_err(io(to.clone()))?;
        let mut tee = Tee {
            inner: &mut reader,
            out: &mut writer,
        };
        // Not synced one by one (that took most of an `add`): an entry cut
        // short by a crash does not verify, and `update` installs it again.
        let (sum, _) = digest::sum_of(&mut tee).map_err(io(to.clone()))?;
        if sum != file.sum {
            return Err(SourceError::Io {
                path: from,
                source: io::Error::other(format!(
                    "changed while it was being installed ({} now, {} planned)",
                    digest::text(&sum),
                    digest::text(&file.sum)
                )),
            });
        }
        read_only(&to, file.executable).map_err(io(to.clone()))?;
    }
    // Deepest first: a folder made read-only takes no more entries.
    folders.sort_by_key(|f| std::cmp::Reverse(f.components().count()));
    folders.dedup();
    for folder in folders {
        read_only(&folder, true).map_err(io(folder.clone()))?;
    }
    Ok(())
}

/// Writes what it reads to `out` as well.
struct Tee<'a, R, W> {
    inner: &'a mut R,
    out: &'a mut W,
}

impl<R: io::Read, W: io::Write> io::Read for Tee<'_, R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.out.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// Makes `path` read-only: 0444 (0555 with `executable`, and for folders)
/// on Unix, the read-only attribute on files elsewhere.
fn read_only(path: &Path, executable: bool) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if executable { 0o555 } else { 0o444 };
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = executable;
        if path.is_dir() {
            // The attribute means something else on Windows folders.
            return Ok(());
        }
        let mut permissions = fs::metadata(path)?.permissions();
        permissions.set_readonly(true);
        fs::set_permissions(path, permissions)
    }
}

/// Gives the owner write access to `dir` and everything below it again, so
/// that it can be removed.
fn make_writable(dir: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let mut permissions = meta.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        permissions.set_mode(permissions.mode() | 0o700);
    }
    #[cfg(not(unix))]
    {
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
    }
    fs::set_permissions(dir, permissions)?;
    if meta.is_dir() {
        for entry in fs::read_dir(dir)? {
            make_writable(&entry?.path())?;
        }
    }
    Ok(())
}

/// Removes a read-only tree of the store.
pub fn remove_tree(dir: &Path) -> io::Result<()> {
    match make_writable(dir) {
        Err(err) if disk::is_gone(&err) => return Ok(()),
        other => other?,
    }
    fs::remove_dir_all(dir)
}

/// Waits for the lock of the store's editors, which every command that
/// writes or prunes the store holds (see `lock::LockFile`; `sync` takes
/// it alone, as it edits no lock).
pub fn lock_editors(paths: &Paths) -> Result<disk::EditLock, SourceError> {
    disk::lock_editors(&paths.store).map_err(|source| SourceError::Io {
        path: paths.store.clone(),
        source,
    })
}

/// The list of the project locks this store serves, in the store folder.
const PROJECTS: &str = "projects";

/// The project locks the store serves besides the user's: their paths.
fn projects(paths: &Paths) -> Vec<PathBuf> {
    match disk::read_text(&paths.store.join(PROJECTS), lock::MAX_BYTES) {
        Ok(text) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(PathBuf::from)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Adds the project lock at `lock_path` to the locks the store serves, so
/// that the commands of other locks keep its entries.
pub fn register_project(paths: &Paths, lock_path: &Path) -> Result<(), SourceError> {
    let list = paths.store.join(PROJECTS);
    let io = |source| SourceError::Io {
        path: list.clone(),
        source,
    };
    fs::create_dir_all(&paths.store).map_err(io)?;
    let _editing = disk::lock_editors(&list).map_err(io)?;
    let mut known = projects(paths);
    if known.iter().any(|p| p == lock_path) {
        return Ok(());
    }
    known.push(lock_path.to_path_buf());
    write_projects(&list, &known).map_err(io)
}

fn write_projects(list: &Path, projects: &[PathBuf]) -> io::Result<()> {
    let mut text = String::from(
        "# The skills.lock files of the projects synced on this machine: their store entries are kept.\n",
    );
    for project in projects {
        text.push_str(&project.to_string_lossy());
        text.push('\n');
    }
    disk::write_atomic(list, text.as_bytes(), disk::NewFile::Shared)
}

/// Every lock whose entries the store must keep: the user's and each
/// registered project's (`written`, at `written_path`, as just written).
/// A project lock that is gone is forgotten; `None` when one exists but
/// cannot be read (a merge in progress, say): then nothing may be
/// removed.
pub fn locks_in_use(paths: &Paths, written_path: &Path, written: &Lock) -> Option<Vec<Lock>> {
    let mut locks = vec![written.clone()];
    let mut gone = Vec::new();
    let registered = projects(paths);
    for path in std::iter::once(&paths.lock).chain(&registered) {
        if path == written_path {
            continue;
        }
        match lock::read(path) {
            Ok(Some(lock)) => locks.push(lock),
            Ok(None) => gone.push(path.clone()),
            Err(err) => {
                tracing::warn!("{err}; no store entry is removed until it can be read");
                return None;
            }
        }
    }
    let kept: Vec<PathBuf> = registered
        .into_iter()
        .filter(|p| !gone.contains(p))
        .collect();
    if !gone.is_empty() {
        let list = paths.store.join(PROJECTS);
        if let Ok(_editing) = disk::lock_editors(&list) {
            let _ = write_projects(&list, &kept);
        }
    }
    Some(locks)
}

/// The digests of the entries in the store.
pub fn entries(paths: &Paths) -> Result<Vec<String>, SourceError> {
    let entries = match fs::read_dir(&paths.store) {
        Ok(entries) => entries,
        Err(err) if disk::is_gone(&err) => return Ok(Vec::new()),
        Err(source) => {
            return Err(SourceError::Io {
                path: paths.store.clone(),
                source,
            });
        }
    };
    let mut out: Vec<String> = entries
        .flatten()
        .map(|e| format!("{}{}", digest::PREFIX, e.file_name().to_string_lossy()))
        .filter(|d| digest::is_digest(d))
        .collect();
    out.sort();
    Ok(out)
}

/// Removes every entry no lock of `locks` refers to (and temporary folders
/// left by a crash), and forgets their versions. Returns how many entries
/// went.
pub fn collect(paths: &Paths, locks: &[Lock], record: &mut Record) -> Result<usize, SourceError> {
    let referenced = |digest: &str| locks.iter().any(|lock| lock.references(digest));
    let entries = match fs::read_dir(&paths.store) {
        Ok(entries) => entries,
        Err(err) if disk::is_gone(&err) => return Ok(0),
        Err(source) => {
            return Err(SourceError::Io {
                path: paths.store.clone(),
                source,
            });
        }
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let digest = format!("{}{name}", digest::PREFIX);
        let is_entry = digest::is_digest(&digest);
        let stale = name.starts_with(TEMPORARY)
            && entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| SystemTime::now().duration_since(t).unwrap_or_default() > STALE);
        if (is_entry && !referenced(&digest)) || stale {
            remove_tree(&path).map_err(|source| SourceError::Io {
                path: path.clone(),
                source,
            })?;
            removed += usize::from(is_entry);
        }
    }
    record.retain_entries(referenced);
    Ok(removed)
}
