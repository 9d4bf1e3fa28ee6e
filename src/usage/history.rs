//! [`History`]: the uses of skills, day by day, in memory and as the usage
//! file writes them (behaviour.md §21.2).
//!
//! The file is two lines of JSON. The first is the version and the skills
//! loaded in the [`RECENT_DAYS`] days before the file was written, most
//! first (`[source, root, name, loads]`, at most [`MAX_RECENT`] of them and
//! [`MAX_RECENT_BYTES`]): all the catalog's order needs, read at start-up
//! without the rest ([`recent`]). The second is the history:
//!
//! ```text
//! {"skillserve_usage":1,"recent":[["user","/home/me/.claude/skills","pdf",12],…]}
//! {"skills":[["user","/home/me/.claude/skills","pdf"],…],
//!  "clients":["claude-code",…],
//!  "days":[{"day":"2026-11-30",
//!           "loads":[[0,0,3,0,0,1,1764510000],…],
//!           "files":[[0,0,"references/forms.md",2],…]},…]}
//! ```
//!
//! `skills` are `[source, root, name]` ([`SkillId`]), `clients` the names
//! clients gave (`""`: none). A `loads` row is `[skill, client, tool,
//! prompt, skills_get, resource, last]`: indexes into the two tables, the
//! loads of that day through each surface, and the last one's time (seconds
//! since the epoch). A `files` row is `[skill, client, path, reads]`. Days are UTC,
//! oldest first; rows are ordered most used first.
//!
//! The file never exceeds its cap: when written, days are taken newest
//! first while they fit, and when the newest alone does not fit, its most
//! used rows are.

/// Skills in the first line's `recent`, at most.
pub const MAX_RECENT: usize = 500;
/// The first line's bytes, at most.
pub const MAX_RECENT_BYTES: usize = 64 * 1024;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::date::{Day, day_of};
use super::{
    MAX_CLIENT_CHARS, MAX_CLIENTS_PER_DAY, MAX_FILE_BYTES, OTHER_CLIENTS, RECENT_DAYS,
    RETENTION_DAYS, SkillId, Use,
};

/// The maps of a history: keys are small, and hashed for every use.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// A table numbered in the order of insertion, kept once.
type Table<T> = indexmap::IndexSet<T, foldhash::fast::RandomState>;
use crate::disk;

/// The format's version, the first key of the file.
const VERSION: u64 = 1;

/// The loads of one skill by one client on one day.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loads {
    /// Per surface, in [`Surface::ALL`]'s order.
    pub by: [u32; 4],
    /// The last one's time, in seconds since the epoch.
    pub last: u64,
}

impl Loads {
    pub fn total(&self) -> u64 {
        self.by.iter().map(|&n| u64::from(n)).sum()
    }

    fn add(&mut self, other: &Loads) {
        for (mine, theirs) in self.by.iter_mut().zip(other.by) {
            *mine = mine.saturating_add(theirs);
        }
        self.last = self.last.max(other.last);
    }
}

/// A file read: (skill, client, the file's path in the skill's folder).
type FileKey = (u32, u32, Box<str>);

/// One day's uses: by (skill, client) and by (skill, client, file), as
/// indexes into the history's tables.
#[derive(Clone, Debug, Default)]
struct DayUse {
    loads: HashMap<(u32, u32), Loads>,
    files: HashMap<FileKey, u32>,
    /// Distinct clients of the day (bounded by [`MAX_CLIENTS_PER_DAY`]).
    clients: Vec<u32>,
}

/// The uses of skills, day by day.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// The skills named, each numbered by its place.
    skills: Table<SkillId>,
    /// The clients named, each numbered by its place.
    clients: Table<Box<str>>,
    days: BTreeMap<Day, DayUse>,
    /// About how many bytes the file of this history would take: what
    /// bounds a history that grows between two writes.
    approx_bytes: usize,
}

