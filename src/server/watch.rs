//! File watching: turn file-system events into refreshes (behaviour.md §6).
//!
//! Rather than watching whole trees recursively (which would follow
//! `node_modules`, hidden folders and every skill's own files into the inotify
//! limit), the watcher watches, each without recursion, exactly what the last
//! scan looked at:
//!
//! - every directory it listed (roots and the folders leading to skills): any
//!   change there may add or remove a skill;
//! - every skill folder, for changes to its `SKILL.md`;
//! - for a root that does not exist yet, its nearest existing ancestor, for the
//!   path appearing (never recursively, so a home directory costs one watch);
//! - the folders of the plugin manifest and settings files, of
//!   skillserve's own `config.toml`, of the approvals of quarantined skills
//!   (`trusted.toml`) and of the lock of installed skills (`sources.lock`),
//!   for those files;
//! - every folder of a skill that is scanned before it is served (one not
//!   the user's own), for any change: an edit to any of its files may
//!   quarantine it or release it.
//!
//! After every refresh the watch set is brought in line with the new snapshot,
//! so a root created after start-up is watched from then on. Bursts of events
//! are debounced into one refresh. If the watcher cannot be set up (inotify
//! limits, say), skillserve logs it and relies on the interval.
//!
//! What the watcher covers decides what the interval does
//! ([`Registry::set_watched`]): while every folder of the plan is watched, on
//! a file system whose changes the kernel reports, the interval only checks
//! what no watched folder can show (`SKILL.md` files that are symlinks: their
//! targets may lie anywhere); otherwise it rescans everything, as without a
//! watcher. The paths of skill folders are the snapshot's own (shared), so
//! watching 100,000 skills costs no copy of their paths.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::disk;
use crate::installed;
use crate::memory;
use crate::plugins;
use crate::roots;
use crate::scan;
use crate::server::events::{
    self, Backlog, Change, ChangeKind, PlatformWatcher, WatchError, WatchId,
};
use crate::server::registry::Registry;
use crate::snapshot::{self, Snapshot};

/// Quiet time that ends a burst of events.
pub const DEBOUNCE: Duration = Duration::from_millis(200);
/// A burst that never goes quiet still refreshes this often.
const MAX_DELAY: Duration = Duration::from_secs(1);

/// Which events in a watched directory matter. Kept small (16 bytes): there
/// is one per skill folder.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Interest {
    /// Any entry (a listed directory).
    any: bool,
    /// Any entry but version-control metadata and `node_modules`, hidden
    /// ones too (a folder of a skill that is scanned before it is served:
    /// the scan reads its hidden files).
    screened: bool,
    /// `SKILL.md` / `skill.md` (a skill folder).
    skill_md: bool,
    /// What the few other folders watch for.
    more: Option<Box<More>>,
}

/// What a folder other than a root or a skill folder is watched for.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct More {
    /// Entries with these names (a settings file in `~/.claude`).
    names: Vec<Box<str>>,
    /// Paths below the directory that do not exist yet; an event on any
    /// ancestor of one of them (or on it) matters.
    toward: Vec<PathBuf>,
}

impl Interest {
    fn more(&mut self) -> &mut More {
        self.more.get_or_insert_default()
    }
}

/// The directories to watch and what matters in each, but for the folders
/// of the skills the snapshot loaded: those are the snapshot's own
/// ([`skill_dirs`]), and a watched folder the plan does not name is one of
/// them, where only its `SKILL.md` matters. (A map of them all cost 45
/// bytes a skill, for what the watch set already knows.)
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    dirs: HashMap<Arc<Path>, Interest>,
}

/// The folders of the skills `snapshot` loaded (served, shadowed and
/// withheld), whose `SKILL.md` is watched.
fn skill_dirs(snapshot: &Snapshot) -> impl Iterator<Item = &Arc<Path>> {
    let withheld = snapshot.withheld().iter().map(|w| &w.skill);
    snapshot.candidates().iter().chain(withheld).map(|s| &s.dir)
}

