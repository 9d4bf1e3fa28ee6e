//! The front ends of the sources commands (`add`, `update`, `remove`,
//! `sources`, `publish`; behaviour.md, "Sources"): the user's folders from
//! the settings, the yes asked on the terminal, and an error as one line on
//! stderr after what the command printed. The work is [`crate::sources`].

use std::io::{self, Write};
use std::path::Path;

use super::Console;
use crate::config::{Env, Settings};
use crate::exit_codes::ExitCode;
use crate::sources::{self, AddOptions, Confirm, Context, SourceError, UpdateOptions};

/// `skillserve add SOURCE`: [`sources::add`], after a yes.
pub fn add(
    settings: &Settings,
    env: &Env,
    options: &AddOptions,
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = Context::new(&settings.config, env).and_then(|context| {
        confirmed(yes, console, |confirm, out| {
            sources::add(&context, options, confirm, out)
        })
    });
    finish(outcome, console)
}

/// `skillserve update [ID]`: [`sources::update`], after a yes.
pub fn update(
    settings: &Settings,
    env: &Env,
    options: &UpdateOptions,
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = Context::new(&settings.config, env).and_then(|context| {
        confirmed(yes, console, |confirm, out| {
            sources::update(&context, options, confirm, out)
        })
    });
    finish(outcome, console)
}

/// `skillserve remove ID`: [`sources::remove`], after a yes.
pub fn remove(
    settings: &Settings,
    env: &Env,
    id: &str,
    yes: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = Context::new(&settings.config, env).and_then(|context| {
        confirmed(yes, console, |confirm, out| {
            sources::remove(&context, id, confirm, out)
        })
    });
    finish(outcome, console)
}

/// `skillserve sources [--json]`: [`sources::list`].
pub fn sources(
    settings: &Settings,
    env: &Env,
    json: bool,
    console: &mut Console,
) -> io::Result<ExitCode> {
    let outcome = Context::new(&settings.config, env)
        .and_then(|context| sources::list(&context, json, console.out));
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
