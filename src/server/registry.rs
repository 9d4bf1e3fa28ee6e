//! The live set of skills: the current snapshot, and the refreshes that
//! replace it (behaviour.md §6).
//!
//! Readers take the current [`Served`] with one atomic load and keep it for the
//! whole request, so a refresh never blocks or changes a request in flight.
//! Refreshes run one at a time on a blocking thread; a refresh asked for while
//! one runs is coalesced into a single follow-up.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::config::Config;
use crate::contents::Contents;
use crate::diagnostic::Diagnostic;
use crate::disk::Stamp;
use crate::files::Files;
use crate::memory;
use crate::render;
use crate::scan::Cache;
use crate::server::events::Backlog;
use crate::snapshot::{self, Snapshot};
use crate::uri;

/// What the server serves now: a snapshot and the tool description rendered
/// from it.
#[derive(Debug)]
pub struct Served {
    pub snapshot: Snapshot,
    pub description: String,
    /// The skills `skills/list` may list, found on its first request.
    listable: OnceLock<Vec<usize>>,
}

impl Served {
    fn new(snapshot: Snapshot, description: String) -> Served {
        Served {
            snapshot,
            description,
            listable: OnceLock::new(),
        }
    }

    /// The indices (in [`Snapshot::skills`]) of the skills whose names the
    /// skills extension accepts ([`uri::unlistable`]); computed once per
    /// snapshot, when a client first asks, never at start-up.
    pub fn listable(&self) -> &[usize] {
        self.listable.get_or_init(|| {
            let skills = self.snapshot.skills().iter().enumerate();
            skills
                .filter(|(_, skill)| uri::unlistable(skill).is_none())
                .map(|(i, _)| i)
                .collect()
        })
    }
}

/// Counters of what clients list, bumped on each change, so that a listener
/// can tell which list-changed notifications to send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Versions {
    /// The `skill` tool's description (`tools/list_changed`).
    pub description: u64,
    /// The served skills' names and descriptions: the prompts and resources
    /// lists (`prompts/list_changed`, `resources/list_changed`).
    pub listing: u64,
}

impl Versions {
    /// What changed from `before` to `self`.
    fn since(self, before: Versions) -> Changed {
        Changed {
            tools: self.description != before.description,
            listing: self.listing != before.listing,
        }
    }
}

/// Which lists changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    pub tools: bool,
    pub listing: bool,
}

/// The changes of what clients list, as one listener sees them.
pub struct Changes {
    versions: watch::Receiver<Versions>,
    seen: Versions,
}

impl Changes {
    /// What changed since the last call (or since this listener was made),
    /// once something has; `None` when the registry is gone. Cancel-safe.
    pub async fn next(&mut self) -> Option<Changed> {
        self.versions.changed().await.ok()?;
        let now = *self.versions.borrow_and_update();
        let changed = now.since(self.seen);
        self.seen = now;
        Some(changed)
    }
}

/// The live set of skills.
pub struct Registry {
    config: Config,
    budget: usize,
    current: ArcSwap<Served>,
    contents: Contents,
    files: Files,
    /// Used only by the refresh that holds the gate; the mutex is never
    /// contended, it only makes the registry `Sync`.
    cache: Mutex<Cache>,
    gate: Mutex<Gate>,
    /// The number of the last finished refresh.
    finished: watch::Sender<u64>,
    /// Bumped whenever what clients list changes.
    versions: watch::Sender<Versions>,
    /// The file watcher watches every folder of the current snapshot and
    /// sees their changes (`server::watch` says so).
    watched: AtomicBool,
    /// The watcher has seen a change it has not asked a refresh for yet
    /// (it is waiting for the burst to end).
    changes_pending: AtomicBool,
    /// The changes on their way from the kernel to the watcher.
    backlog: OnceLock<Arc<Backlog>>,
}

