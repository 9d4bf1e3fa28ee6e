//! The approvals of quarantined skills (`skillserve trust`), kept in
//! `trusted.toml` in the user's config folder (behaviour.md, "Quarantine").
//!
//! An approval is of one version of a skill's files: its digest
//! ([`digest::skill`](crate::digest::skill) over every file), so any change
//! to any file needs a new approval. The name, the folder and the findings
//! approved are recorded for people (`trust --list`, `untrust NAME`); only
//! the digest decides. The file is TOML, edited in place with `toml_edit`
//! so that comments and entries the user wrote by hand are kept:
//!
//! ```toml
//! [[skill]]
//! name = "deploy"
//! path = "/home/me/repo/.claude/skills/deploy"
//! digest = "sha256:…"
//! approved = 2026-10-01T12:00:00Z
//! findings = ["scripts/install.sh:3: download-to-shell"]
//! ```
//!
//! Reading is strict (a key it does not know, a value of the wrong type, a
//! digest that is not one: an error naming the file and line), and a file
//! that cannot be read approves nothing: a broken file never lets a skill
//! through.

use std::io;
use std::path::{Path, PathBuf};

use toml_edit::{ArrayOfTables, Document, DocumentMut, Item, Table, Value};

use crate::diagnostic::{Code, Diagnostic, Finding};
use crate::digest;
use crate::disk::{self, ReadError};

/// The file's name in the user's config folder.
pub const FILE_NAME: &str = "trusted.toml";

/// Larger approval files are refused: thousands of approvals fit in this.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The approvals file in the config folder `config_folder`.
pub fn file_in(config_folder: &Path) -> PathBuf {
    config_folder.join(FILE_NAME)
}

/// The array of tables that holds the approvals.
const TABLE: &str = "skill";

/// What a new file starts with.
const HEADER: &str = "\
# Skills approved with `skillserve trust`. Each entry lets one version of a
# quarantined skill be served: the version whose files hash to `digest`. Any
# change to any of the skill's files needs a new approval. Delete an entry,
# or run `skillserve untrust NAME`, to withdraw it.
";

/// One approval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    /// The skill's name when it was approved.
    pub name: String,
    /// The skill's folder when it was approved.
    pub path: PathBuf,
    /// `sha256:` and 64 lowercase hex digits: the approved version.
    pub digest: String,
    /// When, as an RFC 3339 time (UTC).
    pub approved: String,
    /// The findings the user saw and approved, `file:line: code`.
    pub findings: Vec<String>,
}

/// Every approval in the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Approvals {
    list: Vec<Approval>,
}

/// Why the approvals file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: ReadError },
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
}

impl TrustError {
    /// The diagnostic a load reports: while the file is broken, no skill
    /// is approved.
    pub fn diagnostic(&self) -> Diagnostic {
        let (path, line, message) = match self {
            TrustError::Read { path, source } => (path, None, source.to_string()),
            TrustError::Invalid {
                path,
                line,
                message,
            } => (path, Some(*line), message.clone()),
            TrustError::Write { path, source } => (path, None, source.to_string()),
        };
        let mut finding = Finding::error(
            Code::ApprovalsInvalid,
            format!(
                "the approvals of quarantined skills cannot be used ({message}), so every quarantined skill stays quarantined"
            ),
            "fix or delete the file, then approve skills again with `skillserve trust NAME`",
        );
        finding.line = line;
        finding.at(path)
    }
}

impl Approvals {
    /// The approvals in `file`; none when it does not exist.
    pub fn read(file: &Path) -> Result<Approvals, TrustError> {
        let Some(text) = read_text(file)? else {
            return Ok(Approvals::default());
        };
        let document = parse(file, &text)?;
        let mut list = Vec::new();
        for (key, item) in document.as_table().iter() {
            if key != TABLE {
                return Err(invalid(
                    file,
                    &text,
                    item.span(),
                    format!("unknown key `{key}` (the file holds `[[{TABLE}]]` tables)"),
                ));
            }
            let Some(tables) = item.as_array_of_tables() else {
                return Err(invalid(
                    file,
                    &text,
                    item.span(),
                    format!("`{TABLE}` must be a list of tables (`[[{TABLE}]]`)"),
                ));
            };
            for table in tables.iter() {
                list.push(approval(file, &text, table)?);
            }
        }
        Ok(Approvals { list })
    }

