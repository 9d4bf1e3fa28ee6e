//! Writing skillserve's own files: one atomic writer for every file that is
//! replaced whole (`sources.lock`, the store's record, `config.toml`,
//! `trusted.toml`, the token file, an import's lock and `SKILL.md` files),
//! and the advisory lock that keeps two editors of one file from losing each
//! other's change.
//!
//! A reader (a server watching the file) sees the old file or the new one,
//! never a part of either, and a crash at any point leaves one of the two
//! on disk: the new text goes to a temporary file in the same folder, is
//! flushed to the disk, given the old file's permissions and renamed over
//! the old file; then the folder itself is flushed, so that the rename
//! survives a power cut too.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The permissions [`write_atomic`] gives a file it creates. A file that
/// exists keeps its own (mode bits on Unix), whichever this says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewFile {
    /// What creating a file gives by default: readable by everyone, written
    /// by its owner (0666 less the umask).
    Shared,
    /// Read and written by its owner only (0600, less the umask): secrets
    /// such as the token file.
    Private,
}

/// Replaces the file at `path` with `bytes`, atomically: a temporary file
/// beside it (hidden: `.NAME.XXXXXX.tmp`, so a scan or a watcher skips it),
/// written and `fsync`ed, given the permissions of the file it replaces (or
/// `new`'s when there is none), renamed over `path` (on Windows a replace
/// that works while the file exists), and the folder `fsync`ed on Unix.
/// Missing folders are created. When `path` is a symlink, the file it leads
/// to is replaced and the link kept (a `config.toml` linked from a dotfiles
/// repository stays linked). On failure the temporary file is removed and
/// `path` is as it was.
///
/// A writer killed midway leaves its temporary file behind, never a torn
/// `path`.
pub fn write_atomic(path: &Path, bytes: &[u8], new: NewFile) -> io::Result<()> {
    let target = target_of(path)?;
    let dir = folder_of(&target);
    fs::create_dir_all(dir)?;
    let existing = match fs::metadata(&target) {
        Ok(meta) => Some(meta.permissions()),
        Err(err) if super::is_gone(&err) => None,
        Err(err) => return Err(err),
    };
    let name = target
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    if existing.is_none() {
        use std::os::unix::fs::PermissionsExt;
        // Given to open(2): the umask applies, as it would to a new file.
        let mode = match new {
            NewFile::Shared => 0o666,
            NewFile::Private => 0o600,
        };
        builder.permissions(fs::Permissions::from_mode(mode));
    }
    // Mode bits only: on Windows the one permission is the read-only flag,
    // and a read-only file cannot be replaced anyway.
    #[cfg(not(unix))]
    let _ = (new, &existing);
    let mut temporary = builder.tempfile_in(dir)?;
    #[cfg(unix)]
    if let Some(permissions) = existing {
        temporary.as_file().set_permissions(permissions)?;
    }
    temporary.write_all(bytes)?;
    temporary.as_file().sync_all()?;
    temporary.persist(&target).map_err(|err| err.error)?;
    sync_folder(dir)
}

/// Creates the file `path` for writing, with its missing folders; an
/// existing file is an error (`AlreadyExists`), never overwritten. For
/// files written into a folder of skillserve's own making that is then
/// renamed into place whole (a store entry, a fetched skill, an unpacked
/// archive, `publish`'s staging folder): readers see that rename, not the
/// file, so nothing is flushed here.
#[expect(
    clippy::disallowed_methods,
    reason = "disk is the writer of files; `create_new` never follows a planted file"
)]
pub fn create_file(path: &Path) -> io::Result<File> {
    fs::create_dir_all(folder_of(path))?;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// [`create_file`] holding `bytes`.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    create_file(path)?.write_all(bytes)
}

/// Copies the file `from` to the new file `to` (see [`create_file`]), with
/// its permissions (an executable stays executable): for files of a store
/// entry, which were hashed within a skill's bounds before.
#[expect(
    clippy::disallowed_methods,
    reason = "disk is the copier of files; the source is a verified store entry"
)]
pub fn copy_new(from: &Path, to: &Path) -> io::Result<()> {
    if fs::symlink_metadata(to).is_ok() {
        return Err(io::Error::from(io::ErrorKind::AlreadyExists));
    }
    fs::create_dir_all(folder_of(to))?;
    fs::copy(from, to).map(|_| ())
}

/// The file `path` names: a symlink's target (resolved), else `path`.
fn target_of(path: &Path) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path),
        _ => Ok(path.to_path_buf()),
    }
}

