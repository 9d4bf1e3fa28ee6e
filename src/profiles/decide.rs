//! Which skills of a snapshot one client is shown, and why the others are
//! not (behaviour.md §17.2, §17.4). The server keeps only the answer (a [`View`]);
//! `list --all --client` prints the reasons. One function decides both, so
//! they never disagree.
//!
//! Skills of one name are decided together, in precedence order:
//!
//! - when the client loads one of them itself (from a folder of its own),
//!   none is shown: the model would otherwise see two skills of that name;
//! - otherwise the first that passes the filters is shown, and the ones
//!   after it are shadowed; the ones before it were filtered out. A skill
//!   hidden by a filter so frees its name for the next one, as if it were
//!   not there.
//!
//! [`View`]: super::View

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::config::file::Profile;
use crate::config::native::NativeClient;
use crate::snapshot::Snapshot;

use super::filter::{Filter, Rule, Subject};
use super::native::NativeFolders;

/// What one client is shown of a snapshot.
#[derive(Debug)]
pub struct Decision<'p> {
    /// One per candidate of the snapshot (`Snapshot::candidates`).
    pub verdicts: Vec<Verdict<'p>>,
    /// Whether the verdicts are the snapshot's own: its served skills shown,
    /// the shadowed ones shadowed.
    pub unchanged: bool,
    /// Lowercased names of skill folders that failed to load whose folder
    /// is filtered out or loaded by the client itself.
    pub hidden_failed: Vec<String>,
}

impl Decision<'_> {
    /// The snapshot's own verdicts: every served skill shown, the shadowed
    /// ones shadowed.
    pub fn unchanged(snapshot: &Snapshot) -> Decision<'static> {
        let served = snapshot.skills().len();
        let verdicts = (0..snapshot.candidates().len())
            .map(|c| {
                if c < served {
                    Verdict::Shown
                } else {
                    Verdict::Shadowed {
                        by: snapshot.winner_of(c),
                    }
                }
            })
            .collect();
        Decision {
            verdicts,
            unchanged: true,
            hidden_failed: Vec::new(),
        }
    }
}

/// What happens to one skill for one client.
#[derive(Clone, Copy, Debug)]
pub enum Verdict<'p> {
    Shown,
    /// A skill of the same name and higher precedence is shown (candidate
    /// `by`).
    Shadowed {
        by: usize,
    },
    /// A filter of `config.toml` hides it: the top level's, or `profile`'s.
    Filtered {
        rule: Rule<'p>,
        profile: Option<&'p Profile>,
    },
    /// The client loads it itself, from a folder of its own.
    Native {
        client: &'static NativeClient,
    },
    /// The client loads a skill of the same name itself (candidate `by`).
    NameTaken {
        client: &'static NativeClient,
        by: usize,
    },
}

/// The filters and native folders that apply to one client.
pub(super) struct Rules<'p> {
    pub top: &'p Filter,
    pub own: Option<(&'p Filter, &'p Profile)>,
    pub native: Option<&'p NativeFolders>,
}

impl<'p> Rules<'p> {
    fn filters_nothing(&self) -> bool {
        self.top.is_empty() && self.own.is_none_or(|(filter, _)| filter.is_empty())
    }