/// Why the usage file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] disk::ReadError),
    #[error("not a usage file of skillserve: {0}")]
    Invalid(String),
    #[error("written by another version of skillserve (format {0}; this one reads format 1)")]
    Version(u64),
}

/// A history of at most this many approximate bytes takes no new entries
/// (counts of entries it has still grow): twice the file's cap, so that a
/// full file and the uses since its last write both fit.
const MAX_APPROX_BYTES: usize = 2 * MAX_FILE_BYTES;

impl History {
    pub fn is_empty(&self) -> bool {
        self.days.is_empty()
    }

    /// Records one use of the skill `id` by the client called `client`
    /// (`None`: it gave no name) at `at` (seconds since the epoch). `false`
    /// when the history is full and the use needed a new entry.
    pub fn add(&mut self, id: &SkillId, client: Option<&str>, what: &Use, at: u64) -> bool {
        let day = day_of(at);
        match what {
            Use::Load(surface) => {
                let mut loads = Loads {
                    last: at,
                    ..Loads::default()
                };
                loads.by[surface.index()] = 1;
                self.add_loads(day, id, client.unwrap_or(""), &loads)
            }
            Use::File(path) => self.add_reads(day, id, client.unwrap_or(""), path, 1),
        }
    }

    /// Adds every use of `other` to this history (`false` when some did not
    /// fit).
    pub fn merge(&mut self, other: &History) -> bool {
        let mut all = true;
        for (&day, uses) in &other.days {
            for (&(skill, client), loads) in &uses.loads {
                let id = &other.skills[skill as usize];
                let client = &other.clients[client as usize];
                all &= self.add_loads(day, id, client, loads);
            }
            for ((skill, client, path), &reads) in &uses.files {
                let id = &other.skills[*skill as usize];
                let client = &other.clients[*client as usize];
                all &= self.add_reads(day, id, client, path, reads);
            }
        }
        all
    }

    /// Drops the days older than [`RETENTION_DAYS`] before `today`, and
    /// days after tomorrow (a clock set wrong once).
    pub fn prune(&mut self, today: Day) {
        let first = today.minus(RETENTION_DAYS - 1);
        let last = Day(today.0.saturating_add(1));
        self.days.retain(|&day, _| first <= day && day <= last);
    }

    fn skill(&mut self, id: &SkillId) -> Option<u32> {
        match self.skills.get_index_of(id) {
            Some(index) => Some(index as u32),
            None => self.new_skill(id.clone()),
        }
    }

    /// Numbers `id`, not named yet (`None`: the history is full).
    fn new_skill(&mut self, id: SkillId) -> Option<u32> {
        let cost = id.source.len() + id.root.len() + id.name.len() + 12;
        if self.approx_bytes + cost > MAX_APPROX_BYTES {
            return None;
        }
        self.approx_bytes += cost;
        Some(self.skills.insert_full(id).0 as u32)
    }

    fn client(&mut self, name: &str) -> Option<u32> {
        let name = match name.char_indices().nth(MAX_CLIENT_CHARS) {
            Some((end, _)) => &name[..end],
            None => name,
        };
        if let Some(index) = self.clients.get_index_of(name) {
            return Some(index as u32);
        }
        let cost = name.len() + 4;
        if self.approx_bytes + cost > MAX_APPROX_BYTES {
            return None;
        }
        self.approx_bytes += cost;
        Some(self.clients.insert_full(name.into()).0 as u32)
    }

    /// The index of the client called `name` on `day`: past
    /// [`MAX_CLIENTS_PER_DAY`] distinct clients, [`OTHER_CLIENTS`]'s.
    fn day_client(&mut self, day: Day, name: &str) -> Option<u32> {
        let mut client = self.client(name)?;
        let today = self.days.entry(day).or_default();
        if !today.clients.contains(&client) {
            if today.clients.len() >= MAX_CLIENTS_PER_DAY {
                client = self.client(OTHER_CLIENTS)?;
            }
            let today = self.days.entry(day).or_default();
            if !today.clients.contains(&client) {
                today.clients.push(client);
            }
        }
        Some(client)
    }

