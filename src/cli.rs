//! The command line: flags and environment variables, turned into a
//! [`Config`] (behaviour.md §8). Nothing else in the crate sees `clap` types.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use tracing_subscriber::filter::{LevelFilter, Targets};

use crate::commands::{Switch, ToggleRequest};
use crate::config::expand::{PathError, expand_path};
use crate::config::log::{self, FilterError};
use crate::config::settings;
use crate::config::{
    Config, DEFAULT_HTTP_ADDR, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_SESSIONS,
    DEFAULT_OAUTH_REFETCH_SECS, DEFAULT_SESSION_IDLE_SECS, Env, Flags, HttpOptions,
    MAX_REFRESH_SECS, OAuth, Origin, Settings, SettingsError,
};
use crate::import::invoke::InvokeOptions;
use crate::import::{DEFAULT_OUTPUT_DIR, DEFAULT_TIMEOUT_SECS, ImportOptions};
use crate::lock::{Access, HeaderTemplate, Trust};
use crate::program::SearchEnv;
use crate::sources::{AddOptions, UpdateOptions};

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
`check` let you see what the server would serve, and why; `config` shows the
settings in use and where each came from (flags, environment, config.toml).";

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

Settings: flags win over environment variables, which win over config.toml
(~/.config/skillserve/config.toml, %APPDATA%\\skillserve\\config.toml on Windows;
--config or SKILLSERVE_CONFIG name another). `skillserve config` shows them.

Examples:
  skillserve list                     what the server would offer here
  skillserve list --client cursor-vscode
                                      what Cursor would be offered (it loads some folders itself)
  skillserve disable pdf-old          hide a skill from every client (edits config.toml)
  skillserve show pdf                 exactly what a `skill` call with \"pdf\" returns
  skillserve show pdf references/forms.md
                                      the same for one of the skill's files
  skillserve check                    find broken or shadowed skills
  skillserve check --security         also scan skills for hidden text, piped
                                      downloads, credential access, ...
  skillserve trust deploy             approve the quarantined project skill
                                      `deploy` as it is now
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
    /// by [`Cli::read`] and refused by [`Cli::settings`].
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
        /// Also list skills hidden by a same-named skill of higher precedence,
        /// by config.toml's filters or because the client loads them itself,
        /// with the reason.
        #[arg(long, conflicts_with = "description")]
        all: bool,
        /// Print the `skill` tool's description exactly as a client receives
        /// it (in the budget of --description-budget).
        #[arg(long, conflicts_with = "instructions")]
        description: bool,
        /// Print the server's instructions exactly as a client receives them
        /// (with the catalog when it goes there for that client).
        #[arg(long, conflicts_with_all = ["json", "all"])]
        instructions: bool,
        /// What the client that calls itself NAME (its `clientInfo.name`,
        /// e.g. claude-code, codex-mcp-client, cursor-vscode) would see.
        #[arg(long, value_name = "NAME")]
        client: Option<String>,
    },
    /// Print exactly what a `skill` call with NAME (and FILE) returns (exit 1 on error).
    Show {
        /// The skill name, as a model would type it.
        name: String,
        /// A file inside the skill's folder (e.g. references/forms.md); a folder lists its files.
        file: Option<String>,
        /// Answer as to the client that calls itself CLIENT.
        #[arg(long, value_name = "CLIENT")]
        client: Option<String>,
    },
    /// Print the settings in use and where each came from, and skillserve's folders
    /// (server options given here show what they would change).
    Config,
    /// Which skills are used: the most used, those not used lately (with where each
    /// lives), loads per client and per source, from the usage file of the data folder.
    Stats {
        /// The last N days, today included (UTC days; usage is kept 90 days).
        #[arg(long, value_name = "N", default_value_t = crate::commands::STATS_DEFAULT_DAYS,
              value_parser = clap::value_parser!(u32).range(
                  i64::from(*crate::commands::STATS_DAYS.start())..=i64::from(*crate::commands::STATS_DAYS.end())))]
        days: u32,
        /// Only the loads of clients whose names match GLOB (e.g. "claude*").
        #[arg(long, value_name = "GLOB")]
        client: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Hide the skill NAME from every client (or from --client GLOB's): adds it to
    /// `disabled` in config.toml, keeping the file's comments.
    Disable(ToggleArgs),
    /// Serve the skill NAME again: removes it from `disabled` in config.toml.
    Enable(ToggleArgs),
    /// Report broken files, shadowed names and other problems (exit 1 on errors).
    Check {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also scan every skill's files for what malicious skills do (hidden
        /// text, downloads piped into a shell, credentials, ...).
        #[arg(long)]
        security: bool,
    },
    /// Approve a quarantined skill as its files are now, so that it is served
    /// (asks first; without a terminal it needs --yes).
    Trust {
        /// The quarantined skill's name.
        #[arg(required_unless_present = "list", conflicts_with = "list")]
        name: Option<String>,
        /// Approve without asking.
        #[arg(long, short = 'y')]
        yes: bool,
        /// List the approvals, and whether each still matches its skill.
        #[arg(long)]
        list: bool,
    },
    /// Withdraw the approvals of a skill: it is quarantined again.
    Untrust {
        /// The skill's name, as `trust` recorded it.
        name: String,
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
        /// Remove it from the project's skills.lock instead of your sources.lock.
        #[arg(long)]
        project: bool,
    },
    /// List the installed sources: id, kind, URL, ref, commit, skills, signer, last update.
    Sources {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// List the project's skills.lock instead of your sources.lock.
        #[arg(long)]
        project: bool,
    },
    /// Install exactly what the locks pin (your sources.lock, and the project's skills.lock),
    /// fetching only what the store lacks.
    Sync(SyncArgs),
    /// Open the skills app in your browser: a loopback server with a one-time token; it stops a minute after the page is closed, or on Ctrl-C.
    Ui {
        /// Only print the page's address (with its token) instead of opening the browser.
        #[arg(long)]
        no_open: bool,
    },
    /// Write a folder of skills as an Agent Skills discovery index for a static web host.
    Publish {
        /// The folder that holds the skills (like a --skills-dir).
        dir: String,
        /// Where to write `.well-known/agent-skills/` (index.json and one artifact per skill).
        #[arg(long, value_name = "OUT")]
        out: String,
        /// Sign index.json with this SSH key (as `ssh-keygen -Y sign -f KEY` takes it) into
        /// index.json.sig.
        #[arg(long, value_name = "KEY")]
        sign: Option<String>,
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
        /// An admin token: it may also change the catalog (the skills app's actions), not only read it.
        #[arg(long)]
        admin: bool,
    },
}

