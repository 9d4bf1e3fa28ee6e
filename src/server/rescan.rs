//! Rescan on a miss (behaviour.md §5.2): a name that resolves to nothing may
//! be a skill added since the last refresh, so the server looks once more
//! before it says "not found": with a file watcher that covers every folder,
//! by waiting for the refresh of changes it has seen (and checking linked
//! `SKILL.md` files), else by rescanning ([`Registry::catch_up`]).
//! Rate-limited, so that a model guessing names cannot keep the server
//! rescanning. Then the miss is searched (behaviour.md
//! §14) on a blocking thread: the runtime has one thread (see `main`), and a
//! search at 100,000 skills takes milliseconds that `ping`, other calls and
//! the signal handler must not wait for.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::answer::{self, Answer, FileAnswer, Lookup};
use crate::profiles::View;
use crate::render::Base;
use crate::server::registry::Registry;

/// Misses (and passing read errors) trigger at most one rescan per this
/// interval.
const MISS_RESCAN_INTERVAL: Duration = Duration::from_secs(1);

/// Answers `skill` calls, rescanning on a miss.
pub struct Caller {
    registry: Arc<Registry>,
    /// How answers name a skill's folder: a path, or over HTTP a URI.
    base: Base,
    /// When the last rescan triggered by a call started.
    last_rescan: Mutex<Option<Instant>>,
}

/// What a call does after its first answer.
enum Next {
    /// The answer stands.
    Answer,
    /// Rescan, wait for it, and answer again from the new snapshot.
    RescanAndRetry,
    /// Bring the snapshot up to date ([`Registry::catch_up`]: with a
    /// healthy watcher, no rescan unless something changed) and answer
    /// again from the snapshot then.
    CatchUpAndRetry,
    /// The answer stands; a refresh runs in the background.
    RefreshInBackground,
    /// Scan the skill in this folder again (its bytes are not those its
    /// screening read), wait for it, and answer again from the new
    /// snapshot; once only.
    RescreenAndRetry(Arc<std::path::Path>),
}

impl Caller {
    pub fn new(registry: Arc<Registry>, base: Base) -> Caller {
        Caller {
            registry,
            base,
            last_rescan: Mutex::new(None),
        }
    }

    /// Answers a `skill` call of the client called `client`, from its view.
    /// A miss rescans once (rate-limited) and answers from the new snapshot;
    /// a skill whose file vanished always does. A passing read error answers
    /// at once and refreshes in the background. What is still a miss then is
    /// searched on a blocking thread.
    pub async fn call(&self, client: Option<&str>, name: &str) -> Answer {
        let now = |view: &View| {
            let (contents, files) = (self.registry.contents(), self.registry.files());
            answer::lookup(view, name, contents, files, self.base)
        };
        match self.look_up(client, name, now, |answer| Some(answer)).await {
            (_, Lookup::Answer(answer)) => answer,
            (view, Lookup::Miss { vanished }) => search(view, name, vanished).await,
        }
    }

    /// Answers a `skill` call with a `file`: a name that resolves to nothing
    /// is handled like [`Caller::call`]'s miss, before the file is looked at.
    pub async fn call_file(&self, client: Option<&str>, name: &str, file: &str) -> FileAnswer {
        let now =
            |view: &View| answer::lookup_file(view, name, file, self.registry.files(), self.base);
        match self
            .look_up(client, name, now, FileAnswer::about_the_skill)
            .await
        {
            (_, Lookup::Answer(answer)) => answer,
            (view, Lookup::Miss { vanished }) => {
                FileAnswer::Skill(search(view, name, vanished).await)
            }
        }
    }

    /// `now` on the client's view of the current snapshot, and again after a
    /// rescan when what it found (a miss, or an answer about the skill:
    /// `about`) calls for one; with the view it was found in. Files are read
    /// on the executor: a regular file of bounded size, usually unchanged
    /// since the last call (see `contents`), and handing it to a blocking
    /// thread cost more than the read (measured: 26 futex calls per request
    /// against 1.5).
    async fn look_up<T>(
        &self,
        client: Option<&str>,
        name: &str,
        now: impl Fn(&View) -> Lookup<T>,
        about: for<'a> fn(&'a T) -> Option<&'a Answer>,
    ) -> (View, Lookup<T>) {
        let view = self.registry.view(&self.registry.current(), client).await;
        let first = now(&view);
        match self.next(name, &first, about) {
            Next::Answer => (view, first),
            Next::RefreshInBackground => {
                self.registry.request_refresh();
                (view, first)
            }
            Next::RescanAndRetry => {
                self.registry.refresh_and_wait().await;
                let view = self.registry.view(&self.registry.current(), client).await;
                let again = now(&view);
                (view, again)
            }
            Next::RescreenAndRetry(dir) => {
                self.registry.rescreen(&dir).await;
                let view = self.registry.view(&self.registry.current(), client).await;
                let again = now(&view);
                (view, again)
            }
            Next::CatchUpAndRetry => {
                let before = self.registry.current();
                self.registry.catch_up().await;
                let served = self.registry.current();
                if Arc::ptr_eq(&before, &served) {
                    return (view, first);
                }
                let view = self.registry.view(&served, client).await;
                let again = now(&view);
                (view, again)
            }
        }
    }

    fn next<T>(
        &self,
        name: &str,
        lookup: &Lookup<T>,
        about: for<'a> fn(&'a T) -> Option<&'a Answer>,
    ) -> Next {
        let answer = match lookup {
            // The snapshot is out of date for sure.
            Lookup::Miss { vanished: Some(_) } => return Next::RescanAndRetry,
            // A skill added since the last refresh.
            Lookup::Miss { vanished: None } if self.claim_rescan() => {
                return Next::CatchUpAndRetry;
            }
            Lookup::Miss { vanished: None } => return Next::Answer,
            Lookup::Answer(found) => match about(found) {
                Some(answer) => answer,
                None => return Next::Answer,
            },
        };
        match answer {
            // Changed since it was scanned (or not screened yet): never
            // served before it is scanned. Not rate-limited: the call
            // waits for the refresh it asks for.
            Answer::Unscanned { dir, .. } => Next::RescreenAndRetry(Arc::clone(dir)),
            // A broken skill fixed, or a quarantined one approved, since
            // the last refresh.
            Answer::Broken(_) | Answer::Withheld(_) if self.claim_rescan() => Next::CatchUpAndRetry,
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
            | Answer::Withheld(_)
            | Answer::Skill { .. }
            | Answer::Ambiguous(_)
            | Answer::Invalid(_) => Next::Answer,
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

/// "Not found" for `name` in `view`, searched on a blocking thread.
async fn search(view: View, name: &str, vanished: Option<String>) -> Answer {
    let name = name.to_owned();
    let search = move || answer::not_found(&view, &name, vanished.as_deref());
    match tokio::task::spawn_blocking(search).await {
        Ok(answer) => answer,
        Err(err) => std::panic::resume_unwind(err.into_panic()),
    }
}
