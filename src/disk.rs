//! How skillserve touches the disk: file identity, file versions, and reading
//! files safely.
//!
//! Every file skillserve reads is opened as a regular file only, without
//! blocking, and never more than a cap of bytes are read: a FIFO named
//! `SKILL.md` or `settings.json` would otherwise hang the reader forever, and
//! a huge file would fill memory. A skill's files are opened through
//! the gate (`gate.rs`), which adds where they may be; a settings file through
//! [`read_settings`]; anything else through [`open_regular`].
//!
//! Every file skillserve writes whole is replaced by [`write_atomic`], and
//! an edit (read, change, write back) holds [`lock_editors`] throughout
//! (`disk::write`).

use std::borrow::Borrow;
use std::fs::{File, Metadata};
use std::hash::{Hash, Hasher};
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use crate::diagnostic::{Code, Finding};

mod write;

pub use write::{EditLock, NewFile, copy_new, create_file, lock_editors, write_atomic, write_new};

/// Identity of a file: device and inode. Two paths with the same identity are
/// the same file or directory.
///
/// Without inodes (Windows), every identity is the same null value: cycles are
/// then bounded by the walk's depth and folder limits alone, and file versions
/// compare size and modification time only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The identity of the file `meta` describes.
    pub fn of(meta: &Metadata) -> FileId {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileId {
                dev: meta.dev(),
                ino: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            FileId::default()
        }
    }

    /// The device the file is on (0 where the platform has no inodes).
    pub fn device(&self) -> u64 {
        self.dev
    }

    /// A fresh identity equal to no other, where the platform has no inodes
    /// to tell two paths to one folder apart.
    #[cfg(not(unix))]
    pub fn unique() -> FileId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        FileId {
            dev: 0,
            ino: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The identity of a directory entry, from the entry itself (no system
    /// call). Its device is the parent's: only a mount point differs, and a
    /// mount point is never a cycle through a symlink.
    pub fn of_entry(entry: &std::fs::DirEntry, parent: FileId) -> FileId {
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirEntryExt;
            FileId {
                dev: parent.dev,
                ino: entry.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = (entry, parent);
            FileId::default()
        }
    }
}

/// One version of one file: size, modification time, inode change time and
/// identity. Equal stamps mean the file can be taken as unchanged: the scan's
/// parse cache and the call-time text cache both rely on this.
///
/// Laid out in 48 bytes (seconds and nanoseconds apart): the scan's cache
/// holds one per skill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stamp {
    len: u64,
    /// Modification time: seconds since the epoch (negative before 1970),
    /// and nanoseconds in `modified_nanos`.
    modified: i64,
    /// Inode change time: it also moves on `chmod`, `chown` and on writes that
    /// keep size and modification time.
    changed: i64,
    id: FileId,
    modified_nanos: i32,
    changed_nanos: i32,
}

