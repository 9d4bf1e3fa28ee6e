//! The text of skills that were called more than once, kept while their
//! files are unchanged.
//!
//! A call must see the file as it is now (behaviour.md §5.2: edits show up at
//! once), but reading it means open, read and close, and an open inside a
//! watched folder wakes the file watcher. A `stat` answers "is it unchanged?"
//! without either: the text is reused while the file's [`Stamp`] (size,
//! modification and inode change times, device and inode) is that of the read
//! that produced it. Measured at 1,000 skills, this took the
//! median `tools/call` round trip from about 140 µs to about 100 µs with
//! watching on.
//!
//! A text is kept from the second read of its file on: most skills are
//! called once in a session, and keeping every text read on a first call
//! made the heap grow by a text a call (fresh pages, each a page fault) for
//! nothing. Files read once are remembered by a hash of their path alone.
//!
//! The file is read only through the gate ([`gate::open_own`]), from the
//! handle it opened. In the user's own folders a `stat` by path decides
//! whether a kept text can be reused: it is reused only while the path leads
//! to the very file it was read from (device and inode), unchanged. A
//! project's `SKILL.md` is opened beneath the repository every time, so one
//! swapped for a symlink out of it is refused however fresh its text looks.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest, Sha256};

use crate::digest::Sum;
use crate::disk::{self, PathKey, ReadError, Stamp};
use crate::gate::{self, Place};

/// At most this many bytes of text are kept; past it the cache starts over.
const CACHE_BYTES: usize = 4 * 1024 * 1024;
/// At most this many files read once are remembered (their table takes at
/// most 0.6 MB); past it they are forgotten, and their next read counts as a
/// first one.
const READ_ONCE: usize = 32 * 1024;

/// Skill texts by the path of their file.
pub struct Contents {
    max_file_bytes: u64,
    cached: Mutex<Cached>,
}

#[derive(Default)]
struct Cached {
    texts: HashMap<PathKey, Kept>,
    /// The hashes of the paths of files read once and not kept. Two paths
    /// of one hash only get a text kept a read early.
    read_once: HashSet<u64>,
    bytes: usize,
}

/// A kept text: the version of the file it was read from, and the SHA-256
/// of the bytes read when the read asked for it.
struct Kept {
    version: Stamp,
    text: Arc<String>,
    sum: Option<Sum>,
}

/// A skill's text as read, and the SHA-256 of the file's bytes when asked
/// for (a skill that is not the user's own is served only when these are
/// the bytes its screening read).
pub struct Read {
    pub text: Arc<String>,
    pub sum: Option<Sum>,
}

impl Contents {
    pub fn new(max_file_bytes: u64) -> Contents {
        Contents {
            max_file_bytes,
            cached: Mutex::default(),
        }
    }

    /// The text of the skill's `SKILL.md` at `place`, exactly as
    /// [`read_text`] returns it.
    pub fn read(&self, place: Place) -> Result<Arc<String>, ReadError> {
        Ok(self.read_summed(place, false)?.text)
    }

    /// [`Contents::read`], and with `sum` the SHA-256 of the file's bytes
    /// (a leading BOM included).
    pub fn read_summed(&self, place: Place, sum: bool) -> Result<Read, ReadError> {
        let path = &place.file();
        let key = PathKey::bytes_of(path);
        let lock = || self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        // Looked up once before the file is opened: a first call (nothing
        // kept) opens it straight away, and a kept text whose `stat` by path
        // differs may still be the one the open file is. A text kept
        // without its sum does not answer a read that needs one.
        let before = lock()
            .texts
            .get(key)
            .filter(|kept| !sum || kept.sum.is_some())
            .map(|kept| (kept.version, Arc::clone(&kept.text), kept.sum));
        let reuse = |(_, text, kept_sum): &(Stamp, Arc<String>, Option<Sum>)| Read {
            text: Arc::clone(text),
            sum: *kept_sum,
        };
        if place.fence.is_none()
            && let Some(kept) = &before
            && kept.0 == Stamp::of(&std::fs::metadata(path)?)
        {
            return Ok(reuse(kept));
        }
        let opened = gate::open_own(place)?;
        // Taken when it was opened: if the file changes while it is read,
        // the next call sees another version and reads again.
        let version = opened.stamp();
        if let Some(kept) = &before
            && kept.0 == version
        {
            return Ok(reuse(kept));
        }
        let len = opened.len();
        let bytes = disk::read_all(&mut opened.into_file(), len, self.max_file_bytes)?;
        let sum = sum.then(|| Sha256::digest(&bytes).into());
        // An `Arc<String>`, not an `Arc<str>`: that would copy the text once more.
        let text = Arc::new(disk::text(bytes)?);
        // Hashed only when no text was kept (this may be the file's first
        // read): a kept text that changed is kept again at once.
        let first = before
            .is_none()
            .then(|| BuildHasherDefault::<DefaultHasher>::default().hash_one(key));
        let mut cached = lock();
        if let Some(hash) = first {
            if cached.read_once.len() == READ_ONCE {
                cached.read_once.clear();
            }
            if cached.read_once.insert(hash) {
                return Ok(Read { text, sum });
            }
            cached.read_once.remove(&hash);
        }
        if cached.bytes + text.len() > CACHE_BYTES {
            cached.texts.clear();
            cached.bytes = 0;
        }
        cached.bytes += text.len();
        let kept = Kept {
            version,
            text: Arc::clone(&text),
            sum,
        };
        if let Some(old) = cached.texts.insert(PathKey(path.as_path().into()), kept) {
            cached.bytes -= old.text.len();
        }
        Ok(Read { text, sum })
    }

