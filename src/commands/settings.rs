//! `skillserve config` (the settings in use and where each came from) and
//! `skillserve enable` / `disable` (one name in a `disabled` list of
//! `config.toml`), behaviour.md §17.1 and §17.2.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::config::edit::{self, Change};
use crate::config::file::{Filters, quoted};
use crate::config::native;
use crate::config::settings::toml_string;
use crate::config::{Origin, Settings, SettingsError};
use crate::exit_codes::ExitCode;
use crate::profiles::{Profiles, Verdict};
use crate::snapshot::{self, Snapshot};
use crate::text::{printable, printable_path};

/// Width of the key column.
const KEY_WIDTH: usize = 20;
/// Width of the value column (longer values push the origin further).
const VALUE_WIDTH: usize = 28;

/// `skillserve config`: the settings file, skillserve's folders, every
/// setting with its origin, the filters, the client profiles and the
/// built-in profiles of clients that load skills folders themselves.
pub fn config(settings: &Settings, out: &mut dyn Write) -> io::Result<ExitCode> {
    let folders = &settings.config.folders;
    let file = match &settings.location {
        None => format!(
            "none: no config folder ({}); name one with --config",
            settings.home.why_none()
        ),
        Some(location) => {
            let state = match (settings.file_found, location.given_by) {
                (true, Some(by)) => format!("named by {by}"),
                (true, None) => "found".to_owned(),
                (false, _) => {
                    "not there: every setting is a flag's, a variable's or the default".to_owned()
                }
            };
            format!("{} ({state})", location.path.display())
        }
    };
    let folder = |path: &Option<std::path::PathBuf>, from: Option<&str>| match (path, from) {
        (Some(path), Some(from)) => format!("{} (from {from})", path.display()),
        (Some(path), None) => path.display().to_string(),
        (None, _) => format!("none ({})", settings.home.why_none()),
    };
    writeln!(out, "Settings file: {}", printable(&file))?;
    writeln!(
        out,
        "Config folder: {}",
        printable(&folder(&folders.config, folders.config_from))
    )?;
    writeln!(
        out,
        "Data folder:   {}",
        printable(&folder(&folders.data, folders.data_from))
    )?;
    writeln!(
        out,
        "Home folder:   {}",
        printable(&settings.home.describe())
    )?;

    writeln!(
        out,
        "\nSettings (flags win over environment variables, which win over the file):"
    )?;
    for shown in &settings.shown {
        row(out, 2, shown.key, &shown.value, &shown.from.to_string())?;
    }

    writeln!(
        out,
        "\nFilters for every client (exclude wins over include):"
    )?;
    filters(out, 2, &settings.rules.filters)?;

    let rules = &settings.rules;
    writeln!(
        out,
        "\nClient profiles (the first whose glob matches the client's name, or its built-in id, wins):"
    )?;
    if rules.profiles.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for profile in &rules.profiles {
        writeln!(
            out,
            "  {}  {}",
            printable(&profile.header()),
            profile.origin
        )?;
        filters(out, 4, &profile.filters)?;
        let wins = |flag: bool, name: &str| {
            if flag {
                format!(" (the flag {name} wins)")
            } else {
                String::new()
            }
        };
        if let Some(at) = &profile.description_budget {
            let from = format!(
                "{}{}",
                origin(settings, at.line),
                wins(rules.budget_flag, "--description-budget")
            );
            row(out, 4, "description_budget", &at.value.to_string(), &from)?;
        }
        if let Some(at) = &profile.prompts {
            let from = format!(
                "{}{}",
                origin(settings, at.line),
                wins(rules.prompts_flag, "--no-prompts")
            );
            row(out, 4, "prompts", &at.value.to_string(), &from)?;
        }
        if let Some(at) = &profile.resources {
            let from = format!(
                "{}{}",
                origin(settings, at.line),
                wins(rules.resources_flag, "--no-resources")
            );
            row(out, 4, "resources", &at.value.to_string(), &from)?;
        }
        if let Some(at) = &profile.native {
            row(
                out,
                4,
                "native",
                &at.value.to_string(),
                &origin(settings, at.line).to_string(),
            )?;
        }
        if let Some(at) = &profile.catalog {
            row(
                out,
                4,
                "catalog",
                &toml_string(at.value.as_str()),
                &origin(settings, at.line).to_string(),
            )?;
        }
    }

    writeln!(
        out,
        "\nBuilt-in profiles: clients that load skills folders themselves are not sent those skills"
    )?;
    writeln!(
        out,
        "(a profile with `native = false` turns one off; docs/clients.md has the sources):"
    )?;
    for client in native::clients() {
        let mut loads: Vec<String> = Vec::new();
        if !client.project.is_empty() {
            let levels = if client.walks_up {
                "every level up to the repository"
            } else {
                "the project folder"
            };
            loads.push(format!("{} ({levels})", client.project.join(", ")));
        }
        if !client.user.is_empty() {
            loads.push(client.user.join(", "));
        }
        if client.plugins {
            loads.push("Claude Code plugins".to_owned());
        }
        let loads = if loads.is_empty() {
            "nothing".to_owned()
        } else {
            loads.join("; ")
        };
        let names: Vec<String> = client
            .match_text
            .iter()
            .map(|m| format!("\"{m}\""))
            .collect();
        writeln!(
            out,
            "  {:<15} {} ({})",
            client.id,
            client.title,
            names.join(", ")
        )?;
        writeln!(out, "      loads {loads}")?;
        let limit = client
            .text_limit
            .map(|limit| {
                format!(" (it passes on {limit} characters of them: the catalog's budget)")
            })
            .unwrap_or_default();
        if client.defers_tools {
            writeln!(
                out,
                "      defers tool definitions: the catalog goes to the server's instructions{limit}"
            )?;
        } else if !limit.is_empty() {
            writeln!(out, "      tool descriptions and instructions{limit}")?;
        }
    }
    Ok(ExitCode::Success)
}

