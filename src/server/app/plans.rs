//! The skills app's sources actions: add (a source fetched, its plan
//! shown, then installed), update (a source fetched again, its change
//! report shown, then applied) and remove, each the sources library's own
//! function ([`crate::sources`]), as the command line calls it.
//!
//! What a person reviewed is what is installed: the fetched plan or report
//! stays on the server, under a random id, with the fetched files, until
//! it is installed, replaced or too old ([`KEPT`] at most, each for
//! [`KEPT_FOR`]); the install names it by that id and by its digest, and
//! the store entries are copied from those very files (each hashed again
//! as it is copied). Only the caller that fetched a plan may install it.
//!
//! Fetching runs `git` or downloads: on a blocking thread, one at a time
//! per server, and the answer waits at most [`FETCH_WITHIN`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::JsonObject;
use serde_json::{Value, json};

use crate::server::registry::Registry;
use crate::sources::{self, AddOptions, Context, Pending, Plan, SourceError, short};
use crate::text::plural;

/// Plans and reports kept at most: a person reviews one or two at a time.
pub const KEPT: usize = 4;
/// How long a plan or report is kept for its install.
pub const KEPT_FOR: Duration = Duration::from_secs(15 * 60);
/// How long an answer waits for a fetch. The fetch itself goes on (git has
/// no time limit of its own) and its result is dropped; no other fetch
/// starts until it ends.
pub const FETCH_WITHIN: Duration = Duration::from_secs(120);

/// What a person reviewed.
#[derive(Clone)]
enum Reviewed {
    Add(Arc<Plan>),
    Update(Arc<Pending>),
}

struct Held {
    id: String,
    made: Instant,
    /// Who fetched it ([`super::who`]).
    who: String,
    reviewed: Reviewed,
}

/// The plans and reports of one server, and the fetch under way.
#[derive(Default)]
pub struct Plans {
    held: Mutex<VecDeque<Held>>,
    fetching: Arc<Mutex<Option<(Instant, String)>>>,
}

/// The one fetch under way; it ends when this is dropped (on the blocking
/// thread that fetched, even after the answer gave up waiting).
struct FetchSlot(Arc<Mutex<Option<(Instant, String)>>>);