impl TokenCommand {
    /// The token file of `token new`: `--file`, else `tokens` in the config
    /// folder.
    pub fn file(&self, env: &Env, config: &Config) -> Result<PathBuf, UsageError> {
        let TokenCommand::New { file, .. } = self;
        match file {
            Some(file) => Ok(expand_path("--file", file, env, &env.cwd)?),
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
            Command::Config => Some("config"),
            Command::Stats { .. } => Some("stats"),
            Command::Disable(_) => Some("disable"),
            Command::Enable(_) => Some("enable"),
            Command::Trust { .. } => Some("trust"),
            Command::Untrust { .. } => Some("untrust"),
            Command::Import(_) => Some("import"),
            Command::Invoke(_) => Some("invoke"),
            Command::Add(_) => Some("add"),
            Command::Update(_) => Some("update"),
            Command::Remove { .. } => Some("remove"),
            Command::Sources { .. } => Some("sources"),
            Command::Sync(_) => Some("sync"),
            Command::Ui { .. } => Some("ui"),
            Command::Publish { .. } => Some("publish"),
            Command::Token(_) => Some("token"),
        }
    }
}

/// The arguments of `disable` and `enable`.
#[derive(Debug, Args)]
pub struct ToggleArgs {
    /// The skill's full name, as `skillserve list` shows it.
    pub name: String,
    /// Edit the profile `[clients."GLOB"]` (created if needed) instead of the
    /// settings for every client.
    #[arg(long, value_name = "GLOB")]
    pub client: Option<String>,
}

impl ToggleArgs {
    /// The `enable` (`Switch::Enable`) or `disable` these arguments ask for.
    pub fn request(&self, switch: Switch) -> ToggleRequest<'_> {
        ToggleRequest {
            switch,
            name: &self.name,
            client: self.client.as_deref(),
        }
    }
}

/// Options every command understands.
#[derive(Debug, Args)]
pub struct SharedArgs {
    /// Read settings from FILE [default: $SKILLSERVE_CONFIG, else config.toml in
    /// skillserve's config folder]; a file named here must exist.
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<String>,

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

