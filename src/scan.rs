//! Scanning: walk every root, find the `SKILL.md` files and parse their
//! frontmatter (design §3.2).
//!
//! The walk follows symlinked folders and files, guards against cycles by file
//! identity (device and inode of each directory on the current path), loads a
//! target reached through several paths once, skips hidden folders and
//! `node_modules`, stops at [`MAX_DEPTH`] levels and [`MAX_DIRS`] directories per
//! root, and turns every problem into a [`Diagnostic`]; it never fails as a whole.
//!
//! Parsing goes through a [`Cache`] keyed by path and checked against size and
//! modification time, so that a rescan of an unchanged tree opens no skill file.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use crate::diagnostic::{Diagnostic, Finding, Severity};
use crate::parse::{self, Parsed};
use crate::roots::{Layout, Root, Source};

/// Skill folders are looked for at most this many levels below a root.
pub const MAX_DEPTH: usize = 4;
/// At most this many directories are read per root.
pub const MAX_DIRS: usize = 20_000;

/// Identity of a file: device and inode. Two paths with the same identity are
/// the same file or directory.
type FileId = (u64, u64);

/// One version of one file: its size, modification time and identity. Equal
/// stamps mean the file can be taken as unchanged (the scan's parse cache and
/// `contents` both rely on this).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    /// Inode change time (seconds, nanoseconds): it also moves on `chmod`,
    /// `chown` and on writes that keep size and modification time.
    changed: (i64, i64),
    id: FileId,
}

impl Stamp {
    pub fn of(meta: &Metadata) -> Stamp {
        #[cfg(unix)]
        let changed = {
            use std::os::unix::fs::MetadataExt;
            (meta.ctime(), meta.ctime_nsec())
        };
        #[cfg(not(unix))]
        let changed = (0, 0);
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            changed,
            id: file_id(meta),
        }
    }
}

/// One skill found on disk, parsed.
#[derive(Clone, Debug)]
pub struct Found {
    /// The skill folder, as reached from its root (symlinks not resolved).
    pub dir: PathBuf,
    /// Its `SKILL.md` (or `skill.md`).
    pub file: PathBuf,
    /// Index of the root it was found in.
    pub root: usize,
    pub parsed: Arc<Parsed>,
}

/// Everything one scan learned.
#[derive(Debug, Default)]
pub struct Scan {
    /// Skills in precedence order: by root, then in walk order within a root.
    pub skills: Vec<Found>,
    pub diagnostics: Vec<Diagnostic>,
    /// Roots that do not exist (yet).
    pub missing_roots: Vec<PathBuf>,
    /// Per root: how many skills it yielded.
    pub per_root: Vec<usize>,
    /// SKILL.md files opened and parsed (the rest came from the cache).
    pub files_parsed: usize,
    /// The directories the scan looked at, for the file watcher.
    pub dirs: Dirs,
}

/// The directories one scan looked at. Watching exactly these (each without
/// recursion) sees every change that can alter the result, and nothing in
/// `node_modules`, hidden folders or a skill's own sub-folders.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// Directories whose entries were listed: roots and the folders between a
    /// root and its skills. Any change in them may add or remove a skill.
    pub listed: Vec<PathBuf>,
    /// Folders where only a `SKILL.md` matters, other than the folders of the
    /// skills the scan loaded (those are in the snapshot already): folders
    /// with a broken `SKILL.md`, duplicates, and folders at the depth limit.
    pub other_skill_dirs: Vec<PathBuf>,
}

/// Parsed frontmatter (or the reason it failed) by path, valid while the
/// file's [`Stamp`] is unchanged.
#[derive(Debug, Default)]
pub struct Cache {
    /// Keyed by the path's bytes: hashing a `Path` walks its components.
    entries: HashMap<OsString, (Stamp, Outcome)>,
}

/// What parsing one SKILL.md gave (the finding boxed: failures are rare).
type Outcome = Result<Arc<Parsed>, Box<Finding>>;

