//! What `update` found: per skill of a source, unchanged, changed (files
//! added, removed and changed, scripts among them, and the `SKILL.md`
//! before and after), new or gone, between what is installed and what was
//! fetched (behaviour.md, "Sources"). Values only: the command line words
//! them as a unified diff, the skills app draws them side by side.

use std::collections::BTreeMap;

use serde::Serialize;
use similar::{DiffTag, TextDiff};

use std::io::Read;
use std::path::Path;

use crate::disk;
use crate::installed::{self, Paths};
use crate::lock::{self, Locked};
use crate::roots::SKILL_FILES;
use crate::spec;

use super::Context;
use super::fetch::Fetched;
use super::found::{Candidate, SCRIPT_HEAD, is_script};

/// Lines of context around each change of a `SKILL.md` diff.
pub const DIFF_CONTEXT: usize = 3;
/// Rows of a side-by-side diff kept before the rest is counted.
pub const SIDE_BY_SIDE_ROWS: usize = 400;
/// Characters of one line of a side-by-side diff kept.
const LINE_CHARS: usize = 2000;

/// The first 12 characters of a commit id; an index digest as it is.
pub fn short(version: &str) -> &str {
    if version.starts_with(crate::digest::PREFIX) {
        version
    } else {
        &version[..version.len().min(12)]
    }
}

/// What happened to one skill between what is installed and what was
/// fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Unchanged,
    Changed,
    New,
    Gone,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Unchanged => "unchanged",
            Status::Changed => "changed",
            Status::New => "new",
            Status::Gone => "gone",
        }
    }
}

/// One skill of an update.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    pub name: String,
    pub status: Status,
    /// The fetched skill (index into the fetched candidates), unless gone.
    #[serde(skip)]
    pub candidate: Option<usize>,
    /// Files added, removed and changed (changed skills only).
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    /// Those of them that are scripts (by [`is_script`], as `add` counts
    /// them), in the same order.
    pub scripts: Vec<String>,
    /// The `SKILL.md` before and after, when it changed (or is new in a
    /// changed skill).
    pub skill_md: Option<TextChange>,
    /// The store's copy could not be read: the diff is against nothing.
    pub store_damaged: bool,
}

impl Change {
    fn new(name: &str, status: Status, candidate: Option<usize>) -> Change {
        Change {
            name: name.to_owned(),
            status,
            candidate,
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
            scripts: Vec::new(),
            skill_md: None,
            store_damaged: false,
        }
    }
}

/// A text file before and after an update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextChange {
    /// Its path in the skill (`SKILL.md`).
    pub file: String,
    pub before: String,
    pub after: String,
}

impl TextChange {
    /// The unified diff (`--- a/…`, `+++ b/…`, hunks with
    /// [`DIFF_CONTEXT`] lines of context), as `update` prints it.
    pub fn unified(&self) -> String {
        TextDiff::from_lines(&self.before, &self.after)
            .unified_diff()
            .context_radius(DIFF_CONTEXT)
            .header(&format!("a/{}", self.file), &format!("b/{}", self.file))
            .to_string()
    }

    /// The same hunks side by side: each row a line before and the line
    /// after it became (either missing where a line was added or removed),
    /// at most [`SIDE_BY_SIDE_ROWS`] rows.
    pub fn side_by_side(&self) -> SideBySide {
        let diff = TextDiff::from_lines(&self.before, &self.after);
        let (old, new) = (diff.old_slices(), diff.new_slices());
        let line = |lines: &[&str], at: usize| Line {
            number: at + 1,
            text: cut_line(lines[at]),
        };
        let mut hunks = Vec::new();
        let mut rows_left = SIDE_BY_SIDE_ROWS;
        let mut cut_rows = 0;
        for group in diff.grouped_ops(DIFF_CONTEXT) {
            let mut rows = Vec::new();
            for op in group {
                let (tag, before, after) = op.as_tag_tuple();
                let kind = match tag {
                    DiffTag::Equal => RowKind::Same,
                    DiffTag::Delete => RowKind::Removed,
                    DiffTag::Insert => RowKind::Added,
                    DiffTag::Replace => RowKind::Changed,
                };
                let count = before.len().max(after.len());
                for i in 0..count {
                    if rows_left == 0 {
                        cut_rows += 1;
                        continue;
                    }
                    rows_left -= 1;
                    let left = before.clone().nth(i).map(|at| line(old, at));
                    let right = after.clone().nth(i).map(|at| line(new, at));
                    // A changed block of unequal lengths: the rows past the
                    // shorter side are plain additions or removals.
                    let kind = match (kind, &left, &right) {
                        (RowKind::Changed, None, _) => RowKind::Added,
                        (RowKind::Changed, _, None) => RowKind::Removed,
                        (kind, ..) => kind,
                    };
                    rows.push(Row {
                        kind,
                        before: left,
                        after: right,
                    });
                }
            }
            if !rows.is_empty() {
                hunks.push(Hunk { rows });
            }
        }
        SideBySide {
            file: self.file.clone(),
            hunks,
            more_rows: cut_rows,
        }
    }
}

