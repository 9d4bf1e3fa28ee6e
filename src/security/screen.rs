//! Which skills of a load are quarantined (behaviour.md, "Quarantine").
//!
//! A skill from a source that is not the user's own
//! ([`Source::is_own`]) is scanned before it is served. With an
//! error-level finding it is quarantined, unless the user approved the
//! version its files are now (`skillserve trust`, [`crate::approvals`]). The
//! user's own skills are not scanned here: `check --security` reports on
//! them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::approvals::{Approvals, TrustError};
use crate::diagnostic::Diagnostic;
use crate::disk::Stamp;
use crate::gate::Place;
use crate::roots::Source;

use super::cache::ApprovalsRead;
use super::frontmatter::{Names, across};
use super::{Cache, FileFinding, Report, Seen};

/// A skill of the load, as the screening needs it.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    /// The skill folder, its `SKILL.md` and (for a project skill) the
    /// repository.
    pub place: Place<'a>,
    pub source: Source,
    /// The name in its frontmatter (or its folder's).
    pub name: &'a str,
    pub description: &'a str,
    /// The user accepted its findings when it was installed (`skillserve
    /// add --allow-risky`): served like an approved skill.
    pub accepted: bool,
}

/// What the screening decided about one skill.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// The user's own: not scanned.
    Own,
    /// Scanned; nothing at error level.
    Clean(Arc<Report>),
    /// Errors, but the user approved this version (or accepted the
    /// findings when installing it). The [`Seen`] is of the files as
    /// approved (the report's, unless the scan could not read them all).
    Approved(Arc<Report>, Arc<Seen>),
    /// Errors, and no approval of this version: not served.
    Quarantined(Arc<Report>),
}

/// The verdicts of a load, parallel to its candidates.
#[derive(Debug, Default)]
pub struct Screened {
    pub verdicts: Vec<Verdict>,
    /// Problems with the approvals file.
    pub diagnostics: Vec<Diagnostic>,
    /// The folders holding the files of every scanned skill: a change in
    /// any of them may change a verdict.
    pub folders: Vec<PathBuf>,
    /// Skills whose files were read (the other reports came from the cache).
    pub scanned: usize,
}

/// Screens `candidates` (every skill of a load, in order), with the
/// approvals in `approvals_file` (none without a config folder). The
/// approvals file is read only when a skill has an error-level finding,
/// and read again only when it changed.
pub fn screen(
    candidates: &[Candidate],
    approvals_file: Option<&Path>,
    cache: &mut Cache,
) -> Screened {
    let mut screened = Screened::default();
    let scanned: Vec<usize> = (0..candidates.len())
        .filter(|&i| !candidates[i].source.is_own())
        .collect();
    let places: Vec<Place> = scanned.iter().map(|&i| candidates[i].place).collect();
    let reports = cache.reports(&places);
    screened.scanned = cache.scanned();
    let names = Names::new(candidates.iter().map(|c| c.name));
    screened.verdicts = vec![Verdict::Own; candidates.len()];
    for (&i, report) in scanned.iter().zip(reports) {
        let candidate = &candidates[i];
        let extra: Vec<FileFinding> = across(candidate.description, candidate.name, &names)
            .into_iter()
            .map(|finding| FileFinding {
                file: candidate.place.file_name.to_owned(),
                finding,
            })
            .collect();
        let report = cache.merged(candidate.place.dir, &report, extra);
        screened.verdicts[i] = if !report.has_errors() {
            Verdict::Clean(report)
        } else if candidate.accepted
            || approved(
                candidate.place,
                approvals_file,
                cache,
                &mut screened.diagnostics,
            )
        {
            let seen = as_approved(candidate.place, &report, cache);
            Verdict::Approved(report, seen)
        } else {
            Verdict::Quarantined(report)
        };
        screened.folders.extend(cache.folders(candidate.place.dir));
    }
    screened
}

/// What may be served of an approved skill: what its scan read, or when
/// the scan could not read every file, the files as the approval's digest
/// covers them (each hashed whole).
fn as_approved(place: Place, report: &Report, cache: &Cache) -> Arc<Seen> {
    if report.is_complete() {
        return Arc::clone(&report.seen);
    }
    match cache.files().file_sums(place) {
        Ok(sums) => Arc::new(Seen::new(sums)),
        Err(err) => {
            let dir = place.dir.display();
            tracing::debug!("cannot hash {dir}: {err}");
            Arc::clone(&report.seen)
        }
    }
}

/// Whether the skill at `place`, as its files are now, is approved. A
/// problem with the approvals file is reported once per load.
fn approved(
    place: Place,
    approvals_file: Option<&Path>,
    cache: &mut Cache,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    let Some(file) = approvals_file else {
        return false;
    };
    let approvals = match approvals(file, cache) {
        Ok(approvals) => approvals,
        Err(err) => {
            let diagnostic = err.diagnostic();
            if !diagnostics.contains(&diagnostic) {
                diagnostics.push(diagnostic);
            }
            return false;
        }
    };
    if approvals.is_empty() {
        return false;
    }
    match cache.files().skill_digest(place) {
        Ok(Some(digest)) => approvals.allows(&digest),
        Ok(None) => false,
        Err(err) => {
            let dir = place.dir.display();
            tracing::debug!("cannot hash {dir} to check its approval: {err}");
            false
        }
    }
}

/// The approvals in `file`, read again only when its version changed.
fn approvals(file: &Path, cache: &mut Cache) -> Result<Arc<Approvals>, Arc<TrustError>> {
    let stamp = std::fs::metadata(file).ok().map(|m| Stamp::of(&m));
    if let Some(read) = &cache.approvals
        && read.path == file
        && read.stamp == stamp
    {
        return read.approvals.clone();
    }
    let approvals = Approvals::read(file).map(Arc::new).map_err(Arc::new);
    cache.approvals = Some(ApprovalsRead {
        path: file.to_path_buf(),
        stamp,
        approvals: approvals.clone(),
    });
    approvals
}