/// Scans `roots` in order. `cache` is read and replaced by the entries of this
/// scan (so it never holds files that are gone).
pub fn scan(roots: &[Root], max_file_bytes: u64, cache: &mut Cache) -> Scan {
    let mut out = Scan::default();

    // 1. Walk. The same target reached through another path (a symlink into
    // another root, say) is loaded once, at its first (highest) place.
    let mut seen_files: HashMap<FileId, PathBuf> = HashMap::new();
    let mut hits: Vec<(usize, Hit)> = Vec::new();
    for (index, root) in roots.iter().enumerate() {
        let mut found = Vec::new();
        walk(root, &mut found, &mut out);
        for hit in found {
            if cfg!(unix)
                && let Some(first) = seen_files.get(&hit.stamp.id)
            {
                out.diagnostics.push(
                    Finding::note(
                        "same-file",
                        format!(
                            "the same SKILL.md as {}, which is loaded from there",
                            first.display()
                        ),
                        "nothing to do, unless you meant to have two different skills",
                    )
                    .at(&hit.file),
                );
                out.dirs.other_skill_dirs.push(hit.dir);
                continue;
            }
            seen_files.insert(hit.stamp.id, hit.file.clone());
            hits.push((index, hit));
        }
    }
    drop(seen_files);

    // 2. Reuse the parse of every unchanged file; parse the others. A read
    // that failed for lack of permission is not reused: fixing permissions
    // changes the file's ctime, but only on filesystems that have one.
    let mut results: Vec<Option<Outcome>> = hits
        .iter()
        .map(|(index, hit)| {
            let (stamp, result) = cache.entries.remove(hit.file.as_os_str())?;
            let still_valid = stamp == hit.stamp
                && match &result {
                    // A name taken from the folder (or plugin) depends on more
                    // than the file.
                    Ok(parsed) => {
                        parsed.name_given || parsed.name == fallback_name(&roots[*index], &hit.dir)
                    }
                    Err(finding) => finding.code != "unreadable",
                };
            still_valid.then_some(result)
        })
        .collect();
    let todo: Vec<usize> = (0..hits.len()).filter(|&i| results[i].is_none()).collect();
    out.files_parsed = todo.len();
    let parse_one = |i: usize| {
        let (index, hit) = &hits[i];
        let fallback = fallback_name(&roots[*index], &hit.dir);
        parse::read_frontmatter(&hit.file, &fallback, max_file_bytes)
            .map(Arc::new)
            .map_err(Box::new)
    };
    for (i, result) in in_parallel(&todo, parse_one) {
        results[i] = Some(result);
    }

    // 3. Assemble, in precedence order.
    out.per_root = vec![0; roots.len()];
    let mut next_cache = HashMap::with_capacity(hits.len());
    for ((index, hit), result) in hits.into_iter().zip(results) {
        let result = result.expect("every file was parsed or found in the cache");
        match &result {
            Ok(parsed) => {
                out.diagnostics
                    .extend(parsed.findings.iter().map(|f| f.clone().at(&hit.file)));
                out.skills.push(Found {
                    dir: hit.dir,
                    file: hit.file.clone(),
                    root: index,
                    parsed: Arc::clone(parsed),
                });
                out.per_root[index] += 1;
            }
            Err(finding) => {
                out.diagnostics.push(Finding::clone(finding).at(&hit.file));
                out.dirs.other_skill_dirs.push(hit.dir);
            }
        }
        next_cache.insert(hit.file.into_os_string(), (hit.stamp, result));
    }
    cache.entries = next_cache;
    out
}

/// From this many children on, a folder is opened to look them up relative
/// to it.
const PARENT_FROM: usize = 8;

/// Below this many files, threads cost more than they save.
const PARALLEL_FROM: usize = 128;
/// Parsing is open + read + YAML per file; more threads than this mostly wait
/// on each other in the kernel.
const MAX_THREADS: usize = 4;

/// `work(i)` for every index in `todo`, on up to [`MAX_THREADS`] threads when
/// there are enough of them (measured: the start-up scan of 10,000 skills on
/// two cores went from about 190 ms to about 120 ms).
fn in_parallel<R, F>(todo: &[usize], work: F) -> Vec<(usize, R)>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
{
    // `available_parallelism` reads cgroup files: ask only when it matters,
    // and once (it was 10 system calls per folder in a tree of 20,000).
    static THREADS: OnceLock<usize> = OnceLock::new();
    if todo.len() < PARALLEL_FROM {
        return todo.iter().map(|&i| (i, work(i))).collect();
    }
    let threads = *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS)
    });
    if threads < 2 {
        return todo.iter().map(|&i| (i, work(i))).collect();
    }
    let work = &work;
    let chunk = todo.len().div_ceil(threads);
    let run = move |part: &[usize]| part.iter().map(|&i| (i, work(i))).collect::<Vec<_>>();
    std::thread::scope(|scope| {
        let mut done = Vec::with_capacity(todo.len());
        let mut workers = Vec::new();
        for part in todo.chunks(chunk) {
            // No thread (a container's process limit, say): do it here.
            match std::thread::Builder::new().spawn_scoped(scope, move || run(part)) {
                Ok(worker) => workers.push(worker),
                Err(_) => done.extend(run(part)),
            }
        }
        for worker in workers {
            done.extend(
                worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            );
        }
        done
    })
}

