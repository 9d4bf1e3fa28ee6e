//! The lock of installed skills, `sources.lock` in the config folder
//! (behaviour.md, "Sources"): its model ([`Lock`]: per source its id, kind,
//! URL, the ref asked for, the commit or index digest installed, when it was
//! added and updated, and per skill its name, its path in the source and its
//! digest), reading it strictly, with the line of every problem ([`read`],
//! [`parse`]), and writing it ([`LockFile`]: edited with `toml_edit` so that
//! the user's comments are kept, replaced atomically under the lock of its
//! editors). The one module that knows the file's format: `serve` reads it
//! (through `installed`, which serves what it names), the commands of
//! `sources` change it. It sits low in the layers, below `roots`, because
//! reading it is part of serving.

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diagnostic::{Code, Diagnostic, Finding};
use crate::disk::{self, ReadError};

mod access;
mod edit;
mod reader;
mod signer;

pub use access::{Access, HeaderError, HeaderTemplate};
pub use edit::{LockFile, SaveError, now};
pub use signer::{SignatureFormat, SignedObject, Signer, Trust, is_fingerprint};

/// The lock's file name, in the config folder.
pub const FILE_NAME: &str = "sources.lock";
/// The file name of a project's lock, at the project's root.
pub const PROJECT_FILE_NAME: &str = "skills.lock";

/// Whose lock a file is: the user's (`sources.lock`, in the config folder)
/// or a project's (`skills.lock`, committed at its root for everyone who
/// clones it). A project's lock comes with the repository, so it is read
/// as untrusted: the paths it names are relative to the project and stay
/// inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    /// The scope of the lock at `path`, by its file name: a project's lock
    /// is always `skills.lock`, the user's `sources.lock`.
    pub fn of(path: &Path) -> Scope {
        if path.file_name().is_some_and(|n| n == PROJECT_FILE_NAME) {
            Scope::Project
        } else {
            Scope::User
        }
    }
}
/// The lock format this version reads and writes (`version = 1`).
pub const VERSION: i64 = 1;
/// A lock larger than this is refused (a lock of 10,000 skills is about
/// 1.5 MB).
pub const MAX_BYTES: u64 = 32 * 1024 * 1024;

/// Whether `id` is a source id: 1–64 lowercase letters, digits, `-` and
/// `_`, starting with a letter or a digit (a bare TOML key, and a file name
/// on every platform).
pub fn is_source_id(id: &str) -> bool {
    id.len() <= 64
        && id
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// What kind of source an installed skill came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A git repository, fetched with the `git` program.
    Git,
    /// A published index (Agent Skills discovery, `.well-known/agent-skills`).
    Index,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Git => "git",
            SourceKind::Index => "index",
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// The lock, as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lock {
    /// In the file's order: the order the sources were added in, which is
    /// their precedence when two of them hold skills of the same name.
    pub sources: Vec<Locked>,
}

impl Lock {
    /// The source called `id`.
    pub fn source(&self, id: &str) -> Option<&Locked> {
        self.sources.iter().find(|s| s.id == id)
    }

    /// Whether some skill of some source has this digest.
    pub fn references(&self, digest: &str) -> bool {
        self.sources
            .iter()
            .any(|s| s.skills.iter().any(|k| k.digest == digest))
    }
}

/// One source of the lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Locked {
    pub id: String,
    pub kind: SourceKind,
    /// The repository's URL (or a local path), or the index's URL.
    pub url: String,
    /// The branch, tag or commit asked for (`--ref`); `None`: the remote's
    /// default branch.
    pub reference: Option<String>,
    /// The commit installed (git), or the `sha256:` digest of the index.
    pub version: String,
    /// The folder of the repository the skills were looked for in (`--path`).
    pub subdir: Option<String>,
    /// The skills picked (`--skill`); empty: all of them.
    pub picked: Vec<String>,
    /// Installed with `--allow-risky`.
    pub allow_risky: bool,
    /// What `add` was told of signatures (`--trusted-signers`,
    /// `--revoked-signers`, `--require-signature`).
    pub trust: Trust,
    /// Who signed the version installed, when a trusted signer did.
    pub signer: Option<Signer>,
    /// How a private index is reached (`--header`, `--netrc`).
    pub access: Access,
    /// When it was added and last updated, RFC 3339 (UTC).
    pub added: String,
    pub updated: String,
    pub skills: Vec<LockedSkill>,
}

impl Locked {
    /// `url@version`, as the answers' `Source:` line shows it.
    pub fn label(&self) -> String {
        format!("{}@{}", self.url, self.version)
    }
}

/// One skill of a source in the lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockedSkill {
    pub name: String,
    /// Its folder in the repository (`skills/pdf`, "" for the repository
    /// itself), or its artifact's URL in the index.
    pub path: String,
    /// The digest of its files: its store entry.
    pub digest: String,
    /// The digest of its artifact (index sources only), which `update`
    /// compares before downloading it again.
    pub artifact: Option<String>,
}

impl LockedSkill {
    /// The name of its folder in its source: the last part of its path
    /// (for an index, the skill's name; for a repository that is one skill,
    /// the source's id).
    pub fn folder(&self, kind: SourceKind, id: &str) -> String {
        match kind {
            SourceKind::Index => self.name.clone(),
            SourceKind::Git => match self.path.rsplit('/').next() {
                Some(last) if !last.is_empty() => last.to_owned(),
                _ => id.to_owned(),
            },
        }
    }
}