impl Plan {
    /// The plan for `snapshot`, plus the plugin files in `extra_files`.
    pub fn new(snapshot: &Snapshot, extra_files: &[PathBuf]) -> Plan {
        let mut plan = Plan::default();
        for dir in &snapshot.dirs.listed {
            plan.entry(dir).any = true;
        }
        for dir in &snapshot.dirs.other_skill_dirs {
            plan.entry(dir).skill_md = true;
        }
        // Skills scanned before they are served: a change to any of their
        // files may quarantine one or release it.
        for dir in &snapshot.screened_dirs {
            plan.entry(dir).screened = true;
        }
        for missing in snapshot
            .missing_roots
            .iter()
            .chain(&snapshot.dirs.missing_entries)
        {
            plan.toward(missing);
        }
        // A root that is a symlink can be re-pointed without a change inside
        // it: watch its name in its parent.
        // (Installed roots are store entries, never symlinks: one that
        // became one no longer verifies.)
        for root in snapshot.roots.iter().filter(|r| r.origin.is_none()) {
            let is_link =
                std::fs::symlink_metadata(&root.path).is_ok_and(|m| m.file_type().is_symlink());
            if is_link
                && let (Some(parent), Some(name)) = (root.path.parent(), root.path.file_name())
            {
                plan.entry(parent)
                    .more()
                    .names
                    .push(name.to_string_lossy().into());
            }
        }
        for file in extra_files {
            let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
                continue;
            };
            if dir.is_dir() {
                plan.entry(dir)
                    .more()
                    .names
                    .push(name.to_string_lossy().into());
            } else {
                plan.toward(file);
            }
        }
        plan
    }

    fn entry(&mut self, dir: &Path) -> &mut Interest {
        if !self.dirs.contains_key(dir) {
            self.dirs.insert(Arc::from(dir), Interest::default());
        }
        self.dirs.get_mut(dir).expect("inserted above")
    }

    /// Watch the nearest existing ancestor of `missing` for it to appear.
    fn toward(&mut self, missing: &Path) {
        if let Some(existing) = missing.ancestors().skip(1).find(|a| a.is_dir()) {
            self.entry(existing)
                .more()
                .toward
                .push(missing.to_path_buf());
        }
    }

    /// Whether `change` can change what a scan finds; `watched` holds the
    /// skill folders the plan does not name.
    fn is_relevant(&self, change: &Change, watched: &Watched) -> bool {
        change.kind == ChangeKind::Overflow
            || change
                .paths
                .iter()
                .any(|path| self.path_matters(path, watched))
    }

    fn path_matters(&self, path: &Path, watched: &Watched) -> bool {
        // An event about a watched directory itself (deleted, moved).
        if self.dirs.contains_key(path) || watched.ok.contains_key(path) {
            return true;
        }
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        let skill_md = || roots::SKILL_FILES.iter().any(|file| name == *file);
        let Some(interest) = self.dirs.get(parent) else {
            // A skill folder: only its `SKILL.md` matters.
            return watched.ok.contains_key(parent) && skill_md();
        };
        let skipped = scan::is_skipped(name);
        let name = name.to_string_lossy();
        (interest.any && !skipped)
            || (interest.screened && !crate::disk::is_metadata(name.as_bytes()))
            || (interest.skill_md && roots::SKILL_FILES.contains(&&*name))
            || interest.more.as_ref().is_some_and(|more| {
                more.names.iter().any(|n| **n == *name)
                    || more.toward.iter().any(|missing| missing.starts_with(path))
            })
    }
}