/// The folder that holds `path` (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Flushes a folder's entries to the disk, so that a rename in it is
/// durable. File systems that cannot sync a folder say `EINVAL`: nothing
/// more can be done there.
#[cfg(unix)]
fn sync_folder(dir: &Path) -> io::Result<()> {
    #[expect(
        clippy::disallowed_methods,
        reason = "a folder opened to flush it, by the writer itself"
    )]
    let folder = File::open(dir);
    match folder.and_then(|folder| folder.sync_all()) {
        Err(err) if err.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

/// Windows cannot open a folder to flush it without backup privileges; NTFS
/// journals the rename itself.
#[cfg(not(unix))]
fn sync_folder(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// An exclusive advisory lock on the editors of one file, held until it is
/// dropped. See [`lock_editors`].
#[derive(Debug)]
pub struct EditLock {
    _file: File,
}

/// Waits for, then takes, the exclusive lock of the editors of `path`: a
/// lock on the file `.NAME.lock` beside it (beside the file a symlink leads
/// to), created when missing and never removed (removing a lock file lets
/// the next editor lock a file that is no longer there). An editor that
/// reads a file, changes it and writes it back ([`write_atomic`]) holds it
/// from before the read until after the write, so that two editors (the
/// CLI's `enable` and the app's toggle, two `skillserve trust`) never lose
/// each other's change. Readers take no lock: they see the old file or the
/// new one.
///
/// Advisory: it binds skillserve's own editors, not a text editor. Between
/// processes and between threads of one process alike (`flock` on Unix,
/// `LockFileEx` on Windows, both per open file). Rust 1.89's
/// `File::lock` does the same; the crate builds with 1.88.
pub fn lock_editors(path: &Path) -> io::Result<EditLock> {
    let target = target_of(path)?;
    let dir = folder_of(&target);
    fs::create_dir_all(dir)?;
    let name = target
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy());
    #[expect(
        clippy::disallowed_methods,
        reason = "the lock file is disk's own, empty and never read"
    )]
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(format!(".{name}.lock")))?;
    lock_exclusive(&file)?;
    Ok(EditLock { _file: file })
}

#[cfg(unix)]
fn lock_exclusive(file: &File) -> io::Result<()> {
    loop {
        match rustix::fs::flock(file, rustix::fs::FlockOperation::LockExclusive) {
            Err(rustix::io::Errno::INTR) => continue,
            other => return other.map_err(io::Error::from),
        }
    }
}

#[cfg(windows)]
fn lock_exclusive(file: &File) -> io::Result<()> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{LOCKFILE_EXCLUSIVE_LOCK, LockFileEx};
    use windows_sys::Win32::System::IO::OVERLAPPED;
    // SAFETY: OVERLAPPED is plain data; all zeros is the offset 0 and no
    // event, as a synchronous LockFileEx wants.
    let mut overlapped: OVERLAPPED = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open for as long as `file` is borrowed, and
    // `overlapped` outlives the call, which returns once the lock is held
    // (the handle is synchronous). The whole range locks the file.
    let locked = unsafe {
        LockFileEx(
            file.as_raw_handle(),
            LOCKFILE_EXCLUSIVE_LOCK,
            0,
            u32::MAX,
            u32::MAX,
            &mut overlapped,
        )
    };
    if locked == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/er/config.toml");
        write_atomic(&path, b"first\n", NewFile::Shared).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"first\n");
        write_atomic(&path, b"second\n", NewFile::Shared).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second\n");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["config.toml"]);
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_permissions_whatever_new_files_get() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trusted.toml");
        write_atomic(&path, b"a", NewFile::Shared).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"b", NewFile::Shared).unwrap();
        assert_eq!(mode(&path), 0o640);
        // A private file made readable by its owner's choice stays so, and
        // a shared one made private stays private.
        write_atomic(&path, b"c", NewFile::Private).unwrap();
        assert_eq!(mode(&path), 0o640);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"d", NewFile::Shared).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(fs::read(&path).unwrap(), b"d");
    }

    #[cfg(unix)]
    #[test]
    fn a_new_private_file_is_its_owners_alone_and_a_shared_one_follows_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("tokens");
        write_atomic(&tokens, b"x", NewFile::Private).unwrap();
        assert_eq!(mode(&tokens), 0o600);
        // What File::create makes in the same folder, with the same umask.
        let plain = dir.path().join("plain");
        File::create(&plain).unwrap();
        let shared = dir.path().join("shared");
        write_atomic(&shared, b"x", NewFile::Shared).unwrap();
        assert_eq!(mode(&shared), mode(&plain));
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_file_is_replaced_and_the_link_kept() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("dotfiles")).unwrap();
        let real = dir.path().join("dotfiles/config.toml");
        fs::write(&real, "old").unwrap();
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink("dotfiles/config.toml", &link).unwrap();
        write_atomic(&link, b"new", NewFile::Shared).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn a_failed_write_leaves_the_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a folder: the rename fails after the write.
        let path = dir.path().join("taken");
        fs::create_dir(&path).unwrap();
        fs::write(path.join("inside"), "kept").unwrap();
        assert!(write_atomic(&path, b"x", NewFile::Shared).is_err());
        assert_eq!(fs::read(path.join("inside")).unwrap(), b"kept");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["taken"]);
    }

    #[test]
    fn editors_take_turns() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::{Arc, Barrier};
        let dir = tempfile::tempdir().unwrap();
        let path = Arc::new(dir.path().join("config.toml"));
        write_atomic(&path, b"0", NewFile::Shared).unwrap();
        let inside = Arc::new(AtomicUsize::new(0));
        let start = Arc::new(Barrier::new(4));
        let editors: Vec<_> = (0..4)
            .map(|_| {
                let (path, inside, start) =
                    (Arc::clone(&path), Arc::clone(&inside), Arc::clone(&start));
                std::thread::spawn(move || {
                    start.wait();
                    for _ in 0..25 {
                        let _lock = lock_editors(&path).unwrap();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        let n: u32 = fs::read_to_string(&*path).unwrap().parse().unwrap();
                        write_atomic(&path, (n + 1).to_string().as_bytes(), NewFile::Shared)
                            .unwrap();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for editor in editors {
            editor.join().unwrap();
        }
        // Every increment landed: none read a value another was replacing.
        assert_eq!(fs::read_to_string(&*path).unwrap(), "100");
        assert!(dir.path().join(".config.toml.lock").is_file());
    }
}
