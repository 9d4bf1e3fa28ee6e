//! Who sees which skills (behaviour.md §17): the filters of `config.toml`,
//! its client profiles, and the built-in profiles of clients that load some
//! skills folders themselves, turned into each client's [`View`] of a
//! snapshot.
//!
//! A client is known by the name it gives (`clientInfo.name`): [`Profiles::key`]
//! picks the first `[clients."<glob>"]` profile whose glob matches it (or the
//! id of its row in the native-clients table) and that row. Views are
//! computed once per snapshot and key ([`Profiles::view`]), never per call.

mod decide;
mod filter;
mod native;
mod view;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::config::file::Profile;
use crate::config::native::{self as table, NativeClient};
use crate::config::{Placement, Rules, Settings};
use crate::roots;
use crate::snapshot::Snapshot;
use crate::text::printable;
use crate::usage::Ranks;

pub use decide::{Decision, Verdict};
pub use filter::Rule;
pub use view::{Presentation, View, ViewId};

use decide::Rules as ClientRules;
use filter::Filter;
use native::NativeFolders;

/// Which settings apply to a client: its profile of `config.toml` and its
/// row of the native-clients table, by position (`None`: none matched, or
/// `native = false`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Key {
    profile: Option<u16>,
    native: Option<u16>,
}

/// What a client is offered besides the skills: where its catalog goes and
/// in how many characters, and the prompts and resources surfaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Surfaces {
    pub description_budget: usize,
    pub prompts: bool,
    pub resources: bool,
    pub catalog: Placement,
}