fn origin(settings: &Settings, line: usize) -> Origin {
    let path = settings.location.as_ref().map_or_else(
        || std::path::Path::new("config.toml").into(),
        |l| l.path.as_path().into(),
    );
    Origin::File { path, line }
}

/// `  key  value  origin`, in columns.
fn row(out: &mut dyn Write, indent: usize, key: &str, value: &str, from: &str) -> io::Result<()> {
    let key_width = KEY_WIDTH.saturating_sub(indent - 2);
    writeln!(
        out,
        "{:indent$}{key:<key_width$} {:<VALUE_WIDTH$} {from}",
        "",
        printable(value)
    )
}

fn filters(out: &mut dyn Write, indent: usize, filters: &Filters) -> io::Result<()> {
    if filters.is_empty() {
        return writeln!(out, "{:indent$}(none)", "");
    }
    for pattern in &filters.include {
        row(
            out,
            indent,
            "include",
            &toml_string(&pattern.text),
            &pattern.origin.to_string(),
        )?;
    }
    for pattern in &filters.exclude {
        row(
            out,
            indent,
            "exclude",
            &toml_string(&pattern.text),
            &pattern.origin.to_string(),
        )?;
    }
    for named in &filters.disabled {
        row(
            out,
            indent,
            "disabled",
            &toml_string(&named.name),
            &named.origin.to_string(),
        )?;
    }
    Ok(())
}

/// Which way [`toggle`] turns a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Take the name out of the `disabled` list.
    Enable,
    /// Put the name in the `disabled` list.
    Disable,
}

/// One `enable` or `disable`: the name, and whose `disabled` list.
#[derive(Clone, Copy, Debug)]
pub struct ToggleRequest<'a> {
    pub switch: Switch,
    /// A skill's name (any case; surrounding spaces are dropped).
    pub name: &'a str,
    /// The glob of a `[clients."…"]` profile, or `None` for every client.
    pub client: Option<&'a str>,
}

/// What [`toggle`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toggled {
    pub switch: Switch,
    /// The name as written to the file.
    pub name: String,
    pub client: Option<String>,
    /// The settings file edited.
    pub path: PathBuf,
    /// Whether the list changed, and whether the file was created.
    pub change: Change,
    /// No skill has this name now (a disabled name stays hidden all the
    /// same when a skill of that name appears).
    pub unknown: bool,
    /// After enabling a name for every client: the skills of that name
    /// that a client matching no profile is still not offered, with why
    /// (empty when one of them is offered).
    pub still_hidden: Vec<(String, String)>,
}

/// Why [`toggle`] changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ToggleError {
    #[error("there is no config folder (HOME is not set); name a settings file with --config")]
    NoSettingsFile,
    #[error(transparent)]
    Edit(#[from] edit::EditError),
}

