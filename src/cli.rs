//! The command line: flags and environment variables, turned into a
//! [`Config`] (behaviour.md §8). Nothing else in the crate sees `clap` types.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use tracing_subscriber::filter::{LevelFilter, Targets};

use crate::config::{
    Config, DEFAULT_DESCRIPTION_BUDGET, DEFAULT_HTTP_ADDR, DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_SESSIONS, DEFAULT_REFRESH_SECS, DEFAULT_SESSION_IDLE_SECS, Env, HttpOptions,
    MIN_DESCRIPTION_BUDGET, OAuth, ServeOptions, absolute,
};
use crate::folders::Folders;
use crate::import::invoke::InvokeOptions;
use crate::import::{DEFAULT_OUTPUT_DIR, DEFAULT_TIMEOUT_SECS, ImportOptions};
use crate::program::SearchEnv;
use crate::sources::{AddOptions, UpdateOptions};

/// A day: longer intervals are a mistake (and overflow timers near `u64::MAX`).
const MAX_REFRESH_SECS: u64 = 86_400;
/// A day, for `--timeout` of `import` and `invoke`: a call may take long.
const MAX_TIMEOUT_SECS: u64 = 86_400;

const ABOUT: &str = "Serve your Agent Skills (SKILL.md folders) to any MCP client over stdio.";

const LONG_ABOUT: &str = "\
Serve your Agent Skills (SKILL.md folders) to any MCP client over stdio.

Claude Desktop, Cursor and most MCP clients cannot read the skills you keep in
~/.claude/skills, ~/.agents/skills, your project's .claude/skills or your Claude
Code plugins. skillserve gives them all of those through one tool, `skill`.

