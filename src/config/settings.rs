//! The effective settings: the command line, the environment and
//! `config.toml` merged (behaviour.md §17.1). Flags win over environment
//! variables, which win over the file, which wins over the defaults; each
//! value remembers where it came from, for `skillserve config`.
//!
//! The server merges again whenever `config.toml` changes, so this is here,
//! below the server, and not in `cli`: `cli` only turns `clap`'s types into
//! [`Flags`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::expand::{PathError, expand_path};
use super::file::{FILE_NAME, FileError, FileSettings, Filters, Location, Profile};
use super::{
    Config, DEFAULT_DESCRIPTION_BUDGET, DEFAULT_MAX_FILE_BYTES, DEFAULT_REFRESH_SECS, Env,
    MIN_DESCRIPTION_BUDGET, Origin, ServeOptions, absolute,
};
use crate::folders::Folders;

/// What the command line said; `None` or `false` for what it did not say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `--config FILE`.
    pub config: Option<String>,
    /// `--skills-dir DIR`, in order.
    pub skills_dirs: Vec<String>,
    /// The folders after `serve`.
    pub serve_folders: Vec<String>,
    pub project_dir: Option<String>,
    pub no_project: bool,
    pub no_user: bool,
    pub no_plugins: bool,
    pub max_file_bytes: Option<u64>,
    pub log_level: Option<String>,
    pub refresh_interval: Option<u64>,
    pub no_watch: bool,
    pub description_budget: Option<usize>,
    pub no_prompts: bool,
    pub no_resources: bool,
    pub no_usage: bool,
    /// `--http`: a server reached over HTTP has no client's project.
    pub http: bool,
}

/// The filters and client profiles of `config.toml`, and which per-client
/// settings the command line fixed for every client (flags win over
/// profiles too).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// The top level's `include`, `exclude` and `disabled`: for every client.
    pub filters: Filters,
    /// `[clients."..."]`, in file order: the first that matches a client wins.
    pub profiles: Vec<Profile>,
    pub budget_flag: bool,
    pub prompts_flag: bool,
    pub resources_flag: bool,
}

/// One effective setting, its value as `config.toml` would spell it, and
/// where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    pub key: &'static str,
    pub value: String,
    pub from: Origin,
}

/// Everything skillserve runs with.
#[derive(Clone, Debug)]
pub struct Settings {
    pub config: Config,
    pub serve: ServeOptions,
    pub rules: Rules,
    /// Where the settings file is looked for (`None` without a config folder).
    pub location: Option<Location>,
    /// Whether the file was there (and so read).
    pub file_found: bool,
    /// `log_level` of the file, for the log filter (flags and
    /// `SKILLSERVE_LOG` win over it).
    pub log_level: Option<(String, Origin)>,
    /// Each setting with its origin, in the order of the file's keys.
    pub shown: Vec<Shown>,
    /// Worth logging: no home directory, say.
    pub warnings: Vec<String>,
    /// The home folder and the variable it came from.
    pub home: super::Home,
    /// What sources' signatures must satisfy.
    pub signatures: super::SignatureSettings,
}

/// A problem with the command line, the environment or the settings file
/// that stops start-up (exit 2), or a reload while serving (kept out).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("{what} `{}` is not a directory", path.display())]
    NotADirectory { what: String, path: PathBuf },
    #[error("--description-budget must be at least {MIN_DESCRIPTION_BUDGET} characters, got {0}")]
    BudgetTooSmall(usize),
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    File(#[from] FileError),
}

/// Where the settings file is: `--config`, else `SKILLSERVE_CONFIG`, else
/// `config.toml` in the config folder (`None` when there is none).
pub fn locate(
    flags: &Flags,
    env: &Env,
    folders: &Folders,
) -> Result<Option<Location>, SettingsError> {
    if let Some(given) = &flags.config {
        return Ok(Some(Location {
            path: expand_path("--config", given, env, &env.cwd)?,
            given_by: Some("--config"),
        }));
    }
    if let Some(given) = &env.config_file {
        return Ok(Some(Location {
            path: expand_path("SKILLSERVE_CONFIG", &given.to_string_lossy(), env, &env.cwd)?,
            given_by: Some("SKILLSERVE_CONFIG"),
        }));
    }
    Ok(folders.config.as_ref().map(|dir| Location {
        path: dir.join(FILE_NAME),
        given_by: None,
    }))
}