/// Watches for changes and asks `registry` for refreshes until the task is
/// aborted. Returns early (after logging why) if no watcher can be created.
pub async fn run(registry: Arc<Registry>, interval: Option<Duration>) {
    let (changes, mut incoming) = mpsc::unbounded_channel();
    let (watcher, backlog) = match PlatformWatcher::new(changes) {
        Ok(watcher) => {
            let backlog = watcher.backlog();
            registry.set_backlog(Arc::clone(&backlog));
            (Arc::new(Mutex::new(watcher)), backlog)
        }
        Err(err) => {
            tracing::warn!(
                "file watching is unavailable ({err}); {}",
                fallback(interval)
            );
            // The refresh an armed watcher makes at once (installed skills
            // are checked in full by it).
            registry.request_refresh();
            return;
        }
    };
    let mut state = Watched::default();
    let mut refreshes = registry.refreshes();
    let (mut plan, _) = rearm(&registry, &watcher, &mut state, interval).await;
    let mut armed = registry.current();
    // Catch anything that changed between the start-up scan and now. Logged
    // after it: from this line on, every change is seen.
    registry.refresh_and_wait().await;
    tracing::info!("watching {} folders for changes", state.ok.len());
    // Arming thousands of watches and that rescan freed much more than they
    // keep.
    tokio::task::spawn_blocking(memory::release_free_memory);
    // Whatever happens to this task (the event thread stopped, say), the
    // interval rescans everything again once it is gone.
    let _unwatched = Unwatched(Arc::clone(&registry));
    registry.set_watched(state.covers_all());

    loop {
        tokio::select! {
            change = incoming.recv() => {
                let Some(change) = change else { return };
                state.forget_removed(&change);
                if !plan.is_relevant(&change, &state) {
                    backlog.took();
                    continue;
                }
                tracing::debug!(kind = ?change.kind, paths = ?change.paths, "change detected");
                // Pending before taken: a miss never sees neither.
                registry.set_changes_pending(true);
                backlog.took();
                if !debounce(&mut incoming, &mut state, &backlog).await {
                    return;
                }
                registry.request_refresh();
                registry.set_changes_pending(false);
            }
            finished = refreshes.changed() => {
                if finished.is_err() {
                    return;
                }
                // A refresh that found the same skills and folders needs no
                // new plan (the interval's rescans, mostly).
                let current = registry.current();
                let same = current.snapshot.same_skills(&armed.snapshot)
                    && Arc::ptr_eq(&current.profiles, &armed.profiles)
                    && current.snapshot.dirs == armed.snapshot.dirs
                    && current.snapshot.screened_dirs == armed.snapshot.screened_dirs
                    && current.snapshot.missing_roots == armed.snapshot.missing_roots;
                if same && state.stale.is_empty() {
                    continue;
                }
                armed = current;
                let (next, grew) = rearm(&registry, &watcher, &mut state, interval).await;
                plan = next;
                registry.set_watched(state.covers_all());
                tracing::debug!("watch set updated: {} folders watched", state.ok.len());
                // A folder created during the scan may have gained entries
                // before it was watched: look once more (cheap, cached).
                if grew {
                    registry.request_refresh();
                }
            }
        }
    }
}

/// Tells the registry, when dropped, that nothing is watched any more.
struct Unwatched(Arc<Registry>);

impl Drop for Unwatched {
    fn drop(&mut self) {
        self.0.set_watched(false);
    }
}

/// Waits until events stop for [`DEBOUNCE`] (at most [`MAX_DELAY`]), letting
/// `state` see each of them (a folder removed during the burst must be
/// forgotten too). Returns false when the event channel closed.
async fn debounce(
    incoming: &mut mpsc::UnboundedReceiver<Change>,
    state: &mut Watched,
    backlog: &Backlog,
) -> bool {
    let give_up = Instant::now() + MAX_DELAY;
    loop {
        let quiet_until = (Instant::now() + DEBOUNCE).min(give_up);
        match tokio::time::timeout_at(quiet_until, incoming.recv()).await {
            Ok(Some(change)) => {
                state.forget_removed(&change);
                backlog.took();
                if Instant::now() >= give_up {
                    return true;
                }
            }
            Ok(None) => return false,
            Err(_) => return true,
        }
    }
}

