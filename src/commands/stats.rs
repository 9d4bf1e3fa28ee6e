//! `skillserve stats`: which skills are used (behaviour.md §21.4), from the
//! usage file, with the skills served now for those that are not.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use super::Format;
use crate::config::Settings;
use crate::exit_codes::ExitCode;
use crate::snapshot::{self, Cache};
use crate::text::{plural, printable};
use crate::usage::{self, Report, SkillUse};

/// Used skills listed in the text at most (`--json` lists them all).
const MOST_USED: usize = 20;

/// Where the report came from and whether uses are recorded now.
#[derive(Clone, Copy, Debug)]
pub struct StatsSource<'a> {
    /// The usage file (`None`: no data folder).
    pub file: Option<&'a Path>,
    /// Whether the file exists.
    pub found: bool,
    /// `None` when recording is on; else where it was turned off
    /// (`--no-usage`, `config.toml:3`).
    pub off_by: Option<&'a str>,
}

/// `stats --json`: the report, with where it came from.
#[derive(Serialize)]
struct Json<'a> {
    file: Option<String>,
    recording: bool,
    #[serde(flatten)]
    report: &'a Report,
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
    let file = usage::path(&settings.config.folders);
    let history = match file.as_deref().map(usage::History::read) {
        Some(Ok(found)) => found,
        None => None,
        Some(Err(err)) => {
            let path = file.as_deref().unwrap_or(Path::new(""));
            anyhow::bail!("cannot read the usage file {}: {err}", path.display());
        }
    };
    let found = history.is_some();
    let report = Report::new(
        &history.unwrap_or_default(),
        snapshot.skills(),
        usage::Day::today(),
        days,
        client,
    );
    let off_by = settings
        .shown
        .iter()
        .find(|shown| shown.key == "usage" && shown.value == "false")
        .map(|shown| shown.from.to_string());
    let source = StatsSource {
        file: file.as_deref(),
        found,
        off_by: off_by.as_deref(),
    };
    Ok(stats(&report, source, format, out)?)
}

/// `skillserve stats [--days N] [--client GLOB] [--json]`.
pub fn stats(
    report: &Report,
    source: StatsSource,
    format: Format,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    if format == Format::Json {
        let json = Json {
            file: source.file.map(|f| f.to_string_lossy().into_owned()),
            recording: source.off_by.is_none(),
            report,
        };
        serde_json::to_writer_pretty(&mut *out, &json)?;
        writeln!(out)?;
        return Ok(ExitCode::Success);
    }
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
    match (source.file, source.found) {
        (None, _) => writeln!(
            out,
            "No usage file: there is no data folder (HOME is not set)."
        )?,
        (Some(file), true) => writeln!(out, "From {}", printable(&file.to_string_lossy()))?,
        (Some(file), false) => writeln!(
            out,
            "No use recorded yet ({} does not exist).",
            printable(&file.to_string_lossy())
        )?,
    }
    if let Some(by) = source.off_by {
        writeln!(
            out,
            "Recording is off ({by}): these are the uses recorded before."
        )?;
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
    for skill in &report.unused {
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
