//! What the skills manager (the app of `ui/`) shows, as values: the
//! catalog with every skill's status and the clients that see it
//! ([`catalog`]), one skill's text, files and findings ([`skill`]), and the
//! clients with what each is shown and why ([`clients`]). The server's
//! app-only tools (`server::app`) return these as structured content; the
//! page draws them. Nothing here knows MCP or HTML.
//!
//! Everything is read from one snapshot and the profiles it is served
//! with, so the manager shows exactly what clients are served: the status
//! and reasons come from [`crate::profiles::Profiles::decide`], as `list
//! --all` prints them.

pub mod catalog;
pub mod clients;
pub mod skill;

pub use catalog::{Catalog, Page, Query};

use std::path::{Component, Path};

use serde::Serialize;

use crate::lock::SourceKind;
use crate::roots::{Root, Source};
use crate::skill::Skill;

/// Where a skill comes from, as every view shows it: its kind of folder,
/// and for an installed skill its source (`url@commit`), for a plugin
/// skill its plugin.
#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    /// `user`, `project`, `custom`, `installed` or `plugin`.
    pub kind: &'static str,
    /// The source's id in `sources.lock` (installed skills).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
    /// `url@commit` (installed skills).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The plugin's key, `name@marketplace` (plugin skills).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Who signed the installed version (installed skills whose source a
    /// trusted signer signed): `format`, `key`, `principal`, `object`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<crate::lock::Signer>,
}

impl Provenance {
    pub fn of(skill: &Skill) -> Provenance {
        let origin = skill.origin();
        Provenance {
            kind: skill.source.as_str(),
            source_id: origin.map(|o| o.id.clone()),
            source: origin.map(crate::roots::Origin::label),
            plugin: skill.plugin().map(|p| p.key.clone()),
            signed_by: origin.and_then(|o| o.signer.clone()),
        }
    }
}

/// A skill's status in the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Offered to a client that no profile changes.
    Served,
    /// Left out by a filter of `config.toml` (`disabled`, `exclude`,
    /// `include`) for a client that no profile changes.
    Hidden,
    /// A skill of the same name and higher precedence is served instead.
    Shadowed,
    /// Held back by the security scan until approved (`trust`).
    Quarantined,
    /// Its `SKILL.md` could not be loaded.
    Broken,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Served,
        Status::Hidden,
        Status::Shadowed,
        Status::Quarantined,
        Status::Broken,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Served => "served",
            Status::Hidden => "hidden",
            Status::Shadowed => "shadowed",
            Status::Quarantined => "quarantined",
            Status::Broken => "broken",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// A skills folder in a few words, for a row of the catalog (the full path
/// is shown on hover and in the skill view): `~/.claude/skills` under the
/// home folder, `.claude/skills` for a project's (relative to the
/// repository), `owner/repo@abc1234` for an installed skill, the plugin's
/// `name@marketplace`, else the path.
pub fn root_label(root: &Root, home: Option<&Path>) -> String {
    if let Some(origin) = &root.origin {
        return format!(
            "{}@{}",
            repository_name(&origin.url, origin.kind),
            short_version(&origin.version)
        );
    }
    if let Some(plugin) = &root.plugin {
        return plugin.key.clone();
    }
    if root.source == Source::Project
        && let Some(fence) = &root.fence
        && let Ok(inside) = root.path.strip_prefix(&fence.path)
    {
        return match slashed(inside) {
            rel if rel.is_empty() => ".".to_owned(),
            rel => rel,
        };
    }
    if let Some(home) = home
        && let Ok(inside) = root.path.strip_prefix(home)
    {
        return format!("~/{}", slashed(inside))
            .trim_end_matches('/')
            .to_owned();
    }
    root.path.display().to_string()
}

/// A relative path with `/` between its parts, on every platform.
fn slashed(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    parts.join("/")
}

/// What a source's URL names, shortly: `owner/repo` of a hosted
/// repository, the folder of a local one, the host of an index.
fn repository_name(url: &str, kind: SourceKind) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    if kind == SourceKind::Index {
        return rest.split('/').next().unwrap_or(rest).to_owned();
    }
    let local = url.starts_with("file://") || !url.contains(':') || Path::new(url).is_absolute();
    // `user@host:owner/repo` names its path after the colon.
    let rest = match rest.split_once(':') {
        Some((host, path)) if !url.contains("://") && !host.contains('/') => path,
        _ => rest,
    };
    let parts: Vec<&str> = rest.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    let keep = if local { 1 } else { 2 };
    let name = parts[parts.len().saturating_sub(keep)..].join("/");
    name.strip_suffix(".git").unwrap_or(&name).to_owned()
}

/// A commit's first 7 characters, or an index digest's first 7 hex digits.
fn short_version(version: &str) -> &str {
    let hex = crate::digest::hex_of(version);
    &hex[..hex.len().min(7)]
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::roots::{Layout, Origin};

    fn installed(url: &str, kind: SourceKind, version: &str) -> Root {
        let mut root = Root::new(
            PathBuf::from("/data/store/ab12"),
            Source::Installed,
            Layout::Skill,
        );
        root.origin = Some(Arc::new(Origin {
            id: "x".into(),
            kind,
            url: url.into(),
            version: version.into(),
            path: String::new(),
            digest: String::new(),
            folder: String::new(),
            allow_risky: false,
            signer: None,
            scope: crate::lock::Scope::User,
        }));
        root
    }

    #[test]
    fn a_root_is_labelled_by_where_it_is_not_by_its_whole_path() {
        let home = Path::new("/home/ann");
        let user = Root::new(
            PathBuf::from("/home/ann/.claude/skills"),
            Source::User,
            Layout::Folders,
        );
        assert_eq!(root_label(&user, Some(home)), "~/.claude/skills");
        let mut project = Root::new(
            PathBuf::from("/work/app/.claude/skills"),
            Source::Project,
            Layout::Folders,
        );
        project.fence = Some(Arc::new(crate::gate::Fence {
            path: PathBuf::from("/work/app"),
            real: PathBuf::from("/work/app"),
        }));
        assert_eq!(root_label(&project, Some(home)), ".claude/skills");
        let custom = Root::new(
            PathBuf::from("/opt/skills"),
            Source::Custom,
            Layout::Folders,
        );
        assert_eq!(root_label(&custom, Some(home)), "/opt/skills");
        let commit = "9d2f1ae18723aaaabbbbccccddddeeeeffff0000";
        for (url, label) in [
            (
                "https://github.com/anthropics/skills.git",
                "anthropics/skills@9d2f1ae",
            ),
            (
                "git@github.com:anthropics/skills.git",
                "anthropics/skills@9d2f1ae",
            ),
            ("file:///tmp/x/upstream", "upstream@9d2f1ae"),
            ("/srv/git/team-skills", "team-skills@9d2f1ae"),
        ] {
            assert_eq!(
                root_label(&installed(url, SourceKind::Git, commit), None),
                label,
                "{url}"
            );
        }
        let index = installed(
            "https://skills.example.com/.well-known/agent-skills/index.json",
            SourceKind::Index,
            &format!("sha256:{}", "0123456789".repeat(6) + "abcd"),
        );
        assert_eq!(root_label(&index, None), "skills.example.com@0123456");
    }
}
