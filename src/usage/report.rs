//! What the usage file says, for people and for the catalog: a [`Report`]
//! of the last days (`skillserve stats`, the app), and the [`Ranks`] that
//! order the catalog over its budget.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Serialize, Serializer};

use super::date::{Day, timestamp};
use super::history::{self, History};
use super::{SkillId, Surface};
use crate::config::pattern::Glob;
use crate::skill::Skill;

/// How often each skill was loaded in the last [`RECENT_DAYS`](super::RECENT_DAYS) days: what
/// orders the catalog over its budget (most used first).
#[derive(Debug, Default)]
pub struct Ranks {
    /// Looked up for every skill of the catalog over its budget: hashed
    /// with foldhash, not SipHash.
    by_name: HashMap<Box<str>, Vec<(SkillId, u32)>, foldhash::fast::RandomState>,
}

impl Ranks {
    /// The loads of `history` in the [`RECENT_DAYS`](super::RECENT_DAYS) days up to `today`.
    pub fn of(history: &History, today: Day) -> Ranks {
        Ranks::from_pairs(
            history
                .recent(today)
                .into_iter()
                .map(|(id, loads)| (id.clone(), loads)),
        )
    }

    /// The ranks the usage file at `path` holds in its first line (the
    /// loads of the [`RECENT_DAYS`](super::RECENT_DAYS) days before it was written): none when
    /// there is no file, or it cannot be read (the writer says why when it
    /// next writes). Reads no more than that line.
    pub fn read(path: &std::path::Path) -> Ranks {
        match history::recent(path) {
            Ok(pairs) => Ranks::from_pairs(pairs),
            Err(err) => {
                tracing::debug!("usage: {}: {err}", path.display());
                Ranks::default()
            }
        }
    }

    fn from_pairs(pairs: impl IntoIterator<Item = (SkillId, u32)>) -> Ranks {
        let mut ranks = Ranks::default();
        for (id, loads) in pairs {
            let same = ranks.by_name.entry(id.name.as_str().into()).or_default();
            match same.iter_mut().find(|(known, _)| *known == id) {
                Some((_, count)) => *count = count.saturating_add(loads),
                None => same.push((id, loads)),
            }
        }
        ranks
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// How often `skill` was loaded lately (0: not at all).
    pub fn uses(&self, skill: &Skill) -> u32 {
        self.by_name
            .get(&*skill.name)
            .and_then(|same| same.iter().find(|(id, _)| id.is(skill)))
            .map_or(0, |&(_, count)| count)
    }

    /// The names of the `n` skills used most lately, most used first.
    pub fn top(&self, n: usize) -> Vec<Arc<str>> {
        let mut all: Vec<(&str, u32)> = self
            .by_name
            .iter()
            .map(|(name, same)| (&**name, same.iter().map(|(_, c)| *c).sum::<u32>()))
            .collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        all.into_iter()
            .take(n)
            .map(|(name, _)| name.into())
            .collect()
    }
}

/// The uses of skills over the last days (behaviour.md §21.4): the skills
/// used, most used first; the skills served now that were not used, with
/// where each lives; loads per client and per source. `skillserve stats
/// --json` writes it as it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// How many days, today included.
    pub days: u32,
    /// The first and the last day (UTC).
    #[serde(serialize_with = "day")]
    pub from: Day,
    #[serde(serialize_with = "day")]
    pub to: Day,
    /// The glob on client names the report is limited to, if any.
    pub client: Option<String>,
    pub skills: Vec<SkillUse>,
    pub unused: Vec<Unused>,
    pub clients: Vec<ClientUse>,
    pub sources: Vec<SourceUse>,
}

/// One skill's uses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkillUse {
    pub name: String,
    /// `custom`, `project`, `user`, `installed:ID`, `plugin:NAME@MARKETPLACE`.
    pub source: String,
    /// The root folder (custom, project and user skills; else "").
    pub root: String,
    /// Its folder, when it is served now.
    #[serde(rename = "where")]
    pub place: Option<String>,
    pub loads: u64,
    pub surfaces: Surfaces,
    /// The last load (`YYYY-MM-DDTHH:MM:SSZ` in JSON).
    #[serde(serialize_with = "time")]
    pub last_loaded: u64,
    /// Loads per day, oldest first: one number per day of the report.
    pub daily: Vec<u64>,
    /// Loads per client name ("" for a client that gave none).
    pub clients: BTreeMap<String, u64>,
    /// Reads per file (path relative to the skill's folder).
    pub files: BTreeMap<String, u64>,
}