/// What is being watched. The paths are shared with the plan.
#[derive(Debug, Default)]
struct Watched {
    /// Folders with a live watch, with the watch each got. Several paths can
    /// lead to one folder (a symlink); they then share one watch.
    ok: HashMap<Arc<Path>, WatchId>,
    /// Folders whose watch may be gone or point at the wrong folder (deleted,
    /// moved, a symlink re-pointed): unwatched, then watched again.
    stale: HashMap<Arc<Path>, WatchId>,
    /// Folders that could not be watched (permissions, the inotify limit).
    /// Not retried, and not logged again, while they stay in the plan.
    failed: HashSet<Arc<Path>>,
    /// Watched folders on a file system where the watcher cannot see every
    /// change ([`events::may_miss_changes`]: a network file system, say).
    blind: HashSet<Arc<Path>>,
    /// Devices already asked whether the watcher sees their changes.
    devices: HashMap<u64, bool>,
}

impl Watched {
    /// Whether every folder of the plan is watched, on a file system whose
    /// changes the watcher sees: then nothing but the targets of linked
    /// `SKILL.md` files can change unseen.
    fn covers_all(&self) -> bool {
        self.failed.is_empty() && self.blind.is_empty()
    }
}

impl Watched {
    /// A watched folder that was deleted or moved away lost its watch with
    /// it, and so did every other path to the same folder; a path renamed
    /// over (a symlink re-pointed) may lead elsewhere now. Marks the path
    /// stale; the next re-arm marks every other path with the same watch too
    /// ([`Watched::changes_for`]) and watches whatever is there now.
    fn forget_removed(&mut self, change: &Change) {
        if change.kind != ChangeKind::Removed {
            return;
        }
        for path in &change.paths {
            self.failed.remove(path.as_path());
            self.blind.remove(path.as_path());
            if let Some((path, id)) = self.ok.remove_entry(path.as_path()) {
                self.stale.insert(path, id);
            }
        }
    }
}

/// Brings the watch set in line with the current snapshot. Returns the new
/// plan and whether folders (other than at start-up) were added.
///
/// Planning looks at the disk (is a root a symlink, does a folder exist) and
/// each (un)watch is a system call round trip through notify's thread:
/// thousands of them belong on a blocking thread, not on the executor.
async fn rearm(
    registry: &Arc<Registry>,
    watcher: &Arc<Mutex<PlatformWatcher>>,
    state: &mut Watched,
    interval: Option<Duration>,
) -> (Plan, bool) {
    let served = registry.current();
    // The plugin manifests and settings, config.toml, and the lock of
    // installed skills: `add`, `update` and `remove` rewrite it.
    let settings = registry.settings();
    let mut files = plugins::config_files(&settings.config);
    files.extend(registry.settings_file());
    files.extend(installed::lock_files(&settings.config));
    // An approval (`skillserve trust`) may release a quarantined skill.
    files.extend(snapshot::approvals_file(&settings.config));
    let watcher = Arc::clone(watcher);
    let first = state.ok.is_empty() && state.failed.is_empty();
    let mut owned = std::mem::take(state);
    let outcome = tokio::task::spawn_blocking(move || {
        let plan = Plan::new(&served.snapshot, &files);
        let changes = owned.changes_for(&plan, &served.snapshot);
        let applied = changes.apply(&watcher, &fallback(interval), &mut owned.devices);
        (plan, owned, applied)
    })
    .await;
    let (
        plan,
        owned,
        Applied {
            added,
            failed,
            blind,
        },
    ) = match outcome {
        Ok(done) => done,
        Err(err) => {
            tracing::error!("updating the file watches failed: {err}");
            return (Plan::default(), false);
        }
    };
    *state = owned;
    let grew = !added.is_empty() && !first;
    state.ok.extend(added);
    state.failed.extend(failed);
    if !blind.is_empty() && state.blind.is_empty() {
        tracing::info!(
            "{} is on a file system whose changes may not all be reported; it is rescanned every interval",
            blind[0].display()
        );
    }
    state.blind.extend(blind);
    (plan, grew)
}

/// The watches to drop and to add to follow a new plan.
struct Changes {
    unwatch: Vec<(Arc<Path>, WatchId)>,
    add: Vec<Arc<Path>>,
}

