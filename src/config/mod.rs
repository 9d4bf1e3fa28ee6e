//! The resolved configuration every other module works from, and where it
//! comes from: flags, environment variables and `config.toml`.
//!
//! `cli` turns the command line into [`Flags`]; [`settings`] merges them with
//! the environment (captured once in [`Env`]) and the settings file ([`file`])
//! into a [`Config`], [`ServeOptions`] and the filters and client profiles
//! ([`Rules`]). Nothing below reads `std::env` or sees `clap` types. Paths in
//! a `Config` are absolute and already expanded (`~`, `$VAR`). [`native`] is
//! the built-in table of clients that load skills folders themselves;
//! [`edit`] changes the file for `enable` and `disable`.

pub mod edit;
pub mod file;
pub mod native;
pub mod pattern;
pub mod settings;

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::folders::Folders;

pub use settings::{Flags, Rules, Settings, SettingsError, Shown};

/// Default cap on the size of one SKILL.md (behaviour.md §4).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Default character budget of the `skill` tool description (behaviour.md §5.1).
pub const DEFAULT_DESCRIPTION_BUDGET: usize = 8000;
/// The smallest budget that still leaves room for the header and the
/// "N more skills" line; smaller values are refused at start-up.
pub const MIN_DESCRIPTION_BUDGET: usize = 300;
/// The longest `name` a `skill` call (or `skillserve show`) accepts, in
/// characters (behaviour.md §14): longer than any name, and than a few words
/// describing a task, so that the cost of a miss stays bounded.
pub const MAX_QUERY_CHARS: usize = 512;
/// Default seconds between two full rescans (behaviour.md §6).
pub const DEFAULT_REFRESH_SECS: u64 = 30;
/// A day: longer intervals are a mistake (and overflow timers near `u64::MAX`).
pub const MAX_REFRESH_SECS: u64 = 86_400;

/// Where a setting (or a pattern, a profile) came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Default,
    /// A command-line flag (`--no-user`), or `serve` for its folder arguments.
    Flag(&'static str),
    /// An environment variable.
    Env(&'static str),
    /// A line of the settings file.
    File {
        path: Arc<Path>,
        line: usize,
    },
}

impl fmt::Display for Origin {
    /// `default`, `--no-user`, `$SKILLSERVE_SKILLS_DIRS`, `config.toml:3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::Flag(flag) => f.write_str(flag),
            Origin::Env(var) => write!(f, "${var}"),
            Origin::File { path, line } => {
                let name = path.file_name().unwrap_or(path.as_os_str());
                write!(f, "{}:{line}", name.to_string_lossy())
            }
        }
    }
}

/// Where to look for skills and how to read them. Shared by the server and the CLI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `--skills-dir` and `SKILLSERVE_SKILLS_DIRS`, highest precedence first.
    pub custom_dirs: Vec<PathBuf>,
    /// The project directory, or `None` with `--no-project`.
    pub project_dir: Option<PathBuf>,
    /// The home directory, or `None` when it is unknown (user roots are then skipped).
    pub home: Option<PathBuf>,
    /// Whether the user roots under `home` are scanned (`--no-user` turns them off).
    pub user: bool,
    /// The Claude config dir: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub claude_config_dir: Option<PathBuf>,
    /// The Codex home: `$CODEX_HOME`, else `~/.codex`.
    pub codex_home: Option<PathBuf>,
    /// Whether Claude Code plugin skills are served (`--no-plugins` turns them off).
    pub plugins: bool,
    /// Files larger than this are skipped with a diagnostic.
    pub max_file_bytes: u64,
    /// The user's config and data folders for skillserve's own files.
    pub folders: Folders,
}

/// Options that only the MCP server uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeOptions {
    /// Maximum characters of the `skill` tool description.
    pub description_budget: usize,
    /// Time between full rescans; `None` turns the interval off.
    pub refresh_interval: Option<Duration>,
    /// Whether file-system events trigger rescans.
    pub watch: bool,
    /// Whether skills are offered as MCP prompts (`--no-prompts` turns them off).
    pub prompts: bool,
    /// Whether skill files are offered as MCP resources and through the
    /// skills extension (`--no-resources` turns them off).
    pub resources: bool,
}

