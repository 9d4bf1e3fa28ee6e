//! [`View`]: what one client is shown of a snapshot, computed once per
//! snapshot and client profile (`Profiles::view`), then only read. Every
//! surface — the tool description, calls, prompts, resources, the skills
//! extension, completion, the search of a miss — goes through a view, so a
//! skill the view leaves out reaches none of them.
//!
//! A view costs a few words per skill: the indexes of the skills it shows
//! (in display order), a bit per skill, and the skills that take the place
//! of filtered ones. Lookups use the snapshot's own indexes and check the
//! bit, so a call costs the same with profiles as without. A view that shows
//! every served skill unchanged (no filter, no native folder) skips even the
//! bit.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, Weak};

use crate::config::Placement;
use crate::render;
use crate::scan::Failed;
use crate::skill::Skill;
use crate::snapshot::Snapshot;
use crate::usage::Ranks;

use super::decide::{Decision, Verdict};

/// A client's view of a snapshot.
#[derive(Clone, Debug)]
pub struct View {
    snapshot: Arc<Snapshot>,
    shown: Arc<Shown>,
    /// Lowercased names of skill folders that failed to load and are
    /// hidden from the client (a call naming one finds nothing); the
    /// failures are the snapshot's own, so this is not shared.
    hidden_failed: Arc<HashSet<String>>,
}

/// How a view's texts are made: the catalog's budget and place, and whether
/// the client is remote (served over HTTP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Presentation {
    pub budget: usize,
    pub placement: Placement,
    pub remote: bool,
}

/// Which [`View`] a view is (of one snapshot, for one profile), without
/// keeping its snapshot alive: a snapshot of 100,000 skills is tens of MB.
/// The allocations it points to stay, so no later view can take their
/// place and pass for it.
#[derive(Debug, Clone)]
pub struct ViewId {
    snapshot: Weak<Snapshot>,
    shown: Weak<Shown>,
    hidden_failed: Weak<HashSet<String>>,
}

impl ViewId {
    /// Whether `view` is (a clone of) the view this identifies.
    pub fn is(&self, view: &View) -> bool {
        std::ptr::eq(self.snapshot.as_ptr(), Arc::as_ptr(&view.snapshot))
            && std::ptr::eq(self.shown.as_ptr(), Arc::as_ptr(&view.shown))
            && std::ptr::eq(
                self.hidden_failed.as_ptr(),
                Arc::as_ptr(&view.hidden_failed),
            )
    }
}

/// What a view shows; shared by the views of consecutive snapshots of the
/// same skills under the same settings.
#[derive(Debug)]
struct Shown {
    /// The candidates (indexes in [`Snapshot::candidates`]) shown, in
    /// display order.
    visible: Vec<u32>,
    /// `None` when the view shows exactly the snapshot's served skills.
    changes: Option<Changes>,
    /// The tool description: the catalog in the client's budget, or the
    /// line saying it is in the instructions.
    description: String,
    /// The server's `instructions` for the client: the catalog in its
    /// budget, or the text saying it is in the tool description.
    instructions: String,
    /// Where the catalog is.
    placement: Placement,
    /// The shown skills the skills extension accepts, found on first use.
    listable: OnceLock<Vec<u32>>,
}

/// How a view differs from the snapshot's served skills.
#[derive(Debug)]
struct Changes {
    /// One bit per candidate: shown.
    shown: Vec<u64>,
    /// A served skill of the snapshot that is filtered out → the shadowed
    /// skill of the same name shown in its place.
    replaced: HashMap<u32, u32>,
    /// Lowercased folder names of replacing skills that the skills they
    /// replace do not answer to.
    replacing_folders: HashMap<String, Vec<u32>>,
}

