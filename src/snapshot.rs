//! The snapshot: the immutable, indexed result of one scan (behaviour.md §2,
//! §3.3).
//!
//! A snapshot is never changed after [`Snapshot::build`]; a refresh builds a new
//! one and swaps it in. Skills that must not be served (quarantined ones) are
//! withheld first, so that they take part in no collision and are no
//! candidate of any view: a same-named skill is served instead. Collisions
//! are settled next: names compare case-insensitively, the skill from the
//! higher-precedence root wins, and the other is kept as shadowed (with a
//! diagnostic) so that `list --all` and `check` can show it. Withheld skills
//! are kept too, with the reason.
//!
//! What one client sees of a snapshot is a view (`profiles`): the filters of
//! `config.toml` and the folders the client loads itself take skills out,
//! and a shadowed skill may take the place of one filtered out. So the
//! shadowed skills are kept beside the served ones ([`Snapshot::candidates`])
//! and indexed for the search too, and each knows the skill that hides it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use hashbrown::HashTable;

use crate::approvals;
use crate::config::Config;
use crate::diagnostic::{Code, Diagnostic, Finding};
use crate::disk::PathKey;
use crate::gate::Place;
use crate::installed::{self, Verify};
use crate::plugins;
use crate::roots::{self, Plugin, Root, Source};
use crate::scan::{self, AlsoFound, Dirs, Failed, Found, Scan};
use crate::search::SearchIndex;
use crate::security::{self, Candidate, Report, Seen, Verdict};
use crate::skill::Skill;

/// What one load keeps for the next: the parsed frontmatter and the
/// security reports, each valid while the files are unchanged.
#[derive(Default)]
pub struct Cache {
    pub scan: scan::Cache,
    pub security: security::Cache,
}

/// Scans everything `config` points at, reusing and refilling `cache`,
/// and withholds the skills the security screening quarantines.
/// `previous`, the snapshot this one replaces, lends its index when nothing
/// changed. Installed skills are checked by their recorded versions
/// ([`Verify::Stamps`]).
pub fn load(config: &Config, cache: &mut Cache, previous: Option<&Snapshot>) -> Snapshot {
    load_with(config, cache, previous, Verify::Stamps)
}

/// [`load`], checking installed skills as `verify` says (`check` hashes
/// every store entry).
pub fn load_with(
    config: &Config,
    cache: &mut Cache,
    previous: Option<&Snapshot>,
    verify: Verify,
) -> Snapshot {
    let mut roots = roots::roots(config);
    let installed = installed::discover(config, verify);
    roots.extend(installed.roots);
    let plugins = plugins::discover(config);
    roots.extend(plugins.roots);
    let mut scan = scan::scan(&roots, config.max_file_bytes, &mut cache.scan);
    scan.diagnostics.extend(installed.diagnostics);
    scan.dirs.missing_entries = installed.missing;
    scan.diagnostics.extend(plugins.diagnostics);
    // The server's first load lists installed skills as their installation
    // scanned them (`add` and `update` refuse error-level findings without
    // `--allow-risky`, and the store entry holds those very files): the
    // refresh right after start-up screens them like every skill that is
    // not the user's own, off the request path. Until then none of their
    // files is served: a call waits for that refresh (`Snapshot::seen`).
    // A project's `skills.lock` comes with the repository: its skills are
    // screened at once, like every project skill.
    let deferred = |found: &Found| {
        verify == Verify::Quick
            && roots[found.root]
                .origin
                .as_ref()
                .is_some_and(|o| o.scope == crate::lock::Scope::User)
    };
    let screening: Vec<usize> = (0..scan.skills.len())
        .filter(|&i| !deferred(&scan.skills[i]))
        .collect();
    let candidates: Vec<Candidate> = screening
        .iter()
        .map(|&i| {
            let found = &scan.skills[i];
            Candidate {
                place: Place {
                    dir: &found.dir,
                    file_name: found.file_name.as_str(),
                    fence: roots[found.root].fence.as_deref(),
                    hidden: roots[found.root].source.hidden(),
                },
                source: roots[found.root].source,
                name: &found.parsed.name,
                description: &found.parsed.description,
                // Installed with `skillserve add --allow-risky`: the user
                // saw the findings and approved them then.
                accepted: approved_at_install(&roots[found.root]),
            }
        })
        .collect();
    let approvals = approvals_file(config);
    let screened = security::screen(&candidates, approvals.as_deref(), &mut cache.security);
    scan.diagnostics.extend(screened.diagnostics);
    let mut withheld = vec![None; scan.skills.len()];
    let mut seen = HashMap::new();
    for (verdict, i) in screened.verdicts.into_iter().zip(screening) {
        let dir = || PathKey(Arc::clone(&scan.skills[i].dir));
        match verdict {
            Verdict::Quarantined(report) => withheld[i] = Some(Why::Quarantined(report)),
            Verdict::Clean(report) => {
                seen.insert(dir(), Arc::clone(&report.seen));
            }
            Verdict::Approved(_, approved) => {
                seen.insert(dir(), approved);
            }
            Verdict::Own => {}
        }
    }
    let mut snapshot = Snapshot::build(roots, scan, withheld, previous);
    snapshot.seen = seen;
    snapshot.screened_dirs = screened.folders;
    snapshot.skills_scanned = screened.scanned;
    snapshot
}

