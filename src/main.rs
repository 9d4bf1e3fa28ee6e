//! The `skillserve` binary: parse the command line, set up logging, hand
//! each command to its function (`run`, as ripgrep's `main` does), exit with
//! its code.

use std::io::{self, IsTerminal};

use tracing_subscriber::filter::Targets;

use skillserve::cli::{self, Cli, Command, TokenCommand, UsageError};
use skillserve::commands::{self, Console, Format, ListOptions, Switch, SyncOptions, WhichLock};
use skillserve::config::{Env, settings};
use skillserve::exit_codes::ExitCode;
use skillserve::import::{self, invoke};
use skillserve::server;
use skillserve::trust;

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
            #[expect(
                clippy::print_stderr,
                reason = "the binary writes the CLI's output; this is its last line"
            )]
            {
                eprintln!("skillserve: {err:#}");
            }
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
    let command = match &cli.command {
        None | Some(Command::Serve(_)) => {
            return Ok(server::serve(settings, cli.flags(), env, &mut io::stderr()));
        }
        Some(Command::Ui { no_open }) => {
            return Ok(server::ui(
                settings,
                cli.flags(),
                env,
                !*no_open,
                &mut io::stdout(),
            ));
        }
        Some(command) => command,
    };
    let stdin = io::stdin();
    let mut console = Console {
        out: &mut io::stdout().lock(),
        err: &mut io::stderr(),
        interactive: stdin.is_terminal(),
        input: &mut stdin.lock(),
    };
    let code = match command {
        // It must not hold stdin or stdout locked, so it returned above.
        Command::Serve(_) | Command::Ui { .. } => {
            unreachable!("`serve` and `ui` are run before the console is set up")
        }
        Command::List {
            description: true,
            client,
            ..
        } => commands::description(&settings, client.as_deref(), console.out)?,
        Command::List {
            instructions: true,
            client,
            ..
        } => commands::instructions(&settings, client.as_deref(), console.out)?,
        Command::List {
            json, all, client, ..
        } => {
            let options = ListOptions {
                format: Format::of(*json),
                all: *all,
            };
            commands::list(&settings, client.as_deref(), options, console.out)?
        }
        Command::Show { name, file, client } => commands::show(
            &settings,
            client.as_deref(),
            name,
            file.as_deref(),
            console.out,
            console.err,
        )?,
        Command::Check { json, security } => {
            commands::check(&settings, Format::of(*json), *security, console.out)?
        }
        Command::Config => commands::config(&settings, console.out)?,
        Command::Stats { days, client, json } => commands::stats_command(
            &settings,
            *days,
            client.as_deref(),
            Format::of(*json),
            console.out,
        )?,
        Command::Enable(args) => commands::enable_disable(
            &settings,
            &args.request(Switch::Enable),
            &|| settings::load(&cli.flags(), &env),
            console.out,
            console.err,
        )?,
        Command::Disable(args) => commands::enable_disable(
            &settings,
            &args.request(Switch::Disable),
            &|| settings::load(&cli.flags(), &env),
            console.out,
            console.err,
        )?,
        Command::Trust { list: true, .. } => commands::trust_list(&settings, &mut console)?,
        Command::Trust { name, yes, .. } => commands::trust(
            &settings,
            name.as_deref().unwrap_or_default(),
            *yes,
            &mut console,
        )?,
        Command::Untrust { name } => {
            trust::untrust(&settings.config, name, console.out, console.err)?
        }
        Command::Add(args) => commands::add(
            &settings,
            &env,
            &args.options(&env)?,
            WhichLock::chosen(args.project),
            args.yes,
            &mut console,
        )?,
        Command::Update(args) => commands::update(
            &settings,
            &env,
            &args.options(),
            WhichLock::chosen(args.project),
            args.yes,
            &mut console,
        )?,
        Command::Remove { id, yes, project } => commands::remove(
            &settings,
            &env,
            id,
            WhichLock::chosen(*project),
            *yes,
            &mut console,
        )?,
        Command::Sources { json, project } => commands::sources(
            &settings,
            &env,
            *json,
            WhichLock::chosen(*project),
            &mut console,
        )?,
        Command::Sync(args) => commands::sync(
            &settings,
            &env,
            &SyncOptions {
                check: args.check,
                prune: args.prune,
                project_only: args.project,
            },
            &mut console,
        )?,
        Command::Publish {
            dir,
            out: target,
            sign,
        } => commands::publish(
            &settings,
            &env,
            &cli::command_path("publish folder", dir, &env)?,
            &cli::command_path("--out", target, &env)?,
            sign.as_deref()
                .map(|key| cli::command_path("--sign", key, &env))
                .transpose()?
                .as_deref(),
            &mut console,
        )?,
        Command::Token(command) => {
            let TokenCommand::New { label, admin, .. } = command;
            commands::token_new(
                &command.file(&env, &settings.config)?,
                label,
                *admin,
                console.out,
                console.err,
            )?
        }
        Command::Import(args) => import::command(&args.options(&env)?, console.out, console.err)?,
        Command::Invoke(args) => invoke::command(
            &args.options(&env)?,
            console.input,
            console.out,
            console.err,
        )?,
    };
    console.out.flush()?;
    Ok(code)
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
