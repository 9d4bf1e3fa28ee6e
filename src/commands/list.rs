//! `skillserve list`: the skills one client is offered, and with `--all`
//! the others with the reason each is left out (behaviour.md §8, §17), the
//! quarantined ones last (§18.5).

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Serialize;

use super::{Counts, FindingItem, Format, provenance, report};
use crate::exit_codes::ExitCode;
use crate::lock::SourceKind;
use crate::profiles::{Decision, Verdict, View};
use crate::roots::Source;
use crate::skill::Skill;
use crate::snapshot::{self, Why, Withheld};
use crate::text::{plural, printable, printable_path};

/// Longest description shown under a skill in `list`.
const LIST_DESCRIPTION_CHARS: usize = 160;

/// What `skillserve list` shows.
#[derive(Clone, Copy, Debug)]
pub struct ListOptions {
    pub format: Format,
    /// Also the skills left out and those not served (quarantined), with
    /// the reason (`--all`).
    pub all: bool,
}

/// Why a skill is left out, grouped as `list --all` shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    Shadowed,
    Filtered,
    Native,
}

/// The report of `skillserve list [--json] [--all]`: the skills `view`
/// shows; `decision` (the same client's) says why the others are not.
/// `client` is the line that says which client and profile this is, with
/// `--client`. The problem count is `check`'s, and problems with the skills
/// folders themselves are named.
pub fn write(
    view: &View,
    decision: &Decision,
    client: Option<&str>,
    max_file_bytes: u64,
    options: ListOptions,
    out: &mut dyn Write,
) -> io::Result<ExitCode> {
    let snapshot = view.snapshot();
    let mut hidden: Vec<(Group, &Skill, String, Option<&Skill>)> = Vec::new();
    for (c, verdict) in decision.verdicts.iter().enumerate() {
        let Some(reason) = verdict.reason(snapshot) else {
            continue;
        };
        let (group, by) = match verdict {
            Verdict::Shadowed { by } => (Group::Shadowed, Some(&snapshot.candidates()[*by])),
            Verdict::Filtered { .. } => (Group::Filtered, None),
            _ => (Group::Native, None),
        };
        hidden.push((group, &snapshot.candidates()[c], reason, by));
    }
    hidden.sort_by_key(|(group, ..)| *group);
    let withheld = if options.all {
        snapshot.withheld()
    } else {
        &[]
    };
    match options.format {
        Format::Json => {
            let shown = view.skills().map(|s| ListItem::new(s, None, None));
            let left_out = hidden
                .iter()
                .filter(|_| options.all)
                .map(|(_, skill, reason, by)| ListItem::new(skill, *by, Some(reason)));
            let held = withheld.iter().map(ListItem::withheld);
            let items: Vec<ListItem> = shown.chain(left_out).chain(held).collect();
            serde_json::to_writer_pretty(&mut *out, &items)?;
            writeln!(out)?;
        }
        Format::Text => {
            if let Some(client) = client {
                for line in client.lines() {
                    writeln!(out, "{}", printable(line))?;
                }
                writeln!(out)?;
            }
            let listed = if options.all { &hidden[..] } else { &[] };
            list_text(view, listed, withheld, decision, out)?;
            list_summary(view, hidden.len(), max_file_bytes, options.all, out)?;
        }
    }
    Ok(ExitCode::Success)
}

