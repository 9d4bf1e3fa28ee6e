//! The `skillserve` binary: parse the command line, set up logging, hand off.

use std::io::Write;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use skillserve::cli::{Cli, Command};
use skillserve::commands;
use skillserve::config::Env;
use skillserve::exit_codes::ExitCode;
use skillserve::import::{self, ImportError, invoke};
use skillserve::registry;
use skillserve::scan::Cache;
use skillserve::server::{self, Stop};

fn main() {
    limit_malloc_arenas();
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(code) => code,
        // `skillserve list | head` closing the pipe early is not an error.
        Err(err) if is_broken_pipe(&err) => ExitCode::Success,
        Err(err) => {
            // Logging may not be set up yet; this is the one line a client's
            // log shows for a start-up failure.
            eprintln!("skillserve: {err:#}");
            ExitCode::Usage
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

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limit_malloc_arenas() {}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let serving = matches!(cli.command, None | Some(Command::Serve(_)));
    init_logging(cli.shared.log_level.as_deref(), serving)?;
    let env = Env::from_process()?;
    let (config, warnings) = cli.config(&env)?;
    for warning in warnings {
        tracing::warn!("{warning}");
    }

    let options = cli.serve_options()?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let code = match &cli.command {
        None | Some(Command::Serve(_)) => {
            drop(out);
            return serve(config, options);
        }
        Some(Command::List { json, all }) => {
            let snapshot = registry::load(&config, &mut Cache::default(), None);
            commands::list(&snapshot, *json, *all, &mut out)?
        }
        Some(Command::Show { name }) => {
            let snapshot = registry::load(&config, &mut Cache::default(), None);
            commands::show(
                &snapshot,
                name,
                config.max_file_bytes,
                &mut out,
                &mut std::io::stderr(),
            )?
        }
        Some(Command::Check { json }) => {
            let snapshot = registry::load(&config, &mut Cache::default(), None);
            commands::check(&snapshot, config.max_file_bytes, *json, &mut out)?
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

fn serve(
    config: skillserve::config::Config,
    options: skillserve::config::ServeOptions,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let stopped = runtime.block_on(server::run(config, options));
    // Do not wait for blocking threads: a scan in progress has nothing to save.
    runtime.shutdown_background();
    match stopped {
        Ok(Stop::Eof) => tracing::info!("client closed stdin; exiting"),
        Ok(Stop::Signal(signal)) => tracing::info!("received {signal}; exiting"),
        Err(err) => {
            tracing::error!("{err:#}");
            return Ok(ExitCode::Failure);
        }
    }
    Ok(ExitCode::Success)
}

/// Runs `future` (the `import` and `invoke` commands) on a current-thread
/// runtime: their work is waiting on child processes, not computing. `None`
/// when SIGINT or SIGTERM stopped it.
fn block_on<F: std::future::Future>(future: F) -> std::io::Result<Option<F::Output>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let output = runtime.block_on(async {
        tokio::select! {
            output = future => Ok(output),
            signal = server::shutdown_signal() => Err(signal),
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

/// Logs go to stderr only: stdout carries JSON-RPC. `--log-level` wins over
/// `SKILLSERVE_LOG`; a bare level applies to skillserve, dependencies stay at warn.
fn init_logging(level: Option<&str>, serving: bool) -> anyhow::Result<()> {
    const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];
    let directives = match level {
        Some(level) if LEVELS.contains(&level.to_ascii_lowercase().as_str()) => {
            format!("warn,skillserve={level}")
        }
        Some(filter) => filter.to_owned(),
        None => match std::env::var("SKILLSERVE_LOG") {
            Ok(filter) if !filter.trim().is_empty() => filter,
            _ if serving => "warn,skillserve=info".to_owned(),
            _ => "warn".to_owned(),
        },
    };
    let filter = EnvFilter::try_new(&directives)
        .map_err(|e| anyhow::anyhow!("invalid log filter `{directives}`: {e}"))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    Ok(())
}
