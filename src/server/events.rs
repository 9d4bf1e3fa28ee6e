//! Where file-system events come from: inotify on Linux, `notify`'s
//! recommended backend (FSEvents, ReadDirectoryChangesW, ...) elsewhere.
//!
//! Linux uses inotify directly because `notify` subscribes every watch to
//! `IN_OPEN`: each time a call reads a `SKILL.md` for the first time, the
//! kernel queued an event, woke notify's thread, which woke the server's
//! thread, only for the event to be thrown away. Measured at 1,000 skills with
//! calls spread over every skill, that was about 17 µs of CPU per call (a
//! third of the server's share) and a fifth of the main thread's samples in
//! the kernel's event queueing. This watcher asks for every event but opens
//! and reads.
//!
//! Both backends report [`Change`]s through a channel and are compiled on
//! every platform, so the one Linux does not use is still built and tested
//! here.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

/// What happened, as far as the watcher cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub kind: ChangeKind,
    /// The entries concerned: `watched-folder/name`, or a watched folder itself.
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// An entry was created, written to, renamed into place or had its
    /// metadata changed.
    Modified,
    /// An entry, or a watched folder itself, was deleted or renamed away: a
    /// watch on it (and on every other path to the same folder) is gone.
    Removed,
    /// Events were lost (the kernel's queue overflowed): rescan everything.
    Overflow,
}

/// Why a folder could not be watched.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// It does not exist (any more).
    #[error("the folder does not exist")]
    Missing,
    #[error("{0}")]
    Other(String),
}

/// Whether the watcher may miss changes to the folder `dir` even while it
/// watches it: on a network or shared file system, changes made by another
/// machine (or, in a virtual machine, by the host: WSL's `/mnt/c`) reach no
/// local watcher. Asked once per device; Linux only, elsewhere `false`.
pub fn may_miss_changes(dir: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        // `statfs(2)`'s magic numbers of the file systems whose changes do
        // not all pass through this kernel.
        const REMOTE: [i64; 14] = [
            0x6969,                 // NFS
            0x517B,                 // SMB
            0xFF53_4D42_u32 as i64, // CIFS
            0xFE53_4D42_u32 as i64, // SMB2
            0x6573_5546,            // FUSE (sshfs, rclone, gvfs, ...)
            0x0102_1997,            // 9P (WSL2's Windows drives, VM shares)
            0x00C3_6400,            // Ceph
            0x5346_414F,            // AFS
            0x7375_7245,            // Coda
            0x786F_4256,            // VirtualBox shared folders
            0x0116_1970,            // GFS2
            0x7461_636F,            // OCFS2
            0x0BD0_0BD0,            // Lustre
            0x2465_04D0,            // Panasas
        ];
        match rustix::fs::statfs(dir) {
            // The field's type differs between C libraries.
            #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
            Ok(fs) => REMOTE.contains(&(fs.f_type as i64)),
            Err(_) => false,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        false
    }
}

/// The watcher this platform uses.
#[cfg(target_os = "linux")]
pub type PlatformWatcher = inotify_backend::InotifyWatcher;
/// The watcher this platform uses.
#[cfg(not(target_os = "linux"))]
pub type PlatformWatcher = notify_backend::NotifyWatcher;

#[cfg(target_os = "linux")]
mod inotify_backend {
    use std::collections::HashMap;
    use std::ffi::OsStr;
    use std::sync::{Arc, Mutex, PoisonError};

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

    use super::*;

    /// Everything but `IN_OPEN`, `IN_ACCESS` and `IN_CLOSE_NOWRITE`: reads
    /// change nothing a scan finds. `ONLYDIR` refuses to watch a file that
    /// replaced a folder.
    fn mask() -> WatchMask {
        WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::MODIFY
            | WatchMask::CLOSE_WRITE
            | WatchMask::ATTRIB
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::ONLYDIR
    }

    /// Which paths each watch descriptor stands for. Several paths can lead
    /// to one folder (a symlink): the kernel gives them one descriptor. The
    /// paths are the watcher's callers' own (shared, not copied).
    #[derive(Default)]
    struct Paths {
        by_wd: HashMap<WatchDescriptor, Aliases>,
        by_path: HashMap<Arc<Path>, WatchDescriptor>,
    }

    /// The paths of one watch: nearly always one, so without a list then.
    struct Aliases {
        first: Arc<Path>,
        more: Vec<Arc<Path>>,
    }

    impl Aliases {
        fn iter(&self) -> impl Iterator<Item = &Arc<Path>> {
            std::iter::once(&self.first).chain(&self.more)
        }

