//! The snapshot: the immutable, indexed result of one scan (design §2, §3.3).
//!
//! A snapshot is never changed after [`Snapshot::build`]; a refresh builds a new
//! one and swaps it in. Collisions are settled here: names compare
//! case-insensitively, the skill from the higher-precedence root wins, and the
//! other is kept as shadowed (with a diagnostic) so that `list --all` and
//! `check` can show it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::{Diagnostic, Finding};
use crate::parse::Parsed;
use crate::roots::{Plugin, Root, Source};
use crate::scan::{Dirs, Scan, folder_name};

/// A skill as served.
#[derive(Clone, Debug)]
pub struct Skill {
    /// The name the model types (design §2).
    pub name: String,
    /// The skill folder: the `Base directory` of a call.
    pub dir: PathBuf,
    /// The SKILL.md read at call time.
    pub file: PathBuf,
    pub source: Source,
    /// The root the skill was found in (shared by all its skills).
    pub root: Arc<Path>,
    /// The plugin that provides it (plugin skills only).
    pub plugin: Option<Arc<Plugin>>,
    pub parsed: Arc<Parsed>,
}

impl Skill {
    /// One line, whitespace collapsed.
    pub fn description(&self) -> &str {
        &self.parsed.description
    }

    /// The part of the name after the last `:` (the whole name when there is none).
    pub fn short_name(&self) -> &str {
        self.name.rsplit(':').next().unwrap_or(&self.name)
    }

    /// The name of the skill folder; for a single-skill plugin, whose folder
    /// is a version folder (`1.0.0`), the plugin's name.
    pub fn folder(&self) -> String {
        match &self.plugin {
            Some(plugin) if plugin.install_path == self.dir => plugin.name.clone(),
            _ => folder_name(&self.dir),
        }
    }
}

/// A skill that lost a name collision.
#[derive(Clone, Debug)]
pub struct Shadowed {
    pub skill: Skill,
    /// The SKILL.md of the skill that won.
    pub by: PathBuf,
}

/// The immutable result of one scan.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Served skills in display order: by source (custom, project, user,
    /// plugin), then by name.
    skills: Vec<Skill>,
    shadowed: Vec<Shadowed>,
    /// Lowercased full name → index in `skills`.
    by_name: HashMap<String, usize>,
    /// Lowercased short name and folder name → indexes in `skills`.
    by_short: HashMap<String, Vec<usize>>,
    pub roots: Vec<Root>,
    pub diagnostics: Vec<Diagnostic>,
    /// Roots that did not exist when the scan ran.
    pub missing_roots: Vec<PathBuf>,
    /// Skills found per root (before collisions), parallel to `roots`.
    pub per_root: Vec<usize>,
    /// SKILL.md files the scan opened (the rest came from the cache).
    pub files_parsed: usize,
    /// The directories the scan looked at (what the watcher watches).
    pub dirs: Dirs,
}

impl Snapshot {
    /// Settles collisions and indexes the skills of `scan`, whose roots are `roots`.
    pub fn build(roots: Vec<Root>, scan: Scan) -> Snapshot {
        let Scan {
            skills: found,
            mut diagnostics,
            missing_roots,
            per_root,
            files_parsed,
            dirs,
        } = scan;

        let root_paths: Vec<Arc<Path>> =
            roots.iter().map(|r| Arc::from(r.path.as_path())).collect();
        let mut winners: Vec<Skill> = Vec::with_capacity(found.len());
        let mut taken: HashMap<String, usize> = HashMap::with_capacity(found.len());
        let mut shadowed = Vec::new();
        for found in found {
            let root = &roots[found.root];
            let skill = Skill {
                name: full_name(&found.parsed.name, root.plugin.as_deref()),
                dir: found.dir,
                file: found.file,
                source: root.source,
                root: Arc::clone(&root_paths[found.root]),
                plugin: root.plugin.clone(),
                parsed: found.parsed,
            };
            let key = skill.name.to_lowercase();
            match taken.get(&key) {
                Some(&winner) => {
                    let winner = &winners[winner];
                    diagnostics.push(shadow_finding(&skill, winner).at(&skill.file));
                    shadowed.push(Shadowed {
                        skill,
                        by: winner.file.clone(),
                    });
                }
                None => {
                    taken.insert(key, winners.len());
                    winners.push(skill);
                }
            }
        }

        winners.sort_by_cached_key(|s| (s.source, s.name.to_lowercase(), s.name.clone()));
        let mut by_name = HashMap::with_capacity(winners.len());
        let mut by_short: HashMap<String, Vec<usize>> = HashMap::with_capacity(winners.len());
        for (index, skill) in winners.iter().enumerate() {
            by_name.insert(skill.name.to_lowercase(), index);
            let short = skill.short_name().to_lowercase();
            let folder = skill.folder().to_lowercase();
            by_short.entry(short.clone()).or_default().push(index);
            if folder != short {
                by_short.entry(folder).or_default().push(index);
            }
        }

        Snapshot {
            skills: winners,
            shadowed,
            by_name,
            by_short,
            roots,
            diagnostics,
            missing_roots,
            per_root,
            files_parsed,
            dirs,
        }
    }

    /// Served skills in display order.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// Skills that lost a name collision, in precedence order.
    pub fn shadowed(&self) -> &[Shadowed] {
        &self.shadowed
    }

    /// The skill whose full name is `lowercase_name`.
    pub fn by_name(&self, lowercase_name: &str) -> Option<&Skill> {
        self.by_name.get(lowercase_name).map(|&i| &self.skills[i])
    }

    /// Skills whose short name or folder name is `lowercase_name`.
    pub fn by_short_name(&self, lowercase_name: &str) -> Vec<&Skill> {
        self.by_short
            .get(lowercase_name)
            .map(|indexes| indexes.iter().map(|&i| &self.skills[i]).collect())
            .unwrap_or_default()
    }

    /// Number of served skills per source, in precedence order.
    pub fn count_by_source(&self) -> Vec<(Source, usize)> {
        let mut counts: Vec<(Source, usize)> = Vec::new();
        for skill in &self.skills {
            match counts.last_mut() {
                Some((source, n)) if *source == skill.source => *n += 1,
                _ => counts.push((skill.source, 1)),
            }
        }
        counts
    }
}

/// Plugin skills are named `plugin:skill`, unless the frontmatter name is
/// already namespaced (holds a `:`).
fn full_name(name: &str, plugin: Option<&Plugin>) -> String {
    match plugin {
        Some(plugin) if !name.contains(':') => format!("{}:{name}", plugin.name),
        _ => name.to_owned(),
    }
}

fn shadow_finding(loser: &Skill, winner: &Skill) -> Finding {
    let why = if winner.source == loser.source {
        format!("{} comes first in the search order", winner.root.display())
    } else {
        format!(
            "{} skills take precedence over {} skills",
            winner.source, loser.source
        )
    };
    Finding::warning(
        "shadowed",
        format!(
            "skill '{}' is hidden by '{}' at {} ({why})",
            loser.name,
            winner.name,
            winner.file.display(),
        ),
        "rename one of them (names compare case-insensitively) or delete the copy you do not want",
    )
}