/// The name of a skill whose frontmatter has none: its folder's name, or for
/// a single-skill plugin (whose folder is a version folder) the plugin's.
fn fallback_name(root: &Root, dir: &Path) -> String {
    match (&root.plugin, root.layout) {
        (Some(plugin), Layout::Skill) => plugin.name.clone(),
        _ => folder_name(dir),
    }
}

/// The last component of a skill folder's path, the fallback skill name.
pub fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A `SKILL.md` the walk found, before parsing.
struct Hit {
    dir: PathBuf,
    file: PathBuf,
    stamp: Stamp,
}

/// What a directory turned out to be.
enum Probe {
    Skill(PathBuf, Stamp),
    /// It has a `SKILL.md` that cannot be used; it is still a skill folder, so
    /// the walk does not look inside it.
    Broken(Diagnostic),
    NotSkill,
}

/// Whether `dir` holds a usable `SKILL.md` (or `skill.md`). With `parent`,
/// an open handle on `dir`'s parent, the files are looked up relative to it.
///
/// Each name costs one `lstat` when it is absent, as it is in every folder
/// that is not a skill; a symlink is then followed with a `stat`.
fn probe(dir: &Path, parent: Option<&Parent>) -> Probe {
    for name in ["SKILL.md", "skill.md"] {
        let file = dir.join(name);
        let status = match lookup(dir, parent, name, false) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Ok((Kind::Symlink, _)) => match lookup(dir, parent, name, true) {
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    return Probe::Broken(dangling(&file, Severity::Error));
                }
                followed => followed,
            },
            other => other,
        };
        match status {
            Ok((Kind::File, stamp)) => return Probe::Skill(file, stamp),
            Ok(_) => return Probe::Broken(parse::ReadError::NotRegular.finding().at(file)),
            Err(err) if is_loop(&err) => return Probe::Broken(symlink_loop().at(file)),
            Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
                return Probe::Broken(unlistable(&err).at(dir));
            }
            Err(err) => {
                return Probe::Broken(
                    Finding::error(
                        "unreadable",
                        format!("cannot read: {err}"),
                        "check the permissions of the file and its folder",
                    )
                    .at(file),
                );
            }
        }
    }
    Probe::NotSkill
}

/// What a path is, as far as `probe` cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Symlink,
    Other,
}

/// `lstat` (or, with `follow`, `stat`) of `dir/name`: relative to `parent`
/// when there is one, else by the whole path.
fn lookup(
    dir: &Path,
    parent: Option<&Parent>,
    name: &str,
    follow: bool,
) -> io::Result<(Kind, Stamp)> {
    if let (Some(parent), Some(child)) = (parent, dir.file_name()) {
        return parent.stat(&Path::new(child).join(name), follow);
    }
    let path = dir.join(name);
    let meta = if follow {
        fs::metadata(&path)?
    } else {
        fs::symlink_metadata(&path)?
    };
    let kind = if meta.is_file() {
        Kind::File
    } else if meta.file_type().is_symlink() {
        Kind::Symlink
    } else {
        Kind::Other
    };
    Ok((kind, Stamp::of(&meta)))
}

/// An open directory whose entries are looked up relative to it, so that the
/// kernel resolves two path components per `stat` instead of the whole path
/// (measured: a rescan of 10,000 unchanged skills spent a quarter of its time
/// in path lookups).
#[cfg(unix)]
struct Parent(std::os::fd::OwnedFd);

#[cfg(unix)]
impl Parent {
    fn open(path: &Path) -> Option<Parent> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::open(path, flags, Mode::empty())
            .ok()
            .map(Parent)
    }

    fn stat(&self, relative: &Path, follow: bool) -> io::Result<(Kind, Stamp)> {
        use rustix::fs::{AtFlags, FileType};
        let flags = if follow {
            AtFlags::empty()
        } else {
            AtFlags::SYMLINK_NOFOLLOW
        };
        let st = rustix::fs::statat(&self.0, relative, flags)?;
        let modified = u64::try_from(st.st_mtime).ok().map(|secs| {
            std::time::UNIX_EPOCH + std::time::Duration::new(secs, st.st_mtime_nsec as u32)
        });
        let stamp = Stamp {
            len: st.st_size as u64,
            modified,
            changed: (st.st_ctime as i64, st.st_ctime_nsec as i64),
            id: (st.st_dev as u64, st.st_ino as u64),
        };
        let kind = match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Kind::File,
            FileType::Symlink => Kind::Symlink,
            _ => Kind::Other,
        };
        Ok((kind, stamp))
    }
}

