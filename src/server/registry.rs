//! The live set of skills: the current snapshot, the settings it is shown
//! with, each client's view of it, and the refreshes that replace them
//! (behaviour.md §6, §17).
//!
//! Readers take the current [`Served`] with one atomic load and keep it for the
//! whole request, so a refresh never blocks or changes a request in flight.
//! Refreshes run one at a time on a blocking thread; a refresh asked for while
//! one runs is coalesced into a single follow-up. Each refresh also looks at
//! `config.toml` (one `stat`) and, when it changed, reads it again: a file
//! that is not valid is logged and the settings in use are kept.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::config::{Env, Flags, Settings, settings};
use crate::contents::Contents;
use crate::diagnostic::Diagnostic;
use crate::disk::Stamp;
use crate::files::Files;
use crate::installed::Verify;
use crate::memory;
use crate::profiles::{Key, Profiles, Surfaces, View};
use crate::server::events::Backlog;
use crate::snapshot::{self, Cache, Snapshot};
use crate::usage::{self, Ranks, Recorder};

/// Client names whose views a refresh computes right away, at most: the
/// clients connected now (stdio has one; a team server a few).
const MAX_KNOWN_CLIENTS: usize = 64;

/// What the server serves now: a snapshot, the settings it is shown with,
/// and each client's view of it, computed once per client key.
pub struct Served {
    pub snapshot: Arc<Snapshot>,
    pub profiles: Arc<Profiles>,
    views: Box<[OnceLock<View>]>,
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served")
            .field("skills", &self.snapshot.skills().len())
            .finish_non_exhaustive()
    }
}

impl Served {
    fn new(snapshot: Arc<Snapshot>, profiles: Arc<Profiles>) -> Served {
        let views = (0..profiles.slots()).map(|_| OnceLock::new()).collect();
        Served {
            snapshot,
            profiles,
            views,
        }
    }

    /// `key`'s view, if it is computed.
    pub fn ready(&self, key: Key) -> Option<&View> {
        self.views[self.profiles.slot(key)].get()
    }

    /// `key`'s view, computed now if it is not (O(skills): not on the
    /// runtime's thread; see [`Registry::view`]).
    pub fn view(&self, key: Key) -> &View {
        self.views[self.profiles.slot(key)].get_or_init(|| self.profiles.view(&self.snapshot, key))
    }

    /// The key, view and surfaces of the client called `client`, when its
    /// view is computed.
    fn client(&self, client: Option<&str>) -> (Key, Option<&View>, Surfaces) {
        let key = self.profiles.key(client);
        (key, self.ready(key), self.profiles.surfaces(key))
    }
}

/// Which lists changed for one client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// The `skill` tool's description (`tools/list_changed`).
    pub tools: bool,
    /// The prompts list (`prompts/list_changed`).
    pub prompts: bool,
    /// The resources list and the skills extension's
    /// (`resources/list_changed`).
    pub resources: bool,
}

impl Changed {
    fn any(self) -> bool {
        self.tools || self.prompts || self.resources
    }
}

/// The changes of what one client lists, as its listener sees them.
pub struct Changes {
    registry: Arc<Registry>,
    generations: watch::Receiver<u64>,
    seen: Arc<Served>,
}

impl Changes {
    /// What changed for the client called `client` since the last call (or
    /// since this listener was made), once something has; `None` when the
    /// registry is gone. Cancel-safe.
    pub async fn next(&mut self, client: Option<&str>) -> Option<Changed> {
        loop {
            self.generations.changed().await.ok()?;
            self.generations.borrow_and_update();
            let now = self.registry.current();
            let before = Arc::clone(&self.seen);
            let old = self.registry.view(&before, client).await;
            let new = self.registry.view(&now, client).await;
            let (_, _, was) = before.client(client);
            let (_, _, is) = now.client(client);
            self.seen = now;
            let listing = !new.same_listing(&old);
            let changed = Changed {
                tools: new.description() != old.description(),
                prompts: (listing && is.prompts) || was.prompts != is.prompts,
                resources: (listing && is.resources) || was.resources != is.resources,
            };
            if changed.any() {
                return Some(changed);
            }
            tracing::debug!(
                "what {} lists did not change",
                client.map_or("the client".to_owned(), |name| format!("'{name}'"))
            );
        }
    }
}

