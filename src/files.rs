//! The files of a skill (behaviour.md §9): every regular file below the skill
//! folder, found by a bounded walk; a path a client asks for, resolved to one
//! of them or refused; a file's contents as text, an image or a one-line
//! description; SHA-256 digests computed on demand.
//!
//! Containment is the security boundary. Nothing outside the skill folder is
//! ever read or listed: not through `..`, not through a symlink (every
//! symlink is resolved and its target must lie inside the resolved skill
//! folder), not through a case trick (containment is checked on resolved
//! paths), and hidden entries (`.git`, `.env`) and `node_modules` are never
//! served, also not through a symlink that leads to them. Only regular files
//! are opened, without blocking ([`disk::open_regular`]). Percent-encoding is
//! not decoded here: `%2e%2e` is just a name; the resource layer decodes
//! URIs before it calls [`resolve`].
//!
//! Nothing here runs at start-up: listings and digests are computed when a
//! call or a request asks for them, and kept by [`Files`] while the files'
//! versions ([`Stamp`]) are unchanged.

use std::cell::OnceCell;
use std::collections::{HashMap, VecDeque};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest, Sha256};

use crate::digest;
use crate::disk::{self, FileId, ReadError, Stamp};
use crate::spec;

/// Folders deeper than this below the skill folder are not listed.
pub const MAX_DEPTH: usize = 16;
/// A listing reads at most this many folders, so that a hostile tree (a
/// symlink maze that stays inside the skill) cannot make it slow.
pub const MAX_DIRS: usize = 4096;
/// A requested path longer than this is refused without touching the disk.
pub const MAX_PATH_BYTES: usize = 1024;
/// A "not found" answer suggests at most this many paths.
pub const MAX_SUGGESTIONS: usize = 5;

/// One file of a skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Relative to the skill folder, `/`-separated, UTF-8 without control
    /// characters.
    pub path: String,
    /// When it was listed (see [`Files::listing`]).
    pub size: u64,
}

/// Which bound stopped a walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// [`spec::MAX_SKILL_FILES`] files were listed and there were more.
    Files,
    /// The next file would have taken the listing past [`spec::MAX_SKILL_BYTES`].
    Bytes,
    /// Folders below [`MAX_DEPTH`] levels were not read.
    Depth,
    /// [`MAX_DIRS`] folders were read and there were more.
    Folders,
}

/// The files of a skill (or of one of its folders), sorted by path (byte
/// order). `SKILL.md` is one of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    pub files: Vec<Entry>,
    /// Why the listing is incomplete, if it is (SEP-2640 then reports the
    /// skill's resources as dynamic).
    pub truncated: Option<Limit>,
}

/// The files of the skill in `skill_dir`: a bounded walk that reads folder
/// entries and their metadata, never file contents.
///
/// Breadth first, each folder in name order, so that when a bound stops it
/// the files nearest the top are the ones listed. Skipped: hidden entries
/// (names starting with `.`) and `node_modules` (in any case), names that are
/// not UTF-8 or hold a control character, anything that is neither a regular
/// file nor a folder, symlinks that are dangling, loop, or lead outside the
/// skill folder or to a hidden entry, and symlinks to a folder on the path to
/// themselves.
pub fn list(skill_dir: &Path) -> Listing {
    walk(skill_dir, "").listing
}

/// What a walk saw: the listing, and the version of every folder it read and
/// of the folder of every symlinked file's target (a folder's version changes
/// when an entry in it is added, removed or renamed).
#[derive(Default)]
struct Walked {
    listing: Listing,
    dirs: Vec<(PathBuf, Stamp)>,
}

/// A folder waiting to be read.
struct Frame {
    path: PathBuf,
    /// Relative to the skill folder ("" for the skill folder itself).
    rel: String,
    /// Its version, taken before it is read.
    stamp: Stamp,
    /// The identities of the folders from the skill folder down to this one
    /// (so one more than its depth): a symlink to any of them would be a
    /// cycle.
    ancestors: Vec<FileId>,
}

/// The resolved skill folder, the bound of every symlink, resolved when the
/// first symlink needs it: most skills have none, and the `realpath` of a
/// skill nine folders down is a `readlink` per component, more syscalls than
/// the rest of a small skill's walk (the walk is part of the first call of
/// each skill: `benches/callpath.py`, spread).
struct Fence<'a> {
    skill_dir: &'a Path,
    real: OnceCell<Option<PathBuf>>,
}

impl Fence<'_> {
    /// `None` when the skill folder cannot be resolved (gone, say).
    fn get(&self) -> Option<&Path> {
        self.real
            .get_or_init(|| fs::canonicalize(self.skill_dir).ok())
            .as_deref()
    }
}

/// Walks the folder `folder` (a relative path as [`resolve`] returns it; ""
/// for the whole skill) of the skill in `skill_dir`.
fn walk(skill_dir: &Path, folder: &str) -> Walked {
    let mut walked = Walked::default();
    let fence = Fence {
        skill_dir,
        real: OnceCell::new(),
    };
    let start = join(skill_dir, folder);
    // The start is held to the rules of every other folder (the skill folder
    // itself is the fence).
    let meta = if folder.is_empty() {
        fs::metadata(&start)
    } else {
        match fence.get().map(|fence| real_inside(fence, folder)) {
            Some(Ok(real)) => fs::metadata(real),
            _ => return walked,
        }
    };
    let meta = match meta {
        Ok(meta) if meta.is_dir() => meta,
        _ => return walked,
    };
    // The folders from the skill folder down to the start are on the path
    // too: a symlink in `links/` back to the skill folder is a cycle.
    let mut ancestors = vec![FileId::of(&meta)];
    let mut above = start.clone();
    for _ in folder.split('/').filter(|c| !c.is_empty()) {
        above.pop();
        let Ok(meta) = fs::metadata(&above) else {
            return walked;
        };
        ancestors.insert(0, FileId::of(&meta));
    }
    let mut queue = VecDeque::from([Frame {
        path: start,
        rel: folder.to_owned(),
        stamp: Stamp::of(&meta),
        ancestors,
    }]);
    let mut bytes = 0;
    let mut read = 0;
    while let Some(frame) = queue.pop_front() {
        if read == MAX_DIRS {
            walked.listing.truncated = Some(Limit::Folders);
            break;
        }
        read += 1;
        if let Err(limit) = visit(frame, &fence, &mut walked, &mut bytes, &mut queue) {
            walked.listing.truncated = Some(limit);
            break;
        }
    }
    walked
        .listing
        .files
        .sort_unstable_by(|a, b| a.path.cmp(&b.path));
    walked
}