impl Stamp {
    /// The version of the file `meta` describes.
    pub fn of(meta: &Metadata) -> Stamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // Nanoseconds are below 10^9, so they fit an i32.
            Stamp {
                len: meta.len(),
                modified: meta.mtime(),
                changed: meta.ctime(),
                id: FileId::of(meta),
                modified_nanos: meta.mtime_nsec() as i32,
                changed_nanos: meta.ctime_nsec() as i32,
            }
        }
        #[cfg(not(unix))]
        {
            let modified = match meta.modified() {
                Ok(time) => match time.duration_since(std::time::UNIX_EPOCH) {
                    Ok(after) => (after.as_secs() as i64, i64::from(after.subsec_nanos())),
                    Err(before) => {
                        let before = before.duration();
                        (
                            -(before.as_secs() as i64),
                            -i64::from(before.subsec_nanos()),
                        )
                    }
                },
                Err(_) => (0, 0),
            };
            Stamp {
                len: meta.len(),
                modified: modified.0,
                changed: 0,
                id: FileId::of(meta),
                modified_nanos: modified.1 as i32,
                changed_nanos: 0,
            }
        }
    }

    /// The version from a raw `stat`, field for field the same as
    /// [`Stamp::of`] would give for that file.
    #[cfg(unix)]
    pub fn of_stat(st: &rustix::fs::Stat) -> Stamp {
        // The casts only widen or keep the platform's own field types.
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Stamp {
            len: st.st_size as u64,
            modified: st.st_mtime as i64,
            changed: st.st_ctime as i64,
            id: FileId {
                dev: st.st_dev as u64,
                ino: st.st_ino as u64,
            },
            modified_nanos: st.st_mtime_nsec as i32,
            changed_nanos: st.st_ctime_nsec as i32,
        }
    }

    /// The identity of the file this is a version of.
    pub fn id(&self) -> FileId {
        self.id
    }

    /// The size of the file in this version.
    pub fn size(&self) -> u64 {
        self.len
    }

    /// The stamp as one line of seven numbers, for a record kept between
    /// processes (the store's stamps of verified entries, `installed`).
    pub fn encode(&self) -> String {
        let Stamp {
            len,
            modified,
            changed,
            id,
            modified_nanos,
            changed_nanos,
        } = self;
        format!(
            "{len} {modified} {modified_nanos} {changed} {changed_nanos} {} {}",
            id.dev, id.ino
        )
    }

    /// The stamp [`Stamp::encode`] wrote, or `None` for anything else.
    pub fn decode(text: &str) -> Option<Stamp> {
        let mut numbers = text.split(' ');
        let mut signed = || numbers.next()?.parse::<i64>().ok();
        let len = u64::try_from(signed()?).ok()?;
        let (modified, modified_nanos) = (signed()?, i32::try_from(signed()?).ok()?);
        let (changed, changed_nanos) = (signed()?, i32::try_from(signed()?).ok()?);
        let mut unsigned = || numbers.next()?.parse::<u64>().ok();
        let stamp = Stamp {
            len,
            modified,
            changed,
            modified_nanos,
            changed_nanos,
            id: FileId {
                dev: unsigned()?,
                ino: unsigned()?,
            },
        };
        numbers.next().is_none().then_some(stamp)
    }
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("not a regular file")]
    NotRegular,
    #[error("it now leads outside the project (a symlink), so it is not read")]
    OutsideProject,
    #[error("it has no frontmatter any more, so it is not a skill")]
    NoFrontmatter,
    #[error("file is {len} bytes, over the {max}-byte limit")]
    TooLarge { len: u64, max: u64 },
    #[error("not valid UTF-8 (line {line})")]
    InvalidUtf8 { line: usize },
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl ReadError {
    /// Whether the failure may pass without the file being edited (an I/O
    /// error such as a permission problem or a file being replaced), as
    /// opposed to a file that must be fixed.
    pub fn is_passing(&self) -> bool {
        matches!(self, ReadError::Io(_))
    }

    /// Whether the file (or a folder on its path) is gone.
    pub fn is_gone(&self) -> bool {
        matches!(self, ReadError::Io(err) if is_gone(err))
    }

    /// The diagnostic for a SKILL.md that could not be read.
    pub fn finding(&self) -> Finding {
        match self {
            ReadError::NotRegular => Finding::error(
                Code::NotAFile,
                "SKILL.md is not a regular file (a directory, FIFO or device)",
                "replace it with a regular Markdown file",
            ),
            ReadError::OutsideProject => Finding::warning(
                Code::SymlinkOutsideProject,
                "SKILL.md leads outside the project through a symlink; it is not read",
                "project skills may only link inside their repository",
            ),
            ReadError::NoFrontmatter => Finding::error(
                Code::FrontmatterMissing,
                "no YAML frontmatter, so this is not a skill",
                "start the file with `---`, `name: ...`, `description: ...`, `---`",
            ),
            ReadError::TooLarge { len, max } => Finding::error(
                Code::FileTooLarge,
                format!("file is {len} bytes, over the {max}-byte limit"),
                "move long material into references/ files, or raise --max-file-bytes",
            ),
            ReadError::InvalidUtf8 { line } => Finding::error(
                Code::InvalidUtf8,
                "file is not valid UTF-8",
                "save the file as UTF-8",
            )
            .on_line(*line),
            ReadError::Io(err) => Finding::error(
                Code::Unreadable,
                format!("cannot read the file: {err}"),
                "check the file's permissions",
            ),
        }
    }
}

/// `Ok` when `path`, with every symlink resolved, lies inside `fence` (itself
/// resolved). Otherwise where it leads, or the error that kept it from being
/// resolved: not knowing where a link leads is no reason to follow it.
pub fn stays_inside(path: &Path, fence: &Path) -> Result<(), io::Result<std::path::PathBuf>> {
    match std::fs::canonicalize(path) {
        Ok(target) if target.starts_with(fence) => Ok(()),
        other => Err(other),
    }
}

