//! The MCP server: the async shell around the blocking core.
//!
//! The server's async parts live in this folder (the only other user of
//! tokio and rmcp is `import`, which starts MCP servers as children): the
//! handler (`handler`), the live registry and its refreshes (`registry`),
//! rescans on a miss (`rescan`), the file watcher (`watch`, over the events
//! of `events`) and the bounded stdio transport (`transport`). This module
//! runs them over stdio until the client goes away or a signal arrives
//! (behaviour.md §7).

pub mod app;
mod auto_update;
mod dispatch;
mod events;
mod gone;
mod handler;
pub mod http;
mod malformed;
mod page;
mod prompts;
mod registry;
mod rescan;
mod resources;
mod skills;
mod transport;
mod watch;

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Instant;

use rmcp::ServiceExt;

use crate::config::{Env, Flags, ServeOptions, Settings};
use crate::diagnostic::Severity;
use crate::exit_codes::ExitCode;
use crate::snapshot;

use crate::render::Base;
use dispatch::Dispatch;
use handler::SkillServer;
use registry::Registry;
use rescan::Caller;
use transport::StdioTransport;

pub use gone::ClientGone;

/// Why the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// stdin closed: the client went away.
    Eof,
    /// stdout closed: nobody reads the answers any more.
    StdoutClosed,
    Signal(&'static str),
    /// `skillserve ui`: its page has been closed for a minute.
    PageClosed,
}

/// `skillserve` and `skillserve serve`: runs the server ([`run`]) on a
/// runtime of its own, says why it stopped in the log, and returns the exit
/// code. A person who started it by hand on a terminal is told on `hint`
/// what it waits for.
pub fn serve(settings: Settings, flags: Flags, env: Env, hint: &mut dyn Write) -> ExitCode {
    if settings.config.user && settings.config.home.is_some() {
        // Which variable gave the home folder (on Windows HOME may be
        // passed over for USERPROFILE); none is already a warning.
        tracing::info!("home folder: {}", env.home.describe());
    }
    if settings.serve.http.is_none() && std::io::stdin().is_terminal() {
        let _ = writeln!(
            hint,
            "skillserve is an MCP server: it is waiting for an MCP client on stdin (press Ctrl-D or Ctrl-C to quit). To see your skills, run `skillserve list`."
        );
    }
    let runtime = match runtime(settings.serve.http.as_ref().map_or(1, |http| http.threads)) {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!("cannot start the async runtime: {err}");
            return ExitCode::Failure;
        }
    };
    let stopped = runtime.block_on(run(settings, flags, env));
    // Neither wait for blocking threads (a scan in progress has nothing to
    // save) nor drop the tasks (the watcher would unwatch every folder one by
    // one): the caller exits the process right after this.
    std::mem::forget(runtime);
    match stopped {
        Ok(Stop::Eof) => tracing::info!("client closed stdin; exiting"),
        Ok(Stop::StdoutClosed) => tracing::info!("client closed stdout; exiting"),
        Ok(Stop::Signal(signal)) => tracing::info!("received {signal}; exiting"),
        Ok(Stop::PageClosed) => {
            tracing::info!("the skills app's page has been closed for a minute; exiting");
        }
        Err(err) => {
            tracing::error!("{err:#}");
            return ExitCode::Failure;
        }
    }
    ExitCode::Success
}

/// `skillserve ui`: the skills app on a free loopback port, for the person
/// who runs it: a one-time token that may change anything, handed to the
/// browser in the URL's fragment (which no server ever sees, so it reaches
/// no log); the address is written on `out`, and opened with the
/// platform's opener when `open`. The server stops a minute after the page
/// is closed ([`Stop::PageClosed`]).
pub fn ui(
    mut settings: Settings,
    flags: Flags,
    env: Env,
    open: bool,
    out: &mut dyn Write,
) -> ExitCode {
    let token = match crate::tokens::generate() {
        Ok(token) => token,
        Err(err) => {
            tracing::error!("{err}");
            return ExitCode::Failure;
        }
    };
    // A free port, asked of the OS; the server binds it right after.
    let addr = match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr,
        Err(err) => {
            tracing::error!("cannot find a free port on 127.0.0.1: {err}");
            return ExitCode::Failure;
        }
    };
    settings.serve.http = Some(crate::config::HttpOptions {
        addr,
        tokens: None,
        oauth: None,
        allowed_origins: Vec::new(),
        public_url: None,
        metrics: false,
        max_sessions: crate::config::DEFAULT_MAX_SESSIONS,
        max_connections: crate::config::DEFAULT_MAX_CONNECTIONS,
        session_idle: std::time::Duration::from_secs(crate::config::DEFAULT_SESSION_IDLE_SECS),
        // One person's page: one thread, and no balancer to drain for.
        threads: 1,
        drain: std::time::Duration::ZERO,
        launch: Some(crate::config::Launch {
            token: token.clone(),
            open,
        }),
    });
    let url = format!("http://{addr}/#token={token}");
    let _ = writeln!(out, "The skills app: {url}");
    let _ = writeln!(
        out,
        "(It stops a minute after the page is closed, or on Ctrl-C.)"
    );
    let _ = out.flush();
    if open {
        std::thread::spawn(move || {
            // Once the server listens, so that the page's first load works.
            for _ in 0..100 {
                if std::net::TcpStream::connect(addr).is_ok() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            if let Err(err) = open_browser(&url) {
                tracing::warn!("could not open a browser ({err}): open the address above yourself");
            }
        });
    }
    serve(settings, flags, env, &mut std::io::sink())
}