/// Whether `root` is an installed skill whose source was added (or
/// updated) with `--allow-risky`.
fn approved_at_install(root: &Root) -> bool {
    root.origin
        .as_ref()
        .is_some_and(|origin| origin.allow_risky)
}

/// Where the user's approvals of quarantined skills are kept, when there
/// is a config folder.
pub fn approvals_file(config: &Config) -> Option<PathBuf> {
    config.folders.config.as_deref().map(approvals::file_in)
}

/// Why a skill that was found and loaded is not served.
#[derive(Clone, Debug)]
pub enum Why {
    /// From a source that is not the user's own, with an error-level
    /// security finding, and not approved as it is now.
    Quarantined(Arc<Report>),
}

/// A skill that is loaded but not served: it takes part in no collision,
/// is no candidate of any view, and a call that names it is told why.
#[derive(Clone, Debug)]
pub struct Withheld {
    pub skill: Skill,
    pub why: Why,
}

impl Withheld {
    /// The diagnostic `check` reports and the server logs.
    fn diagnostic(&self) -> Diagnostic {
        match &self.why {
            Why::Quarantined(report) => {
                let mut errors = report.errors();
                let first = errors.next();
                let more = errors.count();
                let reason = first.map_or_else(String::new, |f| {
                    format!(
                        ": {}: {}{}",
                        f.short(),
                        f.finding.message,
                        match more {
                            0 => String::new(),
                            n => format!(" (and {n} more error{})", crate::text::plural(n)),
                        }
                    )
                });
                Finding::error(
                    Code::Quarantined,
                    format!(
                        "skill '{}' from a {} folder is quarantined, not served{reason}",
                        self.skill.name, self.skill.source
                    ),
                    format!(
                        "review its files (`skillserve check --security` lists every finding); to serve this version, run `skillserve trust {}`",
                        self.skill.name
                    ),
                )
                .at(self.skill.file())
            }
        }
    }
}

/// Skills per source, in the order given (display order groups them):
/// `custom 2, user 5` (empty when there are none).
pub fn count_by_source<'a>(skills: impl Iterator<Item = &'a Skill>) -> String {
    let mut counts: Vec<(Source, usize)> = Vec::new();
    for skill in skills {
        match counts.last_mut() {
            Some((source, n)) if *source == skill.source => *n += 1,
            _ => counts.push((skill.source, 1)),
        }
    }
    let counts: Vec<String> = counts
        .iter()
        .map(|(source, n)| format!("{source} {n}"))
        .collect();
    counts.join(", ")
}

/// A skill that lost a name collision, and the skill that won.
#[derive(Clone, Copy, Debug)]
pub struct Shadowed<'a> {
    pub skill: &'a Skill,
    pub by: &'a Skill,
}

