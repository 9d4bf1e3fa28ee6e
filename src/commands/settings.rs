//! `skillserve config` (the settings in use and where each came from) and
//! `skillserve enable` / `disable` (one name in a `disabled` list of
//! `config.toml`), behaviour.md §17.1 and §17.2.

use std::io::{self, Write};

use crate::config::edit::{self, Change};
use crate::config::file::{Filters, quoted};
use crate::config::native;
use crate::config::settings::toml_string;
use crate::config::{Origin, Settings, SettingsError};
use crate::exit_codes::ExitCode;
use crate::profiles::{Profiles, Verdict};
use crate::snapshot::Snapshot;
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

/// `skillserve disable NAME` (`disable`) or `enable NAME`: adds the name to
/// the `disabled` list of the top level, or of `[clients."<client>"]`, or
/// removes it, and says what changed. A name no skill has now is disabled
/// all the same, with a warning on `err`. After `enable`, says what still
/// hides the skill, if anything does: `reload` reads the settings again.
#[allow(clippy::too_many_arguments)]
pub fn toggle(
    settings: &Settings,
    snapshot: &std::sync::Arc<Snapshot>,
    name: &str,
    client: Option<&str>,
    disable: bool,
    reload: &dyn Fn() -> Result<Settings, SettingsError>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    let Some(location) = &settings.location else {
        writeln!(
            err,
            "skillserve: there is no config folder (HOME is not set); name a settings file with --config"
        )?;
        return Ok(ExitCode::Failure);
    };
    let path = &location.path;
    let name = name.trim();
    let wanted = name.to_lowercase();
    let known = snapshot
        .candidates()
        .iter()
        .any(|s| s.name.to_lowercase() == wanted);
    if disable && !known {
        writeln!(
            err,
            "warning: no skill named '{}' is found now; it is disabled all the same, and stays hidden if one appears",
            printable(name)
        )?;
    }
    let scope = match client {
        None => "for every client".to_owned(),
        Some(glob) => format!("in [clients.{}]", quoted(glob)),
    };
    let change = match edit::set_disabled(path, name, client, disable) {
        Ok(change) => change,
        Err(error) => {
            writeln!(err, "skillserve: {error}")?;
            return Ok(ExitCode::Failure);
        }
    };
    let shown_path = printable_path(path);
    match (change, disable) {
        (Change::Done { created }, true) => {
            let created = if created { " (created it)" } else { "" };
            writeln!(
                out,
                "Disabled '{}' {scope} in {shown_path}{created}.",
                printable(name)
            )?;
        }
        (Change::Done { .. }, false) => {
            writeln!(
                out,
                "Enabled '{}' {scope} in {shown_path}.",
                printable(name)
            )?;
        }
        (Change::Unchanged, true) => {
            writeln!(
                out,
                "'{}' is already disabled {scope} in {shown_path}; nothing changed.",
                printable(name)
            )?;
        }
        (Change::Unchanged, false) => {
            writeln!(
                out,
                "'{}' is not disabled {scope} in {shown_path}; nothing changed.",
                printable(name)
            )?;
        }
    }
    if !disable && client.is_none() {
        still_hidden(snapshot, &wanted, reload, out)?;
    }
    writeln!(out, "A running skillserve picks the change up by itself.")?;
    Ok(ExitCode::Success)
}

/// After `enable`: what else keeps skills of that name from a client that
/// matches no profile.
fn still_hidden(
    snapshot: &std::sync::Arc<Snapshot>,
    wanted: &str,
    reload: &dyn Fn() -> Result<Settings, SettingsError>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let Ok(settings) = reload() else {
        return Ok(());
    };
    let profiles = Profiles::new(&settings);
    let decision = profiles.decide(snapshot, profiles.key(None));
    let same_name = snapshot.candidates().iter().zip(&decision.verdicts);
    let same_name: Vec<_> = same_name
        .filter(|(s, _)| s.name.to_lowercase() == wanted)
        .collect();
    if same_name
        .iter()
        .any(|(_, verdict)| matches!(verdict, Verdict::Shown))
    {
        return Ok(());
    }
    for (skill, verdict) in same_name {
        if let Some(reason) = verdict.reason(snapshot) {
            writeln!(
                out,
                "note: '{}' is still not offered: {reason}",
                printable(&skill.name)
            )?;
        }
    }
    Ok(())
}