        /// Removes `path`; `false` when it was the last.
        fn remove(&mut self, path: &Path) -> bool {
            if *self.first == *path {
                match self.more.pop() {
                    Some(next) => self.first = next,
                    None => return false,
                }
            } else {
                self.more.retain(|p| **p != *path);
            }
            true
        }
    }

    impl Paths {
        /// Forgets `path`; returns its descriptor when no other path uses it.
        fn forget(&mut self, path: &Path) -> Option<WatchDescriptor> {
            let wd = self.by_path.remove(path)?;
            let aliases = self.by_wd.get_mut(&wd)?;
            if !aliases.remove(path) {
                self.by_wd.remove(&wd);
                return Some(wd);
            }
            None
        }
    }

    /// inotify, read on a thread of its own.
    pub struct InotifyWatcher {
        watches: Watches,
        paths: Arc<Mutex<Paths>>,
    }

    impl InotifyWatcher {
        pub fn new(changes: UnboundedSender<Change>) -> io::Result<InotifyWatcher> {
            let inotify = Inotify::init()?;
            let watches = inotify.watches();
            let paths = Arc::new(Mutex::new(Paths::default()));
            let shared = Arc::clone(&paths);
            std::thread::Builder::new()
                .name("skillserve-watch".into())
                .spawn(move || read_events(inotify, &shared, &changes))?;
            Ok(InotifyWatcher { watches, paths })
        }

        pub fn watch(&mut self, dir: &Arc<Path>) -> Result<(), WatchError> {
            let wd = self
                .watches
                .add(&**dir, mask())
                .map_err(|err| match err.raw_os_error() {
                    Some(libc::ENOENT) | Some(libc::ENOTDIR) => WatchError::Missing,
                    Some(libc::ENOSPC) => WatchError::Other(
                        "the inotify watch limit is reached (raise fs.inotify.max_user_watches)"
                            .into(),
                    ),
                    _ => WatchError::Other(err.to_string()),
                })?;
            let mut paths = self.paths.lock().unwrap_or_else(PoisonError::into_inner);
            // The path led to another folder before: forget it there, and
            // stop watching that folder if no other path leads to it.
            if paths.by_path.get(&**dir).is_some_and(|old| *old != wd)
                && let Some(unused) = paths.forget(dir)
            {
                let _ = self.watches.remove(unused);
            }
            paths.by_path.insert(Arc::clone(dir), wd.clone());
            match paths.by_wd.entry(wd) {
                std::collections::hash_map::Entry::Vacant(entry) => {
                    entry.insert(Aliases {
                        first: Arc::clone(dir),
                        more: Vec::new(),
                    });
                }
                std::collections::hash_map::Entry::Occupied(mut entry) => {
                    let aliases = entry.get_mut();
                    if !aliases.iter().any(|p| p == dir) {
                        aliases.more.push(Arc::clone(dir));
                    }
                }
            }
            Ok(())
        }

        pub fn unwatch(&mut self, dir: &Path) {
            let unused = self
                .paths
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .forget(dir);
            if let Some(wd) = unused {
                // The folder may be gone already, which removed the watch.
                let _ = self.watches.remove(wd);
            }
        }
    }

    /// Reads events until the inotify descriptor fails or nobody listens.
    fn read_events(mut inotify: Inotify, paths: &Mutex<Paths>, changes: &UnboundedSender<Change>) {
        let mut buffer = vec![0; 64 * 1024];
        loop {
            let events = match inotify.read_events_blocking(&mut buffer) {
                Ok(events) => events,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    tracing::warn!("file watching stopped: {err}");
                    return;
                }
            };
            let mut paths = paths.lock().unwrap_or_else(PoisonError::into_inner);
            for event in events {
                let change = translate(&event.wd, event.mask, event.name, &mut paths);
                if let Some(change) = change
                    && changes.send(change).is_err()
                {
                    return;
                }
            }
        }
    }

    /// The change one event stands for, if any.
    fn translate(
        wd: &WatchDescriptor,
        mask: EventMask,
        name: Option<&OsStr>,
        paths: &mut Paths,
    ) -> Option<Change> {
        if mask.contains(EventMask::Q_OVERFLOW) {
            return Some(Change {
                kind: ChangeKind::Overflow,
                paths: Vec::new(),
            });
        }
        if mask.contains(EventMask::IGNORED) {
            // The kernel dropped the watch (the folder is gone, or we asked).
            if let Some(aliases) = paths.by_wd.remove(wd) {
                for path in aliases.iter() {
                    paths.by_path.remove(&**path);
                }
            }
            return None;
        }
        let watched = paths.by_wd.get(wd)?;
        let kind = if mask.intersects(
            EventMask::DELETE
                | EventMask::MOVED_FROM
                | EventMask::DELETE_SELF
                | EventMask::MOVE_SELF,
        ) {
            ChangeKind::Removed
        } else {
            ChangeKind::Modified
        };
        let paths = match name {
            Some(name) => watched.iter().map(|dir| dir.join(name)).collect(),
            None => watched.iter().map(|dir| dir.to_path_buf()).collect(),
        };
        Some(Change { kind, paths })
    }
}

