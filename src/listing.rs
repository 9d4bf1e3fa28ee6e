//! A skill's files as a listing (behaviour.md §9): every regular file below
//! the skill folder, found by a bounded walk through the [`Gate`], and the
//! paths like one that was not found.
//!
//! Every folder is opened through the gate and read through that handle;
//! every symlink is followed by the gate's rules (inside the skill, to
//! nothing hidden), so a listing names nothing a call would refuse.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::num::NonZeroU32;
use std::path::Path;

use crate::disk::{self, FileId, Stamp};
use crate::gate::{Entry as Found, Gate, Kind, Opened, Place};
use crate::spec;

/// Folders deeper than this below the skill folder are not listed.
pub const MAX_DEPTH: usize = 16;
/// A listing reads at most this many folders, so that a hostile tree (a
/// symlink maze that stays inside the skill) cannot make it slow.
pub const MAX_DIRS: usize = 4096;
/// A "not found" answer suggests at most this many paths.
pub const MAX_SUGGESTIONS: usize = 5;

/// One file of a skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Relative to the skill folder, `/`-separated, UTF-8 without control
    /// characters.
    pub path: String,
    /// When it was listed (see `Files::listing`).
    pub size: u64,
}

/// A skill folder that held its `SKILL.md` and nothing else when the scan
/// read it: a fingerprint of the folder's [`Stamp`] then. While the folder's
/// stamp is the same, no entry was added, removed or renamed in it, so it
/// holds no other file, and a call has no files block to list: one `stat`
/// answers what a walk would (open, list twice, `stat` the file, close),
/// most of a first call's cost for the many skills that are one file.
///
/// 32 bits, so that it fits in the padding of the records that keep it (a
/// skill and the scan's cache entry stay 56 and 72 bytes: nothing more to
/// hold at 100,000 skills). A folder that changes to a version of the same
/// fingerprint (one chance in four billion) is taken for lone until it
/// changes again: its files block misses what was added, nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lone(NonZeroU32);

impl Lone {
    /// The skill folder at `place`, when its `SKILL.md` is its only entry;
    /// `None` for a project's skill too (its folder is opened beneath the
    /// repository, and a check by path would not be that), off Linux (see
    /// [`Gate::root`]), and for a folder changed less than [`SETTLED`] ago.
    /// The folder's stamp is taken when it is opened, before it is listed:
    /// an entry added meanwhile is either listed (not lone) or changes the
    /// stamp after it.
    pub fn of(place: Place) -> Option<Lone> {
        if place.fence.is_some() {
            return None;
        }
        let now = std::time::SystemTime::now();
        let gate = Gate::open(place).ok()?;
        let root = gate.root()?;
        let settled = root
            .metadata()
            .modified()
            .is_ok_and(|modified| modified + SETTLED <= now);
        if !settled {
            return None;
        }
        let stamp = root.stamp();
        let names = root.names().ok()?;
        (names.len() == 1 && names[0] == place.file_name).then(|| Lone::from(stamp))
    }

    /// Whether the folder `dir` is as it was: still holding its `SKILL.md`
    /// alone.
    pub fn holds(self, dir: &Path) -> bool {
        std::fs::metadata(dir).is_ok_and(|meta| Lone::from(Stamp::of(&meta)) == self)
    }
}

impl From<Stamp> for Lone {
    fn from(stamp: Stamp) -> Lone {
        let mut hasher = DefaultHasher::new();
        stamp.hash(&mut hasher);
        let hash = hasher.finish();
        let folded = (hash ^ (hash >> 32)) as u32;
        Lone(NonZeroU32::new(folded).unwrap_or(NonZeroU32::MIN))
    }
}

/// A folder whose last change is more recent than this is not marked
/// [`Lone`]: where times are coarse (a clock tick on kernels before 6.13,
/// two seconds on FAT), an entry added in the same tick as the change before
/// it would leave the folder's stamp as it was, and the mark would hold. A
/// change after a settled one always moves the time.
pub const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

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

