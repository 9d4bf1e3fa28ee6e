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
    let Some(file) = approvals_file(config, err)? else {
        return Ok(ExitCode::Failure);
    };
    let key = name.trim().to_lowercase();
    let Some(withheld) = snapshot.withheld_named(&key) else {
        return not_quarantined(snapshot, name, err);
    };
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
    let digest = match security.files().skill_digest(skill.place()) {
        Ok(Some(digest)) => digest,
        Ok(None) => {
            writeln!(
                err,
                "skillserve: '{}' cannot be approved: it has more files than a listing covers (512 files, 16 MiB), so its digest would not cover every file. Copy what you need into your own skills folder instead.",
                skill.name
            )?;
            return Ok(ExitCode::Failure);
        }
        Err(error) => {
            writeln!(
                err,
                "skillserve: cannot read the files of '{}' to approve them: {error}",
                skill.name
            )?;
            return Ok(ExitCode::Failure);
        }
    };
    writeln!(
        out,
        "Approving serves this version ({digest}) until any of its files changes."
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
    let approval = Approval {
        name: skill.name.to_string(),
        path: skill.dir.to_path_buf(),
        digest: digest.clone(),
        approved: utc_time(std::time::SystemTime::now()),
        findings: report.errors().map(FileFinding::short).collect(),
    };
    if let Err(error) = approvals::approve(&file, &approval) {
        writeln!(err, "skillserve: {error}")?;
        return Ok(ExitCode::Failure);
    }
    writeln!(
        out,
        "Approved '{}' as it is now; recorded in {}. A running skillserve serves it from now on.",
        skill.name,
        file.display()
    )?;
    Ok(ExitCode::Success)
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

/// The answer for a name that is not quarantined.
fn not_quarantined(snapshot: &Snapshot, name: &str, err: &mut dyn Write) -> io::Result<ExitCode> {
    if let Some(skill) = snapshot.by_name(&name.trim().to_lowercase()) {
        writeln!(
            err,
            "skillserve: '{}' is not quarantined: it is served from {}; there is nothing to approve.",
            skill.name,
            printable_path(&skill.dir)
        )?;
        return Ok(ExitCode::Success);
    }
    let quarantined: Vec<&str> = snapshot.withheld().iter().map(|w| &*w.skill.name).collect();
    let now = if quarantined.is_empty() {
        "No skill is quarantined now.".to_owned()
    } else {
        format!("Quarantined now: {}.", quarantined.join(", "))
    };
    writeln!(
        err,
        "skillserve: no quarantined skill is named '{}'. {now}",
        printable(name)
    )?;
    Ok(ExitCode::Failure)
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
    let Some(file) = approvals_file(config, err)? else {
        return Ok(ExitCode::Failure);
    };
    match approvals::revoke(&file, name.trim()) {
        Ok(removed) if removed.is_empty() => {
            writeln!(
                err,
                "skillserve: no approval is recorded for '{}' (in {}).",
                printable(name),
                file.display()
            )?;
            Ok(ExitCode::Failure)
        }
        Ok(removed) => {
            writeln!(
                out,
                "Withdrew {} approval{} of '{}'. A running skillserve quarantines it again if its scan finds errors.",
                removed.len(),
                plural(removed.len()),
                removed[0].name
            )?;
            Ok(ExitCode::Success)
        }
        Err(error) => {
            writeln!(err, "skillserve: {error}")?;
            Ok(ExitCode::Failure)
        }
    }
}