#[derive(Default)]
struct Gate {
    running: bool,
    /// A refresh was asked for while one was running.
    pending: bool,
    /// The number of the last refresh started.
    started: u64,
}

impl Registry {
    /// Scans once (blocking) and returns the registry holding the result.
    pub fn new(config: Config, budget: usize) -> Registry {
        let mut cache = Cache::default();
        let snapshot = snapshot::load(&config, &mut cache, None);
        let description = render::tool_description(snapshot.skills(), budget);
        let files = Files::new(config.max_file_bytes);
        files.keep_only(snapshot.skills().len(), |_| true);
        Registry {
            contents: Contents::new(config.max_file_bytes),
            files,
            config,
            budget,
            current: ArcSwap::from_pointee(Served::new(snapshot, description)),
            cache: Mutex::new(cache),
            gate: Mutex::new(Gate::default()),
            finished: watch::Sender::new(0),
            versions: watch::Sender::new(Versions::default()),
            watched: AtomicBool::new(false),
            changes_pending: AtomicBool::new(false),
            backlog: OnceLock::new(),
        }
    }

    /// Where the watcher's changes come from (set once, by the watcher).
    pub fn set_backlog(&self, backlog: Arc<Backlog>) {
        let _ = self.backlog.set(backlog);
    }

    /// Whether the file watcher covers every folder the current snapshot
    /// came from: then a change anywhere but in the target of a linked
    /// `SKILL.md` leads to a refresh without a rescan to find it.
    pub fn set_watched(&self, watched: bool) {
        self.watched.store(watched, Ordering::SeqCst);
    }

