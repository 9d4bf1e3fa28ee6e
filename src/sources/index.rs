//! Published indexes: Agent Skills discovery 0.2.0 (agentskills.io
//! "Well-Known URI"), `/.well-known/agent-skills/index.json`, read and
//! written (behaviour.md, "Sources").
//!
//! ```json
//! {"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
//!  "skills": [{"name": "pdf", "type": "skill-md" | "archive",
//!              "description": "…", "url": "pdf/SKILL.md", "digest": "sha256:…"}]}
//! ```
//!
//! `url` is resolved against the index's URL; `digest` is the SHA-256 of the
//! artifact's bytes, checked before anything is done with them.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::digest::{self, is_digest};
use crate::disk;

use super::SourceError;
use super::archive;
use super::http::{self, Client};

/// The `$schema` of the version read and written.
pub const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// An index larger than this is refused.
const MAX_INDEX_BYTES: u64 = 8 * 1024 * 1024;
/// A `SKILL.md` artifact larger than this is refused.
const MAX_SKILL_MD_BYTES: u64 = 16 * 1024 * 1024;

/// What an artifact is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ArtifactKind {
    /// One `SKILL.md`.
    #[serde(rename = "skill-md")]
    SkillMd,
    /// A `.tar.gz` or `.zip` of the skill's folder.
    #[serde(rename = "archive")]
    Archive,
}

/// One skill of an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub kind: ArtifactKind,
    pub description: String,
    /// Resolved against the index's URL.
    pub url: String,
    /// `sha256:` of the artifact.
    pub digest: String,
}

/// An index, read.
#[derive(Debug)]
pub struct Index {
    /// `sha256:` of the index's bytes: the version `update` compares.
    pub digest: String,
    pub entries: Vec<Entry>,
    /// Entries skipped (an unknown `type`), said in the plan.
    pub notes: Vec<String>,
}

/// A signature larger than this is refused (an SSH signature is under
/// 1 KiB, even with an RSA key).
pub const MAX_SIGNATURE_BYTES: u64 = 64 * 1024;

/// The bytes of the index at `url`, which its digest and signature are of.
pub fn download(client: &Client, url: &str) -> Result<Vec<u8>, SourceError> {
    client.get(url, MAX_INDEX_BYTES)
}

/// Where the detached signature of the index at `url` is:
/// `index.json.sig` beside it (`publish --sign` writes it there).
pub fn signature_url(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    format!("{url}.sig")
}

/// Reads the bytes of an index published at `url`.
pub fn parse(bytes: &[u8], url: &str) -> Result<Index, SourceError> {
    let bad = |problem: String| SourceError::Index {
        url: url.to_owned(),
        problem,
    };
    let json: Value =
        serde_json::from_slice(bytes).map_err(|err| bad(format!("not valid JSON ({err})")))?;
    match json.get("$schema").and_then(Value::as_str) {
        Some(SCHEMA) => {}
        Some(other) => {
            return Err(bad(format!(
                "`$schema` is {other}; this skillserve reads {SCHEMA}"
            )));
        }
        None => {
            return Err(bad(format!(
                "no `$schema`; an Agent Skills discovery index names {SCHEMA}"
            )));
        }
    }
    let Some(skills) = json.get("skills").and_then(Value::as_array) else {
        return Err(bad("no `skills` list".into()));
    };
    let mut index = Index {
        digest: digest::text(&Sha256::digest(bytes).into()),
        entries: Vec::new(),
        notes: Vec::new(),
    };
    for (i, skill) in skills.iter().enumerate() {
        let field = |key: &str| -> Result<String, SourceError> {
            skill
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| bad(format!("skills[{i}] has no `{key}` string")))
        };
        let name = field("name")?;
        if name.is_empty()
            || name.len() > 255
            || name.contains(['/', '\\'])
            || name.chars().any(char::is_control)
            || name.starts_with('.')
        {
            return Err(bad(format!(
                "skills[{i}] has the name `{name}`, which is not a skill's name"
            )));
        }
        let kind = match field("type")?.as_str() {
            "skill-md" => ArtifactKind::SkillMd,
            "archive" => ArtifactKind::Archive,
            other => {
                index.notes.push(format!(
                    "skill '{name}' is skipped: its type \"{other}\" is unknown to this skillserve"
                ));
                continue;
            }
        };
        let digest = field("digest")?;
        if !is_digest(&digest) {
            return Err(bad(format!(
                "skills[{i}] ('{name}') has the digest `{digest}`; expected `sha256:` and 64 lowercase hex digits"
            )));
        }
        if index.entries.iter().any(|e: &Entry| e.name == name) {
            return Err(bad(format!("the skill '{name}' is listed twice")));
        }
        index.entries.push(Entry {
            description: field("description")?,
            url: http::resolve(url, &field("url")?),
            name,
            kind,
            digest,
        });
    }
    Ok(index)
}