/// The skills of a snapshot and their indexes (names, and the words of the
/// search): the expensive part, shared by consecutive snapshots while the
/// skills do not change.
#[derive(Debug, Default)]
struct Index {
    /// Served skills in display order (by source: custom, project, user,
    /// installed, plugin; then by name), then the shadowed ones in precedence order.
    skills: Vec<Skill>,
    /// How many of `skills` are served.
    served: usize,
    /// For each shadowed skill (`skills[served + i]`), the index of the
    /// served skill of the same name.
    shadowed_by: Vec<u32>,
    /// The root (index in `Snapshot::roots`) of each of `skills`.
    root_of: Vec<u32>,
    /// Lowercased full name → index of the served skill.
    by_name: Names,
    /// Lowercased short names and folder names that differ from the full
    /// name → indexes of served skills.
    by_short: Names,
    /// The words of names and descriptions of all `skills`, for the search
    /// on a miss: built on first use ([`Snapshot::prepare_search`]), once
    /// per index.
    search: OnceLock<SearchIndex>,
    /// Skills not served, in precedence order; no candidate of any view.
    withheld: Vec<Withheld>,
    /// Lowercased full names and folder names → index in `withheld`.
    withheld_by_name: HashMap<String, usize>,
    /// The `shadowed` and `quarantined` diagnostics.
    shadowing: Vec<Diagnostic>,
    /// What the index was built from: the skills found per root, the
    /// address of each one's parsed frontmatter (shared through the scan's
    /// cache), in order, and the index and the address of the reason of
    /// each withheld one.
    fingerprint: Fingerprint,
}

/// What an index was built from (see `Index::fingerprint`): 8 bytes a
/// skill.
type Fingerprint = (Vec<usize>, Vec<usize>, Vec<(usize, usize)>);

/// The immutable result of one scan.
#[derive(Debug, Default)]
pub struct Snapshot {
    index: Arc<Index>,
    pub roots: Vec<Root>,
    /// Everything the scan and the collision rules found.
    pub diagnostics: Vec<Diagnostic>,
    /// Roots that did not exist when the scan ran.
    pub missing_roots: Vec<PathBuf>,
    /// Skills found per root (before collisions), parallel to `roots`.
    pub per_root: Vec<usize>,
    /// SKILL.md files the scan opened (the rest came from the cache).
    pub files_parsed: usize,
    /// Skills whose files the security scan read before serving them (the
    /// other reports came from the cache).
    pub skills_scanned: usize,
    /// The directories the scan looked at (what the watcher watches).
    pub dirs: Dirs,
    /// Hidden folders the scan skipped, with the index of their root (for
    /// [`scan::hidden_skills`]).
    pub hidden: Vec<(PathBuf, usize)>,
    /// Skill folders whose `SKILL.md` could not be loaded, by the lowercased
    /// name a call would use for them (the folder name, `plugin:folder` for
    /// plugin skills).
    failed: HashMap<String, Failed>,
    /// `SKILL.md` files found again through another root.
    pub also_found: Vec<AlsoFound>,
    /// The folders holding the files of the skills that were scanned
    /// before being served (those not the user's own): any change in them
    /// may quarantine a skill or release it.
    pub screened_dirs: Vec<PathBuf>,
    /// What the screening saw of each skill it let through, by skill
    /// folder: the only bytes of that skill a call may serve.
    seen: HashMap<PathKey, Arc<Seen>>,
}

impl Snapshot {
    /// Withholds the skills `withheld` gives a reason for (parallel to the
    /// scan's skills; missing entries mean served), settles collisions
    /// among the rest and indexes the skills of `scan`, whose roots are
    /// `roots`. When `previous` was built from the same roots, the same
    /// parsed files and the same reasons (a refresh of an unchanged tree),
    /// its index is shared instead of rebuilt.
    pub fn build(
        roots: Vec<Root>,
        scan: Scan,
        withheld: Vec<Option<Why>>,
        previous: Option<&Snapshot>,
    ) -> Snapshot {
        let Scan {
            skills: found,
            mut diagnostics,
            missing_roots,
            per_root,
            files_parsed,
            dirs,
            failed,
            hidden,
            also_found,
        } = scan;
        let failed = failed
            .into_iter()
            .map(|f| {
                let folder = scan::folder_name(&f.dir).into();
                let name = full_name(&folder, roots[f.root].plugin.as_deref());
                (name.to_lowercase(), f)
            })
            .collect();
        let mut withheld = withheld;
        withheld.resize(found.len(), None);
        let addresses = found
            .iter()
            .map(|f| Arc::as_ptr(&f.parsed) as usize)
            .collect();
        let reasons = withheld
            .iter()
            .enumerate()
            .filter_map(|(i, why)| {
                why.as_ref()
                    .map(|Why::Quarantined(report)| (i, Arc::as_ptr(report) as usize))
            })
            .collect();
        let fingerprint = (per_root.clone(), addresses, reasons);
        // The previous snapshot holds its parsed files, so an equal address
        // is the same allocation: the same file, unchanged.
        let index = match previous {
            Some(previous)
                if previous.roots == roots && previous.index.fingerprint == fingerprint =>
            {
                Arc::clone(&previous.index)
            }
            _ => Arc::new(Index::build(&roots, found, withheld, fingerprint)),
        };
        diagnostics.extend(index.shadowing.iter().cloned());
        Snapshot {
            index,
            roots,
            diagnostics,
            missing_roots,
            per_root,
            files_parsed,
            dirs,
            hidden,
            failed,
            also_found,
            screened_dirs: Vec::new(),
            skills_scanned: 0,
            seen: HashMap::new(),
        }
    }