/// The settings in use and the version of the settings file they were read
/// from (of the last attempt: a bad file is not read again until it changes).
struct Current {
    settings: Arc<Settings>,
    file: Option<Stamp>,
}

/// The live set of skills.
pub struct Registry {
    /// The command line and environment: merged with `config.toml` again
    /// whenever it changes.
    flags: Flags,
    env: Env,
    settings: Mutex<Current>,
    current: ArcSwap<Served>,
    contents: Contents,
    files: Files,
    /// Used only by the refresh that holds the gate; the mutex is never
    /// contended, it only makes the registry `Sync`.
    cache: Mutex<Cache>,
    gate: Mutex<Gate>,
    /// The number of the last finished refresh.
    finished: watch::Sender<u64>,
    /// Bumped whenever what some client lists may have changed.
    generations: watch::Sender<u64>,
    /// The names of clients whose views have been asked for: a refresh
    /// computes theirs right away.
    known: Mutex<Vec<Option<String>>>,
    /// The file watcher watches every folder of the current snapshot and
    /// sees their changes (`server::watch` says so).
    watched: AtomicBool,
    /// The watcher has seen a change it has not asked a refresh for yet
    /// (it is waiting for the burst to end).
    changes_pending: AtomicBool,
    /// The changes on their way from the kernel to the watcher.
    backlog: OnceLock<Arc<Backlog>>,
    /// Skill folders whose security reports the next refresh must not
    /// reuse: a call found a file that is not what their scan read, though
    /// its version may look the same.
    rescreen: Mutex<Vec<std::path::PathBuf>>,
    /// Where every surface records the uses of skills.
    usage: Recorder,
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
    /// Installed skills are checked by their `SKILL.md` alone
    /// ([`Verify::Quick`]): the server refreshes right after start-up,
    /// which checks all their files ([`Registry::has_installed`]).
    ///
    /// The usage file is read on a thread of its own meanwhile (the scan
    /// takes longer): how often each skill was used lately orders the
    /// catalog over its budget.
    pub fn new(settings: Settings, flags: Flags, env: Env) -> Registry {
        let file = settings_file_stamp(&settings);
        let usage_file = usage::path(&settings.config.folders);
        let ranks = usage_file
            .clone()
            .filter(|_| settings.serve.usage)
            .and_then(|path| {
                std::thread::Builder::new()
                    .name("usage-read".into())
                    .spawn(move || Ranks::read(&path))
                    .ok()
            });
        let mut cache = Cache::default();
        let snapshot = Arc::new(snapshot::load_with(
            &settings.config,
            &mut cache,
            None,
            Verify::Quick,
        ));
        let ranks = Arc::new(
            ranks
                .and_then(|reading| reading.join().ok())
                .unwrap_or_default(),
        );
        let profiles = Arc::new(Profiles::new(&settings).ranked(ranks));
        let usage = Recorder::new(usage_file, settings.serve.usage);
        let max_file_bytes = settings.config.max_file_bytes;
        let files = Files::new(max_file_bytes);
        files.keep_only(snapshot.candidates().len(), |_| true);
        Registry {
            contents: Contents::new(max_file_bytes),
            files,
            flags,
            env,
            settings: Mutex::new(Current {
                settings: Arc::new(settings),
                file,
            }),
            current: ArcSwap::from_pointee(Served::new(snapshot, profiles)),
            cache: Mutex::new(cache),
            gate: Mutex::new(Gate::default()),
            finished: watch::Sender::new(0),
            generations: watch::Sender::new(0),
            known: Mutex::new(Vec::new()),
            watched: AtomicBool::new(false),
            changes_pending: AtomicBool::new(false),
            backlog: OnceLock::new(),
            rescreen: Mutex::new(Vec::new()),
            usage,
        }
    }

    /// Where every surface records the uses of skills.
    pub fn usage(&self) -> &Recorder {
        &self.usage
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

    /// The environment the server started with (what the sources actions
    /// of the skills app need to find `git` and the folders).
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// The settings in use.
    pub fn settings(&self) -> Arc<Settings> {
        let current = self.settings.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&current.settings)
    }

    /// Whether the current snapshot serves installed skills (whose files
    /// the start-up scan checked by their `SKILL.md` alone).
    pub fn has_installed(&self) -> bool {
        let served = self.current();
        served.snapshot.roots.iter().any(|r| r.origin.is_some())
    }