/// In JSON a text change is its side-by-side diff: what a page draws.
impl Serialize for TextChange {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.side_by_side().serialize(serializer)
    }
}

/// A diff side by side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SideBySide {
    pub file: String,
    pub hunks: Vec<Hunk>,
    /// Rows past [`SIDE_BY_SIDE_ROWS`], left out.
    pub more_rows: usize,
}

/// Consecutive rows of a diff, with their context.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hunk {
    pub rows: Vec<Row>,
}

/// One row of a side-by-side diff.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    pub kind: RowKind,
    pub before: Option<Line>,
    pub after: Option<Line>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RowKind {
    Same,
    Removed,
    Added,
    Changed,
}

/// A line of a file: its number (from 1) and its text, without the line
/// break, at most 2,000 characters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Line {
    pub number: usize,
    pub text: String,
}

fn cut_line(line: &str) -> String {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    match line.char_indices().nth(LINE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_owned(),
    }
}

/// Compares what `source` has installed with what was fetched: per skill
/// (matched by name, case-insensitively), in name order.
pub fn compare(context: &Context, source: &Locked, fetched: &Fetched) -> Vec<Change> {
    let mut changes: BTreeMap<String, Change> = BTreeMap::new();
    let candidates = &fetched.found.candidates;
    for (i, candidate) in candidates.iter().enumerate() {
        let old = source
            .skills
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(&candidate.name));
        let change = match old {
            None => Change::new(&candidate.name, Status::New, Some(i)),
            // The same files upstream, but the store's copy no longer
            // verifies: installed again (what `store-tampered` advises).
            Some(old) if old.digest == candidate.digest => {
                let entry = context.paths.entry(&old.digest);
                if installed::verify_entry(&entry, &old.digest).is_ok() {
                    Change::new(&candidate.name, Status::Unchanged, Some(i))
                } else {
                    let mut change = Change::new(&candidate.name, Status::Changed, Some(i));
                    change.store_damaged = true;
                    change
                }
            }
            Some(old) => diff(&context.paths, &old.digest, candidate, i),
        };
        changes.insert(candidate.name.to_lowercase(), change);
    }
    for old in &source.skills {
        changes
            .entry(old.name.to_lowercase())
            .or_insert_with(|| Change::new(&old.name, Status::Gone, None));
    }
    changes.into_values().collect()
}

/// A changed skill: its files compared with the store's copy.
fn diff(paths: &Paths, old_digest: &str, candidate: &Candidate, index: usize) -> Change {
    let mut change = Change::new(&candidate.name, Status::Changed, Some(index));
    let entry = paths.entry(old_digest);
    let old = match installed::verify_entry(&entry, old_digest) {
        Ok(verified) => verified.files,
        Err(_) => {
            change.store_damaged = true;
            Vec::new()
        }
    };
    for file in &candidate.files {
        match old.iter().find(|(path, _, _)| *path == file.path) {
            None => change.added.push(file.path.clone()),
            Some((_, sum, _)) if *sum != file.sum => change.changed.push(file.path.clone()),
            Some(_) => {}
        }
    }
    for (path, _, _) in &old {
        if !candidate.files.iter().any(|f| f.path == *path) {
            change.removed.push(path.clone());
        }
    }
    let fetched_script =
        |path: &String| candidate.files.iter().any(|f| f.path == *path && f.script);
    change.scripts = (change.added.iter())
        .filter(|path| fetched_script(path))
        .chain(
            change
                .removed
                .iter()
                .filter(|path| stored_script(&entry, path)),
        )
        .chain(change.changed.iter().filter(|path| {
            // A file that became a script, or stopped being one.
            fetched_script(path) || stored_script(&entry, path)
        }))
        .cloned()
        .collect();
    let own = SKILL_FILES
        .iter()
        .find(|name| candidate.files.iter().any(|f| f.path == **name));
    if let Some(own) = own
        && (change.changed.iter().any(|p| p == own) || change.added.iter().any(|p| p == own))
    {
        let read = |path: std::path::PathBuf| {
            crate::disk::read_text(&path, lock::MAX_BYTES).unwrap_or_default()
        };
        let before = if change.store_damaged {
            String::new()
        } else {
            read(entry.join(own))
        };
        change.skill_md = Some(TextChange {
            file: (*own).to_owned(),
            before,
            after: read(candidate.dir.join(own)),
        });
    }
    change
}