    /// The filter that hides `subject`, if one does.
    fn check(&self, subject: Subject) -> Option<Verdict<'p>> {
        if let Some(rule) = self.top.check(subject) {
            return Some(Verdict::Filtered {
                rule,
                profile: None,
            });
        }
        let (filter, profile) = self.own?;
        filter.check(subject).map(|rule| Verdict::Filtered {
            rule,
            profile: Some(profile),
        })
    }

    /// Per root of `snapshot`: whether the client loads it itself.
    fn native_roots(&self, snapshot: &Snapshot) -> Vec<bool> {
        match self.native {
            None => vec![false; snapshot.roots.len()],
            Some(native) => snapshot
                .roots
                .iter()
                .map(|root| native.loads(root))
                .collect(),
        }
    }

    pub fn decide(&self, snapshot: &Snapshot) -> Decision<'p> {
        let candidates = snapshot.candidates();
        let served = snapshot.skills().len();
        let native_roots = self.native_roots(snapshot);
        // A skill found again in a folder the client loads (a symlink) is
        // loaded by the client too.
        let also_native: HashSet<&Path> = snapshot
            .also_found
            .iter()
            .filter(|also| native_roots[also.root])
            .map(|also| also.file.as_path())
            .collect();
        let is_native = |c: usize| {
            native_roots[snapshot.root_of(c)]
                || also_native.contains(candidates[c].file().as_path())
        };
        let natives: Vec<usize> = (0..candidates.len()).filter(|&c| is_native(c)).collect();
        let hidden_failed = self.hidden_failed(snapshot, &native_roots);
        if natives.is_empty() && self.filters_nothing() {
            return Decision {
                hidden_failed,
                ..Decision::unchanged(snapshot)
            };
        }
        // The first skill the client loads itself, per name (by the served
        // skill of that name).
        let mut taken: HashMap<usize, usize> = HashMap::new();
        for &c in &natives {
            taken.entry(snapshot.winner_of(c)).or_insert(c);
        }
        let mut shadowed: HashMap<usize, Vec<usize>> = HashMap::new();
        for c in served..candidates.len() {
            shadowed.entry(snapshot.winner_of(c)).or_default().push(c);
        }
        let mut verdicts = vec![Verdict::Shown; candidates.len()];
        for winner in 0..served {
            let same_name =
                std::iter::once(winner).chain(shadowed.get(&winner).into_iter().flatten().copied());
            if let Some(&by) = taken.get(&winner) {
                let client = self
                    .native
                    .expect("natives come from a native client")
                    .client;
                for c in same_name {
                    verdicts[c] = if is_native(c) {
                        Verdict::Native { client }
                    } else {
                        Verdict::NameTaken { client, by }
                    };
                }
                continue;
            }
            let mut shown = None;
            for c in same_name {
                verdicts[c] = match shown {
                    Some(by) => Verdict::Shadowed { by },
                    None => match self.check(Subject::of(&candidates[c])) {
                        Some(filtered) => filtered,
                        None => {
                            shown = Some(c);
                            Verdict::Shown
                        }
                    },
                };
            }
        }
        let unchanged = verdicts.iter().enumerate().all(|(c, verdict)| {
            matches!(
                (c < served, verdict),
                (true, Verdict::Shown) | (false, Verdict::Shadowed { .. })
            )
        });
        Decision {
            verdicts,
            unchanged,
            hidden_failed,
        }
    }

    /// The folders that failed to load and that the client should not hear
    /// of: filtered out, or in a folder it loads itself (it reports those
    /// its own way).
    pub fn hidden_failed(&self, snapshot: &Snapshot, native_roots: &[bool]) -> Vec<String> {
        if self.filters_nothing() && !native_roots.contains(&true) {
            return Vec::new();
        }
        snapshot
            .all_failed()
            .filter(|(name, failed)| {
                let root = &snapshot.roots[failed.root];
                let subject = Subject {
                    name,
                    source: root.source,
                    dir: &failed.dir,
                    plugin: root.plugin.as_deref().map(|p| p.key.as_str()),
                    installed: root.origin.as_deref().map(|o| o.id.as_str()),
                };
                native_roots[failed.root] || self.check(subject).is_some()
            })
            .map(|(name, _)| name.to_owned())
            .collect()
    }

    /// [`Rules::hidden_failed`] on its own, for a view that is otherwise
    /// reused.
    pub fn hidden_failed_of(&self, snapshot: &Snapshot) -> Vec<String> {
        self.hidden_failed(snapshot, &self.native_roots(snapshot))
    }
}

impl Verdict<'_> {
    /// Why a skill is not shown, for `list --all` (`None` when it is shown).
    pub fn reason(&self, snapshot: &Snapshot) -> Option<String> {
        let candidates = snapshot.candidates();
        let in_profile = |profile: Option<&Profile>| {
            profile.map_or(String::new(), |p| format!(" in {}", p.header()))
        };
        Some(match self {
            Verdict::Shown => return None,
            Verdict::Shadowed { by } => format!("hidden by {}", candidates[*by].file().display()),
            Verdict::Filtered { rule, profile } => match rule {
                Rule::Disabled(named) => {
                    format!("disabled{} ({})", in_profile(*profile), named.origin)
                }
                Rule::Excluded(pattern) => format!(
                    "excluded by \"{}\"{} ({})",
                    pattern.text,
                    in_profile(*profile),
                    pattern.origin
                ),
                Rule::NotIncluded(first) => format!(
                    "matched by no pattern of include{} ({})",
                    in_profile(*profile),
                    first.origin
                ),
            },
            Verdict::Native { client } => format!("{} loads it itself", client.title),
            Verdict::NameTaken { client, by } => format!(
                "{} loads a skill of the same name itself ({})",
                client.title,
                candidates[*by].file().display()
            ),
        })
    }
}
