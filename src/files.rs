//! A skill's files for a client (behaviour.md §9): listings and SHA-256
//! digests kept while the files are unchanged, and a file's contents with
//! the size cap. Every file and folder is opened through the
//! [`Gate`](crate::gate::Gate); this module only decides when a result
//! can be reused.
//!
//! Nothing here runs at start-up: listings and digests are computed when a
//! call or a request asks for them, and kept by [`Files`] while the files'
//! versions ([`Stamp`]) are unchanged. A `stat` by path is enough to reuse
//! one: a result is reused only while the path leads to the very file or
//! folder (device and inode) it was made from, unchanged; anything else goes
//! through the gate again. A project skill's folder is opened beneath the
//! repository first, every time, as a call opens it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest, Sha256};

use crate::digest;
use crate::disk::{self, PathKey, Stamp};
use crate::gate::{FileError, Gate, Kind, Place, Target};
use crate::listing::{self, Entry, Listing, Scope};
use crate::mime::{self, Content};
use crate::spec;

/// Listings and digests of skills' files, kept while the files are
/// unchanged; one per server, shared by every request.
///
/// The cache holds the whole catalog (a second walk through `skills/list`
/// hashes nothing): a skill's listing, the folders it was read from
/// (relative to the skill folder) and the digests of its files, keyed by the
/// skill folder's path as the snapshot holds it (shared, not copied). Memory
/// is bounded per entry (about 150 bytes a file and 70 a folder, besides the
/// paths), and in all: the listings of skills no longer served are dropped
/// after each refresh that changed the skills ([`Files::keep_only`]), and
/// past a bound of files and folders ([`CACHED_ENTRIES_PER_SKILL`] a served
/// skill, at least [`MIN_CACHED_ENTRIES`]) the cache starts over, which only
/// a catalog of thousands of files per skill reaches.
pub struct Files {
    max_file_bytes: u64,
    /// Which files a listing holds: what is served, or (the security
    /// scan's own) every file it reads.
    scope: Scope,
    listings: Mutex<Listings>,
}

/// A digest and the version of the file it was computed from (whose size
/// is the number of bytes hashed).
type Sum = (Stamp, digest::Sum);

/// A file's SHA-256, the bytes hashed, and whether it was hashed now.
struct Summed {
    sum: digest::Sum,
    size: u64,
    fresh: bool,
}

/// A file's digest and the size of the bytes it was computed over (the
/// listing's size may be older: see [`Files::folder_listing`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hashed {
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    pub size: u64,
    /// Read and hashed now (not kept from before).
    pub fresh: bool,
}

/// Files and folders kept at least, over all cached listings; more with
/// more skills ([`Files::keep_only`]).
pub const MIN_CACHED_ENTRIES: usize = 32 * 1024;
/// Files and folders kept per served skill, on average, at most.
pub const CACHED_ENTRIES_PER_SKILL: usize = 64;

struct Listings {
    /// By skill folder: the whole skill's listing, and those of the folders
    /// asked for one by one (directory reads, calls with a folder).
    by_skill: HashMap<PathKey, Kept>,
    /// The files and folders they hold.
    entries: usize,
    /// Past this many, the cache starts over.
    bound: usize,
}

impl Default for Listings {
    fn default() -> Listings {
        Listings {
            by_skill: HashMap::new(),
            entries: 0,
            bound: MIN_CACHED_ENTRIES,
        }
    }
}

#[derive(Default)]
struct Kept {
    whole: Option<Arc<Checked>>,
    folders: HashMap<Box<str>, Arc<Checked>>,
}

/// A listing, the folder versions it was made from, and the digests of its
/// files once asked for.
struct Checked {
    listing: Arc<Listing>,
    /// Relative to the skill folder ("" for the skill folder itself).
    dirs: Vec<(Box<Path>, Stamp)>,
    /// Parallel to `listing.files`.
    digests: Mutex<Option<Box<[Option<Sum>]>>>,
}

impl Checked {
    /// What it counts against the bound.
    fn entries(&self) -> usize {
        self.listing.files.len() + self.dirs.len()
    }
}