/// The settings for `flags` and `env`, reading the settings file.
pub fn load(flags: &Flags, env: &Env) -> Result<Settings, SettingsError> {
    let folders = env.folders();
    let location = locate(flags, env, &folders)?;
    let file = match &location {
        Some(location) => super::file::load(location, env)?,
        None => None,
    };
    resolve(flags, env, location, file.as_ref())
}

/// Merges `flags`, `env` and `file` (the settings file at `location`, when
/// it was found).
pub fn resolve(
    flags: &Flags,
    env: &Env,
    location: Option<Location>,
    file: Option<&FileSettings>,
) -> Result<Settings, SettingsError> {
    let mut shown = Vec::new();
    let mut warnings = Vec::new();
    let line = |at: usize| Origin::File {
        path: file.map_or_else(|| Path::new(FILE_NAME).into(), |f| f.path.clone()),
        line: at,
    };
    // Every value is the first that is set of: flag, environment, file, default.
    macro_rules! pick {
        ($key:literal, $flag:expr, $file:expr, $default:expr, $show:expr) => {{
            let (value, from) = match ($flag, $file) {
                (Some((value, flag)), _) => (value, Origin::Flag(flag)),
                (None, Some(at)) => (at.value.clone(), line(at.line)),
                (None, None) => ($default, Origin::Default),
            };
            shown.push(Shown {
                key: $key,
                value: $show(&value),
                from,
            });
            value
        }};
    }
    let file_value = |get: fn(&FileSettings) -> Option<&super::file::At<bool>>| file.and_then(get);
    let off = |given: bool, flag: &'static str| given.then_some((false, flag));

    let custom_dirs = custom_dirs(flags, env, file, &mut shown)?;
    let project_dir = project_dir(flags, env, file, &mut shown)?;
    let user = pick!(
        "user",
        off(flags.no_user, "--no-user"),
        file_value(|f| f.user.as_ref()),
        true,
        bool::to_string
    );
    if env.home.dir.is_none() && user {
        warnings.push(format!(
            "{}, so skills in your home folders (~/.claude/skills, ...) are not served",
            env.home.why_none()
        ));
    }
    let plugins = pick!(
        "plugins",
        off(flags.no_plugins, "--no-plugins"),
        file_value(|f| f.plugins.as_ref()),
        true,
        bool::to_string
    );
    let max_file_bytes = pick!(
        "max_file_bytes",
        flags.max_file_bytes.map(|v| (v, "--max-file-bytes")),
        file.and_then(|f| f.max_file_bytes.as_ref()),
        DEFAULT_MAX_FILE_BYTES,
        u64::to_string
    );
    let log_level = file
        .and_then(|f| f.log_level.as_ref())
        .map(|at| (at.value.clone(), line(at.line)));
    let (level, from) = match (&flags.log_level, &env.log_filter, &log_level) {
        (Some(level), _, _) => (toml_string(level), Origin::Flag("--log-level")),
        (None, Some(filter), _) => (toml_string(filter), Origin::Env("SKILLSERVE_LOG")),
        (None, None, Some((level, from))) => (toml_string(level), from.clone()),
        (None, None, None) => (
            "\"info\" (server), \"warn\" (commands)".to_owned(),
            Origin::Default,
        ),
    };
    shown.push(Shown {
        key: "log_level",
        value: level,
        from,
    });
    let interval = pick!(
        "refresh_interval",
        flags.refresh_interval.map(|v| (v, "--refresh-interval")),
        file.and_then(|f| f.refresh_interval.as_ref()),
        DEFAULT_REFRESH_SECS,
        u64::to_string
    );
    let watch = pick!(
        "watch",
        off(flags.no_watch, "--no-watch"),
        file_value(|f| f.watch.as_ref()),
        true,
        bool::to_string
    );
    if let Some(budget) = flags.description_budget
        && budget < MIN_DESCRIPTION_BUDGET
    {
        return Err(SettingsError::BudgetTooSmall(budget));
    }
    let description_budget = pick!(
        "description_budget",
        flags
            .description_budget
            .map(|v| (v, "--description-budget")),
        file.and_then(|f| f.description_budget.as_ref()),
        DEFAULT_DESCRIPTION_BUDGET,
        usize::to_string
    );
    let prompts = pick!(
        "prompts",
        off(flags.no_prompts, "--no-prompts"),
        file_value(|f| f.prompts.as_ref()),
        true,
        bool::to_string
    );
    let resources = pick!(
        "resources",
        off(flags.no_resources, "--no-resources"),
        file_value(|f| f.resources.as_ref()),
        true,
        bool::to_string
    );

    let usage = pick!(
        "usage",
        off(flags.no_usage, "--no-usage"),
        file_value(|f| f.usage.as_ref()),
        true,
        bool::to_string
    );

    let under_home = |var: &Option<std::ffi::OsString>, default: &str| {
        var.as_deref()
            .map(|dir| absolute(dir.as_ref(), &env.cwd))
            .or_else(|| env.home.dir.as_ref().map(|home| home.join(default)))
    };
    let config = Config {
        custom_dirs,
        project_dir,
        home: env.home.dir.clone(),
        user,
        claude_config_dir: under_home(&env.claude_config_dir, ".claude"),
        codex_home: under_home(&env.codex_home, ".codex"),
        plugins,
        max_file_bytes,
        folders: env.folders(),
    };
    let serve = ServeOptions {
        description_budget,
        refresh_interval: (interval > 0).then(|| Duration::from_secs(interval)),
        watch,
        prompts,
        resources,
        usage,
        // Made by `cli` from its flags: they have no keys in the file.
        http: None,
        auto_update: file.map(|f| f.auto_update.clone()).unwrap_or_default(),
    };
    let signatures = signatures(file, &mut shown);
    let rules = Rules {
        filters: file.map(|f| f.filters.clone()).unwrap_or_default(),
        profiles: file.map(|f| f.profiles.clone()).unwrap_or_default(),
        budget_flag: flags.description_budget.is_some(),
        prompts_flag: flags.no_prompts,
        resources_flag: flags.no_resources,
    };
    Ok(Settings {
        config,
        serve,
        rules,
        file_found: file.is_some(),
        location,
        log_level,
        shown,
        warnings,
        home: env.home.clone(),
        signatures,
    })
}

