//! What a `skill` call returns, decided on one snapshot (behaviour.md §5.2,
//! §5.3, §13). The server and `skillserve show` both call [`lookup`] and, on a
//! miss, [`not_found`] ([`answer`] is both), so the CLI prints exactly what a
//! client receives. Rescanning on a miss, and where the search runs, are the
//! server's business; this module does blocking I/O and nothing else.

use std::sync::Arc;

use crate::config::MAX_NAME_CHARS;
use crate::contents::Contents;
use crate::disk::{self, ReadError};
use crate::parse;
use crate::render;
use crate::resolve::{self, Resolution};
use crate::search::MAX_MATCHES;
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
    /// The name is too long to be looked up (behaviour.md §13): an invalid
    /// argument, reported like the other bad `name` arguments.
    Invalid(String),
}

/// What a call finds before any search: an answer, or a miss.
#[derive(Debug)]
pub enum Lookup {
    Answer(Answer),
    /// No skill has the name; `vanished` names the skill the snapshot had
    /// under it when its file is gone. [`not_found`] answers it.
    Miss {
        vanished: Option<String>,
    },
}

impl Answer {
    /// The text the model reads.
    pub fn text(&self) -> &str {
        match self {
            Answer::Skill(text)
            | Answer::Ambiguous(text)
            | Answer::Broken(text)
            | Answer::Invalid(text) => text,
            Answer::NotFound { text, .. } | Answer::Unreadable { text, .. } => text,
        }
    }

    pub fn is_error(&self) -> bool {
        !matches!(self, Answer::Skill(_))
    }

    /// The text the model reads, without copying it.
    pub fn into_text(self) -> String {
        match self {
            Answer::Skill(text)
            | Answer::Ambiguous(text)
            | Answer::Broken(text)
            | Answer::Invalid(text) => text,
            Answer::NotFound { text, .. } | Answer::Unreadable { text, .. } => text,
        }
    }
}

/// Resolves `name` in `snapshot`, reads the skill's file through `contents`,
/// and searches on a miss: [`lookup`], then [`not_found`].
pub fn answer(snapshot: &Snapshot, name: &str, contents: &Contents) -> Answer {
    match lookup(snapshot, name, contents) {
        Lookup::Answer(answer) => answer,
        Lookup::Miss { vanished } => not_found(snapshot, name, vanished.as_deref()),
    }
}

/// Resolves `name` in `snapshot` and reads the skill's file through
/// `contents`; cheap whatever the name, since a name over
/// [`MAX_NAME_CHARS`] characters is refused before it is looked at.
pub fn lookup(snapshot: &Snapshot, name: &str, contents: &Contents) -> Lookup {
    if name.chars().nth(MAX_NAME_CHARS).is_some() {
        return Lookup::Answer(Answer::Invalid(render::name_too_long()));
    }
    let answer = match resolve::resolve(snapshot, name) {
        Resolution::Found(skill) => match read(skill, contents) {
            Ok(content) => Answer::Skill(render::loading(skill, &content)),
            // The folder may be gone too, or be a file now.
            Err(error) if error.is_gone() => {
                tracing::debug!(skill = %skill.name, "SKILL.md is gone: {}", skill.file.display());
                return Lookup::Miss {
                    vanished: Some(skill.name.clone()),
                };
            }
            Err(error) => Answer::Unreadable {
                text: render::unreadable(&skill.name, &error.to_string(), !error.is_passing()),
                error,
            },
        },
        Resolution::Ambiguous(matches) => Answer::Ambiguous(render::ambiguous(name, &matches)),
        Resolution::NotFound => match snapshot.failed(&name.trim().to_lowercase()) {
            Some(failed) => Answer::Broken(render::broken(name.trim(), &failed.diagnostic)),
            None => return Lookup::Miss { vanished: None },
        },
    };
    Lookup::Answer(answer)
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

/// "Not found" with the skills that match `name` best (behaviour.md §13);
/// `vanished` names the skill whose file is gone (it is not listed). At most
/// a few milliseconds, but proportional to the number of skills: the server
/// runs it on a blocking thread.
pub fn not_found(snapshot: &Snapshot, name: &str, vanished: Option<&str>) -> Answer {
    let mut matches = snapshot.search(name, MAX_MATCHES + 1);
    matches.retain(|s| Some(s.name.as_str()) != vanished);
    matches.truncate(MAX_MATCHES);
    let total = snapshot.skills().len() - usize::from(vanished.is_some());
    Answer::NotFound {
        text: render::not_found(name, &matches, total),
        vanished: vanished.is_some(),
    }
}
