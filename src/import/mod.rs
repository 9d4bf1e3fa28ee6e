//! Skills from MCP servers: `skillserve import` turns every tool of the stdio
//! servers in an `mcpServers` settings file into a skill, and `skillserve
//! invoke` ([`invoke`]) calls such a tool from a shell.
//!
//! Data flows one way: [`settings`] → [`client`] (start each server, list its
//! tools; at most [`MAX_PARALLEL`] at a time) → [`generate`] (names and
//! `SKILL.md` text) → files in the output folder, recorded in its [`lock`].
//!
//! The output folder may hold other things; `import` only ever overwrites or
//! removes a folder whose `SKILL.md` says `generated-by: skillserve import` in
//! its metadata, and removes only folders its lock file lists. Within a
//! folder it writes `SKILL.md` and nothing else, and a folder that holds other
//! files is left in place when its skill is removed. A server that fails keeps
//! the skills of its last successful import: the failure may be passing.

pub mod client;
pub mod generate;
pub mod invoke;
pub mod lock;
pub mod settings;

use std::collections::{BTreeMap, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;
use rmcp::model::Tool;
use serde_json::Value;

use crate::config::DEFAULT_MAX_FILE_BYTES;
use crate::disk;
use crate::exit_codes::ExitCode;
use client::{Connection, Failure};
use generate::GENERATED_BY;
use lock::{Lock, LockError, ServerLock};
use settings::{Entry, EntryKind, Settings, SettingsError};

/// Where skills go without `--output-dir`, relative to the current directory.
pub const DEFAULT_OUTPUT_DIR: &str = "mcp-skills";
/// Default `--timeout`: seconds for a server to start, and then to answer.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// Servers started at the same time.
pub const MAX_PARALLEL: usize = 4;

/// What `skillserve import` was asked to do.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The `mcpServers` settings file, absolute.
    pub settings: PathBuf,
    /// The output folder, absolute.
    pub output_dir: PathBuf,
    /// Regenerate servers whose tools did not change.
    pub force_refresh: bool,
    /// The longest wait for a server to start, and then for `tools/list`.
    pub timeout: Duration,
    /// The environment, for `$VAR` in `command` and `args`.
    pub vars: crate::config::Vars,
    /// Where server programs are looked for (`PATH`, `PATHEXT`).
    pub programs: crate::program::SearchEnv,
}

/// Why `import` stopped before it was done.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("cannot use the output folder {}: {source}", path.display())]
    OutputDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot remove {}: {source}", path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Writing the report failed (a closed pipe, say).
    #[error(transparent)]
    Output(#[from] io::Error),
}

impl ImportError {
    /// 2 when nothing could start (settings, lock or output folder unusable),
    /// else 1.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            ImportError::Settings(_)
            | ImportError::OutputDir { .. }
            | ImportError::Lock(LockError::Read { .. } | LockError::Invalid { .. }) => {
                ExitCode::Usage
            }
            _ => ExitCode::Failure,
        }
    }
}

/// What asking one server gave.
enum Outcome {
    Listed(Vec<Tool>),
    Disabled,
    NotStdio,
    Failed(Failure),
    /// A malformed entry or an unset variable: never started.
    Unusable(String),
}

/// What happens to one listed server's skills.
struct Plan {
    tools: Vec<Tool>,
    /// The skill name of each tool, in the order of `tools`.
    names: Vec<String>,
    /// `(name, base)` of names changed to avoid a collision.
    renamed: Vec<(String, String)>,
    sha256: String,
    unchanged: bool,
}

/// `skillserve import` from the command line: [`run`] on a runtime of its
/// own, its error one line on `err` after what it printed; SIGINT or
/// SIGTERM stop it. A failure to write `out` is returned (a closed pipe is
/// not worth a message).
pub fn command(
    options: &ImportOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    match block_on(run(options, out))? {
        Err(signal) => {
            writeln!(err, "skillserve: stopped by {signal}")?;
            Ok(ExitCode::Failure)
        }
        Ok(Ok(code)) => Ok(code),
        Ok(Err(ImportError::Output(error))) => Err(error),
        Ok(Err(error)) => {
            out.flush()?;
            writeln!(err, "skillserve: {error}")?;
            Ok(error.exit_code())
        }
    }
}