/// Why the lock cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{}: cannot read it: {source}", path.display())]
    Unreadable { path: PathBuf, source: ReadError },
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

impl LockError {
    /// The diagnostic `check` and the server's log show.
    pub fn diagnostic(&self) -> Diagnostic {
        let hint = "fix the file (see `skillserve sources`), or restore it from a backup; installed skills are not served until then";
        match self {
            LockError::Unreadable { path, source } => Finding::error(
                Code::LockInvalid,
                format!("cannot read the lock of installed skills: {source}"),
                hint,
            )
            .at(path),
            LockError::Invalid {
                path,
                line,
                message,
            } => Finding::error(Code::LockInvalid, message.clone(), hint)
                .on_line(*line)
                .at(path),
        }
    }
}

/// Reads the lock at `path`; `Ok(None)` when there is none.
pub fn read(path: &Path) -> Result<Option<Lock>, LockError> {
    match disk::read_text(path, MAX_BYTES) {
        Ok(text) => parse(&text, path).map(Some),
        Err(ReadError::Io(err)) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LockError::Unreadable {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Parses the text of a lock; `path` names it in errors and says whose it
/// is ([`Scope::of`]).
pub fn parse(text: &str, path: &Path) -> Result<Lock, LockError> {
    reader::LockReader {
        text,
        path,
        scope: Scope::of(path),
    }
    .read()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest;

    const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    fn lock(text: &str) -> Result<Lock, LockError> {
        parse(text, Path::new("/c/sources.lock"))
    }

    fn error(text: &str) -> String {
        lock(text).unwrap_err().to_string()
    }

    #[test]
    fn a_lock_reads_back_every_field() {
        let text = format!(
            r#"# kept
version = 1

[sources.skills]
kind = "git"
url = "https://github.com/anthropics/skills.git"
ref = "main"
commit = "0123456789abcdef0123456789abcdef01234567"
path = "skills"
picked = ["pdf"]
allow_risky = true
added = 2026-01-02T03:04:05Z
updated = 2026-01-03T03:04:05Z

[[sources.skills.skill]]
name = "pdf"
path = "skills/pdf"
digest = "{DIGEST}"

[sources.site]
kind = "index"
url = "https://example.com/.well-known/agent-skills/index.json"
digest = "{DIGEST}"

[[sources.site.skill]]
name = "hello"
path = "https://example.com/.well-known/agent-skills/hello/SKILL.md"
digest = "{DIGEST}"
artifact = "{DIGEST}"
"#
        );
        let lock = lock(&text).unwrap();
        assert_eq!(lock.sources.len(), 2);
        let git = &lock.sources[0];
        assert_eq!(git.id, "skills");
        assert_eq!(git.kind, SourceKind::Git);
        assert_eq!(git.reference.as_deref(), Some("main"));
        assert_eq!(git.subdir.as_deref(), Some("skills"));
        assert_eq!(git.picked, ["pdf"]);
        assert!(git.allow_risky);
        assert_eq!(git.added, "2026-01-02T03:04:05Z");
        assert_eq!(git.skills[0].folder(git.kind, &git.id), "pdf");
        assert!(lock.references(DIGEST));
        let index = &lock.sources[1];
        assert_eq!(index.kind, SourceKind::Index);
        assert_eq!(index.version, DIGEST);
        assert_eq!(index.skills[0].artifact.as_deref(), Some(DIGEST));
        assert_eq!(index.skills[0].folder(index.kind, &index.id), "hello");
    }

    #[test]
    fn nonsense_is_an_error_with_file_and_line() {
        assert_eq!(
            error("version = 1\n[sources.x]\nkind = \"svn\"\n"),
            "/c/sources.lock:3: `sources.x.kind` is \"svn\"; it must be \"git\" or \"index\""
        );
        assert!(
            error("version = 1\n\n[sources\n").starts_with("/c/sources.lock:3: not valid TOML")
        );
        assert_eq!(
            error("version = 1\ncolour = 3\n"),
            "/c/sources.lock:2: unknown key `colour` in the top level (known: version, sources)"
        );
        assert_eq!(
            error("[sources]\n"),
            "/c/sources.lock:1: no `version`; the first line should be `version = 1`"
        );
        assert_eq!(
            error("version = 1\n[sources.x]\nkind = \"git\"\nurl = \"u\"\ncommit = \"abc\"\n"),
            "/c/sources.lock:5: `sources.x.commit` must be a full commit id (40 or 64 lowercase hex digits)"
        );
        assert_eq!(
            error("version = 2\n"),
            "/c/sources.lock:1: lock format 2 is newer than this skillserve reads (1); upgrade skillserve"
        );
        assert_eq!(
            error("version = 1\n[sources.Big]\n"),
            "/c/sources.lock:2: `Big` is not a source id (lowercase letters, digits, `-` and `_`)"
        );
    }

    #[test]
    fn ids_and_digests_have_one_spelling() {
        assert!(is_source_id("skills"));
        assert!(is_source_id("my_skills-2"));
        assert!(!is_source_id("-x"));
        assert!(!is_source_id("Skills"));
        assert!(!is_source_id("a.b"));
        assert!(!is_source_id(""));
        assert!(digest::is_digest(DIGEST));
        assert!(!digest::is_digest(&DIGEST.to_uppercase()));
        assert!(!digest::is_digest("sha256:00"));
    }
}
