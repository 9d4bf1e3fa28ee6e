//! The `trust` and `untrust` commands (behaviour.md, "Quarantine"):
//! approving a quarantined skill as its files are now, listing the
//! approvals, withdrawing them. The approvals file itself is
//! [`crate::approvals`].
//!
//! `trust NAME` shows what it approves (every finding) and asks on a
//! terminal; without one it needs `--yes`, else it prints what it would
//! approve and exits 1, as installing a source does.

use std::io::{self, BufRead, Write};
use std::path::PathBuf;

use crate::approvals::{self, Approval, Approvals};
use crate::config::Config;
use crate::exit_codes::ExitCode;
use crate::security::{self, FileFinding};
use crate::skill::Skill;
use crate::snapshot::{self, Snapshot, Why};
use crate::text::{plural, printable, printable_path, utc_time};

/// How `trust` may ask before it approves.
pub enum Confirm<'a> {
    /// `--yes`: approve without asking.
    Yes,
    /// Ask on this terminal.
    Ask(&'a mut dyn BufRead),
    /// No terminal and no `--yes`: show what would be approved, approve
    /// nothing.
    No,
}

/// Why a skill cannot be approved, or an approval withdrawn. Each names the
/// skill and what to do.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("there is no config folder to keep approvals in (set HOME or XDG_CONFIG_HOME)")]
    NoConfigFolder,
    #[error("'{name}' is not quarantined: it is served from {dir}; there is nothing to approve.")]
    Served { name: String, dir: String },
    #[error("no quarantined skill is named '{name}'. {now}")]
    NotQuarantined { name: String, now: String },
    #[error(
        "'{0}' cannot be approved: it has more files than a listing covers (512 files, 16 MiB), so its digest would not cover every file. Copy what you need into your own skills folder instead."
    )]
    TooManyFiles(String),
    #[error("cannot read the files of '{name}' to approve them: {error}")]
    Unreadable { name: String, error: String },
    #[error(
        "'{name}' changed since it was reviewed (it was {reviewed}, it is {now}); nothing was approved: review it again"
    )]
    Changed {
        name: String,
        reviewed: String,
        now: String,
    },
    #[error("no approval is recorded for '{name}' (in {}).", file.display())]
    NoApproval { name: String, file: PathBuf },
    #[error(transparent)]
    File(#[from] approvals::TrustError),
}

/// A quarantined skill as it would be approved: its findings and the
/// digest of its files now.
pub struct Review<'a> {
    pub skill: &'a Skill,
    pub report: &'a security::Report,
    /// `sha256:` and hex, over every file ([`crate::digest::skill`]).
    pub digest: String,
}

/// What [`approve`] recorded.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Approved {
    pub name: String,
    pub digest: String,
    pub file: PathBuf,
}

/// What [`withdraw`] removed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Withdrawn {
    pub name: String,
    /// How many approvals were removed.
    pub removed: usize,
    pub file: PathBuf,
}

/// The quarantined skill `name` (its full name or its folder's name, in any
/// case) with what approving it approves; reads its files through `files`.
pub fn review<'a>(
    snapshot: &'a Snapshot,
    files: &crate::files::Files,
    name: &str,
) -> Result<Review<'a>, TrustError> {
    let key = name.trim().to_lowercase();
    let Some(withheld) = snapshot.withheld_named(&key) else {
        if let Some(skill) = snapshot.by_name(&key) {
            return Err(TrustError::Served {
                name: skill.name.to_string(),
                dir: printable_path(&skill.dir).to_string(),
            });
        }
        let quarantined: Vec<&str> = snapshot.withheld().iter().map(|w| &*w.skill.name).collect();
        let now = if quarantined.is_empty() {
            "No skill is quarantined now.".to_owned()
        } else {
            format!("Quarantined now: {}.", quarantined.join(", "))
        };
        return Err(TrustError::NotQuarantined {
            name: printable(name).to_string(),
            now,
        });
    };
    let skill = &withheld.skill;
    let Why::Quarantined(report) = &withheld.why;
    let digest = match files.skill_digest(skill.place()) {
        Ok(Some(digest)) => digest,
        Ok(None) => return Err(TrustError::TooManyFiles(skill.name.to_string())),
        Err(error) => {
            return Err(TrustError::Unreadable {
                name: skill.name.to_string(),
                error: error.to_string(),
            });
        }
    };
    Ok(Review {
        skill,
        report,
        digest,
    })
}