/// The gate of `place` when it is a project skill: its folder is opened
/// beneath the repository before anything cached is reused, as a call
/// opens it (one that now leads out of the repository is refused).
fn fenced<'a>(place: Place<'a>) -> Result<Option<Gate<'a>>, FileError> {
    place.fence.map(|_| Gate::open(place)).transpose()
}

impl Files {
    /// `max_file_bytes` is the cap on a file [`Files::read`] shows (the
    /// `--max-file-bytes` of SKILL.md).
    pub fn new(max_file_bytes: u64) -> Files {
        Files::with_scope(max_file_bytes, Scope::Served)
    }

    /// [`Files::new`], its listings holding what `scope` says.
    pub fn with_scope(max_file_bytes: u64, scope: Scope) -> Files {
        Files {
            max_file_bytes,
            scope,
            listings: Mutex::default(),
        }
    }

    /// The files of the skill at `place`, as [`listing::walk`] finds them.
    /// `dir` is `place.dir` as the snapshot holds it: the key under which
    /// the listing is kept, shared rather than copied.
    pub fn listing(&self, place: Place, dir: &Arc<Path>) -> Result<Arc<Listing>, FileError> {
        self.folder_listing(place, dir, "")
    }

    /// The files below `folder` (the [`Target::rel`] of a folder; "" for
    /// the whole skill), paths relative to the skill folder, with the
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
    pub fn folder_listing(
        &self,
        place: Place,
        dir: &Arc<Path>,
        folder: &str,
    ) -> Result<Arc<Listing>, FileError> {
        Ok(Arc::clone(&self.checked(place, dir, folder)?.listing))
    }

    /// The kept listing of `folder` of the skill at `place` if it is
    /// unchanged, else a new one (kept).
    fn checked(
        &self,
        place: Place,
        dir: &Arc<Path>,
        folder: &str,
    ) -> Result<Arc<Checked>, FileError> {
        let gate = fenced(place)?;
        let cached = {
            let listings = self.lock_listings();
            let kept = listings.by_skill.get(PathKey::bytes_of(dir));
            let checked = if folder.is_empty() {
                kept.and_then(|kept| kept.whole.as_ref())
            } else {
                kept.and_then(|kept| kept.folders.get(folder))
            };
            checked.cloned()
        };
        if let Some(checked) = cached
            && unchanged(place.dir, &checked)
        {
            return Ok(checked);
        }
        let gate = match gate {
            Some(gate) => gate,
            None => Gate::open(place)?,
        };
        let walked = listing::walk_in(&gate, folder, self.scope);
        let checked = Arc::new(Checked {
            listing: Arc::new(walked.listing),
            dirs: walked.dirs,
            digests: Mutex::new(None),
        });
        let mut listings = self.lock_listings();
        if listings.entries + checked.entries() > listings.bound {
            let bound = listings.bound;
            *listings = Listings {
                bound,
                ..Listings::default()
            };
        }
        listings.entries += checked.entries();
        let kept = listings
            .by_skill
            .entry(PathKey(Arc::clone(dir)))
            .or_default();
        let old = if folder.is_empty() {
            kept.whole.replace(Arc::clone(&checked))
        } else {
            kept.folders.insert(folder.into(), Arc::clone(&checked))
        };
        if let Some(old) = old {
            listings.entries -= old.entries();
        }
        Ok(checked)
    }

    /// The SHA-256 of each file of `listing` (the whole listing of the skill
    /// at `place`, as [`Files::listing`] gave it) as it is now, `sha256:`
    /// and lowercase hex, computed by streaming the file through a 64 KiB
    /// buffer; the first file that cannot be hashed ends it with its error.
    /// Files over [`spec::MAX_SKILL_BYTES`] are refused.
    ///
    /// A digest is kept with the listing while a `stat` of the path shows
    /// the version that was hashed (measured: 21 µs a file when every call
    /// resolved the path again, 3 µs now). A file that changed, or was
    /// swapped for a symlink (another file, so another version), is opened
    /// through the gate again and hashed from that open file.
    pub fn digests(
        &self,
        place: Place,
        dir: &Arc<Path>,
        listing: &Arc<Listing>,
    ) -> Result<Vec<Hashed>, FileError> {
        let sums = self.sums(place, dir, listing)?;
        Ok(sums
            .iter()
            .map(|summed| Hashed {
                digest: digest::text(&summed.sum),
                size: summed.size,
                fresh: summed.fresh,
            })
            .collect())
    }