/// What a walk saw: the listing, and the version of every folder it read and
/// of the folder of every symlinked file's target (a folder's version changes
/// when an entry in it is added, removed or renamed).
#[derive(Default)]
pub struct Walked {
    pub listing: Listing,
    /// Relative to the skill folder ("" for the skill folder itself).
    pub dirs: Vec<(Box<Path>, Stamp)>,
    /// What the walk passed over other than by rule (hidden entries,
    /// `node_modules` and version-control metadata are left out by rule):
    /// what `add` names, so that an installed skill is never missing a
    /// file without a word. At most [`MAX_LEFT_OUT`], in the walk's order.
    pub left_out: Vec<LeftOut>,
}

/// An entry a walk passed over, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// Relative to the skill folder (a name that is not UTF-8 with `�` in
    /// place of what is not).
    pub path: String,
    /// Why, completing "…, so it is not installed".
    pub why: &'static str,
}

/// Entries a walk names as left out at most.
pub const MAX_LEFT_OUT: usize = 100;

impl Walked {
    fn leave_out(&mut self, folder: &str, name: &str, why: &'static str) {
        if self.left_out.len() < MAX_LEFT_OUT {
            let path = match folder.is_empty() {
                true => name.to_owned(),
                false => format!("{folder}/{name}"),
            };
            self.left_out.push(LeftOut { path, why });
        }
    }
}

/// Why the gate refused a symlink, as [`LeftOut::why`] says it.
fn refused_link(refused: &crate::gate::FileError) -> &'static str {
    use crate::gate::FileError;
    match refused {
        FileError::Outside => "a symlink that leads outside the skill's folder",
        FileError::OutsideProject => "a symlink that leads outside the project",
        FileError::HiddenTarget => {
            "a symlink to a hidden file or folder or `node_modules`, which are not served"
        }
        FileError::NotFound { .. } => "a symlink to nothing (its target does not exist)",
        FileError::NotRegular => "a symlink to a FIFO, socket or device",
        _ => "a symlink that cannot be followed (a loop, or a target that cannot be read)",
    }
}

/// A folder waiting to be read.
struct Frame {
    /// Relative to the skill folder ("" for the skill folder itself).
    rel: String,
    folder: Reach,
    /// The identities of the folders from the skill folder down to the one
    /// above this one (so as many as its depth): this folder being any of
    /// them would be a cycle.
    ancestors: Vec<FileId>,
}

/// How a folder waiting to be read is opened.
enum Reach {
    /// The skill folder: through the gate's own handle.
    Root,
    /// Open already (the start of a walk below the skill folder).
    Open(Box<Opened>),
    /// Opened when its turn comes, so that a wide tree holds few handles.
    Later,
}

/// The files below the folder `folder` (a cleaned relative path; "" for the
/// whole skill) of the skill the gate opened, paths relative to the skill
/// folder, with the walk's bounds counted from `folder`: a walk that reads
/// folder entries and their metadata, never file contents.
///
/// Breadth first, each folder in name order, so that when a bound stops it
/// the files nearest the top are the ones listed. Skipped: hidden entries
/// (names starting with `.`) and `node_modules` (in any case) — in an
/// installed source only version-control metadata and `node_modules`
/// ([`Scope::skips`]) —, names that are
/// not UTF-8 or hold a control character, anything that is neither a regular
/// file nor a folder, symlinks the gate refuses (dangling, looping, leading
/// outside the skill folder or to a hidden entry), and symlinks to a folder
/// on the path to themselves.
pub fn walk(gate: &Gate, folder: &str) -> Walked {
    walk_in(gate, folder, Scope::Served)
}

/// Which files a walk lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// What is served (behaviour.md §9): hidden entries and `node_modules`
    /// are not part of a skill.
    #[default]
    Served,
    /// What the security scan reads: every file the skill folder holds,
    /// hidden ones too (a `SKILL.md` can tell the model to run
    /// `.setup/install.sh` from the `Base directory`), but for
    /// version-control metadata and `node_modules` (see [`Scope::skips`]).
    Scanned,
}