/// Downloads the artifact of `entry`, checks its digest, and writes the
/// skill's files into `dest` (a folder that does not exist yet).
pub fn fetch_artifact(client: &Client, entry: &Entry, dest: &Path) -> Result<(), SourceError> {
    let limit = match entry.kind {
        ArtifactKind::SkillMd => MAX_SKILL_MD_BYTES,
        ArtifactKind::Archive => archive::MAX_BYTES,
    };
    let bytes = client.get(&entry.url, limit)?;
    let actual = digest::text(&Sha256::digest(&bytes).into());
    if actual != entry.digest {
        return Err(SourceError::Index {
            url: entry.url.clone(),
            problem: format!(
                "the artifact of skill '{}' hashes to {actual}, but the index says {}; it was changed or damaged, so nothing is installed",
                entry.name, entry.digest
            ),
        });
    }
    let io = |err: std::io::Error| SourceError::Io {
        path: dest.to_path_buf(),
        source: err,
    };
    std::fs::create_dir_all(dest).map_err(io)?;
    match entry.kind {
        ArtifactKind::SkillMd => disk::write_new(&dest.join("SKILL.md"), &bytes).map_err(io),
        ArtifactKind::Archive => {
            archive::unpack(&bytes, dest).map_err(|err| SourceError::Index {
                url: entry.url.clone(),
                problem: format!("the archive of skill '{}' is refused: {err}", entry.name),
            })?;
            if !dest.join("SKILL.md").is_file() {
                return Err(SourceError::Index {
                    url: entry.url.clone(),
                    problem: format!(
                        "the archive of skill '{}' has no SKILL.md at its top",
                        entry.name
                    ),
                });
            }
            Ok(())
        }
    }
}

/// One skill of an index as `publish` writes it.
#[derive(Serialize)]
pub struct Published<'a> {
    pub name: &'a str,
    #[serde(rename = "type")]
    pub kind: ArtifactKind,
    pub description: &'a str,
    pub url: String,
    pub digest: String,
}

/// The text of an index listing `skills` (in that order), with a final
/// line break.
pub fn write(skills: &[Published<'_>]) -> String {
    let index = serde_json::json!({ "$schema": SCHEMA, "skills": skills });
    let mut text = serde_json::to_string_pretty(&index).expect("an index serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://example.com/.well-known/agent-skills/index.json";
    const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    #[test]
    fn an_index_reads_its_entries_and_skips_unknown_types() {
        let text = format!(
            r#"{{"$schema": "{SCHEMA}", "skills": [
              {{"name": "pdf", "type": "skill-md", "description": "d", "url": "pdf/SKILL.md", "digest": "{DIGEST}"}},
              {{"name": "wasm", "type": "wasm", "description": "d", "url": "w", "digest": "{DIGEST}"}},
              {{"name": "big", "type": "archive", "description": "d", "url": "/big.tar.gz", "digest": "{DIGEST}", "version": "1.0.0"}}
            ]}}"#
        );
        let index = parse(text.as_bytes(), URL).unwrap();
        assert_eq!(index.entries.len(), 2);
        assert_eq!(
            index.entries[0].url,
            "https://example.com/.well-known/agent-skills/pdf/SKILL.md"
        );
        assert_eq!(index.entries[1].url, "https://example.com/big.tar.gz");
        assert_eq!(index.entries[1].kind, ArtifactKind::Archive);
        assert_eq!(index.notes.len(), 1);
        assert!(is_digest(&index.digest));
    }

    #[test]
    fn a_bad_index_says_what_is_wrong() {
        let err = |text: &str| parse(text.as_bytes(), URL).unwrap_err().to_string();
        assert!(err("{}").contains("no `$schema`"), "{}", err("{}"));
        assert!(err(r#"{"$schema": "x", "skills": []}"#).contains("`$schema` is x"));
        let no_digest = format!(
            r#"{{"$schema": "{SCHEMA}", "skills": [{{"name": "a", "type": "skill-md", "description": "d", "url": "u", "digest": "md5:1"}}]}}"#
        );
        assert!(err(&no_digest).contains("has the digest `md5:1`"));
        let climbing = format!(
            r#"{{"$schema": "{SCHEMA}", "skills": [{{"name": "../a", "type": "skill-md", "description": "d", "url": "u", "digest": "{DIGEST}"}}]}}"#
        );
        assert!(err(&climbing).contains("not a skill's name"));
    }
}
