//! `skillserve publish DIR --out OUT` (behaviour.md, "Sources"): the skills of
//! DIR as an Agent Skills discovery index, ready for any static web host:
//! `OUT/.well-known/agent-skills/index.json`, plus per skill `NAME/SKILL.md`
//! (a skill that is one `SKILL.md`) or `NAME.tar.gz` (any other). Archives
//! are deterministic, so publishing the same files gives the same digests,
//! and `skillserve add` of the published site installs skills whose digests
//! are those of DIR's. With `--sign KEY`, `index.json.sig` beside the index
//! is its detached SSH signature (`ssh-keygen -Y sign`), which `add`
//! checks against the user's allowed signers.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::diagnostic::Code;
use crate::digest;
use crate::disk::{self, ReadError};
use crate::exit_codes::ExitCode;
use crate::roots::Layout;
use crate::spec;
use crate::text::plural;

use crate::program::SearchEnv;

use super::SourceError;
use super::archive::{self, Packed};
use super::found::{self, Candidate};
use super::index::{self, ArtifactKind, Published};
use super::location::WELL_KNOWN;
use super::signature::ssh;

/// Publishes the skills of `dir` into `out_dir`; with `sign` (a key, and
/// where `ssh-keygen` is looked for), signs the index.
pub fn publish(
    dir: &Path,
    out_dir: &Path,
    max_file_bytes: u64,
    sign: Option<(&Path, &SearchEnv)>,
    out: &mut dyn Write,
) -> Result<ExitCode, SourceError> {
    // Before anything is written: a missing ssh-keygen stops it at once.
    let keygen = sign
        .map(|(key, search)| ssh::find(search).map(|keygen| (key, keygen)))
        .transpose()?;
    if !dir.is_dir() {
        return Err(SourceError::Usage(format!(
            "{} is not a folder; give the folder that holds your skills",
            dir.display()
        )));
    }
    let found = found::find(
        dir,
        &[(dir.to_path_buf(), Layout::SkillOrFolders)],
        max_file_bytes,
        &|d| found::relative(dir, d),
    );
    for skipped in &found.skipped {
        writeln!(out, "Not published: {}: {}", skipped.place, skipped.reason).map_err(output)?;
    }
    if found.candidates.is_empty() {
        return Err(SourceError::NoSkills {
            url: dir.display().to_string(),
            subdir: None,
            skipped: Vec::new(),
        });
    }
    for candidate in &found.candidates {
        if let Some(bad) = candidate
            .findings
            .iter()
            .find(|f| matches!(f.code, Code::NameInvalid | Code::NameLength))
        {
            return Err(SourceError::Usage(format!(
                "skill '{}' cannot be published: {} ({}); an index names skills by the Agent Skills rules",
                candidate.name, bad.message, bad.place
            )));
        }
    }
    fs::create_dir_all(out_dir).map_err(|source| SourceError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    let target = out_dir.join(WELL_KNOWN.trim_end_matches('/'));
    if target.exists() && !target.join("index.json").is_file() && !is_empty(&target) {
        return Err(SourceError::Usage(format!(
            "{} exists and holds no index.json; move it away, or publish into another folder",
            target.display()
        )));
    }
    let staging = tempfile::Builder::new()
        .prefix(".skillserve-publish-")
        .tempdir_in(out_dir)
        .map_err(|source| SourceError::Io {
            path: out_dir.to_path_buf(),
            source,
        })?;
    let (published, archives) = write_artifacts(&found.candidates, staging.path())?;
    let index_text = index::write(&published);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SourceError::Io { path, source }
    };
    disk::write_new(&staging.path().join("index.json"), index_text.as_bytes())
        .map_err(io(&staging.path().join("index.json")))?;
    if let Some((key, keygen)) = &keygen {
        ssh::sign(keygen, key, &staging.path().join("index.json"))?;
    }
    // Swap the new folder in: the old one is moved aside, then removed.
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let old = staging.path().with_extension("old");
    if target.exists() {
        fs::rename(&target, &old).map_err(io(&target))?;
    }
    let staged = staging.keep();
    fs::rename(&staged, &target).map_err(io(&target))?;
    if old.exists() {
        fs::remove_dir_all(&old).map_err(io(&old))?;
    }
    let count = published.len();
    writeln!(
        out,
        "Published {count} skill{} to {} (index.json, {} SKILL.md file{}, {archives} archive{}).",
        plural(count),
        target.display(),
        count - archives,
        plural(count - archives),
        plural(archives)
    )
    .map_err(output)?;
    if let Some((key, _)) = &keygen {
        writeln!(
            out,
            "Signed index.json with {} (index.json.sig); clients check it against their allowed signers (`add --trusted-signers FILE`).",
            key.display()
        )
        .map_err(output)?;
    }
    writeln!(
        out,
        "Serve {} from any static web host; `skillserve add https://HOST` installs these skills.",
        out_dir.display()
    )
    .map_err(output)?;
    Ok(ExitCode::Success)
}

/// Writes one artifact per candidate into `dest`; returns the index's
/// entries and how many archives there are.
fn write_artifacts<'a>(
    candidates: &'a [Candidate],
    dest: &Path,
) -> Result<(Vec<Published<'a>>, usize), SourceError> {
    let mut published = Vec::new();
    let mut archives = 0;
    for candidate in candidates {
        let read = |path: &str| {
            let full = candidate.dir.join(path);
            // Regular files only, within a skill's bounds (found listed
            // them through the gate).
            disk::read_bytes(&full, spec::MAX_SKILL_BYTES).map_err(|err| SourceError::Io {
                path: full,
                source: match err {
                    ReadError::Io(err) => err,
                    other => io::Error::other(other.to_string()),
                },
            })
        };
        let lone = candidate.files.len() == 1 && candidate.files[0].path == "SKILL.md";
        let (kind, url, bytes) = if lone {
            let bytes = read("SKILL.md")?;
            let folder = dest.join(&candidate.name);
            disk::write_new(&folder.join("SKILL.md"), &bytes).map_err(|source| {
                SourceError::Io {
                    path: folder.join("SKILL.md"),
                    source,
                }
            })?;
            (
                ArtifactKind::SkillMd,
                format!("{}/SKILL.md", candidate.name),
                bytes,
            )
        } else {
            let contents: Vec<Vec<u8>> = candidate
                .files
                .iter()
                .map(|f| read(&f.path))
                .collect::<Result<_, _>>()?;
            let mut packed: Vec<Packed> = candidate
                .files
                .iter()
                .zip(&contents)
                .map(|(file, bytes)| Packed {
                    path: &file.path,
                    bytes,
                    executable: file.executable,
                })
                .collect();
            let bytes = archive::pack_tar_gz(&mut packed).map_err(|source| SourceError::Io {
                path: candidate.dir.clone(),
                source,
            })?;
            let name = format!("{}.tar.gz", candidate.name);
            disk::write_new(&dest.join(&name), &bytes).map_err(|source| SourceError::Io {
                path: dest.join(&name),
                source,
            })?;
            archives += 1;
            (ArtifactKind::Archive, name, bytes)
        };
        published.push(Published {
            name: &candidate.name,
            kind,
            description: &candidate.description,
            url,
            digest: digest::text(&Sha256::digest(&bytes).into()),
        });
    }
    Ok((published, archives))
}

fn is_empty(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}

/// A failure to write the report to stdout.
fn output(err: std::io::Error) -> SourceError {
    SourceError::Io {
        path: std::path::PathBuf::from("<stdout>"),
        source: err,
    }
}