Configure it in your client as:  {\"command\": \"skillserve\"}

Without a command it runs the MCP server on stdin/stdout. `list`, `show` and
`check` let you see what the server would serve, and why.";

const AFTER_HELP: &str = "\
Where skills are looked for, highest precedence first:
  1. --skills-dir DIR (repeatable), then SKILLSERVE_SKILLS_DIRS
  2. the project (--project-dir, else $CLAUDE_PROJECT_DIR, else the current
     directory) and its parents up to the repository root: .claude/skills,
     .agents/skills, .codex/skills, .cursor/skills, .gemini/skills,
     .opencode/skills, .github/skills
  3. your home: ~/.claude/skills ($CLAUDE_CONFIG_DIR/skills), ~/.agents/skills,
     ~/.codex/skills ($CODEX_HOME/skills), ~/.cursor/skills, ~/.gemini/skills,
     ~/.config/opencode/skills, ~/.copilot/skills
  4. skills installed with `skillserve add` (see `skillserve sources`)
  5. skills of enabled Claude Code plugins

Examples:
  skillserve list                     what the server would offer here
  skillserve show pdf                 exactly what a `skill` call with \"pdf\" returns
  skillserve show pdf references/forms.md
                                      the same for one of the skill's files
  skillserve check                    find broken or shadowed skills
  skillserve --skills-dir ~/my-skills serve an extra folder (first in precedence)
  skillserve import --mcp-settings ~/.cursor/mcp.json
                                      one skill per tool of your MCP servers, in ./mcp-skills
  skillserve invoke --mcp-settings ~/.cursor/mcp.json github search_code '{\"q\": \"x\"}'
                                      call one of those tools from a shell
  skillserve add anthropics/skills    install the skills of a GitHub repository (after a review)
  skillserve update --check           are there updates? (exit 10 when there are)
  skillserve publish ./skills --out site
                                      your skills as an index any static web host can serve
  skillserve serve --http             serve a team over HTTP at http://127.0.0.1:8080/mcp
  skillserve token new alice --file tokens
                                      a bearer token for --auth-tokens tokens";

#[derive(Debug, Parser)]
#[command(
    name = "skillserve",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub shared: SharedArgs,

    #[command(flatten)]
    pub serve: ServeArgs,

    /// A serve flag given with another command (`--no-watch list`), found
    /// by [`Cli::read`] and refused by [`Cli::serve_options`].
    #[arg(skip)]
    misplaced_serve_flag: Option<(String, &'static str)>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the MCP server on stdin/stdout (the default).
    Serve(ServeCommand),
    /// List the skills the server would offer.
    List {
        /// Print JSON instead of a table.
        #[arg(long, conflicts_with = "description")]
        json: bool,
        /// Also list skills hidden by a same-named skill of higher precedence.
        #[arg(long, conflicts_with = "description")]
        all: bool,
        /// Print the `skill` tool's description exactly as a client receives
        /// it (in the budget of --description-budget).
        #[arg(long)]
        description: bool,
    },
    /// Print exactly what a `skill` call with NAME (and FILE) returns (exit 1 on error).
    Show {
        /// The skill name, as a model would type it.
        name: String,
        /// A file inside the skill's folder (e.g. references/forms.md); a folder lists its files.
        file: Option<String>,
    },
    /// Report broken files, shadowed names and other problems (exit 1 on errors).
    Check {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write one skill per tool of the MCP servers in a settings file (exit 1 when a server fails).
    Import(ImportArgs),
    /// Call a tool of an MCP server in a settings file and print its result (exit 1 on error).
    Invoke(InvokeArgs),
    /// Install skills from a git repository or a published index (shows the plan and asks first).
    Add(AddArgs),
    /// Fetch installed sources again and install what changed (shows the changes and asks first).
    Update(UpdateArgs),
    /// Remove an installed source and its skills (asks first).
    Remove {
        /// The source's id (see `skillserve sources`).
        id: String,
        /// Do not ask; needed without a terminal.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// List the installed sources: id, kind, URL, ref, commit, skills, last update.
    Sources {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Write a folder of skills as an Agent Skills discovery index for a static web host.
    Publish {
        /// The folder that holds the skills (like a --skills-dir).
        dir: String,
        /// Where to write `.well-known/agent-skills/` (index.json and one artifact per skill).
        #[arg(long, value_name = "OUT")]
        out: String,
    },
    /// Bearer tokens for `serve --http --auth-tokens FILE`.
    #[command(subcommand)]
    Token(TokenCommand),
}

/// `token` and its subcommands.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Print a new random token once and append its SHA-256 to the token file.
    New {
        /// A name for the token, logged with each request it makes (letters, digits, `.`, `_`, `-`, `@`).
        label: String,
        /// The token file [default: tokens in skillserve's config folder, e.g. ~/.config/skillserve/tokens].
        #[arg(long, value_name = "FILE")]
        file: Option<String>,
    },
}

impl TokenCommand {
    /// The token file of `token new`: `--file`, else `tokens` in the config
    /// folder.
    pub fn file(&self, env: &Env, config: &Config) -> Result<PathBuf, UsageError> {
        let TokenCommand::New { file, .. } = self;
        match file {
            Some(file) => expand_path("--file", file, env),
            None => config
                .folders
                .config
                .as_ref()
                .map(|dir| dir.join("tokens"))
                .ok_or(UsageError::NoTokenFile),
        }
    }
}

impl Command {
    fn name_if_not_serve(&self) -> Option<&'static str> {
        match self {
            Command::Serve(_) => None,
            Command::List { .. } => Some("list"),
            Command::Show { .. } => Some("show"),
            Command::Check { .. } => Some("check"),
            Command::Import(_) => Some("import"),
            Command::Invoke(_) => Some("invoke"),
            Command::Add(_) => Some("add"),
            Command::Update(_) => Some("update"),
            Command::Remove { .. } => Some("remove"),
            Command::Sources { .. } => Some("sources"),
            Command::Publish { .. } => Some("publish"),
            Command::Token(_) => Some("token"),
        }
    }
}

/// Options every command understands.
#[derive(Debug, Args)]
pub struct SharedArgs {
    /// Also serve skills from DIR, before all others (repeatable; `~` and $VAR expand).
    #[arg(long = "skills-dir", value_name = "DIR", global = true)]
    pub skills_dirs: Vec<String>,

    /// The project whose skill folders to serve [default: $CLAUDE_PROJECT_DIR, else the current directory].
    #[arg(long, value_name = "DIR", global = true)]
    pub project_dir: Option<String>,

    /// Do not serve project skills.
    #[arg(long, global = true)]
    pub no_project: bool,

    /// Do not serve skills from your home directory.
    #[arg(long, global = true)]
    pub no_user: bool,

    /// Do not serve Claude Code plugin skills.
    #[arg(long, global = true)]
    pub no_plugins: bool,

    /// Skip SKILL.md files larger than N bytes (and show no other skill file larger than N).
    #[arg(long, value_name = "N", global = true, default_value_t = DEFAULT_MAX_FILE_BYTES)]
    pub max_file_bytes: u64,

    /// Log level (error, warn, info, debug, trace) or a filter like `skillserve=debug`
    /// [default: $SKILLSERVE_LOG, else info for the server and warn for commands].
    #[arg(long, value_name = "LEVEL", global = true)]
    pub log_level: Option<String>,
}

/// `serve` and its arguments (the serve options are global: see [`ServeArgs`]).
#[derive(Debug, Args)]
pub struct ServeCommand {
    /// More skills folders to serve, like --skills-dir (after those): a host
    /// that hands over several folders as separate arguments (an MCP Bundle's
    /// settings form) needs no flag before each.
    #[arg(value_name = "SKILLS_DIR")]
    pub folders: Vec<String>,
}

/// Options of the server: the one list of serve flags. They are global, so
/// that they may come before or after `serve` (or with no command at all);
/// [`Cli::read`] refuses them with any other command, naming the flag
/// (but for `--description-budget` with `list --description`, which renders
/// the description in that budget).
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "Server options")]
pub struct ServeArgs {
    /// Rescan all skill folders every SECS seconds; 0 turns it off [default: 30].
    #[arg(long, global = true, value_name = "SECS", value_parser = clap::value_parser!(u64).range(0..=MAX_REFRESH_SECS))]
    pub refresh_interval: Option<u64>,

    /// Do not watch skill folders for changes (the interval still applies).
    #[arg(long, global = true)]
    pub no_watch: bool,

    /// Maximum characters of the `skill` tool description [default: 8000, minimum: 300].
    #[arg(long, global = true, value_name = "CHARS")]
    pub description_budget: Option<usize>,

    /// Do not offer skills as MCP prompts (slash commands).
    #[arg(long, global = true)]
    pub no_prompts: bool,