    /// The digest of the whole skill at `place` ([`digest::skill`] over
    /// every listed file, with the sums [`Files::digests`] gives), or `None`
    /// when the listing stopped at a bound: a digest that does not cover
    /// every file would not change with the files left out.
    pub fn skill_digest(&self, place: Place) -> Result<Option<String>, FileError> {
        // The key of what is kept: an equal path finds a listing the
        // server keeps already.
        let dir: Arc<Path> = place.dir.into();
        let listing = self.listing(place, &dir)?;
        if listing.truncated.is_some() {
            return Ok(None);
        }
        let sums = self.sums(place, &dir, &listing)?;
        let files = listing.files.iter().zip(&sums);
        Ok(Some(digest::skill(files.map(|(entry, summed)| {
            (entry.path.as_str(), &summed.sum)
        }))))
    }

    /// Each listed file of the skill at `place` with its SHA-256, as they
    /// are now (the sums [`Files::skill_digest`] covers).
    pub fn file_sums(&self, place: Place) -> Result<Vec<(Box<str>, digest::Sum)>, FileError> {
        let dir: Arc<Path> = place.dir.into();
        let listing = self.listing(place, &dir)?;
        let sums = self.sums(place, &dir, &listing)?;
        Ok(listing
            .files
            .iter()
            .zip(sums)
            .map(|(entry, summed)| (Box::from(entry.path.as_str()), summed.sum))
            .collect())
    }

    /// The SHA-256 of each file of `listing` and the bytes hashed, as
    /// [`Files::digests`] describes.
    fn sums(
        &self,
        place: Place,
        dir: &Arc<Path>,
        listing: &Arc<Listing>,
    ) -> Result<Vec<Summed>, FileError> {
        let gate = fenced(place)?;
        let checked = {
            let listings = self.lock_listings();
            let kept = listings.by_skill.get(PathKey::bytes_of(dir));
            kept.and_then(|kept| kept.whole.clone())
        };
        let fresh = || vec![None; listing.files.len()].into_boxed_slice();
        match checked.filter(|checked| Arc::ptr_eq(&checked.listing, listing)) {
            Some(checked) => {
                let mut digests = checked
                    .digests
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                hash(
                    place,
                    self.scope,
                    gate,
                    &listing.files,
                    digests.get_or_insert_with(fresh),
                )
            }
            // Listed again meanwhile (or the cache started over): hashed,
            // not kept.
            None => hash(place, self.scope, gate, &listing.files, &mut fresh()),
        }
    }

    /// Drops the listings of skill folders that `serves` does not keep (the
    /// skills of a new snapshot), and sets the bound of the cache for
    /// `skills` skills.
    pub fn keep_only(&self, skills: usize, serves: impl Fn(&Path) -> bool) {
        let mut listings = self.lock_listings();
        listings.by_skill.retain(|dir, _| serves(&dir.0));
        listings.entries = listings
            .by_skill
            .values()
            .map(|kept| {
                kept.whole
                    .iter()
                    .chain(kept.folders.values())
                    .map(|c| c.entries())
                    .sum::<usize>()
            })
            .sum();
        listings.bound = MIN_CACHED_ENTRIES.max(skills.saturating_mul(CACHED_ENTRIES_PER_SKILL));
    }

    /// The file `target` opened, as text, an image or a description
    /// ([`read`]), with this server's size cap; with `sum`, and the SHA-256
    /// of the bytes shown (`None` for a file only described).
    pub fn read(
        &self,
        target: Target,
        sum: bool,
    ) -> Result<(Content, Option<digest::Sum>), FileError> {
        read(target, self.max_file_bytes, sum)
    }

