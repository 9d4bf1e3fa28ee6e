//! Scanning: walk every root, find the `SKILL.md` files and parse their
//! frontmatter (behaviour.md §3.2).
//!
//! The walk follows symlinked folders and files, guards against cycles by file
//! identity (the directories on the current path), loads a target reached
//! through several paths once, skips hidden folders and `node_modules`, stops at
//! [`MAX_DEPTH`] levels and [`MAX_DIRS`] directories per root, and turns every
//! problem into a [`Diagnostic`]; it never fails as a whole.
//!
//! Parsing goes through a [`Cache`] keyed by path and checked against the
//! file's [`Stamp`], so that a rescan of an unchanged tree opens no skill file.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic, Finding, Severity};
use crate::disk::{self, FileId, PathKey, ReadError, Stamp};
use crate::gate::{self, Fence, Place};
use crate::listing::Lone;
use crate::parallel;
use crate::parse::{self, ParseError, Parsed};
use crate::roots::{Layout, Root, SkillFile, Source};

/// Skill folders are looked for at most this many levels below a root.
pub const MAX_DEPTH: usize = 4;
/// At most this many directories are read per root.
pub const MAX_DIRS: usize = 20_000;

/// One skill found on disk, parsed.
#[derive(Clone, Debug)]
pub struct Found {
    /// The skill folder, as reached from its root (symlinks not resolved);
    /// the same allocation from scan to scan while the skill is there.
    pub dir: Arc<Path>,
    /// Its `SKILL.md` (or `skill.md`).
    pub file_name: SkillFile,
    /// Index of the root it was found in.
    pub root: usize,
    pub parsed: Arc<Parsed>,
    /// Its folder, when `SKILL.md` was all it held (user's own folders and
    /// installed skills; a project's are not looked at by path).
    pub lone: Option<Lone>,
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
    /// Skill folders whose `SKILL.md` exists but could not be loaded, with
    /// the reason: a call naming one says why (behaviour.md §12).
    pub failed: Vec<Failed>,
    /// Hidden folders the walk skipped (but `.git`), with the index of their
    /// root: `list` and `check` count the skills in them ([`hidden_skills`]),
    /// the server never looks.
    pub hidden: Vec<(PathBuf, usize)>,
    /// `SKILL.md` files found again through another root (a symlink), kept
    /// only at their first place: a client that loads the other root itself
    /// already has the skill (`profiles`).
    pub also_found: Vec<AlsoFound>,
}

/// A `SKILL.md` reached again from another root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlsoFound {
    /// The file where it was loaded (its first place).
    pub file: PathBuf,
    /// The other root it was found in.
    pub root: usize,
}

/// A skill folder that holds a `SKILL.md` the scan could not load.
#[derive(Clone, Debug)]
pub struct Failed {
    pub dir: PathBuf,
    /// Index of the root it was found in.
    pub root: usize,
    pub diagnostic: Diagnostic,
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
    /// `SKILL.md` files that are symlinks, with the version of what they led
    /// to when the scan looked (`None`: nothing, a dangling link). Their
    /// targets may lie in folders nobody watches: the server checks these
    /// with a `stat` at each interval rather than rescanning everything.
    pub links: Vec<(PathBuf, Option<Stamp>)>,
    /// Store entries a lock names that are not there (`store-missing`):
    /// `sync` brings them back without touching the lock, so the store is
    /// watched for them to appear.
    pub missing_entries: Vec<PathBuf>,
}

/// Parsed frontmatter (or the reason it failed) by skill folder, valid while
/// the file's [`Stamp`] is unchanged.
#[derive(Debug, Default)]
pub struct Cache {
    entries: HashMap<PathKey, Cached>,
}

/// What the cache knows of one skill folder.
#[derive(Debug)]
struct Cached {
    file_name: SkillFile,
    stamp: Stamp,
    outcome: Outcome,
    /// What [`Found::lone`] was when the file was parsed: checked at each
    /// call, so it is kept as long as the file is.
    lone: Option<Lone>,
}

