//! What a `skill` call returns, decided on one client's view of one
//! snapshot (behaviour.md §5.2, §5.3, §9, §14, §17). The server and
//! `skillserve show` both call [`lookup`] (or [`lookup_file`]) and, on a
//! miss, [`not_found`] ([`answer`] and [`answer_file`] are both), so the CLI
//! prints exactly what a client receives. Rescanning on a miss, and where the search runs, are the
//! server's business; this module does blocking I/O and nothing else.

use std::path::Path;
use std::sync::Arc;

use crate::config::MAX_QUERY_CHARS;
use crate::contents::{self, Contents};
use crate::digest::Sum;
use crate::disk::ReadError;
use crate::files::Files;
use crate::gate::{FileError, Gate, Kind, Target};
use crate::listing;
use crate::mime::Content;
use crate::parse;
use crate::profiles::View;
use crate::render::{self, Base};
use crate::resolve::{self, Resolution};
use crate::search::MAX_MATCHES;
use crate::security::Seen;
use crate::skill::Skill;
use crate::snapshot::Why;
use crate::uri;

/// What a `skill` call with some name returns.
#[derive(Debug)]
pub enum Answer {
    /// The skill's text, with its `Loading:` header (the first content
    /// block), and the list of its other files (the second), if it has any;
    /// `skill` is the skill loaded.
    Skill {
        text: String,
        files: Option<String>,
        skill: Skill,
    },
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
    /// No served skill has the name, but a withheld one (quarantined) has:
    /// why it is not served.
    Withheld(String),
    /// The skill is not the user's own, and the bytes a call was about to
    /// serve are not those its screening read (a file changed since, or
    /// the skill was not screened yet): nothing is served until the skill
    /// at `dir` is scanned again.
    Unscanned {
        text: String,
        dir: Arc<Path>,
    },
    /// The name is too long to be looked up (behaviour.md §14): an invalid
    /// argument, reported like the other bad `name` arguments.
    Invalid(String),
}

/// What a call finds before any search: an answer, or a miss.
#[derive(Debug)]
pub enum Lookup<T = Answer> {
    Answer(T),
    /// No skill has the name; `vanished` names the skill the snapshot had
    /// under it when its files are gone. [`not_found`] answers it.
    Miss {
        vanished: Option<String>,
    },
}

impl Answer {
    /// The text the model reads first (for a skill, its SKILL.md).
    pub fn text(&self) -> &str {
        match self {
            Answer::Skill { text, .. }
            | Answer::Ambiguous(text)
            | Answer::Broken(text)
            | Answer::Withheld(text)
            | Answer::Invalid(text) => text,
            Answer::NotFound { text, .. }
            | Answer::Unreadable { text, .. }
            | Answer::Unscanned { text, .. } => text,
        }
    }

    pub fn is_error(&self) -> bool {
        !matches!(self, Answer::Skill { .. })
    }

    /// The first text the model reads, without copying it.
    pub fn into_text(self) -> String {
        self.into_blocks().swap_remove(0)
    }

    /// Every text content block, in order: one, or for a skill with other
    /// files two.
    pub fn into_blocks(self) -> Vec<String> {
        match self {
            Answer::Skill { text, files, .. } => std::iter::once(text).chain(files).collect(),
            Answer::Ambiguous(text)
            | Answer::Broken(text)
            | Answer::Withheld(text)
            | Answer::Invalid(text) => vec![text],
            Answer::NotFound { text, .. }
            | Answer::Unreadable { text, .. }
            | Answer::Unscanned { text, .. } => vec![text],
        }
    }
}

/// Resolves `name` in `view`, reads the skill's file through `contents`,
/// lists its other files through `files` (unless its folder is still
/// [`Lone`](crate::listing::Lone)), and searches on a miss:
/// [`lookup`], then [`not_found`].
pub fn answer(view: &View, name: &str, contents: &Contents, files: &Files, base: Base) -> Answer {
    match lookup(view, name, contents, files, base) {
        Lookup::Answer(answer) => answer,
        Lookup::Miss { vanished } => not_found(view, name, vanished.as_deref()),
    }
}

/// Resolves `name` among the skills `view` shows, reads the skill's file
/// through `contents` and lists its other files through `files` (a folder
/// still [`Lone`](crate::listing::Lone) takes one `stat` instead); cheap
/// whatever the name, since a name over [`MAX_QUERY_CHARS`] characters is
/// refused before it is looked at. A skill the view leaves out is a miss,
/// like a name no skill has. `base` says how the answer names the skill's
/// folder.
pub fn lookup(view: &View, name: &str, contents: &Contents, files: &Files, base: Base) -> Lookup {
    let skill = match find(view, name, base) {
        Ok(skill) => skill,
        Err(lookup) => return lookup,
    };
    let seen = view.snapshot().seen(skill);
    let answer = match read(skill, contents, seen.is_some()) {
        Ok(read) if !admitted(seen, skill.file_name.as_str(), read.sum.as_ref()) => {
            // A kept text whose version looked unchanged may not be what
            // the file holds: read again next time.
            contents.forget(skill.place());
            unscanned(skill, skill.file_name.as_str())
        }
        Ok(read) => Answer::Skill {
            skill: skill.clone(),
            text: render::loading(skill, &read.text, &base_directory(skill, base)),
            // A folder that holds only `SKILL.md` has no files block.
            files: if skill.lone.is_some_and(|lone| lone.holds(&skill.dir)) {
                None
            } else {
                files
                    .listing(skill.place(), &skill.dir)
                    .ok()
                    .and_then(|listing| render::files_block(skill, &listing))
            },
        },
        // The folder may be gone too, or be a file now.
        Err(error) if error.is_gone() => return vanished(skill),
        Err(error) => Answer::Unreadable {
            text: render::unreadable(&skill.name, &error.to_string(), !error.is_passing()),
            error,
        },
    };
    Lookup::Answer(answer)
}