/// Whether an I/O error means the path (or a folder on it) does not exist.
pub fn is_gone(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Whether an I/O error is a symlink loop (`ELOOP`).
pub fn is_loop(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        err.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

/// Opens `path` for reading only if it is a regular file of at most `max` bytes.
///
/// The open is non-blocking so that a FIFO swapped in after a `stat` cannot
/// block; the type is then checked on the open handle.
pub fn open_regular(path: &Path, max: u64) -> Result<(File, u64), ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    #[expect(
        clippy::disallowed_methods,
        reason = "the one opener of files outside a skill: regular files only, without blocking"
    )]
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > max {
        return Err(ReadError::TooLarge {
            len: meta.len(),
            max,
        });
    }
    Ok((file, meta.len()))
}

/// Reads `file` until `buf` holds `want` bytes or the file ends. Returns whether
/// it ended. Never reads more than `max + 1` bytes in total, so a file that grew
/// past the cap after it was opened is still caught. Reads into spare capacity:
/// nothing is zero-filled (that used to cost a 1 MiB memset per call).
pub fn fill(file: &mut File, buf: &mut Vec<u8>, want: usize, max: u64) -> Result<bool, ReadError> {
    let want = (want as u64).min(max.saturating_add(1));
    let ask = want.saturating_sub(buf.len() as u64);
    let got = file.by_ref().take(ask).read_to_end(buf)? as u64;
    if buf.len() as u64 > max {
        return Err(ReadError::TooLarge {
            len: buf.len() as u64,
            max,
        });
    }
    // Nothing more may be read (`ask == 0`) counts as the end: the caller must
    // not ask again.
    Ok(got < ask || ask == 0)
}

/// The whole of a regular file of at most `max` bytes, exactly as on disk.
pub fn read_bytes(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (mut file, len) = open_regular(path, max)?;
    read_all(&mut file, len, max)
}

/// The rest of an open file of `len` bytes (its size when opened), at most
/// `max` bytes.
///
/// Read as the version it was opened at: `len` bytes (fewer if it shrank),
/// in one `read` where the file system allows, without the probe for more
/// that `read_to_end` makes (or its first 8 KiB read): a text read on a call
/// took three reads, now one. A file that grows while it is read gets a new
/// version, so whoever keeps what was read reads it again. A file that says
/// it is empty (as some generated files do) is read to its end, up to `max`.
pub fn read_all(file: &mut File, len: u64, max: u64) -> Result<Vec<u8>, ReadError> {
    if len > max {
        return Err(ReadError::TooLarge { len, max });
    }
    if len == 0 {
        let mut buf = Vec::new();
        fill(file, &mut buf, usize::MAX, max)?;
        return Ok(buf);
    }
    let mut buf = vec![0; usize::try_from(len).unwrap_or(usize::MAX)];
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(got) => filled += got,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err.into()),
        }
    }
    buf.truncate(filled);
    Ok(buf)
}

/// The whole file as text: strict UTF-8, a leading BOM removed, everything else
/// (line endings, trailing spaces, tabs) exactly as on disk.
pub fn read_text(path: &Path, max: u64) -> Result<String, ReadError> {
    text(read_bytes(path, max)?)
}