    /// Do not offer skill files as MCP resources (and so not the skills extension).
    #[arg(long, global = true)]
    pub no_resources: bool,

    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio [ADDR default: 127.0.0.1:8080].
    #[arg(long, global = true, value_name = "ADDR", num_args = 0..=1,
          default_missing_value = DEFAULT_HTTP_ADDR, help_heading = "HTTP server options")]
    pub http: Option<String>,

    /// Accept the bearer tokens whose hashes FILE holds (`label:sha256hex` lines; see `token new`); re-read when it changes.
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        help_heading = "HTTP server options"
    )]
    pub auth_tokens: Option<String>,

    /// Accept JWT access tokens of this OAuth authorization server (needs --oauth-audience).
    #[arg(
        long,
        global = true,
        value_name = "URL",
        requires = "oauth_audience",
        help_heading = "HTTP server options"
    )]
    pub oauth_issuer: Option<String>,

    /// The audience (`aud`) OAuth access tokens must name, usually this server's URL.
    #[arg(
        long,
        global = true,
        value_name = "AUD",
        requires = "oauth_issuer",
        help_heading = "HTTP server options"
    )]
    pub oauth_audience: Option<String>,

    /// Serve a non-loopback address without authentication (behind a proxy that authenticates).
    #[arg(long, global = true, help_heading = "HTTP server options")]
    pub insecure_no_auth: bool,

    /// Allow browser requests from ORIGIN, e.g. https://app.example.com (repeatable); loopback origins are allowed on a loopback address.
    #[arg(
        long = "allowed-origin",
        global = true,
        value_name = "ORIGIN",
        help_heading = "HTTP server options"
    )]
    pub allowed_origins: Vec<String>,

    /// The URL clients use for /mcp, when a proxy sits in front (named in the OAuth metadata) [default: from the Host header].
    #[arg(
        long,
        global = true,
        value_name = "URL",
        help_heading = "HTTP server options"
    )]
    pub public_url: Option<String>,

    /// Serve Prometheus metrics at /metrics.
    #[arg(long, global = true, help_heading = "HTTP server options")]
    pub metrics: bool,

    /// At most N open sessions (2025-11-25 clients); one more ends the session idle longest [default: 1000].
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000), help_heading = "HTTP server options")]
    pub max_sessions: Option<u64>,

    /// End a session after SECS seconds without a request [default: 600].
    #[arg(long, global = true, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=MAX_REFRESH_SECS), help_heading = "HTTP server options")]
    pub session_idle: Option<u64>,
}

/// The flags that only `--http` uses, for the error when one comes without it.
fn http_only_flag(serve: &ServeArgs) -> Option<&'static str> {
    [
        (serve.auth_tokens.is_some(), "--auth-tokens"),
        (serve.oauth_issuer.is_some(), "--oauth-issuer"),
        (serve.insecure_no_auth, "--insecure-no-auth"),
        (!serve.allowed_origins.is_empty(), "--allowed-origin"),
        (serve.public_url.is_some(), "--public-url"),
        (serve.metrics, "--metrics"),
        (serve.max_sessions.is_some(), "--max-sessions"),
        (serve.session_idle.is_some(), "--session-idle"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// `--http`'s ADDR: `host:port` with an IP address or `localhost`, or a port
/// alone (on 127.0.0.1).
fn parse_addr(value: &str) -> Result<std::net::SocketAddr, UsageError> {
    let value = value.trim();
    let bad = || UsageError::HttpAddr(value.to_owned());
    if let Ok(port) = value.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = value.strip_prefix("localhost:") {
        let port = port.parse::<u16>().map_err(|_| bad())?;
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    value.parse().map_err(|_| bad())
}

/// An origin as browsers send it: `scheme://host[:port]`, nothing after.
fn check_origin(origin: &str) -> Result<String, UsageError> {
    let bad = || UsageError::Origin(origin.to_owned());
    let (scheme, rest) = origin.split_once("://").ok_or_else(bad)?;
    if !matches!(scheme, "http" | "https") || rest.is_empty() || rest.contains(['/', '?', '#']) {
        return Err(bad());
    }
    Ok(origin.trim_end_matches('/').to_ascii_lowercase())
}

/// An issuer or public URL: `https://`, or `http://` for a loopback host.
fn check_url(what: &'static str, url: &str) -> Result<String, UsageError> {
    let url = url.trim().trim_end_matches('/');
    let bad = || UsageError::Url {
        what,
        value: url.to_owned(),
    };
    if let Some(rest) = url.strip_prefix("http://") {
        let host = rest.split(['/', ':']).next().unwrap_or("");
        let loopback = host == "localhost"
            || host == "[::1]"
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback());
        if !loopback {
            return Err(bad());
        }
    } else if !url.starts_with("https://") || url.len() <= "https://".len() {
        return Err(bad());
    }
    Ok(url.to_owned())
}

/// Options of `import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The MCP settings file: `{"mcpServers": {...}}` as Claude Desktop, Cursor and Claude Code write it.
    #[arg(long, value_name = "FILE")]
    pub mcp_settings: String,

    /// The folder to write the skills to (`~` and $VAR expand).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_OUTPUT_DIR)]
    pub output_dir: String,

    /// Also regenerate the skills of servers whose tools did not change.
    #[arg(long)]
    pub force_refresh: bool,

    /// Seconds to wait for each server to start, and then for its list of tools.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECS))]
    pub timeout: u64,
}

/// Options of `add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// owner/repo (GitHub), a git URL (https://, ssh://, git@host:path, file://), the path
    /// of a local git checkout, or https://host for a published index.
    pub source: String,

    /// The source's name in sources.lock [default: the repository's name, or the index's host].
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,

    /// The branch, tag or commit to install [default: the remote's default branch]; a tag
    /// or a commit stays pinned on `update`.
    #[arg(long = "ref", value_name = "REF")]
    pub reference: Option<String>,

    /// Only look for skills in this folder of the repository.
    #[arg(long = "path", value_name = "SUBDIR")]
    pub subdir: Option<String>,

    /// Install only this skill (repeatable; see the plan for the names).
    #[arg(long = "skill", value_name = "NAME")]
    pub skills: Vec<String>,

    /// Do not ask; needed without a terminal.
    #[arg(long, short = 'y')]
    pub yes: bool,

    /// Install even skills with error-level security findings.
    #[arg(long)]
    pub allow_risky: bool,
}