    /// The bytes of the file `target` opened, exactly as they are on disk
    /// (for `resources/read`, whose bytes must match the digest), up to this
    /// server's size cap.
    pub fn bytes(&self, target: Target) -> Result<Vec<u8>, FileError> {
        if target.kind() != Kind::File {
            return Err(FileError::NotRegular);
        }
        let len = target.opened.len();
        let mut file = target.opened.into_file();
        Ok(disk::read_all(&mut file, len, self.max_file_bytes)?)
    }

    fn lock_listings(&self) -> std::sync::MutexGuard<'_, Listings> {
        self.listings.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The digest of each of `entries` (files listed in the skill at `place`),
/// reusing those in `kept` (parallel to `entries`) while the file is
/// unchanged and keeping the new ones there. `gate`: the skill folder when
/// it is open already; else it is opened on the first file to hash.
fn hash<'a>(
    place: Place<'a>,
    scope: Scope,
    mut gate: Option<Gate<'a>>,
    entries: &[Entry],
    kept: &mut [Option<Sum>],
) -> Result<Vec<Summed>, FileError> {
    let mut out = Vec::with_capacity(entries.len());
    for (entry, kept) in entries.iter().zip(kept.iter_mut()) {
        if let Some((version, sum)) = kept
            && metadata_below(place.dir, Path::new(&entry.path))
                .is_ok_and(|meta| Stamp::of(&meta) == *version)
        {
            out.push(Summed {
                sum: *sum,
                size: version.size(),
                fresh: false,
            });
            continue;
        }
        let gate = match &gate {
            Some(gate) => gate,
            None => gate.insert(Gate::open(place)?),
        };
        let opened = scope.open(gate, &entry.path)?;
        if opened.kind() != Kind::File {
            return Err(FileError::NotRegular);
        }
        if opened.len() > spec::MAX_SKILL_BYTES {
            return Err(FileError::TooLarge {
                size: opened.len(),
                max: spec::MAX_SKILL_BYTES,
            });
        }
        // Taken when it was opened: if the file changes while it is read,
        // the next request sees another version and reads it again.
        let version = opened.stamp();
        let (sum, size) = sha256(opened.into_file())?;
        // Kept only when what was hashed is that version, whole.
        *kept = (size == version.size()).then_some((version, sum));
        out.push(Summed {
            sum,
            size,
            fresh: true,
        });
    }
    Ok(out)
}

/// Reads the file `target` opened: as text (strict UTF-8 without NUL bytes,
/// a leading BOM removed, everything else verbatim), as an image, or as a
/// description. Text and images over `max` bytes are
/// [`FileError::TooLarge`]; a binary file of any size is described after
/// reading its first [`mime::SNIFF_BYTES`]. A folder is
/// [`FileError::NotRegular`]. With `sum`, the SHA-256 of the whole file
/// when it was read whole.
pub fn read(
    target: Target,
    max: u64,
    sum: bool,
) -> Result<(Content, Option<digest::Sum>), FileError> {
    if target.kind() != Kind::File {
        return Err(FileError::NotRegular);
    }
    let rel = target.rel().to_owned();
    let len = target.opened.len();
    let mut file = target.opened.into_file();
    if len > max {
        let mut buf = Vec::new();
        disk::fill(&mut file, &mut buf, mime::SNIFF_BYTES, u64::MAX)?;
        return match mime::classify(&rel, buf, len, true) {
            binary @ Content::Binary { .. } => Ok((binary, None)),
            _ => Err(FileError::TooLarge { size: len, max }),
        };
    }
    let buf = disk::read_all(&mut file, len, max)?;
    let size = buf.len() as u64;
    let sum = sum.then(|| Sha256::digest(&buf).into());
    Ok((mime::classify(&rel, buf, size, false), sum))
}