    /// The texts of called skills, shared by every request.
    pub fn contents(&self) -> &Contents {
        &self.contents
    }

    /// The listings and digests of skills' files, shared by every request.
    pub fn files(&self) -> &Files {
        &self.files
    }

    /// The current snapshot, settings and views. Hold it for a whole request.
    pub fn current(&self) -> Arc<Served> {
        self.current.load_full()
    }

    /// The view of `served` for the client called `client`: computed on a
    /// blocking thread the first time (and computed by every refresh from
    /// then on, as long as the client is among the last
    /// [`MAX_KNOWN_CLIENTS`]).
    pub async fn view(&self, served: &Arc<Served>, client: Option<&str>) -> View {
        self.view_and_surfaces(served, client).await.0
    }

    /// [`Registry::view`] and [`Registry::surfaces`], the client's key
    /// found once.
    pub async fn view_and_surfaces(
        &self,
        served: &Arc<Served>,
        client: Option<&str>,
    ) -> (View, Surfaces) {
        let key = served.profiles.key(client);
        let surfaces = served.profiles.surfaces(key);
        if let Some(view) = served.ready(key) {
            return (view.clone(), surfaces);
        }
        self.remember(client);
        let served = Arc::clone(served);
        match tokio::task::spawn_blocking(move || served.view(key).clone()).await {
            Ok(view) => (view, surfaces),
            Err(err) => std::panic::resume_unwind(err.into_panic()),
        }
    }

    /// What the client called `client` is offered besides the skills.
    pub fn surfaces(&self, served: &Served, client: Option<&str>) -> Surfaces {
        served.client(client).2
    }