/// A file of a skill that was read: the skill, and the file's path in its
/// folder.
#[derive(Debug)]
pub struct Read {
    pub skill: Skill,
    pub file: String,
}

/// What a `skill` call with a `file` argument returns.
#[derive(Debug)]
pub enum FileAnswer {
    /// A text file, with its `Loading:` header.
    File { text: String, read: Read },
    /// A folder's listing, or the one line describing a binary file.
    Text(String),
    /// An image: a text block saying what follows, then the image.
    Image {
        text: String,
        mime: &'static str,
        bytes: Vec<u8>,
        read: Read,
    },
    /// No skill has the name (or it cannot be loaded): what a call without
    /// `file` would answer.
    Skill(Answer),
    /// The file cannot be served; the text says why.
    Refused { text: String, error: FileError },
}

impl FileAnswer {
    /// The answer about the skill itself, when the name found none that can
    /// be loaded.
    pub fn about_the_skill(&self) -> Option<&Answer> {
        match self {
            FileAnswer::Skill(answer) => Some(answer),
            _ => None,
        }
    }

    pub fn is_error(&self) -> bool {
        match self {
            FileAnswer::File { .. } | FileAnswer::Text(_) | FileAnswer::Image { .. } => false,
            FileAnswer::Skill(answer) => answer.is_error(),
            FileAnswer::Refused { .. } => true,
        }
    }
}

/// [`lookup_file`], then [`not_found`] on a miss.
pub fn answer_file(view: &View, name: &str, file: &str, files: &Files, base: Base) -> FileAnswer {
    match lookup_file(view, name, file, files, base) {
        Lookup::Answer(answer) => answer,
        Lookup::Miss { vanished } => FileAnswer::Skill(not_found(view, name, vanished.as_deref())),
    }
}

/// Resolves `name` in `view`, then `file` inside that skill's folder
/// (behaviour.md §9), and reads it or lists it through `files`. A name that
/// finds no skill is a miss, as for [`lookup`].
pub fn lookup_file(
    view: &View,
    name: &str,
    file: &str,
    files: &Files,
    base: Base,
) -> Lookup<FileAnswer> {
    let skill = match find(view, name, base) {
        Ok(skill) => skill,
        Err(Lookup::Answer(answer)) => return Lookup::Answer(FileAnswer::Skill(answer)),
        Err(Lookup::Miss { vanished }) => return Lookup::Miss { vanished },
    };
    let refused = |error: FileError| {
        Lookup::Answer(FileAnswer::Refused {
            text: render::file_error(&skill.name, file, &error),
            error,
        })
    };
    let gate = match Gate::open(skill.place()) {
        Ok(gate) => gate,
        // The folder is gone: the user deleted the skill. (For a project
        // skill, gone inside the repository: a symlink out of it is refused
        // by the gate, never followed to see whether anything is there.)
        Err(FileError::NotFound { .. }) => return vanished(skill),
        Err(error) => return refused(error),
    };
    let target = match gate.resolve(file) {
        Ok(target) => target,
        Err(FileError::NotFound { .. }) => {
            let suggestions = files
                .listing(skill.place(), &skill.dir)
                .map(|listing| listing::suggest(&listing, file))
                .unwrap_or_default();
            return refused(FileError::NotFound { suggestions });
        }
        Err(error) => return refused(error),
    };
    let rel = target.rel().to_owned();
    let rel = rel.as_str();
    if target.kind() == Kind::Folder {
        drop(target);
        return Lookup::Answer(match files.folder_listing(skill.place(), &skill.dir, rel) {
            Ok(listing) => FileAnswer::Text(render::folder(skill, rel, &listing)),
            Err(error) => return refused(error),
        });
    }
    let seen = view.snapshot().seen(skill);
    let read = || Read {
        skill: skill.clone(),
        file: rel.to_owned(),
    };
    Lookup::Answer(match files.read(target, seen.is_some()) {
        // A description of a binary file shows none of its bytes.
        Ok((Content::Text { .. } | Content::Image { .. }, sum))
            if !admitted(seen, rel, sum.as_ref()) =>
        {
            FileAnswer::Skill(unscanned(skill, rel))
        }
        Ok((Content::Text { text, .. }, _)) => FileAnswer::File {
            text: render::loading_file(skill, rel, &text, &base_directory(skill, base)),
            read: read(),
        },
        Ok((Content::Image { bytes, mime }, _)) => FileAnswer::Image {
            read: read(),
            text: render::loading_image(
                skill,
                rel,
                mime,
                bytes.len() as u64,
                &base_directory(skill, base),
            ),
            mime,
            bytes,
        },
        Ok((Content::Binary { size, mime }, _)) => {
            FileAnswer::Text(render::binary_file(rel, mime, size))
        }
        Err(error) => return refused(error),
    })
}

