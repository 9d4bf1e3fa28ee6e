//! A row of the native-clients table (`config::native`) made concrete for
//! this machine: the folders, as skillserve spells its roots, whose skills
//! the client loads itself (behaviour.md §17.4).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::config::native::NativeClient;
use crate::roots::{Root, Source};

/// The folders one client loads natively.
#[derive(Clone, Debug)]
pub struct NativeFolders {
    pub client: &'static NativeClient,
    /// Project folders (at the levels the client reads) and user folders.
    folders: HashSet<PathBuf>,
    /// Whether it loads the skills of enabled Claude Code plugins.
    plugins: bool,
}

impl NativeFolders {
    /// The folders `client` loads, given the project's levels (the project
    /// directory first, then its parents up to the repository root:
    /// `roots::project_dirs`).
    pub fn new(
        client: &'static NativeClient,
        config: &Config,
        levels: &[PathBuf],
    ) -> NativeFolders {
        let mut folders = HashSet::new();
        let read = if client.walks_up { levels.len() } else { 1 };
        for level in levels.iter().take(read) {
            folders.extend(client.project.iter().map(|folder| level.join(folder)));
        }
        folders.extend(
            client
                .user
                .iter()
                .filter_map(|folder| user_folder(folder, config)),
        );
        NativeFolders {
            client,
            folders,
            plugins: client.plugins,
        }
    }

    /// Whether the client loads the skills of `root` itself.
    pub fn loads(&self, root: &Root) -> bool {
        (self.plugins && root.source == Source::Plugin) || self.folders.contains(&root.path)
    }
}

/// A user folder of the table (`~/.claude/skills`) as skillserve's user
/// root of that spelling: `~/.claude` is `$CLAUDE_CONFIG_DIR` and `~/.codex`
/// is `$CODEX_HOME` when they are set.
fn user_folder(folder: &str, config: &Config) -> Option<PathBuf> {
    let below_home = folder.strip_prefix("~/")?;
    let (first, rest) = below_home.split_once('/').unwrap_or((below_home, ""));
    let base = match first {
        ".claude" => config.claude_config_dir.clone(),
        ".codex" => config.codex_home.clone(),
        _ => config.home.as_ref().map(|home| home.join(first)),
    }?;
    Some(if rest.is_empty() {
        base
    } else {
        base.join(Path::new(rest))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::native;
    use crate::roots::{self, Layout, PROJECT_SKILL_DIRS};

    fn config(home: &Path, project: Option<&Path>) -> Config {
        Config {
            custom_dirs: Vec::new(),
            project_dir: project.map(Path::to_path_buf),
            home: Some(home.to_path_buf()),
            user: true,
            claude_config_dir: Some("/claude-config".into()),
            codex_home: Some(home.join(".codex")),
            plugins: true,
            max_file_bytes: 1,
            folders: Default::default(),
        }
    }

    fn row(id: &str) -> &'static NativeClient {
        native::clients().iter().find(|r| r.id == id).unwrap()
    }

    #[test]
    fn the_table_names_only_folders_skillserve_serves() {
        let home = Path::new("/home/u");
        let config = config(home, None);
        let user_roots: Vec<PathBuf> = roots::roots(&config)
            .into_iter()
            .filter(|root| root.source == Source::User)
            .map(|root| root.path)
            .collect();
        for client in native::clients() {
            for folder in &client.project {
                assert!(
                    PROJECT_SKILL_DIRS.contains(&folder.as_str()),
                    "{}: project folder {folder} is not one skillserve serves",
                    client.id
                );
            }
            for folder in &client.user {
                let path = user_folder(folder, &config).unwrap();
                assert!(
                    user_roots.contains(&path),
                    "{}: user folder {folder} is not one skillserve serves",
                    client.id
                );
            }
        }
    }

    #[test]
    fn levels_follow_walks_up_and_user_folders_follow_the_variables() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let app = repo.join("app");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(&app).unwrap();
        let config = config(Path::new("/home/u"), Some(&app));
        let levels = roots::project_dirs(&app);
        let root = |path: PathBuf, source| Root::new(path, source, Layout::Folders);

        let claude = NativeFolders::new(row("claude-code"), &config, &levels);
        assert!(claude.loads(&root(app.join(".claude/skills"), Source::Project)));
        assert!(claude.loads(&root(repo.join(".claude/skills"), Source::Project)));
        assert!(!claude.loads(&root(repo.join(".agents/skills"), Source::Project)));
        assert!(claude.loads(&root("/claude-config/skills".into(), Source::User)));
        assert!(!claude.loads(&root("/home/u/.claude/skills".into(), Source::User)));
        assert!(claude.loads(&root("/anywhere".into(), Source::Plugin)));

        let cursor = NativeFolders::new(row("cursor"), &config, &levels);
        assert!(cursor.loads(&root(app.join(".cursor/skills"), Source::Project)));
        assert!(!cursor.loads(&root(repo.join(".cursor/skills"), Source::Project)));
        assert!(cursor.loads(&root("/home/u/.codex/skills".into(), Source::User)));
        assert!(!cursor.loads(&root("/anywhere".into(), Source::Plugin)));

        let desktop = NativeFolders::new(row("claude-desktop"), &config, &levels);
        assert!(!desktop.loads(&root("/claude-config/skills".into(), Source::User)));
    }
}