/// Runs one `import` or `invoke` on a runtime of its own; `Err` with the
/// signal's name when SIGINT or SIGTERM stopped it.
fn block_on<F: std::future::Future>(future: F) -> io::Result<Result<F::Output, &'static str>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let output = runtime.block_on(async {
        // The signal handlers first: `future` starts servers in its first
        // poll, and a SIGTERM sent once they run must find the handlers in
        // place (unbiased, the branches are polled in random order).
        tokio::select! {
            biased;
            signal = crate::server::shutdown_signal() => Err(signal),
            output = future => Ok(output),
        }
    });
    if output.is_err() {
        // The servers run in process groups of their own, out of reach of
        // the terminal's Ctrl-C; dropping the command killed them through
        // rmcp's clean-up tasks, which need a moment on this runtime.
        runtime.block_on(async {
            tokio::time::sleep(Duration::from_millis(100)).await;
        });
    }
    // Dropping the tasks left (a server that is still exiting, say) kills
    // their processes; there is nothing to wait for.
    runtime.shutdown_background();
    Ok(output)
}

/// `skillserve import`: writes the skills, prints what it did, and returns
/// exit code 1 when a server failed.
pub async fn run(options: &ImportOptions, out: &mut dyn Write) -> Result<ExitCode, ImportError> {
    let settings = Settings::load(&options.settings)?;
    let dir = &options.output_dir;
    let output_dir_error = |source| ImportError::OutputDir {
        path: dir.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(output_dir_error)?;
    let old = Lock::read(dir)?.unwrap_or_else(|| Lock::new(&settings.path));

    let outcomes: Vec<Outcome> = futures::stream::iter(&settings.servers)
        .map(|entry| fetch(entry, &settings.path, options))
        .buffered(MAX_PARALLEL)
        .collect()
        .await;

    let owned = survey(dir).map_err(output_dir_error)?;
    // The skills' `invoke` lines name the settings file: another file means
    // new text for every skill.
    let refresh = options.force_refresh || old.settings != settings.path;
    let (plans, new_lock) = plan_all(&settings, &outcomes, &old, &owned, refresh);

    let (mut skills_written, mut servers_written) = (0, 0);
    for (entry, plan) in settings.servers.iter().zip(&plans) {
        let Some(plan) = plan.as_ref().filter(|plan| !plan.unchanged) else {
            continue;
        };
        for (tool, name) in plan.tools.iter().zip(&plan.names) {
            let text = generate::skill_md(name, &entry.name, tool, &settings.path);
            write_skill(&dir.join(name), &text)?;
        }
        skills_written += plan.tools.len();
        servers_written += 1;
    }
    let removed = remove_stale(dir, &old, &new_lock, &owned)?;
    new_lock.write(dir)?;

    writeln!(
        out,
        "Generated {skills_written} skill{} from {servers_written} server{}",
        crate::text::plural(skills_written),
        crate::text::plural(servers_written)
    )?;
    let failed = report(out, &settings, &outcomes, &plans, removed)?;
    Ok(if failed {
        ExitCode::Failure
    } else {
        ExitCode::Success
    })
}

/// The plan of each server (`None` unless it was listed), in settings order,
/// and the lock that results.
fn plan_all(
    settings: &Settings,
    outcomes: &[Outcome],
    old: &Lock,
    owned: &Survey,
    refresh: bool,
) -> (Vec<Option<Plan>>, Lock) {
    // Names not free for new skills: whatever is in the folder that import did
    // not write, and the skills that failed servers keep.
    let mut taken: HashSet<String> = owned.foreign.clone();
    let mut lock = Lock::new(&settings.path);
    for (entry, outcome) in settings.servers.iter().zip(outcomes) {
        if let (Outcome::Failed(_) | Outcome::Unusable(_), Some(kept)) =
            (outcome, old.servers.get(&entry.name))
        {
            taken.extend(kept.skills.iter().cloned());
            lock.servers.insert(entry.name.clone(), kept.clone());
        }
    }
    let plans = settings
        .servers
        .iter()
        .zip(outcomes)
        .map(|(entry, outcome)| {
            let Outcome::Listed(tools) = outcome else {
                return None;
            };
            let plan = plan(entry, tools.clone(), &mut taken, old, owned, refresh);
            lock.servers.insert(
                entry.name.clone(),
                ServerLock {
                    sha256: plan.sha256.clone(),
                    skills: plan.names.clone(),
                },
            );
            Some(plan)
        })
        .collect();
    (plans, lock)
}

/// Removes the skills the old lock lists and the new one does not (when
/// import wrote them), by the server they belonged to.
fn remove_stale(
    dir: &Path,
    old: &Lock,
    new: &Lock,
    owned: &Survey,
) -> Result<BTreeMap<String, Vec<Removed>>, ImportError> {
    let keep: HashSet<&String> = new.servers.values().flat_map(|s| &s.skills).collect();
    let mut removed: BTreeMap<String, Vec<Removed>> = BTreeMap::new();
    for (server, entry) in &old.servers {
        let stale = entry
            .skills
            .iter()
            .filter(|folder| !keep.contains(folder) && owned.generated.contains(*folder));
        for folder in stale {
            let gone = remove_skill(dir, folder)?;
            removed.entry(server.clone()).or_default().push(gone);
        }
    }
    Ok(removed)
}

/// The lines after the summary, server by server in settings order; returns
/// whether a server failed.
fn report(
    out: &mut dyn Write,
    settings: &Settings,
    outcomes: &[Outcome],
    plans: &[Option<Plan>],
    mut removed: BTreeMap<String, Vec<Removed>>,
) -> io::Result<bool> {
    let mut failed = false;
    for ((entry, outcome), plan) in settings.servers.iter().zip(outcomes).zip(plans) {
        // Names and messages come from files and servers: keep them from
        // driving the terminal.
        let printable = crate::text::printable;
        let name = printable(&entry.name);
        let mut reason = "tool gone";
        match (outcome, plan) {
            (_, Some(plan)) if plan.unchanged => {
                writeln!(
                    out,
                    "  skipped {name} (unchanged; --force-refresh regenerates)"
                )?;
            }
            (_, Some(plan)) => {
                for (new, base) in &plan.renamed {
                    writeln!(out, "  renamed {new} (name collision: {base} is taken)")?;
                }
            }
            (Outcome::Disabled, _) => {
                writeln!(out, "  disabled {name} (not started)")?;
                reason = "server disabled";
            }
            (Outcome::NotStdio, _) => {
                writeln!(out, "  skipped {name} (only stdio servers can be imported)")?;
                reason = "not a stdio server";
            }
            (Outcome::Failed(failure), _) => {
                failed = true;
                writeln!(out, "  failed {name}: {}", printable(&failure.to_string()))?;
                client::write_indented(out, "    ", &failure.stderr)?;
            }
            (Outcome::Unusable(problem), _) => {
                failed = true;
                writeln!(out, "  failed {name}: {}", printable(problem))?;
            }
            (Outcome::Listed(_), None) => {}
        }
        for gone in removed.remove(&entry.name).unwrap_or_default() {
            gone.report(out, reason)?;
        }
    }
    for gone in removed.into_values().flatten() {
        gone.report(out, "server gone")?;
    }
    Ok(failed)
}

/// Starts the server of `entry` and lists its tools.
async fn fetch(entry: &Entry, settings: &Path, options: &ImportOptions) -> Outcome {
    let server = match &entry.kind {
        EntryKind::Disabled => return Outcome::Disabled,
        EntryKind::NotStdio => return Outcome::NotStdio,
        EntryKind::Invalid(error) => {
            return Outcome::Unusable(format!("{}: {error}", settings.display()));
        }
        EntryKind::Stdio(server) => server,
    };
    let launch = match server.expand(&entry.name, &|var: &str| options.vars.lookup(var)) {
        Ok(launch) => launch,
        Err(error) => return Outcome::Unusable(format!("{}: {error}", settings.display())),
    };
    tracing::debug!(server = %entry.name, command = %launch.command, args = ?launch.args, "starting");
    let connection = match Connection::start(&launch, &options.programs, options.timeout).await {
        Ok(connection) => connection,
        Err(failure) => return Outcome::Failed(failure),
    };
    match connection.list_tools(options.timeout).await {
        Ok(tools) => {
            connection.close().await;
            tracing::debug!(server = %entry.name, tools = tools.len(), "listed");
            Outcome::Listed(tools)
        }
        Err(error) => Outcome::Failed(connection.fail(error).await),
    }
}

/// Names the skills of one listed server (taking them from `taken`) and
/// decides whether it changed since the lock was written.
fn plan(
    entry: &Entry,
    mut tools: Vec<Tool>,
    taken: &mut HashSet<String>,
    old: &Lock,
    owned: &Survey,
    refresh: bool,
) -> Plan {
    // Sorted, so that names (and who gets `-2`) do not depend on the order
    // the server lists its tools in.
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let mut names = Vec::with_capacity(tools.len());
    let mut renamed = Vec::new();
    for tool in &tools {
        let base = generate::base_name(&entry.name, &tool.name);
        let name = generate::unique_name(&base, taken);
        taken.insert(name.clone());
        if name != base {
            renamed.push((name.clone(), base));
        }
        names.push(name);
    }
    let sha256 = lock::digest(&tools);
    let unchanged = !refresh
        && old
            .servers
            .get(&entry.name)
            .is_some_and(|previous| previous.sha256 == sha256 && previous.skills == names)
        && names.iter().all(|name| owned.generated.contains(name));
    Plan {
        tools,
        names,
        renamed,
        sha256,
        unchanged,
    }
}

/// The output folder's entries: those `import` wrote, and everything else
/// (lowercase, since file systems may ignore case).
struct Survey {
    generated: HashSet<String>,
    foreign: HashSet<String>,
}

fn survey(dir: &Path) -> io::Result<Survey> {
    let mut survey = Survey {
        generated: HashSet::new(),
        foreign: HashSet::new(),
    };
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_generated(&entry.path()) {
            survey.generated.insert(name);
        } else {
            survey.foreign.insert(name.to_lowercase());
        }
    }
    Ok(survey)
}