impl AddArgs {
    pub fn options(&self) -> AddOptions {
        AddOptions {
            source: self.source.clone(),
            id: self.id.clone(),
            reference: self.reference.clone(),
            subdir: self.subdir.clone(),
            skills: self.skills.clone(),
            allow_risky: self.allow_risky,
        }
    }
}

/// Options of `update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The sources to update [default: all].
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,

    /// Change nothing; exit 10 when updates are available, 0 when not.
    #[arg(long)]
    pub check: bool,

    /// Do not ask; needed without a terminal.
    #[arg(long, short = 'y', conflicts_with = "check")]
    pub yes: bool,

    /// Install even skills with error-level security findings.
    #[arg(long, conflicts_with = "check")]
    pub allow_risky: bool,
}

impl UpdateArgs {
    pub fn options(&self) -> UpdateOptions {
        UpdateOptions {
            ids: self.ids.clone(),
            check: self.check,
            allow_risky: self.allow_risky,
        }
    }
}

/// Expands `~` and `$VAR` in the path of a command's argument, made absolute.
pub fn command_path(what: &'static str, value: &str, env: &Env) -> Result<PathBuf, UsageError> {
    expand_path(what, value, env)
}

/// Options of `invoke`.
#[derive(Debug, Args)]
pub struct InvokeArgs {
    /// The MCP settings file that defines SERVER.
    #[arg(long, value_name = "FILE")]
    pub mcp_settings: String,

    /// The server's name in the settings file.
    pub server: String,

    /// The tool to call.
    pub tool: String,

    /// The arguments, a JSON object; `-` reads them from stdin [default: {}].
    pub json_args: Option<String>,

    /// Print the whole result as JSON.
    #[arg(long)]
    pub json: bool,

    /// Seconds to wait for the server to start, and then for the result.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECS))]
    pub timeout: u64,
}

impl ImportArgs {
    /// The options of `import`: paths expanded and absolute.
    pub fn options(&self, env: &Env) -> Result<ImportOptions, UsageError> {
        Ok(ImportOptions {
            settings: expand_path("--mcp-settings", &self.mcp_settings, env)?,
            output_dir: expand_path("--output-dir", &self.output_dir, env)?,
            force_refresh: self.force_refresh,
            timeout: Duration::from_secs(self.timeout),
            vars: env.vars.clone(),
            programs: SearchEnv::from_env(env),
        })
    }
}

impl InvokeArgs {
    /// The options of `invoke`: the settings path expanded and absolute.
    pub fn options(&self, env: &Env) -> Result<InvokeOptions, UsageError> {
        Ok(InvokeOptions {
            settings: expand_path("--mcp-settings", &self.mcp_settings, env)?,
            server: self.server.clone(),
            tool: self.tool.clone(),
            arguments: self.json_args.clone().unwrap_or_default(),
            json: self.json,
            timeout: Duration::from_secs(self.timeout),
            vars: env.vars.clone(),
            programs: SearchEnv::from_env(env),
        })
    }
}