impl View {
    /// The view a decision describes, with the tool description and the
    /// instructions rendered as `presentation` says.
    pub(super) fn new(
        snapshot: Arc<Snapshot>,
        decision: &Decision,
        presentation: &Presentation,
        ranks: &Ranks,
    ) -> View {
        let candidates = snapshot.candidates();
        let served = snapshot.skills().len();
        let shows = |c: usize| matches!(decision.verdicts[c], Verdict::Shown);
        let changes = (!decision.unchanged).then(|| {
            let mut shown = vec![0u64; candidates.len().div_ceil(64)];
            let mut replaced = HashMap::new();
            let mut replacing_folders: HashMap<String, Vec<u32>> = HashMap::new();
            for c in (0..candidates.len()).filter(|&c| shows(c)) {
                shown[c / 64] |= 1 << (c % 64);
                if c >= served {
                    let winner = snapshot.winner_of(c);
                    replaced.insert(winner as u32, c as u32);
                    let (skill, hidden) = (&candidates[c], &candidates[winner]);
                    let folder = skill.folder().to_lowercase();
                    let answered = folder == skill.name.to_lowercase()
                        || folder == skill.short_name().to_lowercase()
                        || folder == hidden.folder().to_lowercase();
                    if !answered {
                        replacing_folders.entry(folder).or_default().push(c as u32);
                    }
                }
            }
            Changes {
                shown,
                replaced,
                replacing_folders,
            }
        });
        let mut visible: Vec<u32> = (0..candidates.len())
            .filter(|&c| shows(c))
            .map(|c| c as u32)
            .collect();
        if changes.as_ref().is_some_and(|c| !c.replaced.is_empty()) {
            // A shadowed skill shown in a filtered one's place may come from
            // another source: keep the display order (source, then name).
            visible.sort_by_cached_key(|&c| {
                let skill = &candidates[c as usize];
                (skill.source, skill.name.to_lowercase(), skill.name.clone())
            });
        }
        let shown_skills = || visible.iter().map(|&c| &candidates[c as usize]);
        let Presentation {
            budget,
            placement,
            remote,
        } = *presentation;
        // Looked up only when the catalog is over its budget.
        let uses = |skill: &Skill| ranks.uses(skill);
        let description = render::description(shown_skills(), placement, budget, &uses);
        let instructions = render::instructions(shown_skills(), placement, remote, budget, &uses);
        View {
            snapshot,
            shown: Arc::new(Shown {
                visible,
                changes,
                description,
                instructions,
                placement,
                listable: OnceLock::new(),
            }),
            hidden_failed: Arc::new(decision.hidden_failed.iter().cloned().collect()),
        }
    }

    /// The view of every served skill of `snapshot`, as a local client that
    /// no setting concerns sees it (benchmarks, tools outside the server).
    pub fn unfiltered(snapshot: Arc<Snapshot>, budget: usize) -> View {
        let decision = Decision::unchanged(&snapshot);
        let presentation = Presentation {
            budget,
            placement: Placement::Tool,
            remote: false,
        };
        View::new(snapshot, &decision, &presentation, &Ranks::default())
    }

    /// This view for `snapshot`, a snapshot of the same skills, roots and
    /// duplicates as this view's, under the same settings: only the folders
    /// that failed to load and are hidden (`hidden_failed`) are taken anew.
    pub(super) fn rebased(&self, snapshot: Arc<Snapshot>, hidden_failed: Vec<String>) -> View {
        debug_assert!(snapshot.same_skills(&self.snapshot));
        View {
            snapshot,
            shown: Arc::clone(&self.shown),
            hidden_failed: Arc::new(hidden_failed.into_iter().collect()),
        }
    }

