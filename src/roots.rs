//! Roots: the directories that hold skill folders, in precedence order (behaviour.md §3.1).
//!
//! custom (`--skills-dir`, `SKILLSERVE_SKILLS_DIRS`) > project (nearest directory
//! first, up to the repository root) > user (under the home directory) >
//! installed (`skillserve add`; the roots come from `installed`). Plugin
//! skills come from `plugins` and rank after all of these.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::config::Config;
use crate::gate::{Fence, Hidden};
use crate::lock::{Scope, Signer, SourceKind};

/// The names a skill's file may have, in the order they are looked for.
pub const SKILL_FILES: [&str; 2] = ["SKILL.md", "skill.md"];

/// Which of [`SKILL_FILES`] a skill's file is: one byte in each skill's
/// record instead of a second path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkillFile {
    /// `SKILL.md`
    Upper,
    /// `skill.md`
    Lower,
}

impl SkillFile {
    /// Both, in the order they are looked for.
    pub const ALL: [SkillFile; 2] = [SkillFile::Upper, SkillFile::Lower];

    pub fn as_str(self) -> &'static str {
        match self {
            SkillFile::Upper => SKILL_FILES[0],
            SkillFile::Lower => SKILL_FILES[1],
        }
    }
}

/// Where a root (and so a skill) comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Custom,
    Project,
    User,
    /// Installed by `skillserve add` (the lock and the store).
    Installed,
    Plugin,
}

impl Source {
    /// Which names are not part of a skill of this source: an installed
    /// source's hidden files are its publisher's (only version-control
    /// metadata and `node_modules` are not); in the user's and projects'
    /// own folders no hidden file is a skill's.
    pub fn hidden(self) -> Hidden {
        match self {
            Source::Installed => Hidden::Served,
            _ => Hidden::Refused,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Source::Custom => "custom",
            Source::Project => "project",
            Source::User => "user",
            Source::Installed => "installed",
            Source::Plugin => "plugin",
        }
    }

    /// Whether skills from this source are the user's own, or could have
    /// been put there by someone else. Skills that are not the user's own
    /// are scanned before they are served and quarantined on an error-level
    /// finding (`security::screen`); the user's own are only warned about.
    ///
    /// The one place that decides it: a new source must say here which it
    /// is (the match has no catch-all for that reason).
    pub fn is_own(self) -> bool {
        match self {
            // Folders the user named, and their home folders.
            Source::Custom | Source::User => true,
            // Installed and enabled by the user in Claude Code, which runs
            // them itself anyway.
            Source::Plugin => true,
            // Whatever repository the client was opened in.
            Source::Project => false,
            // Fetched from someone else's repository or index: approved by
            // `skillserve add --allow-risky` or `skillserve trust` only.
            Source::Installed => false,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// What a root holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Skill folders below it (up to `scan::MAX_DEPTH` levels).
    Folders,
    /// Itself a skill when it holds a `SKILL.md`, else skill folders below it:
    /// `--skills-dir` pointed at one skill, or a path a plugin declares.
    SkillOrFolders,
    /// Only itself, as one skill (a single-skill plugin).
    Skill,
}

/// A directory holding skills.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    pub path: PathBuf,
    pub source: Source,
    pub layout: Layout,
    /// The plugin the root belongs to (plugin roots only).
    pub plugin: Option<Arc<Plugin>>,
    /// Where an installed skill came from (installed roots only: each is
    /// one skill, an entry of the store).
    pub origin: Option<Arc<Origin>>,
    /// The root's `SKILL.md` and the version it must have (installed roots:
    /// the version recorded when the store entry was last hashed). The scan
    /// takes it as found without a walk, and refuses the file when the one
    /// it opens has another version (`store-tampered`).
    pub probed: Option<(PathBuf, crate::disk::Stamp)>,
    /// For project roots, which come from whatever repository the client was
    /// opened in: the repository's folder, which no symlink may lead out of
    /// (behaviour.md §12). `None`: symlinks are followed anywhere.
    pub fence: Option<Arc<Fence>>,
}

impl Root {
    pub fn new(path: PathBuf, source: Source, layout: Layout) -> Root {
        Root {
            path,
            source,
            layout,
            plugin: None,
            origin: None,
            probed: None,
            fence: None,
        }
    }
}

/// Where an installed skill came from: its source in `sources.lock` and its
/// place there (behaviour.md, "Sources").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The source's id (`skillserve add --id`).
    pub id: String,
    pub kind: SourceKind,
    /// The repository's URL (or path), or the index's URL.
    pub url: String,
    /// The commit fetched (git), or the `sha256:` digest of the index.
    pub version: String,
    /// The skill's folder in the repository (`skills/pdf`), or its
    /// artifact's URL in the index.
    pub path: String,
    /// The skill's digest, which names its store entry.
    pub digest: String,
    /// The name of the skill's folder in the source: the name a skill
    /// without one in its frontmatter takes, and the folder its name is
    /// checked against (the store entry's own folder is its digest).
    pub folder: String,
    /// The user installed it knowing of error-level security findings
    /// (`add --allow-risky`); never set for a project's lock, which the
    /// project's authors, not the user, wrote.
    pub allow_risky: bool,
    /// Who signed the version installed (a trusted signer, checked when it
    /// was installed).
    pub signer: Option<Signer>,
    /// Whose lock names it: the user's `sources.lock` or the project's
    /// `skills.lock`.
    pub scope: Scope,
}

