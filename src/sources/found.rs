//! The skills found in a fetched tree (a checkout, unpacked artifacts, or
//! the folder `publish` is given), with everything the plan shows and the
//! store needs: files, their digests, the skill's digest, and `check`'s
//! findings.
//!
//! Found with the scan's own rules (a `SKILL.md` folder up to four levels
//! down, hidden folders and `node_modules` skipped) and settled like a
//! snapshot (two skills of one name: the first wins), so that what is
//! installed is exactly what the server will serve. Symlinks never lead out
//! of the tree (the roots are fenced as a project's are), and a skill's
//! files are those the server lists (`listing::list`), read through the
//! gate.

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeStruct;

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::digest::{self, Sum};
use crate::gate::{Fence, Gate};
use crate::lint;
use crate::listing;
use crate::roots::{Layout, Root, Source};
use crate::scan::{self, Cache};
use crate::security;
use crate::skill::Skill;
use crate::snapshot::Snapshot;
use crate::spec;

/// A skill that can be installed.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub name: String,
    /// One line.
    pub description: String,
    /// Its folder in the source (`skills/pdf`; "" for the repository
    /// itself), or its artifact's URL.
    pub path: String,
    /// Where its files are now.
    pub dir: PathBuf,
    /// Sorted by path.
    pub files: Vec<FileSum>,
    /// `digest::skill` of `files`: its store entry.
    pub digest: String,
    /// The artifact's digest (index sources).
    pub artifact: Option<String>,
    /// `check`'s findings about it (the scan, the Agent Skills rules, the
    /// security rules), paths relative to the tree.
    pub findings: Vec<Shown>,
}

impl Candidate {
    /// Its files that are scripts (see [`is_script`]).
    pub fn scripts(&self) -> impl Iterator<Item = &FileSum> {
        self.files.iter().filter(|f| f.script)
    }

    /// All bytes of its files.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Whether one of its findings is an error of the security rules
    /// (those need `--allow-risky`).
    pub fn is_risky(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.security && f.severity == Severity::Error)
    }
}

/// In JSON (the skills app's plans and updates): everything the plan
/// shows, each file with its digest and whether it is a script.
impl Serialize for Candidate {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct File<'a> {
            path: &'a str,
            size: u64,
            digest: String,
            executable: bool,
            script: bool,
        }
        let files: Vec<File> = self
            .files
            .iter()
            .map(|f| File {
                path: &f.path,
                size: f.size,
                digest: digest::text(&f.sum),
                executable: f.executable,
                script: f.script,
            })
            .collect();
        let mut out = serializer.serialize_struct("Candidate", 9)?;
        out.serialize_field("name", &self.name)?;
        out.serialize_field("description", &self.description)?;
        out.serialize_field("path", &self.path)?;
        out.serialize_field("digest", &self.digest)?;
        out.serialize_field("artifact", &self.artifact)?;
        out.serialize_field("size", &self.size())?;
        out.serialize_field("files", &files)?;
        out.serialize_field("findings", &self.findings)?;
        out.serialize_field("risky", &self.is_risky())?;
        out.end()
    }
}

/// One file of a candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSum {
    /// Relative to the skill's folder, `/`-separated.
    pub path: String,
    pub sum: Sum,
    pub size: u64,
    /// Executable on disk (Unix): installed as such.
    pub executable: bool,
    /// A script by [`is_script`].
    pub script: bool,
}

/// A finding as the plan shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Shown {
    pub severity: Severity,
    pub code: Code,
    /// Relative to the tree, with the line when there is one.
    pub place: String,
    pub message: String,
    /// From the security rules.
    pub security: bool,
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}[{}] {}: {}",
            self.severity, self.code, self.place, self.message
        )
    }
}

/// A skill folder that cannot be installed, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub place: String,
    pub reason: String,
}

/// What a tree holds.
#[derive(Debug, Default)]
pub struct Found {
    /// In name order.
    pub candidates: Vec<Candidate>,
    pub skipped: Vec<Skipped>,
}

