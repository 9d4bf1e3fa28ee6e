//! The live set of skills: the current snapshot, and the refreshes that
//! replace it (behaviour.md §6).
//!
//! Readers take the current [`Served`] with one atomic load and keep it for the
//! whole request, so a refresh never blocks or changes a request in flight.
//! Refreshes run one at a time on a blocking thread; a refresh asked for while
//! one runs is coalesced into a single follow-up.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::config::Config;
use crate::contents::Contents;
use crate::diagnostic::Diagnostic;
use crate::files::Files;
use crate::installed::Verify;
use crate::render;
use crate::scan::Cache;
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
    pub fn new(config: Config, budget: usize) -> Registry {
        let mut cache = Cache::default();
        let snapshot = snapshot::load_with(&config, &mut cache, None, Verify::Quick);
        let description = render::tool_description(snapshot.skills(), budget);
        Registry {
            contents: Contents::new(config.max_file_bytes),
            files: Files::new(config.max_file_bytes),
            config,
            budget,
            current: ArcSwap::from_pointee(Served::new(snapshot, description)),
            cache: Mutex::new(cache),
            gate: Mutex::new(Gate::default()),
            finished: watch::Sender::new(0),
            versions: watch::Sender::new(Versions::default()),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
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
        let mut finished = self.finished.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = finished.wait_for(|&done| done >= target).await;
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
    pub fn prepare_search(&self) {
        let served = self.current();
        tokio::task::spawn_blocking(move || served.snapshot.prepare_search());
    }

    /// Refreshes every `every`, in a task that runs as long as the runtime.
    /// Missed ticks (a refresh slower than the interval) are skipped, not
    /// bunched up.
    pub fn spawn_interval(self: &Arc<Self>, every: Duration) {
        let registry = Arc::clone(self);
        tokio::spawn(async move {
            let start = tokio::time::Instant::now() + every;
            let mut ticks = tokio::time::interval_at(start, every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                ticks.tick().await;
                registry.request_refresh();
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
                    if before.file != skill.file || before.parsed != skill.parsed {
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
