//! The gate: the one way a skill's files are opened for a client
//! (behaviour.md §9, §12). `SKILL.md` itself, a requested file, every folder
//! a listing reads and every file it lists or hashes is opened here, and
//! only here.
//!
//! A path is never checked and then opened again by name: the skill folder
//! is opened once (for a project skill, beneath an open handle of the
//! repository: the [`Fence`]), and every path inside it is opened relative
//! to that handle, one component at a time. What is then read is the very
//! file that was checked, so swapping a file or folder for a symlink between
//! a check and a read (`renameat2(RENAME_EXCHANGE)` in a loop) can never
//! lead outside.
//!
//! - On Linux, `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` opens a
//!   path without a symlink in one system call (with `RESOLVE_NO_SYMLINKS`
//!   inside a skill, where the hidden rule must see every name a symlink
//!   leads through). A symlink, an older kernel (`ENOSYS`) or a sandbox that
//!   forbids the call (`EPERM`) falls back to the walk by hand.
//! - The walk by hand, on every Unix: `openat(O_NOFOLLOW)` per component; a
//!   symlink is read (`readlinkat`) and its target walked in turn from the
//!   folder that holds it, its `..` popping the walk's own stack of open
//!   folders and never climbing above the handle; at most [`MAX_HOPS`]
//!   symlinks. An absolute target is followed only when it names a place
//!   below the handle's own path (then walked from the handle).
//! - On Windows a path is opened by name, and the file system is then asked
//!   where the open handle really is (`GetFinalPathNameByHandleW`, which
//!   gives each component's long name, so `GIT~1` is `.git`): it must lie
//!   below the skill folder's own final path, and pass the hidden rule
//!   there. The handle that was checked is the one read.
//!
//! Only regular files and folders are served; a file is opened without
//! blocking (a FIFO never hangs a reader) and its type checked on the open
//! handle. Hidden names (`.git`, `.env`) and `node_modules` are refused in
//! the path asked for and in every name a symlink leads through. Refusals
//! name the rule and nothing about where a symlink points or whether
//! anything outside exists: what lies outside is never looked at.
//!
//! In the user's own folders (user, custom, plugin roots), the skill folder
//! and its `SKILL.md` may be symlinks to anywhere: those folders are the
//! user's. The skill's own `SKILL.md` is served wherever the `skill` tool
//! reads it from ([`open_own`]). A hard link to a file outside the skill is
//! the file itself, and no path rule can tell it apart.

use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::disk::{self, ReadError, Stamp};

/// A requested path longer than this is refused without touching the disk.
pub const MAX_PATH_BYTES: usize = 1024;
/// Symlinks followed in one path, at most (Linux's own limit).
pub const MAX_HOPS: usize = 40;

/// The repository a project's skills come from: no symlink may lead out of
/// it (behaviour.md §12).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fence {
    /// As spelled: the folder every project root's path starts with.
    pub path: PathBuf,
    /// Resolved when the roots were found.
    pub real: PathBuf,
}

impl Fence {
    pub fn new(top: &Path) -> Fence {
        Fence {
            path: top.to_path_buf(),
            real: std::fs::canonicalize(top).unwrap_or_else(|_| top.to_path_buf()),
        }
    }
}

/// Where a skill is: everything the gate needs to open its files.
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    /// The skill folder.
    pub dir: &'a Path,
    /// The name of its `SKILL.md` (or `skill.md`), directly in `dir`:
    /// a name rather than a path, so that a skill holds no second copy of
    /// its folder's path.
    pub file_name: &'a str,
    /// For a project skill, the repository.
    pub fence: Option<&'a Fence>,
    /// Which names are not part of the skill: [`Hidden::Served`] for an
    /// installed source, else [`Hidden::Refused`].
    pub hidden: Hidden,
}

impl Place<'_> {
    /// The skill's own file.
    pub fn file(&self) -> PathBuf {
        self.dir.join(self.file_name)
    }
}

/// Which names on the way to a file a gate refuses (behaviour.md §9.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hidden {
    /// Hidden names and `node_modules` ([`disk::is_private`]): the user's
    /// and projects' own folders, where a hidden file is the user's own
    /// business (`.env`, editors' files), never a skill's.
    Refused,
    /// Only version-control metadata and `node_modules`
    /// ([`disk::is_metadata`]): an installed source, whose publisher
    /// committed its hidden files into the skill (`resources/.zshrc` that
    /// its `install.sh` copies); they were scanned as every file is.
    Served,
    /// None: the security scan, which reads what it will never serve.
    Read,
}

impl Hidden {
    /// Whether a path through `name` is refused.
    pub fn refuses(self, name: &[u8]) -> bool {
        match self {
            Hidden::Refused => disk::is_private(name),
            Hidden::Served => disk::is_metadata(name),
            Hidden::Read => false,
        }
    }
}

/// Why a requested file cannot be served. The texts complete the sentence
/// "Skill 'pdf' cannot serve 'X': …" (behaviour.md §9); none names where a
/// symlink leads.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error(
        "`file` must be relative to the skill's folder (like `references/forms.md`), not an absolute path"
    )]
    Absolute,
    #[error("`..` is not allowed; only files inside the skill's folder can be read")]
    Climbs,
    #[error("use `/` to separate folders, not `\\`")]
    Backslash,
    #[error("the path holds a control character (a line break, say)")]
    Control,
    #[error("the path is longer than {MAX_PATH_BYTES} bytes")]
    TooLong,
    #[error("`{name}` is not served; hidden files and folders and `node_modules` never are")]
    Hidden { name: String },
    #[error(
        "it leads to a hidden file or folder or `node_modules` under another name (a symlink, say), which are never served"
    )]
    HiddenTarget,
    #[error("it leads outside the skill's folder through a symlink, so it is not read")]
    Outside,
    #[error("it leads outside the project through a symlink, so it is not read")]
    OutsideProject,
    #[error("it is not a regular file (a FIFO, socket or device), so it is not read")]
    NotRegular,
    #[error("the skill has no such file")]
    NotFound {
        /// Up to five listed paths like the one asked for, best first
        /// (`listing::suggest`); the gate leaves it empty.
        suggestions: Vec<String>,
    },
    #[error("the file is {size} bytes, over the {max}-byte limit")]
    TooLarge { size: u64, max: u64 },
    #[error("{0}")]
    Io(io::Error),
}