/// `enable` / `disable` as a library function: adds the name to the
/// `disabled` list of the top level, or of `[clients."<client>"]`, or
/// removes it, keeping the file's comments and layout, and says what
/// happened. A name no skill has now is disabled all the same. After an
/// `enable` for every client, `reload` reads the settings again to say what
/// still hides the skill. A running server picks the change up by itself.
pub fn toggle(
    settings: &Settings,
    snapshot: &Snapshot,
    request: &ToggleRequest,
    reload: &dyn Fn() -> Result<Settings, SettingsError>,
) -> Result<Toggled, ToggleError> {
    let location = settings
        .location
        .as_ref()
        .ok_or(ToggleError::NoSettingsFile)?;
    let name = request.name.trim();
    let wanted = name.to_lowercase();
    let disable = request.switch == Switch::Disable;
    let change = edit::set_disabled(&location.path, name, request.client, disable)?;
    let still_hidden = if disable || request.client.is_some() {
        Vec::new()
    } else {
        still_hidden(snapshot, &wanted, reload)
    };
    Ok(Toggled {
        switch: request.switch,
        name: name.to_owned(),
        client: request.client.map(str::to_owned),
        path: location.path.clone(),
        change,
        unknown: !snapshot
            .candidates()
            .iter()
            .any(|s| s.name.to_lowercase() == wanted),
        still_hidden,
    })
}

/// `skillserve enable NAME` / `disable NAME`: [`toggle`] on the skills
/// found now, and what changed in words. A name no skill has now is
/// disabled all the same, with a warning on `err`.
pub fn enable_disable(
    settings: &Settings,
    request: &ToggleRequest,
    reload: &dyn Fn() -> Result<Settings, SettingsError>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    let snapshot = snapshot::load(&settings.config, &mut snapshot::Cache::default(), None);
    let toggled = match toggle(settings, &snapshot, request, reload) {
        Ok(toggled) => toggled,
        Err(error) => {
            writeln!(err, "skillserve: {error}")?;
            return Ok(ExitCode::Failure);
        }
    };
    let name = printable(&toggled.name);
    if toggled.switch == Switch::Disable && toggled.unknown {
        writeln!(
            err,
            "warning: no skill named '{name}' is found now; it is disabled all the same, and stays hidden if one appears"
        )?;
    }
    let scope = match &toggled.client {
        None => "for every client".to_owned(),
        Some(glob) => format!("in [clients.{}]", quoted(glob)),
    };
    let path = printable_path(&toggled.path);
    match (toggled.change, toggled.switch) {
        (Change::Done { created }, Switch::Disable) => {
            let created = if created { " (created it)" } else { "" };
            writeln!(out, "Disabled '{name}' {scope} in {path}{created}.")?;
        }
        (Change::Done { .. }, Switch::Enable) => {
            writeln!(out, "Enabled '{name}' {scope} in {path}.")?;
        }
        (Change::Unchanged, Switch::Disable) => {
            writeln!(
                out,
                "'{name}' is already disabled {scope} in {path}; nothing changed."
            )?;
        }
        (Change::Unchanged, Switch::Enable) => {
            writeln!(
                out,
                "'{name}' is not disabled {scope} in {path}; nothing changed."
            )?;
        }
    }
    for (skill, reason) in &toggled.still_hidden {
        writeln!(
            out,
            "note: '{}' is still not offered: {reason}",
            printable(skill)
        )?;
    }
    writeln!(out, "A running skillserve picks the change up by itself.")?;
    Ok(ExitCode::Success)
}

