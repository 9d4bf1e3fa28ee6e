//! Writing `sources.lock` (behaviour.md, "Sources"): read through
//! [`parse`](super::parse) (one reader, with lines in its errors), edited
//! with `toml_edit` so that comments and layout the user added are kept,
//! and replaced atomically (`disk::write_atomic`).
//!
//! A [`LockFile`] holds the lock of the store's editors and then the lock
//! of the file's (`disk::lock_editors`) from before it reads the file until
//! it is dropped: every command that changes installed skills (`add`,
//! `update`, `remove`, `auto_update`, the skills app's actions; `sync`
//! takes the store's alone) reads, writes the store, saves and prunes the
//! store while holding them, so two of them take turns — whichever lock
//! each edits, since a prune reads every lock the store serves — and
//! neither removes store entries the other just wrote nor writes over the
//! other's source. A file changed by anything else meanwhile (a
//! person's editor) is not overwritten: the command asks to be run again.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

use super::{Lock, LockError, Locked, MAX_BYTES, Scope, SourceKind, VERSION};
use crate::disk::{self, ReadError};

/// The first lines of a new lock.
const HEADER: &str = "\
# Skills installed with `skillserve add`: one [sources.ID] table per source,
# one [[sources.ID.skill]] table per skill. skillserve rewrites this file on
# `add`, `update` and `remove` and keeps the comments you add; the format is
# described at https://github.com/skillserve/skillserve/blob/main/docs/behaviour.md
";

/// The first lines of a new project lock.
const PROJECT_HEADER: &str = "\
# The skills this project pins, for everyone who clones it: commit this file.
# `skillserve sync` in the project installs exactly these (commits and
# digests); `skillserve add --project`, `update --project` and
# `remove --project` change it and keep the comments you add. The format is
# described at https://github.com/skillserve/skillserve/blob/main/docs/behaviour.md
";

