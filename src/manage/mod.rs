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

use serde::Serialize;

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
}

impl Provenance {
    pub fn of(skill: &Skill) -> Provenance {
        let origin = skill.origin();
        Provenance {
            kind: skill.source.as_str(),
            source_id: origin.map(|o| o.id.clone()),
            source: origin.map(crate::roots::Origin::label),
            plugin: skill.plugin().map(|p| p.key.clone()),
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
