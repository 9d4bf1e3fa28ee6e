//! The MCP server: the async shell around the blocking core.
//!
//! Everything that touches tokio, rmcp or notify lives in this folder: the
//! handler (`handler`), the live registry and its refreshes (`registry`),
//! rescans on a miss (`rescan`), the file watcher (`watch`, over the events
//! of `events`) and the bounded stdio transport (`transport`). This module runs them over stdio until the client
//! goes away or a signal arrives (behaviour.md §7).

mod events;
mod handler;
mod registry;
mod rescan;
mod transport;
mod watch;

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::{Peer, RoleServer, ServiceExt};

use crate::config::{Config, ServeOptions};
use crate::diagnostic::Severity;

use handler::SkillServer;
use registry::Registry;
use transport::{Closed, StdioTransport};

/// Why the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// stdin closed: the client went away.
    Eof,
    /// stdout closed: nobody reads the answers any more.
    StdoutClosed,
    Signal(&'static str),
}

/// Runs the server on stdio until stdin closes or SIGINT/SIGTERM arrives.
///
/// The first scan runs on a blocking thread while signals are already being
/// listened for, so even a slow start-up can be interrupted cleanly.
pub async fn run(config: Config, options: ServeOptions) -> anyhow::Result<Stop> {
    let mut shutdown = std::pin::pin!(shutdown_signal());
    let budget = options.description_budget;
    let started = Instant::now();
    let registry = tokio::select! {
        registry = tokio::task::spawn_blocking(move || Registry::new(config, budget)) => Arc::new(registry?),
        signal = &mut shutdown => return Ok(Stop::Signal(signal)),
    };
    log_startup(&registry, &options, started.elapsed());
    registry.prepare_search();

    let server = SkillServer::new(Arc::clone(&registry));
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (transport, closed) = StdioTransport::new(stdin, stdout);
    let input_closed = transport.input_closed();
    let running = tokio::select! {
        running = server.serve(transport) => match running {
            Ok(running) => running,
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(Stop::Eof),
            Err(_) if closed.is_closed() => return Ok(Stop::StdoutClosed),
            Err(err) => return Err(anyhow::anyhow!("MCP handshake failed: {err}")),
        },
        () = closed.wait() => return Ok(Stop::StdoutClosed),
        signal = &mut shutdown => return Ok(Stop::Signal(signal)),
    };
    // Background tasks run until the process exits (see `main`): tearing
    // them down would cost more than it saves.
    notify_changes(&registry, running.peer().clone());
    if let Some(every) = options.refresh_interval {
        registry.spawn_interval(every);
    }
    if options.watch {
        let registry = Arc::clone(&registry);
        tokio::spawn(watch::run(registry, options.refresh_interval));
    }

    // On a signal, stop at once: rmcp would let in-flight requests (a call
    // waiting for a rescan, say) finish first, for up to two seconds. After
    // stdin ends, it would wait for them up to five; they get `EOF_GRACE`
    // (behaviour.md §13).
    let stop = tokio::select! {
        quit = running.waiting() => {
            quit?;
            Stop::Eof
        }
        () = grace_after(&input_closed) => Stop::Eof,
        () = closed.wait() => Stop::StdoutClosed,
        signal = &mut shutdown => Stop::Signal(signal),
    };
    // Nothing to tear down: the process exits next, and dropping the
    // snapshot, the caches and the watcher (whose thread unwatches every
    // folder one by one) took 40–60 ms at 10,000 skills, measured.
    std::mem::forget(registry);
    Ok(stop)
}

/// How long requests in flight when stdin ends may take to answer: a client
/// that closes stdin right after its last request still gets the answer,
/// and no call (a rescan at 100,000 skills, say) delays the exit by more.
const EOF_GRACE: Duration = Duration::from_millis(100);

/// Resolves [`EOF_GRACE`] after stdin has ended.
async fn grace_after(input_closed: &Closed) {
    input_closed.wait().await;
    tokio::time::sleep(EOF_GRACE).await;
}

/// Sends `notifications/tools/list_changed` whenever the description changes.
/// A client that has gone away makes sending fail; that is not an error.
fn notify_changes(registry: &Registry, peer: Peer<RoleServer>) {
    let mut changes = registry.description_changes();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            match peer.notify_tool_list_changed().await {
                Ok(()) => tracing::debug!("sent notifications/tools/list_changed"),
                Err(err) => tracing::debug!("could not send tools/list_changed: {err}"),
            }
        }
    });
}

fn log_startup(registry: &Registry, options: &ServeOptions, elapsed: std::time::Duration) {
    let served = registry.current();
    let snapshot = &served.snapshot;
    for diagnostic in &snapshot.diagnostics {
        diagnostic.log();
    }
    let by_source = snapshot.count_by_source();
    let errors = snapshot
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let existing = snapshot.roots.len() - snapshot.missing_roots.len();
    tracing::info!(
        "skillserve {} serving {} skills ({}) from {existing} of {} folders in {:.1} ms; {} diagnostics ({errors} errors){}",
        env!("CARGO_PKG_VERSION"),
        snapshot.skills().len(),
        if by_source.is_empty() {
            "none"
        } else {
            &by_source
        },
        snapshot.roots.len(),
        elapsed.as_secs_f64() * 1e3,
        snapshot.diagnostics.len(),
        if snapshot.diagnostics.is_empty() {
            ""
        } else {
            "; run `skillserve check` for details"
        },
    );
    tracing::info!(
        "refresh: {}; file watching: {}",
        match options.refresh_interval {
            Some(every) => format!("every {} s", every.as_secs()),
            None => "off".to_owned(),
        },
        if options.watch {
            "on"
        } else {
            "off (--no-watch)"
        },
    );
    for (root, count) in snapshot.roots.iter().zip(&snapshot.per_root) {
        tracing::debug!(source = %root.source, skills = count, "scanned {}", root.path.display());
    }
}

/// Resolves with the name of the first SIGINT or SIGTERM.
pub async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(term) => term,
            Err(err) => {
                tracing::warn!("cannot listen for SIGTERM: {err}");
                let _ = tokio::signal::ctrl_c().await;
                return "SIGINT";
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}
