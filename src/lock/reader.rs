//! Reading a lock's TOML into a [`Lock`], strictly: every key known, every
//! value checked, the line of every problem in the error.

use std::path::Path;

use super::signer::{SignatureFormat, SignedObject};
use super::{
    Access, HeaderTemplate, Lock, LockError, Locked, LockedSkill, Scope, Signer, SourceKind, Trust,
    VERSION, is_fingerprint, is_source_id,
};
use crate::digest;
use crate::disk;

/// Reads a lock's TOML into a [`Lock`], with the line of every problem.
pub(super) struct LockReader<'a> {
    pub(super) text: &'a str,
    pub(super) path: &'a Path,
    pub(super) scope: Scope,
}

type Table = toml_edit::Table;
type Item = toml_edit::Item;

impl LockReader<'_> {
    pub(super) fn read(&self) -> Result<Lock, LockError> {
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
                Some(VERSION) => {}
                Some(newer) if newer > VERSION => {
                    return Err(self.error(
                        self.line_of(item),
                        format!("lock format {newer} is newer than this skillserve reads ({VERSION}); upgrade skillserve"),
                    ));
                }
                _ => {
                    return Err(
                        self.error(self.line_of(item), format!("`version` must be {VERSION}"))
                    );
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
                "trusted_signers",
                "revoked_signers",
                "require_signature",
                "signed_by",
                "headers",
                "netrc",
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
                if commit.len() < 40 || !digest::is_hex(&commit) {
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
        let allow_risky = self.flag(table, "allow_risky", &what)?;
        let trust = Trust {
            trusted_signers: self.signers_file(table, "trusted_signers", &what)?,
            revoked_signers: self.signers_file(table, "revoked_signers", &what)?,
            require_signature: self.flag(table, "require_signature", &what)?,
        };
        let signer = match table.get("signed_by") {
            None => None,
            Some(item) => Some(self.signer(item, &what)?),
        };
        let access = Access {
            headers: self.headers(table, &what)?,
            netrc: self.flag(table, "netrc", &what)?,
        };
        if kind == SourceKind::Git && !access.is_empty() {
            return Err(self.error(
                self.line_of(table.get("headers").or(table.get("netrc")).unwrap_or(item)),
                format!("`{what}`: `headers` and `netrc` apply to index sources; git uses your git credentials"),
            ));
        }
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
            trust,
            signer,
            access,
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

    fn flag(&self, table: &Table, key: &str, what: &str) -> Result<bool, LockError> {
        match table.get(key) {
            None => Ok(false),
            Some(item) => item.as_bool().ok_or_else(|| {
                self.error(
                    self.line_of(item),
                    format!("`{what}.{key}` must be true or false"),
                )
            }),
        }
    }

    /// An allowed-signers or revoked-keys file: absolute in the user's
    /// lock; in a project's, relative to the project and inside it (a
    /// repository names only its own files).
    fn signers_file(
        &self,
        table: &Table,
        key: &str,
        what: &str,
    ) -> Result<Option<String>, LockError> {
        let Some(text) = self.optional_string(table, key, what)? else {
            return Ok(None);
        };
        let path = Path::new(&text);
        let fine = match self.scope {
            Scope::User => path.is_absolute(),
            Scope::Project => is_inside(&text),
        };
        if !fine {
            let want = match self.scope {
                Scope::User => "an absolute path",
                Scope::Project => {
                    "a path relative to the project's folder, inside it (no `..`, not absolute)"
                }
            };
            return Err(self.error(
                self.line_of(&table[key]),
                format!("`{what}.{key}` must be {want}"),
            ));
        }
        Ok(Some(text))
    }

    fn signer(&self, item: &Item, what: &str) -> Result<Signer, LockError> {
        let what = format!("{what}.signed_by");
        let bad = || {
            self.error(
                self.line_of(item),
                format!(
                    "`{what}` must be a table such as {{ format = \"ssh\", key = \"SHA256:…\", principal = \"alice@example.com\", object = \"commit\" }}"
                ),
            )
        };
        let table = item.as_table_like().ok_or_else(bad)?;
        let text = |key: &str| -> Result<String, LockError> {
            match table.get(key).map(|v| v.as_str()) {
                Some(Some(text)) if !text.is_empty() && !text.chars().any(char::is_control) => {
                    Ok(text.to_owned())
                }
                _ => Err(bad()),
            }
        };
        for (key, _) in table.iter() {
            if !["format", "key", "principal", "object"].contains(&key) {
                return Err(self.error(
                    self.line_of(item),
                    format!(
                        "unknown key `{key}` in {what} (known: format, key, principal, object)"
                    ),
                ));
            }
        }
        let format = SignatureFormat::parse(&text("format")?).ok_or_else(bad)?;
        let object = SignedObject::parse(&text("object")?).ok_or_else(bad)?;
        let key = text("key")?;
        if !is_fingerprint(&key) {
            return Err(self.error(
                self.line_of(item),
                format!("`{what}.key` must be a key's fingerprint (SHA256:… or 40 hex digits)"),
            ));
        }
        Ok(Signer {
            format,
            key,
            principal: text("principal")?,
            object,
        })
    }

    fn headers(&self, table: &Table, what: &str) -> Result<Vec<HeaderTemplate>, LockError> {
        let Some(item) = table.get("headers") else {
            return Ok(Vec::new());
        };
        let bad = |message: String| self.error(self.line_of(item), message);
        let array = item.as_array().ok_or_else(|| {
            bad(format!(
                "`{what}.headers` must be a list of \"NAME: $VARIABLE\" strings"
            ))
        })?;
        array
            .iter()
            .map(|value| {
                let text = value.as_str().ok_or_else(|| {
                    bad(format!(
                        "`{what}.headers` must be a list of \"NAME: $VARIABLE\" strings"
                    ))
                })?;
                HeaderTemplate::parse(text).map_err(|err| bad(format!("`{what}.headers`: {err}")))
            })
            .collect()
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
        if !digest::is_digest(&text) {
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

/// Whether `text` is a relative path that stays where it starts: only
/// plain names (no `..`, no root, no drive, no backslash).
pub(super) fn is_inside(text: &str) -> bool {
    !text.is_empty()
        && !text.contains('\\')
        && !text.starts_with('/')
        && text
            .split('/')
            .all(|part| !part.is_empty() && part != ".." && !part.contains(':'))
}