impl Cache {
    /// How many skill folders it knows.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// What parsing one SKILL.md gave (shared: the cache and the scan both hold it).
type Outcome = Result<Arc<Parsed>, Arc<ParseError>>;

/// An [`Outcome`], and its folder's mark when `SKILL.md` was all it held.
type Parse = (Outcome, Option<Lone>);

/// Scans `roots` in order. `cache` is read and replaced by the entries of this
/// scan (so it never holds files that are gone).
pub fn scan(roots: &[Root], max_file_bytes: u64, cache: &mut Cache) -> Scan {
    let mut out = Scan::default();
    let hits = find_all(roots, &mut out);
    let outcomes = parse_all(roots, &hits, max_file_bytes, cache, &mut out.files_parsed);
    assemble(roots, hits, outcomes, cache, &mut out);
    out
}

/// Step 1: walk every root. The same file reached through another path (a
/// symlink into another root, say) is kept once, at its first (highest) place.
fn find_all(roots: &[Root], out: &mut Scan) -> Vec<(usize, Hit)> {
    // The index of the hit that has the file.
    let mut seen: HashMap<FileId, usize> = HashMap::new();
    let mut hits: Vec<(usize, Hit)> = Vec::new();
    for (index, root) in roots.iter().enumerate() {
        let walked = Walker::walk(root);
        out.diagnostics.extend(walked.diagnostics);
        out.dirs.listed.extend(walked.listed);
        out.dirs.other_skill_dirs.extend(walked.other_skill_dirs);
        out.dirs.links.extend(walked.links);
        out.hidden
            .extend(walked.hidden.into_iter().map(|dir| (dir, index)));
        out.failed
            .extend(walked.failed.into_iter().map(|(dir, diagnostic)| Failed {
                dir,
                root: index,
                diagnostic,
            }));
        if walked.missing {
            out.missing_roots.push(root.path.clone());
        }
        for hit in walked.hits {
            if let Some(problem) = unusable_path(&hit.dir) {
                out.diagnostics.push(problem.at(&hit.dir));
                out.dirs.other_skill_dirs.push(hit.dir);
                continue;
            }
            if cfg!(unix)
                && let Some(&first) = seen.get(&hit.stamp.id())
            {
                out.diagnostics.push(
                    Finding::note(
                        Code::SameFile,
                        format!(
                            "the same SKILL.md as {}, which is loaded from there",
                            hits[first].1.file().display()
                        ),
                        "nothing to do, unless you meant to have two different skills",
                    )
                    .at(hit.file()),
                );
                out.also_found.push(AlsoFound {
                    file: hits[first].1.file(),
                    root: index,
                });
                out.dirs.other_skill_dirs.push(hit.dir);
                continue;
            }
            seen.insert(hit.stamp.id(), hits.len());
            hits.push((index, hit));
        }
    }
    hits
}

/// Why a skill folder's path cannot be served, if it cannot: the path is
/// shown to the model (`Base directory:`) and in one-line listings, so it must
/// be UTF-8 without control characters (a line break would forge a line).
fn unusable_path(dir: &Path) -> Option<Finding> {
    let problem = match dir.to_str() {
        None => "is not valid UTF-8",
        Some(text) if text.chars().any(char::is_control) => {
            "holds a control character (a line break, say)"
        }
        Some(_) => return None,
    };
    Some(Finding::error(
        Code::PathUnusable,
        format!("the skill's path {problem}, so the skill is skipped"),
        "rename the folder (or the folders above it) with plain UTF-8 text",
    ))
}

/// Step 2: reuse the parse of every unchanged file; parse the others. Each
/// skill folder comes with its path as the cache held it when it did (so
/// that the snapshot, the cache and the watcher keep sharing one copy), or
/// as a new shared path.
fn parse_all(
    roots: &[Root],
    hits: &[(usize, Hit)],
    max_file_bytes: u64,
    cache: &mut Cache,
    files_parsed: &mut usize,
) -> Vec<(Arc<Path>, Parse)> {
    let mut outcomes: Vec<(Arc<Path>, Option<Parse>)> = hits
        .iter()
        .map(|(index, hit)| {
            let Some((key, cached)) = cache
                .entries
                .remove_entry(hit.dir.as_os_str().as_encoded_bytes())
            else {
                return (Arc::from(hit.dir.as_path()), None);
            };
            let still_valid = cached.stamp == hit.stamp
                && cached.file_name == hit.file_name
                && match &cached.outcome {
                    // A name taken from the folder (or plugin) depends on more
                    // than the file.
                    Ok(parsed) => {
                        !parsed.name_from.is_fallback()
                            || *parsed.name == *fallback_name(&roots[*index], &hit.dir)
                    }
                    Err(err) => !err.is_passing(),
                };
            // A mark is only for a folder outside any fence: a folder served
            // as a custom root before may be a project's now.
            let lone = cached.lone.filter(|_| roots[*index].fence.is_none());
            (key.0, still_valid.then_some((cached.outcome, lone)))
        })
        .collect();
    let todo: Vec<usize> = (0..hits.len())
        .filter(|&i| outcomes[i].1.is_none())
        .collect();
    *files_parsed = todo.len();
    let parse_one = |i: usize| {
        let (index, hit) = &hits[i];
        let root = &roots[*index];
        let fallback = fallback_name(root, &hit.dir);
        // Through the gate: in a project, a SKILL.md swapped for a symlink
        // out of the repository since the walk saw it is not read.
        let place = Place {
            dir: &hit.dir,
            file_name: hit.file_name.as_str(),
            fence: root.fence.as_deref(),
            hidden: root.source.hidden(),
        };
        let outcome = gate::open_own(place)
            .map_err(ParseError::from)
            .and_then(|opened| {
                if root.probed.is_some() && opened.stamp() != hit.stamp {
                    return Err(changed_since_verified());
                }
                let len = opened.len();
                parse::read_frontmatter_from(opened.into_file(), len, &fallback, max_file_bytes)
            })
            .map(Arc::new)
            .map_err(Arc::new);
        let lone = outcome.as_ref().ok().and_then(|_| Lone::of(place));
        (outcome, lone)
    };
    for (i, outcome) in in_parallel(&todo, parse_one) {
        outcomes[i].1 = Some(outcome);
    }
    outcomes
        .into_iter()
        .map(|(dir, o)| (dir, o.expect("every file was parsed or found in the cache")))
        .collect()
}

/// An installed skill's `SKILL.md` that is not the version recorded when
/// its store entry was last hashed: not served until it is hashed again,
/// which the refresh after start-up does.
fn changed_since_verified() -> ParseError {
    ParseError::Invalid(Finding::error(
        Code::StoreTampered,
        "this installed skill's SKILL.md changed in the store since its files were last checked; it is not served until they are checked again",
        "wait for the next refresh, or run `skillserve check`",
    ))
}

/// Step 3: the skills and diagnostics in precedence order, and the new cache.
fn assemble(
    roots: &[Root],
    hits: Vec<(usize, Hit)>,
    outcomes: Vec<(Arc<Path>, Parse)>,
    cache: &mut Cache,
    out: &mut Scan,
) {
    out.per_root = vec![0; roots.len()];
    out.skills.reserve(hits.len());
    let mut next_cache = HashMap::with_capacity(hits.len());
    for ((index, hit), (dir, (outcome, lone))) in hits.into_iter().zip(outcomes) {
        match &outcome {
            Ok(parsed) => {
                if !parsed.findings().is_empty() {
                    let file = hit.file();
                    out.diagnostics
                        .extend(parsed.findings().iter().map(|f| f.clone().at(&file)));
                }
                out.skills.push(Found {
                    dir: Arc::clone(&dir),
                    file_name: hit.file_name,
                    root: index,
                    parsed: Arc::clone(parsed),
                    lone,
                });
                out.per_root[index] += 1;
            }
            // Deleted or renamed between the walk and the read: not a
            // problem of the file, and the next scan will not find it.
            Err(err) if matches!(&**err, ParseError::Read(read) if read.is_gone()) => {
                tracing::debug!("{} vanished during the scan", hit.file().display());
                continue;
            }
            Err(err) => {
                let diagnostic = err.finding().at(hit.file());
                out.diagnostics.push(diagnostic.clone());
                out.failed.push(Failed {
                    dir: hit.dir.clone(),
                    root: index,
                    diagnostic,
                });
                out.dirs.other_skill_dirs.push(hit.dir);
            }
        }
        let cached = Cached {
            file_name: hit.file_name,
            stamp: hit.stamp,
            outcome,
            lone,
        };
        next_cache.insert(PathKey(dir), cached);
    }
    cache.entries = next_cache;
}

/// Below this many items, threads cost more than they save.
const PARALLEL_FROM: usize = 128;

/// `work(i)` for every index in `todo`, on up to [`parallel::threads`]
/// threads when there are enough of them (measured: the start-up scan of
/// 10,000 skills on two cores went from about 190 ms to about 120 ms).
fn in_parallel<R, F>(todo: &[usize], work: F) -> Vec<(usize, R)>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
{
    let run = |part: &[usize]| part.iter().map(|&i| (i, work(i))).collect::<Vec<_>>();
    if todo.len() < PARALLEL_FROM {
        return run(todo);
    }
    let mut done = Vec::with_capacity(todo.len());
    for part in parallel::chunks(todo, parallel::threads(), |part, _| run(part)) {
        done.extend(part);
    }
    done
}

/// The name of a skill whose frontmatter has none: its folder's name, or for
/// a single-skill plugin (whose folder is a version folder) the plugin's, or
/// for an installed skill (whose folder is its digest) its folder's in its
/// source.
fn fallback_name(root: &Root, dir: &Path) -> String {
    if let Some(origin) = &root.origin {
        return origin.folder.clone();
    }
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
    file_name: SkillFile,
    stamp: Stamp,
}

impl Hit {
    fn file(&self) -> PathBuf {
        self.dir.join(self.file_name.as_str())
    }
}

/// A directory waiting to be read, with the identities of the directories on
/// the path to it (a symlink to any of them would be a cycle).
struct Frame {
    path: PathBuf,
    depth: usize,
    ancestors: Vec<FileId>,
}

/// What walking one root found.
#[derive(Default)]
struct Walked {
    hits: Vec<Hit>,
    diagnostics: Vec<Diagnostic>,
    listed: Vec<PathBuf>,
    other_skill_dirs: Vec<PathBuf>,
    /// Skill folders with a `SKILL.md` that cannot be used.
    failed: Vec<(PathBuf, Diagnostic)>,
    links: Vec<(PathBuf, Option<Stamp>)>,
    hidden: Vec<PathBuf>,
    /// The root does not exist.
    missing: bool,
}

/// Walks one root: depth first, in name order, one frame per directory.
struct Walker<'a> {
    root: &'a Root,
    /// No symlink may lead out of this repository (project roots).
    fence: Option<&'a Fence>,
    out: Walked,
    dirs_read: usize,
    /// Folders at the depth limit without a `SKILL.md`: not searched deeper.
    at_depth_limit: Vec<PathBuf>,
}

