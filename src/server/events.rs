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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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

/// Whether every change the kernel has reported has reached the watch task:
/// what a call that finds no skill asks before it trusts the snapshot
/// (behaviour.md §6). A change is on its way while it waits in the kernel's
/// queue, while the event thread holds it, and while it waits in the channel
/// to the watch task.
#[derive(Debug, Default)]
pub struct Backlog {
    /// Changes the event thread sent, and those the watch task took.
    sent: AtomicU64,
    taken: AtomicU64,
    /// The event thread is reading or sending events.
    busy: AtomicBool,
    /// A second descriptor of the inotify instance, to ask the kernel how
    /// many bytes of events wait to be read.
    #[cfg(target_os = "linux")]
    queue: Option<std::os::fd::OwnedFd>,
}

impl Backlog {
    /// The watch task took one change off the channel (after acting on it).
    pub fn took(&self) {
        self.taken.fetch_add(1, Ordering::SeqCst);
    }

    fn sent(&self) {
        self.sent.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether no change reported so far is still on its way to the watch
    /// task. An error asking the kernel counts as "maybe".
    pub fn is_clear(&self) -> bool {
        if self.busy.load(Ordering::SeqCst)
            || self.sent.load(Ordering::SeqCst) != self.taken.load(Ordering::SeqCst)
        {
            return false;
        }
        #[cfg(target_os = "linux")]
        if let Some(queue) = &self.queue {
            return rustix::io::ioctl_fionread(queue).is_ok_and(|bytes| bytes == 0);
        }
        true
    }
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

    /// The paths of one watch: nearly always one, so without a list then
    /// (24 bytes).
    enum Aliases {
        One(Arc<Path>),
        Many(Vec<Arc<Path>>),
    }

    impl Aliases {
        fn iter(&self) -> impl Iterator<Item = &Arc<Path>> {
            match self {
                Aliases::One(path) => std::slice::from_ref(path).iter(),
                Aliases::Many(paths) => paths.iter(),
            }
        }

        fn add(&mut self, path: &Arc<Path>) {
            if self.iter().any(|p| p == path) {
                return;
            }
            match self {
                Aliases::One(first) => {
                    *self = Aliases::Many(vec![Arc::clone(first), Arc::clone(path)])
                }
                Aliases::Many(paths) => paths.push(Arc::clone(path)),
            }
        }

        /// Removes `path`; `false` when it was the last.
        fn remove(&mut self, path: &Path) -> bool {
            match self {
                Aliases::One(first) => **first != *path,
                Aliases::Many(paths) => {
                    paths.retain(|p| **p != *path);
                    !paths.is_empty()
                }
            }
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
        backlog: Arc<Backlog>,
    }

    impl InotifyWatcher {
        pub fn new(changes: UnboundedSender<Change>) -> io::Result<InotifyWatcher> {
            let inotify = Inotify::init()?;
            let watches = inotify.watches();
            let paths = Arc::new(Mutex::new(Paths::default()));
            let backlog = Arc::new(Backlog {
                queue: rustix::io::dup(&inotify).ok(),
                ..Backlog::default()
            });
            let shared = (Arc::clone(&paths), Arc::clone(&backlog));
            std::thread::Builder::new()
                .name("skillserve-watch".into())
                .spawn(move || read_events(inotify, &shared.0, &changes, &shared.1))?;
            Ok(InotifyWatcher {
                watches,
                paths,
                backlog,
            })
        }

        pub fn backlog(&self) -> Arc<Backlog> {
            Arc::clone(&self.backlog)
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
                    entry.insert(Aliases::One(Arc::clone(dir)));
                }
                std::collections::hash_map::Entry::Occupied(mut entry) => entry.get_mut().add(dir),
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
    /// It waits with `poll` and reads without blocking, so that it is marked
    /// busy before any event leaves the kernel's queue ([`Backlog`]).
    fn read_events(
        mut inotify: Inotify,
        paths: &Mutex<Paths>,
        changes: &UnboundedSender<Change>,
        backlog: &Backlog,
    ) {
        use rustix::event::{PollFd, PollFlags, poll};
        let mut buffer = vec![0; 64 * 1024];
        loop {
            let mut ready = [PollFd::new(&inotify, PollFlags::IN)];
            match poll(&mut ready, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(err) => {
                    tracing::warn!("file watching stopped: {err}");
                    return;
                }
            }
            backlog.busy.store(true, Ordering::SeqCst);
            let events = match inotify.read_events(&mut buffer) {
                Ok(events) => events,
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                    ) =>
                {
                    backlog.busy.store(false, Ordering::SeqCst);
                    continue;
                }
                Err(err) => {
                    tracing::warn!("file watching stopped: {err}");
                    return;
                }
            };
            let mut paths = paths.lock().unwrap_or_else(PoisonError::into_inner);
            for event in events {
                let change = translate(&event.wd, event.mask, event.name, &mut paths);
                if let Some(change) = change {
                    backlog.sent();
                    if changes.send(change).is_err() {
                        return;
                    }
                }
            }
            drop(paths);
            backlog.busy.store(false, Ordering::SeqCst);
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

    pub struct NotifyWatcher(notify::RecommendedWatcher, Arc<Backlog>);

    impl NotifyWatcher {
        pub fn new(changes: UnboundedSender<Change>) -> io::Result<NotifyWatcher> {
            let backlog = Arc::new(Backlog::default());
            let counted = Arc::clone(&backlog);
            let watcher =
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    counted.busy.store(true, Ordering::SeqCst);
                    if let Some(change) = translate(event) {
                        counted.sent();
                        let _ = changes.send(change);
                    }
                    counted.busy.store(false, Ordering::SeqCst);
                })
                .map_err(io::Error::other)?;
            Ok(NotifyWatcher(watcher, backlog))
        }

        /// What `notify`'s thread has sent and the watch task not taken
        /// (what waits inside the platform's own queue cannot be seen).
        pub fn backlog(&self) -> Arc<Backlog> {
            Arc::clone(&self.1)
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
