//! The `skillserve` binary: parse the command line, set up logging, hand off.

use std::io::{IsTerminal, Write};

use std::sync::Arc;

use tracing_subscriber::filter::Targets;

use skillserve::cli::{self, Cli, Command, TokenCommand, UsageError};
use skillserve::commands::{self, Format, ListOptions};
use skillserve::config::{Env, Flags, Settings, settings};
use skillserve::exit_codes::ExitCode;
use skillserve::import::{self, ImportError, invoke};
use skillserve::installed::Verify;
use skillserve::profiles::{self, Profiles};
use skillserve::server::{self, Stop};
use skillserve::snapshot::{self, Cache, Snapshot};
use skillserve::sources::{self, SourceError};
use skillserve::tokens;
use skillserve::trust::{self, Confirm};

fn main() {
    limit_malloc_arenas();
    let cli = Cli::read(std::env::args_os());
    let code = match run(cli) {
        Ok(code) => code,
        // `skillserve list | head` closing the pipe early is not an error.
        Err(err) if is_broken_pipe(&err) => ExitCode::Success,
        Err(err) => {
            // Logging may not be set up yet; this is the one line a client's
            // log shows for a start-up failure.
            eprintln!("skillserve: {err:#}");
            if err.is::<UsageError>() || err.is::<settings::SettingsError>() {
                ExitCode::Usage
            } else {
                ExitCode::Failure
            }
        }
    };
    // Exit explicitly: a blocking thread (a scan in progress) must not keep the
    // process alive after the server has stopped.
    std::process::exit(code.code());
}