/// `notify`'s recommended watcher. Used where there is no inotify; on Linux
/// it is only built and tested, so that it cannot rot unnoticed.
#[cfg_attr(target_os = "linux", allow(dead_code))]
mod notify_backend {
    use notify::event::ModifyKind;
    use notify::{EventKind, RecursiveMode, Watcher};

    use super::*;

    pub struct NotifyWatcher(notify::RecommendedWatcher);

    impl NotifyWatcher {
        pub fn new(changes: UnboundedSender<Change>) -> io::Result<NotifyWatcher> {
            let watcher =
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    if let Some(change) = translate(event) {
                        let _ = changes.send(change);
                    }
                })
                .map_err(io::Error::other)?;
            Ok(NotifyWatcher(watcher))
        }

        pub fn watch(&mut self, dir: &Arc<Path>) -> Result<(), WatchError> {
            if !dir.is_dir() {
                return Err(WatchError::Missing);
            }
            self.0
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|err| match &err.kind {
                    notify::ErrorKind::PathNotFound => WatchError::Missing,
                    notify::ErrorKind::Io(io) if io.kind() == io::ErrorKind::NotFound => {
                        WatchError::Missing
                    }
                    _ => WatchError::Other(err.to_string()),
                })
        }

        pub fn unwatch(&mut self, dir: &Path) {
            // The folder may be gone already, which removed the watch.
            let _ = self.0.unwatch(dir);
        }
    }

    fn translate(event: notify::Result<notify::Event>) -> Option<Change> {
        let event = match event {
            Ok(event) => event,
            Err(err) => {
                tracing::debug!("watch error: {err}");
                return Some(Change {
                    kind: ChangeKind::Overflow,
                    paths: err.paths,
                });
            }
        };
        let kind = match event.kind {
            // Reads, including the server's own: every call opens a SKILL.md.
            EventKind::Access(_) => return None,
            _ if event.need_rescan() => ChangeKind::Overflow,
            EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_)) => ChangeKind::Removed,
            _ => ChangeKind::Modified,
        };
        Some(Change {
            kind,
            paths: event.paths,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::sync::mpsc;

    /// Waits for the first change that concerns `path`.
    async fn change_of(
        changes: &mut mpsc::UnboundedReceiver<Change>,
        path: &Path,
    ) -> Option<ChangeKind> {
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let change = changes.recv().await?;
                if change.paths.iter().any(|p| p == path) {
                    return Some(change.kind);
                }
            }
        })
        .await
        .ok()
        .flatten()
    }

    /// Each backend sees a file appear and go, and never reports a read.
    macro_rules! backend_test {
        ($name:ident, $watcher:ty) => {
            #[tokio::test]
            async fn $name() {
                let dir = tempfile::tempdir().unwrap();
                let file = dir.path().join("SKILL.md");
                let (sender, mut changes) = mpsc::unbounded_channel();
                let mut watcher = <$watcher>::new(sender).unwrap();
                watcher.watch(&Arc::from(dir.path())).unwrap();
                std::fs::write(&file, "x").unwrap();
                assert_eq!(
                    change_of(&mut changes, &file).await,
                    Some(ChangeKind::Modified)
                );
                // Drain what the write produced, then read: nothing arrives.
                tokio::time::sleep(Duration::from_millis(100)).await;
                while changes.try_recv().is_ok() {}
                std::fs::read(&file).unwrap();
                tokio::time::sleep(Duration::from_millis(100)).await;
                assert!(changes.try_recv().is_err(), "a read is not a change");
                std::fs::remove_file(&file).unwrap();
                assert_eq!(
                    change_of(&mut changes, &file).await,
                    Some(ChangeKind::Removed)
                );
                assert!(matches!(
                    watcher.watch(&Arc::from(dir.path().join("missing"))),
                    Err(WatchError::Missing)
                ));
            }
        };
    }

    #[cfg(target_os = "linux")]
    backend_test!(
        inotify_reports_changes_not_reads,
        inotify_backend::InotifyWatcher
    );
    backend_test!(
        notify_reports_changes_not_reads,
        notify_backend::NotifyWatcher
    );
}