/// `bytes` as text: strict UTF-8, a leading BOM removed, everything else
/// kept.
pub fn text(bytes: Vec<u8>) -> Result<String, ReadError> {
    let mut text = String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        ReadError::InvalidUtf8 {
            line: line_of(bytes, e.utf8_error().valid_up_to()),
        }
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// The largest settings file read: far more than any real one.
pub const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// THE way skillserve reads a settings file of its own or of another tool
/// (`settings.json`, plugin manifests, `installed_plugins.json`, an
/// `mcpServers` file, a lock file): as text, only when it is a regular file
/// (opened without blocking: a FIFO in an untrusted repository cannot hang
/// the server), at most [`MAX_SETTINGS_BYTES`]. A missing file is an
/// [`ReadError::Io`] whose [`ReadError::is_gone`] is true.
pub fn read_settings(path: &Path) -> Result<String, ReadError> {
    read_text(path, MAX_SETTINGS_BYTES)
}

/// 1-based line number of byte `offset`.
pub fn line_of(bytes: &[u8], offset: usize) -> usize {
    1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count()
}

/// Whether an entry named `name` is private: hidden (`.git`, `.env`,
/// `.DS_Store`, editors' swap files) or `node_modules` (in any case, as
/// case-insensitive file systems would open it). The scan never walks into
/// one, the watcher ignores them, and no skill file below one is served.
pub fn is_private(name: &[u8]) -> bool {
    name.starts_with(b".") || name.eq_ignore_ascii_case(b"node_modules")
}

/// Whether an entry named `name` is what no skill holds, hidden or not:
/// version-control metadata (`.git`, `.hg`, `.svn`, a repository's own
/// records, which no skill runs) or `node_modules` (what a package manager
/// installed, thousands of files that would stop every listing at its
/// bounds), in any case. Neither an installed skill nor the security scan
/// reads them.
pub fn is_metadata(name: &[u8]) -> bool {
    [&b".git"[..], b".hg", b".svn", b"node_modules"]
        .iter()
        .any(|skipped| name.eq_ignore_ascii_case(skipped))
}

/// A path as a hash key, hashed and compared as bytes (hashing a `Path`
/// walks its components, a cost on every call that looks up a skill's kept
/// files), and shared with the skill the snapshot serves from it. Looked up
/// by the bytes of a path (`Borrow<[u8]>`), without making one.
#[derive(Debug, Clone)]
pub struct PathKey(pub Arc<Path>);

impl PathKey {
    /// The bytes a key is looked up by.
    pub fn bytes_of(path: &Path) -> &[u8] {
        path.as_os_str().as_encoded_bytes()
    }
}

impl Hash for PathKey {
    // The same as the hash of the bytes, as `Borrow<[u8]>` requires.
    fn hash<H: Hasher>(&self, state: &mut H) {
        PathKey::bytes_of(&self.0).hash(state);
    }
}

impl PartialEq for PathKey {
    fn eq(&self, other: &PathKey) -> bool {
        PathKey::bytes_of(&self.0) == PathKey::bytes_of(&other.0)
    }
}

impl Eq for PathKey {}

impl Borrow<[u8]> for PathKey {
    fn borrow(&self) -> &[u8] {
        PathKey::bytes_of(&self.0)
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_raw_stat_and_metadata_give_the_same_stamp_even_before_1970() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("old");
        std::fs::write(&file, "x").unwrap();
        let before_1970 =
            std::time::UNIX_EPOCH - std::time::Duration::new(86_400 * 365, 250_000_000);
        File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(before_1970)
            .unwrap();
        let meta = std::fs::metadata(&file).unwrap();
        let st = rustix::fs::stat(&file).unwrap();
        assert_eq!(Stamp::of(&meta), Stamp::of_stat(&st));
        assert!(Stamp::of(&meta).modified < 0);
    }

    #[cfg(unix)]
    #[test]
    fn a_permission_change_changes_the_stamp() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("SKILL.md");
        std::fs::write(&file, "x").unwrap();
        let before = Stamp::of(&std::fs::metadata(&file).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_ne!(before, Stamp::of(&std::fs::metadata(&file).unwrap()));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo only reads the NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            read_text(&path, 1 << 20),
            Err(ReadError::NotRegular)
        ));
    }

    #[test]
    fn a_stamp_survives_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = Stamp::of(&std::fs::metadata(dir.path()).unwrap());
        assert_eq!(Stamp::decode(&stamp.encode()), Some(stamp));
        assert_eq!(Stamp::decode("1 2 3"), None);
        assert_eq!(Stamp::decode(&format!("{} 8", stamp.encode())), None);
    }

    #[test]
    fn the_size_cap_and_utf8_are_enforced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"\xef\xbb\xbfok\nbad \xff\n").unwrap();
        assert!(matches!(
            read_text(&path, 4),
            Err(ReadError::TooLarge { .. })
        ));
        assert!(matches!(
            read_text(&path, 1 << 20),
            Err(ReadError::InvalidUtf8 { line: 2 })
        ));
        std::fs::write(&path, b"\xef\xbb\xbfok\n").unwrap();
        assert_eq!(read_text(&path, 1 << 20).unwrap(), "ok\n");
    }

    #[test]
    fn a_file_is_read_as_the_version_it_was_opened_at() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "opened\n").unwrap();
        let (mut file, len) = open_regular(&path, 1 << 20).unwrap();
        // Grown after it was opened: the bytes of the version opened.
        std::fs::write(&path, "opened\nand more since\n").unwrap();
        assert_eq!(read_all(&mut file, len, 1 << 20).unwrap(), b"opened\n");
        // Shrunk: what is there.
        let (mut file, len) = open_regular(&path, 1 << 20).unwrap();
        std::fs::write(&path, "cut").unwrap();
        assert_eq!(read_all(&mut file, len, 1 << 20).unwrap(), b"cut");
        // A file that says it is empty is read to its end, within the cap.
        let (mut file, _) = open_regular(&path, 1 << 20).unwrap();
        assert_eq!(read_all(&mut file, 0, 1 << 20).unwrap(), b"cut");
        let (mut file, _) = open_regular(&path, 1 << 20).unwrap();
        assert!(matches!(
            read_all(&mut file, 0, 2),
            Err(ReadError::TooLarge { len: 3, max: 2 })
        ));
    }
}