/// Whether the file `path` of the store entry `entry` is a script, by the
/// rule `add` applied when it was installed (the store keeps executables
/// executable); not when it cannot be read.
fn stored_script(entry: &Path, path: &str) -> bool {
    let Ok((file, _)) = disk::open_regular(&entry.join(path), spec::MAX_SKILL_BYTES) else {
        return false;
    };
    let executable = is_executable(&file);
    let mut head = Vec::with_capacity(SCRIPT_HEAD);
    let _ = file.take(SCRIPT_HEAD as u64).read_to_end(&mut head);
    is_script(path, executable, &head)
}

#[cfg(unix)]
fn is_executable(file: &std::fs::File) -> bool {
    use std::os::unix::fs::PermissionsExt;
    file.metadata()
        .is_ok_and(|meta| meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_file: &std::fs::File) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(before: &str, after: &str) -> TextChange {
        TextChange {
            file: "SKILL.md".into(),
            before: before.into(),
            after: after.into(),
        }
    }

    /// Per hunk, each row's kind and line numbers.
    type Shape = Vec<Vec<(RowKind, Option<usize>, Option<usize>)>>;

    fn kinds(side: &SideBySide) -> Shape {
        side.hunks
            .iter()
            .map(|h| {
                h.rows
                    .iter()
                    .map(|r| {
                        (
                            r.kind,
                            r.before.as_ref().map(|l| l.number),
                            r.after.as_ref().map(|l| l.number),
                        )
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_changed_line_sits_beside_the_line_it_replaced_with_context_around() {
        let before = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let after = "a\nb\nc\nD\ne\nf\ng\nh\n";
        let side = change(before, after).side_by_side();
        assert_eq!(
            kinds(&side),
            [[
                (RowKind::Same, Some(1), Some(1)),
                (RowKind::Same, Some(2), Some(2)),
                (RowKind::Same, Some(3), Some(3)),
                (RowKind::Changed, Some(4), Some(4)),
                (RowKind::Same, Some(5), Some(5)),
                (RowKind::Same, Some(6), Some(6)),
                (RowKind::Same, Some(7), Some(7)),
            ]]
        );
        let changed = &side.hunks[0].rows[3];
        assert_eq!(changed.before.as_ref().unwrap().text, "d");
        assert_eq!(changed.after.as_ref().unwrap().text, "D");
        assert_eq!(side.more_rows, 0);
    }

    #[test]
    fn lines_added_or_removed_have_an_empty_side() {
        let side = change("one\ntwo\n", "one\ntwo\nthree\nfour\n").side_by_side();
        assert_eq!(
            kinds(&side),
            [[
                (RowKind::Same, Some(1), Some(1)),
                (RowKind::Same, Some(2), Some(2)),
                (RowKind::Added, None, Some(3)),
                (RowKind::Added, None, Some(4)),
            ]]
        );
        // A block of two lines replaced by one: a changed row, then a
        // removed one.
        let side = change("x\ny\nz\n", "x\nY\n").side_by_side();
        assert_eq!(
            kinds(&side),
            [[
                (RowKind::Same, Some(1), Some(1)),
                (RowKind::Changed, Some(2), Some(2)),
                (RowKind::Removed, Some(3), None),
            ]]
        );
    }

    #[test]
    fn a_long_diff_is_cut_and_the_rest_counted() {
        let after: String = (0..SIDE_BY_SIDE_ROWS + 50)
            .map(|i| format!("{i}\n"))
            .collect();
        let side = change("", &after).side_by_side();
        let rows: usize = side.hunks.iter().map(|h| h.rows.len()).sum();
        assert_eq!(rows, SIDE_BY_SIDE_ROWS);
        assert_eq!(side.more_rows, 50);
        let json = serde_json::to_value(change("a\n", "b\n")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"file": "SKILL.md", "more_rows": 0, "hunks": [{"rows": [
                {"kind": "changed", "before": {"number": 1, "text": "a"}, "after": {"number": 1, "text": "b"}}
            ]}]})
        );
    }

    #[test]
    fn the_unified_diff_is_the_one_update_printed() {
        assert_eq!(
            change("a\nb\n", "a\nc\n").unified(),
            "--- a/SKILL.md\n+++ b/SKILL.md\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        );
    }
}