impl<'a> Walker<'a> {
    fn walk(root: &'a Root) -> Walked {
        let mut walker = Walker {
            root,
            fence: root.fence.as_deref(),
            out: Walked::default(),
            dirs_read: 0,
            at_depth_limit: Vec::new(),
        };
        if let Some(first) = walker.start() {
            let mut stack = vec![first];
            while let Some(frame) = stack.pop() {
                if walker.dirs_read == MAX_DIRS {
                    walker.report_walk_limit();
                    break;
                }
                let deeper = walker.visit(frame);
                // Reversed so that popping the stack visits folders in name order.
                stack.extend(deeper.into_iter().rev());
            }
            walker.report_depth_limit();
        }
        walker.out
    }

    /// Checks the root itself; returns the first frame of the walk, or `None`
    /// when there is nothing (more) to walk.
    fn start(&mut self) -> Option<Frame> {
        let root = self.root;
        if let Some((file, stamp)) = &root.probed {
            let name = file.file_name();
            let file_name = SkillFile::ALL
                .into_iter()
                .find(|f| name == Some(std::ffi::OsStr::new(f.as_str())))
                .unwrap_or(SkillFile::Upper);
            self.out.hits.push(Hit {
                dir: root.path.clone(),
                file_name,
                stamp: *stamp,
            });
            return None;
        }
        // Before reading anything: whether a project root that leads out of
        // the repository exists out there is none of the model's business.
        if let Some(fence) = self.fence
            && let Err(outside) = contained(&root.path, fence)
        {
            self.out.diagnostics.push(outside);
            return None;
        }
        let meta = match fs::metadata(&root.path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                self.root_missing();
                return None;
            }
            Err(err) => {
                let finding = if disk::is_loop(&err) {
                    symlink_loop()
                } else {
                    Finding::error(
                        Code::RootUnreadable,
                        format!("cannot read this {} skills folder: {err}", root.source),
                        "check its permissions",
                    )
                };
                self.out.diagnostics.push(finding.at(&root.path));
                return None;
            }
        };
        if !meta.is_dir() {
            self.out.diagnostics.push(
                Finding::error(
                    Code::RootNotADirectory,
                    format!(
                        "this {} skills location is a file, not a folder",
                        root.source
                    ),
                    "remove the file, or make it a folder of skill folders",
                )
                .at(&root.path),
            );
            return None;
        }
        if root.layout != Layout::Folders {
            let Probed { probe: found, link } = probe(&root.path, None, self.fence);
            self.out.links.extend(link);
            match found {
                Probe::Skill(file_name, stamp) => {
                    self.out.hits.push(Hit {
                        dir: root.path.clone(),
                        file_name,
                        stamp,
                    });
                    return None;
                }
                Probe::Broken(diagnostic) => {
                    self.broken(root.path.clone(), diagnostic);
                    return None;
                }
                Probe::NotSkill if root.layout == Layout::Skill => {
                    self.out.diagnostics.push(
                        Finding::warning(
                            Code::SkillMissing,
                            "this folder was expected to be a skill but holds no SKILL.md",
                            "reinstall the plugin, or add the SKILL.md",
                        )
                        .at(&root.path),
                    );
                    return None;
                }
                Probe::NotSkill => {}
            }
        }
        Some(Frame {
            path: root.path.clone(),
            depth: 0,
            ancestors: vec![FileId::of(&meta)],
        })
    }

    /// A root that does not exist: normal for project and user folders, but a
    /// path someone named explicitly (a flag, a plugin manifest) is probably a
    /// mistake.
    fn root_missing(&mut self) {
        let root = self.root;
        self.out.missing = true;
        if root.layout == Layout::Folders {
            return;
        }
        let hint = match root.source {
            Source::Custom => "check the path given to --skills-dir or SKILLSERVE_SKILLS_DIRS",
            _ => "fix the skill path in the plugin's manifest, or reinstall the plugin",
        };
        self.out.diagnostics.push(
            Finding::warning(
                Code::RootMissing,
                "this skills path does not exist (yet)",
                hint,
            )
            .at(&root.path),
        );
    }

    /// Reads one directory: its skill folders become hits, broken ones
    /// diagnostics, the others frames to visit (returned in name order).
    fn visit(&mut self, frame: Frame) -> Vec<Frame> {
        self.dirs_read += 1;
        self.out.listed.push(frame.path.clone());
        let children = match read_children(&frame, self.fence, &mut self.out) {
            Ok(children) => children,
            // Deleted since its parent was listed.
            Err(err) if disk::is_gone(&err) => return Vec::new(),
            Err(err) => {
                self.out.diagnostics.push(unlistable(&err).at(&frame.path));
                return Vec::new();
            }
        };
        let depth = frame.depth + 1;
        let mut deeper = Vec::new();
        let probes = probe_all(&frame, &children, self.fence);
        for ((path, id), Probed { probe: found, link }) in children.into_iter().zip(probes) {
            if cfg!(unix) && frame.ancestors.contains(&id) {
                self.out.diagnostics.push(symlink_loop().at(&path));
                continue;
            }
            self.out.links.extend(link);
            match found {
                Probe::Skill(file_name, stamp) => self.out.hits.push(Hit {
                    dir: path,
                    file_name,
                    stamp,
                }),
                Probe::Broken(diagnostic) => self.broken(path, diagnostic),
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
                    self.out.other_skill_dirs.push(path.clone());
                    self.at_depth_limit.push(path);
                }
            }
        }
        deeper
    }

    /// A skill folder whose `SKILL.md` cannot be used: reported, watched for
    /// a fix, and remembered so that a call naming it says what is wrong.
    fn broken(&mut self, dir: PathBuf, diagnostic: Diagnostic) {
        self.out.diagnostics.push(diagnostic.clone());
        self.out.failed.push((dir.clone(), diagnostic));
        self.out.other_skill_dirs.push(dir);
    }

    fn report_walk_limit(&mut self) {
        self.out.diagnostics.push(
            Finding::warning(
                Code::WalkLimit,
                format!(
                    "stopped after reading {MAX_DIRS} folders; skills further on were not loaded"
                ),
                "keep only skill folders here, or point --skills-dir at a narrower folder",
            )
            .at(&self.root.path),
        );
    }

    /// Folders at the depth limit without a `SKILL.md` may hide deeper skills:
    /// name the first few, so that a skill nested too deeply is not a mystery.
    fn report_depth_limit(&mut self) {
        const NAMED: usize = 3;
        let hint = format!("keep skill folders at most {MAX_DEPTH} levels below the skills folder");
        for dir in self.at_depth_limit.iter().take(NAMED) {
            self.out.diagnostics.push(
                Finding::note(
                    Code::DepthLimit,
                    format!("this folder is {MAX_DEPTH} levels down and holds no SKILL.md; folders below it are not searched"),
                    hint.clone(),
                )
                .at(dir),
            );
        }
        if self.at_depth_limit.len() > NAMED {
            self.out.diagnostics.push(
                Finding::note(
                    Code::DepthLimit,
                    format!(
                        "{} more folders {MAX_DEPTH} levels down were not searched deeper",
                        self.at_depth_limit.len() - NAMED
                    ),
                    hint,
                )
                .at(&self.root.path),
            );
        }
    }
}