/// glibc gives each thread that allocates a heap arena of its own, and memory
/// freed in one arena is not reused by another. With the scan's and the
/// watcher's threads that cost about 7 MiB at 10,000 skills (36.5 against
/// 29.5 MiB resident, measured); one arena costs no start-up time (measured).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn limit_malloc_arenas() {
    // SAFETY: mallopt only changes allocator parameters, and this runs first
    // thing in main, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Other allocators (musl, macOS, Windows) have no per-thread arenas to limit.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limit_malloc_arenas() {}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let env = Env::from_process()?;
    let settings = cli.settings(&env)?;
    init_logging(cli.log_filter(&env, settings.log_level.as_ref())?);
    for warning in &settings.warnings {
        tracing::warn!("{warning}");
    }

    let load = || {
        Arc::new(snapshot::load(
            &settings.config,
            &mut Cache::default(),
            None,
        ))
    };
    // A client's view, by the name it gives (`--client`), or a client
    // that matches no profile.
    let view_for = |client: Option<&str>| {
        let snapshot = load();
        let profiles = Profiles::new(&settings);
        let name = client.map(profiles::client_name);
        let key = profiles.key(name.as_deref());
        let header = name.map(|name| {
            format!(
                "Offered to {name}: {}\n{}",
                profiles.describe(key),
                profiles.describe_catalog(key, &name)
            )
        });
        (profiles, snapshot, key, header)
    };
    let max_file_bytes = settings.config.max_file_bytes;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let code = match &cli.command {
        None | Some(Command::Serve(_)) => {
            drop(out);
            if settings.config.user && settings.config.home.is_some() {
                // Which variable gave the home folder (on Windows HOME may be
                // passed over for USERPROFILE); none is already a warning.
                tracing::info!("home folder: {}", env.home.describe());
            }
            if settings.serve.http.is_none() && std::io::stdin().is_terminal() {
                // Someone ran the server by hand: say what it is waiting for.
                eprintln!(
                    "skillserve is an MCP server: it is waiting for an MCP client on stdin (press Ctrl-D or Ctrl-C to quit). To see your skills, run `skillserve list`."
                );
            }
            return Ok(serve(settings, cli.flags(), env));
        }
        Some(Command::List {
            description: true,
            client,
            ..
        }) => {
            let (profiles, snapshot, key, _) = view_for(client.as_deref());
            commands::description(&profiles.view(&snapshot, key), &mut out)?
        }
        Some(Command::List {
            instructions: true,
            client,
            ..
        }) => {
            let (profiles, snapshot, key, _) = view_for(client.as_deref());
            commands::instructions(&profiles.view(&snapshot, key), &mut out)?
        }
        Some(Command::List {
            json, all, client, ..
        }) => {
            let (profiles, snapshot, key, header) = view_for(client.as_deref());
            let options = ListOptions {
                format: Format::of(*json),
                all: *all,
            };
            let decision = profiles.decide(&snapshot, key);
            let view = profiles.view(&snapshot, key);
            commands::list(
                &view,
                &decision,
                header.as_deref(),
                max_file_bytes,
                options,
                &mut out,
            )?
        }
        Some(Command::Show { name, file, client }) => {
            let (profiles, snapshot, key, _) = view_for(client.as_deref());
            let decision = profiles.decide(&snapshot, key);
            commands::show(
                &profiles.view(&snapshot, key),
                &decision,
                name,
                file.as_deref(),
                max_file_bytes,
                &mut out,
                &mut std::io::stderr(),
            )?
        }
        Some(Command::Check { json, security }) => {
            let mut cache = Cache::default();
            // `check` hashes every installed skill's files.
            let snapshot = snapshot::load_with(&settings.config, &mut cache, None, Verify::Full);
            let scan = security.then_some(&mut cache.security);
            let format = Format::of(*json);
            commands::check(&snapshot, max_file_bytes, format, scan, &mut out)?
        }
        Some(Command::Trust { list: true, .. }) => {
            let mut cache = Cache::default();
            let snapshot = snapshot::load(&settings.config, &mut cache, None);
            trust::list(
                &snapshot,
                &cache.security,
                &settings.config,
                &mut out,
                &mut std::io::stderr(),
            )?
        }
        Some(Command::Trust { name, yes, .. }) => {
            let mut cache = Cache::default();
            let snapshot = snapshot::load(&settings.config, &mut cache, None);
            let stdin = std::io::stdin();
            let mut input = stdin.lock();
            let confirm = if *yes {
                Confirm::Yes
            } else if stdin.is_terminal() {
                Confirm::Ask(&mut input)
            } else {
                Confirm::No
            };
            let name = name.as_deref().unwrap_or_default();
            trust::trust(
                &snapshot,
                &cache.security,
                &settings.config,
                name,
                confirm,
                &mut out,
                &mut std::io::stderr(),
            )?
        }
        Some(Command::Untrust { name }) => {
            trust::untrust(&settings.config, name, &mut out, &mut std::io::stderr())?
        }
        Some(Command::Add(args)) => {
            let context = sources::Context::new(&settings.config, &env);
            let options = args.options();
            let outcome = context.and_then(|context| {
                with_confirmation(args.yes, |confirm| {
                    sources::add(&context, &options, confirm, &mut out)
                })
            });
            finish_sources(outcome, &mut out)?
        }
        Some(Command::Update(args)) => {
            let context = sources::Context::new(&settings.config, &env);
            let options = args.options();
            let outcome = context.and_then(|context| {
                with_confirmation(args.yes, |confirm| {
                    sources::update(&context, &options, confirm, &mut out)
                })
            });
            finish_sources(outcome, &mut out)?
        }
        Some(Command::Remove { id, yes }) => {
            let context = sources::Context::new(&settings.config, &env);
            let outcome = context.and_then(|context| {
                with_confirmation(*yes, |confirm| {
                    sources::remove(&context, id, confirm, &mut out)
                })
            });
            finish_sources(outcome, &mut out)?
        }
        Some(Command::Sources { json }) => {
            let outcome = sources::Context::new(&settings.config, &env)
                .and_then(|context| sources::list(&context, *json, &mut out));
            finish_sources(outcome, &mut out)?
        }
        Some(Command::Publish { dir, out: target }) => {
            let dir = cli::command_path("publish folder", dir, &env)?;
            let target = cli::command_path("--out", target, &env)?;
            let outcome = sources::publish(&dir, &target, max_file_bytes, &mut out);
            finish_sources(outcome, &mut out)?
        }
        Some(Command::Config) => commands::config(&settings, &mut out)?,
        Some(Command::Disable(args) | Command::Enable(args)) => {
            let disable = matches!(cli.command, Some(Command::Disable(_)));
            let snapshot: Arc<Snapshot> = load();
            let flags = cli.flags();
            let reload = || settings::load(&flags, &env);
            commands::toggle(
                &settings,
                &snapshot,
                &args.name,
                args.client.as_deref(),
                disable,
                &reload,
                &mut out,
                &mut std::io::stderr(),
            )?
        }
        Some(Command::Import(args)) => {
            let options = args.options(&env)?;
            match block_on(import::run(&options, &mut out))? {
                None => ExitCode::Failure,
                Some(Ok(code)) => code,
                Some(Err(ImportError::Output(err))) => return Err(err.into()),
                Some(Err(err)) => {
                    out.flush()?;
                    eprintln!("skillserve: {err}");
                    err.exit_code()
                }
            }
        }
        Some(Command::Token(command)) => {
            let path = command.file(&env, &settings.config)?;
            let TokenCommand::New { label, admin, .. } = command;
            match tokens::add(&path, label, *admin) {
                Ok(token) => {
                    writeln!(out, "{token}")?;
                    out.flush()?;
                    eprintln!(
                        "Added {}token `{label}` to {} (only its SHA-256 is kept: copy the token now, it is not shown again).\nClients send it as `Authorization: Bearer <token>`; delete its line to revoke it.",
                        if *admin { "admin " } else { "" },
                        path.display()
                    );
                    ExitCode::Success
                }
                Err(err) => {
                    eprintln!("skillserve: {err}");
                    ExitCode::Failure
                }
            }
        }
        Some(Command::Invoke(args)) => {
            let options = args.options(&env)?;
            let mut stdin = std::io::stdin().lock();
            let mut stderr = std::io::stderr();
            let result = block_on(invoke::run(&options, &mut stdin, &mut out, &mut stderr))?;
            match result {
                None => ExitCode::Failure,
                Some(Ok(code)) => code,
                Some(Err(invoke::InvokeError::Output(err))) => return Err(err.into()),
                Some(Err(err)) => {
                    eprintln!("skillserve: {err}");
                    err.exit_code()
                }
            }
        }
    };
    out.flush()?;
    Ok(code)
}