    fn remember(&self, client: Option<&str>) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.iter().any(|k| k.as_deref() == client) {
            return;
        }
        if known.len() == MAX_KNOWN_CLIENTS {
            known.remove(0);
        }
        known.push(client.map(str::to_owned));
    }

    /// A listener for the changes of what clients list from now on.
    pub fn changes(self: &Arc<Self>) -> Changes {
        let mut generations = self.generations.subscribe();
        generations.borrow_and_update();
        Changes {
            registry: Arc::clone(self),
            generations,
            seen: self.current(),
        }
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

    /// Scans the skill in `dir` again (its report is not reused, whatever
    /// its files' versions say) in a refresh, and waits for it.
    pub async fn rescreen(self: &Arc<Self>, dir: &std::path::Path) {
        self.rescreen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(dir.to_path_buf());
        self.refresh_and_wait().await;
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

    /// Reads `config.toml` again if it changed, rescans, computes the views
    /// of the known clients, swaps the result in, and tells the listeners
    /// when what some client lists may have changed.
    fn refresh_blocking(&self) {
        let started = Instant::now();
        // Refreshes never overlap, so this is what is being replaced.
        let previous = self.current();
        let (settings, reloaded) = self.reload_settings();
        let snapshot = {
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            let rescreen =
                std::mem::take(&mut *self.rescreen.lock().unwrap_or_else(PoisonError::into_inner));
            for dir in rescreen {
                cache.security.forget(&dir);
            }
            snapshot::load(&settings.config, &mut cache, Some(&previous.snapshot))
        };
        let snapshot = Arc::new(snapshot);
        let profiles = match reloaded {
            // The ranks are those read at start-up: the catalog's order
            // does not change with every call.
            true => {
                let ranks = Arc::clone(previous.profiles.ranks());
                Arc::new(Profiles::new(&settings).ranked(ranks))
            }
            false => Arc::clone(&previous.profiles),
        };
        let current = Arc::new(Served::new(Arc::clone(&snapshot), Arc::clone(&profiles)));
        let known = self
            .known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for client in known {
            let key = profiles.key(client.as_deref());
            let before = previous.ready(key).filter(|_| !reloaded);
            let view = profiles.view_after(before, &snapshot, key);
            let _ = current.views[profiles.slot(key)].set(view);
        }
        self.current.store(Arc::clone(&current));
        for diagnostic in new_diagnostics(&previous.snapshot, &current.snapshot) {
            diagnostic.log();
        }
        let unchanged = snapshot.same_skills(&previous.snapshot);
        if !unchanged {
            // The files of skills no longer found are not kept (a shadowed
            // skill may be shown in place of one a client filters out).
            let skills = snapshot.candidates();
            let found: HashSet<&std::path::Path> = skills.iter().map(|s| &*s.dir).collect();
            self.files
                .keep_only(skills.len(), |dir| found.contains(dir));
        }
        log_refresh(&previous, &current, unchanged, started.elapsed());
        if reloaded || !unchanged || snapshot.also_found != previous.snapshot.also_found {
            self.generations.send_modify(|generation| *generation += 1);
        }
    }

    /// The settings to refresh with, and whether they were just read again
    /// from a changed `config.toml`. Settings that only take effect at
    /// start-up keep their values, with a warning.
    /// The settings as the flags, the environment and the file give them
    /// now, read afresh (for a command run by the server, such as the
    /// skills app's `enable`, that says what still hides a skill).
    pub fn load_settings(&self) -> Result<Settings, crate::config::SettingsError> {
        settings::load(&self.flags, &self.env)
    }

    fn reload_settings(&self) -> (Arc<Settings>, bool) {
        let mut current = self.settings.lock().unwrap_or_else(PoisonError::into_inner);
        let file = settings_file_stamp(&current.settings);
        if file == current.file {
            return (Arc::clone(&current.settings), false);
        }
        current.file = file;
        let mut fresh = match settings::load(&self.flags, &self.env) {
            Ok(fresh) => fresh,
            Err(err) => {
                tracing::error!("{err}; keeping the settings in use until the file is fixed");
                return (Arc::clone(&current.settings), false);
            }
        };
        let old = &current.settings;
        let mut needs_restart = Vec::new();
        if fresh.config.max_file_bytes != old.config.max_file_bytes {
            needs_restart.push("max_file_bytes");
            fresh.config.max_file_bytes = old.config.max_file_bytes;
        }
        if fresh.serve.refresh_interval != old.serve.refresh_interval {
            needs_restart.push("refresh_interval");
            fresh.serve.refresh_interval = old.serve.refresh_interval;
        }
        if fresh.serve.watch != old.serve.watch {
            needs_restart.push("watch");
            fresh.serve.watch = old.serve.watch;
        }
        if fresh.log_level != old.log_level {
            needs_restart.push("log_level");
        }
        if fresh.serve.usage != old.serve.usage {
            self.usage.set_enabled(fresh.serve.usage);
            tracing::info!(
                "usage recording is {} now",
                if fresh.serve.usage { "on" } else { "off" }
            );
        }
        let path = fresh
            .location
            .as_ref()
            .map_or(String::new(), |l| l.path.display().to_string());
        tracing::info!("settings read again from {path}");
        if !needs_restart.is_empty() {
            tracing::warn!(
                "{} changed in {path}: this takes effect when skillserve restarts",
                needs_restart.join(", ")
            );
        }
        current.settings = Arc::new(fresh);
        (Arc::clone(&current.settings), true)
    }

    /// The settings file to watch, if there is one.
    pub fn settings_file(&self) -> Option<std::path::PathBuf> {
        self.settings().location.as_ref().map(|l| l.path.clone())
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

/// The version of the settings file, `None` when it is not there (or there
/// is no place for it).
fn settings_file_stamp(settings: &Settings) -> Option<Stamp> {
    let path = &settings.location.as_ref()?.path;
    std::fs::metadata(path).ok().map(|meta| Stamp::of(&meta))
}

/// One log line per refresh: `info` when the skills changed, `debug` when not.
fn log_refresh(previous: &Served, current: &Served, unchanged: bool, elapsed: Duration) {
    let delta = if unchanged {
        Delta::default()
    } else {
        Delta::between(&previous.snapshot, &current.snapshot)
    };
    let elapsed_ms = elapsed.as_secs_f64() * 1e3;
    let skills = current.snapshot.skills().len();
    if !delta.is_empty() {
        tracing::info!(
            "refresh: {skills} skills (+{} added, -{} removed, ~{} changed) in {elapsed_ms:.1} ms",
            delta.added,
            delta.removed,
            delta.changed,
        );
    } else {
        tracing::debug!(
            "refresh: no change ({skills} skills, {} files parsed, {} skills scanned) in {elapsed_ms:.1} ms",
            current.snapshot.files_parsed,
            current.snapshot.skills_scanned,
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