/// Records the approval of `review` in the approvals file of `config`: the
/// skill is served while its files hash to the reviewed digest.
pub fn approve(config: &Config, review: &Review) -> Result<Approved, TrustError> {
    let file = snapshot::approvals_file(config).ok_or(TrustError::NoConfigFolder)?;
    let skill = review.skill;
    let approval = Approval {
        name: skill.name.to_string(),
        path: skill.dir.to_path_buf(),
        digest: review.digest.clone(),
        approved: utc_time(std::time::SystemTime::now()),
        findings: review.report.errors().map(FileFinding::short).collect(),
    };
    approvals::approve(&file, &approval)?;
    Ok(Approved {
        name: approval.name,
        digest: approval.digest,
        file,
    })
}

/// Withdraws every approval recorded for `name` in the approvals file of
/// `config`.
pub fn withdraw(config: &Config, name: &str) -> Result<Withdrawn, TrustError> {
    let file = snapshot::approvals_file(config).ok_or(TrustError::NoConfigFolder)?;
    let removed = approvals::revoke(&file, name.trim())?;
    match removed.first() {
        None => Err(TrustError::NoApproval {
            name: printable(name).to_string(),
            file,
        }),
        Some(first) => Ok(Withdrawn {
            name: first.name.clone(),
            removed: removed.len(),
            file,
        }),
    }
}

/// `skillserve trust NAME`: approves the quarantined skill `name` (its full
/// name or its folder's name, in any case) as its files are now.
pub fn trust(
    snapshot: &Snapshot,
    security: &security::Cache,
    config: &Config,
    name: &str,
    confirm: Confirm,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    if snapshot::approvals_file(config).is_none() {
        writeln!(err, "skillserve: {}", TrustError::NoConfigFolder)?;
        return Ok(ExitCode::Failure);
    }
    // The findings are shown before the files are hashed, as before.
    let key = name.trim().to_lowercase();
    if let Some(withheld) = snapshot.withheld_named(&key) {
        let skill = &withheld.skill;
        let Why::Quarantined(report) = &withheld.why;
        writeln!(
            out,
            "Skill '{}' ({} folder {}) is quarantined:",
            skill.name,
            skill.source,
            printable_path(&skill.dir)
        )?;
        for found in &report.findings {
            write_finding(out, found)?;
        }
    }
    let review = match review(snapshot, security.files(), name) {
        Ok(review) => review,
        Err(error @ TrustError::Served { .. }) => {
            writeln!(err, "skillserve: {error}")?;
            return Ok(ExitCode::Success);
        }
        Err(error) => {
            writeln!(err, "skillserve: {error}")?;
            return Ok(ExitCode::Failure);
        }
    };
    let skill = review.skill;
    writeln!(
        out,
        "Approving serves this version ({}) until any of its files changes.",
        review.digest
    )?;
    let approved = match confirm {
        Confirm::Yes => true,
        Confirm::Ask(input) => {
            write!(out, "Serve '{}'? [y/N] ", skill.name)?;
            out.flush()?;
            let mut answer = String::new();
            input.read_line(&mut answer)?;
            matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
        }
        Confirm::No => {
            writeln!(
                err,
                "skillserve: not approved: without a terminal, run `skillserve trust {} --yes` to approve it",
                skill.name
            )?;
            return Ok(ExitCode::Failure);
        }
    };
    if !approved {
        writeln!(out, "Not approved; '{}' stays quarantined.", skill.name)?;
        return Ok(ExitCode::Failure);
    }
    match approve(config, &review) {
        Ok(approved) => {
            writeln!(
                out,
                "Approved '{}' as it is now; recorded in {}. A running skillserve serves it from now on.",
                approved.name,
                approved.file.display()
            )?;
            Ok(ExitCode::Success)
        }
        Err(error) => {
            writeln!(err, "skillserve: {error}")?;
            Ok(ExitCode::Failure)
        }
    }
}