    fn add_loads(&mut self, day: Day, id: &SkillId, client: &str, loads: &Loads) -> bool {
        let (Some(skill), Some(client)) = (self.skill(id), self.day_client(day, client)) else {
            return false;
        };
        const ROW: usize = 40;
        let fits = self.approx_bytes + ROW <= MAX_APPROX_BYTES;
        let today = self.days.entry(day).or_default();
        match today.loads.get_mut(&(skill, client)) {
            Some(kept) => kept.add(loads),
            None if fits => {
                today.loads.insert((skill, client), *loads);
                self.approx_bytes += ROW;
            }
            None => return false,
        }
        true
    }

    fn add_reads(&mut self, day: Day, id: &SkillId, client: &str, path: &str, reads: u32) -> bool {
        let (Some(skill), Some(client)) = (self.skill(id), self.day_client(day, client)) else {
            return false;
        };
        let cost = path.len() + 28;
        let fits = self.approx_bytes + cost <= MAX_APPROX_BYTES;
        let today = self.days.entry(day).or_default();
        let key = (skill, client, Box::<str>::from(path));
        match today.files.get_mut(&key) {
            Some(kept) => *kept = kept.saturating_add(reads),
            None if fits => {
                today.files.insert(key, reads);
                self.approx_bytes += cost;
            }
            None => return false,
        }
        true
    }

    /// Every day's loads: day, skill, client name, loads.
    pub fn loads(&self) -> impl Iterator<Item = (Day, &SkillId, &str, &Loads)> {
        self.days.iter().flat_map(move |(&day, uses)| {
            uses.loads.iter().map(move |(&(skill, client), loads)| {
                (
                    day,
                    &self.skills[skill as usize],
                    &*self.clients[client as usize],
                    loads,
                )
            })
        })
    }

    /// Every day's file reads: day, skill, client name, path, reads.
    pub fn reads(&self) -> impl Iterator<Item = (Day, &SkillId, &str, &str, u32)> {
        self.days.iter().flat_map(move |(&day, uses)| {
            uses.files
                .iter()
                .map(move |((skill, client, path), &reads)| {
                    (
                        day,
                        &self.skills[*skill as usize],
                        &*self.clients[*client as usize],
                        &**path,
                        reads,
                    )
                })
        })
    }

