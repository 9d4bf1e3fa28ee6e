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
pub mod expand;
pub mod file;
pub mod log;
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
use crate::platform::Platform;

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
/// Where a client is shown the catalog, the list of skills with their
/// descriptions (behaviour.md §5.4): the `skill` tool's description, the
/// server's `instructions`, or both. The place without it says where it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Placement {
    /// The `skill` tool's description (clients that show tool definitions).
    #[default]
    Tool,
    /// The server's `instructions` (clients that defer tool definitions
    /// behind a search, so that the model sees only tool names).
    Instructions,
    /// Both: the model reads the catalog twice. Only when a profile asks.
    Both,
}

impl Placement {
    /// The value as `config.toml` spells it (`catalog = "tool"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::Tool => "tool",
            Placement::Instructions => "instructions",
            Placement::Both => "both",
        }
    }

    /// The placement `config.toml` spells `text`, if any.
    pub fn parse(text: &str) -> Option<Placement> {
        [Placement::Tool, Placement::Instructions, Placement::Both]
            .into_iter()
            .find(|p| p.as_str() == text)
    }

    /// Whether the tool description carries the catalog.
    pub fn in_tool(self) -> bool {
        matches!(self, Placement::Tool | Placement::Both)
    }

    /// Whether the `instructions` carry the catalog.
    pub fn in_instructions(self) -> bool {
        matches!(self, Placement::Instructions | Placement::Both)
    }
}

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

/// `trusted_signers`, `revoked_signers` and `require_signature` of
/// `config.toml`: what every source's signature must satisfy unless the
/// source says otherwise (behaviour.md, "Signatures"). Each with where it
/// was said (`config.toml:3`), for messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignatureSettings {
    pub trusted_signers: Option<(PathBuf, String)>,
    pub revoked_signers: Option<(PathBuf, String)>,
    /// Where a signature was required; `None`: not required.
    pub require_signature: Option<String>,
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
    /// Whether the skills used are recorded in the usage file
    /// (`--no-usage` or `usage = false` turns it off).
    pub usage: bool,
    /// `--http`: serve MCP over Streamable HTTP instead of stdio.
    pub http: Option<HttpOptions>,
    /// `[sources.ID] auto_update` of `config.toml` (`--http` only).
    pub auto_update: Vec<file::AutoUpdate>,
}

/// The address `--http` listens on when none is given.
pub const DEFAULT_HTTP_ADDR: &str = "127.0.0.1:8080";
/// The default cap on open MCP sessions (2025-11-25 clients) of `--http`.
pub const DEFAULT_MAX_SESSIONS: usize = 1000;
/// Open connections of `serve --http` at most (`--max-connections`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// The default time after which an MCP session with no request ends.
pub const DEFAULT_SESSION_IDLE_SECS: u64 = 600;
/// The default least time between fetches of an OAuth issuer's keys on
/// tokens with unknown keys.
pub const DEFAULT_OAUTH_REFETCH_SECS: u64 = 30;

/// How `serve --http` listens and whom it lets in (behaviour.md §16).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpOptions {
    pub addr: std::net::SocketAddr,
    /// `--auth-tokens`: the file of `label:sha256hex` lines.
    pub tokens: Option<PathBuf>,
    /// `--oauth-issuer` and `--oauth-audience`.
    pub oauth: Option<OAuth>,
    /// `--allowed-origin`: browser origins allowed besides loopback ones on a
    /// loopback address.
    pub allowed_origins: Vec<String>,
    /// `--public-url`: the URL clients reach `/mcp` at, when the server is
    /// behind a proxy (the OAuth resource metadata names it).
    pub public_url: Option<String>,
    /// `--metrics`: serve Prometheus metrics at `/metrics`.
    pub metrics: bool,
    /// `--max-sessions`: open sessions beyond this end the one idle longest.
    pub max_sessions: usize,
    /// `--session-idle`: a session with no request for this long ends.
    pub session_idle: Duration,
    /// `--max-connections`: open connections at most (each is a file
    /// descriptor).
    pub max_connections: usize,
    /// `skillserve ui`: the one person's server of the skills app.
    pub launch: Option<Launch>,
    /// `--threads`: the runtime's worker threads (1: a current-thread
    /// runtime, as stdio's).
    pub threads: usize,
    /// `--drain`: after SIGTERM, how long the server goes on answering
    /// while `/healthz` says it is draining.
    pub drain: Duration,
}

impl HttpOptions {
    /// Whether requests must carry credentials: they must when any are
    /// configured.
    pub fn authenticates(&self) -> bool {
        self.tokens.is_some() || self.oauth.is_some() || self.launch.is_some()
    }
}

