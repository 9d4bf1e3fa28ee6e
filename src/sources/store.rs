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

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::digest;
use crate::disk;
use crate::installed::{self, Paths, Record};
use crate::lock::Lock;
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

/// Removes every entry `lock` does not refer to (and temporary folders left
/// by a crash), and forgets their versions. Returns how many entries went.
pub fn collect(paths: &Paths, lock: &Lock, record: &mut Record) -> Result<usize, SourceError> {
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
        if (is_entry && !lock.references(&digest)) || stale {
            remove_tree(&path).map_err(|source| SourceError::Io {
                path: path.clone(),
                source,
            })?;
            removed += usize::from(is_entry);
        }
    }
    record.retain_entries(|digest| lock.references(digest));
    Ok(removed)
}