impl FileError {
    fn not_found() -> FileError {
        FileError::NotFound {
            suggestions: Vec::new(),
        }
    }
}

impl From<io::Error> for FileError {
    fn from(err: io::Error) -> FileError {
        if disk::is_gone(&err) {
            FileError::not_found()
        } else {
            FileError::Io(err)
        }
    }
}

impl From<ReadError> for FileError {
    fn from(err: ReadError) -> FileError {
        match err {
            ReadError::TooLarge { len, max } => FileError::TooLarge { size: len, max },
            ReadError::OutsideProject => FileError::OutsideProject,
            ReadError::Io(err) => err.into(),
            // Frontmatter and UTF-8 are SKILL.md's own reasons; a file
            // that is not regular is the one left.
            _ => FileError::NotRegular,
        }
    }
}

/// What an open [`Opened`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Folder,
}

/// A file or folder of a skill, open: what is read, hashed or listed is this
/// handle, the one the checks were made on.
#[derive(Debug)]
pub struct Opened {
    file: File,
    kind: Kind,
    meta: Metadata,
    /// Where it really is below the skill folder, `/`-separated, when a
    /// symlink led elsewhere than the path asked for.
    real: Option<String>,
}

impl Opened {
    /// Takes an open handle whose type is not known yet: a regular file or
    /// a folder, else [`FileError::NotRegular`].
    fn new(file: File, real: Option<String>) -> Result<Opened, FileError> {
        let meta = file.metadata()?;
        let kind = if meta.is_file() {
            Kind::File
        } else if meta.is_dir() {
            Kind::Folder
        } else {
            return Err(FileError::NotRegular);
        };
        Ok(Opened {
            file,
            kind,
            meta,
            real,
        })
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The size when it was opened.
    pub fn len(&self) -> u64 {
        self.meta.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its version when it was opened.
    pub fn stamp(&self) -> Stamp {
        Stamp::of(&self.meta)
    }

    /// Where a symlink led, below the skill folder (`None`: where asked).
    pub fn real(&self) -> Option<&str> {
        self.real.as_deref()
    }

    /// The open file, to read.
    pub fn into_file(self) -> File {
        self.file
    }
}

/// A path a client asked for, cleaned, and what it opened.
#[derive(Debug)]
pub struct Target {
    rel: String,
    pub opened: Opened,
}

impl Target {
    /// The path asked for, cleaned: relative to the skill folder,
    /// `/`-separated, without `.` or empty components ("" for the skill
    /// folder itself).
    pub fn rel(&self) -> &str {
        &self.rel
    }

    pub fn kind(&self) -> Kind {
        self.opened.kind
    }
}

/// The checks on a requested path's text alone, before the disk is touched;
/// the cleaned relative path.
///
/// Refused: absolute paths (`/x`, `\x`, `C:\x`, `C:/x`, `//server`), any
/// `..` component (even one that would stay inside: simpler to check, and
/// never needed), backslashes (a separator on Windows, a name character
/// elsewhere: refusing them means one meaning everywhere), control
/// characters (NUL, line breaks), hidden components and `node_modules`, and
/// paths longer than [`MAX_PATH_BYTES`]. Empty and `.` components are
/// dropped, so "" and "." name the skill folder itself. Percent-encoding is
/// not decoded here: `%2e%2e` is just a name.
pub fn clean(requested: &str, hidden: Hidden) -> Result<String, FileError> {
    if requested.len() > MAX_PATH_BYTES {
        return Err(FileError::TooLong);
    }
    if requested.chars().any(char::is_control) {
        return Err(FileError::Control);
    }
    let bytes = requested.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if requested.starts_with(['/', '\\']) || drive {
        return Err(FileError::Absolute);
    }
    if requested.contains('\\') {
        return Err(FileError::Backslash);
    }
    let mut parts = Vec::new();
    for part in requested.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(FileError::Climbs),
            name if hidden.refuses(name.as_bytes()) => {
                return Err(FileError::Hidden {
                    name: name.to_owned(),
                });
            }
            name => parts.push(name),
        }
    }
    Ok(parts.join("/"))
}

/// The skill's own `SKILL.md`, open, wherever the `skill` tool reads it
/// from: in the user's folders by its path (a symlink to anywhere is the
/// user's choice); in a project beneath the repository, never through a
/// symlink out of it. Only a regular file.
pub fn open_own(place: Place) -> Result<Opened, ReadError> {
    let file = match place.fence {
        None => sys::open_path(&place.file(), false)?,
        Some(fence) => match in_project(fence, &place.file(), false) {
            Ok(file) => file,
            Err(FileError::OutsideProject) => return Err(ReadError::OutsideProject),
            Err(FileError::NotFound { .. }) => {
                return Err(io::Error::from(io::ErrorKind::NotFound).into());
            }
            Err(FileError::Io(err)) => return Err(err.into()),
            Err(_) => return Err(ReadError::NotRegular),
        },
    };
    match Opened::new(file, None) {
        Ok(opened) if opened.kind == Kind::File => Ok(opened),
        Err(FileError::Io(err)) => Err(err.into()),
        _ => Err(ReadError::NotRegular),
    }
}

/// Opens `path` (a path below the repository, as its project roots spell
/// it) beneath the repository, symlinks followed only inside it:
/// [`FileError::OutsideProject`] when it leads out, said without looking
/// out there (the same whether or not anything exists there).
pub fn open_in_project(fence: &Fence, path: &Path) -> Result<File, FileError> {
    in_project(fence, path, false)
}