/// From this many children on, a folder is opened to look them up relative
/// to it.
const PARENT_FROM: usize = 8;

/// [`probe`] of every child of `frame`, in order. One `stat` per child; a
/// folder of thousands of skills spreads them over threads (the rescan of an
/// unchanged 10,000-skill tree is mostly these).
fn probe_all(frame: &Frame, children: &[(PathBuf, FileId)], fence: Option<&Fence>) -> Vec<Probed> {
    // Worth an extra open only when there are children to look up.
    let parent = if children.len() >= PARENT_FROM {
        Parent::open(&frame.path)
    } else {
        None
    };
    let every: Vec<usize> = (0..children.len()).collect();
    let mut probes = in_parallel(&every, |i| probe(&children[i].0, parent.as_ref(), fence));
    probes.sort_unstable_by_key(|(i, _)| *i);
    probes.into_iter().map(|(_, probed)| probed).collect()
}

/// What a directory turned out to be, and whether its `SKILL.md` is a
/// symlink (with what it led to: see [`Dirs::links`]).
struct Probed {
    probe: Probe,
    link: Option<(PathBuf, Option<Stamp>)>,
}

/// What a directory turned out to be.
enum Probe {
    Skill(SkillFile, Stamp),
    /// It has a `SKILL.md` that cannot be used; it is still a skill folder, so
    /// the walk does not look inside it.
    Broken(Diagnostic),
    NotSkill,
}

