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
//! It is also lean, which matters at 100,000 watched skill folders: one table
//! from the kernel's bare watch descriptor to the caller's shared path, while
//! the caller keeps the way back with the descriptor it was given (and uses
//! it as the folder's identity: the kernel gives every path to one folder the
//! same descriptor). Two tables and the `inotify` crate's 16-byte descriptors
//! cost 13.2 MiB there; this costs 7.8 MiB.
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
    /// The inotify instance, to ask the kernel how many bytes of events
    /// wait to be read.
    #[cfg(target_os = "linux")]
    queue: Option<Arc<std::os::fd::OwnedFd>>,
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
            return rustix::io::ioctl_fionread(&**queue).is_ok_and(|bytes| bytes == 0);
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

/// The watcher this platform uses, and what it returns for a watch: two
/// paths with the same id lead to one folder.
#[cfg(target_os = "linux")]
pub use inotify_backend::{Id as WatchId, InotifyWatcher as PlatformWatcher};
#[cfg(not(target_os = "linux"))]
pub use notify_backend::{Id as WatchId, NotifyWatcher as PlatformWatcher};

#[cfg(target_os = "linux")]
mod inotify_backend {
    use std::collections::HashMap;
    use std::ffi::OsStr;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::os::unix::ffi::OsStrExt;
    use std::sync::{Arc, Mutex, PoisonError};

    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;

    use super::*;

    /// A watch: inotify's watch descriptor. The kernel gives every path to
    /// one folder the same descriptor, so it is also the folder's identity.
    pub type Id = i32;

    /// Everything but `IN_OPEN`, `IN_ACCESS` and `IN_CLOSE_NOWRITE`: reads
    /// change nothing a scan finds. `ONLYDIR` refuses to watch a file that
    /// replaced a folder.
    const MASK: WatchFlags = WatchFlags::CREATE
        .union(WatchFlags::DELETE)
        .union(WatchFlags::MODIFY)
        .union(WatchFlags::CLOSE_WRITE)
        .union(WatchFlags::ATTRIB)
        .union(WatchFlags::MOVED_FROM)
        .union(WatchFlags::MOVED_TO)
        .union(WatchFlags::DELETE_SELF)
        .union(WatchFlags::MOVE_SELF)
        .union(WatchFlags::ONLYDIR);

    /// Which paths each watch descriptor stands for, to name the entries of
    /// its events. The paths are the watcher's callers' own (shared, not
    /// copied), and the callers keep the way back (path to descriptor): at
    /// 100,000 skill folders, a second table here cost 4 MB.
    type Paths = HashMap<Id, Aliases>;

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

    /// inotify, read on a thread of its own.
    pub struct InotifyWatcher {
        inotify: Arc<OwnedFd>,
        paths: Arc<Mutex<Paths>>,
        backlog: Arc<Backlog>,
    }

    impl InotifyWatcher {
        pub fn new(changes: UnboundedSender<Change>) -> io::Result<InotifyWatcher> {
            let inotify = Arc::new(inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?);
            let paths = Arc::new(Mutex::new(Paths::default()));
            let backlog = Arc::new(Backlog {
                queue: Some(Arc::clone(&inotify)),
                ..Backlog::default()
            });
            let shared = (
                Arc::clone(&inotify),
                Arc::clone(&paths),
                Arc::clone(&backlog),
            );
            std::thread::Builder::new()
                .name("skillserve-watch".into())
                .spawn(move || read_events(&shared.0, &shared.1, &changes, &shared.2))?;
            Ok(InotifyWatcher {
                inotify,
                paths,
                backlog,
            })
        }

        pub fn backlog(&self) -> Arc<Backlog> {
            Arc::clone(&self.backlog)
        }

        /// Watches `dir` (unwatch a path before watching it again).
        pub fn watch(
            &mut self,
            dir: &Arc<Path>,
            _meta: &std::fs::Metadata,
        ) -> Result<Id, WatchError> {
            let wd = inotify::add_watch(&*self.inotify, &**dir, MASK).map_err(|err| match err {
                Errno::NOENT | Errno::NOTDIR => WatchError::Missing,
                Errno::NOSPC => WatchError::Other(
                    "the inotify watch limit is reached (raise fs.inotify.max_user_watches)".into(),
                ),
                _ => WatchError::Other(io::Error::from(err).to_string()),
            })?;
            let mut paths = self.paths.lock().unwrap_or_else(PoisonError::into_inner);
            match paths.entry(wd) {
                std::collections::hash_map::Entry::Vacant(entry) => {
                    entry.insert(Aliases::One(Arc::clone(dir)));
                }
                std::collections::hash_map::Entry::Occupied(mut entry) => entry.get_mut().add(dir),
            }
            Ok(wd)
        }

