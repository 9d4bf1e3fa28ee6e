//! [`Skill`]: a skill as served, the record every layer above the scan
//! shares (the snapshot indexes it, answers read it, the server lists it).
//!
//! There is one per skill, so it is kept small (56 bytes and the texts): the
//! folder is one shared path (the scan's cache, the watcher and the files
//! cache hold the same allocation), the file is the folder and a name, what
//! is the same for every skill of a root is the root's, and the name is the
//! frontmatter's own text unless a plugin prefixes it.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::gate::{Fence, Place};
use crate::listing::Lone;
use crate::parse::Parsed;
use crate::roots::{Origin, Plugin, Root, SkillFile, Source};

/// A skill as served.
#[derive(Clone, Debug)]
pub struct Skill {
    /// The name the model types (behaviour.md §2).
    pub name: Arc<str>,
    /// The skill folder: the `Base directory` of a call.
    pub dir: Arc<Path>,
    /// The root the skill was found in (shared by all its skills): its
    /// path, its plugin (plugin skills only), where it was installed from
    /// (installed skills only), the folder no symlink may lead out of
    /// (project skills only).
    pub root: Arc<Root>,
    pub parsed: Arc<Parsed>,
    pub source: Source,
    /// The name of its file in `dir` ([`Skill::file`]).
    pub file_name: SkillFile,
    /// Its folder, when the scan saw `SKILL.md` alone in it: a call checks
    /// this with one `stat` instead of listing the folder.
    pub lone: Option<Lone>,
}

impl Skill {
    /// The plugin that provides it (plugin skills only).
    pub fn plugin(&self) -> Option<&Plugin> {
        self.root.plugin.as_deref()
    }

    /// Where it was installed from (installed skills only).
    pub fn origin(&self) -> Option<&Origin> {
        self.root.origin.as_deref()
    }

    /// The repository no symlink may lead out of (project skills only).
    pub fn fence(&self) -> Option<&Fence> {
        self.root.fence.as_deref()
    }

    /// The SKILL.md read at call time.
    pub fn file(&self) -> PathBuf {
        self.dir.join(self.file_name.as_str())
    }

    /// The description on one line, whitespace collapsed.
    pub fn description(&self) -> Cow<'_, str> {
        self.parsed.one_line_description()
    }

    /// Where the skill is, for the gate that opens its files.
    pub fn place(&self) -> Place<'_> {
        Place {
            dir: &self.dir,
            file_name: self.file_name.as_str(),
            fence: self.fence(),
            hidden: self.source.hidden(),
        }
    }

    /// Whether `path` (a listed file, relative to the skill folder) is the
    /// skill's own `SKILL.md`.
    pub fn is_own_file(&self, path: &str) -> bool {
        self.file_name.as_str() == path
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
        if let Some(origin) = self.origin() {
            return Cow::Borrowed(&origin.folder);
        }
        match &self.root.plugin {
            Some(plugin) if plugin.install_path == *self.dir => Cow::Borrowed(&plugin.name),
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
            dir: Path::new(&format!("/skills/{name}")).into(),
            file_name: SkillFile::Upper,
            source: Source::User,
            root: Arc::new(Root::new(
                "/skills".into(),
                Source::User,
                crate::roots::Layout::Folders,
            )),
            parsed: Arc::new(Parsed::new(
                name,
                crate::parse::NameFrom::Frontmatter,
                description,
                crate::parse::DescriptionFrom::Frontmatter,
            )),
            lone: None,
        }
    }
}

#[cfg(test)]
mod tests {
    /// A skill is kept once per skill found (100,000 of them fit in the
    /// memory budget): what it gained (`lone`) sits in its padding.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_skill_is_56_bytes() {
        assert_eq!(std::mem::size_of::<super::Skill>(), 56);
    }
}