/// Whether `dir` holds a usable `SKILL.md` (or `skill.md`). With `parent`,
/// an open handle on `dir`'s parent, the files are looked up relative to it.
///
/// Each name costs one `lstat` when it is absent, as it is in every folder
/// that is not a skill; a symlink is then followed with a `stat` (and, with a
/// `fence`, resolved to check that it stays inside).
fn probe(dir: &Path, parent: Option<&Parent>, fence: Option<&Fence>) -> Probed {
    for file_name in SkillFile::ALL {
        let name = file_name.as_str();
        let file = dir.join(name);
        let mut link = None;
        let status = match lookup(dir, parent, name, false) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Ok((Kind::Symlink, _)) => {
                // Before following it: where a project's link out of the
                // repository leads is not looked at (and, not followed, it
                // has no target to check at the interval).
                if let Some(fence) = fence
                    && let Err(outside) = contained(&file, fence)
                {
                    return Probed {
                        probe: Probe::Broken(outside),
                        link,
                    };
                }
                let followed = lookup(dir, parent, name, true);
                link = Some((
                    file.clone(),
                    followed.as_ref().ok().map(|(_, stamp)| *stamp),
                ));
                match followed {
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {
                        return Probed {
                            probe: Probe::Broken(dangling(&file, Severity::Error, fence.is_some())),
                            link,
                        };
                    }
                    followed => followed,
                }
            }
            other => other,
        };
        let probe = match status {
            Ok((Kind::File, stamp)) => Probe::Skill(file_name, stamp),
            // The folder went away since it was listed.
            Err(err) if disk::is_gone(&err) => Probe::NotSkill,
            Ok(_) => Probe::Broken(ReadError::NotRegular.finding().at(file)),
            Err(err) if disk::is_loop(&err) => Probe::Broken(symlink_loop().at(file)),
            Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
                Probe::Broken(unlistable(&err).at(dir))
            }
            Err(err) => Probe::Broken(ReadError::Io(err).finding().at(file)),
        };
        return Probed { probe, link };
    }
    Probed {
        probe: Probe::NotSkill,
        link: None,
    }
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
        let stamp = Stamp::of_stat(&st);
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
/// `SKILL.md` (a skill is lost), a warning for a folder. In a project
/// (`fenced`) the target is not named: a model may read the diagnostic, and
/// a repository must learn nothing about the machine from it.
fn dangling(link: &Path, severity: Severity, fenced: bool) -> Diagnostic {
    let message = if fenced {
        "symlink to something that does not exist".to_owned()
    } else {
        let target = fs::read_link(link).unwrap_or_default();
        format!("symlink to {}, which does not exist", target.display())
    };
    Finding::new(
        severity,
        Code::DanglingSymlink,
        message,
        "fix or remove the symlink",
    )
    .at(link)
}

