//! Which skills are used (behaviour.md §21): per skill, on which days it was
//! loaded, by which client and through which surface (the `skill` tool,
//! prompts, `skills/get`, `resources/read` of its `SKILL.md`), and which of
//! its files were read. Local only: one file in the data folder
//! (`usage.json`), in daily buckets, 90 days at most, never more than
//! [`MAX_FILE_BYTES`].
//!
//! The module knows skills and clients, not transports: every surface of
//! the server records through one call ([`Recorder::record`]), which hands
//! the event to a writer thread and returns; the writer adds events up and
//! writes the file every [`FLUSH_EVERY`] and when the server stops
//! ([`recorder`]). The catalog orders skills by recent use over its budget
//! ([`Ranks`]), `skillserve stats` and the app read a [`Report`], and
//! `serve --http --metrics` counts loads per skill with a bounded label set
//! ([`Tally`]).
//!
//! A skill is known by its name and where it comes from ([`SkillId`]): the
//! kind of its source and its root folder, or the installed source's id, or
//! the plugin's key — not its folder, which for installed and plugin skills
//! changes with every version.

mod date;
mod history;
mod recorder;
mod report;
mod tally;

use std::path::PathBuf;
use std::sync::Arc;

use crate::folders::Folders;
use crate::roots::{Root, Source};
use crate::skill::Skill;

pub use date::{Day, day_of, now_secs};
pub use history::{History, Loads, ReadError};
pub use recorder::{FLUSH_EVERY, Merged, Recorder, merge_into_file};
pub use report::{ClientUse, Ranks, Report, SkillUse, SourceUse, Unused};
pub use tally::{MAX_LABELS, Tally};

/// The file's name in the data folder.
pub const FILE_NAME: &str = "usage.json";
/// Days kept: older buckets are dropped when the file is written.
pub const RETENTION_DAYS: u32 = 90;
/// The file's cap: past it, the oldest days are dropped first, then the
/// least used entries of the oldest day kept.
pub const MAX_FILE_BYTES: usize = 2 * 1024 * 1024;
/// The days whose loads order the catalog over its budget.
pub const RECENT_DAYS: u32 = 30;
/// A client's name is kept to this many characters (any client may call
/// itself anything).
pub const MAX_CLIENT_CHARS: usize = 64;
/// Distinct client names kept per day; the loads of any further ones are
/// counted under the name [`OTHER_CLIENTS`].
pub const MAX_CLIENTS_PER_DAY: usize = 32;
/// The name the loads of clients past [`MAX_CLIENTS_PER_DAY`] are kept under.
pub const OTHER_CLIENTS: &str = "(other clients)";

/// Where the usage file is: the data folder's `usage.json`, if there is a
/// data folder.
pub fn path(folders: &Folders) -> Option<PathBuf> {
    folders.data.as_ref().map(|data| data.join(FILE_NAME))
}

/// Through which surface a skill was loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Surface {
    /// A `skill` tool call without `file`.
    Tool,
    /// `prompts/get` of the skill's prompt or of the `skill` prompt.
    Prompt,
    /// `skills/get` (the skills extension).
    SkillsGet,
    /// `resources/read` of the skill's `SKILL.md`.
    Resource,
}

impl Surface {
    /// Every surface, in the order the file and reports list them.
    pub const ALL: [Surface; 4] = [
        Surface::Tool,
        Surface::Prompt,
        Surface::SkillsGet,
        Surface::Resource,
    ];

    /// The name the file and `stats --json` give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Tool => "tool",
            Surface::Prompt => "prompt",
            Surface::SkillsGet => "skills_get",
            Surface::Resource => "resource",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What was done with a skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Use {
    /// The skill itself was loaded.
    Load(Surface),
    /// One of its files was read (the path relative to its folder).
    File(Box<str>),
}

/// A skill as the usage file knows it, stable across restarts and
/// versions: `source` is `custom`, `project`, `user` (with the root folder
/// in `root`), `installed:ID` or `plugin:NAME@MARKETPLACE` (with `root`
/// empty: their folders change with every version).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SkillId {
    pub source: String,
    pub root: String,
    pub name: String,
}

impl SkillId {
    /// The identity of `skill`.
    pub fn of(skill: &Skill) -> SkillId {
        SkillId::of_parts(&skill.name, &skill.root)
    }

