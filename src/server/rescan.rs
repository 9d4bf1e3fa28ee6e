//! Rescan on a miss (behaviour.md §5.2): a name that resolves to nothing may
//! be a skill added since the last refresh, so the server looks once more
//! before it says "not found". Rate-limited, so that a model guessing names
//! cannot keep the server rescanning.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::answer::{self, Answer, FileAnswer};
use crate::server::registry::Registry;

/// Misses (and passing read errors) trigger at most one rescan per this
/// interval.
const MISS_RESCAN_INTERVAL: Duration = Duration::from_secs(1);

/// Answers `skill` calls, rescanning on a miss.
pub struct Caller {
    registry: Arc<Registry>,
    /// When the last rescan triggered by a call started.
    last_rescan: Mutex<Option<Instant>>,
}

/// What a call does after its first answer.
enum Next {
    /// The answer stands.
    Answer,
    /// Rescan, wait for it, and answer again from the new snapshot.
    RescanAndRetry,
    /// The answer stands; a refresh runs in the background.
    RefreshInBackground,
}

impl Caller {
    pub fn new(registry: Arc<Registry>) -> Caller {
        Caller {
            registry,
            last_rescan: Mutex::new(None),
        }
    }

    /// Answers a `skill` call. A miss rescans once (rate-limited) and answers
    /// from the new snapshot; a skill whose file vanished always does. A
    /// passing read error answers at once and refreshes in the background.
    pub async fn call(&self, name: &str) -> Answer {
        self.answer_with_rescan(name, || self.answer_now(name), |answer| Some(answer))
            .await
    }

    /// Answers a `skill` call with a `file`: a name that resolves to nothing
    /// is handled like [`Caller::call`]'s miss, before the file is looked at.
    pub async fn call_file(&self, name: &str, file: &str) -> FileAnswer {
        self.answer_with_rescan(
            name,
            || self.file_now(name, file),
            FileAnswer::about_the_skill,
        )
        .await
    }

    /// `now()` once, and again after a rescan when its answer about the skill
    /// (`about`; `None` when it found the skill) calls for one.
    async fn answer_with_rescan<A>(
        &self,
        name: &str,
        now: impl Fn() -> A,
        about: for<'a> fn(&'a A) -> Option<&'a Answer>,
    ) -> A {
        let first = now();
        let Some(answer) = about(&first) else {
            return first;
        };
        match self.next(name, answer) {
            Next::Answer => first,
            Next::RefreshInBackground => {
                self.registry.request_refresh();
                first
            }
            Next::RescanAndRetry => {
                self.registry.refresh_and_wait().await;
                now()
            }
        }
    }

    fn file_now(&self, name: &str, file: &str) -> FileAnswer {
        let served = self.registry.current();
        answer::answer_file(&served.snapshot, name, file, self.registry.files())
    }

    /// Answers from the current snapshot. The file is read on the executor:
    /// it is a regular file of bounded size, usually unchanged since the last
    /// call (see `contents`), and handing it to a blocking thread cost more
    /// than the read (measured: 26 futex calls per request against 1.5).
    fn answer_now(&self, name: &str) -> Answer {
        let served = self.registry.current();
        answer::answer(
            &served.snapshot,
            name,
            self.registry.contents(),
            self.registry.files(),
        )
    }

    fn next(&self, name: &str, answer: &Answer) -> Next {
        match answer {
            // The snapshot is out of date for sure.
            Answer::NotFound { vanished: true, .. } => Next::RescanAndRetry,
            // A skill added since the last refresh, or a broken one fixed.
            Answer::NotFound { .. } | Answer::Broken(_) if self.claim_rescan() => {
                Next::RescanAndRetry
            }
            // A passing I/O error may mean the tree changed: look again (at
            // most once a second, like a miss). A file that must be fixed (not
            // UTF-8, too large, not a regular file) stays as it is until it is
            // edited, which the watcher and the interval notice.
            Answer::Unreadable { error, .. } if error.is_passing() => {
                tracing::warn!("cannot read SKILL.md of '{name}': {error}");
                if self.claim_rescan() {
                    Next::RefreshInBackground
                } else {
                    Next::Answer
                }
            }
            Answer::Unreadable { error, .. } => {
                tracing::debug!("cannot serve '{name}': {error}");
                Next::Answer
            }
            Answer::NotFound { .. }
            | Answer::Broken(_)
            | Answer::Skill { .. }
            | Answer::Ambiguous(_) => Next::Answer,
        }
    }

    /// Whether a call may rescan now (and if so, counts it).
    fn claim_rescan(&self) -> bool {
        let mut last = self
            .last_rescan
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < MISS_RESCAN_INTERVAL) {
            return false;
        }
        *last = Some(now);
        true
    }
}