/// Finds the skills below `tree` in the folders `look` names (each a
/// folder of skills or itself a skill, per its layout). `path_of` gives a
/// skill folder's path in the source.
pub fn find(
    tree: &Path,
    look: &[(PathBuf, Layout)],
    max_file_bytes: u64,
    path_of: &dyn Fn(&Path) -> String,
) -> Found {
    let fence = Arc::new(Fence::new(tree));
    let roots: Vec<Root> = look
        .iter()
        .map(|(path, layout)| {
            let mut root = Root::new(path.clone(), Source::Installed, *layout);
            root.fence = Some(Arc::clone(&fence));
            root
        })
        .collect();
    let scan = scan::scan(&roots, max_file_bytes, &mut Cache::default());
    // Nothing is withheld: every skill is shown with its findings, and
    // those of the security rules decide in `add` and `update`.
    let withheld = vec![None; scan.skills.len()];
    let snapshot = Snapshot::build(roots, scan, withheld, None);
    let mut diagnostics: Vec<Diagnostic> = snapshot
        .diagnostics
        .iter()
        .filter(|d| d.code != Code::SameFile && d.code != Code::Shadowed)
        .cloned()
        .collect();
    diagnostics.extend(lint::lint(&snapshot, max_file_bytes));
    let place = |path: &Path, line: Option<usize>| {
        let rel = relative(tree, path);
        match line {
            Some(line) => format!("{rel}:{line}"),
            None => rel,
        }
    };

    let mut out = Found::default();
    let mut attached: HashSet<usize> = HashSet::new();
    for skill in snapshot.skills() {
        let mut findings = Vec::new();
        for (i, d) in diagnostics.iter().enumerate() {
            if d.path.starts_with(&skill.dir) {
                attached.insert(i);
                findings.push(Shown {
                    severity: d.severity,
                    code: d.code,
                    place: place(&d.path, d.line),
                    message: d.message.clone(),
                    security: false,
                });
            }
        }
        let report = security::scan_dir(skill.place());
        findings.extend(report.findings.iter().map(|f| {
            let d = f.at(&skill.dir);
            Shown {
                severity: d.severity,
                code: d.code,
                place: place(&d.path, d.line),
                message: d.message,
                security: true,
            }
        }));
        findings.extend(left_out(skill, tree).into_iter().map(|(rel, files)| {
            let name = rel.rsplit('/').next().unwrap_or_default();
            let what = match name.eq_ignore_ascii_case("node_modules") {
                true => "what a package manager installed",
                false => "version-control metadata",
            };
            Shown {
                severity: Severity::Note,
                code: Code::FileLeftOut,
                place: match files {
                    0 => place(&skill.dir.join(&rel), None),
                    _ => format!("{}/", place(&skill.dir.join(&rel), None)),
                },
                message: match files {
                    0 => format!("{what}, so it is not installed"),
                    n => format!(
                        "{what} ({n} file{}), so it is not installed",
                        crate::text::plural(n)
                    ),
                },
                security: false,
            }
        }));
        let shown_dir = place(&skill.dir, None);
        match hash_files(skill) {
            Ok((files, passed_over)) => {
                findings.extend(passed_over.into_iter().map(|left| Shown {
                    severity: Severity::Note,
                    code: Code::FileLeftOut,
                    place: place(&skill.dir.join(&left.path), None),
                    message: format!("{}, so it is not installed", left.why),
                    security: false,
                }));
                let digest = digest::skill(files.iter().map(|f| (f.path.as_str(), &f.sum)));
                out.candidates.push(Candidate {
                    name: skill.name.to_string(),
                    description: skill.description().into_owned(),
                    path: path_of(&skill.dir),
                    dir: skill.dir.to_path_buf(),
                    files,
                    digest,
                    artifact: None,
                    findings,
                });
            }
            Err(reason) => out.skipped.push(Skipped {
                place: shown_dir,
                reason,
            }),
        }
    }
    for shadowed in snapshot.shadowed() {
        out.skipped.push(Skipped {
            place: place(&shadowed.skill.dir, None),
            reason: format!(
                "another skill of this source is named '{}' ({})",
                shadowed.skill.name,
                place(&shadowed.by.dir, None)
            ),
        });
    }
    // Problems of folders that are not skills: broken `SKILL.md` files, or
    // a path a manifest declares that does not exist.
    for (i, d) in diagnostics.iter().enumerate() {
        if !attached.contains(&i) && d.severity != Severity::Note {
            out.skipped.push(Skipped {
                place: place(&d.path, d.line),
                reason: format!("{}[{}]: {}", d.severity, d.code, d.message),
            });
        }
    }
    out
}