    /// What may be served of `skill`: `None` for the user's own skills
    /// (never screened: anything), else `Some` of the files as its
    /// screening saw them. An installed skill that the first load did not
    /// screen yet has `Some` of nothing, as has a skill of another
    /// snapshot.
    pub fn seen(&self, skill: &Skill) -> Option<&Seen> {
        if skill.source.is_own() {
            return None;
        }
        Some(
            self.seen
                .get(PathKey::bytes_of(&skill.dir))
                .map_or(&security::NOTHING_SEEN, |seen| &**seen),
        )
    }

    /// The skill folder a call for `lowercase_name` most likely meant, when
    /// its `SKILL.md` could not be loaded.
    pub fn failed(&self, lowercase_name: &str) -> Option<&Failed> {
        self.failed.get(lowercase_name)
    }

    /// Every skill folder whose `SKILL.md` could not be loaded, by the
    /// lowercased name a call would use.
    pub fn all_failed(&self) -> impl Iterator<Item = (&str, &Failed)> {
        self.failed
            .iter()
            .map(|(name, failed)| (name.as_str(), failed))
    }

    /// Whether `self` and `other` serve exactly the same skills.
    pub fn same_skills(&self, other: &Snapshot) -> bool {
        Arc::ptr_eq(&self.index, &other.index)
    }

    /// Served skills in display order.
    pub fn skills(&self) -> &[Skill] {
        &self.index.skills[..self.index.served]
    }

    /// Every skill found, served ones first (display order), then the
    /// shadowed ones (precedence order). A view picks among these by index.
    pub fn candidates(&self) -> &[Skill] {
        &self.index.skills
    }

    /// Skills that lost a name collision, in precedence order.
    pub fn shadowed(&self) -> impl ExactSizeIterator<Item = Shadowed<'_>> {
        let index = &self.index;
        let skills = &index.skills[index.served..];
        skills
            .iter()
            .zip(&index.shadowed_by)
            .map(|(skill, &by)| Shadowed {
                skill,
                by: &index.skills[by as usize],
            })
    }

    /// Skills that are loaded but not served, in precedence order.
    pub fn withheld(&self) -> &[Withheld] {
        &self.index.withheld
    }

    /// The withheld skill a call for `lowercase_name` (its full name or
    /// its folder's name) meant, when no served skill has the name.
    pub fn withheld_named(&self, lowercase_name: &str) -> Option<&Withheld> {
        let index = &self.index;
        index
            .withheld_by_name
            .get(lowercase_name)
            .map(|&i| &index.withheld[i])
    }

    /// The served skill of the name of candidate `candidate` (itself when
    /// it is served).
    pub fn winner_of(&self, candidate: usize) -> usize {
        let index = &self.index;
        match candidate.checked_sub(index.served) {
            None => candidate,
            Some(shadowed) => index.shadowed_by[shadowed] as usize,
        }
    }

    /// The root (index in [`Snapshot::roots`]) candidate `candidate` was found in.
    pub fn root_of(&self, candidate: usize) -> usize {
        self.index.root_of[candidate] as usize
    }

    /// The skill whose full name is `lowercase_name`.
    pub fn by_name(&self, lowercase_name: &str) -> Option<&Skill> {
        self.name_index(lowercase_name)
            .map(|i| &self.index.skills[i])
    }

    /// The index of the served skill whose full name is `lowercase_name`.
    pub fn name_index(&self, lowercase_name: &str) -> Option<usize> {
        let index = &self.index;
        index.by_name.find(&index.skills, lowercase_name).next()
    }

    /// The indexes of the served skills whose short name or folder name is
    /// `lowercase_name`, in display order.
    pub fn short_name_indexes(&self, lowercase_name: &str) -> Vec<usize> {
        let index = &self.index;
        let mut found: Vec<usize> = index.by_short.find(&index.skills, lowercase_name).collect();
        found.sort_unstable();
        found
    }

    /// The indexes (in [`Snapshot::candidates`]) of up to `limit` skills for
    /// which `keep` holds whose names and descriptions match `query` best,
    /// best first (behaviour.md §14).
    pub fn search(&self, query: &str, limit: usize, keep: impl Fn(usize) -> bool) -> Vec<usize> {
        self.search_index()
            .search(&self.index.skills, query, limit, keep)
    }

    /// Builds the search index unless it is built. The server calls it on a
    /// blocking thread right after a new snapshot is served, so that neither
    /// start-up nor a refresh waits for it (10 ms at 10,000 skills on two
    /// cores, where the rest of start-up takes about 120 ms) and a miss
    /// rarely does; a snapshot that shares its index shares this too.
    ///
    /// Returns whether this call built it.
    pub fn prepare_search(&self) -> bool {
        let built = self.index.search.get().is_none();
        self.search_index();
        built
    }

    fn search_index(&self) -> &SearchIndex {
        let index = &self.index;
        index
            .search
            .get_or_init(|| SearchIndex::build(&index.skills))
    }
}