impl Watched {
    /// Forgets what leaves the plan (and the skill folders of `snapshot`)
    /// and lists the (un)watches that follow it.
    fn changes_for(&mut self, plan: &Plan, snapshot: &Snapshot) -> Changes {
        let wanted: HashSet<&Path> = plan
            .dirs
            .keys()
            .chain(skill_dirs(snapshot))
            .map(|dir| &**dir)
            .collect();
        self.failed.retain(|dir| wanted.contains(&**dir));
        self.blind.retain(|dir| wanted.contains(&**dir));
        let remove: Vec<(Arc<Path>, WatchId)> = self
            .ok
            .iter()
            .filter(|(dir, _)| !wanted.contains(&***dir))
            .map(|(dir, id)| (Arc::clone(dir), *id))
            .collect();
        for (dir, _) in &remove {
            self.ok.remove(dir);
        }
        // Every other path to a folder whose watch ends (or may lead
        // elsewhere) is watched again too, since with `notify` unwatching one
        // path ends the watch of every path to the folder: one pass, however
        // many went.
        let ended: HashSet<WatchId> = remove
            .iter()
            .map(|(_, id)| *id)
            .chain(self.stale.values().copied())
            .collect();
        if !ended.is_empty() {
            let stale = &mut self.stale;
            self.ok.retain(|dir, id| {
                let keep = !ended.contains(id);
                if !keep {
                    stale.insert(Arc::clone(dir), *id);
                }
                keep
            });
        }
        let unwatch = remove.into_iter().chain(self.stale.drain()).collect();
        let add = plan
            .dirs
            .keys()
            .chain(skill_dirs(snapshot))
            .filter(|dir| !self.ok.contains_key(*dir) && !self.failed.contains(*dir))
            .cloned()
            .collect();
        Changes { unwatch, add }
    }
}

impl Changes {
    /// Applies the changes. `devices` remembers, per device, whether the
    /// watcher sees its changes ([`events::may_miss_changes`], asked once per
    /// device).
    fn apply(
        self,
        watcher: &Mutex<PlatformWatcher>,
        fallback: &str,
        devices: &mut HashMap<u64, bool>,
    ) -> Applied {
        let mut applied = Applied::default();
        if self.add.is_empty() && self.unwatch.is_empty() {
            return applied;
        }
        let mut watcher = watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (dir, id) in &self.unwatch {
            watcher.unwatch(dir, *id);
        }
        let Applied {
            added,
            failed,
            blind,
        } = &mut applied;
        for dir in self.add {
            match watch_one(&mut watcher, &dir) {
                Ok((id, device)) => {
                    let misses = *devices
                        .entry(device)
                        .or_insert_with(|| events::may_miss_changes(&dir));
                    if misses {
                        blind.push(Arc::clone(&dir));
                    }
                    added.push((dir, id));
                }
                // Gone since the scan: not a lasting failure. If it comes
                // back, its parent's event leads to a refresh and a new try.
                Err(WatchError::Missing) => {}
                Err(err) => {
                    if failed.is_empty() {
                        tracing::warn!("cannot watch {}: {err}; {fallback}", dir.display());
                    }
                    failed.push(dir);
                }
            }
        }
        if failed.len() > 1 {
            tracing::warn!("{} folders could not be watched; {fallback}", failed.len());
        }
        applied
    }
}

/// What applying [`Changes`] did.
#[derive(Default)]
struct Applied {
    /// Folders now watched, with their watches.
    added: Vec<(Arc<Path>, WatchId)>,
    /// Folders that could not be watched.
    failed: Vec<Arc<Path>>,
    /// Folders now watched whose changes may not all be reported.
    blind: Vec<Arc<Path>>,
}

/// Watches `dir`; returns its watch and the device it is on.
fn watch_one(watcher: &mut PlatformWatcher, dir: &Arc<Path>) -> Result<(WatchId, u64), WatchError> {
    let meta = std::fs::metadata(dir).map_err(|err| {
        if disk::is_gone(&err) {
            WatchError::Missing
        } else {
            WatchError::Other(err.to_string())
        }
    })?;
    let id = watcher.watch(dir, &meta)?;
    Ok((id, disk::FileId::of(&meta).device()))
}

