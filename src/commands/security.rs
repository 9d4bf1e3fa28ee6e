//! `check --security`: the security scan of every skill of a snapshot, as
//! diagnostics, a summary line and the `security` section of `--json`
//! (behaviour.md §18.4).

use std::sync::Arc;

use serde_json::json;

use super::FindingItem;
use crate::diagnostic::Diagnostic;
use crate::gate::Place;
use crate::render;
use crate::security::{self, Cache, FileFinding, Names, Report};
use crate::skill::Skill;
use crate::snapshot::Snapshot;
use crate::text::plural;

/// The security scan of every skill of a snapshot: served, shadowed and
/// withheld, whatever its source.
pub(super) struct SecurityScan<'a> {
    skills: Vec<Scanned<'a>>,
}

/// One skill's report, and what it means for the skill.
struct Scanned<'a> {
    skill: &'a Skill,
    report: Arc<Report>,
    status: &'static str,
}

impl<'a> SecurityScan<'a> {
    pub(super) fn of(snapshot: &'a Snapshot, cache: &mut Cache) -> SecurityScan<'a> {
        let skills: Vec<(&Skill, bool)> = snapshot
            .candidates()
            .iter()
            .map(|s| (s, false))
            .chain(snapshot.withheld().iter().map(|w| (&w.skill, true)))
            .collect();
        let places: Vec<Place> = skills.iter().map(|(s, _)| s.place()).collect();
        let reports = cache.reports(&places);
        let names = Names::new(skills.iter().map(|(s, _)| &*s.parsed.name));
        let skills = skills
            .into_iter()
            .zip(reports)
            .map(|((skill, withheld), mut report)| {
                let across: Vec<FileFinding> =
                    security::across(&skill.description(), &skill.parsed.name, &names)
                        .into_iter()
                        .map(|finding| FileFinding {
                            file: skill.file_name.as_str().to_owned(),
                            finding,
                        })
                        .collect();
                if !across.is_empty() {
                    report = Arc::new(report.with(&across));
                }
                let status = if withheld {
                    "quarantined"
                } else if skill.source.is_own() {
                    "own"
                } else if report.has_errors() {
                    "approved"
                } else {
                    "scanned"
                };
                Scanned {
                    skill,
                    report,
                    status,
                }
            })
            .collect();
        SecurityScan { skills }
    }

    /// Every finding, at its file.
    pub(super) fn diagnostics(&self) -> impl Iterator<Item = Diagnostic> + '_ {
        self.skills.iter().flat_map(|scanned| {
            scanned
                .report
                .findings
                .iter()
                .map(|f| f.at(&scanned.skill.dir))
        })
    }

    fn count(&self, status: &str) -> usize {
        self.skills.iter().filter(|s| s.status == status).count()
    }

    /// `Security scan: 4 skills, 9 files, 12.1 KB scanned; 1 quarantined, 1 approved.`
    pub(super) fn summary(&self) -> String {
        let files: usize = self.skills.iter().map(|s| s.report.files_scanned).sum();
        let bytes: u64 = self.skills.iter().map(|s| s.report.bytes_scanned).sum();
        let skills = self.skills.len();
        let mut text = format!(
            "Security scan: {skills} skill{}, {files} file{}, {} scanned",
            plural(skills),
            plural(files),
            render::human_size(bytes)
        );
        let held: Vec<String> = [
            ("quarantined", self.count("quarantined")),
            ("approved", self.count("approved")),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
        if !held.is_empty() {
            text.push_str("; ");
            text.push_str(&held.join(", "));
        }
        text.push('.');
        text
    }

    /// The `security` section of `check --json --security`.
    pub(super) fn json(&self) -> serde_json::Value {
        let mut findings = Vec::new();
        for scanned in &self.skills {
            for found in &scanned.report.findings {
                let mut item = serde_json::to_value(FindingItem::new(found)).unwrap_or_default();
                item["skill"] = json!(scanned.skill.name);
                item["source"] = json!(scanned.skill.source);
                item["status"] = json!(scanned.status);
                item["path"] = json!(scanned.skill.dir.join(&found.file).to_string_lossy());
                findings.push(item);
            }
        }
        let named = |status: &str| -> Vec<&str> {
            self.skills
                .iter()
                .filter(|s| s.status == status)
                .map(|s| &*s.skill.name)
                .collect()
        };
        json!({
            "skills_scanned": self.skills.len(),
            "files_scanned": self.skills.iter().map(|s| s.report.files_scanned).sum::<usize>(),
            "bytes_scanned": self.skills.iter().map(|s| s.report.bytes_scanned).sum::<u64>(),
            "quarantined": named("quarantined"),
            "approved": named("approved"),
            "findings": findings,
        })
    }
}