/// Reads one folder: its files join the listing, its folders the queue.
/// `Err` when a bound that ends the whole walk was reached.
fn visit(
    frame: Frame,
    fence: &Fence,
    walked: &mut Walked,
    bytes: &mut u64,
    queue: &mut VecDeque<Frame>,
) -> Result<(), Limit> {
    // Checked even when it cannot be read: it may become readable.
    walked.dirs.push((frame.path.clone(), frame.stamp));
    // Unreadable, or gone since it was found: nothing to list.
    let Ok(entries) = fs::read_dir(&frame.path) else {
        return Ok(());
    };
    let mut named: Vec<(String, fs::DirEntry)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            (!name.chars().any(char::is_control) && !disk::is_private(name.as_bytes()))
                .then_some((name, entry))
        })
        .collect();
    named.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (name, entry) in named {
        let Some((meta, path, real)) = follow(&entry, fence) else {
            continue;
        };
        let rel = if frame.rel.is_empty() {
            name
        } else {
            format!("{}/{name}", frame.rel)
        };
        if meta.is_file() {
            if walked.listing.files.len() == spec::MAX_SKILL_FILES {
                return Err(Limit::Files);
            }
            if *bytes + meta.len() > spec::MAX_SKILL_BYTES {
                return Err(Limit::Bytes);
            }
            *bytes += meta.len();
            walked.listing.files.push(Entry {
                path: rel,
                size: meta.len(),
            });
            // The target may sit in a folder the walk does not read.
            if let Some(folder) = real.as_deref().and_then(Path::parent)
                && let Ok(folder_meta) = fs::metadata(folder)
            {
                walked
                    .dirs
                    .push((folder.to_path_buf(), Stamp::of(&folder_meta)));
            }
        } else if meta.is_dir() {
            let id = FileId::of(&meta);
            if cfg!(unix) && frame.ancestors.contains(&id) {
                tracing::debug!(
                    "{} leads back to a folder above it; not listed",
                    path.display()
                );
                continue;
            }
            if frame.ancestors.len() - 1 == MAX_DEPTH {
                walked.listing.truncated = Some(Limit::Depth);
                continue;
            }
            let mut ancestors = frame.ancestors.clone();
            ancestors.push(id);
            queue.push_back(Frame {
                path,
                rel,
                stamp: Stamp::of(&meta),
                ancestors,
            });
        }
    }
    Ok(())
}

/// The metadata of a folder entry, symlinks followed only when they stay
/// inside `fence` and lead to nothing hidden; with the entry's path and, for
/// a symlink, where it leads.
fn follow(entry: &fs::DirEntry, fence: &Fence) -> Option<(fs::Metadata, PathBuf, Option<PathBuf>)> {
    let path = entry.path();
    if !entry.file_type().ok()?.is_symlink() {
        return Some((entry.metadata().ok()?, path, None));
    }
    // Dangling links and loops fail here, and are skipped.
    let real = fs::canonicalize(&path).ok()?;
    if let Err(refused) = contained(&real, fence.get()?) {
        tracing::debug!("{}: {refused}; not listed", path.display());
        return None;
    }
    Some((fs::metadata(&real).ok()?, path, Some(real)))
}

/// `Ok` when `real` (a resolved path) lies inside `fence` (the resolved skill
/// folder) and passes through nothing hidden below it.
fn contained(real: &Path, fence: &Path) -> Result<(), FileError> {
    let below = real.strip_prefix(fence).map_err(|_| FileError::Outside)?;
    for component in below.iter() {
        let name = component.to_string_lossy();
        if disk::is_private(name.as_bytes()) {
            return Err(FileError::Hidden {
                name: name.into_owned(),
            });
        }
    }
    Ok(())
}

/// `dir` joined with a relative path ("" is `dir` itself).
fn join(dir: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        dir.to_path_buf()
    } else {
        dir.join(rel)
    }
}

/// Why a requested file cannot be served. The texts complete the sentence
/// "Skill 'pdf' cannot serve 'X': …" (behaviour.md §9).
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
    #[error("it leads outside the skill's folder through a symlink, so it is not read")]
    Outside,
    #[error("it is not a regular file (a FIFO, socket or device), so it is not read")]
    NotRegular,
    #[error("the skill has no such file")]
    NotFound {
        /// Up to [`MAX_SUGGESTIONS`] listed paths like the one asked for,
        /// best first ([`suggest`]); [`resolve`] leaves it empty.
        suggestions: Vec<String>,
    },
    #[error("the file is {size} bytes, over the {max}-byte limit")]
    TooLarge { size: u64, max: u64 },
    #[error("{0}")]
    Io(io::Error),
}

impl From<io::Error> for FileError {
    fn from(err: io::Error) -> FileError {
        if disk::is_gone(&err) {
            FileError::NotFound {
                suggestions: Vec::new(),
            }
        } else {
            FileError::Io(err)
        }
    }
}

impl From<ReadError> for FileError {
    fn from(err: ReadError) -> FileError {
        match err {
            ReadError::TooLarge { len, max } => FileError::TooLarge { size: len, max },
            ReadError::Io(err) => err.into(),
            // The other reasons are SKILL.md's (frontmatter, UTF-8, project
            // fence); a file that is not regular is the one left.
            _ => FileError::NotRegular,
        }
    }
}

/// A file or folder inside a skill, as [`resolve`] found it. Only `resolve`
/// makes one, so holding a `Target` means the containment rules were checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Resolved: no symlink left in it.
    path: PathBuf,
    rel: String,
    kind: Kind,
}

/// What a [`Target`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Folder,
}

impl Target {
    /// The path asked for, cleaned: relative to the skill folder,
    /// `/`-separated, without `.` or empty components ("" for the skill
    /// folder itself).
    pub fn rel(&self) -> &str {
        &self.rel
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }
}

/// Turns `requested`, a path a client gave, into a file or folder inside the
/// skill in `skill_dir`, or the precise reason it cannot be served.
///
/// Refused before the disk is touched: absolute paths (`/x`, `\x`, `C:\x`,
/// `C:/x`, `//server`), any `..` component (even one that would stay inside:
/// simpler to check, and never needed), backslashes (a separator on Windows,
/// a name character elsewhere: refusing them means one meaning everywhere),
/// control characters (NUL, line breaks), hidden components and
/// `node_modules`, and paths longer than [`MAX_PATH_BYTES`]. Empty and `.`
/// components are dropped, so "" and "." name the skill folder itself and
/// `./references/` the folder `references`.
///
/// Then the path is resolved (every symlink) and must lie inside the
/// resolved skill folder and pass through nothing hidden there; it must be a
/// regular file or a folder (a FIFO or device is refused and never opened).
/// A path that does not exist is [`FileError::NotFound`] without suggestions
/// ([`suggest`] finds them in a listing). Percent-encoding is not decoded.
pub fn resolve(skill_dir: &Path, requested: &str) -> Result<Target, FileError> {
    let rel = clean(requested)?;
    let fence = fs::canonicalize(skill_dir)?;
    let real = real_inside(&fence, &rel)?;
    let meta = fs::metadata(&real)?;
    let kind = if meta.is_file() {
        Kind::File
    } else if meta.is_dir() {
        Kind::Folder
    } else {
        return Err(FileError::NotRegular);
    };
    Ok(Target {
        path: real,
        rel,
        kind,
    })
}