/// `skillserve ui`: a loopback server for the person who started it, with
/// a token of its own (never written anywhere) that may change anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The one token the server accepts; it grants admin.
    pub token: String,
    /// Open the page in the browser (else only print its address).
    pub open: bool,
}

/// An OAuth 2.1 authorization server whose JWT access tokens the server
/// accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuth {
    /// The issuer identifier (`iss`), an `https://` URL (`http://` only on
    /// loopback).
    pub issuer: String,
    /// The audience (`aud`) tokens must name.
    pub audience: String,
    /// Fetches of the issuer's keys for a token with an unknown key are at
    /// least this far apart, so that tokens with made-up key ids cannot make
    /// the server hammer the issuer (`--oauth-refetch-interval`).
    pub refetch_interval: std::time::Duration,
}

/// The environment, captured once at start-up: the variables skillserve
/// reads, every variable for `$VAR` expansion, and the working directory.
///
/// Nothing else in the crate reads the process environment, so the
/// precedence rules are testable without touching it.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub home: Home,
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
    /// The environment unit tests start from: home `/home/u`, working
    /// directory `/work`, no variables.
    #[cfg(test)]
    pub fn for_tests() -> Env {
        Env {
            home: Home::at("/home/u"),
            cwd: "/work".into(),
            ..Env::default()
        }
    }

    /// Reads the process environment. Empty variables count as unset.
    pub fn from_process() -> std::io::Result<Env> {
        let vars = Vars::new(std::env::vars_os().collect());
        let var = |name: &str| {
            vars.get(name)
                .filter(|v| !v.is_empty())
                .map(OsStr::to_os_string)
        };
        Ok(Env {
            home: Home::choose(Platform::CURRENT, var("HOME"), var("USERPROFILE")),
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
        let home = self.home.dir.as_deref().zip(self.home.from);
        Folders::of(home, |name| self.vars.get(name).filter(|v| !v.is_empty()))
    }
}

/// Every environment variable, shared.
#[derive(Clone, Debug, Default)]
pub struct Vars(Arc<HashMap<OsString, OsString>>);

impl Vars {
    /// The variables `vars`.
    pub fn new(vars: HashMap<OsString, OsString>) -> Vars {
        Vars(Arc::new(vars))
    }

    /// The variable `name`, if it is set (even to an empty value). On
    /// Windows names compare case-insensitively, as there (`Path` is `PATH`).
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.get_on(Platform::CURRENT, name)
    }

    fn get_on(&self, platform: Platform, name: &str) -> Option<&OsStr> {
        let exact = self.0.get(OsStr::new(name));
        let any_case = || {
            (platform == Platform::Windows)
                .then(|| {
                    self.0.iter().find_map(|(key, value)| {
                        key.to_str()
                            .is_some_and(|key| platform.same_variable(key, name))
                            .then_some(value)
                    })
                })
                .flatten()
        };
        exact.or_else(any_case).map(OsString::as_os_str)
    }

    /// The variable `name` as text (lossily), if it is set.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(|value| value.to_string_lossy().into_owned())
    }
}

/// The home folder and how it was chosen: `HOME` when it holds an absolute
/// path of this platform, else on Windows `USERPROFILE`. Deliberately not the
/// password database: no usable variable means "no user roots, one warning"
/// (behaviour.md §3.1), which is what a server started with a scrubbed
/// environment should do. On Windows, `HOME` is often set by Git Bash, MSYS
/// or Cygwin to a path of their own (`/c/Users/me`), which Windows programs
/// cannot open: such a `HOME` is passed over, not used.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Home {
    /// The folder, or `None` when no variable holds a usable path.
    pub dir: Option<PathBuf>,
    /// The variable `dir` came from.
    pub from: Option<&'static str>,
    /// Why each variable looked at before (or instead of) `from` was not
    /// used, e.g. "HOME is `/c/Users/me`, not an absolute Windows path".
    pub passed_over: Vec<String>,
}

impl Home {
    /// Chooses the home folder from the values of `HOME` and `USERPROFILE`
    /// (`None`: unset or empty) by `platform`'s rules.
    pub fn choose(
        platform: Platform,
        home: Option<OsString>,
        userprofile: Option<OsString>,
    ) -> Home {
        let mut candidates = vec![("HOME", home)];
        if platform == Platform::Windows {
            candidates.push(("USERPROFILE", userprofile));
        }
        let mut passed_over = Vec::new();
        for (var, value) in candidates {
            match value {
                Some(value) if platform.is_absolute(&value) => {
                    return Home {
                        dir: Some(PathBuf::from(value)),
                        from: Some(var),
                        passed_over,
                    };
                }
                Some(value) => passed_over.push(format!(
                    "{var} is `{}`, not an absolute {}path",
                    value.to_string_lossy(),
                    if platform == Platform::Windows {
                        "Windows "
                    } else {
                        ""
                    }
                )),
                None => passed_over.push(format!("{var} is not set")),
            }
        }
        Home {
            dir: None,
            from: None,
            passed_over,
        }
    }