    /// The days recorded, oldest first.
    pub fn days(&self) -> impl Iterator<Item = Day> + '_ {
        self.days.keys().copied()
    }

    /// The skills loaded in the [`RECENT_DAYS`] days up to `today`, most
    /// loads first (then by identity).
    pub fn recent(&self, today: Day) -> Vec<(&SkillId, u32)> {
        let from = today.minus(RECENT_DAYS - 1);
        let mut totals: HashMap<u32, u32> = HashMap::default();
        for (&day, uses) in self.days.range(from..=today) {
            debug_assert!(from <= day);
            for (&(skill, _), loads) in &uses.loads {
                let total = totals.entry(skill).or_default();
                *total = total.saturating_add(u32::try_from(loads.total()).unwrap_or(u32::MAX));
            }
        }
        let mut recent: Vec<(&SkillId, u32)> = totals
            .into_iter()
            .map(|(skill, loads)| (&self.skills[skill as usize], loads))
            .collect();
        recent.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        recent
    }

    /// The file's text as of `today`: at most `cap` bytes (see the
    /// module's comment).
    pub fn to_json(&self, cap: usize, today: Day) -> Vec<u8> {
        let mut first = String::from("{\"skillserve_usage\":1,\"recent\":[");
        for (count, (id, loads)) in self.recent(today).into_iter().enumerate() {
            let entry = format!(
                "[{},{},{},{loads}]",
                json(&id.source),
                json(&id.root),
                json(&id.name)
            );
            // Half the cap at most, so that a small cap keeps some days.
            let room = MAX_RECENT_BYTES.min(cap / 2);
            if count == MAX_RECENT || first.len() + 1 + entry.len() + 3 > room {
                break;
            }
            if count > 0 {
                first.push(',');
            }
            first.push_str(&entry);
        }
        first.push_str("]}\n");
        let cap = cap.saturating_sub(first.len() + 1);
        let mut out = Writer::default();
        let mut days: Vec<String> = Vec::new();
        for (&day, uses) in self.days.iter().rev() {
            let mark = out.mark();
            let text = out.day(self, day, uses, None);
            if out.fits(&days, text.len(), cap) {
                days.push(text);
                continue;
            }
            out.rollback(mark);
            if days.is_empty() {
                // The newest day alone is too large: its most used rows.
                let text = out.day(self, day, uses, Some((cap, &days)));
                days.push(text);
            }
            break;
        }
        days.reverse();
        first.push_str(&out.finish(&days));
        first.push('\n');
        first.into_bytes()
    }

    /// Parses the text of a usage file.
    pub fn parse(bytes: &[u8]) -> Result<History, ReadError> {
        let invalid = |e: serde_json::Error| ReadError::Invalid(e.to_string());
        let newline = memchr::memchr(b'\n', bytes);
        version(&bytes[..newline.unwrap_or(bytes.len())])?;
        let newline =
            newline.ok_or_else(|| ReadError::Invalid("not two lines of JSON".to_owned()))?;
        let file: FileV1 = serde_json::from_slice(&bytes[newline + 1..]).map_err(invalid)?;
        let mut history = History::default();
        let (skills, clients) = (file.skills.len() as u64, file.clients.len() as u64);
        for (source, root, name) in file.skills {
            let id = SkillId { source, root, name };
            if history.skills.contains(&id) {
                return Err(ReadError::Invalid(format!(
                    "skill {:?} listed twice",
                    id.name
                )));
            }
            history.new_skill(id);
        }
        for name in &file.clients {
            history.client(name);
        }
        for day in file.days {
            let number = Day::parse(&day.day)
                .ok_or_else(|| ReadError::Invalid(format!("{:?} is not a day", day.day)))?;
            let uses = history.days.entry(number).or_default();
            for (skill, client, tool, prompt, get, resource, last) in day.loads {
                if u64::from(skill) >= skills || u64::from(client) >= clients {
                    return Err(ReadError::Invalid(format!(
                        "a load of {} names no skill or client",
                        day.day
                    )));
                }
                let loads = Loads {
                    by: [tool, prompt, get, resource],
                    last,
                };
                uses.loads.entry((skill, client)).or_default().add(&loads);
                if !uses.clients.contains(&client) {
                    uses.clients.push(client);
                }
            }
            for (skill, client, path, reads) in day.files {
                if u64::from(skill) >= skills || u64::from(client) >= clients {
                    return Err(ReadError::Invalid(format!(
                        "a file read of {} names no skill or client",
                        day.day
                    )));
                }
                if !uses.clients.contains(&client) {
                    uses.clients.push(client);
                }
                let reads_now = uses.files.entry((skill, client, path.into())).or_default();
                *reads_now = reads_now.saturating_add(reads);
            }
        }
        history.approx_bytes = bytes.len();
        Ok(history)
    }

    /// Reads the usage file at `path`: `Ok(None)` when there is none.
    pub fn read(path: &Path) -> Result<Option<History>, ReadError> {
        // A file over the cap was not written by skillserve.
        match disk::read_bytes(path, MAX_FILE_BYTES as u64) {
            Ok(bytes) => History::parse(&bytes).map(Some),
            Err(disk::ReadError::Io(err)) if disk::is_gone(&err) => Ok(None),
            // Over the cap, or not a regular file: not one skillserve wrote.
            Err(err @ (disk::ReadError::TooLarge { .. } | disk::ReadError::NotRegular)) => {
                Err(ReadError::Invalid(err.to_string()))
            }
            Err(err) => Err(err.into()),
        }
    }
}