        /// Stops watching `dir`, which `watch` gave `wd`; the folder stays
        /// watched while another path leads to it.
        pub fn unwatch(&mut self, dir: &Path, wd: Id) {
            let mut paths = self.paths.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(aliases) = paths.get_mut(&wd) else {
                // The kernel dropped the watch already (the folder is gone).
                return;
            };
            if !aliases.remove(dir) {
                paths.remove(&wd);
                drop(paths);
                // The folder may be gone already, which removed the watch.
                let _ = inotify::remove_watch(&*self.inotify, wd);
            }
        }
    }

    /// Reads events until the inotify descriptor fails or nobody listens.
    /// It waits with `poll` and reads without blocking, so that it is marked
    /// busy before any event leaves the kernel's queue ([`Backlog`]).
    fn read_events(
        inotify: &OwnedFd,
        paths: &Mutex<Paths>,
        changes: &UnboundedSender<Change>,
        backlog: &Backlog,
    ) {
        use rustix::event::{PollFd, PollFlags, poll};
        let mut buffer = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
        loop {
            let mut ready = [PollFd::new(inotify, PollFlags::IN)];
            match poll(&mut ready, None) {
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(err) => {
                    tracing::warn!("file watching stopped: {err}");
                    return;
                }
            }
            backlog.busy.store(true, Ordering::SeqCst);
            let mut events = inotify::Reader::new(inotify, &mut buffer);
            let mut paths = paths.lock().unwrap_or_else(PoisonError::into_inner);
            // One read: the events it brought, then back to `poll`.
            loop {
                let event = match events.next() {
                    Ok(event) => event,
                    Err(Errno::INTR | Errno::AGAIN) => break,
                    Err(err) => {
                        tracing::warn!("file watching stopped: {err}");
                        return;
                    }
                };
                let name = event
                    .file_name()
                    .map(|name| OsStr::from_bytes(name.to_bytes()));
                if let Some(change) = translate(event.wd(), event.events(), name, &mut paths) {
                    backlog.sent();
                    if changes.send(change).is_err() {
                        return;
                    }
                }
                if events.is_buffer_empty() {
                    break;
                }
            }
            drop(paths);
            backlog.busy.store(false, Ordering::SeqCst);
        }
    }

    /// The change one event stands for, if any.
    fn translate(
        wd: Id,
        mask: ReadFlags,
        name: Option<&OsStr>,
        paths: &mut Paths,
    ) -> Option<Change> {
        if mask.contains(ReadFlags::QUEUE_OVERFLOW) {
            return Some(Change {
                kind: ChangeKind::Overflow,
                paths: Vec::new(),
            });
        }
        if mask.contains(ReadFlags::IGNORED) {
            // The kernel dropped the watch (the folder is gone, or we asked).
            paths.remove(&wd);
            return None;
        }
        let watched = paths.get(&wd)?;
        let kind = if mask.intersects(
            ReadFlags::DELETE
                | ReadFlags::MOVED_FROM
                | ReadFlags::DELETE_SELF
                | ReadFlags::MOVE_SELF,
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
    use std::fs::Metadata;

    use notify::event::ModifyKind;
    use notify::{EventKind, RecursiveMode, Watcher};

    use crate::disk::FileId;

    use super::*;

    /// A watch: the identity of the folder watched, to tell two paths to
    /// one folder apart.
    pub type Id = FileId;

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

        /// Watches `dir`, which `meta` describes.
        pub fn watch(&mut self, dir: &Arc<Path>, meta: &Metadata) -> Result<Id, WatchError> {
            // Some backends (FSEvents) watch a path that does not exist.
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
                })?;
            Ok(identity(meta))
        }

        pub fn unwatch(&mut self, dir: &Path, _id: Id) {
            // The folder may be gone already, which removed the watch.
            let _ = self.0.unwatch(dir);
        }
    }

    #[cfg(unix)]
    fn identity(meta: &Metadata) -> FileId {
        FileId::of(meta)
    }

    // Without inodes, aliases cannot be told apart: each path gets an
    // identity of its own.
    #[cfg(not(unix))]
    fn identity(_meta: &Metadata) -> FileId {
        FileId::unique()
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
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
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
                let meta = std::fs::metadata(dir.path()).unwrap();
                watcher.watch(&Arc::from(dir.path()), &meta).unwrap();
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
                // A folder that is gone by the time it is watched.
                let gone = dir.path().join("gone");
                std::fs::create_dir(&gone).unwrap();
                let meta = std::fs::metadata(&gone).unwrap();
                std::fs::remove_dir(&gone).unwrap();
                assert!(matches!(
                    watcher.watch(&Arc::from(gone), &meta),
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