/// Opens `url` in the user's browser with the platform's own opener.
fn open_browser(url: &str) -> std::io::Result<()> {
    let mut command = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut command = std::process::Command::new("cmd");
        command.args(["/C", "start", ""]);
        command
    } else {
        std::process::Command::new("xdg-open")
    };
    let status = command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "the opener exited with {status}"
        )))
    }
}

/// The runtime the server runs on: one thread (stdio, and `--threads 1`),
/// or `threads` worker threads that answer HTTP requests side by side
/// (docs/decisions.md has the figures of both). Blocking work (scans, the
/// search of a miss) goes to the runtime's blocking pool either way.
fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    if threads <= 1 {
        return tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("skillserve-worker")
        .enable_all()
        .build()
}

/// Runs the server on stdio until stdin closes or SIGINT/SIGTERM arrives;
/// with `--http`, over HTTP until a signal arrives (`http`).
///
/// The first scan runs on a blocking thread while signals are already being
/// listened for, so even a slow start-up can be interrupted cleanly.
pub async fn run(settings: Settings, flags: Flags, env: Env) -> anyhow::Result<Stop> {
    if settings.serve.http.is_some() {
        return http::run(settings, flags, env).await;
    }
    let mut shutdown = std::pin::pin!(shutdown_signal());
    let options = settings.serve.clone();
    for update in &options.auto_update {
        tracing::warn!(
            "auto_update of source '{}' ({}) applies to `serve --http` only: this server does not fetch sources",
            update.id,
            update.origin
        );
    }
    let started = Instant::now();
    let registry = tokio::select! {
        registry = tokio::task::spawn_blocking(move || Registry::new(settings, flags, env)) => Arc::new(registry?),
        signal = &mut shutdown => return Ok(Stop::Signal(signal)),
    };
    log_startup(&registry, &options, started.elapsed());
    registry.prepare_search();

    let caller = Arc::new(Caller::new(Arc::clone(&registry), Base::Path));
    let app = Arc::new(app::App::default());
    let server = Dispatch(SkillServer::new(
        Arc::clone(&registry),
        caller,
        Arc::clone(&app),
        &options,
    ));
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (transport, link) = StdioTransport::new(stdin, stdout);
    let running = tokio::select! {
        running = server.serve(transport) => match running {
            Ok(running) => running,
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(Stop::Eof),
            Err(_) if link.is_closed() => return Ok(Stop::StdoutClosed),
            Err(err) => return Err(anyhow::anyhow!("MCP handshake failed: {err}")),
        },
        () = link.stdout_closed() => return Ok(Stop::StdoutClosed),
        signal = &mut shutdown => return Ok(Stop::Signal(signal)),
    };
    // Background tasks run until the process exits (see `main`): tearing
    // them down would cost more than it saves.
    // The start-up scan checked installed skills by their `SKILL.md` alone:
    // check all their files now, off the request path (a skill that fails
    // is withdrawn, with list-changed notifications). The watcher refreshes
    // once it is armed anyway.
    if registry.has_installed() && !options.watch {
        registry.request_refresh();
    }
    if let Some(every) = options.refresh_interval {
        registry.spawn_interval(every);
    }
    if options.watch {
        let registry = Arc::clone(&registry);
        tokio::spawn(watch::run(registry, options.refresh_interval));
    }

    // On a signal, stop at once: rmcp would let in-flight requests (a call
    // waiting for a rescan, say) finish first, for up to two seconds.
    let stop = tokio::select! {
        quit = running.waiting() => {
            quit?;
            Stop::Eof
        }
        // Sooner than rmcp, which waits for open listen streams to end, and
        // for requests in flight up to five seconds.
        () = link.stdin_drained(EOF_GRACE) => Stop::Eof,
        () = link.stdout_closed() => Stop::StdoutClosed,
        signal = &mut shutdown => Stop::Signal(signal),
    };
    // The uses recorded since the last write are written now (a write takes
    // a few milliseconds; a disk that does not answer is not waited for).
    registry.usage().flush(USAGE_PATIENCE);
    // Nothing to tear down: the process exits next, and dropping the
    // snapshot, the caches and the watcher (whose thread unwatches every
    // folder one by one) took 40–60 ms at 10,000 skills, measured. The
    // app's plans go: they hold fetched files in temporary folders.
    app.close();
    std::mem::forget(registry);
    Ok(stop)
}

/// How long the last uses recorded may take to be written when the server
/// stops.
const USAGE_PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);

/// How long requests in flight when stdin ends may take to be answered: a
/// client that closes stdin right after its last request still gets the
/// answer (a call takes well under a millisecond), and no request (a rescan
/// of 100,000 skills, say) delays the exit by more; the exit stays within
/// 200 ms of EOF.
const EOF_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

fn log_startup(registry: &Registry, options: &ServeOptions, elapsed: std::time::Duration) {
    let served = registry.current();
    let snapshot = &served.snapshot;
    for diagnostic in &snapshot.diagnostics {
        diagnostic.log();
    }
    let by_source = snapshot::count_by_source(snapshot.skills().iter());
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
    let settings = registry.settings();
    match &settings.location {
        Some(location) if settings.file_found => {
            tracing::info!(
                "settings from {} ({} client profiles)",
                location.path.display(),
                settings.rules.profiles.len()
            );
        }
        _ => tracing::debug!("no settings file; flags, environment and defaults apply"),
    }
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