/// Why a client's catalog goes where it goes (`list --client`, `config`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacementWhy<'a> {
    /// The client's profile sets `catalog`.
    Profile(&'a Profile, usize),
    /// The client's row of the native table says it defers tool
    /// definitions.
    Defers(&'static NativeClient),
    /// Neither: the tool description.
    Default,
}

/// The filters and profiles of one set of settings, ready to apply.
#[derive(Debug)]
pub struct Profiles {
    top: Filter,
    profiles: Vec<(Profile, Filter)>,
    /// One per row of the native-clients table, in its order.
    natives: Vec<NativeFolders>,
    /// The settings of a client no profile changes.
    defaults: Surfaces,
    /// Served over HTTP: the `instructions` say how to read files remotely.
    remote: bool,
    /// How often each skill was used lately: the catalog's order over its
    /// budget.
    ranks: Arc<Ranks>,
    rules: Rules,
    /// Client names already matched, with their keys: the server finds the
    /// key of every request's client, and matching a name against every
    /// profile and row takes about a microsecond (`benches/scan.rs`).
    keys: Mutex<HashMap<Box<str>, Key>>,
}

/// Client names whose keys [`Profiles`] remembers at most (a stdio server
/// has one client; a team server a few): past that, it starts over.
const MAX_KEYS: usize = 64;

impl Profiles {
    /// Reads the project's levels from the disk (for the clients that load
    /// project folders): call it off the async runtime.
    pub fn new(settings: &Settings) -> Profiles {
        let config = &settings.config;
        let levels = config
            .project_dir
            .as_deref()
            .map(roots::project_dirs)
            .unwrap_or_default();
        let natives = table::clients()
            .iter()
            .map(|client| NativeFolders::new(client, config, &levels))
            .collect();
        let rules = settings.rules.clone();
        Profiles {
            top: Filter::new(&rules.filters),
            profiles: rules
                .profiles
                .iter()
                .map(|profile| (profile.clone(), Filter::new(&profile.filters)))
                .collect(),
            natives,
            defaults: Surfaces {
                description_budget: settings.serve.description_budget,
                prompts: settings.serve.prompts,
                resources: settings.serve.resources,
                catalog: Placement::Tool,
            },
            remote: settings.serve.http.is_some(),
            ranks: Arc::default(),
            rules,
            keys: Mutex::new(HashMap::new()),
        }
    }

    /// These profiles, with the catalog ordered by `ranks` over its budget.
    pub fn ranked(mut self, ranks: Arc<Ranks>) -> Profiles {
        self.ranks = ranks;
        self
    }

    /// How often each skill was used lately, as the catalog knows it.
    pub fn ranks(&self) -> &Arc<Ranks> {
        &self.ranks
    }

    /// The key of the client that calls itself `client` (`None`: a client
    /// that gave no name).
    pub fn key(&self, client: Option<&str>) -> Key {
        let Some(name) = client else {
            return Key::default();
        };
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&key) = keys.get(name) {
            return key;
        }
        let key = self.match_key(name);
        if keys.len() == MAX_KEYS {
            keys.clear();
        }
        keys.insert(name.into(), key);
        key
    }

    /// The key of the client called `name`, matched against every profile
    /// and row.
    fn match_key(&self, name: &str) -> Key {
        let row = table::client_named(name);
        let profile = self.profiles.iter().position(|(profile, _)| {
            profile.glob.matches(name) || row.is_some_and(|(_, row)| profile.glob.matches(&row.id))
        });
        let native_off = profile.is_some_and(|p| {
            self.profiles[p]
                .0
                .native
                .as_ref()
                .is_some_and(|at| !at.value)
        });
        Key {
            profile: profile.map(|p| p as u16),
            native: row.filter(|_| !native_off).map(|(row, _)| row as u16),
        }
    }

    /// How many keys there can be: [`Profiles::slot`] is below this.
    pub fn slots(&self) -> usize {
        (self.profiles.len() + 1) * (self.natives.len() + 1)
    }

    /// A number for `key`, below [`Profiles::slots`]: where a list of
    /// per-key things keeps its one.
    pub fn slot(&self, key: Key) -> usize {
        let profile = key.profile.map_or(0, |p| usize::from(p) + 1);
        let native = key.native.map_or(0, |n| usize::from(n) + 1);
        profile * (self.natives.len() + 1) + native
    }

    /// The profile of `config.toml` that applies to `key`.
    pub fn profile(&self, key: Key) -> Option<&Profile> {
        key.profile.map(|p| &self.profiles[usize::from(p)].0)
    }

    /// The row of the native-clients table that applies to `key`.
    pub fn native(&self, key: Key) -> Option<&'static NativeClient> {
        key.native.map(|n| self.natives[usize::from(n)].client)
    }

    /// The budget and surfaces of `key`'s client: its profile's, unless a
    /// flag fixed them for every client; else, for a client of the native
    /// table, where its row puts the catalog and the characters it passes
    /// on (when fewer than the budget).
    pub fn surfaces(&self, key: Key) -> Surfaces {
        let mut surfaces = self.defaults;
        let native = self.native(key);
        surfaces.catalog = self.placement(key).0;
        let budget_set = self.rules.budget_flag
            || self
                .profile(key)
                .is_some_and(|p| p.description_budget.is_some());
        if let Some(limit) = native
            .and_then(|row| row.text_limit)
            .filter(|_| !budget_set)
        {
            surfaces.description_budget = surfaces.description_budget.min(limit);
        }
        if let Some(profile) = self.profile(key) {
            let rules = &self.rules;
            if let Some(at) = profile
                .description_budget
                .as_ref()
                .filter(|_| !rules.budget_flag)
            {
                surfaces.description_budget = at.value;
            }
            if let Some(at) = profile.prompts.as_ref().filter(|_| !rules.prompts_flag) {
                surfaces.prompts = at.value;
            }
            if let Some(at) = profile.resources.as_ref().filter(|_| !rules.resources_flag) {
                surfaces.resources = at.value;
            }
        }
        surfaces
    }

    /// Where `key`'s client is shown the catalog, and why: its profile's
    /// `catalog`, else its row's `defers_tools`, else the tool description.
    pub fn placement(&self, key: Key) -> (Placement, PlacementWhy<'_>) {
        if let Some(profile) = self.profile(key)
            && let Some(at) = &profile.catalog
        {
            return (at.value, PlacementWhy::Profile(profile, at.line));
        }
        match self.native(key).filter(|row| row.defers_tools) {
            Some(row) => (Placement::Instructions, PlacementWhy::Defers(row)),
            None => (Placement::Tool, PlacementWhy::Default),
        }
    }

    /// Whether some client may be offered prompts, and resources: what the
    /// server declares before it knows who asks.
    pub fn any_surfaces(&self) -> (bool, bool) {
        let keys = self
            .profiles
            .iter()
            .enumerate()
            .map(|(p, _)| Key {
                profile: Some(p as u16),
                native: None,
            })
            .chain([Key::default()]);
        keys.map(|key| self.surfaces(key))
            .fold((false, false), |(prompts, resources), s| {
                (prompts || s.prompts, resources || s.resources)
            })
    }

    fn rules(&self, key: Key) -> ClientRules<'_> {
        ClientRules {
            top: &self.top,
            own: key.profile.map(|p| {
                let (profile, filter) = &self.profiles[usize::from(p)];
                (filter, profile)
            }),
            native: key.native.map(|n| &self.natives[usize::from(n)]),
        }
    }

    /// What `key`'s client is shown of `snapshot`, and why not the rest.
    pub fn decide(&self, snapshot: &Snapshot, key: Key) -> Decision<'_> {
        self.rules(key).decide(snapshot)
    }

    /// `key`'s client's view of `snapshot`: O(skills), once per snapshot
    /// and key (on a blocking thread in the server).
    pub fn view(&self, snapshot: &Arc<Snapshot>, key: Key) -> View {
        let decision = self.decide(snapshot, key);
        let surfaces = self.surfaces(key);
        View::new(
            Arc::clone(snapshot),
            &decision,
            &Presentation {
                budget: surfaces.description_budget,
                placement: surfaces.catalog,
                remote: self.remote,
            },
            &self.ranks,
        )
    }

    /// [`Profiles::view`], reusing `previous` (the same key's view of the
    /// snapshot `snapshot` replaces, under these same settings) when
    /// nothing it depends on changed: the same skills, roots and
    /// duplicates.
    pub fn view_after(&self, previous: Option<&View>, snapshot: &Arc<Snapshot>, key: Key) -> View {
        match previous {
            Some(previous)
                if snapshot.same_skills(previous.snapshot())
                    && snapshot.also_found == previous.snapshot().also_found =>
            {
                let hidden_failed = self.rules(key).hidden_failed_of(snapshot);
                previous.rebased(Arc::clone(snapshot), hidden_failed)
            }
            _ => self.view(snapshot, key),
        }
    }

    /// Where `key`'s client (called `client`, as typed) is shown the
    /// catalog, in how many characters, and why, in two lines for
    /// `list --client` (behaviour.md §5.4).
    pub fn describe_catalog(&self, key: Key, client: &str) -> String {
        let surfaces = self.surfaces(key);
        let (placement, why) = self.placement(key);
        let place = match placement {
            Placement::Tool => "in the `skill` tool's description".to_owned(),
            Placement::Instructions => {
                "in the server's instructions; the `skill` tool's description points there"
                    .to_owned()
            }
            Placement::Both => {
                "in the `skill` tool's description and in the server's instructions".to_owned()
            }
        };
        let budget = surfaces.description_budget;
        let limited = self
            .native(key)
            .and_then(|row| row.text_limit.map(|limit| (row, limit)))
            .filter(|&(_, limit)| limit == budget && budget < self.defaults.description_budget);
        let chars = match limited {
            Some((row, limit)) => {
                format!("up to {limit} characters, all {} passes on", row.title)
            }
            None => format!("up to {budget} characters"),
        };
        let because = match why {
            PlacementWhy::Profile(profile, line) => format!(
                "because {} sets catalog = \"{}\" ({})",
                printable(&profile.header()),
                placement.as_str(),
                origin_of(profile, line)
            ),
            PlacementWhy::Defers(row) => format!(
                "because {} defers tool definitions behind a search, showing the model tool names and server instructions (catalog = \"tool\" in a profile changes that)",
                row.title
            ),
            PlacementWhy::Default => format!(
                "because {} is not known to defer tool definitions (catalog = \"instructions\" in a profile changes that)",
                printable(client)
            ),
        };
        format!("Catalog: {place} ({chars})\n  {because}")
    }

    /// The clients a person tells apart, for the skills manager's matrix
    /// of who sees what: any client that no profile or row matches, each
    /// row of the native-clients table (as a client of that row is matched,
    /// its profile included), and each profile of `config.toml` that no
    /// row's client takes.
    pub fn columns(&self) -> Vec<Column> {
        let mut columns = vec![Column {
            id: "*".to_owned(),
            title: "Any other client".to_owned(),
            kind: ColumnKind::Default,
            scope: None,
            key: Key::default(),
        }];
        let mut taken = vec![false; self.profiles.len()];
        for client in table::clients() {
            let key = self.match_key(&client_name(&client.id));
            if let Some(p) = key.profile {
                taken[usize::from(p)] = true;
            }
            columns.push(Column {
                id: client.id.clone(),
                title: client.title.clone(),
                kind: ColumnKind::Builtin,
                scope: Some(client.id.clone()),
                key,
            });
        }
        for (p, (profile, _)) in self.profiles.iter().enumerate() {
            if taken[p] {
                continue;
            }
            columns.push(Column {
                id: profile.text.clone(),
                title: profile.header(),
                kind: ColumnKind::Profile,
                scope: Some(profile.text.clone()),
                key: Key {
                    profile: Some(p as u16),
                    native: None,
                },
            });
        }
        columns
    }

    /// Who `key` is, in words, for `list --client` and the log: the
    /// profile and the native row that apply.
    pub fn describe(&self, key: Key) -> String {
        let profile = self
            .profile(key)
            .map(|p| format!("profile {} ({})", p.header(), p.origin));
        let native = self.native(key).map(|client| {
            format!(
                "built-in profile of {} (leaves out what it loads itself)",
                client.title
            )
        });
        match (profile, native) {
            (None, None) => "no profile".to_owned(),
            (Some(one), None) | (None, Some(one)) => one,
            (Some(profile), Some(native)) => format!("{profile} and the {native}"),
        }
    }
}