/// What the skill folder holds that is not installed, and is not the
/// fetch's own `.git` at `tree`'s top: version-control metadata and
/// `node_modules` ([`disk::is_metadata`](crate::disk::is_metadata)), each
/// with how many files it holds (0 for a file), relative to the skill
/// folder, in path order. Symlinks are not followed.
fn left_out(skill: &Skill, tree: &Path) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut stack = vec![(skill.dir.to_path_buf(), String::new(), 0)];
    while let Some((dir, rel, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let (name, path) = (entry.file_name(), entry.path());
            let Some(name) = name.to_str() else { continue };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let child = match rel.is_empty() {
                true => name.to_owned(),
                false => format!("{rel}/{name}"),
            };
            if crate::disk::is_metadata(name.as_bytes()) {
                if path != tree.join(".git") {
                    out.push((child, if kind.is_dir() { count_files(&path) } else { 0 }));
                }
            } else if kind.is_dir() && depth < listing::MAX_DEPTH {
                stack.push((path, child, depth + 1));
            }
        }
    }
    out.sort();
    out
}

/// How many files are below `dir` (at least 1 for an empty folder's
/// wording; counting stops at 100,000).
fn count_files(dir: &Path) -> usize {
    let (mut count, mut stack) = (0usize, vec![dir.to_path_buf()]);
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => stack.push(entry.path()),
                Ok(_) => count += 1,
                Err(_) => {}
            }
            if count >= 100_000 {
                return count;
            }
        }
    }
    count.max(1)
}

/// The files of `skill` as the server lists them, each opened through the
/// gate and hashed, and what the listing passed over (a symlink it does not
/// follow, a FIFO, a name that is not UTF-8); an error when the listing is
/// incomplete (the server would not serve the skill whole).
fn hash_files(skill: &Skill) -> Result<(Vec<FileSum>, Vec<listing::LeftOut>), String> {
    let gate = Gate::open(skill.place()).map_err(|err| format!("cannot open it: {err}"))?;
    let walked = listing::walk(&gate, "");
    let listing = walked.listing;
    if let Some(limit) = listing.truncated {
        return Err(format!(
            "it holds more than a skill may ({limit:?}: at most {} files, {} MiB, {} folders deep); it is not installed",
            spec::MAX_SKILL_FILES,
            spec::MAX_SKILL_BYTES / 1024 / 1024,
            listing::MAX_DEPTH
        ));
    }
    let mut out = Vec::with_capacity(listing.files.len());
    for entry in &listing.files {
        let cannot = |err: &dyn std::fmt::Display| format!("cannot read {}: {err}", entry.path);
        let opened = gate.open_rel(&entry.path).map_err(|err| cannot(&err))?;
        let file = opened.into_file();
        let executable = file.metadata().is_ok_and(|meta| is_executable(&meta));
        // A file that grew since it was listed cannot take the skill past
        // its bound.
        let mut head = Head::new(file.take(spec::MAX_SKILL_BYTES + 1));
        let (sum, size) = digest::sum_of(&mut head).map_err(|err| cannot(&err))?;
        if size > spec::MAX_SKILL_BYTES {
            return Err(cannot(&"it grew past the size a skill may have"));
        }
        out.push(FileSum {
            script: is_script(&entry.path, executable, head.seen()),
            path: entry.path.clone(),
            sum,
            size,
            executable,
        });
    }
    Ok((out, walked.left_out))
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &fs::Metadata) -> bool {
    false
}

/// Extensions of files that run as programs.
const SCRIPT_EXTENSIONS: [&str; 18] = [
    "sh", "bash", "zsh", "fish", "py", "rb", "pl", "php", "js", "mjs", "cjs", "ts", "ps1", "psm1",
    "bat", "cmd", "exe", "vbs",
];

/// The bytes [`is_script`] looks at: a file's first ones.
pub const SCRIPT_HEAD: usize = 2;

