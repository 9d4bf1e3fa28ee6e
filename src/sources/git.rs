//! Fetching one commit of a repository with the user's `git` program
//! (behaviour.md, "Sources"): its credentials, proxies and SSH agent work as
//! they do for the user, and nothing of git is linked into skillserve.
//!
//! `git init`, then `git fetch --depth 1 URL REF` (only that commit, no
//! tags, no submodules) and a checkout of `FETCH_HEAD`, in a folder the
//! caller owns. git never prompts (`GIT_TERMINAL_PROMPT=0`): a repository
//! that needs a password it does not have fails with git's own message.

use std::path::Path;
use std::process::Stdio;

use crate::program::{Program, ProgramError, SearchEnv};

use super::SourceError;

/// The program run: `git` found on the `PATH` as the platform's shell
/// finds it (`git.exe` on Windows, never from the current folder).
const GIT: &str = "git";

/// Finds the user's `git`.
pub fn find(search: &SearchEnv) -> Result<Program, SourceError> {
    Program::find(GIT, search).map_err(|err| match err {
        ProgramError::NotInPath { .. } | ProgramError::NoPath => SourceError::GitMissing,
        other => SourceError::Usage(format!("cannot run git: {other}")),
    })
}

/// Fetches `reference` (a branch, a tag or a full commit id; `None`: the
/// remote's default branch) of `url` into `dir`, a folder that does not
/// exist yet, with `git`, and checks it out. Returns the commit's full id.
pub fn fetch(
    git: &Program,
    url: &str,
    reference: Option<&str>,
    dir: &Path,
) -> Result<String, SourceError> {
    if let Some(reference) = reference
        && (reference.starts_with('-') || reference.trim().is_empty())
    {
        return Err(SourceError::Usage(format!(
            "`{reference}` is not a branch, tag or commit"
        )));
    }
    std::fs::create_dir_all(dir).map_err(|source| SourceError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let run = |args: &[&str]| run(git, url, dir, args);
    run(&["init", "--quiet"])?;
    let wanted = reference.unwrap_or("HEAD");
    // Over HTTP(S) a host that sends nothing for the downloads' stall bound
    // (30 s) ends the fetch, as it ends an index's download; git's own
    // default waits for ever. (Over SSH the user's own ssh settings rule.)
    let stall = stall_seconds();
    let low_speed_time = format!("http.lowSpeedTime={stall}");
    run(&[
        "-c",
        "protocol.version=2",
        "-c",
        "http.lowSpeedLimit=1",
        "-c",
        &low_speed_time,
        "fetch",
        "--quiet",
        "--depth",
        "1",
        "--no-tags",
        "--no-recurse-submodules",
        "--",
        url,
        wanted,
    ])
    .map_err(|err| match err {
        SourceError::Git { url, message, .. } => SourceError::Git {
            hint: match reference {
                _ if is_stalled(&message) => format!("; the host sent nothing for {stall} s"),
                _ if is_denied(&message) => "; the repository is private or your credentials were refused: skillserve fetches with your own git, so set up what `git clone URL` needs — a credential helper (`git config --global credential.helper …`) or your SSH agent — and try again".to_owned(),
                Some(reference) => missing_ref_hint(&message, reference),
                None => String::new(),
            },
            url,
            message,
        },
        err => err,
    })?;
    let commit = run(&["rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}"])?;
    run(&[
        "-c",
        "advice.detachedHead=false",
        "checkout",
        "--quiet",
        "FETCH_HEAD",
    ])?;
    let commit = commit.trim().to_owned();
    if commit.len() < 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(SourceError::Git {
            url: url.to_owned(),
            message: format!("git named the commit `{commit}`"),
            hint: String::new(),
        });
    }
    Ok(commit.to_ascii_lowercase())
}

/// The downloads' stall bound in whole seconds (git takes no fractions).
fn stall_seconds() -> u64 {
    super::http::stall().as_secs_f64().ceil().max(1.0) as u64
}

/// Whether git's message says the transfer was cut for being too slow
/// (curl's error 28, under `http.lowSpeedTime`).
fn is_stalled(message: &str) -> bool {
    message.contains("Operation too slow") || message.contains("curl 28")
}

/// Whether git's message says the host wanted credentials it did not get
/// (HTTP without a helper's answer, or an SSH key refused).
fn is_denied(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    [
        "could not read username",
        "could not read password",
        "authentication failed",
        "terminal prompts disabled",
        "permission denied (publickey",
        "the requested url returned error: 401",
        "the requested url returned error: 403",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// What to do when git could not find the ref the user asked for.
fn missing_ref_hint(message: &str, reference: &str) -> String {
    let lower = message.to_ascii_lowercase();
    if lower.contains("couldn't find remote ref") || lower.contains("not our ref") {
        let short = reference.len() < 40 && reference.bytes().all(|b| b.is_ascii_hexdigit());
        if short {
            return format!(
                "; `{reference}` looks like a shortened commit id: give all 40 characters, or a branch or tag"
            );
        }
        return format!("; check that `{reference}` is a branch, tag or commit of the repository");
    }
    String::new()
}

/// Runs git with `args` in `dir` and returns its stdout; a failure is an
/// error naming `url` and git's own message.
fn run(git: &Program, url: &str, dir: &Path, args: &[&str]) -> Result<String, SourceError> {
    let mut command = git.command(args).map_err(|err| SourceError::Git {
        url: url.to_owned(),
        message: format!("cannot run git: {err}"),
        hint: String::new(),
    })?;
    command
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        // Git Credential Manager asks in a window unless told not to.
        .env("GCM_INTERACTIVE", "never")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = command.output().map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            SourceError::GitMissing
        } else {
            SourceError::Git {
                url: url.to_owned(),
                message: format!("cannot run git: {err}"),
                hint: String::new(),
            }
        }
    })?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
        .collect();
    let message = if lines.is_empty() {
        format!("git exited with {}", output.status)
    } else {
        // The last lines say what went wrong; earlier ones are progress.
        lines[lines.len().saturating_sub(3)..].join(" ")
    };
    Err(SourceError::Git {
        url: url.to_owned(),
        message,
        hint: String::new(),
    })
}