impl Index {
    fn build(
        roots: &[Root],
        found: Vec<Found>,
        withheld: Vec<Option<Why>>,
        fingerprint: Fingerprint,
    ) -> Index {
        let Collisions {
            winners,
            shadowed,
            withheld,
            shadowing,
        } = Collisions::settle(roots, found, withheld);
        // Display order; `place[i]` is where the winner found `i`-th goes.
        let mut order: Vec<usize> = (0..winners.len()).collect();
        order.sort_by(|&a, &b| {
            let (a_key, a) = (&winners[a].0, &winners[a].1);
            let (b_key, b) = (&winners[b].0, &winners[b].1);
            (a.skill.source, a_key, &a.skill.name).cmp(&(b.skill.source, b_key, &b.skill.name))
        });
        let mut place = vec![0u32; winners.len()];
        for (at, &found) in order.iter().enumerate() {
            place[found] = at as u32;
        }
        let mut slots: Vec<Option<(String, Placed)>> = winners.into_iter().map(Some).collect();
        let served = slots.len();
        let mut skills = Vec::with_capacity(served + shadowed.len());
        let mut root_of = Vec::with_capacity(served + shadowed.len());
        let mut others = Vec::new();
        for (index, found) in order.into_iter().enumerate() {
            let (key, placed) = slots[found].take().expect("each winner placed once");
            others.extend(other_names(&placed.skill, &key).map(|variant| (index, variant)));
            skills.push(placed.skill);
            root_of.push(placed.root);
        }
        let mut by_name = Names::with_capacity(served);
        for index in 0..served {
            by_name.insert(&skills, index, Variant::Full);
        }
        let mut by_short = Names::default();
        for (index, variant) in others {
            by_short.insert(&skills, index, variant);
        }
        let mut shadowed_by = Vec::with_capacity(shadowed.len());
        for (placed, winner) in shadowed {
            skills.push(placed.skill);
            root_of.push(placed.root);
            shadowed_by.push(place[winner]);
        }
        let mut withheld_by_name = HashMap::new();
        for (index, held) in withheld.iter().enumerate() {
            let skill = &held.skill;
            // The first (highest precedence) of a name wins, as for calls.
            for key in [skill.name.to_lowercase(), skill.folder().to_lowercase()] {
                withheld_by_name.entry(key).or_insert(index);
            }
        }
        Index {
            search: OnceLock::new(),
            skills,
            served,
            withheld,
            withheld_by_name,
            shadowed_by,
            root_of,
            by_name,
            by_short,
            shadowing,
            fingerprint,
        }
    }
}