/// Checks the version in the file's first line.
fn version(first: &[u8]) -> Result<(), ReadError> {
    let head: serde_json::Value =
        serde_json::from_slice(first).map_err(|e| ReadError::Invalid(e.to_string()))?;
    match head
        .get("skillserve_usage")
        .and_then(serde_json::Value::as_u64)
    {
        Some(VERSION) => Ok(()),
        Some(other) => Err(ReadError::Version(other)),
        None => Err(ReadError::Invalid(
            "no \"skillserve_usage\" version".to_owned(),
        )),
    }
}

/// The first line of the usage file at `path`, as `(skill, loads)` pairs:
/// what the catalog's order needs, read without the rest of the file.
/// Nothing when there is no file; an error when it is not one of this
/// format.
pub fn recent(path: &Path) -> Result<Vec<(SkillId, u32)>, ReadError> {
    let (mut file, _) = match disk::open_regular(path, MAX_FILE_BYTES as u64) {
        Ok(opened) => opened,
        Err(disk::ReadError::Io(err)) if disk::is_gone(&err) => return Ok(Vec::new()),
        Err(err) => return Err(ReadError::Invalid(err.to_string())),
    };
    let mut bytes = Vec::with_capacity(MAX_RECENT_BYTES);
    disk::fill(
        &mut file,
        &mut bytes,
        MAX_RECENT_BYTES,
        MAX_FILE_BYTES as u64,
    )?;
    let newline = memchr::memchr(b'\n', &bytes);
    version(&bytes[..newline.unwrap_or(bytes.len())])?;
    let newline = newline.ok_or_else(|| ReadError::Invalid("no first line".to_owned()))?;
    #[derive(Deserialize)]
    struct Head {
        recent: Vec<(String, String, String, u32)>,
    }
    let head: Head =
        serde_json::from_slice(&bytes[..newline]).map_err(|e| ReadError::Invalid(e.to_string()))?;
    Ok(head
        .recent
        .into_iter()
        .map(|(source, root, name, loads)| (SkillId { source, root, name }, loads))
        .collect())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileV1 {
    skills: Vec<(String, String, String)>,
    clients: Vec<String>,
    days: Vec<DayV1>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DayV1 {
    day: String,
    loads: Vec<(u32, u32, u32, u32, u32, u32, u64)>,
    files: Vec<(u32, u32, String, u32)>,
}

/// The text of the file, made piece by piece so that its size is known
/// exactly before it is put together: the tables of the skills and clients
/// the kept days name (renumbered in the order they are first named, newest
/// day first).
#[derive(Default)]
struct Writer {
    skills: Vec<String>,
    skills_bytes: usize,
    /// History index → index in the file.
    skill_map: HashMap<u32, u32>,
    /// File index → history index, to undo.
    skill_order: Vec<u32>,
    clients: Vec<String>,
    clients_bytes: usize,
    client_map: HashMap<u32, u32>,
    client_order: Vec<u32>,
}

const HEAD: &str = "{\"skills\":[";
const CLIENTS: &str = "],\"clients\":[";
const DAYS: &str = "],\"days\":[";
const TAIL: &str = "]}";

/// The bytes of a JSON list of items of `bytes` bytes in all.
fn list(count: usize, bytes: usize) -> usize {
    bytes + count.saturating_sub(1)
}

fn json(text: &str) -> String {
    serde_json::to_string(text).expect("a string is always JSON")
}

impl Writer {
    fn mark(&self) -> (usize, usize, usize, usize) {
        (
            self.skills.len(),
            self.skills_bytes,
            self.clients.len(),
            self.clients_bytes,
        )
    }

    fn rollback(
        &mut self,
        (skills, skills_bytes, clients, clients_bytes): (usize, usize, usize, usize),
    ) {
        for old in self.skill_order.drain(skills..) {
            self.skill_map.remove(&old);
        }
        self.skills.truncate(skills);
        self.skills_bytes = skills_bytes;
        for old in self.client_order.drain(clients..) {
            self.client_map.remove(&old);
        }
        self.clients.truncate(clients);
        self.clients_bytes = clients_bytes;
    }

    fn skill(&mut self, history: &History, index: u32) -> u32 {
        if let Some(&new) = self.skill_map.get(&index) {
            return new;
        }
        let id = &history.skills[index as usize];
        let text = format!(
            "[{},{},{}]",
            json(&id.source),
            json(&id.root),
            json(&id.name)
        );
        let new = self.skills.len() as u32;
        self.skills_bytes += text.len();
        self.skills.push(text);
        self.skill_map.insert(index, new);
        self.skill_order.push(index);
        new
    }

    fn client(&mut self, history: &History, index: u32) -> u32 {
        if let Some(&new) = self.client_map.get(&index) {
            return new;
        }
        let text = json(&history.clients[index as usize]);
        let new = self.clients.len() as u32;
        self.clients_bytes += text.len();
        self.clients.push(text);
        self.client_map.insert(index, new);
        self.client_order.push(index);
        new
    }

    /// The size of the file with these tables and `days` plus one more
    /// day of `more` bytes (0: none).
    fn size(&self, days: &[String], more: usize) -> usize {
        let count = days.len() + usize::from(more > 0);
        let bytes = days.iter().map(String::len).sum::<usize>() + more;
        HEAD.len()
            + list(self.skills.len(), self.skills_bytes)
            + CLIENTS.len()
            + list(self.clients.len(), self.clients_bytes)
            + DAYS.len()
            + list(count, bytes)
            + TAIL.len()
    }

    fn fits(&self, days: &[String], more: usize, cap: usize) -> bool {
        self.size(days, more) <= cap
    }

    /// One day's text. With `partial` (the cap and the days kept), only as
    /// many of its rows, most used first, as keep the file within the cap.
    fn day(
        &mut self,
        history: &History,
        day: Day,
        uses: &DayUse,
        partial: Option<(usize, &[String])>,
    ) -> String {
        // Most used first, then in the order the history named them: the
        // same history always gives the same text.
        let mut loads: Vec<(&(u32, u32), &Loads)> = uses.loads.iter().collect();
        loads.sort_unstable_by(|a, b| b.1.total().cmp(&a.1.total()).then(a.0.cmp(b.0)));
        let mut files: Vec<(&FileKey, &u32)> = uses.files.iter().collect();
        files.sort_unstable_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let skeleton = format!("{{\"day\":\"{day}\",\"loads\":[],\"files\":[]}}");
        let (mut load_rows, mut file_rows): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
        let rows_bytes = |rows: &[String]| list(rows.len(), rows.iter().map(String::len).sum());
        let fits = |writer: &Writer, loads: &[String], files: &[String]| match partial {
            None => true,
            Some((cap, days)) => {
                let more = skeleton.len() + rows_bytes(loads) + rows_bytes(files);
                writer.fits(days, more, cap)
            }
        };
        for (&(skill, client), l) in loads {
            let mark = self.mark();
            let (s, c) = (self.skill(history, skill), self.client(history, client));
            let [tool, prompt, get, resource] = l.by;
            load_rows.push(format!(
                "[{s},{c},{tool},{prompt},{get},{resource},{}]",
                l.last
            ));
            if !fits(self, &load_rows, &file_rows) {
                load_rows.pop();
                self.rollback(mark);
                break;
            }
        }
        for ((skill, client, path), reads) in files {
            let mark = self.mark();
            let (s, c) = (self.skill(history, *skill), self.client(history, *client));
            file_rows.push(format!("[{s},{c},{},{reads}]", json(path)));
            if !fits(self, &load_rows, &file_rows) {
                file_rows.pop();
                self.rollback(mark);
                break;
            }
        }
        format!(
            "{{\"day\":\"{day}\",\"loads\":[{}],\"files\":[{}]}}",
            load_rows.join(","),
            file_rows.join(",")
        )
    }

    fn finish(self, days: &[String]) -> String {
        let expected = self.size(days, 0);
        let out = format!(
            "{HEAD}{}{CLIENTS}{}{DAYS}{}{TAIL}",
            self.skills.join(","),
            self.clients.join(","),
            days.join(",")
        );
        debug_assert_eq!(out.len(), expected);
        out
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;
    use crate::usage::Surface;

    fn id(name: &str) -> SkillId {
        SkillId {
            source: "user".into(),
            root: "/home/u/.claude/skills".into(),
            name: name.into(),
        }
    }

    const DAY: u64 = 86_400;
    /// 2026-11-30, noon UTC.
    const NOW: u64 = 20_787 * DAY + 43_200;

    #[test]
    fn uses_are_added_up_per_day_skill_and_client_and_written_as_documented() {
        let mut history = History::default();
        let pdf = id("pdf");
        assert!(history.add(&pdf, Some("claude-code"), &Use::Load(Surface::Tool), NOW));
        assert!(history.add(
            &pdf,
            Some("claude-code"),
            &Use::Load(Surface::Tool),
            NOW + 5
        ));
        assert!(history.add(
            &pdf,
            Some("claude-code"),
            &Use::Load(Surface::Resource),
            NOW + 1
        ));
        assert!(history.add(&pdf, None, &Use::Load(Surface::Prompt), NOW - DAY));
        assert!(history.add(&pdf, Some("x"), &Use::File("references/a.md".into()), NOW));
        assert!(history.add(&pdf, Some("y"), &Use::File("references/a.md".into()), NOW));
        let text = String::from_utf8(history.to_json(MAX_FILE_BYTES, day_of(NOW))).unwrap();
        assert_eq!(
            text,
            format!(
                "{{\"skillserve_usage\":1,\"recent\":[[\"user\",\"/home/u/.claude/skills\",\"pdf\",4]]}}\n\
                 {{\"skills\":[[\"user\",\"/home/u/.claude/skills\",\"pdf\"]],\"clients\":[\"claude-code\",\"x\",\"y\",\"\"],\"days\":[\
                 {{\"day\":\"2026-11-29\",\"loads\":[[0,3,0,1,0,0,{}]],\"files\":[]}},\
                 {{\"day\":\"2026-11-30\",\"loads\":[[0,0,2,0,0,1,{}]],\"files\":[[0,1,\"references/a.md\",1],[0,2,\"references/a.md\",1]]}}]}}\n",
                NOW - DAY,
                NOW + 5
            )
        );
        let again = History::parse(text.as_bytes()).unwrap();
        assert_eq!(again.to_json(MAX_FILE_BYTES, day_of(NOW)), text.as_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.json");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(recent(&path).unwrap(), [(pdf.clone(), 4)]);
        assert_eq!(recent(&dir.path().join("none")).unwrap(), []);
    }

    #[test]
    fn days_past_ninety_are_dropped_and_merging_adds_counts() {
        let mut history = History::default();
        for days_ago in [0, 89, 90, 200] {
            history.add(
                &id("a"),
                None,
                &Use::Load(Surface::Tool),
                NOW - days_ago * DAY,
            );
        }
        history.prune(day_of(NOW));
        let kept: Vec<String> = history.days().map(|d| d.to_string()).collect();
        assert_eq!(kept, ["2026-09-02", "2026-11-30"]);
        let mut other = History::default();
        other.add(&id("a"), None, &Use::Load(Surface::Tool), NOW);
        other.add(&id("b"), None, &Use::Load(Surface::SkillsGet), NOW);
        assert!(history.merge(&other));
        let today: Vec<(String, u64)> = history
            .loads()
            .filter(|(day, ..)| *day == day_of(NOW))
            .map(|(_, skill, _, loads)| (skill.name.clone(), loads.total()))
            .collect();
        let mut today = today;
        today.sort();
        assert_eq!(today, [("a".to_owned(), 2), ("b".to_owned(), 1)]);
    }

    #[test]
    fn the_file_keeps_the_newest_days_and_the_most_used_rows_within_its_cap() {
        let mut history = History::default();
        for day in 0..60u64 {
            for skill in 0..40 {
                for _ in 0..(skill % 3 + 1) {
                    history.add(
                        &id(&format!("skill-{skill:02}")),
                        Some("claude-code"),
                        &Use::Load(Surface::Tool),
                        NOW - day * DAY,
                    );
                }
            }
        }
        let today = day_of(NOW);
        let whole = history.to_json(usize::MAX, today);
        for cap in [200, 1_000, 5_000, whole.len() / 2, whole.len()] {
            let text = history.to_json(cap, today);
            assert!(text.len() <= cap, "{} > {cap}", text.len());
            let kept = History::parse(&text).unwrap();
            // Whatever is kept is the newest.
            if let Some(oldest) = kept.days().next() {
                let dropped = history.days().filter(|&d| d < oldest).count();
                assert_eq!(kept.days().count() + dropped, history.days().count());
            }
            assert!(
                kept.days().last() == Some(day_of(NOW)) || cap < 200,
                "{cap}"
            );
        }
        // With room for part of a day: its most used rows.
        let text = history.to_json(2_000, today);
        let kept = History::parse(&text).unwrap();
        assert!(kept.loads().all(|(_, _, _, loads)| loads.total() == 3));
        assert!(kept.loads().count() > 3);
    }

    #[test]
    fn clients_are_bounded_per_day_and_names_are_cut() {
        let mut history = History::default();
        for n in 0..40 {
            history.add(
                &id("a"),
                Some(&format!("client-{n}")),
                &Use::Load(Surface::Tool),
                NOW,
            );
        }
        history.add(
            &id("a"),
            Some(&"x".repeat(100)),
            &Use::Load(Surface::Tool),
            NOW + DAY,
        );
        let mut names: Vec<&str> = history
            .loads()
            .filter(|(day, ..)| *day == day_of(NOW))
            .map(|(_, _, client, _)| client)
            .collect();
        names.sort_unstable();
        assert_eq!(names.len(), MAX_CLIENTS_PER_DAY + 1);
        assert!(names.contains(&OTHER_CLIENTS));
        let other = history
            .loads()
            .find(|(_, _, client, _)| *client == OTHER_CLIENTS)
            .unwrap();
        assert_eq!(other.3.total(), 40 - MAX_CLIENTS_PER_DAY as u64);
        let long = history
            .loads()
            .find(|(day, ..)| *day != day_of(NOW))
            .unwrap();
        assert_eq!(long.2.chars().count(), MAX_CLIENT_CHARS);
    }

    #[test]
    fn a_file_that_is_not_ours_or_of_another_version_is_refused() {
        let error = |text: &str| History::parse(text.as_bytes()).unwrap_err().to_string();
        assert_eq!(
            error("{\"skillserve_usage\":2}\n{}"),
            "written by another version of skillserve (format 2; this one reads format 1)"
        );
        assert_eq!(
            error("[1,2]\n"),
            "not a usage file of skillserve: no \"skillserve_usage\" version"
        );
        assert_eq!(
            error("{\"skillserve_usage\":1}"),
            "not a usage file of skillserve: not two lines of JSON"
        );
        assert!(error("{\n").starts_with("not a usage file of skillserve: "));
        let head = "{\"skillserve_usage\":1,\"recent\":[]}\n";
        assert_eq!(
            error(&format!(
                "{head}{{\"skills\":[],\"clients\":[],\"days\":[{{\"day\":\"2026-11-30\",\"loads\":[[0,0,1,0,0,0,5]],\"files\":[]}}]}}"
            )),
            "not a usage file of skillserve: a load of 2026-11-30 names no skill or client"
        );
        assert_eq!(
            error(&format!(
                "{head}{{\"skills\":[],\"clients\":[],\"days\":[{{\"day\":\"yesterday\",\"loads\":[],\"files\":[]}}]}}"
            )),
            "not a usage file of skillserve: \"yesterday\" is not a day"
        );
    }
}