/// Whether a skill's file is a script, the one definition `add`'s plan,
/// `update`'s report and the skills app share: in a `scripts/` folder,
/// executable, with the extension of a program, or starting with `#!`
/// (`head`: its first [`SCRIPT_HEAD`] bytes, or fewer).
pub fn is_script(path: &str, executable: bool, head: &[u8]) -> bool {
    let extension = path
        .rsplit('/')
        .next()
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, ext)| ext.to_ascii_lowercase());
    executable
        || head.starts_with(b"#!")
        || path.split('/').next() == Some("scripts")
        || extension.is_some_and(|ext| SCRIPT_EXTENSIONS.contains(&ext.as_str()))
}

/// A reader that keeps the first [`SCRIPT_HEAD`] bytes read through it.
pub(super) struct Head<R> {
    inner: R,
    head: [u8; SCRIPT_HEAD],
    len: usize,
}

impl<R: Read> Head<R> {
    pub(super) fn new(inner: R) -> Head<R> {
        Head {
            inner,
            head: [0; SCRIPT_HEAD],
            len: 0,
        }
    }

    pub(super) fn seen(&self) -> &[u8] {
        &self.head[..self.len]
    }
}

impl<R: Read> Read for Head<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let take = n.min(SCRIPT_HEAD - self.len);
        self.head[self.len..self.len + take].copy_from_slice(&buf[..take]);
        self.len += take;
        Ok(n)
    }
}

/// `path` relative to `base`, `/`-separated ("" for `base` itself).
pub fn relative(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn a_tree_yields_its_skills_with_digests_and_findings() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path();
        write(
            &tree.join("skills/pdf/SKILL.md"),
            "---\nname: pdf\ndescription: Fill PDF forms.\n---\nbody\n",
        );
        write(&tree.join("skills/pdf/scripts/fill.py"), "print(1)\n");
        write(&tree.join("skills/pdf/.hidden"), "the publisher's too\n");
        write(
            &tree.join("skills/pdf/node_modules/x.js"),
            "never installed\n",
        );
        write(
            &tree.join("other/pdf/SKILL.md"),
            "---\nname: pdf\ndescription: Another.\n---\n",
        );
        write(&tree.join("broken/SKILL.md"), "no frontmatter\n");
        write(
            &tree.join("odd/SKILL.md"),
            "---\nname: Odd_Name\ndescription: d\n---\n",
        );
        let found = find(
            tree,
            &[(tree.to_path_buf(), Layout::SkillOrFolders)],
            1 << 20,
            &|dir| relative(tree, dir),
        );
        let names: Vec<&str> = found.candidates.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Odd_Name", "pdf"]);
        let pdf = &found.candidates[1];
        assert_eq!(
            pdf.path, "other/pdf",
            "the walk is in name order: other/ first"
        );
        let odd = &found.candidates[0];
        assert!(
            odd.findings
                .iter()
                .any(|f| f.code == Code::NameInvalid && f.place == "odd/SKILL.md"),
            "{:?}",
            odd.findings
        );
        assert!(
            found.skipped.iter().any(|s| s.place == "skills/pdf"),
            "{:?}",
            found.skipped
        );
        assert!(
            found.skipped.iter().any(|s| s.place == "broken/SKILL.md:1"),
            "{:?}",
            found.skipped
        );

        let only_skills = find(
            tree,
            &[(tree.join("skills"), Layout::SkillOrFolders)],
            1 << 20,
            &|dir| relative(tree, dir),
        );
        let pdf = &only_skills.candidates[0];
        let paths: Vec<&str> = pdf.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, [".hidden", "SKILL.md", "scripts/fill.py"]);
        assert_eq!(pdf.scripts().count(), 1);
        assert_eq!(
            pdf.digest,
            digest::skill(pdf.files.iter().map(|f| (f.path.as_str(), &f.sum)))
        );
    }

    #[test]
    fn scripts_are_named_by_folder_mode_extension_or_shebang() {
        assert!(is_script("scripts/README.md", false, b""));
        assert!(is_script("tools/run.PY", false, b""));
        assert!(is_script("bin/tool", true, b""));
        assert!(is_script("bin/tool", false, b"#!"));
        assert!(!is_script("bin/tool", false, b"#"));
        assert!(!is_script("references/forms.md", false, b"# "));
    }
}
