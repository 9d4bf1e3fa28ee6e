//! The text of skills that were called, kept while their files are unchanged.
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
//! The file is read only through the gate ([`gate::open_own`]), from the
//! handle it opened. In the user's own folders a `stat` by path decides
//! whether a kept text can be reused: it is reused only while the path leads
//! to the very file it was read from (device and inode), unchanged. A
//! project's `SKILL.md` is opened beneath the repository every time, so one
//! swapped for a symlink out of it is refused however fresh its text looks.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use crate::disk::{self, ReadError, Stamp};
use crate::gate::{self, Place};

/// At most this many bytes of text are kept; past it the cache starts over.
const CACHE_BYTES: usize = 4 * 1024 * 1024;

/// Skill texts by path.
pub struct Contents {
    max_file_bytes: u64,
    cached: Mutex<Cached>,
}

#[derive(Default)]
struct Cached {
    texts: HashMap<PathBuf, (Stamp, Arc<String>)>,
    bytes: usize,
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
        let path = &place.file();
        let lock = || self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = || {
            lock()
                .texts
                .get(path)
                .map(|(version, text)| (*version, Arc::clone(text)))
        };
        // A `stat` by path can only save the read when a text is kept (a
        // first call opens the file straight away).
        if place.fence.is_none()
            && let Some((version, text)) = kept()
            && version == Stamp::of(&std::fs::metadata(path)?)
        {
            return Ok(text);
        }
        let opened = gate::open_own(place)?;
        // Taken when it was opened: if the file changes while it is read,
        // the next call sees another version and reads again.
        let version = opened.stamp();
        if let Some((kept_version, text)) = kept()
            && kept_version == version
        {
            return Ok(text);
        }
        let len = opened.len();
        let bytes = disk::read_all(&mut opened.into_file(), len, self.max_file_bytes)?;
        // An `Arc<String>`, not an `Arc<str>`: that would copy the text once more.
        let text = Arc::new(disk::text(bytes)?);
        let mut cached = lock();
        if cached.bytes + text.len() > CACHE_BYTES {
            *cached = Cached::default();
        }
        cached.bytes += text.len();
        if let Some((_, old)) = cached
            .texts
            .insert(path.to_path_buf(), (version, Arc::clone(&text)))
        {
            cached.bytes -= old.len();
        }
        Ok(text)
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
mod tests {
    use super::*;

    fn place<'a>(dir: &'a std::path::Path, path: &'a std::path::Path) -> Place<'a> {
        Place {
            dir,
            file_name: path.file_name().unwrap().to_str().unwrap(),
            fence: None,
        }
    }

    #[test]
    fn a_changed_file_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        let place = place(dir.path(), &path);
        std::fs::write(&path, "one").unwrap();
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
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        let place = place(dir.path(), &path);
        std::fs::write(&path, "x").unwrap();
        let contents = Contents::new(1 << 20);
        contents.read(place).unwrap();
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
        };
        let contents = Contents::new(1 << 20);
        assert_eq!(&*contents.read(place).unwrap(), "inside");
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
