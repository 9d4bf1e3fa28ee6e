//! `[sources.ID] auto_update` of `serve --http` (behaviour.md, "Sources"): a
//! team server keeps installed sources up to date on a schedule. Each pull
//! is `sources::auto_update` on a blocking thread, off the request path:
//! fetch, compare, write the store, swap the lock. A pull that fails changes
//! nothing: the last good version stays served, and the failure is logged.
//! The registry refreshes after a pull that installed something (the lock's
//! watch would too; asking directly does not depend on the watcher).

use std::sync::Arc;
use std::time::Duration;

use crate::config::file::AutoUpdate;
use crate::lock;
use crate::server::registry::Registry;
use crate::sources::{self, AutoUpdated, Context};

/// Starts one task per `[sources.ID]` with `auto_update`: a pull right away
/// (a replica that starts from an old lock catches up), then one every
/// interval.
pub fn spawn(registry: &Arc<Registry>, context: Context, updates: &[AutoUpdate]) {
    let context = Arc::new(context);
    for update in updates {
        tracing::info!(
            "auto_update: source '{}' is fetched every {} ({})",
            update.id,
            words(update.every),
            update.origin
        );
        let registry = Arc::clone(registry);
        let context = Arc::clone(&context);
        let id = update.id.clone();
        let every = update.every;
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                pull(&registry, &context, &id).await;
            }
        });
    }
}

/// One pull of the source `id`, logged.
async fn pull(registry: &Arc<Registry>, context: &Arc<Context>, id: &str) {
    let task = {
        let context = Arc::clone(context);
        let id = id.to_owned();
        tokio::task::spawn_blocking(move || sources::auto_update(&context, &id))
    };
    match task.await {
        Ok(Ok(AutoUpdated::Unchanged)) => {
            tracing::debug!("auto_update: source '{id}' is up to date");
        }
        Ok(Ok(AutoUpdated::Applied { changed })) => {
            tracing::info!(
                "auto_update: source '{id}' updated to {} ({changed} skill{} changed, new or gone)",
                served_version(context, id),
                if changed == 1 { "" } else { "s" }
            );
            registry.request_refresh();
        }
        Ok(Err(err)) => tracing::warn!(
            "auto_update: could not update source '{id}': {err}; still serving {}",
            served_version(context, id)
        ),
        Err(err) => tracing::error!("auto_update: the pull of source '{id}' failed: {err}"),
    }
}

/// The version of `id` in the lock now, as `sources` shows it.
fn served_version(context: &Context, id: &str) -> String {
    match lock::read(&context.lock) {
        Ok(Some(lock)) => lock.source(id).map_or_else(
            || "nothing (it is not in the lock)".to_owned(),
            |source| source.label(),
        ),
        _ => "what the lock names".to_owned(),
    }
}

/// `10m`, `90s`, `2h`: an interval as it is written in `config.toml`.
fn words(every: Duration) -> String {
    let secs = every.as_secs();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60)] {
        if secs.is_multiple_of(size) {
            return format!("{}{unit}", secs / size);
        }
    }
    format!("{secs}s")
}