fn fallback(interval: Option<Duration>) -> String {
    match interval {
        Some(every) => format!("changes are still picked up every {} s", every.as_secs()),
        None => "changes are picked up only when a skill is not found (--refresh-interval is 0)"
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: ChangeKind, path: &str) -> Change {
        Change {
            kind,
            paths: vec![PathBuf::from(path)],
        }
    }

    impl Plan {
        fn is_relevant_alone(&self, change: &Change) -> bool {
            self.is_relevant(change, &Watched::default())
        }
    }

    fn plan() -> Plan {
        let mut plan = Plan::default();
        plan.entry(Path::new("/root")).any = true;
        plan.entry(Path::new("/root/pdf")).skill_md = true;
        plan.entry(Path::new("/home"))
            .more()
            .toward
            .push("/home/.claude/skills".into());
        plan
    }

    #[test]
    fn changes_in_listed_dirs_matter() {
        assert!(plan().is_relevant_alone(&event(ChangeKind::Modified, "/root/new")));
    }

    #[test]
    fn only_skill_md_matters_in_a_skill_folder() {
        let plan = plan();
        assert!(plan.is_relevant_alone(&event(ChangeKind::Modified, "/root/pdf/SKILL.md")));
        assert!(!plan.is_relevant_alone(&event(ChangeKind::Modified, "/root/pdf/notes.txt")));
    }

    #[test]
    fn a_watched_folder_the_plan_does_not_name_is_a_skill_folder() {
        let mut watched = Watched::default();
        watched
            .ok
            .insert(Arc::from(Path::new("/root/docx")), WatchId::default());
        let plan = plan();
        let matters = |path: &str| plan.is_relevant(&event(ChangeKind::Modified, path), &watched);
        assert!(matters("/root/docx/SKILL.md"));
        assert!(matters("/root/docx/skill.md"));
        assert!(matters("/root/docx"));
        assert!(!matters("/root/docx/notes.md"));
        assert!(!matters("/elsewhere/SKILL.md"));
    }

    // Watches are numbers only on Linux (inotify's descriptors).
    #[cfg(target_os = "linux")]
    #[test]
    fn every_path_to_a_folder_whose_watch_ends_is_watched_again() {
        let path = |p: &str| -> Arc<Path> { Arc::from(Path::new(p)) };
        let mut plan = Plan::default();
        for dir in ["/root", "/root/alias", "/root/pdf", "/root/docx"] {
            plan.entry(Path::new(dir)).any = true;
        }
        let mut watched = Watched::default();
        // `/root/alias` and `/root/pdf` lead to one folder: one watch.
        for (dir, id) in [
            ("/root", 1),
            ("/root/alias", 2),
            ("/root/pdf", 2),
            ("/root/docx", 3),
        ] {
            watched.ok.insert(path(dir), id);
        }
        watched.forget_removed(&event(ChangeKind::Removed, "/root/alias"));
        let changes = watched.changes_for(&plan, &Snapshot::default());
        let mut unwatch: Vec<_> = changes.unwatch.iter().map(|(dir, _)| dir.clone()).collect();
        unwatch.sort();
        assert_eq!(unwatch, [path("/root/alias"), path("/root/pdf")]);
        let mut add = changes.add.clone();
        add.sort();
        assert_eq!(add, unwatch);
        assert_eq!(watched.ok.len(), 2);
        assert!(watched.stale.is_empty());
    }

    #[test]
    fn an_overflow_always_matters() {
        let overflow = Change {
            kind: ChangeKind::Overflow,
            paths: Vec::new(),
        };
        assert!(plan().is_relevant_alone(&overflow));
    }

    #[test]
    fn ancestors_of_missing_roots_matter_other_siblings_do_not() {
        let plan = plan();
        assert!(plan.is_relevant_alone(&event(ChangeKind::Modified, "/home/.claude")));
        assert!(!plan.is_relevant_alone(&event(ChangeKind::Modified, "/home/.bash_history")));
    }

    #[test]
    fn a_watched_directory_itself_matters() {
        assert!(plan().is_relevant_alone(&event(ChangeKind::Removed, "/root/pdf")));
    }
}