    /// The home folder `dir`, as if `HOME` held it.
    pub fn at(dir: impl Into<PathBuf>) -> Home {
        Home {
            dir: Some(dir.into()),
            from: Some("HOME"),
            passed_over: Vec::new(),
        }
    }

    /// Where the home folder is and which variable said so, for the log:
    /// `/home/me (from HOME)`, `C:\Users\me (from USERPROFILE; HOME is …)`,
    /// or why there is none.
    pub fn describe(&self) -> String {
        match (&self.dir, self.from) {
            (Some(dir), Some(from)) if self.passed_over.is_empty() => {
                format!("{} (from {from})", dir.display())
            }
            (Some(dir), Some(from)) => format!(
                "{} (from {from}; {})",
                dir.display(),
                self.passed_over.join("; ")
            ),
            _ => format!("none ({})", self.why_none()),
        }
    }

    /// Why there is no home folder: "HOME is not set", or on Windows
    /// "HOME is not set and USERPROFILE is not set".
    pub fn why_none(&self) -> String {
        self.passed_over.join(" and ")
    }
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

    fn choose(platform: Platform, home: Option<&str>, userprofile: Option<&str>) -> Home {
        Home::choose(platform, home.map(Into::into), userprofile.map(Into::into))
    }

    #[test]
    fn unix_home_is_home_when_absolute() {
        assert_eq!(
            choose(Platform::Unix, Some("/home/a"), Some(r"C:\Users\a")),
            Home::at("/home/a")
        );
        assert_eq!(Home::at("/home/a").describe(), "/home/a (from HOME)");
        let relative = choose(Platform::Unix, Some("relative"), Some(r"C:\Users\a"));
        assert_eq!(relative.dir, None, "USERPROFILE means nothing on Unix");
        assert_eq!(
            relative.why_none(),
            "HOME is `relative`, not an absolute path"
        );
        assert_eq!(
            choose(Platform::Unix, None, None).why_none(),
            "HOME is not set"
        );
    }

    #[test]
    fn windows_home_falls_back_to_userprofile_when_home_is_no_windows_path() {
        let userprofile = Some(r"C:\Users\me");
        assert_eq!(
            choose(Platform::Windows, Some(r"D:\home"), userprofile),
            Home::at(r"D:\home"),
            "a Windows HOME wins"
        );
        for home in [None, Some("/c/Users/me"), Some("/home/me"), Some("~")] {
            let chosen = choose(Platform::Windows, home, userprofile);
            assert_eq!(chosen.dir, Some(PathBuf::from(r"C:\Users\me")), "{home:?}");
            assert_eq!(chosen.from, Some("USERPROFILE"));
        }
        let git_bash = choose(Platform::Windows, Some("/c/Users/me"), userprofile);
        assert_eq!(
            git_bash.describe(),
            r"C:\Users\me (from USERPROFILE; HOME is `/c/Users/me`, not an absolute Windows path)"
        );
        let none = choose(Platform::Windows, Some("/c/Users/me"), None);
        assert_eq!(none.dir, None);
        assert_eq!(
            none.why_none(),
            "HOME is `/c/Users/me`, not an absolute Windows path and USERPROFILE is not set"
        );
        assert_eq!(
            choose(Platform::Windows, None, Some("me")).describe(),
            "none (HOME is not set and USERPROFILE is `me`, not an absolute Windows path)"
        );
    }

    #[test]
    fn windows_variable_names_are_case_insensitive() {
        let vars = Vars::new(HashMap::from([
            ("Path".into(), r"C:\bin".into()),
            ("HOME".into(), "/home/u".into()),
        ]));
        assert_eq!(
            vars.get_on(Platform::Windows, "PATH"),
            Some(OsStr::new(r"C:\bin"))
        );
        assert_eq!(vars.get_on(Platform::Unix, "PATH"), None);
        assert_eq!(
            vars.get_on(Platform::Unix, "HOME"),
            Some(OsStr::new("/home/u"))
        );
        assert_eq!(
            vars.get_on(Platform::Windows, "home"),
            Some(OsStr::new("/home/u"))
        );
    }
}