    /// The identity of the skill called `name` in `root`.
    pub fn of_parts(name: &str, root: &Root) -> SkillId {
        let (source, root) = match root.source {
            Source::Installed => (
                format!(
                    "installed:{}",
                    root.origin.as_ref().map_or("", |o| o.id.as_str())
                ),
                String::new(),
            ),
            Source::Plugin => (
                format!(
                    "plugin:{}",
                    root.plugin.as_ref().map_or("", |p| p.key.as_str())
                ),
                String::new(),
            ),
            Source::Custom | Source::Project | Source::User => (
                root.source.as_str().to_owned(),
                root.path.to_string_lossy().into_owned(),
            ),
        };
        SkillId {
            source,
            root,
            name: name.to_owned(),
        }
    }

    /// Whether this is `skill`, compared without allocating.
    pub fn is(&self, skill: &Skill) -> bool {
        if *self.name != *skill.name {
            return false;
        }
        let root = &skill.root;
        match root.source {
            Source::Installed => {
                self.root.is_empty()
                    && self.source.strip_prefix("installed:")
                        == Some(root.origin.as_ref().map_or("", |o| o.id.as_str()))
            }
            Source::Plugin => {
                self.root.is_empty()
                    && self.source.strip_prefix("plugin:")
                        == Some(root.plugin.as_ref().map_or("", |p| p.key.as_str()))
            }
            Source::Custom | Source::Project | Source::User => {
                self.source == root.source.as_str()
                    && root.path.as_os_str().to_str() == Some(self.root.as_str())
            }
        }
    }

    /// The kind of source alone (`user`, `installed:team`): what
    /// `stats` groups by.
    pub fn source_label(&self) -> &str {
        &self.source
    }
}

/// One use of a skill, as the server hands it over: cheap to make (shared
/// pointers, a clock read); the identity is worked out by the writer.
#[derive(Debug)]
pub struct Event {
    pub name: Arc<str>,
    pub root: Arc<Root>,
    /// The client's name as it gave it (`None`: it gave none).
    pub client: Option<Box<str>>,
    pub what: Use,
    /// Seconds since the Unix epoch.
    pub at: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::SourceKind;
    use crate::roots::{Layout, Origin, Plugin};

    fn root(source: Source) -> Root {
        let mut root = Root::new("/home/u/.claude/skills".into(), source, Layout::Folders);
        root.origin = Some(Arc::new(Origin {
            id: "team".into(),
            kind: SourceKind::Git,
            url: "https://example.com/skills.git".into(),
            version: "abc".into(),
            path: "skills/pdf".into(),
            digest: "sha256:00".into(),
            folder: "pdf".into(),
            allow_risky: false,
            signer: None,
            scope: crate::lock::Scope::User,
        }));
        root.plugin = Some(Arc::new(Plugin {
            key: "tools@team".into(),
            name: "tools".into(),
            version: Some("1.0.0".into()),
            install_path: "/p/1.0.0".into(),
        }));
        root
    }

    #[test]
    fn a_skill_is_known_by_its_source_and_root_not_its_folder() {
        let id = |source| SkillId::of_parts("pdf", &root(source));
        assert_eq!(
            id(Source::User),
            SkillId {
                source: "user".into(),
                root: "/home/u/.claude/skills".into(),
                name: "pdf".into()
            }
        );
        assert_eq!(id(Source::Installed).source, "installed:team");
        assert_eq!(id(Source::Installed).root, "");
        assert_eq!(id(Source::Plugin).source, "plugin:tools@team");
        for source in [
            Source::Custom,
            Source::Project,
            Source::User,
            Source::Installed,
            Source::Plugin,
        ] {
            let mut skill = Skill::for_test("pdf", "d");
            skill.root = Arc::new(root(source));
            skill.source = source;
            assert!(SkillId::of(&skill).is(&skill), "{source:?}");
            let other = SkillId {
                name: "pdf2".into(),
                ..SkillId::of(&skill)
            };
            assert!(!other.is(&skill));
        }
        let mut user = Skill::for_test("pdf", "d");
        user.root = Arc::new(root(Source::User));
        let mut project = user.clone();
        project.root = Arc::new(root(Source::Project));
        assert!(!SkillId::of(&project).is(&user));
    }
}
