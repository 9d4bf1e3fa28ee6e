//! Installed skills: what `skillserve add` fetched, read back for serving
//! (behaviour.md, "Sources"). Reading only: fetching, writing the store and editing
//! the lock are the commands' job (`sources`).
//!
//! Two things live in the user's folders ([`Paths`]):
//!
//! - the lock, `sources.lock` in the config folder: per source its id,
//!   kind, URL, the ref asked for, the commit (or index digest) installed,
//!   and per skill its name, its path in the source and its digest;
//! - the store, `store/` in the data folder: one read-only folder per skill,
//!   named by the hex of its digest (the SHA-256 of its files, see
//!   [`digest::skill`]), so that a folder's name says what it must hold.
//!
//! Every skill of the lock becomes a root of its own ([`Layout::Skill`],
//! [`Source::Installed`]), in lock order: sources in the order they were
//! added, skills in the order of their source. An entry is served only when
//! its files still hash to its name. Hashing every file at every start-up
//! would cost more than reading the skills, and so would parsing the lock's
//! TOML: the [`Record`] (`store/verified`) keeps what was last verified —
//! the lock's contents with the version of its file, and per entry the
//! version (size, modification and change times, inode; `disk::Stamp`) of
//! each of its files and folders when it was last hashed. The lock is
//! parsed again only when its file changed. At every refresh, and for
//! `list` and `show` ([`Verify::Stamps`]), an entry whose every file and
//! folder still has its recorded version is taken as unchanged (one `lstat`
//! each); any other is hashed again and served only if it matches. The
//! server's start-up ([`Verify::Quick`]) takes each entry's `SKILL.md` at
//! its recorded version without looking: the scan opens the file anyway
//! and refuses it when the open file has another version. The server
//! refreshes right after, off the request path, which checks the rest.
//! `check` hashes everything ([`Verify::Full`]).

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::diagnostic::{Code, Diagnostic, Finding};
use crate::digest::{self, Sum};
use crate::disk::{self, ReadError, Stamp};
use crate::folders::Folders;
use crate::roots::{Layout, Origin, Root, SKILL_FILES, Source, SourceKind};
use crate::spec;

/// The lock's file name, in the config folder.
pub const LOCK_FILE: &str = "sources.lock";
/// The store's folder name, in the data folder.
pub const STORE_DIR: &str = "store";
/// The record of what was last verified, in the store folder.
const RECORD_FILE: &str = "verified";
/// The first line of the record.
const RECORD_HEADER: &str = "skillserve verified 1";
/// The lock format this version reads and writes (`version = 1`).
pub const LOCK_VERSION: i64 = 1;
/// A lock or record larger than this is refused (a lock of 10,000
/// skills is about 1.5 MB).
pub const MAX_LOCK_BYTES: u64 = 32 * 1024 * 1024;
/// Folders deeper than this in a store entry make it invalid.
const MAX_ENTRY_DEPTH: usize = 16;

/// Where the lock and the store are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// `sources.lock` in the config folder.
    pub lock: PathBuf,
    /// `store/` in the data folder.
    pub store: PathBuf,
}

impl Paths {
    /// The paths under the user's folders; `None` when either is unknown
    /// (no home directory).
    pub fn of(folders: &Folders) -> Option<Paths> {
        Some(Paths {
            lock: folders.config.as_ref()?.join(LOCK_FILE),
            store: folders.data.as_ref()?.join(STORE_DIR),
        })
    }

    /// The store entry of the skill whose digest is `digest` (`sha256:…`).
    pub fn entry(&self, digest: &str) -> PathBuf {
        self.store.join(hex_of(digest))
    }

    /// The record of what was last verified.
    pub fn record(&self) -> PathBuf {
        self.store.join(RECORD_FILE)
    }
}

/// The hex part of a `sha256:` digest (the digest itself if it has no prefix).
pub fn hex_of(digest: &str) -> &str {
    digest.strip_prefix(digest::PREFIX).unwrap_or(digest)
}

/// Whether `text` is a digest as skillserve writes them: `sha256:` and 64
/// lowercase hex digits.
pub fn is_digest(text: &str) -> bool {
    text.strip_prefix(digest::PREFIX)
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(is_lower_hex))
}