/// `config.toml:LINE` of a profile's key at `line`.
fn origin_of(profile: &Profile, line: usize) -> crate::config::Origin {
    match &profile.origin {
        crate::config::Origin::File { path, .. } => crate::config::Origin::File {
            path: Arc::clone(path),
            line,
        },
        other => other.clone(),
    }
}

/// One client, as the skills manager shows it ([`Profiles::columns`]).
#[derive(Clone, Debug)]
pub struct Column {
    /// `*` for any other client, a native row's id, or a profile's glob.
    pub id: String,
    /// What a person reads: `Claude Code`, `[clients."ci-*"]`.
    pub title: String,
    pub kind: ColumnKind,
    /// What `enable` / `disable --client` name to change this client's
    /// profile (`None`: the top level, every client).
    pub scope: Option<String>,
    pub key: Key,
}

/// Where a [`Column`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// A client no profile or row matches.
    Default,
    /// A row of the built-in table of clients that load skills themselves.
    Builtin,
    /// A `[clients."<glob>"]` profile of `config.toml`.
    Profile,
}

impl ColumnKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnKind::Default => "default",
            ColumnKind::Builtin => "builtin",
            ColumnKind::Profile => "profile",
        }
    }
}

/// The name a client gives, for a name typed on the command line: the id
/// of a row of the native-clients table (`codex`) stands for the name that
/// client sends (`codex-mcp-client`).
pub fn client_name(typed: &str) -> String {
    let by_id = table::clients()
        .iter()
        .find(|row| row.id.eq_ignore_ascii_case(typed));
    match by_id {
        Some(row) if table::client_named(typed).is_none() => {
            row.match_text[0].replace(['*', '?'], "")
        }
        _ => typed.to_owned(),
    }
}

#[cfg(test)]
mod tests;
