//! The sources commands (`add`, `update`, `remove`, `sources`, `sync`, `publish`;
//! behaviour.md, "Sources") for the terminal: the user's folders from the
//! settings, what [`crate::sources`] returns worded ([`text`]), the yes
//! asked on the terminal, and an error as one line on stderr after what the
//! command printed. The work itself is the library's, which the skills app
//! calls too.

mod text;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::Console;
use crate::config::{Env, Settings};
use crate::exit_codes::ExitCode;
use crate::sources::{self, AddOptions, Context, SourceError, UpdateOptions, short};
use crate::text::{plural, printable};

/// Which lock a command reads and changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhichLock {
    /// The user's `sources.lock`.
    User,
    /// The project's `skills.lock` (`--project`).
    Project,
}

impl WhichLock {
    /// `--project` given or not.
    pub fn chosen(project: bool) -> WhichLock {
        if project {
            WhichLock::Project
        } else {
            WhichLock::User
        }
    }
}

/// The context of the lock `which` names.
fn context(settings: &Settings, env: &Env, which: WhichLock) -> Result<Context, SourceError> {
    match which {
        WhichLock::User => Context::new(settings, env),
        WhichLock::Project => Context::for_project(settings, env),
    }
}

/// Options of `sync`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SyncOptions {
    /// Change nothing; exit 10 when the store and the locks differ.
    pub check: bool,
    /// Also remove store entries no lock names.
    pub prune: bool,
    /// Only the project's lock.
    pub project_only: bool,
}

/// How a command that changes installed skills gets the user's yes.
enum Confirm<'a> {
    /// `--yes`.
    Given,
    /// On a terminal: asks the question, returns the answer.
    Ask(&'a mut dyn FnMut(&str) -> io::Result<bool>),
    /// No terminal and no `--yes`: the plan is shown, nothing is done.
    NoTerminal,
}

impl Confirm<'_> {
    /// Whether to go ahead; `done` names what would not happen
    /// ("installed", "updated", "removed").
    fn get(&mut self, question: &str, done: &'static str) -> Result<(), SourceError> {
        match self {
            Confirm::Given => Ok(()),
            Confirm::NoTerminal => Err(SourceError::NotConfirmed {
                done,
                why: "there is no terminal to ask on; run again with --yes to go ahead".into(),
            }),
            Confirm::Ask(ask) => match ask(question) {
                Ok(true) => Ok(()),
                Ok(false) => Err(SourceError::NotConfirmed {
                    done,
                    why: "you said no".into(),
                }),
                Err(err) => Err(SourceError::NotConfirmed {
                    done,
                    why: format!("no answer ({err})"),
                }),
            },
        }
    }
}

/// `skillserve add SOURCE`: the plan ([`sources::plan`]) printed, then,
/// after a yes, [`sources::install`].
pub fn add(
    settings: &Settings,
    env: &Env,
    options: &AddOptions,
    which: WhichLock,
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = context(settings, env, which).and_then(|context| {
        confirmed(yes, console, |confirm, out| {
            let plan = sources::plan(&context, options)?;
            text::write_plan(out, &plan).map_err(output)?;
            plan.check_risky(options.allow_risky)?;
            out.flush().map_err(output)?;
            let count = plan.candidates().len();
            let question = format!(
                "Install {count} skill{} as source '{}'?",
                plural(count),
                plan.request.id
            );
            confirm.get(&question, "installed")?;
            let installed = sources::install(&context, &plan, options.allow_risky)?;
            let project = if context.project.is_some() { " --project" } else { "" };
            writeln!(
                out,
                "Installed {} skill{} from {} as source '{id}'. `skillserve update{project} {id}` fetches them again; `skillserve remove{project} {id}` removes them.",
                installed.skills.len(),
                plural(installed.skills.len()),
                printable(&installed.source),
                id = installed.id,
            )
            .map_err(output)?;
            if context.project.is_some() {
                writeln!(
                    out,
                    "Commit {}: `skillserve sync` in a clone of the project installs the same skills.",
                    installed.lock.display()
                )
                .map_err(output)?;
            }
            Ok(ExitCode::Success)
        })
    });
    finish(outcome, console)
}

