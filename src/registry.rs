//! The registry: the live snapshot, how it is refreshed, and what a `skill`
//! call returns (design §5.2, §6).
//!
//! Readers take the current snapshot with one atomic load and keep it for the
//! whole request, so a refresh never blocks or changes a request in flight.
//! Refreshes run one at a time on a blocking thread; a refresh asked for while
//! one runs is coalesced into a single follow-up.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::config::Config;
use crate::contents::Contents;
use crate::diagnostic::Diagnostic;
use crate::parse::ReadError;
use crate::plugins;
use crate::render;
use crate::resolve::{self, MAX_SUGGESTIONS, Resolution};
use crate::roots;
use crate::scan::{self, Cache};
use crate::snapshot::Snapshot;

/// A snapshot with the tool description rendered from it.
#[derive(Debug)]
pub struct Loaded {
    pub snapshot: Snapshot,
    pub description: String,
}

/// Scans everything `config` points at once, filling `cache`. `previous`, the
/// snapshot this one replaces, lends its index when nothing changed.
pub fn load(config: &Config, cache: &mut Cache, previous: Option<&Snapshot>) -> Snapshot {
    let mut roots = roots::roots(config);
    let plugins = plugins::discover(config);
    roots.extend(plugins.roots);
    let mut scan = scan::scan(&roots, config.max_file_bytes, cache);
    scan.diagnostics.extend(plugins.diagnostics);
    Snapshot::build(roots, scan, previous)
}

/// What a `skill` call with some name returns.
#[derive(Debug)]
pub enum Answer {
    /// The `Loading:` text.
    Loaded(String),
    /// No skill has the name. `vanished` when the snapshot had one but its
    /// file is gone: the snapshot is out of date, and the user deleted the
    /// skill, so "not found" (not an I/O error) is the truthful answer.
    NotFound {
        text: String,
        vanished: bool,
    },
    Ambiguous(String),
    /// The skill exists but its file could not be read.
    Unreadable {
        text: String,
        error: ReadError,
    },
}

impl Answer {
    /// The text the model reads.
    pub fn text(&self) -> &str {
        match self {
            Answer::Loaded(text) | Answer::Ambiguous(text) => text,
            Answer::NotFound { text, .. } | Answer::Unreadable { text, .. } => text,
        }
    }

    pub fn is_error(&self) -> bool {
        !matches!(self, Answer::Loaded(_))
    }

    /// The text the model reads, without copying it.
    pub fn into_text(self) -> String {
        match self {
            Answer::Loaded(text) | Answer::Ambiguous(text) => text,
            Answer::NotFound { text, .. } | Answer::Unreadable { text, .. } => text,
        }
    }
}

/// Resolves `name` in `snapshot` and reads the skill's file through
/// `contents` (blocking I/O).
pub fn answer(snapshot: &Snapshot, name: &str, contents: &Contents) -> Answer {
    match resolve::resolve(snapshot, name) {
        Resolution::Found(skill) => match contents.read(&skill.file) {
            Ok(content) => Answer::Loaded(render::loading(skill, &content)),
            // The folder may be gone too, or be a file now.
            Err(ReadError::Io(err))
                if matches!(
                    err.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                tracing::debug!(skill = %skill.name, "SKILL.md is gone: {}", skill.file.display());
                not_found(snapshot, name, Some(&skill.name))
            }
            Err(error) => {
                let lasting = !matches!(error, ReadError::Io(_));
                Answer::Unreadable {
                    text: render::unreadable(&skill.name, &error.to_string(), lasting),
                    error,
                }
            }
        },
        Resolution::Ambiguous(matches) => Answer::Ambiguous(render::ambiguous(name, &matches)),
        Resolution::NotFound => not_found(snapshot, name, None),
    }
}

/// "Not found" with suggestions; `vanished` names the skill whose file is gone
/// (it is not suggested).
fn not_found(snapshot: &Snapshot, name: &str, vanished: Option<&str>) -> Answer {
    let mut suggestions = resolve::suggest(snapshot, name, MAX_SUGGESTIONS + 1);
    suggestions.retain(|s| Some(s.name.as_str()) != vanished);
    suggestions.truncate(MAX_SUGGESTIONS);
    let total = snapshot.skills().len() - usize::from(vanished.is_some());
    Answer::NotFound {
        text: render::not_found(name, &suggestions, total),
        vanished: vanished.is_some(),
    }
}

/// Misses (and passing read errors) trigger at most one rescan per this
/// interval (design §5.2).
const MISS_RESCAN_INTERVAL: Duration = Duration::from_secs(1);