fn serve(settings: Settings, flags: Flags, env: Env) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!("cannot start the async runtime: {err}");
            return ExitCode::Failure;
        }
    };
    let stopped = runtime.block_on(server::run(settings, flags, env));
    // Neither wait for blocking threads (a scan in progress has nothing to
    // save) nor drop the tasks (the watcher would unwatch every folder one by
    // one): `main` exits the process right after this.
    std::mem::forget(runtime);
    match stopped {
        Ok(Stop::Eof) => tracing::info!("client closed stdin; exiting"),
        Ok(Stop::StdoutClosed) => tracing::info!("client closed stdout; exiting"),
        Ok(Stop::Signal(signal)) => tracing::info!("received {signal}; exiting"),
        Err(err) => {
            tracing::error!("{err:#}");
            return ExitCode::Failure;
        }
    }
    ExitCode::Success
}

/// Runs one `import` or `invoke` on a runtime of its own. `None` when SIGINT or
/// SIGTERM stopped it (said on stderr).
fn block_on<F: std::future::Future>(future: F) -> std::io::Result<Option<F::Output>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let output = runtime.block_on(async {
        // The signal handlers first: `future` starts servers in its first
        // poll, and a SIGTERM sent once they run must find the handlers in
        // place (unbiased, the branches are polled in random order).
        tokio::select! {
            biased;
            signal = server::shutdown_signal() => Err(signal),
            output = future => Ok(output),
        }
    });
    let output = match output {
        Ok(output) => Some(output),
        Err(signal) => {
            eprintln!("skillserve: stopped by {signal}");
            // The servers run in process groups of their own, out of reach of
            // the terminal's Ctrl-C; dropping the command killed them through
            // rmcp's clean-up tasks, which need a moment on this runtime.
            runtime.block_on(async {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            });
            None
        }
    };
    // Dropping the tasks left (a server that is still exiting, say) kills
    // their processes; there is nothing to wait for.
    runtime.shutdown_background();
    Ok(output)
}

/// Runs `command` with the user's confirmation: `--yes`, else a question
/// on the terminal (stderr, answered on stdin), else none (the command
/// shows its plan and changes nothing).
fn with_confirmation<T>(yes: bool, command: impl FnOnce(&mut sources::Confirm<'_>) -> T) -> T {
    if yes {
        return command(&mut sources::Confirm::Given);
    }
    if !std::io::stdin().is_terminal() {
        return command(&mut sources::Confirm::NoTerminal);
    }
    let mut ask = |question: &str| -> std::io::Result<bool> {
        eprint!("{question} [y/N] ");
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        let answer = answer.trim().to_ascii_lowercase();
        Ok(answer == "y" || answer == "yes")
    };
    command(&mut sources::Confirm::Ask(&mut ask))
}

/// The exit code of a sources command; its error (after what it printed)
/// is one line on stderr.
fn finish_sources(
    outcome: Result<ExitCode, SourceError>,
    out: &mut impl Write,
) -> std::io::Result<ExitCode> {
    match outcome {
        Ok(code) => Ok(code),
        Err(err) => {
            out.flush()?;
            eprintln!("skillserve: {err}");
            Ok(ExitCode::Failure)
        }
    }
}

/// Logs go to stderr only: stdout carries JSON-RPC.
fn init_logging(filter: Targets) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let format = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Never colours, even if a dependency turns on tracing-subscriber's
        // `ansi` feature: stderr usually ends up in a client's log file.
        .with_ansi(false);
    tracing_subscriber::registry()
        .with(filter)
        .with(skillserve::server::ClientGone)
        .with(format)
        .init();
}