/// `fence` (a resolved folder) joined with `rel` (a cleaned path: no `..`,
/// no `.`), every symlink resolved. Without a symlink among `rel`'s
/// components that is the plain join, which one `lstat` per component shows;
/// `fs::canonicalize` reads every component of the whole path as a link
/// (twice the syscalls for a path two folders down in a skill nine down).
fn real_below(fence: &Path, rel: &str) -> io::Result<PathBuf> {
    let mut real = fence.to_path_buf();
    for part in rel.split('/').filter(|part| !part.is_empty()) {
        real.push(part);
        if fs::symlink_metadata(&real)?.file_type().is_symlink() {
            return fs::canonicalize(join(fence, rel));
        }
    }
    Ok(real)
}

/// `rel` (a cleaned path) resolved below `fence` (the resolved skill
/// folder), refused unless it stays inside and passes through nothing
/// hidden there.
fn real_inside(fence: &Path, rel: &str) -> Result<PathBuf, FileError> {
    let real = real_below(fence, rel)?;
    contained(&real, fence)?;
    Ok(real)
}

/// The checks of [`resolve`] on the text alone; the cleaned relative path.
fn clean(requested: &str) -> Result<String, FileError> {
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
            name if disk::is_private(name.as_bytes()) => {
                return Err(FileError::Hidden {
                    name: name.to_owned(),
                });
            }
            name => parts.push(name),
        }
    }
    Ok(parts.join("/"))
}

/// Up to [`MAX_SUGGESTIONS`] listed files and folders like `requested`, best
/// first: those whose name is exactly its last component (ignoring case),
/// then by the similarity `skill` names are matched with (typos,
/// transpositions, containment), of the names alone when `requested` has no
/// `/`, else the mean of the paths' and the names' similarity.
pub fn suggest(listing: &Listing, requested: &str) -> Vec<String> {
    /// Longer queries are only matched by exact name: similarity is quadratic.
    const COMPARED_CHARS: usize = 256;
    let query = requested.trim_matches('/').to_lowercase();
    let (folder, base) = query.rsplit_once('/').unwrap_or(("", &query));
    if base.is_empty() {
        return Vec::new();
    }
    let similar = query.chars().count() <= COMPARED_CHARS;
    let similarity = crate::similarity::similarity;
    // Files, and the folders above them.
    let mut candidates: Vec<&str> = Vec::new();
    for entry in &listing.files {
        let path = entry.path.as_str();
        candidates.extend(path.match_indices('/').map(|(end, _)| &path[..end]));
        candidates.push(path);
    }
    candidates.sort_unstable();
    candidates.dedup();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let path = candidate.to_lowercase();
            let name = path.rsplit('/').next().unwrap_or_default();
            let score = if name == base {
                2.0
            } else if !similar {
                0.0
            } else if folder.is_empty() {
                similarity(base, name)
            } else {
                (similarity(&query, &path) + similarity(base, name)) / 2.0
            };
            (score >= crate::similarity::THRESHOLD).then_some((score, candidate))
        })
        .collect();
    // Best first; among equals, by path.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, path)| path.to_owned())
        .collect()
}

/// A file's contents, as they can be shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// Valid UTF-8 without NUL bytes, verbatim (a leading BOM removed).
    Text { text: String, mime: &'static str },
    /// A PNG, JPEG, GIF or WebP file: by its extension and its first bytes.
    Image { bytes: Vec<u8>, mime: &'static str },
    /// Anything else: described, never shown.
    Binary { size: u64, mime: &'static str },
}

/// How many bytes of a file over the size cap are read to tell whether it is
/// text (then it is too large to show) or binary (then it is described).
const SNIFF_BYTES: usize = 8 * 1024;

/// Reads the file `target` names: as text (strict UTF-8 without NUL bytes, a
/// leading BOM removed, everything else verbatim), as an image, or as a
/// description. Text and images over `max` bytes are [`FileError::TooLarge`];
/// a binary file of any size is described after reading its first
/// [`SNIFF_BYTES`]. A folder is [`FileError::NotRegular`].
pub fn read(target: &Target, max: u64) -> Result<Content, FileError> {
    let Kind::File = target.kind else {
        return Err(FileError::NotRegular);
    };
    let (mut file, len) = disk::open_regular(&target.path, u64::MAX)?;
    let mut buf = Vec::new();
    if len > max {
        disk::fill(&mut file, &mut buf, SNIFF_BYTES, u64::MAX)?;
        return match classify(&target.rel, buf, len, true) {
            binary @ Content::Binary { .. } => Ok(binary),
            _ => Err(FileError::TooLarge { size: len, max }),
        };
    }
    buf.reserve(usize::try_from(len).unwrap_or(0).saturating_add(1));
    disk::fill(&mut file, &mut buf, usize::MAX, max)?;
    let size = buf.len() as u64;
    Ok(classify(&target.rel, buf, size, false))
}

/// What `bytes` (the whole file, or with `partial` its first bytes) are.
fn classify(rel: &str, mut bytes: Vec<u8>, size: u64, partial: bool) -> Content {
    let known = known_type(rel);
    if let Some(mime) = image_type(rel, &bytes) {
        return Content::Image { bytes, mime };
    }
    let utf8 = match std::str::from_utf8(&bytes) {
        Ok(_) => true,
        // A cut in the middle of a character at the end of a prefix.
        Err(err) => partial && err.error_len().is_none(),
    };
    if utf8 && !bytes.contains(&0) {
        let mime = known.filter(|t| t.text).map_or("text/plain", |t| t.mime);
        if bytes.starts_with(b"\xef\xbb\xbf") {
            bytes.drain(..3);
        }
        // Checked just above (a partial read never gets here as text).
        let text = String::from_utf8(bytes).unwrap_or_default();
        return Content::Text { text, mime };
    }
    // An image type whose first bytes disagree says nothing about the file.
    let mime = known
        .filter(|t| !t.text && !IMAGES.contains(&t.mime))
        .map_or("application/octet-stream", |t| t.mime);
    Content::Binary { size, mime }
}

/// The start of a file, as the security scan reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// At most the cap asked for, from the start of the file.
    pub bytes: Vec<u8>,
    /// The whole file's size when it was opened.
    pub size: u64,
    /// The file's version when it was opened, taken before reading: if the
    /// file changes while it is read, a later `stat` shows another version.
    pub stamp: Stamp,
}

/// The first `cap` bytes of the file `target` names (all of it when it is
/// smaller), with its size and version. Only a regular file is opened, and
/// never more than `cap` bytes are read, however large it is.
pub fn read_head(target: &Target, cap: u64) -> Result<Head, FileError> {
    let Kind::File = target.kind else {
        return Err(FileError::NotRegular);
    };
    let (mut file, size) = disk::open_regular(&target.path, u64::MAX)?;
    let stamp = Stamp::of(&file.metadata()?);
    let want = usize::try_from(size.min(cap)).unwrap_or(usize::MAX);
    let mut bytes = Vec::with_capacity(want);
    disk::fill(&mut file, &mut bytes, want, u64::MAX)?;
    Ok(Head { bytes, size, stamp })
}

/// Whether a file named `path` is of a type known to be binary by its
/// extension (images, archives, fonts, office documents): not worth
/// opening to look for text.
pub fn is_binary_type(path: &str) -> bool {
    known_type(path).is_some_and(|t| !t.text)
}

/// A file's bytes as `resources/read` carries them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Raw {
    /// UTF-8 without NUL bytes, of a type that is not binary by its
    /// extension: every byte kept (a BOM too), so the text's UTF-8 is the
    /// file.
    Text(String),
    Blob(Vec<u8>),
}