// Elsewhere, paths are looked up whole.
#[cfg(not(unix))]
struct Parent;

#[cfg(not(unix))]
impl Parent {
    fn open(_path: &Path) -> Option<Parent> {
        None
    }

    fn stat(&self, _relative: &Path, _follow: bool) -> io::Result<(Kind, Stamp)> {
        unreachable!("never opened")
    }
}

/// A symlink at `link` whose target does not exist: an error for a
/// `SKILL.md` (a skill is lost), a warning for a folder.
fn dangling(link: &Path, severity: Severity) -> Diagnostic {
    let target = fs::read_link(link).unwrap_or_default();
    Finding::new(
        severity,
        "dangling-symlink",
        format!("symlink to {}, which does not exist", target.display()),
        "fix or remove the symlink",
    )
    .at(link)
}

fn symlink_loop() -> Finding {
    Finding::warning(
        "symlink-loop",
        "symlink loop: the link points back to a folder that contains it",
        "remove the link or point it somewhere else",
    )
}

fn is_loop(err: &io::Error) -> bool {
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

/// A directory waiting to be read, with the identities of the directories on
/// the path to it (a symlink to any of them would be a cycle).
struct Frame {
    path: PathBuf,
    depth: usize,
    ancestors: Vec<FileId>,
}

/// Walks one root, appending the skills it holds to `hits` and what it saw to
/// `out` (diagnostics, missing roots, directories).
fn walk(root: &Root, hits: &mut Vec<Hit>, out: &mut Scan) {
    let diagnostics = &mut out.diagnostics;
    let meta = match fs::metadata(&root.path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            // Missing project and user folders are normal; a path someone
            // named explicitly (a flag, a plugin manifest) is probably a mistake.
            let hint = match root.source {
                Source::Custom => "check the path given to --skills-dir or SKILLSERVE_SKILLS_DIRS",
                _ => "fix the skill path in the plugin's manifest, or reinstall the plugin",
            };
            if root.layout != Layout::Folders {
                diagnostics.push(
                    Finding::warning(
                        "root-missing",
                        "this skills path does not exist (yet)",
                        hint,
                    )
                    .at(&root.path),
                );
            }
            out.missing_roots.push(root.path.clone());
            return;
        }
        Err(err) => {
            let finding = if is_loop(&err) {
                symlink_loop()
            } else {
                Finding::error(
                    "root-unreadable",
                    format!("cannot read this {} skills folder: {err}", root.source),
                    "check its permissions",
                )
            };
            diagnostics.push(finding.at(&root.path));
            return;
        }
    };
    if !meta.is_dir() {
        diagnostics.push(
            Finding::error(
                "root-not-a-directory",
                format!(
                    "this {} skills location is a file, not a folder",
                    root.source
                ),
                "remove the file, or make it a folder of skill folders",
            )
            .at(&root.path),
        );
        return;
    }
    if root.layout != Layout::Folders {
        match probe(&root.path, None) {
            Probe::Skill(file, stamp) => {
                hits.push(Hit {
                    dir: root.path.clone(),
                    file,
                    stamp,
                });
                return;
            }
            Probe::Broken(diagnostic) => {
                diagnostics.push(diagnostic);
                out.dirs.other_skill_dirs.push(root.path.clone());
                return;
            }
            Probe::NotSkill if root.layout == Layout::Skill => {
                diagnostics.push(
                    Finding::warning(
                        "skill-missing",
                        "this folder was expected to be a skill but holds no SKILL.md",
                        "reinstall the plugin, or add the SKILL.md",
                    )
                    .at(&root.path),
                );
                return;
            }
            Probe::NotSkill => {}
        }
    }

    let mut stack = vec![Frame {
        path: root.path.clone(),
        depth: 0,
        ancestors: vec![file_id(&meta)],
    }];
    let mut dirs_read = 0;
    let mut not_descended: Vec<PathBuf> = Vec::new();
    while let Some(frame) = stack.pop() {
        if dirs_read == MAX_DIRS {
            diagnostics.push(
                Finding::warning(
                    "walk-limit",
                    format!("stopped after reading {MAX_DIRS} folders; skills further on were not loaded"),
                    "keep only skill folders here, or point --skills-dir at a narrower folder",
                )
                .at(&root.path),
            );
            break;
        }
        dirs_read += 1;
        out.dirs.listed.push(frame.path.clone());
        let Some(children) = list(&frame, diagnostics) else {
            continue;
        };
        let depth = frame.depth + 1;
        // Worth an extra open only when there are children to look up.
        let parent = if children.len() >= PARENT_FROM {
            Parent::open(&frame.path)
        } else {
            None
        };
        // One `stat` per child; a folder of thousands of skills spreads them
        // over threads (the rescan of an unchanged 10,000-skill tree is
        // mostly these).
        let every: Vec<usize> = (0..children.len()).collect();
        let mut probes = in_parallel(&every, |i| probe(&children[i].0, parent.as_ref()));
        probes.sort_unstable_by_key(|(i, _)| *i);
        let mut deeper = Vec::new();
        for ((path, id), (_, probed)) in children.into_iter().zip(probes) {
            if cfg!(unix) && frame.ancestors.contains(&id) {
                diagnostics.push(symlink_loop().at(&path));
                continue;
            }
            match probed {
                Probe::Skill(file, stamp) => hits.push(Hit {
                    dir: path,
                    file,
                    stamp,
                }),
                Probe::Broken(diagnostic) => {
                    diagnostics.push(diagnostic);
                    out.dirs.other_skill_dirs.push(path);
                }
                Probe::NotSkill if depth < MAX_DEPTH => {
                    let mut ancestors = frame.ancestors.clone();
                    ancestors.push(id);
                    deeper.push(Frame {
                        path,
                        depth,
                        ancestors,
                    });
                }
                Probe::NotSkill => {
                    // Watched for a SKILL.md appearing, like a skill folder.
                    out.dirs.other_skill_dirs.push(path.clone());
                    not_descended.push(path);
                }
            }
        }
        // Reversed so that popping the stack visits folders in name order.
        stack.extend(deeper.into_iter().rev());
    }
    // Folders at the depth limit without a SKILL.md may hide deeper skills:
    // name them, so that a skill nested too deeply is not a mystery.
    for (index, dir) in not_descended.iter().enumerate() {
        if index == 3 {
            diagnostics.push(
                Finding::note(
                    "depth-limit",
                    format!(
                        "{} more folders {MAX_DEPTH} levels down were not searched deeper",
                        not_descended.len() - 3
                    ),
                    format!(
                        "keep skill folders at most {MAX_DEPTH} levels below the skills folder"
                    ),
                )
                .at(&root.path),
            );
            break;
        }
        diagnostics.push(
            Finding::note(
                "depth-limit",
                format!("this folder is {MAX_DEPTH} levels down and holds no SKILL.md; folders below it are not searched"),
                format!("keep skill folders at most {MAX_DEPTH} levels below the skills folder"),
            )
            .at(dir),
        );
    }
}