/// The signature settings of the file (they have no flags: `add` records
/// its own per source).
fn signatures(file: Option<&FileSettings>, shown: &mut Vec<Shown>) -> super::SignatureSettings {
    let mut out = super::SignatureSettings::default();
    let Some(file) = file else {
        return out;
    };
    let at = |line: usize| Origin::File {
        path: file.path.clone(),
        line,
    };
    for (key, value) in [
        ("trusted_signers", &file.trusted_signers),
        ("revoked_signers", &file.revoked_signers),
    ] {
        if let Some(value) = value {
            let from = at(value.line);
            shown.push(Shown {
                key,
                value: toml_string(&value.value.display().to_string()),
                from: from.clone(),
            });
            let setting = Some((value.value.clone(), from.to_string()));
            if key == "trusted_signers" {
                out.trusted_signers = setting;
            } else {
                out.revoked_signers = setting;
            }
        }
    }
    if let Some(require) = &file.require_signature {
        let from = at(require.line);
        shown.push(Shown {
            key: "require_signature",
            value: require.value.to_string(),
            from: from.clone(),
        });
        out.require_signature = require.value.then(|| from.to_string());
    }
    out
}

/// `--skills-dir`, the folders after `serve`, `SKILLSERVE_SKILLS_DIRS`,
/// then `skills_dirs` of the file, expanded; one that exists but is not a
/// folder stops start-up.
fn custom_dirs(
    flags: &Flags,
    env: &Env,
    file: Option<&FileSettings>,
    shown: &mut Vec<Shown>,
) -> Result<Vec<PathBuf>, SettingsError> {
    let mut dirs: Vec<(PathBuf, Origin)> = Vec::new();
    for dir in &flags.skills_dirs {
        dirs.push((
            expand_path("--skills-dir", dir, env, &env.cwd)?,
            Origin::Flag("--skills-dir"),
        ));
    }
    for dir in &flags.serve_folders {
        dirs.push((
            expand_path("skills folder", dir, env, &env.cwd)?,
            Origin::Flag("serve"),
        ));
    }
    if let Some(list) = &env.skills_dirs {
        for entry in std::env::split_paths(list) {
            if entry.as_os_str().is_empty() {
                continue;
            }
            let entry = entry.to_string_lossy().into_owned();
            let dir = expand_path("SKILLSERVE_SKILLS_DIRS entry", &entry, env, &env.cwd)?;
            dirs.push((dir, Origin::Env("SKILLSERVE_SKILLS_DIRS")));
        }
    }
    if let Some(file) = file {
        for at in &file.skills_dirs {
            let from = Origin::File {
                path: file.path.clone(),
                line: at.line,
            };
            dirs.push((at.value.clone(), from));
        }
    }
    if let Some((dir, from)) = dirs.iter().find(|(dir, _)| dir.exists() && !dir.is_dir()) {
        return Err(match (from, file) {
            (Origin::File { line, .. }, Some(file)) => SettingsError::File(FileError::Invalid {
                path: file.path.to_path_buf(),
                line: *line,
                message: format!("`skills_dirs` `{}` is not a directory", dir.display()),
            }),
            _ => SettingsError::NotADirectory {
                what: "skills folder".to_owned(),
                path: dir.clone(),
            },
        });
    }
    if dirs.is_empty() {
        shown.push(Shown {
            key: "skills_dirs",
            value: "[]".to_owned(),
            from: Origin::Default,
        });
    }
    for (dir, from) in &dirs {
        shown.push(Shown {
            key: "skills_dirs",
            value: toml_string(&dir.to_string_lossy()),
            from: from.clone(),
        });
    }
    Ok(dirs.into_iter().map(|(dir, _)| dir).collect())
}