    /// Whether `self` and `other` share what they show (one was rebased
    /// from the other).
    pub fn shares(&self, other: &View) -> bool {
        Arc::ptr_eq(&self.shown, &other.shown)
    }

    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snapshot
    }

    /// The tool description, in the client's budget.
    pub fn description(&self) -> &str {
        &self.shown.description
    }

    /// The server's `instructions` for the client.
    pub fn instructions(&self) -> &str {
        &self.shown.instructions
    }

    /// Where the client is shown the catalog.
    pub fn placement(&self) -> Placement {
        self.shown.placement
    }

    /// How many skills the client is shown.
    pub fn len(&self) -> usize {
        self.shown.visible.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shown.visible.is_empty()
    }

    /// The shown skills, in display order.
    pub fn skills(&self) -> impl ExactSizeIterator<Item = &Skill> + Clone {
        let candidates = self.snapshot.candidates();
        self.shown
            .visible
            .iter()
            .map(move |&c| &candidates[c as usize])
    }

    /// The candidates shown (indexes for [`View::skill`]), in display order:
    /// what lists page through.
    pub fn visible(&self) -> &[u32] {
        &self.shown.visible
    }

    /// Candidate `candidate` of the snapshot.
    pub fn skill(&self, candidate: u32) -> &Skill {
        &self.snapshot.candidates()[candidate as usize]
    }

    /// Whether the client is shown candidate `candidate`.
    pub fn shows(&self, candidate: usize) -> bool {
        match &self.shown.changes {
            None => candidate < self.snapshot.skills().len(),
            Some(changes) => changes.shown[candidate / 64] & (1 << (candidate % 64)) != 0,
        }
    }

    /// The shown skill whose full name is `lowercase_name`.
    pub fn by_name(&self, lowercase_name: &str) -> Option<&Skill> {
        let served = self.snapshot.name_index(lowercase_name)?;
        self.shown_as(served).map(|c| self.skill(c))
    }

    /// The shown skills whose short name or folder name is `lowercase_name`.
    pub fn by_short_name(&self, lowercase_name: &str) -> Vec<&Skill> {
        let snapshot = &self.snapshot;
        let served = snapshot.skills().len() as u32;
        let mut found: Vec<&Skill> = snapshot
            .short_name_indexes(lowercase_name)
            .iter()
            .filter_map(|&winner| self.shown_as(winner))
            .map(|c| (c, self.skill(c)))
            // A replacing skill answers to its own names only, not to the
            // folder name of the skill it replaces.
            .filter(|&(c, skill)| {
                c < served
                    || skill.short_name().to_lowercase() == lowercase_name
                    || skill.folder().to_lowercase() == lowercase_name
            })
            .map(|(_, skill)| skill)
            .collect();
        if let Some(changes) = &self.shown.changes
            && let Some(more) = changes.replacing_folders.get(lowercase_name)
        {
            found.extend(more.iter().map(|&c| self.skill(c)));
        }
        found
    }

    /// What the client is shown for the snapshot's served skill `served`:
    /// itself, the skill in its place, or nothing.
    fn shown_as(&self, served: usize) -> Option<u32> {
        match &self.shown.changes {
            None => Some(served as u32),
            Some(_) if self.shows(served) => Some(served as u32),
            Some(changes) => changes.replaced.get(&(served as u32)).copied(),
        }
    }

    /// Up to `limit` shown skills whose names and descriptions match
    /// `query` best, best first (behaviour.md §14).
    pub fn search(&self, query: &str, limit: usize) -> Vec<&Skill> {
        let candidates = self.snapshot.candidates();
        self.snapshot
            .search(query, limit, |c| self.shows(c))
            .into_iter()
            .map(|c| &candidates[c])
            .collect()
    }

    /// The skill folder a call for `lowercase_name` most likely meant, when
    /// its `SKILL.md` could not be loaded and the client may know of it.
    pub fn failed(&self, lowercase_name: &str) -> Option<&Failed> {
        if self.hidden_failed.contains(lowercase_name) {
            return None;
        }
        self.snapshot.failed(lowercase_name)
    }

    /// The shown skills `accept` holds for (the skills extension's rule on
    /// names), as candidate indexes in display order; found once per view.
    pub fn listable(&self, accept: impl Fn(&Skill) -> bool) -> &[u32] {
        self.shown.listable.get_or_init(|| {
            let visible = self.shown.visible.iter().copied();
            visible.filter(|&c| accept(self.skill(c))).collect()
        })
    }

    /// Which view this is, without keeping its snapshot alive.
    pub fn id(&self) -> ViewId {
        ViewId {
            snapshot: Arc::downgrade(&self.snapshot),
            shown: Arc::downgrade(&self.shown),
            hidden_failed: Arc::downgrade(&self.hidden_failed),
        }
    }

    /// Whether `self` and `other` list the same names and descriptions in
    /// the same order (what the prompts and resources lists show).
    pub fn same_listing(&self, other: &View) -> bool {
        let same_shown = Arc::ptr_eq(&self.shown, &other.shown);
        (same_shown && self.snapshot.same_skills(&other.snapshot))
            || self
                .skills()
                .map(|s| (&s.name, s.description()))
                .eq(other.skills().map(|s| (&s.name, s.description())))
    }
}