    /// Skip SKILL.md files larger than N bytes (and show no other skill file larger than N) [default: 1048576].
    #[arg(long, value_name = "N", global = true)]
    pub max_file_bytes: Option<u64>,

    /// Log level (error, warn, info, debug, trace) or a filter like `skillserve=debug`
    /// [default: $SKILLSERVE_LOG, else log_level of config.toml, else info for the
    /// server and warn for commands].
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

    /// Do not record which skills are used (the usage file in the data folder is left as it is).
    #[arg(long, global = true)]
    pub no_usage: bool,

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

    /// On a token signed with an unknown key, fetch the issuer's keys again at most every SECS seconds [default: 30].
    #[arg(
        long,
        global = true,
        value_name = "SECS",
        requires = "oauth_issuer",
        value_parser = clap::value_parser!(u64).range(1..=3600),
        help_heading = "HTTP server options"
    )]
    pub oauth_refetch_interval: Option<u64>,

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

    /// At most N open connections; at the cap, a new one closes the connection idle or slow to send its request longest [default: 4096].
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(2..=1_000_000), help_heading = "HTTP server options")]
    pub max_connections: Option<u64>,

    /// Answer requests on N threads [default: the CPUs this process may use].
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024), help_heading = "HTTP server options")]
    pub threads: Option<u64>,

    /// After SIGTERM, go on answering for SECS seconds while /healthz says "draining", so that a load balancer's health checks take this replica out before it stops accepting [default: 0].
    #[arg(long, global = true, value_name = "SECS", value_parser = clap::value_parser!(u64).range(0..=300), help_heading = "HTTP server options")]
    pub drain: Option<u64>,
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
        (serve.max_connections.is_some(), "--max-connections"),
        (serve.threads.is_some(), "--threads"),
        (serve.drain.is_some(), "--drain"),
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

/// `--threads`' default: the CPUs this process may run on (its affinity
/// mask and cgroup quota, as the standard library counts them).
fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
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

    /// Write the project's skills.lock (committed for everyone who clones it) instead of your
    /// sources.lock.
    #[arg(long)]
    pub project: bool,

    /// The allowed-signers file (OpenSSH's format) that says whose SSH signatures count
    /// for this source [default: trusted_signers of config.toml, else git's
    /// gpg.ssh.allowedSignersFile].
    #[arg(long, value_name = "FILE")]
    pub trusted_signers: Option<String>,

    /// Revoked SSH keys (public keys, one a line, or a KRL) for this source.
    #[arg(long, value_name = "FILE")]
    pub revoked_signers: Option<String>,

    /// Refuse the source, now and on every update and sync, unless it is signed by a
    /// trusted signer.
    #[arg(long)]
    pub require_signature: bool,

    /// An HTTP header for a private index, `NAME: VALUE`, where VALUE names an environment
    /// variable read when fetching (`Authorization: Bearer $SKILLS_TOKEN`); repeatable.
    #[arg(long = "header", value_name = "NAME:VALUE")]
    pub headers: Vec<String>,

    /// Send the index host's login and password from ~/.netrc (or $NETRC).
    #[arg(long)]
    pub netrc: bool,
}

impl AddArgs {
    /// The options, paths expanded and absolute, headers checked.
    pub fn options(&self, env: &Env) -> Result<AddOptions, UsageError> {
        let file =
            |what: &'static str, value: &Option<String>| -> Result<Option<String>, UsageError> {
                value
                    .as_deref()
                    .map(|v| Ok(command_path(what, v, env)?.to_string_lossy().into_owned()))
                    .transpose()
            };
        let headers = self
            .headers
            .iter()
            .map(|h| HeaderTemplate::parse(h).map_err(|err| UsageError::Header(err.to_string())))
            .collect::<Result<_, _>>()?;
        Ok(AddOptions {
            source: self.source.clone(),
            id: self.id.clone(),
            reference: self.reference.clone(),
            subdir: self.subdir.clone(),
            skills: self.skills.clone(),
            allow_risky: self.allow_risky,
            trust: Trust {
                trusted_signers: file("--trusted-signers", &self.trusted_signers)?,
                revoked_signers: file("--revoked-signers", &self.revoked_signers)?,
                require_signature: self.require_signature,
            },
            access: Access {
                headers,
                netrc: self.netrc,
            },
        })
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

    /// Install a version signed by another key than the one recorded (its publisher
    /// changed keys).
    #[arg(long, conflicts_with = "check")]
    pub allow_signer_change: bool,