/// A problem with the command line that stops start-up.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("{what} `{value}`: environment variable {var} is not set")]
    UnsetVariable {
        what: &'static str,
        value: String,
        var: String,
    },
    #[error("{what} `{}` is not a directory", path.display())]
    NotADirectory { what: &'static str, path: PathBuf },
    #[error("--description-budget must be at least {MIN_DESCRIPTION_BUDGET} characters, got {0}")]
    BudgetTooSmall(usize),
    #[error("{what} is empty; give a folder")]
    EmptyPath { what: &'static str },
    #[error("{what} `{value}` starts with `~`, but there is no home folder: {why}")]
    NoHome {
        what: &'static str,
        value: String,
        /// Why, e.g. "HOME is not set".
        why: String,
    },
    #[error("{flag} only applies to the server, not to `{command}`")]
    ServeFlagWithCommand { flag: String, command: &'static str },
    #[error(
        "{what} `{value}` is not a log level: use one of off, error, warn, info, debug, trace, or a filter such as `skillserve=debug,rmcp=info`"
    )]
    LogLevel { what: &'static str, value: String },
    #[error("invalid log filter `{value}`: {reason}")]
    LogFilter { value: String, reason: String },
    #[error("{0} only applies with --http")]
    NeedsHttp(&'static str),
    #[error(
        "--http `{0}` is not an address: give host:port with an IP address (127.0.0.1:8080, 0.0.0.0:8080, [::]:8080), localhost:PORT, or a port"
    )]
    HttpAddr(String),
    #[error(
        "--http {0} is not a loopback address, so requests must be authenticated: give --auth-tokens FILE (see `skillserve token new`) or --oauth-issuer URL --oauth-audience AUD, or --insecure-no-auth when a proxy in front authenticates"
    )]
    NoAuth(std::net::SocketAddr),
    #[error(
        "--allowed-origin `{0}` is not an origin: give scheme://host[:port], e.g. https://app.example.com"
    )]
    Origin(String),
    #[error("{what} `{value}` must be an https:// URL (http:// only for localhost)")]
    Url { what: &'static str, value: String },
    #[error("no config folder to keep the token file in (HOME is not set); give --file FILE")]
    NoTokenFile,
    #[error("--auth-tokens {0}")]
    TokenFile(#[from] crate::tokens::TokenError),
}

/// `--description-budget` (the default when not given), refused under
/// [`MIN_DESCRIPTION_BUDGET`].
fn checked_budget(given: Option<usize>) -> Result<usize, UsageError> {
    let budget = given.unwrap_or(DEFAULT_DESCRIPTION_BUDGET);
    if budget < MIN_DESCRIPTION_BUDGET {
        return Err(UsageError::BudgetTooSmall(budget));
    }
    Ok(budget)
}

impl Cli {
    /// The budget of `list --description`.
    pub fn listed_description_budget(&self) -> Result<usize, UsageError> {
        checked_budget(self.serve.description_budget)
    }

    /// Parses `args` (the first is the program name); clap prints help,
    /// the version or a usage error and exits. Serve flags given with
    /// another command are noted for [`Cli::serve_options`] to refuse: which
    /// flags those are comes from [`ServeArgs`] itself, so a new flag needs
    /// no other edit.
    pub fn read<I, T>(args: I) -> Cli
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Cli::try_read(args).unwrap_or_else(|err| err.exit())
    }

    /// [`Cli::read`], returning clap's error instead of exiting.
    pub fn try_read<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = Cli::command().try_get_matches_from(args)?;
        let mut cli = Cli::from_arg_matches(&matches)?;
        if let Some(command) = cli.command.as_ref().and_then(Command::name_if_not_serve) {
            let serve_flags = ServeArgs::augment_args(clap::Command::new("serve"));
            let renders_description = matches!(
                cli.command,
                Some(Command::List {
                    description: true,
                    ..
                })
            );
            cli.misplaced_serve_flag = serve_flags
                .get_arguments()
                .filter(|arg| !(renders_description && arg.get_id() == "description_budget"))
                .find(|arg| {
                    matches.value_source(arg.get_id().as_str())
                        == Some(clap::parser::ValueSource::CommandLine)
                })
                .and_then(|arg| arg.get_long())
                .map(|long| (format!("--{long}"), command));
        }
        Ok(cli)
    }

    /// The server options.
    pub fn serve_options(&self) -> Result<ServeOptions, UsageError> {
        if let Some((flag, command)) = &self.misplaced_serve_flag {
            return Err(UsageError::ServeFlagWithCommand {
                flag: flag.clone(),
                command,
            });
        }
        let serve = &self.serve;
        let interval = serve.refresh_interval.unwrap_or(DEFAULT_REFRESH_SECS);
        Ok(ServeOptions {
            description_budget: checked_budget(serve.description_budget)?,
            refresh_interval: (interval > 0).then(|| Duration::from_secs(interval)),
            watch: !serve.no_watch,
            prompts: !serve.no_prompts,
            resources: !serve.no_resources,
            http: None,
        })
    }

    /// The server options with `--http`'s, paths expanded against `env`.
    /// A non-loopback address without authentication is refused unless
    /// `--insecure-no-auth`.
    pub fn serve_options_with_http(&self, env: &Env) -> Result<ServeOptions, UsageError> {
        let mut options = self.serve_options()?;
        let serve = &self.serve;
        let Some(addr) = &serve.http else {
            return match http_only_flag(serve) {
                Some(flag) => Err(UsageError::NeedsHttp(flag)),
                None => Ok(options),
            };
        };
        let addr = parse_addr(addr)?;
        let tokens = match &serve.auth_tokens {
            Some(file) => {
                let path = expand_path("--auth-tokens", file, env)?;
                // Read once here, so that a bad file stops start-up.
                crate::tokens::TokenFile::read(&path)?;
                Some(path)
            }
            None => None,
        };
        let oauth = match (&serve.oauth_issuer, &serve.oauth_audience) {
            (Some(issuer), Some(audience)) => Some(OAuth {
                issuer: check_url("--oauth-issuer", issuer)?,
                audience: audience.clone(),
            }),
            _ => None,
        };
        let http = HttpOptions {
            addr,
            tokens,
            oauth,
            allowed_origins: serve
                .allowed_origins
                .iter()
                .map(|origin| check_origin(origin))
                .collect::<Result<_, _>>()?,
            public_url: match &serve.public_url {
                Some(url) => Some(check_url("--public-url", url)?),
                None => None,
            },
            metrics: serve.metrics,
            max_sessions: serve
                .max_sessions
                .map_or(DEFAULT_MAX_SESSIONS, |n| n as usize),
            session_idle: Duration::from_secs(
                serve.session_idle.unwrap_or(DEFAULT_SESSION_IDLE_SECS),
            ),
        };
        if !addr.ip().is_loopback() && !http.authenticates() && !serve.insecure_no_auth {
            return Err(UsageError::NoAuth(addr));
        }
        options.http = Some(http);
        Ok(options)
    }

    /// The `tracing` filter for the log: `--log-level` (a bare level applies
    /// to skillserve, dependencies stay at `warn`), else `SKILLSERVE_LOG`, else
    /// `info` for skillserve in the server and `warn` for commands.
    pub fn log_filter(&self, env: &Env) -> Result<Targets, UsageError> {
        if let Some(value) = &self.shared.log_level {
            if let Some(level) = log_level(value) {
                return Ok(Targets::new()
                    .with_default(LevelFilter::WARN)
                    .with_target("skillserve", level));
            }
            return parse_filter("--log-level", value);
        }
        if let Some(filter) = &env.log_filter {
            return parse_filter("SKILLSERVE_LOG", filter);
        }
        let serving = matches!(self.command, None | Some(Command::Serve(_)));
        let quiet = Targets::new().with_default(LevelFilter::WARN);
        Ok(if serving {
            quiet.with_target("skillserve", LevelFilter::INFO)
        } else {
            quiet
        })
    }

    /// The configuration, plus warnings worth logging (e.g. no home directory).
    pub fn config(&self, env: &Env) -> Result<(Config, Vec<String>), UsageError> {
        let args = &self.shared;
        let mut warnings = Vec::new();
        let user = !args.no_user;
        if env.home.dir.is_none() && user {
            warnings.push(format!(
                "{}, so skills in your home folders (~/.claude/skills, ...) are not served",
                env.home.why_none()
            ));
        }
        let under_home = |var: &Option<std::ffi::OsString>, default: &str| {
            var.as_deref()
                .map(|dir| absolute(dir.as_ref(), &env.cwd))
                .or_else(|| env.home.dir.as_ref().map(|home| home.join(default)))
        };
        let config = Config {
            custom_dirs: self.custom_dirs(env)?,
            project_dir: self.project_dir(env)?,
            home: env.home.dir.clone(),
            user,
            claude_config_dir: under_home(&env.claude_config_dir, ".claude"),
            codex_home: under_home(&env.codex_home, ".codex"),
            plugins: !args.no_plugins,
            max_file_bytes: args.max_file_bytes,
            folders: Folders::of(env.home.dir.as_deref(), |name| {
                env.vars.get(name).filter(|v| !v.is_empty())
            }),
        };
        Ok((config, warnings))
    }

    /// `--skills-dir`, the folders after `serve`, then `SKILLSERVE_SKILLS_DIRS`,
    /// expanded; one that exists but is not a folder stops start-up.
    fn custom_dirs(&self, env: &Env) -> Result<Vec<PathBuf>, UsageError> {
        let mut dirs = Vec::new();
        for dir in &self.shared.skills_dirs {
            dirs.push(expand_path("--skills-dir", dir, env)?);
        }
        if let Some(Command::Serve(serve)) = &self.command {
            for dir in &serve.folders {
                dirs.push(expand_path("skills folder", dir, env)?);
            }
        }
        if let Some(list) = &env.skills_dirs {
            for entry in std::env::split_paths(list) {
                if entry.as_os_str().is_empty() {
                    continue;
                }
                let entry = entry.to_string_lossy().into_owned();
                dirs.push(expand_path("SKILLSERVE_SKILLS_DIRS entry", &entry, env)?);
            }
        }
        if let Some(dir) = dirs.iter().find(|dir| dir.exists() && !dir.is_dir()) {
            return Err(UsageError::NotADirectory {
                what: "skills folder",
                path: dir.clone(),
            });
        }
        Ok(dirs)
    }

    /// `--project-dir` (which must be a folder), else `$CLAUDE_PROJECT_DIR`,
    /// else the current directory; `None` with `--no-project`.
    fn project_dir(&self, env: &Env) -> Result<Option<PathBuf>, UsageError> {
        let args = &self.shared;
        // A server reached over HTTP has no client's project to look in.
        if args.no_project || self.serve.http.is_some() {
            return Ok(None);
        }
        if let Some(dir) = &args.project_dir {
            let dir = expand_path("--project-dir", dir, env)?;
            if !dir.is_dir() {
                return Err(UsageError::NotADirectory {
                    what: "--project-dir",
                    path: dir,
                });
            }
            return Ok(Some(dir));
        }
        Ok(Some(match &env.claude_project_dir {
            Some(dir) => absolute(dir.as_ref(), &env.cwd),
            None => env.cwd.clone(),
        }))
    }
}