/// A warning when `entry`, a regular file where a skill folder could be,
/// is what git writes for a symbolic link to a skill folder with
/// `core.symlinks` false (on Windows by default): a file of a few bytes
/// holding a relative path ([`parse::link_as_text`]) to a folder with a
/// `SKILL.md`. Only names a skill folder may have (no `.`) are read, and a
/// project's target is looked at only inside the repository.
fn folder_link_as_text(entry: &fs::DirEntry, fence: Option<&Fence>) -> Option<Diagnostic> {
    const MAX: u64 = 1024;
    if entry.file_name().as_encoded_bytes().contains(&b'.') {
        return None;
    }
    let len = entry.metadata().ok()?.len();
    if len > MAX {
        return None;
    }
    let path = entry.path();
    let bytes = disk::read_bytes(&path, MAX).ok()?;
    let target = crate::parse::link_as_text(std::str::from_utf8(&bytes).ok()?)?;
    let folder = path.parent()?.join(target);
    if let Some(fence) = fence {
        contained(&folder, fence).ok()?;
    }
    SkillFile::ALL
        .iter()
        .any(|file| folder.join(file.as_str()).is_file())
        .then(|| {
            Finding::warning(
                Code::SymlinkAsText,
                format!(
                    "this {len}-byte file holds `{target}`, a skill folder: a symbolic link that git checked out as a text file (`core.symlinks` is false, as on Windows by default), so no skill is served from here"
                ),
                crate::parse::LINK_AS_TEXT_FIX,
            )
            .at(&path)
        })
}

fn symlink_loop() -> Finding {
    Finding::warning(
        Code::SymlinkLoop,
        "symlink loop: the link points back to a folder that contains it",
        "remove the link or point it somewhere else",
    )
}

/// `Err` with the diagnostic that says a symlink is not followed when
/// `path` leads out of the repository: asked of the gate, which walks it
/// beneath the repository and never looks outside, so the answer is the
/// same whether or not the place out there exists. A path missing inside
/// the repository is not this function's business.
fn contained(path: &Path, fence: &Fence) -> Result<(), Diagnostic> {
    match gate::open_in_project(fence, path) {
        Err(gate::FileError::OutsideProject) => Err(Finding::warning(
            Code::SymlinkOutsideProject,
            "a symlink leads outside the project; it is not followed",
            "project skills may only link inside their repository: copy the files in, or keep the skill in your own skills folder",
        )
        .at(path)),
        _ => Ok(()),
    }
}