impl Drop for FetchSlot {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

impl Plans {
    /// Keeps `reviewed` for `who`; its id.
    fn keep(&self, who: &str, reviewed: Reviewed) -> Result<String, String> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)
            .map_err(|_| "the OS gave no random bytes for the plan's id".to_owned())?;
        let id = crate::digest::hex(&bytes);
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.retain(|h| h.made.elapsed() < KEPT_FOR);
        while held.len() >= KEPT {
            held.pop_front();
        }
        held.push_back(Held {
            id: id.clone(),
            made: Instant::now(),
            who: who.to_owned(),
            reviewed,
        });
        Ok(id)
    }

    /// The plan or report `id`, if `who` fetched it, it is still kept and
    /// its digest is `digest`.
    fn find(&self, id: &str, who: &str, digest: &str) -> Result<Reviewed, String> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.retain(|h| h.made.elapsed() < KEPT_FOR);
        let Some(found) = held.iter().find(|h| h.id == id) else {
            return Err(format!(
                "plan {id} is not kept (any more): plans are kept {} minutes, the last {KEPT}, until the server restarts; review the source again",
                KEPT_FOR.as_secs() / 60
            ));
        };
        if found.who != who {
            return Err(format!(
                "plan {id} was fetched by another caller: review the source yourself"
            ));
        }
        let actual = match &found.reviewed {
            Reviewed::Add(plan) => plan.digest(),
            Reviewed::Update(pending) => pending.digest(),
        };
        if actual != digest {
            return Err(format!(
                "plan {id} is not the one reviewed (its digest is {actual}, not {digest}); nothing was changed: review it again"
            ));
        }
        Ok(found.reviewed.clone())
    }

    fn forget(&self, id: &str) {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|h| h.id != id);
    }

    /// Drops every plan and its fetched files (the server is stopping:
    /// the process exits without running destructors).
    pub fn clear(&self) {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Runs `work` (a fetch) on a blocking thread, unless another fetch is
    /// under way; waits for it at most [`FETCH_WITHIN`].
    async fn fetch<T: Send + 'static>(
        &self,
        what: &str,
        work: impl FnOnce() -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        let slot = {
            let mut fetching = self.fetching.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((since, other)) = fetching.as_ref() {
                return Err(format!(
                    "another fetch is under way ({other}, for {} s): try again when it is done",
                    since.elapsed().as_secs()
                ));
            }
            *fetching = Some((Instant::now(), what.to_owned()));
            FetchSlot(Arc::clone(&self.fetching))
        };
        let task = tokio::task::spawn_blocking(move || {
            let _slot = slot;
            work()
        });
        match tokio::time::timeout(FETCH_WITHIN, task).await {
            Ok(Ok(done)) => done,
            Ok(Err(err)) => Err(format!("the fetch of {what} failed: {err}")),
            Err(_) => Err(format!(
                "fetching {what} took longer than {} s; nothing was changed. It goes on in the background (its result will be dropped); try again later, or run `skillserve add` in a terminal",
                FETCH_WITHIN.as_secs()
            )),
        }
    }

    /// `app_add`: fetches a source and keeps its plan.
    pub async fn add(
        &self,
        registry: &Arc<Registry>,
        arguments: &JsonObject,
        who: &str,
    ) -> Result<(String, Value), String> {
        let source = text(arguments, "source")?.ok_or(
            "`source` is missing: give owner/repo, a git URL, the path of a local git checkout, or https://host for a published index",
        )?;
        let options = AddOptions {
            source: source.clone(),
            id: text(arguments, "id")?,
            reference: text(arguments, "ref")?,
            subdir: text(arguments, "path")?,
            skills: list(arguments, "skills")?,
            allow_risky: false,
            // Signature policy and private-index headers are the command
            // line's (`add --trusted-signers`, `--header`); the global
            // policy of config.toml still applies through the context.
            trust: Default::default(),
            access: Default::default(),
        };
        let context = context(registry)?;
        let (plan, value) = self
            .fetch(&source, move || {
                let plan = sources::plan(&context, &options).map_err(|err| err.to_string())?;
                let value = serde_json::to_value(&plan).map_err(|err| err.to_string())?;
                Ok((plan, value))
            })
            .await?;
        let names: Vec<&str> = plan.candidates().iter().map(|c| c.name.as_str()).collect();
        let risky = plan.risky();
        let mut text = format!(
            "To install as source '{}' from {} ({}): {} skill{}: {}.",
            plan.request.id,
            plan.request.location.url,
            short(&plan.fetched.version),
            names.len(),
            plural(names.len()),
            names.join(", ")
        );
        if !risky.is_empty() {
            text.push_str(&format!(
                " With error-level security findings: {}.",
                risky.join(", ")
            ));
        }
        let id = self.keep(who, Reviewed::Add(Arc::new(plan)))?;
        Ok((
            text,
            json!({ "plan": id, "expires_in": KEPT_FOR.as_secs(), "add": value }),
        ))
    }

    /// `app_install`: installs a kept plan.
    pub async fn install(
        &self,
        registry: &Arc<Registry>,
        arguments: &JsonObject,
        who: &str,
    ) -> Result<(String, Value), String> {
        let (id, digest, allow_risky) = reviewed_arguments(arguments)?;
        let Reviewed::Add(plan) = self.find(&id, who, &digest)? else {
            return Err(format!("plan {id} is an update: apply it with `app_apply`"));
        };
        refuse_risky(&plan.risky(), allow_risky, "installed")?;
        let context = context(registry)?;
        let installed = blocking(move || sources::install(&context, &plan, allow_risky)).await?;
        self.forget(&id);
        let text = format!(
            "Installed {} skill{} from {} as source '{}'.",
            installed.skills.len(),
            plural(installed.skills.len()),
            installed.source,
            installed.id
        );
        Ok((text, to_value(&installed)))
    }

    /// `app_update`: fetches an installed source again and keeps the
    /// report, when something changed.
    pub async fn update(
        &self,
        registry: &Arc<Registry>,
        arguments: &JsonObject,
        who: &str,
    ) -> Result<(String, Value), String> {
        let source =
            text(arguments, "id")?.ok_or("`id` is missing: give an installed source's id")?;
        let context = context(registry)?;
        let what = format!("source '{source}'");
        let wanted = source.clone();
        let (pending, value) = self
            .fetch(&what, move || {
                let lock = sources::installed(&context).map_err(|err| err.to_string())?;
                let locked = sources::source(&context, &wanted).map_err(|err| err.to_string())?;
                let pending = sources::prepare(&context, &lock, &wanted)
                    .map_err(|err| vanished(&locked, &err))?;
                let value = serde_json::to_value(&pending).map_err(|err| err.to_string())?;
                Ok((pending, value))
            })
            .await?;
        let changed = pending.changed();
        if changed == 0 {
            return Ok((
                format!(
                    "Source '{source}' is up to date ({}).",
                    short(&pending.source.version)
                ),
                json!({ "plan": null, "update": value }),
            ));
        }
        let text = format!(
            "Source '{source}': {changed} skill{} changed, new or gone ({} → {}).",
            plural(changed),
            short(&pending.source.version),
            short(&pending.fetched.version)
        );
        let id = self.keep(who, Reviewed::Update(Arc::new(pending)))?;
        Ok((
            text,
            json!({ "plan": id, "expires_in": KEPT_FOR.as_secs(), "update": value }),
        ))
    }

    /// `app_apply`: installs a kept update.
    pub async fn apply(
        &self,
        registry: &Arc<Registry>,
        arguments: &JsonObject,
        who: &str,
    ) -> Result<(String, Value), String> {
        let (id, digest, allow_risky) = reviewed_arguments(arguments)?;
        let Reviewed::Update(pending) = self.find(&id, who, &digest)? else {
            return Err(format!(
                "plan {id} adds a source: install it with `app_install`"
            ));
        };
        refuse_risky(&pending.risky(), allow_risky, "updated")?;
        let context = context(registry)?;
        let updated = blocking(move || {
            // The command line's own check, worded for the page.
            let now = sources::source(&context, &pending.source.id)?;
            if now != pending.source {
                return Err(SourceError::Usage(format!(
                    "source '{}' changed in {} since it was reviewed; nothing was updated: check for updates again",
                    now.id,
                    context.paths.lock.display()
                )));
            }
            // A new signer needs a person at the terminal
            // (`update --allow-signer-change`); the page only shows it.
            sources::apply(&context, std::slice::from_ref(&*pending), allow_risky, false)
        })
        .await?;
        self.forget(&id);
        let text = match updated.as_slice() {
            [one] => format!("Updated source '{}' to {}.", one.id, short(&one.to)),
            _ => "Nothing was updated: nothing changed.".to_owned(),
        };
        Ok((text, json!({ "updated": updated })))
    }

    /// `app_remove`: removes an installed source.
    pub async fn remove(
        &self,
        registry: &Arc<Registry>,
        arguments: &JsonObject,
    ) -> Result<(String, Value), String> {
        let id = text(arguments, "id")?.ok_or("`id` is missing: give an installed source's id")?;
        let context = context(registry)?;
        let removed = blocking(move || sources::remove(&context, &id)).await?;
        let text = format!(
            "Removed source '{}' and its {} skill{}.",
            removed.id,
            removed.skills.len(),
            plural(removed.skills.len())
        );
        Ok((text, to_value(&removed)))
    }
}