    /// Whether the watcher has seen a change it has not asked a refresh for.
    pub fn set_changes_pending(&self, pending: bool) {
        self.changes_pending.store(pending, Ordering::SeqCst);
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The texts of called skills, shared by every request.
    pub fn contents(&self) -> &Contents {
        &self.contents
    }

    /// The listings and digests of skills' files, shared by every request.
    pub fn files(&self) -> &Files {
        &self.files
    }

    /// The current snapshot and description. Hold it for a whole request.
    pub fn current(&self) -> Arc<Served> {
        self.current.load_full()
    }

    /// A listener for the changes of what clients list from now on.
    pub fn changes(&self) -> Changes {
        let mut versions = self.versions.subscribe();
        let seen = *versions.borrow_and_update();
        Changes { versions, seen }
    }

    /// A receiver that sees the number of every finished refresh.
    pub fn refreshes(&self) -> watch::Receiver<u64> {
        self.finished.subscribe()
    }

    /// Asks for a refresh and returns its number without waiting for it.
    pub fn request_refresh(self: &Arc<Self>) -> u64 {
        let mut gate = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
        if gate.running {
            gate.pending = true;
            return gate.started + 1;
        }
        gate.running = true;
        gate.started += 1;
        let number = gate.started;
        drop(gate);
        let registry = Arc::clone(self);
        tokio::spawn(async move { registry.run_refreshes(number).await });
        number
    }

    /// Asks for a refresh and waits until one that started after the request
    /// has finished.
    pub async fn refresh_and_wait(self: &Arc<Self>) {
        let target = self.request_refresh();
        self.wait_for(target).await;
    }

    /// Waits until refresh number `target` has finished.
    async fn wait_for(&self, target: u64) {
        let mut finished = self.finished.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = finished.wait_for(|&done| done >= target).await;
    }

    /// Brings the snapshot up to date before a call answers that a name is
    /// not served (behaviour.md §6). Without a watcher that covers every
    /// folder, that is a rescan. With one, a change on disk is known
    /// already: this waits for the refresh of changes the watcher has seen
    /// (the one running, or one asked for now when a burst is still being
    /// debounced), and checks the targets of linked `SKILL.md` files, which
    /// no watched folder shows; nothing else is looked at.
    pub async fn catch_up(self: &Arc<Self>) {
        let seen_all = self.watched.load(Ordering::SeqCst)
            && !self.changes_pending.load(Ordering::SeqCst)
            && self.backlog.get().is_some_and(|backlog| backlog.is_clear());
        if !seen_all {
            return self.refresh_and_wait().await;
        }
        let (checked, changed) = self.links_changed().await;
        tracing::debug!(
            "a miss: no rescan, the watcher covers every folder; {checked} linked SKILL.md files checked, {changed} changed"
        );
        if changed > 0 {
            return self.refresh_and_wait().await;
        }
        // A refresh that runs (or was asked for) now is one of changes the
        // watcher saw: its snapshot is the one to answer from.
        let requested = {
            let gate = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
            if gate.pending {
                Some(gate.started + 1)
            } else {
                gate.running.then_some(gate.started)
            }
        };
        if let Some(number) = requested {
            self.wait_for(number).await;
        }
    }

    /// How many linked `SKILL.md` files the current snapshot has, and how
    /// many of them lead to another version (or to something, or nothing,
    /// now) than when they were scanned: one `stat` each, on a blocking
    /// thread when there are any.
    async fn links_changed(&self) -> (usize, usize) {
        let served = self.current();
        let checked = served.snapshot.dirs.links.len();
        if checked == 0 {
            return (0, 0);
        }
        let check = move || {
            let links = &served.snapshot.dirs.links;
            let changed = links.iter().filter(|(path, seen)| {
                let now = std::fs::metadata(path).ok().map(|meta| Stamp::of(&meta));
                now != *seen
            });
            changed.count()
        };
        let changed = tokio::task::spawn_blocking(check).await.unwrap_or(checked);
        (checked, changed)
    }

    /// Runs refresh number `number`, then the coalesced follow-up, if any.
    async fn run_refreshes(self: Arc<Self>, mut number: u64) {
        loop {
            let registry = Arc::clone(&self);
            let outcome = tokio::task::spawn_blocking(move || registry.refresh_blocking()).await;
            if let Err(err) = outcome {
                tracing::error!("refresh failed: {err}");
            }
            self.finished.send_replace(number);
            self.prepare_search();
            let mut gate = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
            if gate.pending {
                gate.pending = false;
                gate.started += 1;
                number = gate.started;
            } else {
                gate.running = false;
                return;
            }
        }
    }

    /// Rescans, swaps the new snapshot in, and bumps the description version
    /// when the description changed.
    fn refresh_blocking(&self) {
        let started = Instant::now();
        // Refreshes never overlap, so this is the snapshot being replaced.
        let previous = self.current();
        let snapshot = {
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            snapshot::load(&self.config, &mut cache, Some(&previous.snapshot))
        };
        let unchanged = snapshot.same_skills(&previous.snapshot);
        let description = if unchanged {
            previous.description.clone()
        } else {
            render::tool_description(snapshot.skills(), self.budget)
        };
        let current = Arc::new(Served::new(snapshot, description));
        self.current.store(Arc::clone(&current));
        for diagnostic in new_diagnostics(&previous.snapshot, &current.snapshot) {
            diagnostic.log();
        }
        if !unchanged {
            // The files of skills no longer served are not kept.
            let skills = current.snapshot.skills();
            let served: HashSet<&std::path::Path> = skills.iter().map(|s| &*s.dir).collect();
            self.files
                .keep_only(skills.len(), |dir| served.contains(dir));
        }
        let changed = previous.description != current.description;
        log_refresh(&previous, &current, unchanged, changed, started.elapsed());
        let listing_changed = !current.snapshot.same_listing(&previous.snapshot);
        if changed || listing_changed {
            self.versions.send_modify(|versions| {
                versions.description += u64::from(changed);
                versions.listing += u64::from(listing_changed);
            });
        }
    }

    /// Builds the current snapshot's search index on a blocking thread, after
    /// start-up and after each refresh, which does not wait for it (a miss
    /// meanwhile waits for the build, or does it; a snapshot that shares its
    /// index finds it built).
    ///
    /// Once it is built, the memory the build (and the refresh or start-up
    /// before it) freed is handed back to the system.
    pub fn prepare_search(&self) {
        let served = self.current();
        tokio::task::spawn_blocking(move || {
            if served.snapshot.prepare_search() {
                memory::release_free_memory();
            }
        });
    }

    /// Every `every`, in a task that runs as long as the runtime: a refresh,
    /// unless the file watcher covers every folder; then only the targets of
    /// linked `SKILL.md` files are checked, and a refresh runs when one
    /// changed (a rescan of 100,000 unchanged skills costs about a second of
    /// CPU, and the watcher reports every other change already). Missed
    /// ticks (a refresh slower than the interval) are skipped, not bunched
    /// up.
    pub fn spawn_interval(self: &Arc<Self>, every: Duration) {
        let registry = Arc::clone(self);
        tokio::spawn(async move {
            let start = tokio::time::Instant::now() + every;
            let mut ticks = tokio::time::interval_at(start, every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                ticks.tick().await;
                if !registry.watched.load(Ordering::SeqCst) {
                    tracing::debug!(
                        "interval: rescanning everything (no watcher covers every folder)"
                    );
                    registry.request_refresh();
                    continue;
                }
                let (checked, changed) = registry.links_changed().await;
                tracing::debug!(
                    "interval: no rescan, the watcher covers every folder; {checked} linked SKILL.md files checked, {changed} changed"
                );
                if changed > 0 {
                    registry.request_refresh();
                }
            }
        });
    }
}

/// One log line per refresh: `info` when the skills changed, `debug` when not.
fn log_refresh(
    previous: &Served,
    current: &Served,
    unchanged: bool,
    description_changed: bool,
    elapsed: Duration,
) {
    let delta = if unchanged {
        Delta::default()
    } else {
        Delta::between(&previous.snapshot, &current.snapshot)
    };
    let elapsed_ms = elapsed.as_secs_f64() * 1e3;
    let skills = current.snapshot.skills().len();
    if description_changed || !delta.is_empty() {
        tracing::info!(
            "refresh: {skills} skills (+{} added, -{} removed, ~{} changed) in {elapsed_ms:.1} ms",
            delta.added,
            delta.removed,
            delta.changed,
        );
    } else {
        tracing::debug!(
            "refresh: no change ({skills} skills, {} files parsed) in {elapsed_ms:.1} ms",
            current.snapshot.files_parsed,
        );
    }
}

/// How the served skills differ between two snapshots.
#[derive(Debug, Default, PartialEq, Eq)]
struct Delta {
    added: usize,
    removed: usize,
    /// Same name, but another file or other frontmatter.
    changed: usize,
}

impl Delta {
    fn between(old: &Snapshot, new: &Snapshot) -> Delta {
        let mut delta = Delta::default();
        for skill in new.skills() {
            match old.by_name(&skill.name.to_lowercase()) {
                None => delta.added += 1,
                Some(before) => {
                    // A touched but unchanged file is re-parsed into an equal value.
                    if before.dir != skill.dir
                        || before.file_name != skill.file_name
                        || before.parsed != skill.parsed
                    {
                        delta.changed += 1;
                    }
                }
            }
        }
        delta.removed = old
            .skills()
            .iter()
            .filter(|s| new.by_name(&s.name.to_lowercase()).is_none())
            .count();
        delta
    }

    fn is_empty(&self) -> bool {
        *self == Delta::default()
    }
}

/// Diagnostics of `new` that `old` did not have: a refresh logs only these.
fn new_diagnostics<'a>(old: &Snapshot, new: &'a Snapshot) -> Vec<&'a Diagnostic> {
    let seen: HashSet<&Diagnostic> = old.diagnostics.iter().collect();
    new.diagnostics
        .iter()
        .filter(|d| !seen.contains(d))
        .collect()
}