impl Origin {
    /// `url@version`: the `Source:` line of an answer.
    pub fn label(&self) -> String {
        format!("{}@{}", self.url, self.version)
    }

    /// `principal (key)`: the `Signed-by:` line of an answer.
    pub fn signed_by(&self) -> Option<String> {
        self.signer.as_ref().map(Signer::label)
    }
}

/// An installed, enabled Claude Code plugin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plugin {
    /// `name@marketplace`, as Claude Code keys it.
    pub key: String,
    /// The part of the key before `@`: the namespace of its skills.
    pub name: String,
    pub version: Option<String>,
    pub install_path: PathBuf,
}

/// Skill folders inside a project directory, in the order agents document them.
pub const PROJECT_SKILL_DIRS: [&str; 7] = [
    ".claude/skills",
    ".agents/skills",
    ".codex/skills",
    ".cursor/skills",
    ".gemini/skills",
    ".opencode/skills",
    ".github/skills",
];

/// The custom, project and user roots for `config`, highest precedence first.
///
/// The same path is listed once, at its highest precedence. In particular a
/// client started in the home directory does not turn the user roots into
/// project roots: they stay `user`.
pub fn roots(config: &Config) -> Vec<Root> {
    // Computed even with `--no-user`: those folders must not come back as
    // project folders when the client starts the server in the home directory.
    let user = user_roots(config);
    let home = config.home.as_deref().map(canonical);
    let mut out: Vec<Root> = Vec::new();
    let mut push = |path: PathBuf, source: Source, fence: Option<&Arc<Fence>>| {
        if !out.iter().any(|r| r.path == path) {
            // `--skills-dir` may point at one skill folder.
            let layout = match source {
                Source::Custom => Layout::SkillOrFolders,
                _ => Layout::Folders,
            };
            let mut root = Root::new(path, source, layout);
            root.fence = fence.cloned();
            out.push(root);
        }
    };
    for dir in &config.custom_dirs {
        push(dir.clone(), Source::Custom, None);
    }
    if let Some(project) = &config.project_dir {
        let dirs = project_dirs(project);
        // The top of the walk-up: the repository, or the project folder.
        let fence: Option<Arc<Fence>> = dirs.last().map(|top| Arc::new(Fence::new(top)));
        for dir in dirs {
            // The home directory, however it is spelled (a symlink, say).
            let is_home = home.is_some() && home == Some(canonical(&dir));
            for sub in PROJECT_SKILL_DIRS {
                let as_user = config.home.as_ref().map(|h| h.join(sub));
                if is_home && as_user.is_some_and(|p| user.contains(&p)) {
                    continue;
                }
                push(dir.join(sub), Source::Project, fence.as_ref());
            }
        }
    }
    if config.user {
        for path in user {
            push(path, Source::User, None);
        }
    }
    out
}