fn in_project(fence: &Fence, path: &Path, folder: bool) -> Result<File, FileError> {
    let rel = path
        .strip_prefix(&fence.path)
        .or_else(|_| path.strip_prefix(&fence.real))
        .map_err(|_| FileError::OutsideProject)?;
    let top = sys::open_path(&fence.real, true)?;
    let walk = Walk {
        root: &top,
        names: &|| vec![fence.path.clone(), fence.real.clone()],
        hidden: Hidden::Read,
    };
    match walk.open(rel, folder) {
        Err(FileError::Outside) => Err(FileError::OutsideProject),
        other => Ok(other?.0),
    }
}

/// A skill folder, open: every file of the skill is opened beneath it.
pub struct Gate<'a> {
    place: Place<'a>,
    dir: File,
    /// Whether [`Gate::root`] handed out `dir` to be listed: a handle's
    /// listing is read once (its position then stays at the end).
    listed: AtomicBool,
}

impl<'a> Gate<'a> {
    /// Opens the skill folder: by its path in the user's folders; beneath
    /// the repository for a project skill, refused
    /// ([`FileError::OutsideProject`]) when it now leads out.
    pub fn open(place: Place<'a>) -> Result<Gate<'a>, FileError> {
        let dir = match place.fence {
            None => sys::open_path(place.dir, true)?,
            Some(fence) => in_project(fence, place.dir, true)?,
        };
        Ok(Gate {
            place,
            dir,
            listed: AtomicBool::new(false),
        })
    }

    /// The skill folder itself, to list through the gate's own handle: the
    /// walk of a whole skill then opens the folder once, not a second time
    /// as `.`. `None` once it was handed out (a handle's listing is read to
    /// its end), when its metadata cannot be read, and off Linux (where a
    /// listing reads its own handle anyway, and a folder open on Windows
    /// cannot be renamed): open `""` with [`Gate::open_rel`] then.
    pub fn root(&self) -> Option<Root<'_>> {
        if cfg!(not(any(target_os = "linux", target_os = "android")))
            || self.listed.swap(true, Ordering::Relaxed)
        {
            return None;
        }
        let meta = self.dir.metadata().ok()?;
        Some(Root {
            dir: &self.dir,
            meta,
        })
    }

    /// Where the skill is.
    pub fn place(&self) -> Place<'a> {
        self.place
    }

    /// The file or folder `requested` (a path a client gave) names: its
    /// text checked ([`clean`]), then opened beneath the skill folder.
    pub fn resolve(&self, requested: &str) -> Result<Target, FileError> {
        let rel = clean(requested, self.place.hidden)?;
        let opened = self.open_rel(&rel)?;
        Ok(Target { rel, opened })
    }

    /// `rel` (a cleaned path, "" for the skill folder) opened beneath the
    /// skill folder; the skill's own file as [`open_own`] opens it.
    pub fn open_rel(&self, rel: &str) -> Result<Opened, FileError> {
        self.open_in(rel, self.place.hidden)
    }

    /// `rel` opened beneath the skill folder as [`Gate::open_rel`] opens
    /// it, but hidden names and `node_modules` on the way are not refused:
    /// for the security scan, which reads every file a skill folder holds
    /// (what it reads this way is never served). Symlinks still never lead
    /// out of the skill folder.
    pub fn open_unserved(&self, rel: &str) -> Result<Opened, FileError> {
        self.open_in(rel, Hidden::Read)
    }

    fn open_in(&self, rel: &str, hidden: Hidden) -> Result<Opened, FileError> {
        if self.place.file_name == rel {
            return Ok(open_own(self.place)?);
        }
        let walk = Walk {
            root: &self.dir,
            names: &|| {
                let mut names = vec![self.place.dir.to_path_buf()];
                names.extend(std::fs::canonicalize(self.place.dir));
                names
            },
            hidden,
        };
        let (file, real) = walk.open(Path::new(rel), false)?;
        Opened::new(file, real.filter(|real| real != rel))
    }

    /// The entries of `folder` (an open folder of a skill), each as it is
    /// now, symlinks not followed.
    pub fn entries(folder: Opened) -> io::Result<Vec<(OsString, Entry)>> {
        sys::entries(&folder.file)
    }
}

/// The skill folder, through its gate's own handle (see [`Gate::root`]).
pub struct Root<'g> {
    dir: &'g File,
    meta: Metadata,
}

impl Root<'_> {
    /// Its version when [`Gate::root`] handed it out.
    pub fn stamp(&self) -> Stamp {
        Stamp::of(&self.meta)
    }

    /// Its metadata when [`Gate::root`] handed it out.
    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// Its entries, as [`Gate::entries`] gives them.
    pub fn entries(self) -> io::Result<Vec<(OsString, Entry)>> {
        sys::entries(self.dir)
    }

    /// The names of its entries alone (no `stat`).
    pub fn names(self) -> io::Result<Vec<OsString>> {
        sys::names(self.dir)
    }
}

/// A folder entry as [`Gate::entries`] sees it.
#[derive(Clone, Copy, Debug)]
pub enum Entry {
    File {
        len: u64,
    },
    /// A folder, by the folder's listing (with no `stat`: open it to know
    /// more).
    Folder,
    /// A symlink: open it with [`Gate::open_rel`] to follow it by the rules.
    Link,
    /// A FIFO, socket or device.
    Other,
}

/// One walk beneath an open folder.
struct Walk<'a> {
    root: &'a File,
    /// The absolute paths that name `root`: an absolute symlink target
    /// below one of them is walked from `root`; any other is outside.
    /// Asked only when such a symlink is met (on Windows the file system
    /// follows links, and the final path decides).
    #[cfg_attr(windows, allow(dead_code))]
    names: &'a dyn Fn() -> Vec<PathBuf>,
    /// Which names are refused.
    hidden: Hidden,
}