/// The file `rel`'s `bytes` as text or as a blob, and its MIME type: by
/// extension, else `text/plain` or `application/octet-stream`.
pub fn raw(rel: &str, bytes: Vec<u8>) -> (Raw, &'static str) {
    let known = known_type(rel);
    let bytes = if known.is_none_or(|t| t.text) && !bytes.contains(&0) {
        match String::from_utf8(bytes) {
            Ok(text) => return (Raw::Text(text), known.map_or("text/plain", |t| t.mime)),
            Err(err) => err.into_bytes(),
        }
    } else {
        bytes
    };
    let mime = known.map_or("application/octet-stream", |t| t.mime);
    (Raw::Blob(bytes), mime)
}

/// The types an image content block may hold.
const IMAGES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The image type of a file named `rel` whose contents start with `head`:
/// only when its extension says PNG, JPEG, GIF or WebP and its first bytes
/// agree. A `.png` that is not a PNG is not an image.
fn image_type(rel: &str, head: &[u8]) -> Option<&'static str> {
    let mime = known_type(rel)?.mime;
    let agrees = match mime {
        "image/png" => head.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => head.starts_with(b"\xff\xd8\xff"),
        "image/gif" => head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a"),
        "image/webp" => head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP",
        _ => false,
    };
    agrees.then_some(mime)
}

/// A MIME type known by extension, and whether files of that type are text.
#[derive(Clone, Copy, Debug)]
struct Type {
    mime: &'static str,
    text: bool,
}

/// The MIME type of a file named `path`, from its extension (case does not
/// matter), when the extension is one skills commonly carry. `None` for
/// other extensions: then only the contents can tell ([`read`] says
/// `text/plain` or `application/octet-stream`).
///
/// A table of our own rather than the `mime_guess` crate: its table (about
/// 1,500 types, built by a build script) answers `.ts` with a video type and
/// `.py` with `text/plain`, and skills need a few dozen types right.
pub fn mime(path: &str) -> Option<&'static str> {
    known_type(path).map(|t| t.mime)
}

fn known_type(path: &str) -> Option<Type> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    let text = |mime| Some(Type { mime, text: true });
    let binary = |mime| Some(Type { mime, text: false });
    match ext.to_ascii_lowercase().as_str() {
        "md" | "markdown" => text("text/markdown"),
        "txt" | "text" | "log" | "ini" | "cfg" | "conf" => text("text/plain"),
        "py" => text("text/x-python"),
        "sh" | "bash" | "zsh" => text("text/x-shellscript"),
        "js" | "mjs" | "cjs" | "jsx" => text("text/javascript"),
        "ts" | "mts" | "cts" | "tsx" => text("text/x-typescript"),
        "json" => text("application/json"),
        "ipynb" => text("application/x-ipynb+json"),
        "yaml" | "yml" => text("application/yaml"),
        "toml" => text("application/toml"),
        "xml" | "xsd" | "xsl" => text("application/xml"),
        "html" | "htm" => text("text/html"),
        "css" => text("text/css"),
        "csv" => text("text/csv"),
        "tsv" => text("text/tab-separated-values"),
        "svg" => text("image/svg+xml"),
        "sql" => text("application/sql"),
        "rs" => text("text/x-rust"),
        "go" => text("text/x-go"),
        "java" => text("text/x-java"),
        "c" | "h" => text("text/x-c"),
        "cpp" | "cc" | "hpp" => text("text/x-c++"),
        "rb" => text("text/x-ruby"),
        "ps1" => text("text/x-powershell"),
        "tex" => text("application/x-tex"),
        "png" => binary("image/png"),
        "jpg" | "jpeg" => binary("image/jpeg"),
        "gif" => binary("image/gif"),
        "webp" => binary("image/webp"),
        "ico" => binary("image/vnd.microsoft.icon"),
        "bmp" => binary("image/bmp"),
        "pdf" => binary("application/pdf"),
        "zip" => binary("application/zip"),
        "gz" | "tgz" => binary("application/gzip"),
        "tar" => binary("application/x-tar"),
        "docx" => binary("application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        "xlsx" => binary("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        "pptx" => {
            binary("application/vnd.openxmlformats-officedocument.presentationml.presentation")
        }
        "ttf" => binary("font/ttf"),
        "otf" => binary("font/otf"),
        "woff2" => binary("font/woff2"),
        "mp3" => binary("audio/mpeg"),
        "wav" => binary("audio/wav"),
        "mp4" => binary("video/mp4"),
        "wasm" => binary("application/wasm"),
        _ => None,
    }
}

/// Listings and digests of skills' files, kept while the files are
/// unchanged; one per server, shared by every request.
///
/// Memory is bounded: at most [`CACHED_ENTRIES`] listed files and folders
/// and [`CACHED_DIGESTS`] digests are kept (a few MiB with long paths); past
/// either, that cache starts over.
pub struct Files {
    max_file_bytes: u64,
    listings: Mutex<Listings>,
    digests: Mutex<HashMap<PathBuf, Sum>>,
}

/// A file's version when it was hashed, its SHA-256 and the bytes hashed.
type Sum = (Stamp, [u8; 32], u64);

/// A file's digest and the size of the bytes it was computed over (the
/// listing's size may be older: see [`Files::folder_listing`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hashed {
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    pub size: u64,
}

/// At most this many files and folders are kept, over all cached listings.
const CACHED_ENTRIES: usize = 32 * 1024;
/// At most this many digests are kept.
const CACHED_DIGESTS: usize = 16 * 1024;

#[derive(Default)]
struct Listings {
    /// By skill folder and listed folder.
    by_folder: HashMap<(PathBuf, String), Arc<Checked>>,
    /// The files and folders they hold.
    entries: usize,
}

/// A listing and the folder versions it was made from.
struct Checked {
    listing: Arc<Listing>,
    dirs: Vec<(PathBuf, Stamp)>,
}

