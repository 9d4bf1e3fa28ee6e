//! `skillserve stats`: which skills are used (behaviour.md §21.4), from the
//! usage file, with the skills served now for those that are not. The
//! skills app's usage read answers the same [`Stats`], made by the same
//! [`Stats::gather`].

use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use super::Format;
use crate::config::{Origin, Settings};
use crate::exit_codes::ExitCode;
use crate::skill::Skill;
use crate::snapshot::{self, Cache};
use crate::text::{plural, printable};
use crate::usage::{self, Day, Report, SkillUse, Unused};

/// Used skills listed in the text at most (`--json` lists them all).
const MOST_USED: usize = 20;

/// The days a report may cover: 1 to the days the file keeps.
pub const DAYS: std::ops::RangeInclusive<u32> = 1..=usage::RETENTION_DAYS;
/// The days a report covers unless told.
pub const DEFAULT_DAYS: u32 = 30;

/// A report of the usage file with where it came from and whether uses are
/// recorded now: what `stats --json` writes and the skills app's
/// `app_usage` answers, field for field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// The usage file (`None`: no data folder).
    pub file: Option<String>,
    /// Whether uses are recorded now.
    pub recording: bool,
    /// Where recording was turned off (`--no-usage`, `config.toml:3`).
    pub off_by: Option<String>,
    /// How to turn it on again, in a sentence.
    pub turn_on: Option<String>,
    /// Whether the file exists (without it, nothing was recorded yet).
    #[serde(skip)]
    pub found: bool,
    #[serde(flatten)]
    pub report: Report,
}

/// The usage file could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the usage file {}: {source}", path.display())]
pub struct StatsError {
    pub path: PathBuf,
    pub source: usage::ReadError,
}

impl Stats {
    /// The usage file of `settings`' data folder read against `served`
    /// (the skills served now), over the `days` days up to `today` (only
    /// the clients matching `client`); `recording` from `settings`.
    pub fn gather<'a>(
        settings: &Settings,
        served: impl IntoIterator<Item = &'a Skill>,
        today: Day,
        days: u32,
        client: Option<&str>,
    ) -> Result<Stats, StatsError> {
        let file = usage::path(&settings.config.folders);
        let history = match file.as_deref().map(usage::History::read) {
            Some(Ok(found)) => found,
            None => None,
            Some(Err(source)) => {
                return Err(StatsError {
                    path: file.unwrap_or_default(),
                    source,
                });
            }
        };
        let found = history.is_some();
        let report = Report::new(&history.unwrap_or_default(), served, today, days, client);
        let off = settings
            .shown
            .iter()
            .find(|shown| shown.key == "usage" && shown.value == "false")
            .map(|shown| &shown.from);
        Ok(Stats {
            file: file.map(|f| f.to_string_lossy().into_owned()),
            recording: off.is_none(),
            off_by: off.map(ToString::to_string),
            turn_on: off.map(turn_on),
            found,
            report,
        })
    }
}

/// How to record uses again, when `from` turned it off.
fn turn_on(from: &Origin) -> String {
    match from {
        Origin::File { path, line } => format!(
            "set `usage = true` (or remove the line `usage = false`) at line {line} of {}",
            path.display()
        ),
        Origin::Flag(flag) => format!("start the server without `{flag}`"),
        Origin::Env(var) => format!("unset ${var}"),
        Origin::Default => "set `usage = true` in config.toml".to_owned(),
    }
}

/// `skillserve stats`: the usage file of the data folder read against the
/// skills loaded now, over the last `days` days (only the clients matching
/// `client`).
pub fn stats_command(
    settings: &Settings,
    days: u32,
    client: Option<&str>,
    format: Format,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let snapshot = snapshot::load(&settings.config, &mut Cache::default(), None);
    let stats = Stats::gather(settings, snapshot.skills(), Day::today(), days, client)?;
    Ok(self::stats(&stats, format, out)?)
}

