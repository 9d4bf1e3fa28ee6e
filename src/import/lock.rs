//! The lock file, `.skillserve-import.json` in the output folder: which
//! skills `import` wrote for which server, and a SHA-256 of the tool list they
//! were written from.
//!
//! ```json
//! {"version": 1, "settings": "/abs/mcp.json",
//!  "servers": {"github": {"sha256": "3f2a…", "skills": ["github-create-issue"]}}}
//! ```
//!
//! The name starts with a dot, so a scan never takes it for a skill. It is what
//! lets `import` skip a server whose tools did not change, and remove only
//! skills it wrote itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::disk;

/// The lock file's name in the output folder.
pub const LOCK_FILE: &str = ".skillserve-import.json";
/// The format this code reads and writes.
pub const LOCK_VERSION: u32 = 1;

/// The whole lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    pub version: u32,
    /// The settings file the skills were generated from (their `invoke`
    /// lines name it).
    pub settings: PathBuf,
    pub servers: BTreeMap<String, ServerLock>,
}

/// What one server's import produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerLock {
    /// [`digest`] of the tool list the skills were written from.
    pub sha256: String,
    /// The skill folders written for it, in the output folder.
    pub skills: Vec<String>,
}

/// A lock file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot read the lock file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: crate::disk::ReadError,
    },
    #[error(
        "the lock file {} is not usable ({problem}); delete it and import again (every skill is then regenerated)",
        path.display()
    )]
    Invalid { path: PathBuf, problem: String },
    #[error("cannot write the lock file {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Lock {
    /// An empty lock for `settings`.
    pub fn new(settings: &Path) -> Lock {
        Lock {
            version: LOCK_VERSION,
            settings: settings.to_owned(),
            servers: BTreeMap::new(),
        }
    }

    /// Reads the lock of the output folder `dir`; `None` when there is none.
    pub fn read(dir: &Path) -> Result<Option<Lock>, LockError> {
        let path = dir.join(LOCK_FILE);
        let text = match crate::disk::read_settings(&path) {
            Ok(text) => text,
            Err(e) if e.is_gone() => return Ok(None),
            Err(source) => return Err(LockError::Read { path, source }),
        };
        let invalid = |problem: String| LockError::Invalid {
            path: path.clone(),
            problem,
        };
        let lock: Lock = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if lock.version != LOCK_VERSION {
            return Err(invalid(format!(
                "version {} is not {LOCK_VERSION}; a newer skillserve wrote it",
                lock.version
            )));
        }
        // Folders named here may be deleted: never anything but a plain name
        // inside the output folder.
        if let Some(bad) = lock
            .servers
            .values()
            .flat_map(|server| &server.skills)
            .find(|name| !is_folder_name(name))
        {
            return Err(invalid(format!("{bad:?} is not a skill folder name")));
        }
        Ok(Some(lock))
    }

    /// Writes the lock into `dir`, atomically.
    pub fn write(&self, dir: &Path) -> Result<(), LockError> {
        let path = dir.join(LOCK_FILE);
        let mut text = serde_json::to_string_pretty(self).map_err(|e| LockError::Write {
            path: path.clone(),
            source: e.into(),
        })?;
        text.push('\n');
        disk::write_atomic(&path, text.as_bytes(), disk::NewFile::Shared)
            .map_err(|source| LockError::Write { path, source })
    }
}

/// Whether `name` looks like a folder `import` writes: lowercase ASCII
/// letters, digits and hyphens, as `generate` makes them.
fn is_folder_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= crate::spec::MAX_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// SHA-256 (lowercase hex) of a server's tool list: the tools sorted by name,
/// as JSON with object keys sorted and no whitespace, so that neither the
/// server's order nor its formatting changes the digest.
pub fn digest(tools: &[Tool]) -> String {
    let mut sorted: Vec<&Tool> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let value = serde_json::to_value(&sorted).unwrap_or(Value::Null);
    let mut text = String::new();
    canonical(&value, &mut text);
    crate::digest::hex(&Sha256::digest(text.as_bytes()))
}

/// JSON with object keys sorted, whatever serde_json's map type does.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> Tool {
        let Value::Object(schema) = schema else {
            panic!("schema is an object")
        };
        Tool::new(name.to_owned(), "d", schema)
    }

    #[test]
    fn digest_ignores_tool_and_key_order() {
        let a = tool(
            "a",
            json!({"type": "object", "properties": {"x": {}, "y": {}}}),
        );
        let b = tool("b", json!({"type": "object"}));
        assert_eq!(
            digest(&[a.clone(), b.clone()]),
            digest(&[b.clone(), a.clone()])
        );
        assert_eq!(digest(std::slice::from_ref(&a)).len(), 64);
        let changed = tool("a", json!({"type": "object", "properties": {"x": {}}}));
        assert_ne!(digest(&[a, b.clone()]), digest(&[changed, b]));
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let mut text = String::new();
        canonical(&json!({"b": [{"z": 1, "a": "\""}], "a": null}), &mut text);
        assert_eq!(text, r#"{"a":null,"b":[{"a":"\"","z":1}]}"#);
    }

    #[test]
    fn lock_round_trips_and_refuses_unsafe_names() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Lock::read(dir.path()).unwrap(), None);
        let mut lock = Lock::new(Path::new("/s/mcp.json"));
        lock.servers.insert(
            "gh".to_owned(),
            ServerLock {
                sha256: "00".to_owned(),
                skills: vec!["gh-search".to_owned()],
            },
        );
        lock.write(dir.path()).unwrap();
        assert_eq!(Lock::read(dir.path()).unwrap(), Some(lock));

        std::fs::write(
            dir.path().join(LOCK_FILE),
            r#"{"version": 1, "settings": "/s", "servers": {"x": {"sha256": "", "skills": ["../home"]}}}"#,
        )
        .unwrap();
        let err = Lock::read(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("(\"../home\" is not a skill folder name); delete it"),
            "{err}"
        );
    }
}