/// `--project-dir` (a folder), else `$CLAUDE_PROJECT_DIR`, else the file's
/// `project_dir`, else the current directory; `None` with `--no-project`,
/// `project = false` or `--http` (a server reached over HTTP has no
/// client's project to look in).
fn project_dir(
    flags: &Flags,
    env: &Env,
    file: Option<&FileSettings>,
    shown: &mut Vec<Shown>,
) -> Result<Option<PathBuf>, SettingsError> {
    let file_line = |line: usize| Origin::File {
        path: file.map_or_else(|| Path::new(FILE_NAME).into(), |f| f.path.clone()),
        line,
    };
    let (dir, from) = if flags.no_project {
        (None, Origin::Flag("--no-project"))
    } else if flags.http {
        (None, Origin::Flag("--http"))
    } else if let Some(dir) = &flags.project_dir {
        let dir = expand_path("--project-dir", dir, env, &env.cwd)?;
        if !dir.is_dir() {
            return Err(SettingsError::NotADirectory {
                what: "--project-dir".to_owned(),
                path: dir,
            });
        }
        (Some(dir), Origin::Flag("--project-dir"))
    } else if let Some(off) = file.and_then(|f| f.project.as_ref()).filter(|at| !at.value) {
        (None, file_line(off.line))
    } else if let Some(dir) = &env.claude_project_dir {
        (
            Some(absolute(dir.as_ref(), &env.cwd)),
            Origin::Env("CLAUDE_PROJECT_DIR"),
        )
    } else if let Some(at) = file.and_then(|f| f.project_dir.as_ref()) {
        (Some(at.value.clone()), file_line(at.line))
    } else {
        (Some(env.cwd.clone()), Origin::Default)
    };
    let project_from = match (&dir, file.and_then(|f| f.project.as_ref())) {
        (None, _) => from.clone(),
        (Some(_), Some(at)) => file_line(at.line),
        (Some(_), None) => Origin::Default,
    };
    shown.push(Shown {
        key: "project",
        value: dir.is_some().to_string(),
        from: project_from,
    });
    shown.push(Shown {
        key: "project_dir",
        value: dir
            .as_ref()
            .map_or("(none)".to_owned(), |d| toml_string(&d.to_string_lossy())),
        from,
    });
    Ok(dir)
}