fn unlistable(err: &io::Error) -> Finding {
    Finding::warning(
        Code::DirUnreadable,
        format!("cannot look inside this folder: {err}"),
        "check its permissions (skillserve needs to read and enter it)",
    )
}

/// Whether the walk skips a folder entry: hidden (`.git`, `.DS_Store`,
/// editors' swap files) or `node_modules`. The watcher ignores the same.
pub fn is_skipped(name: &std::ffi::OsStr) -> bool {
    disk::is_private(name.as_encoded_bytes())
}

/// Whether a skipped entry is a hidden folder that may hold skills (as
/// `openai/skills` keeps its own in `.curated/` and `.system/`): not `.git`,
/// whose objects are never skills.
fn is_hidden_folder(name: &std::ffi::OsStr, entry: &fs::DirEntry) -> bool {
    let name = name.as_encoded_bytes();
    name.starts_with(b".")
        && name != b".git"
        && entry
            .file_type()
            .is_ok_and(|kind| kind.is_dir() || (kind.is_symlink() && entry.path().is_dir()))
}

/// A note for each of the `hidden` folders of a scan of `roots` that holds
/// skills, saying how many and how to serve them. Each folder is walked as a
/// skills folder of its own, with the walk's rules and bounds: this is for
/// `list` and `check`, which a person runs; the server never pays for it.
pub fn hidden_skills(roots: &[Root], hidden: &[(PathBuf, usize)]) -> Vec<Diagnostic> {
    let mut notes = Vec::new();
    let mut hidden: Vec<&(PathBuf, usize)> = hidden.iter().collect();
    hidden.sort();
    for (dir, index) in hidden {
        let mut root = roots[*index].clone();
        root.path = dir.clone();
        root.layout = Layout::Folders;
        let walked = Walker::walk(&root);
        let count = walked.hits.len() + walked.failed.len();
        if count == 0 {
            continue;
        }
        let (files, are, them) = if count == 1 {
            ("file", "is", "it")
        } else {
            ("files", "are", "them")
        };
        notes.push(
            Finding::note(
                Code::HiddenSkills,
                format!("{count} SKILL.md {files} below this hidden folder {are} not served: the scan skips hidden folders"),
                format!("to serve {them}, pass --skills-dir {}", dir.display()),
            )
            .at(dir),
        );
    }
    notes
}