impl Walk<'_> {
    /// Opens `rel` beneath the root (a folder when `folder`, else a file or
    /// a folder), following symlinks by the rules; with where it really is
    /// below the root.
    fn open(&self, rel: &Path, folder: bool) -> Result<(File, Option<String>), FileError> {
        sys::open_beneath(self, rel, folder)
    }

    /// The components of an absolute symlink target below one of the
    /// root's names, or `None`: it leads outside.
    #[cfg_attr(windows, allow(dead_code))]
    fn below_names(&self, target: &Path) -> Option<Vec<OsString>> {
        (self.names)().iter().find_map(|name| {
            let rest = target.strip_prefix(name).ok()?;
            Some(rest.iter().map(OsString::from).collect())
        })
    }
}

/// The rules on where an open handle really is (its final path, from the
/// file system): below `root` (the skill folder's final path), and, with
/// `hidden`, through no hidden name or `node_modules` there. The relative
/// path when it passes.
#[cfg(any(windows, test))]
fn check_final(root: &Path, real: &Path, hidden: Hidden) -> Result<String, FileError> {
    let rest = real.strip_prefix(root).map_err(|_| FileError::Outside)?;
    let mut parts = Vec::new();
    for part in rest.iter() {
        let name = part.to_string_lossy();
        if hidden.refuses(name.as_bytes()) {
            return Err(FileError::HiddenTarget);
        }
        parts.push(name.into_owned());
    }
    Ok(parts.join("/"))
}

#[cfg(unix)]
mod sys {
    //! The walk with `openat`, and `openat2` on Linux.

    use std::ffi::{OsStr, OsString};
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::Path;

    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;

    use super::{Entry, FileError, MAX_HOPS, Walk};

    /// A file opened to be read, or a folder to be listed: never blocking
    /// (a FIFO), never becoming a controlling terminal.
    const READ: OFlags = OFlags::RDONLY
        .union(OFlags::NONBLOCK)
        .union(OFlags::NOCTTY)
        .union(OFlags::CLOEXEC);
    /// A folder on the way, opened only to open what is in it.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const THROUGH: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const THROUGH: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::CLOEXEC);

    /// Opens `path` by name, symlinks followed (the user's own folders, or
    /// the repository's top): a folder when `folder`, else to be read.
    pub(super) fn open_path(path: &Path, folder: bool) -> io::Result<File> {
        let flags = if folder {
            READ | OFlags::DIRECTORY
        } else {
            READ
        };
        Ok(rustix::fs::open(path, flags, Mode::empty())?.into())
    }

    pub(super) fn open_beneath(
        walk: &Walk,
        rel: &Path,
        folder: bool,
    ) -> Result<(File, Option<String>), FileError> {
        let flags = if folder {
            READ | OFlags::DIRECTORY
        } else {
            READ
        };
        #[cfg(target_os = "linux")]
        if let Some(opened) = fast::open(walk, rel, flags) {
            return opened.map(|fd| (fd.into(), None));
        }
        by_hand(walk, rel, flags)
    }

    /// The walk by hand: one component at a time, each opened relative to
    /// the folder before it without following a symlink; a symlink's target
    /// walked in turn, `..` popping the stack of open folders.
    fn by_hand(
        walk: &Walk,
        rel: &Path,
        flags: OFlags,
    ) -> Result<(File, Option<String>), FileError> {
        // Components still to walk, the next one last.
        let mut todo: Vec<OsString> = components(rel.as_os_str());
        todo.reverse();
        // The open folders below the root, and their names.
        let mut stack: Vec<(OwnedFd, OsString)> = Vec::new();
        let mut hops = 0;
        while let Some(name) = todo.pop() {
            if name == ".." {
                if stack.pop().is_none() {
                    return Err(FileError::Outside);
                }
                continue;
            }
            if walk.hidden.refuses(name.as_bytes()) {
                // Only a symlink's target can hold one here: the path
                // asked for was cleaned.
                return Err(FileError::HiddenTarget);
            }
            let at = stack.last().map_or(walk.root.as_fd(), |(fd, _)| fd.as_fd());
            let last = todo.is_empty();
            let how = if last { flags } else { THROUGH };
            let err = match rustix::fs::openat(at, &*name, how | OFlags::NOFOLLOW, Mode::empty()) {
                Ok(fd) if last => {
                    let real = real_path(&stack, Some(&name));
                    return Ok((fd.into(), Some(real)));
                }
                Ok(fd) => {
                    stack.push((fd, name));
                    continue;
                }
                Err(err) => err,
            };
            let Ok(target) = rustix::fs::readlinkat(at, &*name, Vec::new()) else {
                return Err(refused(at, &name, err));
            };
            hops += 1;
            if hops > MAX_HOPS {
                return Err(io::Error::from(Errno::LOOP).into());
            }
            let target = OsString::from_vec(target.into_bytes());
            let mut parts = if Path::new(&target).is_absolute() {
                let parts = walk
                    .below_names(Path::new(&target))
                    .ok_or(FileError::Outside)?;
                stack.clear();
                parts
            } else {
                components(&target)
            };
            parts.reverse();
            todo.extend(parts);
        }
        // The path ended on a folder: "", or a symlink or `..` leading to
        // one. Open it as asked.
        let at = stack.last().map_or(walk.root.as_fd(), |(fd, _)| fd.as_fd());
        let fd = rustix::fs::openat(at, ".", flags, Mode::empty()).map_err(io::Error::from)?;
        Ok((fd.into(), Some(real_path(&stack, None))))
    }

    /// The names of the open folders, and the last one, `/`-separated.
    fn real_path(stack: &[(OwnedFd, OsString)], last: Option<&OsStr>) -> String {
        let names = stack.iter().map(|(_, name)| name.as_os_str()).chain(last);
        let names: Vec<_> = names.map(OsStr::to_string_lossy).collect();
        names.join("/")
    }

    /// The components of a path, `.` and empty ones dropped.
    fn components(path: &OsStr) -> Vec<OsString> {
        path.as_bytes()
            .split(|&b| b == b'/')
            .filter(|part| !part.is_empty() && *part != b".")
            .map(|part| OsString::from_vec(part.to_vec()))
            .collect()
    }