    /// Forgets the text kept for the skill at `place`: one whose version
    /// looks unchanged may not be what its file holds (a change within the
    /// file system's time granularity), and it is read again.
    pub fn forget(&self, place: Place) {
        let path = place.file();
        let mut cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(old) = cached.texts.remove(PathKey::bytes_of(&path)) {
            cached.bytes -= old.text.len();
        }
    }
}

/// The whole text of the skill's `SKILL.md` at `place`, read through the
/// gate: strict UTF-8, a leading BOM removed, everything else as on disk.
pub fn read_text(place: Place, max: u64) -> Result<String, ReadError> {
    let opened = gate::open_own(place)?;
    let len = opened.len();
    disk::text(disk::read_all(&mut opened.into_file(), len, max)?)
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    /// A skill folder in a temporary directory, its `SKILL.md` holding
    /// `text`, and that file's path.
    fn skill(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    /// The skill in `dir`, in the user's folders.
    fn place(dir: &std::path::Path) -> Place<'_> {
        Place {
            dir,
            file_name: "SKILL.md",
            fence: None,
            hidden: crate::gate::Hidden::Refused,
        }
    }

    /// How many texts `contents` keeps.
    fn kept(contents: &Contents) -> usize {
        contents.cached.lock().unwrap().texts.len()
    }

    #[test]
    fn a_text_is_kept_from_its_second_read_on() {
        let (dir, path) = skill("one");
        let place = place(dir.path());
        let contents = Contents::new(1 << 20);
        assert_eq!(&*contents.read(place).unwrap(), "one");
        assert_eq!(kept(&contents), 0);
        let second = contents.read(place).unwrap();
        assert_eq!(kept(&contents), 1);
        // The third read is the kept text itself.
        assert!(Arc::ptr_eq(&second, &contents.read(place).unwrap()));
        // A kept text that changed is read, and kept, again at once.
        std::fs::write(&path, "two!").unwrap();
        let changed = contents.read(place).unwrap();
        assert_eq!(&*changed, "two!");
        assert!(Arc::ptr_eq(&changed, &contents.read(place).unwrap()));
    }

    #[test]
    fn a_changed_file_is_read_again() {
        let (dir, path) = skill("one");
        let place = place(dir.path());
        let contents = Contents::new(1 << 20);
        assert_eq!(&*contents.read(place).unwrap(), "one");
        std::fs::write(&path, "two!").unwrap();
        assert_eq!(&*contents.read(place).unwrap(), "two!");
        // Same size, new file (an editor's atomic save): the inode differs.
        let replacement = dir.path().join("new");
        std::fs::write(&replacement, "six!").unwrap();
        std::fs::rename(&replacement, &path).unwrap();
        assert_eq!(&*contents.read(place).unwrap(), "six!");
    }

    #[test]
    fn a_vanished_file_is_an_io_error_not_a_cached_text() {
        let (dir, path) = skill("x");
        let place = place(dir.path());
        let contents = Contents::new(1 << 20);
        // Read twice, so that its text is kept.
        contents.read(place).unwrap();
        contents.read(place).unwrap();
        assert_eq!(kept(&contents), 1);
        std::fs::remove_file(&path).unwrap();
        assert!(
            matches!(contents.read(place), Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound)
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_project_file_swapped_out_is_refused_though_its_text_is_kept() {
        let temp = tempfile::tempdir().unwrap();
        let repo = temp.path().join("repo");
        let dir = repo.join("skills/pdf");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("SKILL.md");
        std::fs::write(&path, "inside").unwrap();
        let fence = gate::Fence::new(&repo);
        let place = Place {
            dir: &dir,
            file_name: "SKILL.md",
            fence: Some(&fence),
            hidden: crate::gate::Hidden::Refused,
        };
        let contents = Contents::new(1 << 20);
        assert_eq!(&*contents.read(place).unwrap(), "inside");
        // Read twice, so that its text is kept.
        assert_eq!(&*contents.read(place).unwrap(), "inside");
        assert_eq!(kept(&contents), 1);
        // The very same file, moved out and linked back in.
        let out = temp.path().join("SKILL.md");
        std::fs::rename(&path, &out).unwrap();
        std::os::unix::fs::symlink(&out, &path).unwrap();
        assert!(matches!(
            contents.read(place),
            Err(ReadError::OutsideProject)
        ));
    }
}