    /// Whether a skill whose files hash to `digest` is approved.
    pub fn allows(&self, digest: &str) -> bool {
        self.list.iter().any(|a| a.digest == digest)
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Every approval, in the file's order.
    pub fn list(&self) -> &[Approval] {
        &self.list
    }
}

/// Adds `approval` to `file` (created, with its folder, when missing),
/// keeping everything else in it. An approval of the same digest is
/// replaced, so approving twice leaves one entry.
pub fn approve(file: &Path, approval: &Approval) -> Result<(), TrustError> {
    let _editing = lock_editors(file)?;
    let (mut document, header) = editable(file)?;
    let tables = tables_mut(&mut document);
    let same_digest = tables
        .iter()
        .position(|t| t.get("digest").and_then(Item::as_str) == Some(&approval.digest));
    let mut table = Table::new();
    table.decor_mut().set_prefix("\n");
    table.insert("name", toml_edit::value(approval.name.as_str()));
    table.insert(
        "path",
        toml_edit::value(approval.path.to_string_lossy().as_ref()),
    );
    table.insert("digest", toml_edit::value(approval.digest.as_str()));
    let approved = match approval.approved.parse::<toml_edit::Datetime>() {
        Ok(time) => Value::from(time),
        Err(_) => Value::from(approval.approved.as_str()),
    };
    table.insert("approved", Item::Value(approved));
    let findings: toml_edit::Array = approval.findings.iter().map(String::as_str).collect();
    table.insert("findings", toml_edit::value(findings));
    match same_digest {
        Some(index) => {
            if let Some(old) = tables.get_mut(index) {
                *old = table;
            }
        }
        None => tables.push(table),
    }
    write(file, &format!("{header}{document}"))
}

/// Removes every approval recorded under `name` (ignoring case) from
/// `file`; returns them.
pub fn revoke(file: &Path, name: &str) -> Result<Vec<Approval>, TrustError> {
    let wanted = name.to_lowercase();
    let named = |approvals: Approvals| -> Vec<Approval> {
        approvals
            .list
            .into_iter()
            .filter(|a| a.name.to_lowercase() == wanted)
            .collect()
    };
    // Nothing to remove: no lock taken (and no lock file made).
    if named(Approvals::read(file)?).is_empty() {
        return Ok(Vec::new());
    }
    let _editing = lock_editors(file)?;
    // Read again under the lock: another edit may have landed meanwhile.
    let removed = named(Approvals::read(file)?);
    if removed.is_empty() {
        return Ok(removed);
    }
    let (mut document, header) = editable(file)?;
    tables_mut(&mut document).retain(|t| {
        t.get("name")
            .and_then(Item::as_str)
            .is_none_or(|n| n.to_lowercase() != wanted)
    });
    write(file, &format!("{header}{document}"))?;
    Ok(removed)
}

/// The lock of `file`'s editors, held from an edit's read to its write.
fn lock_editors(file: &Path) -> Result<disk::EditLock, TrustError> {
    disk::lock_editors(file).map_err(|source| TrustError::Write {
        path: file.to_path_buf(),
        source,
    })
}

/// The text of `file`, or `None` when there is no such file.
fn read_text(file: &Path) -> Result<Option<String>, TrustError> {
    match disk::read_text(file, MAX_FILE_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.is_gone() => Ok(None),
        Err(source) => Err(TrustError::Read {
            path: file.to_path_buf(),
            source,
        }),
    }
}

fn parse(file: &Path, text: &str) -> Result<Document<String>, TrustError> {
    Document::parse(text.to_owned()).map_err(|err| {
        let message = err.message().trim().to_owned();
        invalid(file, text, err.span(), format!("not valid TOML: {message}"))
    })
}

/// The file as a document to edit, and the text to write before it: the
/// header when the file is new. A file that does not read as approvals is
/// not overwritten: what it holds would be lost.
fn editable(file: &Path) -> Result<(DocumentMut, &'static str), TrustError> {
    Approvals::read(file)?;
    match read_text(file)? {
        Some(text) => Ok((parse(file, &text)?.into_mut(), "")),
        None => Ok((DocumentMut::new(), HEADER)),
    }
}

fn tables_mut(document: &mut DocumentMut) -> &mut ArrayOfTables {
    let item = document
        .as_table_mut()
        .entry(TABLE)
        .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
    if !item.is_array_of_tables() {
        // `Approvals::read` refused anything else before an edit.
        *item = Item::ArrayOfTables(ArrayOfTables::new());
    }
    item.as_array_of_tables_mut()
        .expect("made an array of tables above")
}

/// Replaces `file` with `text` (`disk::write_atomic`): a reader (a running
/// server) sees the old file or the new one, never half of one.
fn write(file: &Path, text: &str) -> Result<(), TrustError> {
    disk::write_atomic(file, text.as_bytes(), disk::NewFile::Shared).map_err(|source| {
        TrustError::Write {
            path: file.to_path_buf(),
            source,
        }
    })
}

/// One `[[skill]]` table as an approval.
fn approval(file: &Path, text: &str, table: &Table) -> Result<Approval, TrustError> {
    let fail = |span, message: String| invalid(file, text, span, message);
    for (key, item) in table.iter() {
        if !["name", "path", "digest", "approved", "findings"].contains(&key) {
            return Err(fail(
                item.span(),
                format!("unknown key `{key}` in `[[{TABLE}]]`"),
            ));
        }
    }
    let string = |key: &str| -> Result<String, TrustError> {
        match table.get(key) {
            Some(item) => item
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| fail(item.span(), format!("`{key}` must be a string"))),
            None => Err(fail(table.span(), format!("`[[{TABLE}]]` has no `{key}`"))),
        }
    };
    let name = string("name")?;
    let path = PathBuf::from(string("path")?);
    let digest = string("digest")?;
    if !is_digest(&digest) {
        let span = table.get("digest").and_then(Item::span);
        return Err(fail(
            span,
            format!(
                "`digest` must be `{}` and 64 lowercase hex digits",
                digest::PREFIX
            ),
        ));
    }
    let approved = match table.get("approved") {
        None => String::new(),
        Some(item) => match item.as_value() {
            Some(Value::Datetime(time)) => time.value().to_string(),
            Some(Value::String(time)) => time.value().clone(),
            _ => {
                return Err(fail(
                    item.span(),
                    "`approved` must be a date and time".to_owned(),
                ));
            }
        },
    };
    let findings = match table.get("findings") {
        None => Vec::new(),
        Some(item) => {
            let strings = item.as_array().and_then(|array| {
                array
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<String>>>()
            });
            strings.ok_or_else(|| {
                fail(
                    item.span(),
                    "`findings` must be a list of strings".to_owned(),
                )
            })?
        }
    };
    Ok(Approval {
        name,
        path,
        digest,
        approved,
        findings,
    })
}