/// `skillserve update [ID]... [--check]`: every source fetched again
/// ([`sources::prepare_all`]), per skill what changed printed, then, after
/// a yes, [`sources::apply`].
pub fn update(
    settings: &Settings,
    env: &Env,
    options: &UpdateOptions,
    which: WhichLock,
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = context(settings, env, which).and_then(|context| {
        confirmed(yes, console, |confirm, out| {
            let pending = sources::prepare_all(&context, &options.ids)?;
            if pending.is_empty() {
                writeln!(
                    out,
                    "No sources are installed; add one with `skillserve add owner/repo`."
                )
                .map_err(output)?;
                return Ok(ExitCode::Success);
            }
            for update in &pending {
                text::write_changes(out, update).map_err(output)?;
            }
            let changed: usize = pending.iter().map(sources::Pending::changed).sum();
            let count = pending.iter().filter(|p| p.has_changes()).count();
            if changed == 0 {
                writeln!(out, "Everything is up to date.").map_err(output)?;
                return Ok(ExitCode::Success);
            }
            let summary = format!(
                "{changed} skill{} to update in {count} source{}",
                plural(changed),
                plural(count)
            );
            if options.check {
                writeln!(
                    out,
                    "{summary}; run `skillserve update` to review and install them."
                )
                .map_err(output)?;
                return Ok(ExitCode::UpdatesAvailable);
            }
            writeln!(out, "{summary}.").map_err(output)?;
            for update in pending.iter().filter(|p| p.has_changes()) {
                update.check_signer(options.allow_signer_change)?;
            }
            let risky: Vec<String> = pending.iter().flat_map(sources::Pending::risky).collect();
            if !risky.is_empty() && !options.allow_risky {
                return Err(SourceError::Risky {
                    done: "updated",
                    skills: risky,
                });
            }
            out.flush().map_err(output)?;
            confirm.get("Install these updates?", "updated")?;
            let applied = sources::apply(
                &context,
                &pending,
                options.allow_risky,
                options.allow_signer_change,
            )?;
            for updated in applied {
                writeln!(
                    out,
                    "Updated source '{}' to {}.",
                    updated.id,
                    short(&updated.to)
                )
                .map_err(output)?;
            }
            Ok(ExitCode::Success)
        })
    });
    finish(outcome, console)
}

/// `skillserve remove ID`: the source and its skills printed, then, after
/// a yes, [`sources::remove`].
pub fn remove(
    settings: &Settings,
    env: &Env,
    id: &str,
    which: WhichLock,
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = context(settings, env, which).and_then(|context| {
        confirmed(yes, console, |confirm, out| {
            let source = sources::source(&context, id)?;
            let names: Vec<&str> = source.skills.iter().map(|s| s.name.as_str()).collect();
            writeln!(
                out,
                "Source '{id}' ({}) and its {} skill{}: {}",
                printable(&source.url),
                names.len(),
                plural(names.len()),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    printable(&names.join(", ")).into_owned()
                }
            )
            .map_err(output)?;
            out.flush().map_err(output)?;
            confirm.get(&format!("Remove source '{id}'?"), "removed")?;
            let removed = sources::remove(&context, id)?;
            writeln!(out, "Removed source '{}'.", removed.id).map_err(output)?;
            Ok(ExitCode::Success)
        })
    });
    finish(outcome, console)
}

/// `skillserve sources [--json]`: the installed sources.
pub fn sources(
    settings: &Settings,
    env: &Env,
    json: bool,
    which: WhichLock,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = context(settings, env, which).and_then(|context| {
        let lock = sources::installed(&context)?;
        let out = &mut *console.out;
        if json {
            serde_json::to_writer_pretty(&mut *out, &sources::listed(&lock))
                .map_err(|err| output(io::Error::other(err)))?;
            writeln!(out).map_err(output)?;
        } else {
            text::write_sources(out, &lock, &context.lock, &context.paths.store).map_err(output)?;
        }
        Ok(ExitCode::Success)
    });
    finish(outcome, console)
}