/// The live set of skills.
pub struct Registry {
    config: Config,
    budget: usize,
    current: ArcSwap<Loaded>,
    contents: Contents,
    /// Used only by the refresh that holds the gate; the mutex is never
    /// contended, it only makes the registry `Sync`.
    cache: Mutex<Cache>,
    gate: Mutex<Gate>,
    /// The number of the last finished refresh.
    finished: watch::Sender<u64>,
    /// Bumped whenever the rendered tool description changes.
    description_version: watch::Sender<u64>,
    last_rescan_on_demand: Mutex<Option<Instant>>,
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
        let snapshot = load(&config, &mut cache, None);
        let description = render::tool_description(snapshot.skills(), budget);
        Registry {
            contents: Contents::new(config.max_file_bytes),
            config,
            budget,
            current: ArcSwap::from_pointee(Loaded {
                snapshot,
                description,
            }),
            cache: Mutex::new(cache),
            gate: Mutex::new(Gate::default()),
            finished: watch::Sender::new(0),
            description_version: watch::Sender::new(0),
            last_rescan_on_demand: Mutex::new(None),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The current snapshot and description. Hold it for a whole request.
    pub fn current(&self) -> Arc<Loaded> {
        self.current.load_full()
    }

    /// A receiver that sees a new value whenever the tool description changes.
    pub fn description_changes(&self) -> watch::Receiver<u64> {
        self.description_version.subscribe()
    }

    /// Answers a `skill` call. A miss rescans once (rate-limited) and answers
    /// from the new snapshot; a skill whose file vanished always does. Any
    /// other unreadable file answers at once and refreshes in the background.
    pub async fn call(self: &Arc<Self>, name: &str) -> Answer {
        let first = self.answer_now(name).await;
        match &first {
            Answer::NotFound { vanished: true, .. } => {}
            Answer::NotFound {
                vanished: false, ..
            } if self.claim_rescan() => {}
            // A passing I/O error may mean the tree changed: look again (at
            // most once a second, like a miss). A file that must be fixed
            // (not UTF-8, too large, not a regular file) stays as it is until
            // it is edited, which the watcher and the interval notice.
            Answer::Unreadable {
                error: ReadError::Io(error),
                ..
            } => {
                tracing::warn!("cannot read SKILL.md of '{name}': {error}");
                if self.claim_rescan() {
                    self.request_refresh();
                }
                return first;
            }
            Answer::Unreadable { error, .. } => {
                tracing::debug!("cannot serve '{name}': {error}");
                return first;
            }
            _ => return first,
        }
        self.refresh_and_wait().await;
        self.answer_now(name).await
    }

    /// Answers from the current snapshot. The file is read on the executor:
    /// it is a regular file of bounded size, usually unchanged since the last
    /// call (see `contents`), and handing it to a blocking thread cost more
    /// than the read (measured: 26 futex calls per request against 1.5).
    async fn answer_now(self: &Arc<Self>, name: &str) -> Answer {
        answer(&self.current().snapshot, name, &self.contents)
    }

    fn claim_rescan(&self) -> bool {
        let mut last = self
            .last_rescan_on_demand
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < MISS_RESCAN_INTERVAL) {
            return false;
        }
        *last = Some(now);
        true
    }

    /// Asks for a refresh and returns without waiting for it.
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
            load(&self.config, &mut cache, Some(&previous.snapshot))
        };
        let unchanged = snapshot.same_skills(&previous.snapshot);
        let description = if unchanged {
            previous.description.clone()
        } else {
            render::tool_description(snapshot.skills(), self.budget)
        };
        let current = Arc::new(Loaded {
            snapshot,
            description,
        });
        self.current.store(Arc::clone(&current));
        let changed = previous.description != current.description;
        let delta = if unchanged {
            Delta::default()
        } else {
            Delta::between(&previous.snapshot, &current.snapshot)
        };
        let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
        for diagnostic in new_diagnostics(&previous.snapshot, &current.snapshot) {
            diagnostic.log();
        }
        if changed || !delta.is_empty() {
            tracing::info!(
                "refresh: {} skills (+{} added, -{} removed, ~{} changed) in {elapsed_ms:.1} ms",
                current.snapshot.skills().len(),
                delta.added,
                delta.removed,
                delta.changed,
            );
        } else {
            tracing::debug!(
                "refresh: no change ({} skills, {} files parsed) in {elapsed_ms:.1} ms",
                current.snapshot.skills().len(),
                current.snapshot.files_parsed,
            );
        }
        if changed {
            self.description_version.send_modify(|v| *v += 1);
        }
    }

    /// A receiver that sees the number of every finished refresh.
    pub fn refreshes(&self) -> watch::Receiver<u64> {
        self.finished.subscribe()
    }

    /// Refreshes every `every` until the returned task is aborted. Missed ticks
    /// (a refresh slower than the interval) are skipped, not bunched up.
    pub fn spawn_interval(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let registry = Arc::clone(self);
        tokio::spawn(async move {
            let start = tokio::time::Instant::now() + every;
            let mut ticks = tokio::time::interval_at(start, every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                ticks.tick().await;
                registry.request_refresh();
            }
        })
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