/// `text` as a TOML basic string.
pub fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::file;

    fn file_of(text: &str) -> FileSettings {
        file::parse(text, Path::new("/cfg/config.toml"), &Env::for_tests()).unwrap()
    }

    fn show<'a>(settings: &'a Settings, key: &str) -> Vec<(&'a str, String)> {
        settings
            .shown
            .iter()
            .filter(|s| s.key == key)
            .map(|s| (s.value.as_str(), s.from.to_string()))
            .collect()
    }

    #[test]
    fn flags_win_over_the_environment_which_wins_over_the_file() {
        let file = file_of(
            "skills_dirs = [\"/f\"]\nuser = false\nmax_file_bytes = 10\ndescription_budget = 900\nproject_dir = \"/\"\n",
        );
        let mut env = Env::for_tests();
        env.skills_dirs = Some("/e".into());
        env.claude_project_dir = Some("/proj".into());
        let flags = Flags {
            skills_dirs: vec!["/a".into()],
            max_file_bytes: Some(20),
            ..Flags::default()
        };
        let settings = resolve(&flags, &env, None, Some(&file)).unwrap();
        assert_eq!(
            settings.config.custom_dirs,
            [PathBuf::from("/a"), "/e".into(), "/f".into()]
        );
        assert_eq!(
            show(&settings, "skills_dirs"),
            [
                ("\"/a\"", "--skills-dir".to_owned()),
                ("\"/e\"", "$SKILLSERVE_SKILLS_DIRS".to_owned()),
                ("\"/f\"", "config.toml:1".to_owned())
            ]
        );
        assert!(!settings.config.user);
        assert_eq!(
            show(&settings, "user"),
            [("false", "config.toml:2".to_owned())]
        );
        assert_eq!(settings.config.max_file_bytes, 20);
        assert_eq!(settings.serve.description_budget, 900);
        assert_eq!(settings.config.project_dir, Some("/proj".into()));
        assert_eq!(
            show(&settings, "project_dir"),
            [("\"/proj\"", "$CLAUDE_PROJECT_DIR".to_owned())]
        );
        assert_eq!(show(&settings, "watch"), [("true", "default".to_owned())]);
    }

    #[test]
    fn project_false_in_the_file_turns_the_project_off_unless_a_flag_names_one() {
        let file = file_of("project = false\n");
        let settings = resolve(&Flags::default(), &Env::for_tests(), None, Some(&file)).unwrap();
        assert_eq!(settings.config.project_dir, None);
        let flags = Flags {
            project_dir: Some("/".into()),
            ..Flags::default()
        };
        let settings = resolve(&flags, &Env::for_tests(), None, Some(&file)).unwrap();
        assert_eq!(settings.config.project_dir, Some("/".into()));
    }

    #[test]
    fn the_file_is_found_by_flag_variable_or_config_folder() {
        let folders = Folders {
            config: Some("/home/u/.config/skillserve".into()),
            ..Folders::default()
        };
        let mut env = Env::for_tests();
        let default = locate(&Flags::default(), &env, &folders).unwrap().unwrap();
        assert_eq!(
            default.path,
            Path::new("/home/u/.config/skillserve/config.toml")
        );
        assert_eq!(default.given_by, None);
        env.config_file = Some("~/s.toml".into());
        let by_env = locate(&Flags::default(), &env, &folders).unwrap().unwrap();
        assert_eq!(
            (by_env.path.as_path(), by_env.given_by),
            (Path::new("/home/u/s.toml"), Some("SKILLSERVE_CONFIG"))
        );
        let flags = Flags {
            config: Some("c.toml".into()),
            ..Flags::default()
        };
        let by_flag = locate(&flags, &env, &folders).unwrap().unwrap();
        assert_eq!(
            (by_flag.path.as_path(), by_flag.given_by),
            (Path::new("/work/c.toml"), Some("--config"))
        );
    }
}
