//! The sources commands (`add`, `update`, `remove`, `sources`, `publish`;
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
use crate::text::plural;

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
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = Context::new(&settings.config, env).and_then(|context| {
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
            writeln!(
                out,
                "Installed {} skill{} from {} as source '{id}'. `skillserve update {id}` fetches them again; `skillserve remove {id}` removes them.",
                installed.skills.len(),
                plural(installed.skills.len()),
                installed.source,
                id = installed.id,
            )
            .map_err(output)?;
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
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = Context::new(&settings.config, env).and_then(|context| {
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
            let risky: Vec<String> = pending.iter().flat_map(sources::Pending::risky).collect();
            if !risky.is_empty() && !options.allow_risky {
                return Err(SourceError::Risky {
                    done: "updated",
                    skills: risky,
                });
            }
            out.flush().map_err(output)?;
            confirm.get("Install these updates?", "updated")?;
            for updated in sources::apply(&context, &pending, options.allow_risky)? {
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
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = Context::new(&settings.config, env).and_then(|context| {
        confirmed(yes, console, |confirm, out| {
            let source = sources::source(&context, id)?;
            let names: Vec<&str> = source.skills.iter().map(|s| s.name.as_str()).collect();
            writeln!(
                out,
                "Source '{id}' ({}) and its {} skill{}: {}",
                source.url,
                names.len(),
                plural(names.len()),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
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
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = Context::new(&settings.config, env).and_then(|context| {
        let lock = sources::installed(&context)?;
        let out = &mut *console.out;
        if json {
            serde_json::to_writer_pretty(&mut *out, &sources::listed(&lock))
                .map_err(|err| output(io::Error::other(err)))?;
            writeln!(out).map_err(output)?;
        } else {
            text::write_sources(out, &lock, &context.paths).map_err(output)?;
        }
        Ok(ExitCode::Success)
    });
    finish(outcome, console)
}

/// `skillserve publish DIR --out TARGET`: [`sources::publish`].
pub fn publish(
    settings: &Settings,
    dir: &Path,
    target: &Path,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = sources::publish(dir, target, settings.config.max_file_bytes, console.out);
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
