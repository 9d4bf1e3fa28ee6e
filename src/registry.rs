//! The registry: the live snapshot, how it is refreshed, and what a `skill`
//! call returns (design §5.2, §6).
//!
//! Readers take the current snapshot with one atomic load and keep it for the
//! whole request, so a refresh never blocks or changes a request in flight.
//! Refreshes run one at a time on a blocking thread; a refresh asked for while
//! one runs is coalesced into a single follow-up.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::config::Config;
use crate::parse::{self, ReadError};
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

/// Scans everything `config` points at once, filling `cache`.
pub fn load(config: &Config, cache: &mut Cache) -> Snapshot {
    let mut roots = roots::roots(config);
    let plugins = plugins::discover(config);
    roots.extend(plugins.roots);
    let mut scan = scan::scan(&roots, config.max_file_bytes, cache);
    scan.diagnostics.extend(plugins.diagnostics);
    Snapshot::build(roots, scan)
}

/// What a `skill` call with some name returns.
#[derive(Debug)]
pub enum Answer {
    /// The `Loading:` text.
    Loaded(String),
    NotFound(String),
    Ambiguous(String),
    /// The skill exists in the snapshot but its file could not be read.
    Unreadable {
        text: String,
        error: ReadError,
    },
}

impl Answer {
    /// The text the model reads.
    pub fn text(&self) -> &str {
        match self {
            Answer::Loaded(text) | Answer::NotFound(text) | Answer::Ambiguous(text) => text,
            Answer::Unreadable { text, .. } => text,
        }
    }

    pub fn is_error(&self) -> bool {
        !matches!(self, Answer::Loaded(_))
    }

    /// Whether the answer suggests the snapshot is out of date.
    fn is_stale(&self) -> bool {
        match self {
            Answer::NotFound(_) => true,
            Answer::Unreadable {
                error: ReadError::Io(err),
                ..
            } => err.kind() == std::io::ErrorKind::NotFound,
            _ => false,
        }
    }
}

/// Resolves `name` in `snapshot` and reads the skill's file (blocking I/O).
pub fn answer(snapshot: &Snapshot, name: &str, max_file_bytes: u64) -> Answer {
    match resolve::resolve(snapshot, name) {
        Resolution::Found(skill) => match parse::read_skill_file(&skill.file, max_file_bytes) {
            Ok(content) => Answer::Loaded(render::loading(skill, &content)),
            Err(error) => {
                tracing::warn!(skill = %skill.name, file = %skill.file.display(), "cannot read SKILL.md: {error}");
                Answer::Unreadable {
                    text: render::unreadable(&skill.name, &error.to_string()),
                    error,
                }
            }
        },
        Resolution::Ambiguous(matches) => Answer::Ambiguous(render::ambiguous(name, &matches)),
        Resolution::NotFound => {
            let suggestions = resolve::suggest(snapshot, name, MAX_SUGGESTIONS);
            Answer::NotFound(render::not_found(
                name,
                &suggestions,
                snapshot.skills().len(),
            ))
        }
    }
}

/// Misses trigger at most one rescan per this interval (design §5.2).
const MISS_RESCAN_INTERVAL: Duration = Duration::from_secs(1);

/// The live set of skills.
pub struct Registry {
    config: Config,
    budget: usize,
    current: ArcSwap<Loaded>,
    /// Used only by the refresh that holds the gate; the mutex is never
    /// contended, it only makes the registry `Sync`.
    cache: Mutex<Cache>,
    gate: Mutex<Gate>,
    /// The number of the last finished refresh.
    finished: watch::Sender<u64>,
    /// Bumped whenever the rendered tool description changes.
    description_version: watch::Sender<u64>,
    last_miss_rescan: Mutex<Option<Instant>>,
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
        let snapshot = load(&config, &mut cache);
        let description = render::tool_description(snapshot.skills(), budget);
        Registry {
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
            last_miss_rescan: Mutex::new(None),
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

    /// Answers a `skill` call. A miss (or a skill whose file vanished) rescans
    /// once, rate-limited, and answers from the new snapshot.
    pub async fn call(self: &Arc<Self>, name: &str) -> Answer {
        let first = self.answer_now(name).await;
        if !first.is_stale() {
            return first;
        }
        let vanished = !matches!(first, Answer::NotFound(_));
        // A vanished file always refreshes; a plain miss only when no miss
        // rescan ran within the last second.
        if !vanished && !self.claim_miss_rescan() {
            return first;
        }
        self.refresh_and_wait().await;
        self.answer_now(name).await
    }

    async fn answer_now(self: &Arc<Self>, name: &str) -> Answer {
        let loaded = self.current();
        let max = self.config.max_file_bytes;
        let name = name.to_owned();
        tokio::task::spawn_blocking(move || answer(&loaded.snapshot, &name, max))
            .await
            .expect("answering a call does not panic")
    }

    fn claim_miss_rescan(&self) -> bool {
        let mut last = self.last_miss_rescan.lock().unwrap();
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < MISS_RESCAN_INTERVAL) {
            return false;
        }
        *last = Some(now);
        true
    }

    /// Asks for a refresh and returns without waiting for it.
    pub fn request_refresh(self: &Arc<Self>) -> u64 {
        let mut gate = self.gate.lock().unwrap();
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
            let mut gate = self.gate.lock().unwrap();
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
        let snapshot = {
            let mut cache = self.cache.lock().unwrap();
            load(&self.config, &mut cache)
        };
        let description = render::tool_description(snapshot.skills(), self.budget);
        let previous = self.current.swap(Arc::new(Loaded {
            snapshot,
            description,
        }));
        let current = self.current.load();
        let changed = previous.description != current.description;
        tracing::debug!(
            skills = current.snapshot.skills().len(),
            files_parsed = current.snapshot.files_parsed,
            changed,
            elapsed_ms = started.elapsed().as_secs_f64() * 1e3,
            "refresh finished"
        );
        if changed {
            self.description_version.send_modify(|v| *v += 1);
        }
    }
}