/// The sub-directories of `frame` worth visiting, sorted by name, each with
/// its identity. Symlinks to directories are followed (with a `fence`, only
/// when they stay inside it); broken ones reported.
fn read_children(
    frame: &Frame,
    fence: Option<&Fence>,
    out: &mut Walked,
) -> io::Result<Vec<(PathBuf, FileId)>> {
    let diagnostics = &mut out.diagnostics;
    let parent = frame.ancestors.last().copied().unwrap_or_default();
    let mut children = Vec::new();
    for entry in fs::read_dir(&frame.path)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        if is_skipped(&name) {
            // Counted by `list` and `check` only (`hidden_skills`): a name
            // and, rarely, a type check here.
            if is_hidden_folder(&name, &entry) {
                out.hidden.push(entry.path());
            }
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            children.push((path, FileId::of_entry(&entry, parent)));
        } else if kind.is_file() {
            diagnostics.extend(folder_link_as_text(&entry, fence));
        } else if kind.is_symlink() {
            if let Some(fence) = fence
                && let Err(outside) = contained(&path, fence)
            {
                diagnostics.push(outside);
                continue;
            }
            match fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => children.push((path, FileId::of(&meta))),
                Ok(_) => {}
                Err(err) if disk::is_loop(&err) => diagnostics.push(symlink_loop().at(&path)),
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    diagnostics.push(dangling(&path, Severity::Warning, fence.is_some()));
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

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    /// An installed root is taken at its recorded `SKILL.md` version; a file
    /// with another version is refused, not served.
    #[test]
    fn a_probed_skill_md_of_another_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("SKILL.md");
        fs::write(&file, "---\nname: pdf\ndescription: Fill forms.\n---\n").unwrap();
        let stamp = Stamp::of(&fs::metadata(&file).unwrap());
        let probed = |stamp: Stamp| {
            let mut root = Root::new(dir.path().to_path_buf(), Source::Installed, Layout::Skill);
            root.probed = Some((file.clone(), stamp));
            root
        };
        let scan = scan(&[probed(stamp)], 1 << 20, &mut Cache::default());
        assert_eq!(scan.skills.len(), 1);

        fs::write(&file, "---\nname: pdf\ndescription: Something else.\n---\n").unwrap();
        let scan = super::scan(&[probed(stamp)], 1 << 20, &mut Cache::default());
        assert!(scan.skills.is_empty());
        assert!(
            scan.diagnostics
                .iter()
                .any(|d| d.code == Code::StoreTampered && d.path == file),
            "{:?}",
            scan.diagnostics
        );
    }

    /// A folder deleted (or replaced by a file) between being listed and
    /// being read is no problem of the user's: no diagnostic, no
    /// "permissions" advice. (Unreadable folders are tested as an
    /// unprivileged user in the integration tests.)
    #[test]
    fn a_folder_that_vanished_during_the_walk_is_skipped_quietly() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path().to_path_buf(), Source::User, Layout::Folders);
        let mut walker = Walker {
            root: &root,
            fence: None,
            out: Walked::default(),
            dirs_read: 0,
            at_depth_limit: Vec::new(),
        };
        let gone = dir.path().join("gone");
        let now_a_file = dir.path().join("now-a-file");
        std::fs::write(&now_a_file, "x").unwrap();
        for path in [gone, now_a_file] {
            let frame = Frame {
                path,
                depth: 1,
                ancestors: vec![FileId::default()],
            };
            assert!(walker.visit(frame).is_empty());
        }
        assert!(
            walker.out.diagnostics.is_empty(),
            "{:?}",
            walker.out.diagnostics
        );
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
        let names: Vec<&str> = scan.skills.iter().map(|f| f.parsed.name.as_ref()).collect();
        assert_eq!(names, ["a", "b", "inner"]);
        assert_eq!(scan.files_parsed, 3);
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
            &*scan(&[root("foo")], 1 << 20, &mut cache).skills[0]
                .parsed
                .name,
            "foo"
        );
        assert_eq!(
            &*scan(&[root("bar")], 1 << 20, &mut cache).skills[0]
                .parsed
                .name,
            "bar"
        );
    }

    /// One per skill found: what it gained (`lone`) sits in its padding.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_cache_entry_is_72_bytes() {
        assert_eq!(std::mem::size_of::<Cached>(), 72);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_one_file_skill_is_lone_in_the_users_folders_only() {
        let dir = tempfile::tempdir().unwrap();
        for (skill, files) in [
            ("one", &["SKILL.md"][..]),
            ("two", &["SKILL.md", "notes.md"]),
        ] {
            std::fs::create_dir(dir.path().join(skill)).unwrap();
            for file in files {
                std::fs::write(
                    dir.path().join(skill).join(file),
                    "---\ndescription: d\n---\n",
                )
                .unwrap();
            }
        }
        let settle = |skill: &str| crate::listing::tests::settle(&dir.path().join(skill));
        settle("one");
        settle("two");
        let user = [Root::new(
            dir.path().to_path_buf(),
            Source::User,
            Layout::Folders,
        )];
        let mut cache = Cache::default();
        let lone = |scan: &Scan| -> Vec<(String, bool)> {
            scan.skills
                .iter()
                .map(|found| (folder_name(&found.dir), found.lone.is_some()))
                .collect()
        };
        let first = scan(&user, 1 << 20, &mut cache);
        assert_eq!(lone(&first), [("one".into(), true), ("two".into(), false)]);
        // Kept with the parse while the file is unchanged (the call checks
        // the folder), found again when the file is parsed again.
        std::fs::write(dir.path().join("one/notes.md"), "n").unwrap();
        settle("one");
        let again = scan(&user, 1 << 20, &mut cache);
        assert_eq!(again.files_parsed, 0);
        assert_eq!(again.skills[0].lone, first.skills[0].lone);
        assert!(!again.skills[0].lone.unwrap().holds(&again.skills[0].dir));
        std::fs::write(
            dir.path().join("one/SKILL.md"),
            "---\ndescription: e\n---\n",
        )
        .unwrap();
        assert_eq!(
            lone(&scan(&user, 1 << 20, &mut cache))[0],
            ("one".into(), false)
        );
        // A project's folders are not looked at by path, and a mark the
        // cache kept from when the folder was served as the user's is not
        // carried into a project.
        std::fs::remove_file(dir.path().join("one/notes.md")).unwrap();
        std::fs::write(
            dir.path().join("one/SKILL.md"),
            "---\ndescription: f\n---\n",
        )
        .unwrap();
        settle("one");
        assert_eq!(
            lone(&scan(&user, 1 << 20, &mut cache))[0],
            ("one".into(), true)
        );
        let mut project = Root::new(dir.path().to_path_buf(), Source::Project, Layout::Folders);
        project.fence = Some(Arc::new(Fence::new(dir.path())));
        let fenced = scan(&[project], 1 << 20, &mut cache);
        assert_eq!(fenced.files_parsed, 0);
        assert_eq!(
            lone(&fenced),
            [("one".into(), false), ("two".into(), false)]
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
        assert_eq!(&*again.skills[0].parsed.description, "changed");
    }
}