/// The file or folder `file` names inside `skill`'s folder, opened through
/// the gate ([`Gate::resolve`]); `skill://` resources are found the same
/// way. A project skill whose folder became a symlink out of the repository
/// since the scan is refused whole (behaviour.md §12).
pub fn target(skill: &Skill, file: &str) -> Result<Target, FileError> {
    Gate::open(skill.place())?.resolve(file)
}

/// The skill `name` resolves to, or what to answer instead: a name too long
/// to look up, an ambiguous or broken name, or a miss.
fn find<'a>(view: &'a View, name: &str, base: Base) -> Result<&'a Skill, Lookup> {
    if name.chars().nth(MAX_QUERY_CHARS).is_some() {
        return Err(Lookup::Answer(Answer::Invalid(render::name_too_long())));
    }
    let answer = match resolve::resolve(view, name) {
        Resolution::Found(skill) => return Ok(skill),
        Resolution::Ambiguous(matches) => Answer::Ambiguous(render::ambiguous(name, &matches)),
        Resolution::NotFound => {
            let key = name.trim().to_lowercase();
            if let Some(withheld) = view.snapshot().withheld_named(&key) {
                Answer::Withheld(match &withheld.why {
                    Why::Quarantined(report) => render::quarantined(&withheld.skill, report),
                })
            } else if let Some(failed) = view.failed(&key) {
                Answer::Broken(render::broken(name.trim(), &failed.diagnostic, base))
            } else {
                return Err(Lookup::Miss { vanished: None });
            }
        }
    };
    Err(Lookup::Answer(answer))
}

/// The `Base directory` line's value: the skill folder's path, or for a
/// remote client its `skill://` URI and how to read its files.
fn base_directory(skill: &Skill, base: Base) -> String {
    match base {
        // `display` checks the bytes chunk by chunk for invalid UTF-8.
        Base::Path => match skill.dir.to_str() {
            Some(dir) => dir.to_owned(),
            None => skill.dir.display().to_string(),
        },
        Base::Uri => render::remote_base_directory(&uri::of(&skill.name, "")),
    }
}

/// The miss of a skill of the snapshot whose files are gone: the user deleted
/// it since the last scan.
fn vanished<T>(skill: &Skill) -> Lookup<T> {
    tracing::debug!(skill = %skill.name, "SKILL.md is gone: {}", skill.file().display());
    Lookup::Miss {
        vanished: Some(skill.name.to_string()),
    }
}

/// The skill's text as it is now, held to the scan's rules again: the file
/// may have been swapped (for a symlink out of the project, say) since, and
/// it is read through the gate. With `sum`, the SHA-256 of its bytes too.
fn read(skill: &Skill, contents: &Contents, sum: bool) -> Result<contents::Read, ReadError> {
    let read = contents.read_summed(skill.place(), sum)?;
    if !parse::has_frontmatter(&read.text) {
        return Err(ReadError::NoFrontmatter);
    }
    Ok(read)
}

/// Whether bytes of the file `rel` whose SHA-256 is `sum` may be served:
/// always for the user's own skills (`seen` is `None`: never screened),
/// else only when they are the bytes the skill's screening read.
pub fn admitted(seen: Option<&Seen>, rel: &str, sum: Option<&Sum>) -> bool {
    match seen {
        None => true,
        Some(seen) => sum.is_some_and(|sum| seen.admits_sum(rel, sum)),
    }
}

/// The answer for a file of `skill` that changed since its screening.
fn unscanned(skill: &Skill, rel: &str) -> Answer {
    tracing::info!(
        skill = %skill.name,
        "{rel} is not what the security scan read; scanning the skill again before serving it"
    );
    Answer::Unscanned {
        text: render::unscanned(&skill.name, rel),
        dir: Arc::clone(&skill.dir),
    }
}

/// "Not found" with the shown skills that match `name` best (behaviour.md
/// §14); `vanished` names the skill whose file is gone (it is not listed).
/// At most a few milliseconds, but proportional to the number of skills:
/// the server runs it on a blocking thread.
pub fn not_found(view: &View, name: &str, vanished: Option<&str>) -> Answer {
    let mut matches = view.search(name, MAX_MATCHES + 1);
    matches.retain(|s| Some(&*s.name) != vanished);
    matches.truncate(MAX_MATCHES);
    let total = view.len() - usize::from(vanished.is_some());
    Answer::NotFound {
        text: render::not_found(name, &matches, total, view.placement()),
        vanished: vanished.is_some(),
    }
}