/// One of the levels `--log-level` and `SKILLSERVE_LOG` accept, in any case:
/// off, error, warn, info, debug, trace.
fn log_level(word: &str) -> Option<LevelFilter> {
    Some(match word.trim().to_ascii_lowercase().as_str() {
        "off" => LevelFilter::OFF,
        "error" => LevelFilter::ERROR,
        "warn" => LevelFilter::WARN,
        "info" => LevelFilter::INFO,
        "debug" => LevelFilter::DEBUG,
        "trace" => LevelFilter::TRACE,
        _ => return None,
    })
}

/// A log filter: levels and `target=level` pairs separated by commas
/// (`warn,skillserve=debug`), spaces around each ignored. A bare level applies
/// to every target; an event takes the level of the longest target that its
/// own target starts with.
///
/// A word that is not a level where a level belongs is refused first:
/// `tracing` would read `--log-level verbose` as "only the target `verbose`"
/// and silently log nothing. Then a target must start with a letter, digit,
/// `_`, `-` or `:` and hold no space; span and field filters
/// (`target[span{field}]=level`) are refused rather than read as a target
/// that matches nothing.
fn parse_filter(what: &'static str, filter: &str) -> Result<Targets, UsageError> {
    let mut directives = Vec::new();
    for directive in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let (target, word) = match directive.rsplit_once('=') {
            Some((target, word)) => (Some(target.trim()), word),
            None => (None, directive),
        };
        let level = log_level(word).ok_or_else(|| UsageError::LogLevel {
            what,
            value: filter.to_owned(),
        })?;
        directives.push((target, level));
    }
    let refused = |reason: &str| UsageError::LogFilter {
        value: filter.to_owned(),
        reason: reason.to_owned(),
    };
    let mut targets = Targets::new();
    for (target, level) in directives {
        targets = match target {
            None => targets.with_default(level),
            Some(target) if target.contains(['[', ']', '{', '}']) => {
                return Err(refused(
                    "span and field filters are not supported; use `level` or `target=level`",
                ));
            }
            Some(target)
                if target.starts_with(|c: char| c.is_alphanumeric() || "_-:".contains(c))
                    && !target.contains(|c: char| c.is_whitespace() || c == '=') =>
            {
                targets.with_target(target, level)
            }
            Some(_) => return Err(refused("invalid filter directive")),
        };
    }
    Ok(targets)
}