/// The sub-directories of `frame`, or `None` (with a diagnostic) when the
/// folder cannot be listed: the walk goes on with the rest of the root.
fn list(frame: &Frame, diagnostics: &mut Vec<Diagnostic>) -> Option<Vec<(PathBuf, FileId)>> {
    match read_children(frame, diagnostics) {
        Ok(children) => Some(children),
        Err(err) => {
            diagnostics.push(unlistable(&err).at(&frame.path));
            None
        }
    }
}

fn unlistable(err: &io::Error) -> Finding {
    Finding::warning(
        "dir-unreadable",
        format!("cannot look inside this folder: {err}"),
        "check its permissions (skillserve needs to read and enter it)",
    )
}

/// The sub-directories of `frame` worth visiting, sorted by name, each with
/// its identity. Symlinks to directories are followed; broken ones reported.
fn read_children(
    frame: &Frame,
    diagnostics: &mut Vec<Diagnostic>,
) -> io::Result<Vec<(PathBuf, FileId)>> {
    let parent_dev = frame.ancestors.last().map_or(0, |id| id.0);
    let mut children = Vec::new();
    for entry in fs::read_dir(&frame.path)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        let skip = {
            let bytes = name.as_encoded_bytes();
            bytes.starts_with(b".") || bytes == b"node_modules"
        };
        if skip {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            children.push((path, entry_id(&entry, parent_dev)));
        } else if kind.is_symlink() {
            match fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => children.push((path, file_id(&meta))),
                Ok(_) => {}
                Err(err) if is_loop(&err) => diagnostics.push(symlink_loop().at(&path)),
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    diagnostics.push(dangling(&path, Severity::Warning));
                }
                Err(_) => {}
            }
        }
    }
    // Siblings share their parent, so comparing bytes orders them by name;
    // comparing `Path`s component by component cost a tenth of a rescan.
    children.sort_unstable_by(|a, b| {
        a.0.as_os_str()
            .as_encoded_bytes()
            .cmp(b.0.as_os_str().as_encoded_bytes())
    });
    Ok(children)
}