/// Whether `folder` is a real folder (not a symlink) whose `SKILL.md` carries
/// `generated-by: skillserve import`.
fn is_generated(folder: &Path) -> bool {
    let is_dir = std::fs::symlink_metadata(folder).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return false;
    }
    let name = folder.file_name().unwrap_or_default().to_string_lossy();
    let Ok(parsed) =
        crate::parse::read_frontmatter(&folder.join("SKILL.md"), &name, DEFAULT_MAX_FILE_BYTES)
    else {
        return false;
    };
    parsed
        .fields()
        .get("metadata")
        .and_then(|metadata| metadata.get("generated-by"))
        .and_then(Value::as_str)
        == Some(GENERATED_BY)
}

fn write_skill(folder: &Path, text: &str) -> Result<(), ImportError> {
    let file = folder.join("SKILL.md");
    disk::write_atomic(&file, text.as_bytes(), disk::NewFile::Shared)
        .map_err(|source| ImportError::Write { path: file, source })
}

/// A skill removed from the output folder.
struct Removed {
    folder: String,
    /// The folder held files `import` did not write, so it stays.
    folder_kept: bool,
}

impl Removed {
    fn report(&self, out: &mut dyn Write, reason: &str) -> io::Result<()> {
        if self.folder_kept {
            writeln!(
                out,
                "  removed {}/SKILL.md ({reason}; the folder holds other files, so it stays)",
                self.folder
            )
        } else {
            writeln!(out, "  removed {} ({reason})", self.folder)
        }
    }
}

/// Removes the `SKILL.md` import wrote in `folder`, then the folder if
/// nothing else is in it.
fn remove_skill(dir: &Path, folder: &str) -> Result<Removed, ImportError> {
    let path = dir.join(folder);
    let file = path.join("SKILL.md");
    std::fs::remove_file(&file).map_err(|source| ImportError::Remove {
        path: file.clone(),
        source,
    })?;
    let folder_kept = match std::fs::remove_dir(&path) {
        Ok(()) => false,
        Err(_) if path.is_dir() => true,
        Err(source) => return Err(ImportError::Remove { path, source }),
    };
    Ok(Removed {
        folder: folder.to_owned(),
        folder_kept,
    })
}