    /// Why `name` in the folder `at` could not be opened (it is not a
    /// symlink): gone, not a regular file or folder, or the error itself.
    fn refused(at: BorrowedFd, name: &OsStr, err: Errno) -> FileError {
        match err {
            Errno::NOENT | Errno::NOTDIR => FileError::not_found(),
            _ => match rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st)
                    if !matches!(
                        FileType::from_raw_mode(st.st_mode),
                        FileType::RegularFile | FileType::Directory
                    ) =>
                {
                    FileError::NotRegular
                }
                _ => io::Error::from(err).into(),
            },
        }
    }

    /// The entries of `folder`, symlinks not followed. Its listing gives
    /// each name's type; a file's size (or an unknown type) takes a `stat`.
    pub(super) fn entries(folder: &File) -> io::Result<Vec<(OsString, Entry)>> {
        entries_of(folder.as_fd(), named(folder)?)
    }

    /// The names in `folder`, `.` and `..` aside.
    pub(super) fn names(folder: &File) -> io::Result<Vec<OsString>> {
        Ok(named(folder)?.into_iter().map(|(name, _)| name).collect())
    }

    /// The names in `folder` with the type its listing gives each. On Linux
    /// the listing is read with `getdents64` into one buffer on the stack
    /// (rustix's `Dir` allocates a buffer per folder and grows it).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn named(folder: &File) -> io::Result<Vec<(OsString, FileType)>> {
        // Far more than the largest entry (a 255-byte name and 19 bytes).
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
        let mut dir = rustix::fs::RawDir::new(folder, &mut buf);
        let mut named = Vec::new();
        while let Some(entry) = dir.next() {
            let entry = entry?;
            named.extend(listed(entry.file_name(), entry.file_type()));
        }
        Ok(named)
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn named(folder: &File) -> io::Result<Vec<(OsString, FileType)>> {
        // `Dir` takes a descriptor of its own: a copy of the handle (no path
        // lookup), whose listing was never read (`Gate::root` hands none
        // out here).
        let mut dir = rustix::fs::Dir::new(rustix::io::dup(folder)?)?;
        let mut named = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry?;
            named.extend(listed(entry.file_name(), entry.file_type()));
        }
        Ok(named)
    }

    /// A name a folder's listing gives, with its type, unless it is `.` or
    /// `..`.
    fn listed(name: &std::ffi::CStr, kind: FileType) -> Option<(OsString, FileType)> {
        let name = name.to_bytes();
        (name != b"." && name != b"..").then(|| (OsString::from_vec(name.to_vec()), kind))
    }

    /// The entries of the folder `fd`, from the names its listing gave.
    fn entries_of(
        fd: BorrowedFd,
        named: Vec<(OsString, FileType)>,
    ) -> io::Result<Vec<(OsString, Entry)>> {
        let mut out = Vec::with_capacity(named.len());
        for (name, kind) in named {
            let found = match kind {
                FileType::Symlink => Entry::Link,
                // Its size and version are read when it is opened.
                FileType::Directory => Entry::Folder,
                FileType::RegularFile | FileType::Unknown => {
                    match rustix::fs::statat(fd, &*name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                            FileType::RegularFile => Entry::File {
                                len: st.st_size as u64,
                            },
                            FileType::Directory => Entry::Folder,
                            FileType::Symlink => Entry::Link,
                            _ => Entry::Other,
                        },
                        // Gone since it was listed.
                        Err(_) => continue,
                    }
                }
                _ => Entry::Other,
            };
            out.push((name, found));
        }
        Ok(out)
    }

    /// The walk by hand is what runs wherever `openat2` does not: it must
    /// open what `openat2` opens, and refuse alike.
    #[cfg(all(test, target_os = "linux"))]
    #[test]
    #[allow(
        clippy::disallowed_methods,
        reason = "tests build and inspect their files with std::fs"
    )]
    fn the_walk_by_hand_opens_what_openat2_opens() {
        use std::path::PathBuf;
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/c.md"), "x").unwrap();
        std::fs::write(root.join("top.md"), "y").unwrap();
        let dir = open_path(root, true).unwrap();
        let walk = Walk {
            root: &dir,
            names: &Vec::<PathBuf>::new,
            hidden: crate::gate::Hidden::Refused,
        };
        for rel in ["", "top.md", "a", "a/b", "a/b/c.md"] {
            let (hand, _) = by_hand(&walk, Path::new(rel), READ).unwrap();
            let hand = rustix::fs::fstat(&hand).unwrap();
            match fast::open(&walk, Path::new(rel), READ) {
                Some(fast) => {
                    let fast = rustix::fs::fstat(fast.unwrap()).unwrap();
                    assert_eq!(
                        (fast.st_dev, fast.st_ino),
                        (hand.st_dev, hand.st_ino),
                        "{rel}"
                    );
                }
                None => eprintln!("no openat2 here: the walk by hand alone"),
            }
        }
        for rel in ["missing", "top.md/x", "a/missing/c.md"] {
            assert!(
                matches!(
                    by_hand(&walk, Path::new(rel), READ),
                    Err(FileError::NotFound { .. })
                ),
                "{rel}"
            );
            assert!(
                matches!(
                    fast::open(&walk, Path::new(rel), READ),
                    None | Some(Err(FileError::NotFound { .. }))
                ),
                "{rel}"
            );
        }
    }

    #[cfg(target_os = "linux")]
    mod fast {
        //! `openat2`: a path without a symlink in one system call.

        use std::os::fd::OwnedFd;
        use std::path::Path;
        use std::sync::atomic::{AtomicBool, Ordering};

        use rustix::fs::{Mode, OFlags, ResolveFlags};
        use rustix::io::Errno;

        use super::super::{FileError, Walk};

        /// Cleared when the kernel has no `openat2` (before 5.6) or a
        /// sandbox forbids it: the walk by hand does it all then.
        static AVAILABLE: AtomicBool = AtomicBool::new(true);

        /// `None` when the walk by hand must decide: a symlink on the way
        /// (inside a skill: the hidden rule must see where it leads), an
        /// escape or absolute symlink (the walk refuses or follows it), a
        /// rename meanwhile (`EAGAIN`), or an error it words better.
        pub(super) fn open(
            walk: &Walk,
            rel: &Path,
            flags: OFlags,
        ) -> Option<Result<OwnedFd, FileError>> {
            if !AVAILABLE.load(Ordering::Relaxed) {
                return None;
            }
            let mut resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            if walk.hidden != crate::gate::Hidden::Read {
                resolve |= ResolveFlags::NO_SYMLINKS;
            }
            let path = if rel.as_os_str().is_empty() {
                Path::new(".")
            } else {
                rel
            };
            match rustix::fs::openat2(walk.root, path, flags, Mode::empty(), resolve) {
                Ok(fd) => Some(Ok(fd)),
                Err(Errno::NOSYS | Errno::PERM) => {
                    AVAILABLE.store(false, Ordering::Relaxed);
                    None
                }
                Err(Errno::NOENT) => Some(Err(FileError::not_found())),
                Err(_) => None,
            }
        }
    }
}