/// `skillserve stats [--days N] [--client GLOB] [--json]`.
pub fn stats(stats: &Stats, format: Format, out: &mut dyn Write) -> io::Result<ExitCode> {
    if format == Format::Json {
        serde_json::to_writer_pretty(&mut *out, stats)?;
        writeln!(out)?;
        return Ok(ExitCode::Success);
    }
    let report = &stats.report;
    let clients = match &report.client {
        Some(glob) => format!(" by clients matching \"{}\"", printable(glob)),
        None => String::new(),
    };
    writeln!(
        out,
        "Skills used over the last {} day{}{clients} ({} to {}, UTC days)",
        report.days,
        plural(report.days as usize),
        report.from,
        report.to
    )?;
    match (&stats.file, stats.found) {
        (None, _) => writeln!(
            out,
            "No usage file: there is no data folder (HOME is not set)."
        )?,
        (Some(file), true) => writeln!(out, "From {}", printable(file))?,
        (Some(file), false) => writeln!(
            out,
            "No use recorded yet ({} does not exist).",
            printable(file)
        )?,
    }
    if let Some(by) = &stats.off_by {
        writeln!(
            out,
            "Recording is off ({by}): these are the uses recorded before."
        )?;
        if let Some(how) = &stats.turn_on {
            writeln!(out, "To record uses again, {}.", printable(how))?;
        }
    }

    writeln!(out, "\nMost used:")?;
    if report.skills.is_empty() {
        writeln!(out, "  (none)")?;
    }
    let width = report
        .skills
        .iter()
        .take(MOST_USED)
        .map(|s| s.name.chars().count())
        .chain(report.unused.iter().map(|u| u.name.chars().count()))
        .max()
        .unwrap_or(0)
        .min(40);
    let loads_width = report
        .skills
        .iter()
        .take(MOST_USED)
        .map(|s| loads(s.loads).len())
        .max()
        .unwrap_or(0);
    for skill in report.skills.iter().take(MOST_USED) {
        used_skill(out, skill, width, loads_width)?;
    }
    if report.skills.len() > MOST_USED {
        writeln!(
            out,
            "  … and {} more (--json lists them all)",
            report.skills.len() - MOST_USED
        )?;
    }

    let served: usize = report.sources.iter().map(|s| s.skills).sum();
    // Uses are not counted while recording is off: a list of the skills
    // not loaded would name the ones loaded since too (the app leaves it
    // out as well).
    let unused: &[Unused] = match stats.off_by {
        Some(_) => {
            writeln!(
                out,
                "\nNot used in {} day{}: not known while recording is off.",
                report.days,
                plural(report.days as usize),
            )?;
            &[]
        }
        None => {
            writeln!(
                out,
                "\nNot used in {} day{} ({} of {served} skill{} served):",
                report.days,
                plural(report.days as usize),
                report.unused.len(),
                plural(served)
            )?;
            if report.unused.is_empty() {
                writeln!(out, "  (none)")?;
            }
            &report.unused
        }
    };
    for skill in unused {
        writeln!(
            out,
            "  {:<width$}  {:<10} {}",
            printable(&skill.name),
            printable(&skill.source),
            printable(&skill.place)
        )?;
    }

    writeln!(out, "\nBy client:")?;
    if report.clients.is_empty() {
        writeln!(out, "  (none)")?;
    }
    let client_width = report
        .clients
        .iter()
        .map(|c| client_name(&c.client).chars().count())
        .max()
        .unwrap_or(0);
    for client in &report.clients {
        writeln!(
            out,
            "  {:<client_width$}  {} load{} of {} skill{}",
            printable(client_name(&client.client)),
            client.loads,
            plural(client.loads as usize),
            client.skills,
            plural(client.skills)
        )?;
    }

    writeln!(out, "\nBy source:")?;
    if report.sources.is_empty() {
        writeln!(out, "  (none)")?;
    }
    let source_width = report
        .sources
        .iter()
        .map(|s| s.source.chars().count())
        .max()
        .unwrap_or(0);
    for source in &report.sources {
        writeln!(
            out,
            "  {:<source_width$}  {} load{}; {} of {} skill{} served used",
            printable(&source.source),
            source.loads,
            plural(source.loads as usize),
            source.used,
            source.skills,
            plural(source.skills)
        )?;
    }
    Ok(ExitCode::Success)
}

/// `N loads`.
fn loads(n: u64) -> String {
    format!("{n} load{}", plural(n as usize))
}

/// A client's name as the report shows it.
fn client_name(name: &str) -> &str {
    if name.is_empty() { "(no name)" } else { name }
}

/// `  name  N loads  last DAY  source  where`, then the surfaces, files
/// and clients.
fn used_skill(
    out: &mut dyn Write,
    skill: &SkillUse,
    width: usize,
    loads_width: usize,
) -> io::Result<()> {
    let last = crate::usage::day_of(skill.last_loaded);
    let place = skill.place.as_deref().unwrap_or("(not served now)");
    writeln!(
        out,
        "  {:<width$}  {:<loads_width$}  last {}  {:<10} {}",
        printable(&skill.name),
        loads(skill.loads),
        if skill.loads > 0 {
            last.to_string()
        } else {
            "-".to_owned()
        },
        printable(&skill.source),
        printable(place)
    )?;
    let s = &skill.surfaces;
    let mut parts: Vec<String> = [
        ("tool", s.tool),
        ("prompt", s.prompt),
        ("skills/get", s.skills_get),
        ("resource", s.resource),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(what, n)| format!("{what} {n}"))
    .collect();
    let reads: u64 = skill.files.values().sum();
    if reads > 0 {
        parts.push(format!(
            "{reads} read{} of {} file{}",
            plural(reads as usize),
            skill.files.len(),
            plural(skill.files.len())
        ));
    }
    let clients: Vec<String> = skill
        .clients
        .iter()
        .map(|(name, n)| format!("{} {n}", printable(client_name(name))))
        .collect();
    if !clients.is_empty() {
        parts.push(clients.join(", "));
    }
    writeln!(out, "  {:<width$}    {}", "", parts.join("; "))
}