/// The environment, captured once at start-up: the variables skillserve
/// reads, every variable for `$VAR` expansion, and the working directory.
///
/// Nothing else in the crate reads the process environment, so the
/// precedence rules are testable without touching it.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub home: Option<PathBuf>,
    /// The variable `home` came from (`HOME`, or `USERPROFILE` on Windows).
    pub home_from: Option<&'static str>,
    /// `SKILLSERVE_CONFIG`: the settings file to read.
    pub config_file: Option<OsString>,
    pub claude_config_dir: Option<OsString>,
    pub codex_home: Option<OsString>,
    pub claude_project_dir: Option<OsString>,
    pub skills_dirs: Option<OsString>,
    /// `SKILLSERVE_LOG`, the log filter when `--log-level` is not given.
    pub log_filter: Option<String>,
    /// Every variable, for expanding `$VAR` in paths and commands.
    pub vars: Vars,
    pub cwd: PathBuf,
}

impl Env {
    /// Reads the process environment. Empty variables count as unset.
    pub fn from_process() -> std::io::Result<Env> {
        let vars = Vars(Arc::new(std::env::vars_os().collect()));
        let var = |name: &str| {
            vars.get(name)
                .filter(|v| !v.is_empty())
                .map(OsStr::to_os_string)
        };
        let (home, home_from) = match home_dir_from(var("HOME"), var("USERPROFILE")) {
            Some((home, from)) => (Some(home), Some(from)),
            None => (None, None),
        };
        Ok(Env {
            home,
            home_from,
            config_file: var("SKILLSERVE_CONFIG"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            claude_project_dir: var("CLAUDE_PROJECT_DIR"),
            skills_dirs: var("SKILLSERVE_SKILLS_DIRS"),
            log_filter: var("SKILLSERVE_LOG")
                .map(|v| v.to_string_lossy().trim().to_owned())
                .filter(|v| !v.is_empty()),
            cwd: std::env::current_dir()?,
            vars,
        })
    }

    /// The user's config and data folders for skillserve.
    pub fn folders(&self) -> Folders {
        let home = self
            .home
            .as_deref()
            .map(|home| (home, self.home_from.unwrap_or("HOME")));
        Folders::of(home, |name| self.vars.get(name).filter(|v| !v.is_empty()))
    }
}

/// Every environment variable, shared.
#[derive(Clone, Debug, Default)]
pub struct Vars(Arc<HashMap<OsString, OsString>>);

impl Vars {
    /// The variable `name`, if it is set (even to an empty value).
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.0.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    /// The variable `name` as text (lossily), if it is set.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(|value| value.to_string_lossy().into_owned())
    }
}

/// `HOME`, or on Windows `USERPROFILE`. Deliberately not the password database:
/// an unset `HOME` means "no user roots, one warning" (behaviour.md §3.1), which
/// is what a server started with a scrubbed environment should do.
fn home_dir_from(
    home: Option<OsString>,
    userprofile: Option<OsString>,
) -> Option<(PathBuf, &'static str)> {
    let home = match (home, userprofile) {
        (Some(home), _) => Some((home, "HOME")),
        (None, Some(profile)) if cfg!(windows) => Some((profile, "USERPROFILE")),
        _ => None,
    };
    home.map(|(dir, from)| (PathBuf::from(dir), from))
        .filter(|(p, _)| p.is_absolute())
}

/// Makes `path` absolute against `cwd` without touching the file system
/// (symlinks stay as the user wrote them, so paths in output look familiar).
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    normalize(&joined)
}

/// Removes `.` components and resolves `..` lexically.
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_joins_and_normalizes() {
        let cwd = Path::new("/work/proj");
        assert_eq!(
            absolute(Path::new("skills"), cwd),
            Path::new("/work/proj/skills")
        );
        assert_eq!(
            absolute(Path::new("./a/../b"), cwd),
            Path::new("/work/proj/b")
        );
        assert_eq!(absolute(Path::new("/x/./y"), cwd), Path::new("/x/y"));
    }

    #[test]
    fn relative_home_is_ignored() {
        assert_eq!(home_dir_from(Some("relative".into()), None), None);
        assert_eq!(
            home_dir_from(Some("/home/a".into()), None),
            Some((PathBuf::from("/home/a"), "HOME"))
        );
    }
}