fn is_digest(text: &str) -> bool {
    text.strip_prefix(digest::PREFIX).is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// An [`TrustError::Invalid`] at the line where `span` starts (the first
/// line when the span is unknown).
fn invalid(
    file: &Path,
    text: &str,
    span: Option<std::ops::Range<usize>>,
    message: String,
) -> TrustError {
    let offset = span.map_or(0, |s| s.start.min(text.len()));
    TrustError::Invalid {
        path: file.to_path_buf(),
        line: disk::line_of(text.as_bytes(), offset),
        message,
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    fn approval(name: &str, digest_byte: char) -> Approval {
        Approval {
            name: name.into(),
            path: format!("/repo/.claude/skills/{name}").into(),
            digest: format!("sha256:{}", digest_byte.to_string().repeat(64)),
            approved: "2026-10-01T12:00:00Z".into(),
            findings: vec!["scripts/install.sh:3: download-to-shell".into()],
        }
    }

    #[test]
    fn approvals_round_trip_and_keep_the_users_comments() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config/skillserve").join(FILE_NAME);
        assert!(Approvals::read(&file).unwrap().is_empty());
        approve(&file, &approval("deploy", 'a')).unwrap();
        let mut text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("# Skills approved"), "{text}");
        text.push_str("# my own note\n");
        std::fs::write(&file, text).unwrap();
        approve(&file, &approval("lint", 'b')).unwrap();
        // Approving the same version again replaces its entry.
        approve(&file, &approval("deploy", 'a')).unwrap();
        let read = Approvals::read(&file).unwrap();
        assert_eq!(
            read.list(),
            [approval("deploy", 'a'), approval("lint", 'b')]
        );
        assert!(read.allows(&approval("lint", 'b').digest));
        assert!(!read.allows(&approval("lint", 'c').digest));
        assert!(
            std::fs::read_to_string(&file)
                .unwrap()
                .contains("# my own note")
        );

        assert_eq!(revoke(&file, "DEPLOY").unwrap(), [approval("deploy", 'a')]);
        assert_eq!(
            Approvals::read(&file).unwrap().list(),
            [approval("lint", 'b')]
        );
        assert!(revoke(&file, "deploy").unwrap().is_empty());
    }

    #[test]
    fn a_bad_file_names_its_line_and_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        let cases = [
            (
                "[[skill]]\nname = \"a\"\npath = \"/a\"\ndigest = \"sha256:12\"\n",
                4,
                "`digest` must be",
            ),
            (
                "[[skill]]\nname = \"a\"\npath = \"/a\"\n",
                1,
                "has no `digest`",
            ),
            ("\n[[skill]]\nname = 1\n", 3, "`name` must be a string"),
            ("colour = \"red\"\n", 1, "unknown key `colour`"),
            ("[[skill]\n", 1, "not valid TOML"),
        ];
        for (text, line, message) in cases {
            std::fs::write(&file, text).unwrap();
            let err = Approvals::read(&file).unwrap_err();
            let TrustError::Invalid {
                line: got,
                message: said,
                ..
            } = &err
            else {
                panic!("{err}");
            };
            assert_eq!(*got, line, "{text:?}: {err}");
            assert!(said.contains(message), "{text:?}: {err}");
            assert!(approve(&file, &approval("x", 'a')).is_err());
            assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        }
    }
}