/// Each shown skill, then those left out (`hidden`), by reason, then those
/// `withheld` with the reason, with names in one column.
fn list_text(
    view: &View,
    hidden: &[(Group, &Skill, String, Option<&Skill>)],
    withheld: &[Withheld],
    decision: &Decision,
    out: &mut dyn Write,
) -> io::Result<()> {
    let width = view
        .skills()
        .chain(hidden.iter().map(|(_, skill, ..)| *skill))
        .chain(withheld.iter().map(|w| &w.skill))
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    for skill in view.skills() {
        write_skill(out, skill, width)?;
    }
    let native_title = decision.verdicts.iter().find_map(|verdict| match verdict {
        Verdict::Native { client } | Verdict::NameTaken { client, .. } => {
            Some(client.title.as_str())
        }
        _ => None,
    });
    let mut group = None;
    for (this, skill, reason, _) in hidden {
        if group != Some(*this) {
            group = Some(*this);
            let heading = match this {
                Group::Shadowed => {
                    "Hidden by a skill of the same name with higher precedence:".to_owned()
                }
                Group::Filtered => "Left out by config.toml:".to_owned(),
                Group::Native => format!(
                    "Left out because {} loads them itself:",
                    native_title.unwrap_or("the client")
                ),
            };
            writeln!(out, "\n{heading}")?;
        }
        write_skill(out, skill, width)?;
        writeln!(out, "    {}", printable(reason))?;
    }
    if !withheld.is_empty() {
        writeln!(
            out,
            "\nNot served (`skillserve check --security` lists every finding):"
        )?;
        for entry in withheld {
            write_skill(out, &entry.skill, width)?;
            match &entry.why {
                Why::Quarantined(report) => {
                    if let Some(first) = report.errors().next() {
                        writeln!(
                            out,
                            "    quarantined: {}: {}",
                            first.short(),
                            printable(&first.finding.message)
                        )?;
                    }
                    writeln!(
                        out,
                        "    to serve it: skillserve trust {}",
                        entry.skill.name
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// The count of skills by source (or where nothing was found), problems
/// with the skills folders, and `check`'s count of problems.
fn list_summary(
    view: &View,
    hidden: usize,
    max_file_bytes: u64,
    all: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let snapshot = view.snapshot();
    if snapshot.candidates().is_empty() && snapshot.withheld().is_empty() {
        writeln!(out, "No skills found. Looked in:")?;
        for root in &snapshot.roots {
            writeln!(out, "  {:<8} {}", root.source, root.path.display())?;
        }
    } else {
        let shown = view.len();
        let hidden = match hidden {
            0 => String::new(),
            n if all => format!("; {n} hidden"),
            n => format!("; {n} hidden (see --all)"),
        };
        let quarantined = match snapshot.withheld().len() {
            0 => String::new(),
            n if all => format!("; {n} quarantined"),
            n => format!("; {n} quarantined (see --all)"),
        };
        let by_source = match shown {
            0 => String::new(),
            _ => format!(" ({})", snapshot::count_by_source(view.skills())),
        };
        writeln!(
            out,
            "\n{shown} skill{}{by_source}{hidden}{quarantined}",
            plural(shown)
        )?;
    }
    let report = report(snapshot, max_file_bytes);
    for diagnostic in report.iter().filter(|d| d.code.is_listed()) {
        writeln!(out, "{}", printable(&diagnostic.to_string()))?;
    }
    let counts = Counts::of(&report);
    if counts.any() {
        writeln!(out, "{counts}; run `skillserve check` for details")?;
    }
    Ok(())
}

fn write_skill(out: &mut dyn Write, skill: &Skill, width: usize) -> io::Result<()> {
    writeln!(
        out,
        "{:<width$}  {:<7}  {}",
        skill.name,
        skill.source.as_str(),
        printable_path(&skill.dir)
    )?;
    let description = skill.description();
    if !description.is_empty() {
        writeln!(out, "    {}", cut(&description, LIST_DESCRIPTION_CHARS))?;
    }
    if let Some(plugin) = skill.plugin() {
        writeln!(
            out,
            "    plugin {} {}, installed at {}",
            plugin.key,
            plugin.version.as_deref().unwrap_or("(no version)"),
            plugin.install_path.display()
        )?;
    }
    if let Some(origin) = skill.origin() {
        writeln!(out, "    {}", printable(&provenance(origin)))?;
    }
    Ok(())
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", text[..end].trim_end()),
        None => text.to_owned(),
    }
}

/// One skill in `list --json`. Paths are text: bytes that are not UTF-8
/// become U+FFFD, so that the output is valid JSON whatever the file names.
#[derive(Serialize)]
struct ListItem<'a> {
    name: &'a str,
    description: Cow<'a, str>,
    source: Source,
    dir: Cow<'a, str>,
    file: Cow<'a, str>,
    root: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    plugin: Option<PluginItem<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    installed: Option<OriginItem<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shadowed_by: Option<Cow<'a, str>>,
    /// Why the skill is left out (`--all` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    hidden_because: Option<&'a str>,
    /// Why the skill is not served at all (`--all` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    withheld: Option<WithheldItem<'a>>,
}

/// Why a skill in `list --json --all` is not served.
#[derive(Serialize)]
struct WithheldItem<'a> {
    /// `quarantined`.
    reason: &'static str,
    /// The first error-level finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    finding: Option<FindingItem<'a>>,
    /// How many error-level findings there are.
    errors: usize,
    /// The command that approves the skill as it is now.
    approve: String,
}

/// Where an installed skill came from, in `list --json`.
#[derive(Serialize)]
struct OriginItem<'a> {
    id: &'a str,
    kind: SourceKind,
    url: &'a str,
    version: &'a str,
    path: &'a str,
    digest: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    signed_by: Option<&'a crate::lock::Signer>,
    /// `user` (sources.lock) or `project` (skills.lock).
    lock: crate::lock::Scope,
}

#[derive(Serialize)]
struct PluginItem<'a> {
    key: &'a str,
    version: Option<&'a str>,
    install_path: Cow<'a, str>,
}

impl<'a> ListItem<'a> {
    fn new(
        skill: &'a Skill,
        shadowed_by: Option<&'a Skill>,
        hidden_because: Option<&'a str>,
    ) -> Self {
        ListItem {
            name: &skill.name,
            description: skill.description(),
            source: skill.source,
            dir: skill.dir.to_string_lossy(),
            file: Cow::Owned(skill.file().to_string_lossy().into_owned()),
            root: skill.root.path.to_string_lossy(),
            plugin: skill.plugin().map(|p| PluginItem {
                key: &p.key,
                version: p.version.as_deref(),
                install_path: p.install_path.to_string_lossy(),
            }),
            installed: skill.origin().map(|o| OriginItem {
                id: &o.id,
                kind: o.kind,
                url: &o.url,
                version: &o.version,
                path: &o.path,
                digest: &o.digest,
                signed_by: o.signer.as_ref(),
                lock: o.scope,
            }),
            shadowed_by: shadowed_by.map(|by| Cow::Owned(by.file().to_string_lossy().into_owned())),
            hidden_because,
            withheld: None,
        }
    }

    fn withheld(withheld: &'a Withheld) -> Self {
        let mut item = ListItem::new(&withheld.skill, None, None);
        item.withheld = Some(match &withheld.why {
            Why::Quarantined(report) => WithheldItem {
                reason: "quarantined",
                finding: report.errors().next().map(FindingItem::new),
                errors: report.errors().count(),
                approve: format!("skillserve trust {}", withheld.skill.name),
            },
        });
        item
    }
}