/// Loads per surface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Surfaces {
    pub tool: u64,
    pub prompt: u64,
    pub skills_get: u64,
    pub resource: u64,
}

/// A skill served now that was not loaded in the report's days.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unused {
    pub name: String,
    pub source: String,
    pub root: String,
    #[serde(rename = "where")]
    pub place: String,
}

/// One client's loads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClientUse {
    /// The name it gave ("" for none).
    pub client: String,
    pub loads: u64,
    /// Distinct skills it loaded.
    pub skills: usize,
}

/// One source's loads, and how many of its skills served now were used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceUse {
    pub source: String,
    pub loads: u64,
    /// Its skills served now.
    pub skills: usize,
    /// Of those, the ones loaded in the report's days.
    pub used: usize,
}

fn day<S: Serializer>(day: &Day, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(day)
}

fn time<S: Serializer>(secs: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&timestamp(*secs))
}

impl Report {
    /// The uses of `history` in the `days` days up to `today` by the
    /// clients whose names `client` matches (every client without it);
    /// `served` are the skills served now (for the unused ones and where
    /// each lives).
    pub fn new<'a>(
        history: &History,
        served: impl IntoIterator<Item = &'a Skill>,
        today: Day,
        days: u32,
        client: Option<&str>,
    ) -> Report {
        let days = days.max(1);
        let from = today.minus(days - 1);
        let glob = client.map(Glob::new);
        let wanted = |day: Day, name: &str| {
            from <= day && day <= today && glob.as_ref().is_none_or(|g| g.matches(name))
        };
        let mut used: HashMap<&SkillId, SkillUse> = HashMap::new();
        let mut clients: HashMap<&str, (u64, Vec<&SkillId>)> = HashMap::new();
        let entry = |used: &mut HashMap<&SkillId, SkillUse>, id: &SkillId| -> SkillUse {
            used.remove(id).unwrap_or_else(|| SkillUse {
                name: id.name.clone(),
                source: id.source.clone(),
                root: id.root.clone(),
                place: None,
                loads: 0,
                surfaces: Surfaces::default(),
                last_loaded: 0,
                daily: vec![0; days as usize],
                clients: BTreeMap::new(),
                files: BTreeMap::new(),
            })
        };
        for (day, id, name, loads) in history.loads() {
            if !wanted(day, name) {
                continue;
            }
            let mut skill = entry(&mut used, id);
            let total = loads.total();
            skill.loads += total;
            skill.daily[(day.0 - from.0) as usize] += total;
            for (surface, &count) in Surface::ALL.iter().zip(&loads.by) {
                let count = u64::from(count);
                match surface {
                    Surface::Tool => skill.surfaces.tool += count,
                    Surface::Prompt => skill.surfaces.prompt += count,
                    Surface::SkillsGet => skill.surfaces.skills_get += count,
                    Surface::Resource => skill.surfaces.resource += count,
                }
            }
            skill.last_loaded = skill.last_loaded.max(loads.last);
            *skill.clients.entry(name.to_owned()).or_default() += total;
            used.insert(id, skill);
            let client = clients.entry(name).or_default();
            client.0 += total;
            if !client.1.contains(&id) {
                client.1.push(id);
            }
        }
        for (day, id, name, path, reads) in history.reads() {
            if !wanted(day, name) {
                continue;
            }
            // A file read of a skill whose loads fall outside the days (or
            // were of another client) still shows the skill as used.
            let mut skill = entry(&mut used, id);
            *skill.files.entry(path.to_owned()).or_default() += u64::from(reads);
            used.insert(id, skill);
        }

        let mut sources: BTreeMap<String, SourceUse> = BTreeMap::new();
        fn source<'s>(
            sources: &'s mut BTreeMap<String, SourceUse>,
            label: &str,
        ) -> &'s mut SourceUse {
            sources
                .entry(label.to_owned())
                .or_insert_with(|| SourceUse {
                    source: label.to_owned(),
                    loads: 0,
                    skills: 0,
                    used: 0,
                })
        }
        for skill in used.values() {
            source(&mut sources, &skill.source).loads += skill.loads;
        }
        let mut unused = Vec::new();
        for skill in served {
            let id = SkillId::of(skill);
            let place = skill.dir.to_string_lossy().into_owned();
            let counted = source(&mut sources, &id.source);
            counted.skills += 1;
            match used.get_mut(&id) {
                Some(found) => {
                    counted.used += 1;
                    found.place = Some(place);
                }
                None => unused.push(Unused {
                    name: id.name,
                    source: id.source,
                    root: id.root,
                    place,
                }),
            }
        }
        let mut skills: Vec<SkillUse> = used.into_values().collect();
        skills.sort_by(|a, b| {
            b.loads
                .cmp(&a.loads)
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.source.cmp(&b.source))
                .then_with(|| a.root.cmp(&b.root))
        });
        unused.sort_by(|a, b| (&a.source, &a.name, &a.root).cmp(&(&b.source, &b.name, &b.root)));
        let mut clients: Vec<ClientUse> = clients
            .into_iter()
            .map(|(client, (loads, skills))| ClientUse {
                client: client.to_owned(),
                loads,
                skills: skills.len(),
            })
            .collect();
        clients.sort_by(|a, b| b.loads.cmp(&a.loads).then_with(|| a.client.cmp(&b.client)));
        let mut sources: Vec<SourceUse> = sources.into_values().collect();
        sources.sort_by(|a, b| b.loads.cmp(&a.loads).then_with(|| a.source.cmp(&b.source)));
        Report {
            days,
            from,
            to: today,
            client: client.map(str::to_owned),
            skills,
            unused,
            clients,
            sources,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Use;

    const DAY: u64 = 86_400;
    const NOW: u64 = 20_787 * DAY + 43_200;

    #[test]
    fn ranks_count_the_last_thirty_days_of_the_same_skill_only() {
        let pdf = Skill::for_test("pdf", "d");
        let id = SkillId::of(&pdf);
        let elsewhere = SkillId {
            root: "/elsewhere".into(),
            ..id.clone()
        };
        let mut history = History::default();
        for days_ago in [0, 1, 29, 30] {
            history.add(&id, None, &Use::Load(Surface::Tool), NOW - days_ago * DAY);
        }
        history.add(&elsewhere, None, &Use::Load(Surface::Tool), NOW);
        let ranks = Ranks::of(&history, Day(20_787));
        assert_eq!(ranks.uses(&pdf), 3);
        assert_eq!(ranks.uses(&Skill::for_test("docx", "d")), 0);
        assert_eq!(ranks.top(5), [Arc::<str>::from("pdf")]);
    }

    #[test]
    fn the_report_adds_up_by_skill_client_and_source_and_lists_the_unused() {
        let (pdf, docx, old) = (
            Skill::for_test("pdf", "d"),
            Skill::for_test("docx", "d"),
            Skill::for_test("old", "d"),
        );
        let mut history = History::default();
        let add = |h: &mut History, s: &Skill, client, what, at| {
            h.add(&SkillId::of(s), client, &what, at);
        };
        add(
            &mut history,
            &pdf,
            Some("claude-code"),
            Use::Load(Surface::Tool),
            NOW,
        );
        add(
            &mut history,
            &pdf,
            Some("cursor-vscode"),
            Use::Load(Surface::Prompt),
            NOW - DAY,
        );
        add(
            &mut history,
            &pdf,
            Some("claude-code"),
            Use::File("a.md".into()),
            NOW,
        );
        add(
            &mut history,
            &docx,
            Some("claude-code"),
            Use::Load(Surface::Resource),
            NOW,
        );
        add(
            &mut history,
            &old,
            Some("claude-code"),
            Use::Load(Surface::Tool),
            NOW - 10 * DAY,
        );
        let served = [&pdf, &docx, &old];
        let report = Report::new(&history, served, Day(20_787), 7, None);
        assert_eq!(report.from.to_string(), "2026-11-24");
        let names: Vec<&str> = report.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pdf", "docx"]);
        let pdf_use = &report.skills[0];
        assert_eq!(pdf_use.loads, 2);
        assert_eq!(pdf_use.daily, [0, 0, 0, 0, 0, 1, 1]);
        assert_eq!(pdf_use.surfaces.prompt, 1);
        assert_eq!(pdf_use.place.as_deref(), Some("/skills/pdf"));
        assert_eq!(pdf_use.files["a.md"], 1);
        assert_eq!(report.unused.len(), 1);
        assert_eq!(report.unused[0].place, "/skills/old");
        assert_eq!(report.clients[0].client, "claude-code");
        assert_eq!((report.clients[0].loads, report.clients[0].skills), (2, 2));
        assert_eq!(report.sources[0].source, "user");
        assert_eq!((report.sources[0].skills, report.sources[0].used), (3, 2));
        // One client only.
        let cursor = Report::new(&history, served, Day(20_787), 7, Some("cursor*"));
        assert_eq!(cursor.skills.len(), 1);
        assert_eq!(cursor.skills[0].files.len(), 0);
        assert_eq!(cursor.unused.len(), 2);
    }
}