/// Skills by one of their names, lowercased, without a copy of the names:
/// each entry is a skill's index and which of its names it stands for,
/// placed by the hash of that name lowercased; a lookup lowercases the
/// skills' names as it compares them. (A map of lowercased names to
/// indexes cost about 75 bytes a skill; this, 5.)
#[derive(Debug, Default)]
struct Names(HashTable<(u32, Variant)>);

/// Which of a skill's names an entry of [`Names`] stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Full,
    Short,
    Folder,
}

impl Variant {
    fn of(self, skill: &Skill) -> Cow<'_, str> {
        match self {
            Variant::Full => Cow::Borrowed(&skill.name),
            Variant::Short => Cow::Borrowed(skill.short_name()),
            Variant::Folder => skill.folder(),
        }
    }
}

impl Names {
    fn with_capacity(capacity: usize) -> Names {
        Names(HashTable::with_capacity(capacity))
    }

    /// Adds the name `variant` of `skills[index]`.
    fn insert(&mut self, skills: &[Skill], index: usize, variant: Variant) {
        let hash = lowercase_hash(&variant.of(&skills[index]));
        let index = u32::try_from(index).expect("fewer than 4 billion skills");
        self.0.insert_unique(hash, (index, variant), |&(i, v)| {
            lowercase_hash(&v.of(&skills[i as usize]))
        });
    }

    /// The indexes of the skills whose name of the entry's kind is
    /// `lowercase_name` once lowercased.
    fn find<'a>(
        &'a self,
        skills: &'a [Skill],
        lowercase_name: &'a str,
    ) -> impl Iterator<Item = usize> + 'a {
        self.0
            .iter_hash(lowercase_hash(lowercase_name))
            .filter(move |&&(index, variant)| {
                lowercase_equals(&variant.of(&skills[index as usize]), lowercase_name)
            })
            .map(|&(index, _)| index as usize)
    }
}

/// The hash of `text` lowercased, computed without lowercasing it into a
/// new string; the same for every `Names` (a fixed seed).
fn lowercase_hash(text: &str) -> u64 {
    let mut hasher = foldhash::fast::FixedState::with_seed(0).build_hasher();
    for c in text.chars().flat_map(char::to_lowercase) {
        hasher.write_u32(c as u32);
    }
    hasher.finish()
}

/// A skill and the root it was found in.
struct Placed {
    skill: Skill,
    root: u32,
}

/// The skills found, withheld ones set aside first, with name collisions
/// settled among the rest: the first skill of a name (in precedence order)
/// wins, later ones are shadowed.
struct Collisions {
    /// Each winner with its lowercased name, computed once: a rescan of
    /// 10,000 unchanged skills spends most of its own time here.
    winners: Vec<(String, Placed)>,
    /// Each shadowed skill with the index (in `winners`) of the winner.
    shadowed: Vec<(Placed, usize)>,
    withheld: Vec<Withheld>,
    /// The `shadowed` and `quarantined` diagnostics.
    shadowing: Vec<Diagnostic>,
}

impl Collisions {
    fn settle(roots: &[Root], found: Vec<Found>, why: Vec<Option<Why>>) -> Collisions {
        let shared_roots: Vec<Arc<Root>> = roots.iter().cloned().map(Arc::new).collect();
        let mut winners: Vec<(String, Placed)> = Vec::with_capacity(found.len());
        let mut taken: HashMap<String, usize> = HashMap::with_capacity(found.len());
        let mut shadowed = Vec::new();
        let mut shadowing = Vec::new();
        let mut withheld = Vec::new();
        for (found, why) in found.into_iter().zip(why) {
            let root = &roots[found.root];
            let skill = Skill {
                name: full_name(&found.parsed.name, root.plugin.as_deref()),
                dir: found.dir,
                file_name: found.file_name,
                source: root.source,
                root: Arc::clone(&shared_roots[found.root]),
                parsed: found.parsed,
                lone: found.lone,
            };
            if let Some(why) = why {
                let held = Withheld { skill, why };
                shadowing.push(held.diagnostic());
                withheld.push(held);
                continue;
            }
            let placed = Placed {
                skill,
                root: found.root as u32,
            };
            let key = placed.skill.name.to_lowercase();
            match taken.get(&key) {
                Some(&winner) => {
                    let by = &winners[winner].1.skill;
                    shadowing.push(shadow_finding(&placed.skill, by).at(placed.skill.file()));
                    shadowed.push((placed, winner));
                }
                None => {
                    taken.insert(key.clone(), winners.len());
                    winners.push((key, placed));
                }
            }
        }
        Collisions {
            winners,
            shadowed,
            withheld,
            shadowing,
        }
    }
}