/// Expands a leading `~` and `$VAR` / `${VAR}` (MCP clients start servers
/// without a shell), then makes the path absolute against the current directory.
fn expand_path(what: &'static str, value: &str, env: &Env) -> Result<PathBuf, UsageError> {
    // An empty path would silently mean the current directory, which for a
    // server started by a client is often `/` or the home directory.
    if value.trim().is_empty() {
        return Err(UsageError::EmptyPath { what });
    }
    if value.starts_with('~') && env.home.dir.is_none() {
        return Err(UsageError::NoHome {
            what,
            value: value.to_owned(),
            why: env.home.why_none(),
        });
    }
    let home = || {
        env.home
            .dir
            .as_ref()
            .map(|h| h.to_string_lossy().into_owned())
    };
    let lookup = |var: &str| env.vars.lookup(var).map(Some).ok_or(());
    let expanded = shellexpand::full_with_context(value, home, lookup).map_err(|e| {
        UsageError::UnsetVariable {
            what,
            value: value.to_owned(),
            var: e.var_name,
        }
    })?;
    if expanded.trim().is_empty() {
        return Err(UsageError::EmptyPath { what });
    }
    Ok(absolute(OsStr::new(expanded.as_ref()).as_ref(), &env.cwd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Home;
    use crate::platform::Platform;

    fn env() -> Env {
        Env {
            home: Home::at("/home/u"),
            cwd: "/work".into(),
            ..Env::default()
        }
    }

    fn parse(args: &[&str]) -> Cli {
        Cli::try_read(std::iter::once("skillserve").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn tilde_and_relative_paths_expand() {
        let (config, _) = parse(&["--skills-dir", "~/s", "--skills-dir", "rel"])
            .config(&env())
            .unwrap();
        assert_eq!(
            config.custom_dirs,
            vec![PathBuf::from("/home/u/s"), PathBuf::from("/work/rel")]
        );
    }

    #[test]
    fn unset_variable_is_an_error_naming_it() {
        let err = parse(&["--skills-dir", "$SKILLSERVE_TEST_SURELY_UNSET/x"])
            .config(&env())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--skills-dir `$SKILLSERVE_TEST_SURELY_UNSET/x`: environment variable SKILLSERVE_TEST_SURELY_UNSET is not set"
        );
    }

    #[test]
    fn serve_takes_skills_folders_as_arguments_after_the_flags() {
        let mut env = env();
        env.skills_dirs = Some("/from-env".into());
        let (config, _) = parse(&["--skills-dir", "/flag", "serve", "/a", "~/b c"])
            .config(&env)
            .unwrap();
        assert_eq!(
            config.custom_dirs,
            vec![
                PathBuf::from("/flag"),
                PathBuf::from("/a"),
                PathBuf::from("/home/u/b c"),
                PathBuf::from("/from-env")
            ]
        );
        // A subcommand name is never taken for a folder, and serve flags may
        // follow the folders.
        let cli = parse(&["serve", "list", "--no-watch"]);
        assert!(!cli.serve_options().unwrap().watch);
    }

    #[test]
    fn env_list_follows_flags() {
        let mut env = env();
        env.skills_dirs = Some(std::env::join_paths(["/a", "~/b"]).unwrap());
        let (config, _) = parse(&["--skills-dir", "/first"]).config(&env).unwrap();
        assert_eq!(
            config.custom_dirs,
            vec![
                PathBuf::from("/first"),
                PathBuf::from("/a"),
                PathBuf::from("/home/u/b")
            ]
        );
    }

    #[test]
    fn project_dir_precedence() {
        let mut env = env();
        assert_eq!(
            parse(&[]).config(&env).unwrap().0.project_dir,
            Some("/work".into())
        );
        env.claude_project_dir = Some("/proj".into());
        assert_eq!(
            parse(&[]).config(&env).unwrap().0.project_dir,
            Some("/proj".into())
        );
        assert_eq!(
            parse(&["--no-project"]).config(&env).unwrap().0.project_dir,
            None
        );
    }

    #[test]
    fn serve_options_after_the_subcommand_win() {
        let cli = parse(&[
            "--refresh-interval",
            "5",
            "serve",
            "--refresh-interval",
            "0",
            "--no-watch",
        ]);
        let options = cli.serve_options().unwrap();
        assert_eq!(options.refresh_interval, None);
        assert!(!options.watch);
        let cli = parse(&["--refresh-interval", "5"]);
        assert_eq!(
            cli.serve_options().unwrap().refresh_interval,
            Some(Duration::from_secs(5))
        );
    }

    #[test]
    fn tiny_budget_is_refused() {
        assert!(matches!(
            parse(&["--description-budget", "10"]).serve_options(),
            Err(UsageError::BudgetTooSmall(10))
        ));
    }

    #[test]
    fn empty_paths_and_tilde_without_home_are_errors() {
        assert!(matches!(
            parse(&["--skills-dir", ""]).config(&env()),
            Err(UsageError::EmptyPath { .. })
        ));
        let no_home = Env {
            home: Home::choose(Platform::Unix, None, None),
            cwd: "/".into(),
            ..Env::default()
        };
        assert_eq!(
            parse(&["--skills-dir", "~/skills"])
                .config(&no_home)
                .unwrap_err()
                .to_string(),
            "--skills-dir `~/skills` starts with `~`, but there is no home folder: HOME is not set"
        );
    }

    #[test]
    fn serve_flags_are_refused_with_other_commands() {
        let err = parse(&["--no-watch", "list"]).serve_options().unwrap_err();
        assert_eq!(
            err.to_string(),
            "--no-watch only applies to the server, not to `list`"
        );
        let err = parse(&["check", "--no-prompts"])
            .serve_options()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--no-prompts only applies to the server, not to `check`"
        );
        let err = parse(&["list", "--description-budget", "500"])
            .serve_options()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--description-budget only applies to the server, not to `list`"
        );
        let cli = parse(&["list", "--description", "--description-budget", "500"]);
        assert_eq!(cli.listed_description_budget().unwrap(), 500);
        assert!(parse(&["serve", "--no-resources"]).serve_options().is_ok());
        assert!(
            Cli::try_parse_from(["skillserve", "--refresh-interval", "18446744073709551615"])
                .is_err()
        );
    }

    #[test]
    fn log_levels_and_filters_are_checked() {
        let filter = |args: &[&str]| parse(args).log_filter(&env());
        let warn = || Targets::new().with_default(LevelFilter::WARN);
        assert_eq!(
            filter(&[]).unwrap(),
            warn().with_target("skillserve", LevelFilter::INFO)
        );
        assert_eq!(filter(&["list"]).unwrap(), warn());
        assert_eq!(
            filter(&["--log-level", "DEBUG"]).unwrap(),
            warn().with_target("skillserve", LevelFilter::DEBUG)
        );
        assert_eq!(
            filter(&["--log-level", "skillserve=trace,rmcp=info"]).unwrap(),
            Targets::new()
                .with_target("skillserve", LevelFilter::TRACE)
                .with_target("rmcp", LevelFilter::INFO)
        );
        for bad in ["verbose", "debg", "skillserve=loud", "info,chatty"] {
            assert!(
                matches!(
                    filter(&["--log-level", bad]),
                    Err(UsageError::LogLevel { .. })
                ),
                "{bad}"
            );
        }
        let mut env = env();
        env.log_filter = Some("verbose".into());
        assert!(parse(&[]).log_filter(&env).is_err());
        env.log_filter = Some("debug".into());
        assert_eq!(
            parse(&[]).log_filter(&env).unwrap(),
            Targets::new().with_default(LevelFilter::DEBUG)
        );
    }

    #[test]
    fn a_filter_is_levels_and_target_level_pairs() {
        let filter = |text: &str| parse_filter("SKILLSERVE_LOG", text);
        // Spaces and empty parts are ignored; levels in any case.
        let targets =
            filter(" warn , skillserve = DEBUG,,skillserve::server::watch=trace ").unwrap();
        assert_eq!(
            targets,
            Targets::new()
                .with_default(LevelFilter::WARN)
                .with_target("skillserve", LevelFilter::DEBUG)
                .with_target("skillserve::server::watch", LevelFilter::TRACE)
        );
        // The longest matching target decides; the bare level covers the rest.
        let enabled = |target, level| targets.would_enable(target, &level);
        assert!(enabled("skillserve::server::watch", tracing::Level::TRACE));
        assert!(enabled("skillserve::scan", tracing::Level::DEBUG));
        assert!(!enabled("skillserve::scan", tracing::Level::TRACE));
        assert!(enabled("gray_matter::engine", tracing::Level::WARN));
        assert!(!enabled("gray_matter::engine", tracing::Level::INFO));
        // Nothing given: nothing logged.
        assert_eq!(filter(" , ").unwrap(), Targets::new());

        let refused = |text: &str| match filter(text) {
            Err(UsageError::LogFilter { reason, .. }) => reason,
            other => panic!("{text}: {other:?}"),
        };
        for text in ["skillserve[scan]=debug", "skillserve[{path}]=debug"] {
            assert_eq!(
                refused(text),
                "span and field filters are not supported; use `level` or `target=level`"
            );
        }
        for text in ["=debug", ".hidden=info", "two words=info", "a=b=info"] {
            assert_eq!(refused(text), "invalid filter directive");
        }
        // A word that is not a level is named before anything else.
        assert!(matches!(
            filter("=debug,verbose"),
            Err(UsageError::LogLevel {
                what: "SKILLSERVE_LOG",
                ..
            })
        ));
        assert_eq!(
            UsageError::LogFilter {
                value: "=debug".into(),
                reason: "invalid filter directive".into()
            }
            .to_string(),
            "invalid log filter `=debug`: invalid filter directive"
        );
    }

    #[test]
    fn import_paths_expand_and_default_to_the_current_directory() {
        let Some(Command::Import(args)) =
            parse(&["import", "--mcp-settings", "~/mcp.json"]).command
        else {
            panic!("import parses")
        };
        let options = args.options(&env()).unwrap();
        assert_eq!(options.settings, PathBuf::from("/home/u/mcp.json"));
        assert_eq!(options.output_dir, PathBuf::from("/work/mcp-skills"));
        assert_eq!(options.timeout, Duration::from_secs(DEFAULT_TIMEOUT_SECS));
        assert!(!options.force_refresh);
        assert!(
            Cli::try_parse_from([
                "skillserve",
                "import",
                "--mcp-settings",
                "m",
                "--timeout",
                "0"
            ])
            .is_err()
        );
    }

    #[test]
    fn missing_home_is_a_warning() {
        let env = Env {
            home: Home::choose(Platform::Unix, None, None),
            cwd: "/".into(),
            ..Env::default()
        };
        let (config, warnings) = parse(&[]).config(&env).unwrap();
        assert_eq!(config.home, None);
        assert_eq!(
            warnings,
            [
                "HOME is not set, so skills in your home folders (~/.claude/skills, ...) are not served"
            ]
        );
    }
}