/// Whether every folder `checked` was made from (paths relative to
/// `skill_dir`, or absolute) still has the version it had.
fn unchanged(skill_dir: &Path, checked: &Checked) -> bool {
    checked.dirs.iter().all(|(rel, stamp)| {
        metadata_below(skill_dir, rel).is_ok_and(|meta| Stamp::of(&meta) == *stamp)
    })
}

/// `fs::metadata` of `base` joined with the relative path `rel` ("" for
/// `base` itself), the path made in a buffer of this thread's. A
/// cached `skills/list` page checks every file and folder by path, and
/// making each path (`Path::join` allocated twice) had the page's two
/// threads queueing on the allocator's lock (a cached walk at 100,000
/// skills: 12–19% less server CPU without those allocations).
fn metadata_below(base: &Path, rel: &Path) -> io::Result<fs::Metadata> {
    thread_local! {
        static PATH: RefCell<PathBuf> = RefCell::default();
    }
    PATH.with_borrow_mut(|path| {
        path.as_mut_os_string().clear();
        path.push(base);
        if !rel.as_os_str().is_empty() {
            path.push(rel);
        }
        fs::metadata(&*path)
    })
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
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;
    use crate::gate::tests::skill;

    fn place(dir: &Arc<Path>) -> Place<'_> {
        Place {
            dir,
            file_name: "SKILL.md",
            fence: None,
            hidden: crate::gate::Hidden::Refused,
        }
    }

    fn paths(listing: &Listing) -> Vec<&str> {
        listing.files.iter().map(|e| e.path.as_str()).collect()
    }

    fn target(place: Place, path: &str) -> Target {
        Gate::open(place).unwrap().resolve(path).unwrap()
    }

    #[test]
    fn known_digests() {
        let million: Vec<u8> = vec![b'a'; 1_000_000];
        let (_temp, dir, _) = skill(&[
            ("abc.txt", b"abc"),
            ("empty.txt", b""),
            ("million.txt", &million),
        ]);
        let dir: Arc<Path> = dir.into();
        let place = place(&dir);
        let files = Files::new(1 << 20);
        let listing = files.listing(place, &dir).unwrap();
        let at = |path: &str| listing.files.iter().position(|e| e.path == path).unwrap();
        let digest = |path: &str| {
            files.digests(place, &dir, &listing).unwrap()[at(path)]
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
        let hashed = files.digests(place, &dir, &listing).unwrap();
        let abc = at("abc.txt");
        assert_eq!((listing.files[abc].size, hashed[abc].size), (3, 4));
        // Kept with the listing: asked again, nothing is read.
        let again = files.digests(place, &dir, &listing).unwrap();
        assert!(again.iter().all(|h| !h.fresh));
        assert_eq!(
            again,
            hashed
                .into_iter()
                .map(|h| Hashed { fresh: false, ..h })
                .collect::<Vec<_>>()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_file_swapped_for_a_fifo_or_a_symlink_out_is_neither_read_nor_hashed() {
        let (temp, dir, _) = skill(&[("notes.md", b"notes")]);
        let dir: Arc<Path> = dir.into();
        let place = place(&dir);
        let files = Files::new(1 << 20);
        let listing = files.listing(place, &dir).unwrap();
        assert_eq!(listing.files[1].path, "notes.md");
        std::fs::remove_file(dir.join("notes.md")).unwrap();
        let pipe = std::ffi::CString::new(dir.join("notes.md").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo only reads the NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(pipe.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            files.digests(place, &dir, &listing),
            Err(FileError::NotRegular)
        ));
        std::fs::remove_file(dir.join("notes.md")).unwrap();
        std::os::unix::fs::symlink(temp.path().join("outside.txt"), dir.join("notes.md")).unwrap();
        assert!(matches!(
            files.digests(place, &dir, &listing),
            Err(FileError::Outside)
        ));
    }

    #[test]
    fn the_cached_listing_follows_its_folders() {
        let (_temp, dir, _) = skill(&[("references/forms.md", b"x"), ("notes/a.md", b"x")]);
        let dir: Arc<Path> = dir.into();
        let place = place(&dir);
        let files = Files::new(1 << 20);
        let first = files.listing(place, &dir).unwrap();
        assert!(
            Arc::ptr_eq(&first, &files.listing(place, &dir).unwrap()),
            "reused"
        );
        // Written in place: no folder changes, the listing is kept (its
        // size is the listed one until the folder changes).
        std::fs::write(dir.join("references/forms.md"), "longer").unwrap();
        assert!(Arc::ptr_eq(&first, &files.listing(place, &dir).unwrap()));
        // Added next to it.
        std::fs::write(dir.join("references/more.md"), "x").unwrap();
        let added = files.listing(place, &dir).unwrap();
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
            paths(&files.listing(place, &dir).unwrap()),
            ["SKILL.md", "references/forms.md", "references/more.md"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_file_is_unlisted_when_its_target_goes() {
        let (_temp, dir, _) = skill(&[("deep/a/b/c/target.md", b"x")]);
        std::fs::create_dir(dir.join("links")).unwrap();
        std::os::unix::fs::symlink("../deep/a/b/c/target.md", dir.join("links/target.md")).unwrap();
        let dir: Arc<Path> = dir.into();
        let place = place(&dir);
        let files = Files::new(1 << 20);
        // The folder of the target is read by the walk too; this is about
        // the link, so list only `links`.
        assert_eq!(
            paths(&files.folder_listing(place, &dir, "links").unwrap()),
            ["links/target.md"]
        );
        std::fs::remove_file(dir.join("deep/a/b/c/target.md")).unwrap();
        assert!(
            files
                .folder_listing(place, &dir, "links")
                .unwrap()
                .files
                .is_empty()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_cached_listing_of_a_project_skill_is_refused_once_it_leads_out() {
        let temp = tempfile::tempdir().unwrap();
        let repo = temp.path().join("repo");
        let dir = repo.join(".claude/skills/pdf");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\n---\n").unwrap();
        std::fs::write(dir.join("notes.md"), "x").unwrap();
        let fence = crate::gate::Fence::new(&repo);
        let shared: Arc<Path> = dir.as_path().into();
        let place = Place {
            dir: &dir,
            file_name: "SKILL.md",
            fence: Some(&fence),
            hidden: crate::gate::Hidden::Refused,
        };
        let files = Files::new(1 << 20);
        let listing = files.listing(place, &shared).unwrap();
        files.digests(place, &shared, &listing).unwrap();
        // Moved out of the repository, and linked back in its place: the
        // same folder and files, but now outside.
        let out = temp.path().join("pdf");
        std::fs::rename(&dir, &out).unwrap();
        std::os::unix::fs::symlink(&out, &dir).unwrap();
        assert!(matches!(
            files.listing(place, &shared),
            Err(FileError::OutsideProject)
        ));
        assert!(matches!(
            files.digests(place, &shared, &listing),
            Err(FileError::OutsideProject)
        ));
    }

    #[test]
    fn the_size_cap_holds_for_text_and_images_not_for_a_description() {
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.resize(100, 0);
        let mut big_binary = vec![0_u8; 100];
        big_binary[0] = 0xff;
        // A multi-byte character cut by the sniffed prefix is still text.
        let big_text = "é".repeat(mime::SNIFF_BYTES);
        let (_temp, dir, _) = skill(&[
            ("big.png", &png),
            ("big.bin", &big_binary),
            ("big.md", big_text.as_bytes()),
        ]);
        let dir: Arc<Path> = dir.into();
        let place = place(&dir);
        for path in ["big.png", "big.md"] {
            assert!(
                matches!(
                    read(target(place, path), 50, true),
                    Err(FileError::TooLarge { max: 50, .. })
                ),
                "{path}"
            );
        }
        assert_eq!(
            read(target(place, "big.bin"), 50, true).unwrap(),
            (
                Content::Binary {
                    size: 100,
                    mime: "application/octet-stream"
                },
                // Described from its first bytes: nothing of it is shown.
                None
            )
        );
        assert!(matches!(
            read(target(place, ""), 50, false),
            Err(FileError::NotRegular)
        ));
    }
}