impl Checked {
    /// What it counts against [`CACHED_ENTRIES`].
    fn entries(&self) -> usize {
        self.listing.files.len() + self.dirs.len()
    }
}

impl Files {
    /// `max_file_bytes` is the cap on a file [`Files::read`] shows (the
    /// `--max-file-bytes` of SKILL.md).
    pub fn new(max_file_bytes: u64) -> Files {
        Files {
            max_file_bytes,
            listings: Mutex::default(),
            digests: Mutex::default(),
        }
    }

    /// The files of the skill in `skill_dir`, as [`list`] finds them now.
    pub fn listing(&self, skill_dir: &Path) -> Arc<Listing> {
        self.folder_listing(skill_dir, "")
    }

    /// The files below `folder` (the [`Target::rel`] of a resolved folder;
    /// "" for the whole skill), paths relative to the skill folder, with the
    /// walk's bounds counted from `folder`.
    ///
    /// Reused while a `stat` of every folder the walk read (and of the
    /// folders symlinked files lead to) shows the version it was read at:
    /// adding, removing or renaming an entry, or changing a folder's
    /// permissions, changes that folder's version. A file rewritten in place
    /// changes no folder, so its listed size may be older than the file
    /// until then; nothing else is (digests are checked against the file
    /// itself). Measured on a 30-file skill in 4 folders: this check costs
    /// 5 µs where one `stat` per file too cost 49 µs and re-listing 87 µs
    /// (600 files in 21 folders: 25 µs, 755 µs, 946 µs), and a call pays it
    /// every time (`benches/files.rs`).
    pub fn folder_listing(&self, skill_dir: &Path, folder: &str) -> Arc<Listing> {
        let key = (skill_dir.to_path_buf(), folder.to_owned());
        let cached = self.lock_listings().by_folder.get(&key).cloned();
        if let Some(checked) = cached
            && unchanged(&checked)
        {
            return Arc::clone(&checked.listing);
        }
        let walked = walk(skill_dir, folder);
        let checked = Arc::new(Checked {
            listing: Arc::new(walked.listing),
            dirs: walked.dirs,
        });
        let listing = Arc::clone(&checked.listing);
        let mut listings = self.lock_listings();
        if listings.entries + checked.entries() > CACHED_ENTRIES {
            *listings = Listings::default();
        }
        listings.entries += checked.entries();
        if let Some(old) = listings.by_folder.insert(key, checked) {
            listings.entries -= old.entries();
        }
        listing
    }

    /// The SHA-256 of each of `entries` (files listed in the skill in
    /// `skill_dir`) as they are now, `sha256:` and lowercase hex, computed by
    /// streaming each file through a 64 KiB buffer; the first file that
    /// cannot be hashed ends it with its error. Files over [`spec::MAX_SKILL_BYTES`] are
    /// refused.
    ///
    /// A digest is kept while a `stat` of the path shows the version that was
    /// hashed (measured: 21 µs a file when every call resolved the path again,
    /// 3 µs now). A file that changed, or was swapped for a symlink out of the
    /// skill (another file, so another version), is resolved again with every
    /// check of [`resolve`] before it is read, and only a regular file is
    /// opened.
    pub fn digests(&self, skill_dir: &Path, entries: &[Entry]) -> Result<Vec<Hashed>, FileError> {
        let sums = self.sums(skill_dir, entries)?;
        Ok(sums
            .iter()
            .map(|(sum, size)| Hashed {
                digest: digest::text(sum),
                size: *size,
            })
            .collect())
    }

    /// The digest of the whole skill in `skill_dir` ([`digest::skill`] over
    /// every listed file, with the digests [`Files::digests`] gives), or
    /// `None` when the listing stopped at a bound: a digest that does not
    /// cover every file would not change with the files left out.
    pub fn skill_digest(&self, skill_dir: &Path) -> Result<Option<String>, FileError> {
        let listing = self.listing(skill_dir);
        if listing.truncated.is_some() {
            return Ok(None);
        }
        let sums = self.sums(skill_dir, &listing.files)?;
        let files = listing.files.iter().zip(&sums);
        Ok(Some(digest::skill(
            files.map(|(entry, (sum, _))| (entry.path.as_str(), sum)),
        )))
    }

    /// The SHA-256 of each of `entries` and the bytes hashed, as
    /// [`Files::digests`] describes.
    fn sums(&self, skill_dir: &Path, entries: &[Entry]) -> Result<Vec<([u8; 32], u64)>, FileError> {
        let lock = || self.digests.lock().unwrap_or_else(PoisonError::into_inner);
        // Resolved once, on the first file not in the cache.
        let mut fence = None;
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            let path = skill_dir.join(&entry.path);
            if let Ok(meta) = fs::metadata(&path)
                && let Some((cached, sum, size)) = lock().get(&path)
                && *cached == Stamp::of(&meta)
            {
                out.push((*sum, *size));
                continue;
            }
            let fence = match &fence {
                Some(fence) => fence,
                None => fence.insert(fs::canonicalize(skill_dir)?),
            };
            let real = real_inside(fence, &clean(&entry.path)?)?;
            let (file, _) = disk::open_regular(&real, spec::MAX_SKILL_BYTES)?;
            // Taken before reading: if the file changes while it is read, the
            // next request sees another version and reads it again.
            let version = Stamp::of(&file.metadata()?);
            let (sum, size) = sha256(file)?;
            let mut digests = lock();
            if digests.len() >= CACHED_DIGESTS {
                digests.clear();
            }
            digests.insert(path, (version, sum, size));
            out.push((sum, size));
        }
        Ok(out)
    }

    /// [`read`] with this server's size cap.
    pub fn read(&self, target: &Target) -> Result<Content, FileError> {
        read(target, self.max_file_bytes)
    }

    /// The bytes of the file `target` names, exactly as they are on disk (for
    /// `resources/read`, whose bytes must match the digest), up to this
    /// server's size cap.
    pub fn bytes(&self, target: &Target) -> Result<Vec<u8>, FileError> {
        let Kind::File = target.kind else {
            return Err(FileError::NotRegular);
        };
        Ok(disk::read_bytes(&target.path, self.max_file_bytes)?)
    }

    fn lock_listings(&self) -> std::sync::MutexGuard<'_, Listings> {
        self.listings.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether every folder `checked` was made from still has the version it
/// had.
fn unchanged(checked: &Checked) -> bool {
    checked
        .dirs
        .iter()
        .all(|(path, stamp)| fs::metadata(path).is_ok_and(|meta| Stamp::of(&meta) == *stamp))
}