#[cfg(windows)]
mod sys {
    //! Opened by name, then checked on the handle: where the file system
    //! says the open handle is, with every component's long name.

    use std::ffi::OsString;
    use std::fs::File;
    use std::io;
    use std::os::windows::ffi::OsStringExt;
    use std::os::windows::fs::OpenOptionsExt;
    use std::os::windows::io::AsRawHandle;
    use std::path::{Path, PathBuf};

    use windows_sys::Win32::Storage::FileSystem::{
        FILE_FLAG_BACKUP_SEMANTICS, FILE_NAME_NORMALIZED, FILE_SHARE_READ, FILE_SHARE_WRITE,
        GetFinalPathNameByHandleW, VOLUME_NAME_DOS,
    };

    use super::{Entry, FileError, Walk, check_final};

    /// Opens `path` by name (a folder needs backup semantics to be opened
    /// at all), shared for reading and writing but not deleting: while it is
    /// open, nobody can rename or remove it, or a folder above it.
    #[expect(
        clippy::disallowed_methods,
        reason = "the gate's own opener on Windows; the final path is checked after"
    )]
    pub(super) fn open_path(path: &Path, _folder: bool) -> io::Result<File> {
        std::fs::OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
            .open(path)
    }

    /// Where the file system says `file` is: its final path, every
    /// component by its long name.
    pub(super) fn final_path(file: &File) -> io::Result<PathBuf> {
        let mut buf = vec![0_u16; 512];
        loop {
            let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
            // SAFETY: the handle is open for the whole call, and the buffer
            // holds `len` u16s, which the call never writes past.
            let got = unsafe {
                GetFinalPathNameByHandleW(
                    file.as_raw_handle(),
                    buf.as_mut_ptr(),
                    len,
                    FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
                )
            } as usize;
            if got == 0 {
                return Err(io::Error::last_os_error());
            }
            if got < buf.len() {
                buf.truncate(got);
                return Ok(PathBuf::from(OsString::from_wide(&buf)));
            }
            // Too small: `got` is the size needed.
            buf.resize(got + 1, 0);
        }
    }

    pub(super) fn open_beneath(
        walk: &Walk,
        rel: &Path,
        folder: bool,
    ) -> Result<(File, Option<String>), FileError> {
        let root = final_path(walk.root)?;
        // Component by component: a final path starts with `\\?\`, after
        // which Windows takes `/` for a name character, not a separator.
        let mut path = root.clone();
        path.extend(rel.components());
        let file = open_path(&path, folder)?;
        let real = check_final(&root, &final_path(&file)?, walk.hidden)?;
        Ok((file, Some(real)))
    }

    pub(super) fn names(folder: &File) -> io::Result<Vec<OsString>> {
        std::fs::read_dir(final_path(folder)?)?
            .map(|entry| Ok(entry?.file_name()))
            .collect()
    }

    pub(super) fn entries(folder: &File) -> io::Result<Vec<(OsString, Entry)>> {
        // The folder is open without delete sharing: its final path names
        // it for as long as this reads.
        let mut out = Vec::new();
        for entry in std::fs::read_dir(final_path(folder)?)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let found = if kind.is_symlink() {
                Entry::Link
            } else {
                match entry.metadata() {
                    Ok(meta) if meta.is_file() => Entry::File { len: meta.len() },
                    Ok(meta) if meta.is_dir() => Entry::Folder,
                    Ok(_) => Entry::Other,
                    Err(_) => continue,
                }
            };
            out.push((entry.file_name(), found));
        }
        Ok(out)
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
pub(crate) mod tests {
    use super::*;