/// After `enable`: the skills named `wanted` that a client matching no
/// profile is still not offered, and why; none when one of them is.
fn still_hidden(
    snapshot: &Snapshot,
    wanted: &str,
    reload: &dyn Fn() -> Result<Settings, SettingsError>,
) -> Vec<(String, String)> {
    let Ok(settings) = reload() else {
        return Vec::new();
    };
    let profiles = Profiles::new(&settings);
    let decision = profiles.decide(snapshot, profiles.key(None));
    let same_name: Vec<_> = snapshot
        .candidates()
        .iter()
        .zip(&decision.verdicts)
        .filter(|(s, _)| s.name.to_lowercase() == wanted)
        .collect();
    if same_name
        .iter()
        .any(|(_, verdict)| matches!(verdict, Verdict::Shown))
    {
        return Vec::new();
    }
    same_name
        .into_iter()
        .filter_map(|(skill, verdict)| Some((skill.name.to_string(), verdict.reason(snapshot)?)))
        .collect()
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;
    use crate::config::{Env, Flags, Home, settings};

    /// A home, whose config folder has no `config.toml` yet, and a folder
    /// with the skills `pdf` and `docx`.
    struct Setup {
        _dir: tempfile::TempDir,
        flags: Flags,
        env: Env,
        config: PathBuf,
    }

    impl Setup {
        fn new() -> Setup {
            let dir = tempfile::tempdir().unwrap();
            let skills = dir.path().join("skills");
            for name in ["pdf", "docx"] {
                std::fs::create_dir_all(skills.join(name)).unwrap();
                std::fs::write(
                    skills.join(name).join("SKILL.md"),
                    format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody.\n"),
                )
                .unwrap();
            }
            let home = dir.path().join("home");
            let config = home.join(".config/skillserve/config.toml");
            let flags = Flags {
                skills_dirs: vec![skills.to_string_lossy().into_owned()],
                no_project: true,
                no_user: true,
                no_plugins: true,
                ..Flags::default()
            };
            let env = Env {
                home: Home::at(home),
                cwd: dir.path().to_path_buf(),
                ..Env::default()
            };
            Setup {
                _dir: dir,
                flags,
                env,
                config,
            }
        }

        fn toggle(&self, switch: Switch, name: &str, client: Option<&str>) -> Toggled {
            let settings = settings::load(&self.flags, &self.env).unwrap();
            let snapshot = snapshot::load(&settings.config, &mut snapshot::Cache::default(), None);
            let request = ToggleRequest {
                switch,
                name,
                client,
            };
            toggle(&settings, &snapshot, &request, &|| {
                settings::load(&self.flags, &self.env)
            })
            .unwrap()
        }
    }

    #[test]
    fn toggle_returns_what_it_changed_and_prints_nothing() {
        let setup = Setup::new();
        let disabled = setup.toggle(Switch::Disable, " PDF ", None);
        assert_eq!(
            disabled,
            Toggled {
                switch: Switch::Disable,
                name: "PDF".to_owned(),
                client: None,
                path: setup.config.clone(),
                change: Change::Done { created: true },
                unknown: false,
                still_hidden: Vec::new(),
            }
        );
        assert_eq!(
            std::fs::read_to_string(&setup.config).unwrap(),
            "disabled = [\"PDF\"]\n"
        );
        let again = setup.toggle(Switch::Disable, "pdf", None);
        assert_eq!(again.change, Change::Unchanged);

        // A name no skill has is disabled all the same, and said to be unknown.
        let unknown = setup.toggle(Switch::Disable, "nothing-here", Some("cursor*"));
        assert!(unknown.unknown);
        assert_eq!(unknown.client.as_deref(), Some("cursor*"));
        assert_eq!(unknown.change, Change::Done { created: false });

        let enabled = setup.toggle(Switch::Enable, "pdf", None);
        assert_eq!(enabled.change, Change::Done { created: false });
        assert!(enabled.still_hidden.is_empty(), "{enabled:?}");
    }

    #[test]
    fn enabling_a_name_says_what_still_hides_it() {
        let setup = Setup::new();
        std::fs::create_dir_all(setup.config.parent().unwrap()).unwrap();
        std::fs::write(&setup.config, "exclude = [\"docx\"]\n").unwrap();
        let enabled = setup.toggle(Switch::Enable, "docx", None);
        assert_eq!(enabled.change, Change::Unchanged);
        assert_eq!(enabled.still_hidden.len(), 1, "{enabled:?}");
        assert_eq!(enabled.still_hidden[0].0, "docx");
        assert!(
            enabled.still_hidden[0].1.contains("exclude"),
            "{:?}",
            enabled.still_hidden
        );
    }

    #[test]
    fn toggle_without_a_settings_file_is_an_error() {
        let setup = Setup::new();
        let mut settings = settings::load(&setup.flags, &setup.env).unwrap();
        settings.location = None;
        let snapshot = snapshot::load(&settings.config, &mut snapshot::Cache::default(), None);
        let request = ToggleRequest {
            switch: Switch::Disable,
            name: "pdf",
            client: None,
        };
        let error = toggle(&settings, &snapshot, &request, &|| unreachable!()).unwrap_err();
        assert!(matches!(error, ToggleError::NoSettingsFile));
        assert!(!setup.config.exists());
    }
}