/// The SHA-256 of an open regular file and the number of bytes hashed, read
/// through a fixed buffer.
fn sha256(mut file: fs::File) -> Result<([u8; 32], u64), FileError> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0; 64 * 1024];
    let mut total = 0;
    loop {
        let got = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(got) => got,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        };
        total += got as u64;
        // It grew past the cap after it was opened.
        if total > spec::MAX_SKILL_BYTES {
            return Err(FileError::TooLarge {
                size: total,
                max: spec::MAX_SKILL_BYTES,
            });
        }
        hasher.update(&buf[..got]);
    }
    Ok((hasher.finalize().into(), total))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skill folder holding `files` (path, contents), inside a temporary
    /// folder that also holds `outside.txt`.
    fn skill(files: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join("outside.txt"), "SECRET").unwrap();
        let dir = temp.path().join("pdf");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\ndescription: d\n---\n").unwrap();
        for (path, contents) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, contents).unwrap();
        }
        (temp, dir)
    }

    #[cfg(unix)]
    fn symlink(target: &str, link: &Path) {
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, link).unwrap();
    }

    fn paths(listing: &Listing) -> Vec<&str> {
        listing.files.iter().map(|e| e.path.as_str()).collect()
    }

    /// Why `requested` is refused, with suggestions as a call gets them.
    fn refused(dir: &Path, requested: &str) -> FileError {
        match resolve(dir, requested).expect_err(requested) {
            FileError::NotFound { .. } => FileError::NotFound {
                suggestions: suggest(&list(dir), requested),
            },
            other => other,
        }
    }

    #[test]
    fn paths_that_climb_or_are_absolute_are_refused_before_the_disk() {
        let (_temp, dir) = skill(&[("references/forms.md", b"x")]);
        for path in [
            "../outside.txt",
            "references/../../outside.txt",
            "references/..",
            "..",
        ] {
            assert!(matches!(refused(&dir, path), FileError::Climbs), "{path}");
        }
        for path in [
            "/etc/passwd",
            "\\x",
            "C:\\x",
            "C:/x",
            "c:x",
            "//server/share",
        ] {
            assert!(matches!(refused(&dir, path), FileError::Absolute), "{path}");
        }
        assert!(matches!(
            refused(&dir, "references\\forms.md"),
            FileError::Backslash
        ));
        for path in ["a\0b", "forms\n.md", "x\r", "\u{1b}[31m", "tab\there"] {
            assert!(
                matches!(refused(&dir, path), FileError::Control),
                "{path:?}"
            );
        }
        let long = "a/".repeat(MAX_PATH_BYTES);
        assert!(matches!(refused(&dir, &long), FileError::TooLong));
    }

    #[test]
    fn hidden_entries_and_node_modules_are_refused_in_any_case() {
        let (_temp, dir) = skill(&[
            (".secret", b"SECRET"),
            (".git/config", b"SECRET"),
            ("node_modules/x.js", b"SECRET"),
            ("NODE_MODULES/x.js", b"SECRET"),
        ]);
        for (path, name) in [
            (".secret", ".secret"),
            (".git/config", ".git"),
            ("./.git/config", ".git"),
            ("node_modules/x.js", "node_modules"),
            ("NODE_MODULES/x.js", "NODE_MODULES"),
            ("references/.hidden", ".hidden"),
        ] {
            match refused(&dir, path) {
                FileError::Hidden { name: got } => assert_eq!(got, name, "{path}"),
                other => panic!("{path}: {other:?}"),
            }
        }
        assert_eq!(paths(&list(&dir)), ["SKILL.md"]);
    }

    #[test]
    fn percent_encoding_is_a_literal_name() {
        let (_temp, dir) = skill(&[("references/forms.md", b"x")]);
        assert!(matches!(
            refused(&dir, "%2e%2e/outside.txt"),
            FileError::NotFound { .. }
        ));
        assert!(matches!(
            refused(&dir, "references%2fforms.md"),
            FileError::NotFound { .. }
        ));
    }

    #[test]
    fn dot_and_empty_components_are_dropped() {
        let (_temp, dir) = skill(&[("references/forms.md", b"x")]);
        let real = std::fs::canonicalize(&dir).unwrap();
        for path in ["", ".", "./", "./."] {
            let target = resolve(&dir, path).unwrap();
            assert_eq!((target.rel(), target.kind()), ("", Kind::Folder), "{path}");
            assert_eq!(target.path, real);
        }
        for path in [
            "./references/",
            "references//forms.md",
            "references/./forms.md",
        ] {
            let target = resolve(&dir, path).unwrap();
            assert!(target.rel().starts_with("references"), "{path}");
            assert!(target.path.starts_with(&real));
        }
        let file = resolve(&dir, "references//forms.md").unwrap();
        assert_eq!(file.rel(), "references/forms.md");
        assert_eq!(file.kind(), Kind::File);
    }

    #[test]
    fn a_missing_file_suggests_similar_paths() {
        let (_temp, dir) = skill(&[
            ("references/forms.md", b"x"),
            ("references/nested/deep.md", b"x"),
            ("scripts/fill_form.py", b"x"),
        ]);
        let suggestions = |path| match refused(&dir, path) {
            FileError::NotFound { suggestions } => suggestions,
            other => panic!("{path}: {other:?}"),
        };
        assert_eq!(suggestions("forms.md"), ["references/forms.md"]);
        assert_eq!(suggestions("reference/form.md"), ["references/forms.md"]);
        assert_eq!(suggestions("reference"), ["references"]);
        assert_eq!(
            suggestions("scripts/fill-form.py"),
            ["scripts/fill_form.py"]
        );
        assert_eq!(suggestions("kubernetes.yaml"), Vec::<String>::new());
        // Case-sensitive file systems only: elsewhere `skill.MD` is SKILL.md.
        if !dir.join("skill.MD").exists() {
            assert_eq!(suggestions("skill.MD"), ["SKILL.md"]);
        }
    }

    #[test]
    fn at_most_five_suggestions_exact_names_first() {
        let files: Vec<(String, &[u8])> = (0..8)
            .map(|i| (format!("v{i}/notes.md"), &b"x"[..]))
            .chain([("notes.txt".to_owned(), &b"x"[..])])
            .collect();
        let files: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        let (_temp, dir) = skill(&files);
        let FileError::NotFound { suggestions } = refused(&dir, "notes.md") else {
            panic!()
        };
        assert_eq!(
            suggestions,
            [
                "v0/notes.md",
                "v1/notes.md",
                "v2/notes.md",
                "v3/notes.md",
                "v4/notes.md"
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_only_inside_the_skill_and_to_nothing_hidden() {
        let (temp, dir) = skill(&[("references/forms.md", b"forms"), (".env", b"SECRET")]);
        symlink("../references/forms.md", &dir.join("links/forms.md"));
        symlink("../references", &dir.join("links/refs"));
        symlink("../../outside.txt", &dir.join("links/escape"));
        symlink(
            temp.path().join("outside.txt").to_str().unwrap(),
            &dir.join("links/absolute"),
        );
        symlink("../..", &dir.join("links/up"));
        symlink("/", &dir.join("links/root"));
        symlink("../.env", &dir.join("links/env"));
        symlink("..", &dir.join("links/self"));
        symlink("missing", &dir.join("links/dangling"));
        symlink("loop", &dir.join("links/loop"));

        let forms = resolve(&dir, "links/forms.md").unwrap();
        assert_eq!(
            forms.path,
            std::fs::canonicalize(dir.join("references/forms.md")).unwrap()
        );
        assert_eq!(forms.rel(), "links/forms.md");
        assert_eq!(resolve(&dir, "links/refs").unwrap().kind(), Kind::Folder);
        for path in [
            "links/escape",
            "links/absolute",
            "links/up",
            "links/up/outside.txt",
            "links/root/etc/passwd",
        ] {
            assert!(matches!(refused(&dir, path), FileError::Outside), "{path}");
        }
        // Out through one link and back into the skill folder: the resolved
        // path is what counts, and it is inside.
        assert!(resolve(&dir, "links/up/pdf/SKILL.md").is_ok());
        assert!(matches!(
            refused(&dir, "links/env"),
            FileError::Hidden { .. }
        ));
        assert!(matches!(
            refused(&dir, "links/dangling"),
            FileError::NotFound { .. }
        ));
        assert!(matches!(refused(&dir, "links/loop"), FileError::Io(_)));
        // A link back to the skill folder stays inside: fine to read through.
        assert!(resolve(&dir, "links/self/SKILL.md").is_ok());

        assert_eq!(
            paths(&list(&dir)),
            [
                "SKILL.md",
                "links/forms.md",
                "links/refs/forms.md",
                "references/forms.md"
            ]
        );
        // Listing the folder that holds the link back up is no cycle either.
        assert_eq!(
            paths(&Files::new(1 << 20).folder_listing(&dir, "links")),
            ["links/forms.md", "links/refs/forms.md"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_skill_folder_reached_through_a_symlink_is_the_fence() {
        let (temp, dir) = skill(&[("references/forms.md", b"forms")]);
        let link = temp.path().join("linked");
        symlink("pdf", &link);
        assert_eq!(paths(&list(&link)), ["SKILL.md", "references/forms.md"]);
        assert!(resolve(&link, "references/forms.md").is_ok());
        symlink("../outside.txt", &dir.join("escape"));
        assert!(matches!(refused(&link, "escape"), FileError::Outside));
    }

    #[cfg(unix)]
    fn mkfifo(path: &Path) {
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo only reads the NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_and_never_opened() {
        let (_temp, dir) = skill(&[("notes.md", b"notes")]);
        mkfifo(&dir.join("pipe.md"));
        assert!(matches!(refused(&dir, "pipe.md"), FileError::NotRegular));
        assert_eq!(paths(&list(&dir)), ["SKILL.md", "notes.md"]);
        // Swapped in after the path was resolved: still not opened for
        // reading (that would block), and not hashed.
        let target = resolve(&dir, "notes.md").unwrap();
        let entry = list(&dir).files.remove(1);
        std::fs::remove_file(dir.join("notes.md")).unwrap();
        mkfifo(&dir.join("notes.md"));
        assert!(matches!(read(&target, 1 << 20), Err(FileError::NotRegular)));
        assert!(matches!(
            Files::new(1 << 20).digests(&dir, &[entry]),
            Err(FileError::NotRegular)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_or_hold_control_characters_are_not_listed() {
        use std::os::unix::ffi::OsStrExt;
        let (_temp, dir) = skill(&[("ok.md", b"x"), ("line\nbreak.md", b"x")]);
        // macOS file systems refuse names that are not UTF-8.
        if cfg!(not(target_os = "macos")) {
            std::fs::write(dir.join(std::ffi::OsStr::from_bytes(b"bad\xff.md")), "x").unwrap();
        }
        assert_eq!(paths(&list(&dir)), ["SKILL.md", "ok.md"]);
    }

    #[test]
    fn the_listing_is_sorted_by_bytes_with_sizes() {
        let (_temp, dir) = skill(&[
            ("b.md", b"bb"),
            ("a/z.md", b"z"),
            ("a.txt", b"aaa"),
            ("C.md", b""),
            ("é.md", b"e"),
        ]);
        let listing = list(&dir);
        assert_eq!(
            paths(&listing),
            ["C.md", "SKILL.md", "a.txt", "a/z.md", "b.md", "é.md"]
        );
        let sizes: Vec<u64> = listing.files.iter().map(|e| e.size).collect();
        assert_eq!(sizes, [0, 23, 3, 1, 2, 1]);
        assert_eq!(listing.truncated, None);
    }

    #[test]
    fn the_listing_stops_at_512_files_shallow_files_first() {
        let (_temp, dir) = skill(&[("deep/z.md", b"x")]);
        for i in 0..600 {
            std::fs::write(dir.join(format!("f{i:03}.md")), "x").unwrap();
        }
        let listing = list(&dir);
        assert_eq!(listing.files.len(), spec::MAX_SKILL_FILES);
        assert_eq!(listing.truncated, Some(Limit::Files));
        assert_eq!(paths(&listing)[..2], ["SKILL.md", "f000.md"]);
        assert!(!paths(&listing).contains(&"deep/z.md"));
    }

    #[test]
    fn the_listing_stops_at_16_mib() {
        let (_temp, dir) = skill(&[]);
        for name in ["a.bin", "b.bin", "c.bin"] {
            // Sparse: nothing is written, and nothing is read.
            let file = std::fs::File::create(dir.join(name)).unwrap();
            file.set_len(spec::MAX_SKILL_BYTES / 3).unwrap();
        }
        std::fs::File::create(dir.join("d.bin"))
            .unwrap()
            .set_len(64)
            .unwrap();
        let listing = list(&dir);
        assert_eq!(paths(&listing), ["SKILL.md", "a.bin", "b.bin"]);
        assert_eq!(listing.truncated, Some(Limit::Bytes));
    }

    #[test]
    fn the_listing_stops_at_16_levels_and_4096_folders() {
        let (_temp, dir) = skill(&[]);
        let mut deep = dir.clone();
        for level in 1..=MAX_DEPTH + 2 {
            deep.push(format!("l{level}"));
            std::fs::create_dir(&deep).unwrap();
            std::fs::write(deep.join("f.md"), "x").unwrap();
        }
        let listing = list(&dir);
        assert_eq!(listing.truncated, Some(Limit::Depth));
        // Files in the folders 1 to 16 levels down.
        assert_eq!(listing.files.len(), 1 + MAX_DEPTH);

        let (_temp, dir) = skill(&[]);
        for i in 0..MAX_DIRS {
            std::fs::create_dir(dir.join(format!("d{i:04}"))).unwrap();
        }
        std::fs::write(dir.join("d4095/last.md"), "x").unwrap();
        let listing = list(&dir);
        // The skill folder counts: the last folder is not read.
        assert_eq!(listing.truncated, Some(Limit::Folders));
        assert_eq!(paths(&listing), ["SKILL.md"]);
    }

    #[test]
    fn known_digests() {
        let million: Vec<u8> = vec![b'a'; 1_000_000];
        let (_temp, dir) = skill(&[
            ("abc.txt", b"abc"),
            ("empty.txt", b""),
            ("million.txt", &million),
        ]);
        let files = Files::new(1 << 20);
        let listing = files.listing(&dir);
        let digest = |path: &str| {
            let entry = listing.files.iter().find(|e| e.path == path).unwrap();
            files.digests(&dir, std::slice::from_ref(entry)).unwrap()[0]
                .digest
                .clone()
        };
        assert_eq!(
            digest("abc.txt"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            digest("empty.txt"),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        // More than one buffer's worth (FIPS 180-2, appendix B.3).
        assert_eq!(
            digest("million.txt"),
            "sha256:cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
        // A changed file is hashed again, and its size is the hashed one
        // (the listing, made before, still says 3 bytes).
        std::fs::write(dir.join("abc.txt"), "abcd").unwrap();
        assert_eq!(
            digest("abc.txt"),
            "sha256:88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589"
        );
        let entry = listing.files.iter().find(|e| e.path == "abc.txt").unwrap();
        let hashed = files.digests(&dir, std::slice::from_ref(entry)).unwrap();
        assert_eq!((entry.size, hashed[0].size), (3, 4));
    }

    #[test]
    fn the_cached_listing_follows_its_folders() {
        let (_temp, dir) = skill(&[("references/forms.md", b"x"), ("notes/a.md", b"x")]);
        let files = Files::new(1 << 20);
        let first = files.listing(&dir);
        assert!(Arc::ptr_eq(&first, &files.listing(&dir)), "reused");
        // Written in place: no folder changes, the listing is kept (its
        // size is the listed one until the folder changes).
        std::fs::write(dir.join("references/forms.md"), "longer").unwrap();
        assert!(Arc::ptr_eq(&first, &files.listing(&dir)));
        // Added next to it.
        std::fs::write(dir.join("references/more.md"), "x").unwrap();
        let added = files.listing(&dir);
        assert_eq!(
            paths(&added),
            [
                "SKILL.md",
                "notes/a.md",
                "references/forms.md",
                "references/more.md"
            ]
        );
        assert_eq!(added.files[2].size, 6);
        std::fs::remove_dir_all(dir.join("notes")).unwrap();
        assert_eq!(
            paths(&files.listing(&dir)),
            ["SKILL.md", "references/forms.md", "references/more.md"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_file_is_unlisted_when_its_target_goes() {
        let (_temp, dir) = skill(&[("deep/a/b/c/target.md", b"x")]);
        symlink("../deep/a/b/c/target.md", &dir.join("links/target.md"));
        let files = Files::new(1 << 20);
        // The folder of the target is read by the walk too; this is about
        // the link, so list only `links`.
        assert_eq!(
            paths(&files.folder_listing(&dir, "links")),
            ["links/target.md"]
        );
        std::fs::remove_file(dir.join("deep/a/b/c/target.md")).unwrap();
        assert!(files.folder_listing(&dir, "links").files.is_empty());
    }

    fn target(dir: &Path, path: &str) -> Target {
        resolve(dir, path).unwrap()
    }

    #[test]
    fn text_image_and_binary() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let (_temp, dir) = skill(&[
            ("notes.md", b"\xef\xbb\xbf# Notes\r\n\ttabs \n"),
            ("logo.png", png),
            ("fake.png", b"not a png at all"),
            ("lying.png", b"\xff\xd8\xff\xe0 a JPEG named .png"),
            ("data.bin", b"\0\x01\x02"),
            ("latin1.txt", b"caf\xe9"),
            // Not `nul.txt`: Windows reads that name as the NUL device.
            ("nul-byte.txt", b"a\0b"),
            ("report.pdf", b"%PDF-1.7\n\x00\xff"),
            ("Makefile", b"all:\n\ttrue\n"),
        ]);
        let read = |path| read(&target(&dir, path), 1 << 20).unwrap();
        assert_eq!(
            read("notes.md"),
            Content::Text {
                text: "# Notes\r\n\ttabs \n".into(),
                mime: "text/markdown"
            }
        );
        assert_eq!(
            read("logo.png"),
            Content::Image {
                bytes: png.to_vec(),
                mime: "image/png"
            }
        );
        // Text with an image's name is text.
        assert_eq!(
            read("fake.png"),
            Content::Text {
                text: "not a png at all".into(),
                mime: "text/plain"
            }
        );
        assert_eq!(
            read("lying.png"),
            Content::Binary {
                size: 22,
                mime: "application/octet-stream"
            }
        );
        for path in ["data.bin", "latin1.txt", "nul-byte.txt"] {
            assert!(
                matches!(
                    read(path),
                    Content::Binary {
                        mime: "application/octet-stream",
                        ..
                    }
                ),
                "{path}"
            );
        }
        assert_eq!(
            read("report.pdf"),
            Content::Binary {
                size: 11,
                mime: "application/pdf"
            }
        );
        assert_eq!(
            read("Makefile"),
            Content::Text {
                text: "all:\n\ttrue\n".into(),
                mime: "text/plain"
            }
        );
    }

    #[test]
    fn the_size_cap_holds_for_text_and_images_not_for_a_description() {
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.resize(100, 0);
        let mut big_binary = vec![0_u8; 100];
        big_binary[0] = 0xff;
        // A multi-byte character cut by the sniffed prefix is still text.
        let big_text = "é".repeat(SNIFF_BYTES);
        let (_temp, dir) = skill(&[
            ("big.png", &png),
            ("big.bin", &big_binary),
            ("big.md", big_text.as_bytes()),
        ]);
        for path in ["big.png", "big.md"] {
            assert!(
                matches!(
                    read(&target(&dir, path), 50),
                    Err(FileError::TooLarge { max: 50, .. })
                ),
                "{path}"
            );
        }
        assert_eq!(
            read(&target(&dir, "big.bin"), 50).unwrap(),
            Content::Binary {
                size: 100,
                mime: "application/octet-stream"
            }
        );
        assert!(matches!(
            read(&target(&dir, ""), 50),
            Err(FileError::NotRegular)
        ));
    }

    #[test]
    fn mime_types_by_extension() {
        for (path, mime) in [
            ("SKILL.md", "text/markdown"),
            ("scripts/fill_form.PY", "text/x-python"),
            ("run.sh", "text/x-shellscript"),
            ("app.ts", "text/x-typescript"),
            ("data.yml", "application/yaml"),
            ("logo.jpg", "image/jpeg"),
            (
                "template.docx",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            ),
        ] {
            assert_eq!(super::mime(path), Some(mime), "{path}");
        }
        for path in ["Makefile", ".env", "archive.xyz", "dir.d/noext"] {
            assert_eq!(super::mime(path), None, "{path}");
        }
    }
}