    /// A skill folder holding `files` (path, contents), inside a temporary
    /// folder that also holds `outside.txt`; the unit tests of `listing` and
    /// `files` build theirs with it too.
    pub(crate) fn skill(files: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join("outside.txt"), "SECRET").unwrap();
        let dir = temp.path().join("pdf");
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join("SKILL.md");
        std::fs::write(&file, "---\ndescription: d\n---\n").unwrap();
        for (path, contents) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, contents).unwrap();
        }
        (temp, dir, file)
    }

    fn place<'a>(dir: &'a Path, file: &'a Path, fence: Option<&'a Fence>) -> Place<'a> {
        assert_eq!(file.parent(), Some(dir));
        let file_name = file.file_name().unwrap().to_str().unwrap();
        Place {
            dir,
            file_name,
            fence,
            hidden: Hidden::Refused,
        }
    }

    #[cfg(unix)]
    pub(crate) fn symlink(target: &str, link: &Path) {
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, link).unwrap();
    }

    #[cfg(unix)]
    fn refused(gate: &Gate, requested: &str) -> FileError {
        gate.resolve(requested).expect_err(requested)
    }

    #[test]
    fn paths_that_climb_or_are_absolute_are_refused_by_their_text() {
        for path in [
            "../outside.txt",
            "references/../../x",
            "references/..",
            "..",
        ] {
            assert!(
                matches!(clean(path, Hidden::Refused), Err(FileError::Climbs)),
                "{path}"
            );
        }
        for path in [
            "/etc/passwd",
            "\\x",
            "C:\\x",
            "C:/x",
            "c:x",
            "//server/share",
        ] {
            assert!(
                matches!(clean(path, Hidden::Refused), Err(FileError::Absolute)),
                "{path}"
            );
        }
        assert!(matches!(
            clean("a\\b", Hidden::Refused),
            Err(FileError::Backslash)
        ));
        for path in ["a\0b", "forms\n.md", "x\r", "\u{1b}[31m", "tab\there"] {
            assert!(
                matches!(clean(path, Hidden::Refused), Err(FileError::Control)),
                "{path:?}"
            );
        }
        assert!(matches!(
            clean(&"a/".repeat(MAX_PATH_BYTES), Hidden::Refused),
            Err(FileError::TooLong)
        ));
        for (path, name) in [
            (".git/config", ".git"),
            ("./x/.env", ".env"),
            ("NODE_MODULES/x.js", "NODE_MODULES"),
        ] {
            match clean(path, Hidden::Refused) {
                Err(FileError::Hidden { name: got }) => assert_eq!(got, name),
                other => panic!("{path}: {other:?}"),
            }
        }
        for (path, cleaned) in [
            ("", ""),
            (".", ""),
            ("./a//b/", "a/b"),
            ("%2e%2e", "%2e%2e"),
        ] {
            assert_eq!(clean(path, Hidden::Refused).unwrap(), cleaned, "{path}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_only_inside_the_skill_and_to_nothing_hidden() {
        let (temp, dir, file) = skill(&[("references/forms.md", b"forms"), (".env", b"SECRET")]);
        symlink("../references/forms.md", &dir.join("links/forms.md"));
        symlink("../references", &dir.join("links/refs"));
        symlink("../../outside.txt", &dir.join("links/escape"));
        let outside = temp.path().join("outside.txt");
        symlink(outside.to_str().unwrap(), &dir.join("links/absolute"));
        let inside = dir.join("references/forms.md");
        symlink(inside.to_str().unwrap(), &dir.join("links/absolute-inside"));
        symlink("../..", &dir.join("links/up"));
        symlink("/", &dir.join("links/root"));
        symlink("../.env", &dir.join("links/env"));
        symlink("..", &dir.join("links/self"));
        symlink("missing", &dir.join("links/dangling"));
        symlink("loop", &dir.join("links/loop"));
        let gate = Gate::open(place(&dir, &file, None)).unwrap();

        let forms = gate.resolve("links/forms.md").unwrap();
        assert_eq!((forms.rel(), forms.kind()), ("links/forms.md", Kind::File));
        assert_eq!(forms.opened.real(), Some("references/forms.md"));
        assert_eq!(gate.resolve("links/refs").unwrap().kind(), Kind::Folder);
        assert_eq!(
            gate.resolve("links/absolute-inside").unwrap().opened.real(),
            Some("references/forms.md")
        );
        for path in [
            "links/escape",
            "links/absolute",
            "links/up",
            "links/up/outside.txt",
            // Out through one link and back in: never leaving is the rule.
            "links/up/pdf/SKILL.md",
            "links/root/etc/passwd",
        ] {
            assert!(matches!(refused(&gate, path), FileError::Outside), "{path}");
        }
        assert!(matches!(
            refused(&gate, "links/env"),
            FileError::HiddenTarget
        ));
        assert!(matches!(
            refused(&gate, "links/dangling"),
            FileError::NotFound { .. }
        ));
        assert!(matches!(refused(&gate, "links/loop"), FileError::Io(_)));
        // A link back to the skill folder stays inside.
        assert_eq!(gate.resolve("links/self").unwrap().kind(), Kind::Folder);
        assert!(gate.resolve("links/self/SKILL.md").is_ok());
        assert_eq!(gate.resolve("").unwrap().kind(), Kind::Folder);
        assert!(matches!(
            refused(&gate, "references/forms.md/x"),
            FileError::NotFound { .. }
        ));
    }

    #[cfg(unix)]
    #[test]
    fn what_is_read_is_the_file_that_was_opened() {
        use std::io::Read;
        let (temp, dir, file) = skill(&[("notes.md", b"inside")]);
        let gate = Gate::open(place(&dir, &file, None)).unwrap();
        let target = gate.resolve("notes.md").unwrap();
        // Swapped for a symlink out after the check: the open handle still
        // reads the file that was checked.
        std::fs::remove_file(dir.join("notes.md")).unwrap();
        symlink(
            temp.path().join("outside.txt").to_str().unwrap(),
            &dir.join("notes.md"),
        );
        let mut text = String::new();
        target.opened.into_file().read_to_string(&mut text).unwrap();
        assert_eq!(text, "inside");
        assert!(matches!(refused(&gate, "notes.md"), FileError::Outside));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let (_temp, dir, file) = skill(&[]);
        let pipe = dir.join("pipe.md");
        let c_path = std::ffi::CString::new(pipe.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo only reads the NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        let gate = Gate::open(place(&dir, &file, None)).unwrap();
        assert!(matches!(refused(&gate, "pipe.md"), FileError::NotRegular));
        symlink("pipe.md", &dir.join("link.md"));
        assert!(matches!(refused(&gate, "link.md"), FileError::NotRegular));
    }

    #[cfg(unix)]
    #[test]
    fn the_own_skill_md_is_served_where_the_tool_reads_it() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join("shared.md"), "---\ndescription: d\n---\n").unwrap();
        let dir = temp.path().join("repo/skills/pdf");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(temp.path().join("repo/.git")).unwrap();
        let file = dir.join("SKILL.md");
        symlink("../../../shared.md", &file);
        // The user's own folder: served, and so through `file` too.
        let own = place(&dir, &file, None);
        assert_eq!(open_own(own).unwrap().kind(), Kind::File);
        let gate = Gate::open(own).unwrap();
        assert_eq!(gate.open_rel("SKILL.md").unwrap().kind(), Kind::File);
        // But not as another path that leads there.
        symlink("..", &dir.join("up"));
        assert!(matches!(
            gate.open_rel("up/pdf/SKILL.md"),
            Err(FileError::Outside)
        ));
        // A project: the repository is the fence.
        let fence = Fence::new(&temp.path().join("repo"));
        let project = place(&dir, &file, Some(&fence));
        assert!(matches!(open_own(project), Err(ReadError::OutsideProject)));
        let gate = Gate::open(project).unwrap();
        assert!(matches!(
            gate.open_rel("SKILL.md"),
            Err(FileError::OutsideProject)
        ));
        // Inside the repository, a symlinked SKILL.md is fine.
        std::fs::write(temp.path().join("repo/shared.md"), "---\n---\n").unwrap();
        std::fs::remove_file(&file).unwrap();
        symlink("../../shared.md", &file);
        assert!(open_own(project).is_ok());
        // Absolute, and inside.
        std::fs::remove_file(&file).unwrap();
        symlink(temp.path().join("repo/shared.md").to_str().unwrap(), &file);
        assert!(open_own(project).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_project_skill_folder_that_leads_out_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let out = temp.path().join("elsewhere/pdf");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("SKILL.md"), "x").unwrap();
        let skills = temp.path().join("repo/.claude/skills");
        std::fs::create_dir_all(&skills).unwrap();
        let fence = Fence::new(&temp.path().join("repo"));
        let dir = skills.join("pdf");
        let file = dir.join("SKILL.md");
        for target in [out.to_str().unwrap(), "../../../elsewhere/pdf"] {
            let _ = std::fs::remove_file(&dir);
            symlink(target, &dir);
            let project = place(&dir, &file, Some(&fence));
            assert!(
                matches!(Gate::open(project), Err(FileError::OutsideProject)),
                "{target}"
            );
            assert!(matches!(open_own(project), Err(ReadError::OutsideProject)));
            // The user's own folders follow it.
            assert!(Gate::open(place(&dir, &file, None)).is_ok());
        }
        // Gone is gone, inside or out: nothing said about the outside.
        std::fs::remove_file(&dir).unwrap();
        symlink("/nonexistent/pdf", &dir);
        let project = place(&dir, &file, Some(&fence));
        assert!(matches!(
            Gate::open(project),
            Err(FileError::OutsideProject)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn entries_are_seen_without_following_symlinks() {
        let (_temp, dir, file) = skill(&[("a.md", b"abc"), ("sub/b.md", b"")]);
        symlink("a.md", &dir.join("link"));
        let gate = Gate::open(place(&dir, &file, None)).unwrap();
        let root = gate.open_rel("").unwrap();
        let mut entries: Vec<(String, String)> = Gate::entries(root)
            .unwrap()
            .into_iter()
            .map(|(name, entry)| {
                let kind = match entry {
                    Entry::File { len } => format!("file {len}"),
                    Entry::Folder => "folder".to_owned(),
                    Entry::Link => "link".to_owned(),
                    Entry::Other => "other".to_owned(),
                };
                (name.to_string_lossy().into_owned(), kind)
            })
            .collect();
        entries.sort();
        assert_eq!(
            entries,
            [
                ("SKILL.md".to_owned(), "file 23".to_owned()),
                ("a.md".to_owned(), "file 3".to_owned()),
                ("link".to_owned(), "link".to_owned()),
                ("sub".to_owned(), "folder".to_owned()),
            ]
        );
    }

    /// The rule Windows applies to a handle's final path: long names, so an
    /// 8.3 name (`GIT~1`) that opened `.git` is caught by what it opened.
    #[test]
    fn a_final_path_must_lie_below_the_skill_and_pass_the_hidden_rule() {
        let root = Path::new("/s/pdf");
        assert_eq!(
            check_final(
                root,
                Path::new("/s/pdf/references/forms.md"),
                Hidden::Refused
            )
            .unwrap(),
            "references/forms.md"
        );
        assert_eq!(check_final(root, root, Hidden::Refused).unwrap(), "");
        for real in ["/s/pdf/.git/config", "/s/pdf/a/node_modules/x.js"] {
            assert!(matches!(
                check_final(root, Path::new(real), Hidden::Refused),
                Err(FileError::HiddenTarget)
            ));
        }
        assert!(check_final(root, Path::new("/s/pdf/.git/config"), Hidden::Read).is_ok());
        for real in ["/s/other/x", "/s/pdf-x/y", "/etc/passwd"] {
            assert!(matches!(
                check_final(root, Path::new(real), Hidden::Refused),
                Err(FileError::Outside)
            ));
        }
    }

    /// On Windows, the short name of `.git` opens `.git`; the rule sees the
    /// long name. (8.3 names may be off on the volume: then there is none
    /// to try.)
    #[cfg(windows)]
    #[test]
    fn a_short_name_of_a_hidden_folder_is_refused() {
        use std::os::windows::ffi::{OsStrExt, OsStringExt};
        let (_temp, dir, file) = skill(&[(".git/config", b"SECRET")]);
        let long: Vec<u16> = dir
            .join(".git")
            .as_os_str()
            .encode_wide()
            .chain([0])
            .collect();
        let mut short = vec![0_u16; 1024];
        // SAFETY: both buffers are valid for the lengths given.
        let len = unsafe {
            windows_sys::Win32::Storage::FileSystem::GetShortPathNameW(
                long.as_ptr(),
                short.as_mut_ptr(),
                short.len() as u32,
            )
        } as usize;
        let gate = Gate::open(place(&dir, &file, None)).unwrap();
        if len == 0 || len >= short.len() {
            return;
        }
        short.truncate(len);
        let short = PathBuf::from(std::ffi::OsString::from_wide(&short));
        let name = short.file_name().unwrap().to_str().unwrap().to_owned();
        if name.starts_with('.') {
            return;
        }
        assert!(matches!(
            gate.resolve(&format!("{name}/config")),
            Err(FileError::HiddenTarget)
        ));
    }
}