/// Why the lock was not written.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// It could not be read again, or is no longer valid.
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(
        "{} was changed by another program while this command ran; nothing was written: run the command again",
        path.display()
    )]
    Changed { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// The lock as read, ready to be edited and saved; its editors' lock held
/// until it is dropped.
pub struct LockFile {
    path: PathBuf,
    /// Held from before the read: see the module's comment.
    _store: disk::EditLock,
    _editing: disk::EditLock,
    /// The text read (`None`: there was no file), to notice a change
    /// before writing.
    read_as: Option<String>,
    document: DocumentMut,
    /// What the file says (kept in step with the edits).
    pub lock: Lock,
}

impl LockFile {
    /// Waits for the lock of the editors of the store at `store`, then for
    /// that of the file's (always in this order: two commands never hold
    /// one each), then reads the lock at `path` (an empty one when there is
    /// none). Keep the `LockFile` until the edit is done, store included;
    /// drop it soon after.
    pub fn open(path: &Path, store: &Path) -> Result<LockFile, SaveError> {
        let store = disk::lock_editors(store).map_err(|source| SaveError::Write {
            path: store.to_path_buf(),
            source,
        })?;
        let editing = disk::lock_editors(path).map_err(|source| SaveError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        let read_as = read(path)?;
        let (document, lock) = match &read_as {
            None => {
                let header = match Scope::of(path) {
                    Scope::User => HEADER,
                    Scope::Project => PROJECT_HEADER,
                };
                let mut document: DocumentMut = format!("{header}version = {VERSION}\n")
                    .parse()
                    .expect("the header is TOML");
                document.insert("sources", implicit());
                (document, Lock::default())
            }
            Some(text) => {
                let lock = super::parse(text, path)?;
                // The same parser as `parse`'s: a text it read parses.
                let document = text
                    .parse::<DocumentMut>()
                    .map_err(|err| LockError::Invalid {
                        path: path.to_path_buf(),
                        line: 1,
                        message: format!("not valid TOML: {}", err.message().trim()),
                    })?;
                (document, lock)
            }
        };
        Ok(LockFile {
            path: path.to_path_buf(),
            _store: store,
            _editing: editing,
            read_as,
            document,
            lock,
        })
    }

    /// Adds `source` at the end, or updates the source of the same id in
    /// place (its comments and its place are kept; its skills replaced).
    pub fn set_source(&mut self, source: &Locked) {
        let sources = self
            .document
            .entry("sources")
            .or_insert_with(implicit)
            .as_table_mut()
            .expect("`parse` checked that `sources` is a table");
        let table = sources
            .entry(&source.id)
            .or_insert_with(|| Item::Table(Table::new()))
            .as_table_mut()
            .expect("`parse` checked that a source is a table");
        fill(table, source);
        match self.lock.sources.iter_mut().find(|s| s.id == source.id) {
            Some(old) => *old = source.clone(),
            None => self.lock.sources.push(source.clone()),
        }
    }

    /// Removes the source `id`.
    pub fn remove_source(&mut self, id: &str) {
        if let Some(sources) = self
            .document
            .get_mut("sources")
            .and_then(Item::as_table_mut)
        {
            sources.remove(id);
        }
        self.lock.sources.retain(|s| s.id != id);
    }

    /// The text that would be written.
    pub fn text(&self) -> String {
        self.document.to_string()
    }

    /// Writes the lock atomically, unless the file changed since it was
    /// read (not by skillserve, which waits for the editors' lock this
    /// holds).
    pub fn save(&self) -> Result<(), SaveError> {
        let io = |source| SaveError::Write {
            path: self.path.clone(),
            source,
        };
        if read(&self.path)? != self.read_as {
            return Err(SaveError::Changed {
                path: self.path.clone(),
            });
        }
        disk::write_atomic(&self.path, self.text().as_bytes(), disk::NewFile::Shared).map_err(io)
    }
}

fn read(path: &Path) -> Result<Option<String>, LockError> {
    match disk::read_text(path, MAX_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(ReadError::Io(err)) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LockError::Unreadable {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// A table that has no `[header]` of its own (`[sources]` is implied by
/// `[sources.ID]`).
fn implicit() -> Item {
    let mut table = Table::new();
    table.set_implicit(true);
    Item::Table(table)
}

/// Sets every key of `table` from `source`, removing the optional ones it
/// does not have.
fn fill(table: &mut Table, source: &Locked) {
    table["kind"] = value(source.kind.as_str());
    table["url"] = value(&source.url);
    set_optional(table, "ref", source.reference.as_deref());
    let (version_key, other_key) = match source.kind {
        SourceKind::Git => ("commit", "digest"),
        SourceKind::Index => ("digest", "commit"),
    };
    table[version_key] = value(&source.version);
    table.remove(other_key);
    set_optional(table, "path", source.subdir.as_deref());
    if source.picked.is_empty() {
        table.remove("picked");
    } else {
        let picked: toml_edit::Array = source.picked.iter().map(String::as_str).collect();
        table["picked"] = value(picked);
    }
    table["allow_risky"] = value(source.allow_risky);
    let trust = &source.trust;
    set_optional(table, "trusted_signers", trust.trusted_signers.as_deref());
    set_optional(table, "revoked_signers", trust.revoked_signers.as_deref());
    set_flag(table, "require_signature", trust.require_signature);
    match &source.signer {
        Some(signer) => {
            let mut signed_by = toml_edit::InlineTable::new();
            signed_by.insert("format", signer.format.as_str().into());
            signed_by.insert("key", signer.key.as_str().into());
            signed_by.insert("principal", signer.principal.as_str().into());
            signed_by.insert("object", signer.object.as_str().into());
            table["signed_by"] = value(signed_by);
        }
        None => {
            table.remove("signed_by");
        }
    }
    if source.access.headers.is_empty() {
        table.remove("headers");
    } else {
        let headers: toml_edit::Array = source.access.headers.iter().map(|h| h.text()).collect();
        table["headers"] = value(headers);
    }
    set_flag(table, "netrc", source.access.netrc);
    for (key, time) in [("added", &source.added), ("updated", &source.updated)] {
        match time.parse::<toml_edit::Datetime>() {
            Ok(time) => table[key] = value(time),
            Err(_) => {
                table.remove(key);
            }
        }
    }
    let mut skills = ArrayOfTables::new();
    for skill in &source.skills {
        let mut entry = Table::new();
        entry["name"] = value(&skill.name);
        entry["path"] = value(&skill.path);
        entry["digest"] = value(&skill.digest);
        if let Some(artifact) = &skill.artifact {
            entry["artifact"] = value(artifact);
        }
        skills.push(entry);
    }
    table.remove("skill");
    if !skills.is_empty() {
        table.insert("skill", Item::ArrayOfTables(skills));
    }
}

/// `key = true`, or no key at all for false (the default).
fn set_flag(table: &mut Table, key: &str, on: bool) {
    if on {
        table[key] = value(true);
    } else {
        table.remove(key);
    }
}

fn set_optional(table: &mut Table, key: &str, text: Option<&str>) {
    match text {
        Some(text) => table[key] = value(text),
        None => {
            table.remove(key);
        }
    }
}

/// Now, as RFC 3339 in UTC to the second (`2026-01-31T12:00:00Z`).
pub fn now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format_time(secs)
}

/// `secs` since the epoch as RFC 3339 in UTC (civil date from days, as in
/// Howard Hinnant's `civil_from_days`).
fn format_time(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;
    use crate::lock::LockedSkill;

    const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

    fn source(id: &str, commit: char) -> Locked {
        Locked {
            id: id.into(),
            kind: SourceKind::Git,
            url: format!("https://example.com/{id}.git"),
            reference: Some("main".into()),
            version: commit.to_string().repeat(40),
            subdir: None,
            picked: Vec::new(),
            allow_risky: false,
            trust: Default::default(),
            signer: None,
            access: Default::default(),
            added: "2026-01-02T03:04:05Z".into(),
            updated: "2026-01-02T03:04:05Z".into(),
            skills: vec![LockedSkill {
                name: "pdf".into(),
                path: "skills/pdf".into(),
                digest: DIGEST.into(),
                artifact: None,
            }],
        }
    }

    #[test]
    fn times_are_rfc3339_in_utc() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_time(1_767_225_599), "2025-12-31T23:59:59Z");
    }

    #[test]
    fn edits_keep_comments_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sources.lock");
        let mut lock = LockFile::open(&path, &dir.path().join("store")).unwrap();
        lock.set_source(&source("a", 'a'));
        lock.set_source(&source("b", 'b'));
        lock.save().unwrap();
        // The editors' lock goes with it (another open would wait for it).
        drop(lock);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# Skills installed with `skillserve add`"),
            "{text}"
        );
        let with_comment = text.replace("[sources.a]", "# my team's skills\n[sources.a]");
        std::fs::write(&path, &with_comment).unwrap();

        let mut lock = LockFile::open(&path, &dir.path().join("store")).unwrap();
        let mut updated = source("a", 'c');
        updated.reference = None;
        updated.skills[0].digest = DIGEST.replace('1', "2");
        lock.set_source(&updated);
        lock.save().unwrap();
        drop(lock);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("# my team's skills\n[sources.a]"), "{text}");
        let (a, b) = text.split_at(text.find("[sources.b]").unwrap());
        assert!(!a.contains("ref ="), "{text}");
        assert!(
            a.contains("[[sources.a.skill]]") && a.contains("sha256:2222"),
            "{text}"
        );
        assert!(!b.contains("sha256:2222"), "{text}");
        let read = super::super::read(&path).unwrap().unwrap();
        assert_eq!(read.sources[0], updated);
        assert_eq!(read.sources[1], source("b", 'b'));

        let mut lock = LockFile::open(&path, &dir.path().join("store")).unwrap();
        lock.remove_source("a");
        std::fs::write(&path, format!("{text}\n# edited meanwhile\n")).unwrap();
        assert!(
            lock.save()
                .unwrap_err()
                .to_string()
                .contains("was changed by another program")
        );
    }
}