/// Which of the short name and folder name of `skill` (whose lowercased
/// full name is `key`) to index, each only when it differs from the names
/// before it: an exact full name is found by `by_name` first anyway.
fn other_names(skill: &Skill, key: &str) -> impl Iterator<Item = Variant> + use<> {
    let short = skill.short_name();
    let has_short = short.len() != skill.name.len();
    let folder = skill.folder();
    let folder_is_new =
        !(lowercase_equals(&folder, key) || has_short && same_ignoring_case(&folder, short));
    has_short
        .then_some(Variant::Short)
        .into_iter()
        .chain(folder_is_new.then_some(Variant::Folder))
}

/// Whether `a` and `b` are equal once lowercased, without allocating.
fn same_ignoring_case(a: &str, b: &str) -> bool {
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

/// Whether `text` lowercased is `lower`, without allocating.
fn lowercase_equals(text: &str, lower: &str) -> bool {
    text.chars().flat_map(char::to_lowercase).eq(lower.chars())
}

/// Plugin skills are named `plugin:skill`, unless the frontmatter name is
/// already namespaced (holds a `:`); other skills share the frontmatter's.
fn full_name(name: &Arc<str>, plugin: Option<&Plugin>) -> Arc<str> {
    match plugin {
        Some(plugin) if !name.contains(':') => format!("{}:{name}", plugin.name).into(),
        _ => Arc::clone(name),
    }
}

fn shadow_finding(loser: &Skill, winner: &Skill) -> Finding {
    let why = if let (Some(first), Some(second)) = (winner.origin(), loser.origin()) {
        if first.id == second.id {
            format!("both come from source '{}'", first.id)
        } else {
            format!(
                "source '{}' was added before source '{}'",
                first.id, second.id
            )
        }
    } else if winner.source == loser.source {
        format!(
            "{} comes first in the search order",
            winner.root.path.display()
        )
    } else {
        format!(
            "{} skills take precedence over {} skills",
            winner.source, loser.source
        )
    };
    Finding::warning(
        Code::Shadowed,
        format!(
            "skill '{}' is hidden by '{}' at {} ({why})",
            loser.name,
            winner.name,
            winner.file().display(),
        ),
        "rename one of them (names compare case-insensitively) or delete the copy you do not want",
    )
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;
    use crate::roots::Layout;
    use crate::scan::scan;

    fn write(dir: &std::path::Path, name: &str, description: &str) {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        let text = format!("---\nname: {name}\ndescription: {description}\n---\n");
        std::fs::write(dir.join(name).join("SKILL.md"), text).unwrap();
    }

    #[test]
    fn an_unchanged_rescan_shares_the_index_and_a_change_rebuilds_it() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a", "one");
        write(dir.path(), "b", "two");
        let roots = vec![Root::new(
            dir.path().to_path_buf(),
            Source::User,
            Layout::Folders,
        )];
        let mut cache = scan::Cache::default();
        let first = Snapshot::build(
            roots.clone(),
            scan(&roots, 1 << 20, &mut cache),
            Vec::new(),
            None,
        );
        let same = Snapshot::build(
            roots.clone(),
            scan(&roots, 1 << 20, &mut cache),
            Vec::new(),
            Some(&first),
        );
        assert!(same.same_skills(&first));

        write(dir.path(), "b", "two, edited");
        let changed = Snapshot::build(
            roots.clone(),
            scan(&roots, 1 << 20, &mut cache),
            Vec::new(),
            Some(&same),
        );
        assert!(!changed.same_skills(&same));
        assert_eq!(changed.skills()[1].description(), "two, edited");

        std::fs::remove_dir_all(dir.path().join("a")).unwrap();
        let fewer = Snapshot::build(
            roots.clone(),
            scan(&roots, 1 << 20, &mut cache),
            Vec::new(),
            Some(&changed),
        );
        assert!(!fewer.same_skills(&changed));
        assert_eq!(fewer.skills().len(), 1);
    }
}