/// The canonical form of `path` when it exists, else `path` itself.
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `dir` and its ancestors up to the enclosing repository root (the first one
/// holding `.git`, a directory or a worktree file), nearest first. Only `dir`
/// itself when it is not inside a repository.
pub fn project_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut chain = Vec::new();
    for ancestor in dir.ancestors() {
        chain.push(ancestor.to_path_buf());
        if ancestor.join(".git").symlink_metadata().is_ok() {
            return chain;
        }
    }
    vec![dir.to_path_buf()]
}

/// The user roots in precedence order (behaviour.md §3.1, item 3).
fn user_roots(config: &Config) -> Vec<PathBuf> {
    let Some(home) = &config.home else {
        return Vec::new();
    };
    let claude = config
        .claude_config_dir
        .clone()
        .unwrap_or_else(|| home.join(".claude"));
    let codex = config
        .codex_home
        .clone()
        .unwrap_or_else(|| home.join(".codex"));
    vec![
        claude.join("skills"),
        home.join(".agents/skills"),
        codex.join("skills"),
        home.join(".cursor/skills"),
        home.join(".gemini/skills"),
        home.join(".config/opencode/skills"),
        home.join(".copilot/skills"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_MAX_FILE_BYTES;

    fn config(home: &Path, project: Option<&Path>) -> Config {
        Config {
            custom_dirs: vec![PathBuf::from("/custom")],
            project_dir: project.map(Path::to_path_buf),
            home: Some(home.to_path_buf()),
            user: true,
            claude_config_dir: None,
            codex_home: None,
            plugins: true,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            folders: Default::default(),
        }
    }

    #[test]
    fn project_walks_up_to_the_repository_root_nearest_first() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let deep = repo.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(
            project_dirs(&deep),
            vec![deep.clone(), repo.join("a"), repo]
        );
    }

    #[test]
    fn project_outside_a_repository_is_only_itself() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(project_dirs(tmp.path()), vec![tmp.path().to_path_buf()]);
    }

    #[test]
    fn order_is_custom_project_user_and_home_stays_user() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let roots = roots(&config(home, Some(home)));
        assert_eq!(
            roots[0],
            Root::new("/custom".into(), Source::Custom, Layout::SkillOrFolders)
        );
        let claude = roots
            .iter()
            .find(|r| r.path == home.join(".claude/skills"))
            .unwrap();
        assert_eq!(claude.source, Source::User);
        // `.opencode/skills` is a project folder but not a user one.
        let opencode = roots
            .iter()
            .find(|r| r.path == home.join(".opencode/skills"))
            .unwrap();
        assert_eq!(opencode.source, Source::Project);
        let sources: Vec<Source> = roots.iter().map(|r| r.source).collect();
        let mut sorted = sources.clone();
        sorted.sort();
        assert_eq!(
            sources, sorted,
            "roots are grouped by source in precedence order"
        );
    }

    #[cfg(unix)]
    #[test]
    fn home_as_project_never_serves_user_folders_as_project_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let link = tmp.path().join("home-link");
        std::os::unix::fs::symlink(&home, &link).unwrap();
        let mut cfg = config(&home, Some(&link));
        cfg.user = false;
        let roots = roots(&cfg);
        assert!(
            !roots.iter().any(|r| r.path == link.join(".claude/skills")),
            "{roots:#?}"
        );
        assert!(!roots.iter().any(|r| r.source == Source::User));
        assert!(
            roots
                .iter()
                .any(|r| r.path == link.join(".opencode/skills"))
        );
    }

    #[test]
    fn config_dir_overrides_replace_the_defaults() {
        let mut cfg = config(Path::new("/home/u"), None);
        cfg.claude_config_dir = Some("/cc".into());
        cfg.codex_home = Some("/codex".into());
        let paths: Vec<PathBuf> = roots(&cfg).into_iter().map(|r| r.path).collect();
        assert!(paths.contains(&PathBuf::from("/cc/skills")));
        assert!(paths.contains(&PathBuf::from("/codex/skills")));
        assert!(!paths.contains(&PathBuf::from("/home/u/.claude/skills")));
    }
}