impl Scope {
    /// Whether an entry named `name` is left out of a listing of `gate`'s
    /// skill.
    ///
    /// What is served leaves out what the skill's place refuses
    /// ([`Hidden`](crate::gate::Hidden)): hidden names and `node_modules`
    /// in the user's and projects' folders, only version-control metadata
    /// and `node_modules` in an installed source. The scan leaves out
    /// `.git`, `.hg` and `.svn` (a repository's own records, which no skill
    /// runs) and `node_modules` (what a package manager installed there,
    /// thousands of files that would stop every listing at its bounds);
    /// everything else hidden is read.
    pub fn skips(self, gate: &Gate, name: &str) -> bool {
        match self {
            Scope::Served => gate.place().hidden.refuses(name.as_bytes()),
            Scope::Scanned => disk::is_metadata(name.as_bytes()),
        }
    }

    /// `rel` opened through `gate` by this scope's rules.
    pub fn open(self, gate: &Gate, rel: &str) -> Result<Opened, crate::gate::FileError> {
        match self {
            Scope::Served => gate.open_rel(rel),
            Scope::Scanned => gate.open_unserved(rel),
        }
    }
}

/// [`walk`], listing what `scope` says.
pub fn walk_in(gate: &Gate, folder: &str, scope: Scope) -> Walked {
    let mut walked = Walked::default();
    let (folder_reach, ancestors) = if folder.is_empty() {
        (Reach::Root, Vec::new())
    } else {
        match open_start(gate, folder, scope) {
            Some((start, ancestors)) => (Reach::Open(Box::new(start)), ancestors),
            None => return walked,
        }
    };
    let mut queue = VecDeque::from([Frame {
        rel: folder.to_owned(),
        folder: folder_reach,
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
        if let Err(limit) = visit(gate, scope, frame, &mut walked, &mut bytes, &mut queue) {
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

/// The folder `folder` (cleaned, not "") of the skill the gate opened, open,
/// with the identities of the folders above it from the skill folder down:
/// a symlink below it back to one of them is a cycle. `None` when it is not
/// a folder (or is gone).
fn open_start(gate: &Gate, folder: &str, scope: Scope) -> Option<(Opened, Vec<FileId>)> {
    let mut ancestors = Vec::new();
    let mut prefix = String::new();
    let mut start: Option<Opened> = None;
    for part in std::iter::once("").chain(folder.split('/').filter(|p| !p.is_empty())) {
        if !part.is_empty() {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
        }
        match scope.open(gate, &prefix) {
            Ok(opened) if opened.kind() == Kind::Folder => {
                ancestors.extend(start.map(|above| above.stamp().id()));
                start = Some(opened);
            }
            _ => return None,
        }
    }
    start.map(|start| (start, ancestors))
}

/// The files of the skill the gate opened: [`walk`] of the whole skill.
pub fn list(gate: &Gate) -> Listing {
    walk(gate, "").listing
}

const BACK_UP: &str = "a symlink back to a folder above it (a loop)";

/// A folder entry, followed if it is a symlink.
enum Seen {
    /// A regular file of this size.
    File(u64),
    /// A folder; its identity when a symlink led to it (a real folder's is
    /// known once it is opened).
    Folder(Option<FileId>),
}

/// Reads one folder: its files join the listing, its folders the queue.
/// `Err` when a bound that ends the whole walk was reached.
fn visit(
    gate: &Gate,
    scope: Scope,
    frame: Frame,
    walked: &mut Walked,
    bytes: &mut u64,
    queue: &mut VecDeque<Frame>,
) -> Result<(), Limit> {
    let skill_dir = gate.place().dir;
    // Opened through the gate when its turn comes: a folder swapped for a
    // symlink since it was seen is followed by the rules, or not at all.
    let listed = |opened: Result<Opened, _>| match opened {
        Ok(folder) if folder.kind() == Kind::Folder => {
            Some((folder.stamp(), Gate::entries(folder)))
        }
        _ => None,
    };
    let found = match frame.folder {
        Reach::Root => match gate.root() {
            Some(root) => Some((root.stamp(), root.entries())),
            None => listed(scope.open(gate, &frame.rel)),
        },
        Reach::Open(folder) => listed(Ok(*folder)),
        Reach::Later => listed(scope.open(gate, &frame.rel)),
    };
    // Gone, or a file now: nothing to list (and the folder above, which
    // changed, will say so).
    let Some((stamp, entries)) = found else {
        return Ok(());
    };
    // Checked here, when the folder is open, rather than when it was found:
    // a folder entry is known to be one from the folder's listing alone,
    // without a `stat` (only a symlink, or a mount, can lead back up).
    let id = stamp.id();
    if cfg!(unix) && frame.ancestors.contains(&id) {
        tracing::debug!(
            "{}/{} leads back to a folder above it; not listed",
            skill_dir.display(),
            frame.rel
        );
        walked.leave_out("", &frame.rel, BACK_UP);
        return Ok(());
    }
    let mut ancestors = frame.ancestors;
    ancestors.push(id);
    // Checked even when it cannot be read: it may become readable.
    walked.dirs.push((Path::new(&frame.rel).into(), stamp));
    let Ok(entries) = entries else {
        return Ok(());
    };
    let mut named: Vec<(String, Found)> = entries
        .into_iter()
        .filter_map(|(name, found)| {
            let name = match name.into_string() {
                Ok(name) => name,
                Err(name) => {
                    let name = name.to_string_lossy();
                    walked.leave_out(&frame.rel, &name, "its name is not UTF-8");
                    return None;
                }
            };
            if scope.skips(gate, &name) {
                return None;
            }
            if name.chars().any(char::is_control) {
                let shown = crate::text::printable(&name);
                walked.leave_out(&frame.rel, &shown, "its name holds a control character");
                return None;
            }
            Some((name, found))
        })
        .collect();
    named.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (name, found) in named {
        let rel = if frame.rel.is_empty() {
            name
        } else {
            format!("{}/{name}", frame.rel)
        };
        let seen = match found {
            Found::File { len } => Seen::File(len),
            Found::Folder => Seen::Folder(None),
            Found::Link => match scope.open(gate, &rel) {
                Ok(target) if target.kind() == Kind::File => {
                    // The target may sit in a folder the walk does not read.
                    if let Some((above, _)) = target.real().and_then(|real| real.rsplit_once('/'))
                        && let Ok(folder) = scope.open(gate, above)
                    {
                        walked.dirs.push((Path::new(above).into(), folder.stamp()));
                    }
                    Seen::File(target.len())
                }
                Ok(target) => Seen::Folder(Some(target.stamp().id())),
                Err(refused) => {
                    tracing::debug!("{}/{rel}: {refused}; not listed", skill_dir.display());
                    walked.leave_out("", &rel, refused_link(&refused));
                    continue;
                }
            },
            Found::Other => {
                walked.leave_out(
                    "",
                    &rel,
                    "neither a file nor a folder (a FIFO, socket or device)",
                );
                continue;
            }
        };
        match seen {
            Seen::File(len) => {
                if walked.listing.files.len() == spec::MAX_SKILL_FILES {
                    return Err(Limit::Files);
                }
                if *bytes + len > spec::MAX_SKILL_BYTES {
                    return Err(Limit::Bytes);
                }
                *bytes += len;
                walked.listing.files.push(Entry {
                    path: rel,
                    size: len,
                });
            }
            Seen::Folder(id) => {
                if cfg!(unix) && id.is_some_and(|id| ancestors.contains(&id)) {
                    tracing::debug!(
                        "{}/{rel} leads back to a folder above it; not listed",
                        skill_dir.display()
                    );
                    walked.leave_out("", &rel, BACK_UP);
                    continue;
                }
                if ancestors.len() - 1 == MAX_DEPTH {
                    walked.listing.truncated = Some(Limit::Depth);
                    continue;
                }
                queue.push_back(Frame {
                    rel,
                    folder: Reach::Later,
                    ancestors: ancestors.clone(),
                });
            }
        }
    }
    Ok(())
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

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
pub(crate) mod tests {
    use super::*;
    #[cfg(unix)]
    use crate::gate::tests::symlink;
    use std::path::PathBuf;

    /// A skill folder holding `files`, next to `outside.txt`.
    fn skill(files: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
        let (temp, dir, _) = crate::gate::tests::skill(files);
        (temp, dir)
    }

    /// The skill in `dir`, in the user's folders, its file named `file_name`.
    fn place<'a>(dir: &'a Path, file_name: &'a str) -> Place<'a> {
        Place {
            dir,
            file_name,
            fence: None,
            hidden: crate::gate::Hidden::Refused,
        }
    }

    /// The listing of `folder` in the skill in `dir`.
    fn listed(dir: &Path, folder: &str) -> Listing {
        walk(&Gate::open(place(dir, "SKILL.md")).unwrap(), folder).listing
    }

    fn paths(listing: &Listing) -> Vec<&str> {
        listing.files.iter().map(|e| e.path.as_str()).collect()
    }

    /// [`Lone::of`] the folder `dir` in the user's folders.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn lone(dir: &Path, file_name: &str) -> Option<Lone> {
        Lone::of(place(dir, file_name))
    }

    /// Sets the folder's modification time an hour back, as if it had not
    /// changed for that long (see [`SETTLED`]).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(crate) fn settle(dir: &Path) {
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(past)
            .unwrap();
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_folder_of_skill_md_alone_is_lone_until_an_entry_comes_or_goes() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("one");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), "x").unwrap();
        // Changed just now: an entry added within the same tick could leave
        // the folder's stamp as it is.
        assert_eq!(lone(&dir, "SKILL.md"), None);
        settle(&dir);
        let found = lone(&dir, "SKILL.md").expect("SKILL.md is its only entry");
        assert!(found.holds(&dir));
        // The file's own changes are not the folder's.
        std::fs::write(dir.join("SKILL.md"), "longer").unwrap();
        assert!(found.holds(&dir));
        std::fs::write(dir.join("notes.md"), "n").unwrap();
        assert!(!found.holds(&dir));
        settle(&dir);
        assert_eq!(lone(&dir, "SKILL.md"), None);
        // Gone again: the folder is another version all the same.
        std::fs::remove_file(dir.join("notes.md")).unwrap();
        settle(&dir);
        assert!(!found.holds(&dir));
        // Any other entry, hidden ones and empty folders too, and another
        // file name.
        for other in [".DS_Store", "scripts/"] {
            match other.strip_suffix('/') {
                Some(folder) => std::fs::create_dir(dir.join(folder)).unwrap(),
                None => std::fs::write(dir.join(other), "").unwrap(),
            }
            settle(&dir);
            assert_eq!(lone(&dir, "SKILL.md"), None, "{other}");
            match other.strip_suffix('/') {
                Some(folder) => std::fs::remove_dir(dir.join(folder)).unwrap(),
                None => std::fs::remove_file(dir.join(other)).unwrap(),
            }
        }
        settle(&dir);
        assert_eq!(lone(&dir, "skill.md"), None);
        assert!(lone(&dir, "SKILL.md").is_some());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(!found.holds(&dir));
        assert_eq!(lone(&dir, "SKILL.md"), None);
    }

    #[test]
    fn a_gate_lists_the_skill_folder_through_its_own_handle_once() {
        let (_temp, dir) = skill(&[("references/forms.md", b"forms")]);
        let gate = Gate::open(place(&dir, "SKILL.md")).unwrap();
        let first = walk(&gate, "");
        assert_eq!(paths(&first.listing), ["SKILL.md", "references/forms.md"]);
        // The handle's listing is read to its end: a second walk of the same
        // gate opens the folder again and lists the same.
        let second = walk(&gate, "");
        assert_eq!(first.listing, second.listing);
        assert_eq!(first.dirs, second.dirs);
    }

    #[test]
    fn hidden_entries_and_node_modules_are_not_listed() {
        let (_temp, dir) = skill(&[
            (".secret", b"SECRET"),
            (".git/config", b"SECRET"),
            ("node_modules/x.js", b"SECRET"),
            ("NODE_MODULES/x.js", b"SECRET"),
        ]);
        assert_eq!(paths(&listed(&dir, "")), ["SKILL.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_listed_only_when_they_stay_inside_and_lead_to_nothing_hidden() {
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
        assert_eq!(
            paths(&listed(&dir, "")),
            [
                "SKILL.md",
                "links/forms.md",
                "links/refs/forms.md",
                "references/forms.md"
            ]
        );
        // Listing the folder that holds the link back up is no cycle either.
        assert_eq!(
            paths(&listed(&dir, "links")),
            ["links/forms.md", "links/refs/forms.md"]
        );
        // Each link not followed is named, with why.
        let gate = Gate::open(place(&dir, "SKILL.md")).unwrap();
        let left: Vec<(String, &str)> = walk(&gate, "")
            .left_out
            .into_iter()
            .map(|l| (l.path, l.why))
            .collect();
        let outside = "a symlink that leads outside the skill's folder";
        assert_eq!(
            left,
            [
                ("links/absolute".to_owned(), outside),
                (
                    "links/dangling".to_owned(),
                    "a symlink to nothing (its target does not exist)"
                ),
                (
                    "links/env".to_owned(),
                    "a symlink to a hidden file or folder or `node_modules`, which are not served"
                ),
                ("links/escape".to_owned(), outside),
                (
                    "links/loop".to_owned(),
                    "a symlink that cannot be followed (a loop, or a target that cannot be read)"
                ),
                ("links/root".to_owned(), outside),
                (
                    "links/self".to_owned(),
                    "a symlink back to a folder above it (a loop)"
                ),
                ("links/up".to_owned(), outside),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_skill_folder_reached_through_a_symlink_is_the_fence() {
        let (temp, dir) = skill(&[("references/forms.md", b"forms")]);
        let link = temp.path().join("linked");
        symlink("pdf", &link);
        symlink("../outside.txt", &dir.join("escape"));
        assert_eq!(
            paths(&listed(&link, "")),
            ["SKILL.md", "references/forms.md"]
        );
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
        let pipe = std::ffi::CString::new(dir.join("pipe").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo only reads the NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(pipe.as_ptr(), 0o644) }, 0);
        assert_eq!(paths(&listed(&dir, "")), ["SKILL.md", "ok.md"]);
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
        let listing = listed(&dir, "");
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
        let listing = listed(&dir, "");
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
        let listing = listed(&dir, "");
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
        let listing = listed(&dir, "");
        assert_eq!(listing.truncated, Some(Limit::Depth));
        // Files in the folders 1 to 16 levels down.
        assert_eq!(listing.files.len(), 1 + MAX_DEPTH);

        let (_temp, dir) = skill(&[]);
        for i in 0..MAX_DIRS {
            std::fs::create_dir(dir.join(format!("d{i:04}"))).unwrap();
        }
        std::fs::write(dir.join("d4095/last.md"), "x").unwrap();
        let listing = listed(&dir, "");
        // The skill folder counts: the last folder is not read.
        assert_eq!(listing.truncated, Some(Limit::Folders));
        assert_eq!(paths(&listing), ["SKILL.md"]);
    }

    #[test]
    fn a_missing_file_suggests_similar_paths() {
        let (_temp, dir) = skill(&[
            ("references/forms.md", b"x"),
            ("references/nested/deep.md", b"x"),
            ("scripts/fill_form.py", b"x"),
        ]);
        let listing = listed(&dir, "");
        let suggestions = |path| suggest(&listing, path);
        assert_eq!(suggestions("forms.md"), ["references/forms.md"]);
        assert_eq!(suggestions("reference/form.md"), ["references/forms.md"]);
        assert_eq!(suggestions("reference"), ["references"]);
        assert_eq!(
            suggestions("scripts/fill-form.py"),
            ["scripts/fill_form.py"]
        );
        assert_eq!(suggestions("kubernetes.yaml"), Vec::<String>::new());
        assert_eq!(suggestions("skill.MD"), ["SKILL.md"]);
    }

    #[test]
    fn at_most_five_suggestions_exact_names_first() {
        let files: Vec<(String, &[u8])> = (0..8)
            .map(|i| (format!("v{i}/notes.md"), &b"x"[..]))
            .chain([("notes.txt".to_owned(), &b"x"[..])])
            .collect();
        let files: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        let (_temp, dir) = skill(&files);
        assert_eq!(
            suggest(&listed(&dir, ""), "notes.md"),
            [
                "v0/notes.md",
                "v1/notes.md",
                "v2/notes.md",
                "v3/notes.md",
                "v4/notes.md"
            ]
        );
    }
}