/// The file approvals are kept in, or `None` after saying on `err` that
/// there is no config folder to keep them in.
fn approvals_file(config: &Config, err: &mut dyn Write) -> io::Result<Option<PathBuf>> {
    let file = snapshot::approvals_file(config);
    if file.is_none() {
        writeln!(
            err,
            "skillserve: there is no config folder to keep approvals in (set HOME or XDG_CONFIG_HOME)"
        )?;
    }
    Ok(file)
}

fn write_finding(out: &mut dyn Write, found: &FileFinding) -> io::Result<()> {
    let finding = &found.finding;
    let line = finding
        .line
        .map(|l| format!(" line {l}"))
        .unwrap_or_default();
    writeln!(
        out,
        "  {}[{}] {}{line}: {}",
        finding.severity,
        finding.code,
        found.file,
        printable(&finding.message)
    )
}

/// `skillserve trust --list`: every approval, and whether it still matches
/// the skill in its folder.
pub fn list(
    snapshot: &Snapshot,
    security: &security::Cache,
    config: &Config,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    let Some(file) = approvals_file(config, err)? else {
        return Ok(ExitCode::Failure);
    };
    let approvals = match Approvals::read(&file) {
        Ok(approvals) => approvals,
        Err(error) => {
            writeln!(err, "skillserve: {error}")?;
            return Ok(ExitCode::Failure);
        }
    };
    if approvals.is_empty() {
        writeln!(out, "No approvals (in {}).", file.display())?;
        return Ok(ExitCode::Success);
    }
    for approval in approvals.list() {
        writeln!(
            out,
            "{}  approved {}",
            approval.name,
            if approval.approved.is_empty() {
                "(no time)"
            } else {
                &approval.approved
            }
        )?;
        writeln!(
            out,
            "    {}: {}",
            printable_path(&approval.path),
            status(snapshot, security, approval)
        )?;
        if !approval.findings.is_empty() {
            writeln!(
                out,
                "    approved findings: {}",
                approval.findings.join(", ")
            )?;
        }
    }
    let n = approvals.list().len();
    writeln!(out, "\n{n} approval{} in {}", plural(n), file.display())?;
    Ok(ExitCode::Success)
}

/// Whether the skill an approval was made for still is that version.
fn status(snapshot: &Snapshot, security: &security::Cache, approval: &Approval) -> &'static str {
    let found = snapshot
        .candidates()
        .iter()
        .chain(snapshot.withheld().iter().map(|w| &w.skill))
        .find(|s: &&Skill| *s.dir == *approval.path);
    match found {
        None => "no skill there now",
        Some(skill) => match security.files().skill_digest(skill.place()) {
            Ok(Some(digest)) if digest == approval.digest => "the skill there is this version",
            _ => "the skill there changed since (it needs a new approval)",
        },
    }
}

/// `skillserve untrust NAME`: withdraws every approval recorded for `name`.
pub fn untrust(
    config: &Config,
    name: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    match withdraw(config, name) {
        Ok(withdrawn) => {
            writeln!(
                out,
                "Withdrew {} approval{} of '{}'. A running skillserve quarantines it again if its scan finds errors.",
                withdrawn.removed,
                plural(withdrawn.removed),
                withdrawn.name
            )?;
            Ok(ExitCode::Success)
        }
        Err(error) => {
            writeln!(err, "skillserve: {error}")?;
            Ok(ExitCode::Failure)
        }
    }
}