/// Device and inode of the file `meta` describes.
#[cfg(unix)]
pub(crate) fn file_id(meta: &Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// The inode from the directory entry itself, which costs no system call. Its
/// device is the parent's: only a mount point differs, and a mount point is
/// never a cycle through a symlink.
#[cfg(unix)]
fn entry_id(entry: &fs::DirEntry, parent_dev: u64) -> FileId {
    use std::os::unix::fs::DirEntryExt;
    (parent_dev, entry.ino())
}

// Without inodes (Windows), identities are not available from metadata: cycles
// are then bounded by MAX_DEPTH and MAX_DIRS alone, and the cache keys on size
// and modification time only.
#[cfg(not(unix))]
pub(crate) fn file_id(_meta: &Metadata) -> FileId {
    (0, 0)
}

#[cfg(not(unix))]
fn entry_id(_entry: &fs::DirEntry, _parent_dev: u64) -> FileId {
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests run as root here, where permissions cannot make a folder
    /// unlistable; a path that is not a directory fails the same call.
    #[test]
    fn an_unlistable_folder_is_a_diagnostic_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let frame = Frame {
            path: file.clone(),
            depth: 1,
            ancestors: vec![(0, 0)],
        };
        let mut diagnostics = Vec::new();
        assert!(list(&frame, &mut diagnostics).is_none());
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].code, "dir-unreadable");
        assert_eq!(diagnostics[0].path, file);
    }

    #[test]
    fn walk_order_is_by_name_and_skips_hidden_and_node_modules() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b", "a", "c/inner", ".hidden/x", "node_modules/y"] {
            let skill = dir.path().join(name);
            std::fs::create_dir_all(&skill).unwrap();
            std::fs::write(skill.join("SKILL.md"), "---\ndescription: d\n---\n").unwrap();
        }
        let root = Root::new(dir.path().to_path_buf(), Source::User, Layout::Folders);
        let scan = scan(&[root], 1 << 20, &mut Cache::default());
        let names: Vec<&str> = scan.skills.iter().map(|f| f.parsed.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "inner"]);
        assert_eq!(scan.files_parsed, 3);
    }

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

    #[test]
    fn a_cached_fallback_name_follows_the_plugin() {
        use crate::roots::Plugin;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "---\ndescription: d\n---\n").unwrap();
        let root = |name: &str| {
            let mut root = Root::new(dir.path().to_path_buf(), Source::Plugin, Layout::Skill);
            root.plugin = Some(Arc::new(Plugin {
                key: format!("{name}@m"),
                name: name.into(),
                version: None,
                install_path: dir.path().to_path_buf(),
            }));
            root
        };
        let mut cache = Cache::default();
        assert_eq!(
            scan(&[root("foo")], 1 << 20, &mut cache).skills[0]
                .parsed
                .name,
            "foo"
        );
        assert_eq!(
            scan(&[root("bar")], 1 << 20, &mut cache).skills[0]
                .parsed
                .name,
            "bar"
        );
    }

    #[test]
    fn an_unchanged_tree_is_rescanned_without_opening_files() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("s");
        std::fs::create_dir(&skill).unwrap();
        std::fs::write(skill.join("SKILL.md"), "---\ndescription: d\n---\n").unwrap();
        let roots = [Root::new(
            dir.path().to_path_buf(),
            Source::User,
            Layout::Folders,
        )];
        let mut cache = Cache::default();
        assert_eq!(scan(&roots, 1 << 20, &mut cache).files_parsed, 1);
        assert_eq!(scan(&roots, 1 << 20, &mut cache).files_parsed, 0);
        std::fs::write(skill.join("SKILL.md"), "---\ndescription: changed\n---\n").unwrap();
        let again = scan(&roots, 1 << 20, &mut cache);
        assert_eq!(again.files_parsed, 1);
        assert_eq!(again.skills[0].parsed.description, "changed");
    }
}