    /// Update the project's skills.lock instead of your sources.lock.
    #[arg(long)]
    pub project: bool,
}

impl UpdateArgs {
    pub fn options(&self) -> UpdateOptions {
        UpdateOptions {
            ids: self.ids.clone(),
            check: self.check,
            allow_risky: self.allow_risky,
            allow_signer_change: self.allow_signer_change,
        }
    }
}

/// Options of `sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Change nothing; exit 10 when the store and the locks differ, 0 when not.
    #[arg(long)]
    pub check: bool,

    /// Also remove store entries that no lock names any more.
    #[arg(long)]
    pub prune: bool,

    /// Only the project's skills.lock, not your sources.lock.
    #[arg(long)]
    pub project: bool,
}

/// Expands `~` and `$VAR` in the path of a command's argument, made absolute.
pub fn command_path(what: &'static str, value: &str, env: &Env) -> Result<PathBuf, UsageError> {
    Ok(expand_path(what, value, env, &env.cwd)?)
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
            settings: expand_path("--mcp-settings", &self.mcp_settings, env, &env.cwd)?,
            output_dir: expand_path("--output-dir", &self.output_dir, env, &env.cwd)?,
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
            settings: expand_path("--mcp-settings", &self.mcp_settings, env, &env.cwd)?,
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
    #[error("{flag} only applies to the server, not to `{command}`")]
    ServeFlagWithCommand { flag: String, command: &'static str },
    #[error(
        "{what} `{value}` is not a log level: use one of off, error, warn, info, debug, trace, or a filter such as `skillserve=debug,rmcp=info`"
    )]
    LogLevel { what: &'static str, value: String },
    #[error("invalid log filter `{value}`: {reason}")]
    LogFilter { value: String, reason: String },
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Path(#[from] PathError),
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
    #[error("--header {0}")]
    Header(String),
}

impl Cli {
    /// Parses `args` (the first is the program name); clap prints help,
    /// the version or a usage error and exits. Serve flags given with
    /// another command are noted for [`Cli::settings`] to refuse: which
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
        // `config` shows what serve flags would change, so it takes them.
        let shows_settings = matches!(cli.command, Some(Command::Config));
        if let Some(command) = cli.command.as_ref().and_then(Command::name_if_not_serve)
            && !shows_settings
        {
            let serve_flags = ServeArgs::augment_args(clap::Command::new("serve"));
            let renders_description = matches!(
                cli.command,
                Some(
                    Command::List {
                        description: true,
                        ..
                    } | Command::List {
                        instructions: true,
                        ..
                    }
                )
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

    /// What the command line said, for merging with the environment and
    /// the settings file.
    pub fn flags(&self) -> Flags {
        let (shared, serve) = (&self.shared, &self.serve);
        Flags {
            config: shared.config.clone(),
            skills_dirs: shared.skills_dirs.clone(),
            serve_folders: match &self.command {
                Some(Command::Serve(serve)) => serve.folders.clone(),
                _ => Vec::new(),
            },
            project_dir: shared.project_dir.clone(),
            no_project: shared.no_project,
            no_user: shared.no_user,
            no_plugins: shared.no_plugins,
            max_file_bytes: shared.max_file_bytes,
            log_level: shared.log_level.clone(),
            refresh_interval: serve.refresh_interval,
            no_watch: serve.no_watch,
            description_budget: serve.description_budget,
            no_prompts: serve.no_prompts,
            no_resources: serve.no_resources,
            no_usage: serve.no_usage,
            http: serve.http.is_some(),
        }
    }

    /// The settings: flags, then the environment, then the settings file.
    /// A serve flag given with another command is refused here.
    pub fn settings(&self, env: &Env) -> Result<Settings, UsageError> {
        if let Some((flag, command)) = &self.misplaced_serve_flag {
            return Err(UsageError::ServeFlagWithCommand {
                flag: flag.clone(),
                command,
            });
        }
        let mut settings = settings::load(&self.flags(), env)?;
        settings.serve.http = self.http_options(env)?;
        Ok(settings)
    }

    /// `--http`'s options, paths expanded against `env` (`None` without
    /// `--http`). A non-loopback address without authentication is refused
    /// unless `--insecure-no-auth`.
    fn http_options(&self, env: &Env) -> Result<Option<HttpOptions>, UsageError> {
        let serve = &self.serve;
        let Some(addr) = &serve.http else {
            return match http_only_flag(serve) {
                Some(flag) => Err(UsageError::NeedsHttp(flag)),
                None => Ok(None),
            };
        };
        let addr = parse_addr(addr)?;
        let tokens = match &serve.auth_tokens {
            Some(file) => {
                let path = expand_path("--auth-tokens", file, env, &env.cwd)?;
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
                refetch_interval: Duration::from_secs(
                    serve
                        .oauth_refetch_interval
                        .unwrap_or(DEFAULT_OAUTH_REFETCH_SECS),
                ),
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
            max_connections: serve
                .max_connections
                .map_or(DEFAULT_MAX_CONNECTIONS, |n| n as usize),
            launch: None,
            threads: serve.threads.map_or_else(default_threads, |n| n as usize),
            drain: Duration::from_secs(serve.drain.unwrap_or(0)),
        };
        if !addr.ip().is_loopback() && !http.authenticates() && !serve.insecure_no_auth {
            return Err(UsageError::NoAuth(addr));
        }
        Ok(Some(http))
    }

    /// The `tracing` filter for the log: `--log-level` (a bare level applies
    /// to skillserve, dependencies stay at `warn`), else `SKILLSERVE_LOG`,
    /// else `log_level` of the settings file (`file_level`), else `info` for
    /// skillserve in the server and `warn` for commands.
    pub fn log_filter(
        &self,
        env: &Env,
        file_level: Option<&(String, Origin)>,
    ) -> Result<Targets, UsageError> {
        let given = match (&self.shared.log_level, &env.log_filter, file_level) {
            (Some(value), _, _) => Some(("--log-level", value)),
            (None, Some(filter), _) => Some(("SKILLSERVE_LOG", filter)),
            (None, None, Some((level, _))) => Some(("log_level", level)),
            (None, None, None) => None,
        };
        if let Some((what, value)) = given {
            if what != "SKILLSERVE_LOG"
                && let Some(level) = log::log_level(value)
            {
                return Ok(Targets::new()
                    .with_default(LevelFilter::WARN)
                    .with_target("skillserve", level));
            }
            return parse_filter(what, value);
        }
        let serving = matches!(
            self.command,
            None | Some(Command::Serve(_) | Command::Ui { .. })
        );
        let quiet = Targets::new().with_default(LevelFilter::WARN);
        Ok(if serving {
            quiet.with_target("skillserve", LevelFilter::INFO)
        } else {
            quiet
        })
    }
}

/// [`log::log_filter`], its refusal named after where the filter came from.
fn parse_filter(what: &'static str, filter: &str) -> Result<Targets, UsageError> {
    log::log_filter(filter).map_err(|refusal| match refusal {
        FilterError::NotALevel => UsageError::LogLevel {
            what,
            value: filter.to_owned(),
        },
        FilterError::Invalid(reason) => UsageError::LogFilter {
            value: filter.to_owned(),
            reason: reason.to_owned(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Home;
    use crate::config::ServeOptions;
    use crate::platform::Platform;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_read(std::iter::once("skillserve").chain(args.iter().copied())).unwrap()
    }

    /// The settings of `cli` without a settings file (unit tests read no disk).
    fn resolved(cli: &Cli, env: &Env) -> Result<Settings, UsageError> {
        if let Some((flag, command)) = &cli.misplaced_serve_flag {
            return Err(UsageError::ServeFlagWithCommand {
                flag: flag.clone(),
                command,
            });
        }
        Ok(settings::resolve(&cli.flags(), env, None, None)?)
    }

    fn config(args: &[&str], env: &Env) -> Result<Config, UsageError> {
        resolved(&parse(args), env).map(|s| s.config)
    }

    fn serve(args: &[&str]) -> Result<ServeOptions, UsageError> {
        resolved(&parse(args), &Env::for_tests()).map(|s| s.serve)
    }

    #[test]
    fn tilde_and_relative_paths_expand() {
        let config = config(
            &["--skills-dir", "~/s", "--skills-dir", "rel"],
            &Env::for_tests(),
        )
        .unwrap();
        assert_eq!(
            config.custom_dirs,
            vec![PathBuf::from("/home/u/s"), PathBuf::from("/work/rel")]
        );
    }

    #[test]
    fn unset_variable_is_an_error_naming_it() {
        let err = config(
            &["--skills-dir", "$SKILLSERVE_TEST_SURELY_UNSET/x"],
            &Env::for_tests(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--skills-dir `$SKILLSERVE_TEST_SURELY_UNSET/x`: environment variable SKILLSERVE_TEST_SURELY_UNSET is not set"
        );
    }

    #[test]
    fn serve_takes_skills_folders_as_arguments_after_the_flags() {
        let mut env = Env::for_tests();
        env.skills_dirs = Some("/from-env".into());
        let config = config(&["--skills-dir", "/flag", "serve", "/a", "~/b c"], &env).unwrap();
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
        assert!(!serve(&["serve", "list", "--no-watch"]).unwrap().watch);
    }

    #[test]
    fn env_list_follows_flags() {
        let mut env = Env::for_tests();
        env.skills_dirs = Some(std::env::join_paths(["/a", "~/b"]).unwrap());
        let config = config(&["--skills-dir", "/first"], &env).unwrap();
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
        let mut env = Env::for_tests();
        assert_eq!(config(&[], &env).unwrap().project_dir, Some("/work".into()));
        env.claude_project_dir = Some("/proj".into());
        assert_eq!(config(&[], &env).unwrap().project_dir, Some("/proj".into()));
        assert_eq!(config(&["--no-project"], &env).unwrap().project_dir, None);
    }

    #[test]
    fn serve_options_after_the_subcommand_win() {
        let options = serve(&[
            "--refresh-interval",
            "5",
            "serve",
            "--refresh-interval",
            "0",
            "--no-watch",
        ])
        .unwrap();
        assert_eq!(options.refresh_interval, None);
        assert!(!options.watch);
        assert_eq!(
            serve(&["--refresh-interval", "5"])
                .unwrap()
                .refresh_interval,
            Some(Duration::from_secs(5))
        );
    }

    #[test]
    fn tiny_budget_is_refused() {
        assert!(matches!(
            serve(&["--description-budget", "10"]),
            Err(UsageError::Settings(SettingsError::BudgetTooSmall(10)))
        ));
    }

    #[test]
    fn empty_paths_and_tilde_without_home_are_errors() {
        assert!(matches!(
            config(&["--skills-dir", ""], &Env::for_tests()),
            Err(UsageError::Settings(SettingsError::Path(
                PathError::EmptyPath { .. }
            )))
        ));
        let no_home = Env {
            home: Home::choose(Platform::Unix, None, None),
            cwd: "/".into(),
            ..Env::default()
        };
        assert_eq!(
            config(&["--skills-dir", "~/skills"], &no_home)
                .unwrap_err()
                .to_string(),
            "--skills-dir `~/skills` starts with `~`, but there is no home folder: HOME is not set"
        );
    }

    #[test]
    fn serve_flags_are_refused_with_other_commands() {
        let err = serve(&["--no-watch", "list"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--no-watch only applies to the server, not to `list`"
        );
        let err = serve(&["check", "--no-prompts"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--no-prompts only applies to the server, not to `check`"
        );
        let err = serve(&["list", "--description-budget", "500"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--description-budget only applies to the server, not to `list`"
        );
        let listed = serve(&["list", "--description", "--description-budget", "500"]).unwrap();
        assert_eq!(listed.description_budget, 500);
        assert!(serve(&["serve", "--no-resources"]).is_ok());
        assert!(
            Cli::try_parse_from(["skillserve", "--refresh-interval", "18446744073709551615"])
                .is_err()
        );
    }

    #[test]
    fn log_levels_and_filters_are_checked() {
        let filter = |args: &[&str]| parse(args).log_filter(&Env::for_tests(), None);
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
        let file = ("debug".to_owned(), Origin::Default);
        assert_eq!(
            parse(&[])
                .log_filter(&Env::for_tests(), Some(&file))
                .unwrap(),
            Targets::new()
                .with_default(LevelFilter::WARN)
                .with_target("skillserve", LevelFilter::DEBUG)
        );
        let mut env = Env::for_tests();
        env.log_filter = Some("verbose".into());
        assert!(parse(&[]).log_filter(&env, Some(&file)).is_err());
        env.log_filter = Some("debug".into());
        assert_eq!(
            parse(&[]).log_filter(&env, None).unwrap(),
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
        let options = args.options(&Env::for_tests()).unwrap();
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
        let settings = resolved(&parse(&[]), &env).unwrap();
        assert_eq!(settings.config.home, None);
        assert_eq!(
            settings.warnings,
            [
                "HOME is not set, so skills in your home folders (~/.claude/skills, ...) are not served"
            ]
        );
    }
}
