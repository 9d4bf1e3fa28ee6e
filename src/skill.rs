//! [`Skill`]: a skill as served, the record every layer above the scan
//! shares (the snapshot indexes it, answers read it, the server lists it).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::gate::{Fence, Place};
use crate::parse::Parsed;
use crate::roots::{Origin, Plugin, Source};

/// A skill as served.
#[derive(Clone, Debug)]
pub struct Skill {
    /// The name the model types (behaviour.md §2).
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
    /// Where it was installed from (installed skills only).
    pub origin: Option<Arc<Origin>>,
    /// The repository no symlink may lead out of (project skills only).
    pub fence: Option<Arc<Fence>>,
    pub parsed: Arc<Parsed>,
}

impl Skill {
    /// One line, whitespace collapsed.
    pub fn description(&self) -> &str {
        &self.parsed.description
    }

    /// Where the skill is, for the gate that opens its files.
    pub fn place(&self) -> Place<'_> {
        Place {
            dir: &self.dir,
            file: &self.file,
            fence: self.fence.as_deref(),
        }
    }

    /// Whether `path` (a listed file, relative to the skill folder) is the
    /// skill's own `SKILL.md`.
    pub fn is_own_file(&self, path: &str) -> bool {
        self.file.file_name().is_some_and(|name| name == path)
    }

    /// The part of the name after the last `:` (the whole name when there is none).
    pub fn short_name(&self) -> &str {
        self.name.rsplit(':').next().unwrap_or(&self.name)
    }

    /// The name of the skill folder; for a single-skill plugin, whose folder
    /// is a version folder (`1.0.0`), the plugin's name; for an installed
    /// skill, whose folder in the store is its digest, the folder's name in
    /// its source.
    pub fn folder(&self) -> Cow<'_, str> {
        if let Some(origin) = &self.origin {
            return Cow::Borrowed(&origin.folder);
        }
        match &self.plugin {
            Some(plugin) if plugin.install_path == self.dir => Cow::Borrowed(&plugin.name),
            _ => self
                .dir
                .file_name()
                .map_or(Cow::Borrowed(""), |n| n.to_string_lossy()),
        }
    }
}

#[cfg(test)]
impl Skill {
    /// A user skill `name` in `/skills/name`, as unit tests need one.
    pub(crate) fn for_test(name: &str, description: &str) -> Skill {
        Skill {
            name: name.into(),
            dir: format!("/skills/{name}").into(),
            file: format!("/skills/{name}/SKILL.md").into(),
            source: Source::User,
            root: Path::new("/skills").into(),
            plugin: None,
            origin: None,
            fence: None,
            parsed: Arc::new(Parsed {
                name: name.into(),
                name_from: crate::parse::NameFrom::Frontmatter,
                description: description.into(),
                fields: Default::default(),
                description_chars: description.chars().count(),
                findings: Vec::new(),
            }),
        }
    }
}