/// `skillserve sync [--check] [--prune] [--project]`: for the user's
/// lock and the project's (when there is one), [`sources::status`], then
/// (unless `--check`) [`sources::sync`].
pub fn sync(
    settings: &Settings,
    env: &Env,
    options: &SyncOptions,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = (|| {
        let mut contexts = Vec::new();
        if !options.project_only {
            contexts.push(Context::new(settings, env)?);
        }
        let project = Context::for_project(settings, env);
        match project {
            Ok(project) if project.lock.is_file() => contexts.push(project),
            Ok(project) if options.project_only => {
                return Err(SourceError::Usage(format!(
                    "there is no {}: `skillserve add --project SOURCE` writes it",
                    project.lock.display()
                )));
            }
            Err(err) if options.project_only => return Err(err),
            _ => {}
        }
        let out = &mut *console.out;
        let mut statuses = Vec::new();
        for context in &contexts {
            let status = sources::status(context)?;
            text::write_status(out, &status, options.prune).map_err(output)?;
            statuses.push(status);
        }
        let lacking: usize = statuses.iter().map(sources::StoreStatus::lacking).sum();
        let extra: usize = if options.prune {
            // The same entries, seen from each lock: count them once.
            let mut all: Vec<&String> = statuses.iter().flat_map(|s| &s.unreferenced).collect();
            all.sort();
            all.dedup();
            all.len()
        } else {
            0
        };
        if options.check {
            return text::write_check(out, lacking, extra).map_err(output);
        }
        let mut refused = false;
        for (context, status) in contexts.iter().zip(&statuses) {
            if status.lacking() == 0 && !options.prune {
                continue;
            }
            let synced = sources::sync(context, status, options.prune)?;
            text::write_synced(out, &synced).map_err(output)?;
            refused |= synced.refused();
        }
        if lacking == 0 && extra == 0 {
            writeln!(out, "The store holds exactly what the locks pin.").map_err(output)?;
        }
        Ok(if refused {
            ExitCode::Failure
        } else {
            ExitCode::Success
        })
    })();
    finish(outcome, console)
}

/// `skillserve publish DIR --out TARGET [--sign KEY]`: [`sources::publish`].
pub fn publish(
    settings: &Settings,
    env: &Env,
    dir: &Path,
    target: &Path,
    sign: Option<&Path>,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let search = crate::program::SearchEnv::from_env(env);
    let outcome = sources::publish(
        dir,
        target,
        settings.config.max_file_bytes,
        sign.map(|key| (key, &search)),
        console.out,
    );
    finish(outcome, console)
}

/// Runs `command` with the user's yes: `--yes`, else the question on the
/// terminal (stderr, answered on stdin), else none (the command shows its
/// plan and changes nothing).
fn confirmed<T>(
    yes: bool,
    console: &mut Console,
    command: impl FnOnce(&mut Confirm<'_>, &mut dyn Write) -> T,
) -> T {
    let Console {
        out,
        err,
        input,
        interactive,
    } = console;
    if yes {
        return command(&mut Confirm::Given, *out);
    }
    if !*interactive {
        return command(&mut Confirm::NoTerminal, *out);
    }
    let mut ask = |question: &str| -> io::Result<bool> {
        write!(err, "{question} [y/N] ")?;
        err.flush()?;
        let mut answer = String::new();
        input.read_line(&mut answer)?;
        let answer = answer.trim().to_ascii_lowercase();
        Ok(answer == "y" || answer == "yes")
    };
    command(&mut Confirm::Ask(&mut ask), *out)
}

/// A failure to write to stdout, as the commands' error.
fn output(err: io::Error) -> SourceError {
    SourceError::Io {
        path: PathBuf::from("<stdout>"),
        source: err,
    }
}

/// The exit code of a sources command; its error (after what it printed)
/// is one line on stderr.
fn finish(outcome: Result<ExitCode, SourceError>, console: &mut Console) -> io::Result<ExitCode> {
    match outcome {
        Ok(code) => Ok(code),
        Err(err) => {
            console.out.flush()?;
            writeln!(console.err, "skillserve: {err}")?;
            Ok(ExitCode::Failure)
        }
    }
}
