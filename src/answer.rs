//! What a `skill` call returns, decided on one snapshot (behaviour.md §5.2,
//! §5.3). The server and `skillserve show` both call [`answer`], so the CLI
//! prints exactly what a client receives. Rescanning on a miss is the
//! server's business; this module does blocking I/O and nothing else.

use std::sync::Arc;

use crate::contents::Contents;
use crate::disk::{self, ReadError};
use crate::parse;
use crate::render;
use crate::resolve::{self, MAX_SUGGESTIONS, Resolution};
use crate::snapshot::{Skill, Snapshot};

/// What a `skill` call with some name returns.
#[derive(Debug)]
pub enum Answer {
    /// The skill's text, with its `Loading:` header.
    Skill(String),
    /// No skill has the name. `vanished` when the snapshot had one but its
    /// file is gone: the snapshot is out of date, and the user deleted the
    /// skill, so "not found" (not an I/O error) is the truthful answer.
    NotFound {
        text: String,
        vanished: bool,
    },
    Ambiguous(String),
    /// The skill exists but its file could not be read.
    Unreadable {
        text: String,
        error: ReadError,
    },
    /// No skill has the name, but a skill folder of that name has a
    /// `SKILL.md` that could not be loaded (the scan said why).
    Broken(String),
}

impl Answer {
    /// The text the model reads.
    pub fn text(&self) -> &str {
        match self {
            Answer::Skill(text) | Answer::Ambiguous(text) | Answer::Broken(text) => text,
            Answer::NotFound { text, .. } | Answer::Unreadable { text, .. } => text,
        }
    }

    pub fn is_error(&self) -> bool {
        !matches!(self, Answer::Skill(_))
    }

    /// The text the model reads, without copying it.
    pub fn into_text(self) -> String {
        match self {
            Answer::Skill(text) | Answer::Ambiguous(text) | Answer::Broken(text) => text,
            Answer::NotFound { text, .. } | Answer::Unreadable { text, .. } => text,
        }
    }
}

/// Resolves `name` in `snapshot` and reads the skill's file through
/// `contents`.
pub fn answer(snapshot: &Snapshot, name: &str, contents: &Contents) -> Answer {
    match resolve::resolve(snapshot, name) {
        Resolution::Found(skill) => match read(skill, contents) {
            Ok(content) => Answer::Skill(render::loading(skill, &content)),
            // The folder may be gone too, or be a file now.
            Err(error) if error.is_gone() => {
                tracing::debug!(skill = %skill.name, "SKILL.md is gone: {}", skill.file.display());
                not_found(snapshot, name, Some(&skill.name))
            }
            Err(error) => Answer::Unreadable {
                text: render::unreadable(&skill.name, &error.to_string(), !error.is_passing()),
                error,
            },
        },
        Resolution::Ambiguous(matches) => Answer::Ambiguous(render::ambiguous(name, &matches)),
        Resolution::NotFound => match snapshot.failed(&name.trim().to_lowercase()) {
            Some(failed) => Answer::Broken(render::broken(name.trim(), &failed.diagnostic)),
            None => not_found(snapshot, name, None),
        },
    }
}

/// The skill's text as it is now, held to the scan's rules again: the file
/// may have been swapped (for a symlink out of the project, say) since.
fn read(skill: &Skill, contents: &Contents) -> Result<Arc<str>, ReadError> {
    if let Some(fence) = &skill.fence
        && disk::stays_inside(&skill.file, fence).is_err()
        && skill.file.exists()
    {
        return Err(ReadError::OutsideProject);
    }
    let text = contents.read(&skill.file)?;
    if !parse::has_frontmatter(&text) {
        return Err(ReadError::NoFrontmatter);
    }
    Ok(text)
}

/// "Not found" with suggestions; `vanished` names the skill whose file is gone
/// (it is not suggested).
fn not_found(snapshot: &Snapshot, name: &str, vanished: Option<&str>) -> Answer {
    let mut suggestions = resolve::suggest(snapshot, name, MAX_SUGGESTIONS + 1);
    suggestions.retain(|s| Some(s.name.as_str()) != vanished);
    suggestions.truncate(MAX_SUGGESTIONS);
    let total = snapshot.skills().len() - usize::from(vanished.is_some());
    Answer::NotFound {
        text: render::not_found(name, &suggestions, total),
        vanished: vanished.is_some(),
    }
}