fn is_lower_hex(byte: u8) -> bool {
    byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte)
}

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
pub fn read_lock(path: &Path) -> Result<Option<Lock>, LockError> {
    match disk::read_text(path, MAX_LOCK_BYTES) {
        Ok(text) => parse_lock(&text, path).map(Some),
        Err(ReadError::Io(err)) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LockError::Unreadable {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Parses the text of a lock; `path` is only named in errors.
pub fn parse_lock(text: &str, path: &Path) -> Result<Lock, LockError> {
    LockReader { text, path }.read()
}

/// Reads a lock's TOML into a [`Lock`], with the line of every problem.
struct LockReader<'a> {
    text: &'a str,
    path: &'a Path,
}

type Table = toml_edit::Table;
type Item = toml_edit::Item;

impl LockReader<'_> {
    fn read(&self) -> Result<Lock, LockError> {
        let document = toml_edit::Document::parse(self.text).map_err(|err| {
            let line = err.span().map_or(1, |span| self.line(span.start));
            let message = err.message().trim().to_owned();
            self.error(line, format!("not valid TOML: {message}"))
        })?;
        let root = document.as_table();
        self.known_keys(root, &["version", "sources"], "the top level")?;
        match root.get("version") {
            None => {
                return Err(self.error(1, "no `version`; the first line should be `version = 1`"));
            }
            Some(item) => match item.as_integer() {
                Some(LOCK_VERSION) => {}
                Some(newer) if newer > LOCK_VERSION => {
                    return Err(self.error(
                        self.line_of(item),
                        format!("lock format {newer} is newer than this skillserve reads ({LOCK_VERSION}); upgrade skillserve"),
                    ));
                }
                _ => {
                    return Err(self.error(
                        self.line_of(item),
                        format!("`version` must be {LOCK_VERSION}"),
                    ));
                }
            },
        }
        let mut lock = Lock::default();
        let Some(sources) = root.get("sources") else {
            return Ok(lock);
        };
        let sources = self.table(sources, "sources")?;
        for (id, item) in sources.iter() {
            if !is_source_id(id) {
                return Err(self.error(
                    self.line_of(item),
                    format!("`{id}` is not a source id (lowercase letters, digits, `-` and `_`)"),
                ));
            }
            lock.sources.push(self.source(id, item)?);
        }
        Ok(lock)
    }

    fn source(&self, id: &str, item: &Item) -> Result<Locked, LockError> {
        let what = format!("sources.{id}");
        let table = self.table(item, &what)?;
        self.known_keys(
            table,
            &[
                "kind",
                "url",
                "ref",
                "commit",
                "digest",
                "path",
                "picked",
                "allow_risky",
                "added",
                "updated",
                "skill",
            ],
            &what,
        )?;
        let kind = match self.string(table, "kind", &what)?.as_str() {
            "git" => SourceKind::Git,
            "index" => SourceKind::Index,
            other => {
                return Err(self.error(
                    self.line_of(&table["kind"]),
                    format!("`{what}.kind` is \"{other}\"; it must be \"git\" or \"index\""),
                ));
            }
        };
        let url = self.string(table, "url", &what)?;
        let version = match kind {
            SourceKind::Git => {
                let commit = self.string(table, "commit", &what)?;
                if commit.len() < 40 || !commit.bytes().all(is_lower_hex) {
                    return Err(self.error(
                        self.line_of(&table["commit"]),
                        format!("`{what}.commit` must be a full commit id (40 or 64 lowercase hex digits)"),
                    ));
                }
                commit
            }
            SourceKind::Index => self.digest(table, "digest", &what)?,
        };
        let mut picked = Vec::new();
        if let Some(item) = table.get("picked") {
            let Some(array) = item.as_array() else {
                return Err(self.error(
                    self.line_of(item),
                    format!("`{what}.picked` must be a list of skill names"),
                ));
            };
            for value in array.iter() {
                match value
                    .as_str()
                    .filter(|name| !name.chars().any(char::is_control))
                {
                    Some(name) => picked.push(name.to_owned()),
                    None => {
                        return Err(self.error(
                            value.span().map_or(1, |s| self.line(s.start)),
                            format!("`{what}.picked` must be a list of skill names"),
                        ));
                    }
                }
            }
        }
        let allow_risky = match table.get("allow_risky") {
            None => false,
            Some(item) => item.as_bool().ok_or_else(|| {
                self.error(
                    self.line_of(item),
                    format!("`{what}.allow_risky` must be true or false"),
                )
            })?,
        };
        let mut skills = Vec::new();
        if let Some(item) = table.get("skill") {
            let Some(array) = item.as_array_of_tables() else {
                return Err(self.error(
                    self.line_of(item),
                    format!("`{what}.skill` must be a list of [[{what}.skill]] tables"),
                ));
            };
            for skill in array.iter() {
                skills.push(self.skill(skill, kind, &format!("{what}.skill"))?);
            }
        }
        Ok(Locked {
            id: id.to_owned(),
            kind,
            reference: self.optional_string(table, "ref", &what)?,
            subdir: self.optional_string(table, "path", &what)?,
            picked,
            allow_risky,
            added: self.time(table, "added", &what)?,
            updated: self.time(table, "updated", &what)?,
            url,
            version,
            skills,
        })
    }

    fn skill(&self, table: &Table, kind: SourceKind, what: &str) -> Result<LockedSkill, LockError> {
        self.known_keys(table, &["name", "path", "digest", "artifact"], what)?;
        let artifact = match kind {
            SourceKind::Index => Some(self.digest(table, "artifact", what)?),
            SourceKind::Git => None,
        };
        let name = self.string(table, "name", what)?;
        if name.is_empty() || name.chars().any(char::is_control) {
            return Err(self.error(
                self.line_of(&table["name"]),
                format!("`{what}.name` must be a skill's name, on one line"),
            ));
        }
        Ok(LockedSkill {
            name,
            path: self.string(table, "path", what)?,
            digest: self.digest(table, "digest", what)?,
            artifact,
        })
    }

    fn table<'t>(&self, item: &'t Item, what: &str) -> Result<&'t Table, LockError> {
        item.as_table().ok_or_else(|| {
            self.error(
                self.line_of(item),
                format!("`{what}` must be a table ([{what}])"),
            )
        })
    }

    fn known_keys(&self, table: &Table, known: &[&str], what: &str) -> Result<(), LockError> {
        for (key, item) in table.iter() {
            if !known.contains(&key) {
                let line = table
                    .key(key)
                    .and_then(toml_edit::Key::span)
                    .map_or_else(|| self.line_of(item), |span| self.line(span.start));
                return Err(self.error(
                    line,
                    format!(
                        "unknown key `{key}` in {what} (known: {})",
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn string(&self, table: &Table, key: &str, what: &str) -> Result<String, LockError> {
        self.optional_string(table, key, what)?.ok_or_else(|| {
            let line = table.span().map_or(1, |span| self.line(span.start));
            self.error(line, format!("`{what}` has no `{key}`"))
        })
    }

    fn optional_string(
        &self,
        table: &Table,
        key: &str,
        what: &str,
    ) -> Result<Option<String>, LockError> {
        match table.get(key) {
            None => Ok(None),
            Some(item) => match item.as_str() {
                Some(text) if text.chars().any(char::is_control) => Err(self.error(
                    self.line_of(item),
                    format!("`{what}.{key}` holds a line break or another control character"),
                )),
                Some(text) => Ok(Some(text.to_owned())),
                None => Err(self.error(
                    self.line_of(item),
                    format!("`{what}.{key}` must be a string"),
                )),
            },
        }
    }

    fn digest(&self, table: &Table, key: &str, what: &str) -> Result<String, LockError> {
        let text = self.string(table, key, what)?;
        if !is_digest(&text) {
            return Err(self.error(
                self.line_of(&table[key]),
                format!("`{what}.{key}` must be `sha256:` and 64 lowercase hex digits"),
            ));
        }
        Ok(text)
    }

    /// A date-time (written by skillserve as a TOML date-time), as text.
    fn time(&self, table: &Table, key: &str, what: &str) -> Result<String, LockError> {
        match table.get(key) {
            None => Ok(String::new()),
            Some(item) => match item.as_datetime() {
                Some(time) => Ok(time.to_string()),
                None => Err(self.error(
                    self.line_of(item),
                    format!("`{what}.{key}` must be a date-time such as 2026-01-31T12:00:00Z"),
                )),
            },
        }
    }

    fn line_of(&self, item: &Item) -> usize {
        item.span().map_or(1, |span| self.line(span.start))
    }

    fn line(&self, offset: usize) -> usize {
        disk::line_of(self.text.as_bytes(), offset.min(self.text.len()))
    }

    fn error(&self, line: usize, message: impl Into<String>) -> LockError {
        LockError::Invalid {
            path: self.path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

/// How far store entries are checked before they are served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// The server's start-up: an entry with a record is taken at its
    /// `SKILL.md`'s recorded version, which the scan compares with the file
    /// it opens (no extra `stat`); the server checks everything else right
    /// after ([`Verify::Stamps`]).
    Quick,
    /// Entries whose files and folders all have the versions recorded when
    /// they were last hashed are taken as unchanged; the others are hashed.
    Stamps,
    /// Every entry is hashed (`skillserve check`).
    Full,
}

/// The installed roots and what is wrong with the lock or the store.
#[derive(Debug, Default)]
pub struct Installed {
    /// One root per served skill, in lock order.
    pub roots: Vec<Root>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The file whose changes change the installed roots: the lock (watched by
/// the server).
pub fn lock_file(config: &Config) -> Option<PathBuf> {
    Paths::of(&config.folders).map(|paths| paths.lock)
}

/// The roots of every skill of the lock whose store entry is intact.
pub fn discover(config: &Config, verify: Verify) -> Installed {
    let mut out = Installed::default();
    let Some(paths) = Paths::of(&config.folders) else {
        return out;
    };
    // The lock's version before it is read: if it changes while it is read,
    // the record holds the older version and the next start reads it again.
    let lock_stamp = match fs::metadata(&paths.lock) {
        Ok(meta) => Stamp::of(&meta),
        Err(err) if disk::is_gone(&err) => return out,
        Err(err) => {
            out.diagnostics.push(
                LockError::Unreadable {
                    path: paths.lock.clone(),
                    source: ReadError::Io(err),
                }
                .diagnostic(),
            );
            return out;
        }
    };
    let mut record = Record::read(&paths.record());
    // Whether the record must be written again.
    let mut changed = false;
    let lock = match record.lock_if(verify, lock_stamp) {
        Some(lock) => lock,
        None => match read_lock(&paths.lock) {
            Ok(Some(lock)) => {
                record.set_lock(lock_stamp, &lock);
                changed = true;
                Arc::new(lock)
            }
            Ok(None) => return out,
            Err(err) => {
                out.diagnostics.push(err.diagnostic());
                return out;
            }
        },
    };
    let skills: Vec<(&Locked, &LockedSkill)> = lock
        .sources
        .iter()
        .flat_map(|source| source.skills.iter().map(move |skill| (source, skill)))
        .collect();
    let unchanged = match verify {
        Verify::Quick => record.recorded(&paths.store, &skills),
        Verify::Stamps => record.unchanged(&paths.store, &skills),
        Verify::Full => vec![None; skills.len()],
    };
    for ((source, skill), known) in skills.iter().zip(unchanged) {
        let entry = paths.entry(&skill.digest);
        let known = match known {
            Some(known) => Some(known),
            None => match verify_entry(&entry, &skill.digest) {
                Ok(verified) => {
                    let own = verified.own_file(&entry);
                    record.record_entry(&skill.digest, verified.stamps);
                    changed = true;
                    own
                }
                Err(problem) => {
                    record.forget_entry(&skill.digest);
                    changed = true;
                    out.diagnostics
                        .push(problem.diagnostic(source, skill, &entry));
                    continue;
                }
            },
        };
        let origin = Origin {
            id: source.id.clone(),
            kind: source.kind,
            url: source.url.clone(),
            version: source.version.clone(),
            path: skill.path.clone(),
            digest: skill.digest.clone(),
            folder: skill.folder(source.kind, &source.id),
            allow_risky: source.allow_risky,
        };
        let mut root = Root::new(entry, Source::Installed, Layout::Skill);
        root.origin = Some(Arc::new(origin));
        root.probed = known;
        out.roots.push(root);
    }
    if changed {
        // A record, not a promise: when it cannot be written, the next start
        // reads the lock and hashes those entries again.
        if let Err(err) = record.write(&paths.record()) {
            tracing::debug!("could not record the verified store entries: {err}");
        }
    }
    out
}

/// Why a store entry is not served.
#[derive(Debug, PartialEq, Eq)]
pub enum EntryProblem {
    /// The entry's folder does not exist.
    Missing,
    /// Its files are not what its digest says (the reason).
    Tampered(String),
}

impl EntryProblem {
    /// The diagnostic naming the source and what to do.
    pub fn diagnostic(&self, source: &Locked, skill: &LockedSkill, entry: &Path) -> Diagnostic {
        let hint = format!(
            "run `skillserve update {id}` to install it again, or `skillserve remove {id}`",
            id = source.id
        );
        match self {
            EntryProblem::Missing => Finding::error(
                Code::StoreMissing,
                format!(
                    "the store holds no copy of skill '{}' of source '{}' ({}); it is not served",
                    skill.name, source.id, source.url
                ),
                hint,
            )
            .at(entry),
            EntryProblem::Tampered(why) => Finding::error(
                Code::StoreTampered,
                format!(
                    "the files of skill '{}' of source '{}' ({}) were changed in the store ({why}); it is not served",
                    skill.name, source.id, source.url
                ),
                hint,
            )
            .at(entry),
        }
    }
}

/// What hashing a store entry found: its files (path, SHA-256, size),
/// sorted by path, and the version of each file and folder.
#[derive(Debug, Default)]
pub struct Verified {
    pub files: Vec<(String, Sum, u64)>,
    stamps: Vec<(String, Stamp)>,
}

impl Verified {
    /// The versions of the entry's files and folders, for
    /// [`Record::record_entry`].
    pub fn stamps(self) -> Vec<(String, Stamp)> {
        self.stamps
    }

    /// The skill's own file in `entry` (`SKILL.md`, or `skill.md`) and its
    /// version, as hashed.
    fn own_file(&self, entry: &Path) -> Option<(PathBuf, Stamp)> {
        own_file(entry, &self.stamps)
    }
}

/// The first of [`SKILL_FILES`] among `stamps` (an entry's), with its path
/// below `entry`.
fn own_file(entry: &Path, stamps: &[(String, Stamp)]) -> Option<(PathBuf, Stamp)> {
    SKILL_FILES.iter().find_map(|name| {
        stamps
            .iter()
            .find(|(rel, _)| rel == name)
            .map(|(rel, stamp)| (entry.join(rel), *stamp))
    })
}

/// Hashes the store entry `entry` and checks it against `digest`.
pub fn verify_entry(entry: &Path, digest: &str) -> Result<Verified, EntryProblem> {
    let verified = match hash_tree(entry) {
        Ok(verified) => verified,
        Err(err) if disk::is_gone(&err) => return Err(EntryProblem::Missing),
        Err(err) => return Err(EntryProblem::Tampered(err.to_string())),
    };
    let actual = digest::skill(
        verified
            .files
            .iter()
            .map(|(path, sum, _)| (path.as_str(), sum)),
    );
    if actual != digest {
        return Err(EntryProblem::Tampered(format!(
            "they hash to {actual}, not to its name"
        )));
    }
    Ok(verified)
}

/// Every file below `dir` hashed, with the versions of files and folders.
/// Only folders and regular files may be there (the store holds nothing
/// else); at most the files and bytes a skill may have.
pub fn hash_tree(dir: &Path) -> io::Result<Verified> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let mut out = Verified::default();
    let mut bytes = 0u64;
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    while let Some((path, rel, depth)) = stack.pop() {
        let meta = fs::symlink_metadata(&path)?;
        if !meta.is_dir() {
            return Err(invalid(format!("{} is not a folder", shown(&rel))));
        }
        let mut children = Vec::new();
        for entry in fs::read_dir(&path)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                return Err(invalid(format!("a name in {} is not UTF-8", shown(&rel))));
            };
            children.push((name.to_owned(), entry.file_type()?));
        }
        // The folder's version after listing it: an entry added since
        // changes it.
        out.stamps.push((
            shown(&rel).to_owned(),
            Stamp::of(&fs::symlink_metadata(&path)?),
        ));
        for (name, kind) in children {
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if kind.is_dir() {
                if depth + 1 > MAX_ENTRY_DEPTH {
                    return Err(invalid(format!("{child_rel} is too deep")));
                }
                stack.push((path.join(&name), child_rel, depth + 1));
            } else if kind.is_file() {
                if out.files.len() == spec::MAX_SKILL_FILES {
                    return Err(invalid("it holds more files than a skill may".into()));
                }
                let (mut file, len) = disk::open_regular(&path.join(&name), spec::MAX_SKILL_BYTES)
                    .map_err(|err| match err {
                        ReadError::Io(err) => err,
                        other => invalid(format!("{child_rel}: {other}")),
                    })?;
                let version = Stamp::of(&file.metadata()?);
                bytes += len;
                if bytes > spec::MAX_SKILL_BYTES {
                    return Err(invalid("it holds more bytes than a skill may".into()));
                }
                let (sum, size) = sha256(&mut file)?;
                out.files.push((child_rel.clone(), sum, size));
                out.stamps.push((child_rel, version));
            } else {
                return Err(invalid(format!(
                    "{child_rel} is a symlink or a special file"
                )));
            }
        }
    }
    out.files
        .sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}

/// A relative path as shown: `.` for the entry itself.
fn shown(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

/// The SHA-256 of what `reader` yields, and how many bytes that was.
pub fn sha256(reader: &mut impl Read) -> io::Result<(Sum, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((hasher.finalize().into(), size))
}

/// What was last verified, kept between processes in `store/verified`: the
/// lock (its file's version and what it says), and per store entry the
/// version of each of its files and folders when it was last hashed.
///
/// A text file, one `key value` line each: `lock STAMP`, then the lock's
/// sources (`source ID`, `kind`, `url`, …, and per skill one line `skill
/// DIGEST<tab>NAME<tab>PATH[<tab>ARTIFACT]`), then per entry `entry HEX
/// BYTES STAMP OWN` (the version of its `SKILL.md`) followed by BYTES of
/// `stamp STAMP PATH` lines (`.` for the entry's folder), which a start-up
/// skips over. Values run to the end of the line (the lock's values hold no
/// control character). A record that cannot be read is no record:
/// everything is read and hashed again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    lock: Option<(Stamp, Arc<Lock>)>,
    entries: HashMap<String, Stamps>,
}

/// The recorded versions of one entry's files and folders: as read (its
/// own file's decoded at once, the others' `stamp` lines decoded only when
/// needed: a start-up needs the `SKILL.md` of each alone) or as hashed.
#[derive(Clone, Debug)]
enum Stamps {
    Raw {
        own: Option<(String, Stamp)>,
        text: Arc<String>,
        lines: std::ops::Range<usize>,
    },
    Decoded(Vec<(String, Stamp)>),
}

impl Stamps {
    /// Every file and folder with its version; `None` when a line is
    /// damaged.
    fn decoded(&self) -> Option<Vec<(String, Stamp)>> {
        match self {
            Stamps::Decoded(stamps) => Some(stamps.clone()),
            Stamps::Raw { text, lines, .. } => text[lines.clone()]
                .lines()
                .map(|line| decode_stamp_line(line.strip_prefix("stamp ")?))
                .collect(),
        }
    }

    /// The skill's own file (`SKILL.md`, or `skill.md`) and its version.
    fn own_file(&self) -> Option<(String, Stamp)> {
        match self {
            Stamps::Raw { own, .. } => own.clone(),
            Stamps::Decoded(stamps) => SKILL_FILES
                .iter()
                .find_map(|name| stamps.iter().find(|(rel, _)| rel == name).cloned()),
        }
    }

    /// Writes the entry: `entry HEX BYTES [STAMP OWN]`, then its `stamp`
    /// lines (BYTES of them).
    fn write_to(&self, hex: &str, out: &mut String) {
        let decoded;
        let lines = match self {
            Stamps::Raw { text, lines, .. } => &text[lines.clone()],
            Stamps::Decoded(stamps) => {
                let mut text = String::new();
                for (rel, stamp) in stamps {
                    text.push_str("stamp ");
                    text.push_str(&stamp.encode());
                    text.push(' ');
                    text.push_str(rel);
                    text.push('\n');
                }
                decoded = text;
                &decoded
            }
        };
        out.push_str("entry ");
        out.push_str(hex);
        out.push(' ');
        out.push_str(&lines.len().to_string());
        if let Some((own, stamp)) = self.own_file() {
            out.push(' ');
            out.push_str(&stamp.encode());
            out.push(' ');
            out.push_str(&own);
        }
        out.push('\n');
        out.push_str(lines);
    }
}

/// Equal when they record the same versions. Two `Raw` compare their own
/// lines only (`Arc<str>` equality would compare the whole record).
impl PartialEq for Stamps {
    fn eq(&self, other: &Stamps) -> bool {
        match (self, other) {
            (
                Stamps::Raw {
                    text: a, lines: la, ..
                },
                Stamps::Raw {
                    text: b, lines: lb, ..
                },
            ) => a[la.clone()] == b[lb.clone()],
            _ => self.decoded() == other.decoded(),
        }
    }
}

impl Eq for Stamps {}

/// `STAMP PATH` (seven numbers, then the path, which may hold spaces).
fn decode_stamp_line(value: &str) -> Option<(String, Stamp)> {
    let mut at = 0;
    for _ in 0..7 {
        at += value[at..].find(' ')? + 1;
    }
    Some((value[at..].to_owned(), Stamp::decode(&value[..at - 1])?))
}

/// The source being read from a record.
fn last_source(lock: &mut Option<(Stamp, Lock)>) -> Option<&mut Locked> {
    lock.as_mut()?.1.sources.last_mut()
}

impl Record {
    /// The record at `path`; empty when it is missing or damaged.
    pub fn read(path: &Path) -> Record {
        disk::read_text(path, MAX_LOCK_BYTES)
            .ok()
            .and_then(Record::parse)
            .unwrap_or_default()
    }

    fn parse(text: String) -> Option<Record> {
        let text = Arc::new(text);
        let mut record = Record::default();
        let mut lock: Option<(Stamp, Lock)> = None;
        let mut at = 0;
        let mut first = true;
        while at < text.len() {
            let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
            let line = &text[at..end];
            at = (end + 1).min(text.len());
            if first {
                if line != RECORD_HEADER {
                    return None;
                }
                first = false;
                continue;
            }
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "lock" => lock = Some((Stamp::decode(value)?, Lock::default())),
                "source" => lock.as_mut()?.1.sources.push(Locked {
                    id: value.to_owned(),
                    kind: SourceKind::Git,
                    url: String::new(),
                    reference: None,
                    version: String::new(),
                    subdir: None,
                    picked: Vec::new(),
                    allow_risky: false,
                    added: String::new(),
                    updated: String::new(),
                    skills: Vec::new(),
                }),
                "kind" => {
                    last_source(&mut lock)?.kind = match value {
                        "git" => SourceKind::Git,
                        "index" => SourceKind::Index,
                        _ => return None,
                    }
                }
                "url" => last_source(&mut lock)?.url = value.to_owned(),
                "ref" => last_source(&mut lock)?.reference = Some(value.to_owned()),
                "version" => last_source(&mut lock)?.version = value.to_owned(),
                "path" => last_source(&mut lock)?.subdir = Some(value.to_owned()),
                "picked" => last_source(&mut lock)?.picked.push(value.to_owned()),
                "risky" => last_source(&mut lock)?.allow_risky = true,
                "added" => last_source(&mut lock)?.added = value.to_owned(),
                "updated" => last_source(&mut lock)?.updated = value.to_owned(),
                // `skill DIGEST<tab>NAME<tab>PATH[<tab>ARTIFACT]` (the lock's
                // values hold no control character).
                "skill" => {
                    let mut fields = value.split('\t');
                    let mut next = || fields.next().map(str::to_owned);
                    let skill = LockedSkill {
                        digest: next()?,
                        name: next()?,
                        path: next()?,
                        artifact: next(),
                    };
                    last_source(&mut lock)?.skills.push(skill);
                }
                // `entry HEX BYTES [STAMP OWN]`, then BYTES of `stamp` lines.
                "entry" => {
                    let mut fields = value.splitn(3, ' ');
                    let hex = fields.next()?;
                    let bytes: usize = fields.next()?.parse().ok()?;
                    let own = match fields.next() {
                        Some(own) => Some(decode_stamp_line(own)?),
                        None => None,
                    };
                    let lines = at..at.checked_add(bytes).filter(|end| *end <= text.len())?;
                    at = lines.end;
                    let stamps = Stamps::Raw {
                        own,
                        text: Arc::clone(&text),
                        lines,
                    };
                    record
                        .entries
                        .insert(format!("{}{hex}", digest::PREFIX), stamps);
                }
                _ => return None,
            }
        }
        record.lock = lock.map(|(stamp, lock)| (stamp, Arc::new(lock)));
        Some(record)
    }

    /// The recorded lock, if it is the lock whose file has version `stamp`
    /// now (and `verify` allows trusting the record).
    fn lock_if(&self, verify: Verify, stamp: Stamp) -> Option<Arc<Lock>> {
        match (&self.lock, verify) {
            (Some((recorded, lock)), Verify::Quick | Verify::Stamps) if *recorded == stamp => {
                Some(Arc::clone(lock))
            }
            _ => None,
        }
    }

    /// Records `lock`, read from a file of version `stamp`, unless one of
    /// its values cannot be written on one line.
    pub fn set_lock(&mut self, stamp: Stamp, lock: &Lock) {
        let one_line = |text: &str| !text.contains(['\n', '\r']);
        let representable = lock.sources.iter().all(|s| {
            [&s.id, &s.url, &s.version, &s.added, &s.updated]
                .into_iter()
                .chain(&s.reference)
                .chain(&s.subdir)
                .chain(&s.picked)
                .all(|text| one_line(text))
                && s.skills
                    .iter()
                    .all(|k| one_line(&k.name) && one_line(&k.path) && one_line(&k.digest))
        });
        self.lock = representable.then(|| (stamp, Arc::new(lock.clone())));
    }

    /// For each skill whose entry was hashed before: its `SKILL.md` and the
    /// version it had then, without looking at the disk. The server's
    /// start-up ([`Verify::Quick`]) opens every `SKILL.md` anyway, and the
    /// scan refuses one whose version is not this one (`Root::probed`).
    fn recorded(
        &self,
        store: &Path,
        skills: &[(&Locked, &LockedSkill)],
    ) -> Vec<Option<(PathBuf, Stamp)>> {
        skills
            .iter()
            .map(|(_, skill)| {
                let (own, stamp) = self.entries.get(&skill.digest)?.own_file()?;
                Some((store.join(hex_of(&skill.digest)).join(own), stamp))
            })
            .collect()
    }

    /// For each skill, when its entry's recorded files and folders all still
    /// have their recorded versions: its own file and that file's version
    /// (the scan then looks no further). One `lstat` per file and folder,
    /// relative to the store folder.
    fn unchanged(
        &self,
        store: &Path,
        skills: &[(&Locked, &LockedSkill)],
    ) -> Vec<Option<(PathBuf, Stamp)>> {
        let folder = StoreFolder::open(store);
        let check = |part: &[(&Locked, &LockedSkill)]| -> Vec<Option<(PathBuf, Stamp)>> {
            part.iter()
                .map(|(_, skill)| {
                    let recorded = self.entries.get(&skill.digest)?;
                    let hex = hex_of(&skill.digest);
                    let (own, stamp) = recorded.own_file()?;
                    let same = recorded
                        .decoded()?
                        .iter()
                        .all(|(rel, stamp)| folder.stamp(store, hex, rel) == Some(*stamp));
                    same.then(|| (store.join(hex).join(own), stamp))
                })
                .collect()
        };
        // One thread: starting another cost more than the `stat`s it would
        // share (measured at 1,000 skills: 1.3 ms on one thread, 5.5 ms on
        // two).
        check(skills)
    }

    /// Records what hashing the entry of `digest` found.
    pub fn record_entry(&mut self, digest: &str, stamps: Vec<(String, Stamp)>) {
        self.entries
            .insert(digest.to_owned(), Stamps::Decoded(stamps));
    }

    /// Forgets the entry of `digest`.
    pub fn forget_entry(&mut self, digest: &str) {
        self.entries.remove(digest);
    }

    /// Keeps only the entries `keep` says yes to.
    pub fn retain_entries(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.entries.retain(|digest, _| keep(digest));
    }

    /// Writes the record to `path` atomically, entries in digest order.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        use std::fmt::Write;
        let mut text = String::from(RECORD_HEADER);
        text.push('\n');
        if let Some((stamp, lock)) = &self.lock {
            let _ = writeln!(text, "lock {}", stamp.encode());
            for s in &lock.sources {
                let _ = writeln!(text, "source {}\nkind {}\nurl {}", s.id, s.kind, s.url);
                if let Some(reference) = &s.reference {
                    let _ = writeln!(text, "ref {reference}");
                }
                let _ = writeln!(text, "version {}", s.version);
                if let Some(subdir) = &s.subdir {
                    let _ = writeln!(text, "path {subdir}");
                }
                for picked in &s.picked {
                    let _ = writeln!(text, "picked {picked}");
                }
                if s.allow_risky {
                    text.push_str("risky 1\n");
                }
                let _ = writeln!(text, "added {}\nupdated {}", s.added, s.updated);
                for k in &s.skills {
                    let _ = write!(text, "skill {}\t{}\t{}", k.digest, k.name, k.path);
                    if let Some(artifact) = &k.artifact {
                        let _ = write!(text, "\t{artifact}");
                    }
                    text.push('\n');
                }
            }
        }
        let mut digests: Vec<&String> = self.entries.keys().collect();
        digests.sort();
        for digest in digests {
            self.entries[digest].write_to(hex_of(digest), &mut text);
        }
        disk::write_atomic(path, text.as_bytes(), disk::NewFile::Shared)
    }
}

/// Records `lock` (just written to `paths.lock`) and `record`'s entries:
/// the commands that change the store call this last.
pub fn record_lock(paths: &Paths, lock: &Lock, record: &mut Record) -> io::Result<()> {
    let stamp = Stamp::of(&fs::metadata(&paths.lock)?);
    record.set_lock(stamp, lock);
    record.write(&paths.record())
}

/// The store folder, open, so that an entry's files are looked up relative
/// to it (two or three path components instead of a dozen).
#[cfg(unix)]
struct StoreFolder(Option<std::os::fd::OwnedFd>);

#[cfg(unix)]
impl StoreFolder {
    fn open(store: &Path) -> StoreFolder {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        StoreFolder(rustix::fs::open(store, flags, Mode::empty()).ok())
    }

    /// The version of `rel` in entry `hex` (`lstat`), if it exists.
    fn stamp(&self, store: &Path, hex: &str, rel: &str) -> Option<Stamp> {
        let path = if rel == "." {
            PathBuf::from(hex)
        } else {
            Path::new(hex).join(rel)
        };
        match &self.0 {
            Some(fd) => rustix::fs::statat(fd, &path, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                .ok()
                .map(|st| Stamp::of_stat(&st)),
            None => fs::symlink_metadata(store.join(path))
                .ok()
                .map(|meta| Stamp::of(&meta)),
        }
    }
}

// Elsewhere, paths are looked up whole.
#[cfg(not(unix))]
struct StoreFolder;

#[cfg(not(unix))]
impl StoreFolder {
    fn open(_store: &Path) -> StoreFolder {
        StoreFolder
    }

    fn stamp(&self, store: &Path, hex: &str, rel: &str) -> Option<Stamp> {
        let path = if rel == "." {
            store.join(hex)
        } else {
            store.join(hex).join(rel)
        };
        fs::symlink_metadata(path).ok().map(|meta| Stamp::of(&meta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    fn lock(text: &str) -> Result<Lock, LockError> {
        parse_lock(text, Path::new("/c/sources.lock"))
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
    fn an_entry_verifies_until_a_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("e");
        std::fs::create_dir_all(first.join("scripts")).unwrap();
        std::fs::write(first.join("SKILL.md"), "a").unwrap();
        std::fs::write(first.join("scripts/run.sh"), "b").unwrap();
        let sum = |bytes: &[u8]| -> Sum { Sha256::digest(bytes).into() };
        let (a, b) = (sum(b"a"), sum(b"b"));
        let digest = digest::skill([("SKILL.md", &a), ("scripts/run.sh", &b)]);
        let entry = dir.path().join(hex_of(&digest));
        std::fs::rename(dir.path().join("e"), &entry).unwrap();
        let verified = verify_entry(&entry, &digest).unwrap();
        assert_eq!(verified.files.len(), 2);
        let mut record = Record::default();
        let lock = Lock {
            sources: vec![Locked {
                id: "s".into(),
                kind: SourceKind::Index,
                url: "https://example.com/index.json".into(),
                reference: Some("v1".into()),
                version: digest.clone(),
                subdir: Some("a b".into()),
                picked: vec!["x".into()],
                allow_risky: true,
                added: "2026-01-01T00:00:00Z".into(),
                updated: "2026-01-02T00:00:00Z".into(),
                skills: vec![LockedSkill {
                    name: "x".into(),
                    path: "x y/SKILL.md".into(),
                    digest: digest.clone(),
                    artifact: Some(digest.clone()),
                }],
            }],
        };
        let lock_stamp = Stamp::of(&std::fs::metadata(dir.path()).unwrap());
        record.set_lock(lock_stamp, &lock);
        record.record_entry(&digest, verified.stamps);
        let skills: Vec<(&Locked, &LockedSkill)> =
            vec![(&lock.sources[0], &lock.sources[0].skills[0])];
        let known = record.unchanged(dir.path(), &skills);
        assert_eq!(
            known[0].as_ref().map(|k| k.0.clone()),
            Some(dir.path().join(hex_of(&digest)).join("SKILL.md"))
        );
        let file = dir.path().join("verified");
        record.write(&file).unwrap();
        let reread = Record::read(&file);
        assert_eq!(reread.lock, record.lock);
        reread.write(&file).unwrap();
        assert_eq!(
            Record::read(&file).entries[&digest].decoded(),
            record.entries[&digest].decoded()
        );
        assert_eq!(
            record.lock_if(Verify::Stamps, lock_stamp).as_deref(),
            Some(&lock)
        );
        assert_eq!(record.lock_if(Verify::Full, lock_stamp), None);

        let read = Record::read(&file);
        assert_eq!(read.unchanged(dir.path(), &skills), known);
        std::fs::write(entry.join("scripts/run.sh"), "c").unwrap();
        assert_eq!(record.unchanged(dir.path(), &skills), vec![None]);
        assert_eq!(read.unchanged(dir.path(), &skills), vec![None]);
        // A start-up takes SKILL.md's recorded version (the scan compares).
        assert_eq!(read.recorded(dir.path(), &skills), known);
        assert!(matches!(
            verify_entry(&entry, &digest),
            Err(EntryProblem::Tampered(_))
        ));
        assert_eq!(
            verify_entry(&dir.path().join("gone"), &digest).unwrap_err(),
            EntryProblem::Missing
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
        assert!(is_digest(DIGEST));
        assert!(!is_digest(&DIGEST.to_uppercase()));
        assert!(!is_digest("sha256:00"));
    }
}