/// Why an update could not be fetched, and what still holds.
fn vanished(locked: &crate::lock::Locked, err: &SourceError) -> String {
    let err = err.to_string();
    format!(
        "could not fetch source '{}' again: {}; nothing was changed: '{}' stays at {} and its skills are still served. If its repository moved or is gone, remove the source (and add it again from where it is now)",
        locked.id,
        err.trim_end_matches('.'),
        locked.id,
        short(&locked.version)
    )
}

/// The refusal of risky skills without `allow_risky`, worded for the app.
fn refuse_risky(risky: &[String], allow_risky: bool, done: &str) -> Result<(), String> {
    if risky.is_empty() || allow_risky {
        return Ok(());
    }
    let names: Vec<String> = risky.iter().map(|n| format!("'{n}'")).collect();
    Err(format!(
        "nothing was {done}: {} {} error-level security findings; review them, then go ahead with `allow_risky` (\"Install anyway\"), or leave {} out",
        names.join(", "),
        if risky.len() == 1 { "has" } else { "have" },
        if risky.len() == 1 { "it" } else { "them" },
    ))
}

pub(super) fn context(registry: &Registry) -> Result<Context, String> {
    Context::new(&registry.settings(), registry.env()).map_err(|err| err.to_string())
}

/// Runs `work` on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SourceError> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| err.to_string())?
        .map_err(|err| err.to_string())
}

/// `plan`, `digest` and `allow_risky` of an install or apply.
fn reviewed_arguments(arguments: &JsonObject) -> Result<(String, String, bool), String> {
    let id = text(arguments, "plan")?
        .ok_or("`plan` is missing: give the id of the plan reviewed (`app_add`, `app_update`)")?;
    let digest = text(arguments, "digest")?
        .ok_or("`digest` is missing: give the digest of the plan as reviewed")?;
    let allow_risky = match arguments.get("allow_risky") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(allow)) => *allow,
        Some(_) => return Err("`allow_risky` must be true or false".to_owned()),
    };
    Ok((id, digest, allow_risky))
}

/// A text argument, trimmed; `None` when absent or empty.
fn text(arguments: &JsonObject, key: &str) -> Result<Option<String>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

/// A list of names.
fn list(arguments: &JsonObject, key: &str) -> Result<Vec<String>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| format!("`{key}` must be a list of names"))
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be a list of names")),
    }
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
