//! The Agent Skills rules (agentskills.io), for `skillserve check`.
//!
//! The server is lenient: it serves whatever it can. `check` is strict: on top of
//! what the scan found, it holds every skill to the specification that other
//! clients (and `skills-ref validate`) enforce, and reads each file in full to
//! catch what the start-up scan does not read (a bad byte deep in the body).

use serde_json::{Map, Value};

use crate::diagnostic::{Code, Diagnostic, Finding};
use crate::parse::NameFrom;
use crate::scan::folder_name;
use crate::skill::Skill;
use crate::snapshot::Snapshot;
use crate::spec::{
    CLAUDE_CODE_KEYS, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS,
    RECOMMENDED_MAX_LINES, SPEC_KEYS,
};
use crate::uri;

/// Findings about every skill in `snapshot`, served, shadowed or withheld.
pub fn lint(snapshot: &Snapshot, max_file_bytes: u64) -> Vec<Diagnostic> {
    let withheld = snapshot.withheld().iter().map(|w| &w.skill);
    let mut out = Vec::new();
    for skill in snapshot.candidates().iter().chain(withheld) {
        let file = skill.file();
        out.extend(
            lint_skill(skill, max_file_bytes)
                .into_iter()
                .map(|f| f.at(&file)),
        );
    }
    for skill in snapshot.skills() {
        if let Some(finding) = skills_list(skill) {
            out.push(finding.at(skill.file()));
        }
    }
    out
}

/// A served skill the MCP skills extension's `skills/list` leaves out, since
/// its frontmatter lacks a `name` or `description` of its own or its name
/// breaks the extension's rule (the server asks the same question).
fn skills_list(skill: &Skill) -> Option<Finding> {
    let uri::Unlistable { why, fix } = uri::unlistable(skill)?;
    Some(Finding::note(
        Code::NotInSkillsList,
        format!(
            "'{}' is left out of `skills/list` (the MCP skills extension): {why}; the `skill` tool, prompts and resources still serve it",
            skill.name
        ),
        fix,
    ))
}

/// Every rule, applied to one skill.
fn lint_skill(skill: &Skill, max_file_bytes: u64) -> Vec<Finding> {
    let mut out = Vec::new();
    name(skill, &mut out);
    description(skill, &mut out);
    let fields = skill.parsed.fields();
    compatibility(fields, &mut out);
    metadata(fields, &mut out);
    text_fields(fields, &mut out);
    unknown_fields(fields, &mut out);
    whole_file(skill, max_file_bytes, &mut out);
    out
}

/// The name rules, or a note that the frontmatter has no name.
fn name(skill: &Skill, out: &mut Vec<Finding>) {
    let parsed = &skill.parsed;
    match parsed.name_from {
        NameFrom::Frontmatter | NameFrom::Coerced => {
            // A single-skill plugin's folder is its version folder (`1.0.0`):
            // there is no folder name to match. An installed skill's is its
            // digest: its folder in its source counts.
            let own_folder = match (skill.plugin(), skill.origin()) {
                (_, Some(origin)) => Some(origin.folder.clone()),
                (Some(plugin), _) if plugin.install_path == *skill.dir => None,
                _ => Some(folder_name(&skill.dir)),
            };
            let namespaced = skill.plugin().is_some();
            out.extend(name_rules(&parsed.name, own_folder.as_deref(), namespaced));
        }
        NameFrom::Folder => out.push(Finding::warning(
            Code::NameMissing,
            format!(
                "no `name` (the spec requires one); '{}' is used",
                parsed.name
            ),
            format!("add `name: {}`", parsed.name),
        )),
        // An unusable name has its `name-fallback` warning.
        NameFrom::Replaced => {}
    }
}

fn description(skill: &Skill, out: &mut Vec<Finding>) {
    let chars = skill.parsed.description_chars();
    if chars == 0 {
        out.push(Finding::error(
            Code::DescriptionEmpty,
            "`description` is missing, empty or not text; the spec requires 1 to 1024 characters",
            "say what the skill does and when to use it",
        ));
    }
    if chars > MAX_DESCRIPTION_CHARS {
        out.push(Finding::error(
            Code::DescriptionTooLong,
            format!("`description` has {chars} characters; the spec allows at most {MAX_DESCRIPTION_CHARS}"),
            "keep it to what the skill does and when to use it; move detail into the body",
        ));
    }
}

fn compatibility(fields: &Map<String, Value>, out: &mut Vec<Finding>) {
    match fields.get("compatibility") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) if text.chars().count() <= MAX_COMPATIBILITY_CHARS => {}
        Some(Value::String(text)) => out.push(Finding::error(
            Code::CompatibilityTooLong,
            format!(
                "`compatibility` has {} characters; the spec allows at most {MAX_COMPATIBILITY_CHARS}",
                text.chars().count()
            ),
            "shorten it to the environment requirements",
        )),
        Some(_) => out.push(Finding::error(
            Code::CompatibilityInvalid,
            "`compatibility` must be a string",
            "write it as one line of text, e.g. `compatibility: Requires Python 3.11`",
        )),
    }
}

fn metadata(fields: &Map<String, Value>, out: &mut Vec<Finding>) {
    match fields.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) if map.values().all(Value::is_string) => {}
        Some(_) => out.push(Finding::error(
            Code::MetadataInvalid,
            "`metadata` must map keys to strings",
            "quote every value, e.g. `metadata:` then `  version: \"1.0\"`",
        )),
    }
}

fn text_fields(fields: &Map<String, Value>, out: &mut Vec<Finding>) {
    for key in ["license", "allowed-tools"] {
        if let Some(value) = fields.get(key)
            && !value.is_string()
            && !value.is_null()
        {
            out.push(Finding::warning(
                Code::FieldNotText,
                format!("`{key}` should be a string"),
                format!("write `{key}` as one line of text"),
            ));
        }
    }
}

fn unknown_fields(fields: &Map<String, Value>, out: &mut Vec<Finding>) {
    for key in fields.keys() {
        if SPEC_KEYS.contains(&key.as_str()) {
            continue;
        }
        let hint = if CLAUDE_CODE_KEYS.contains(&key.as_str()) {
            "Claude Code reads it; strict validators such as skills-ref reject it"
        } else {
            "clients ignore it; strict validators such as skills-ref reject it; `metadata` is the place for extra data"
        };
        out.push(Finding::note(
            Code::UnknownField,
            format!("`{key}` is not a field of the Agent Skills spec"),
            hint,
        ));
    }
}

/// The scan read only the frontmatter; read everything once.
fn whole_file(skill: &Skill, max_file_bytes: u64, out: &mut Vec<Finding>) {
    match crate::contents::read_text(skill.place(), max_file_bytes) {
        Ok(text) => {
            let lines = text.lines().count();
            if lines > RECOMMENDED_MAX_LINES {
                out.push(Finding::note(
                    Code::LongFile,
                    format!("SKILL.md has {lines} lines; the spec recommends under {RECOMMENDED_MAX_LINES}"),
                    "move details into references/ files the skill points to",
                ));
            }
        }
        Err(err) => out.push(err.finding()),
    }
}

/// The specification's rules for `name`, given the skill folder's name (or
/// `None` when the skill has no folder of its own, as in a single-skill plugin).
///
/// In a plugin, a namespaced name (`team:lint`, the Claude Code convention,
/// behaviour.md §2) is held to the rules part by part, and its short name to the
/// folder. Elsewhere `:` is just a character the spec does not allow.
fn name_rules(name: &str, folder: Option<&str>, namespaced: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let fix = "use 1-64 lowercase letters, digits and single hyphens, e.g. `pdf-tools`";
    let parts: Vec<&str> = if namespaced {
        name.split(':').collect()
    } else {
        vec![name]
    };
    for part in parts {
        let chars = part.chars().count();
        if chars == 0 || chars > MAX_NAME_CHARS {
            out.push(Finding::error(
                Code::NameLength,
                format!("`name` has {chars} characters; the spec allows 1 to {MAX_NAME_CHARS}"),
                fix,
            ));
        }
        if let Some(bad) = part
            .chars()
            .find(|&c| !(c == '-' || c.is_alphanumeric()) || c.is_uppercase())
        {
            out.push(Finding::error(
                Code::NameInvalid,
                format!("`name` contains {bad:?}; the spec allows only lowercase letters, digits and hyphens"),
                fix,
            ));
        }
        if part.starts_with('-') || part.ends_with('-') || part.contains("--") {
            out.push(Finding::error(
                Code::NameInvalid,
                "`name` starts or ends with a hyphen, or has two in a row",
                fix,
            ));
        }
    }
    let short = if namespaced {
        name.rsplit(':').next().unwrap_or(name)
    } else {
        name
    };
    if let Some(folder) = folder
        && short != folder
    {
        out.push(Finding::warning(
            Code::NameFolderMismatch,
            format!("`name` is {name:?} but the folder is {folder:?}; the spec wants them equal"),
            "rename the folder or the skill so that they match",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(findings: &[Finding]) -> Vec<Code> {
        findings.iter().map(|f| f.code).collect()
    }

    #[test]
    fn valid_names_pass() {
        assert!(name_rules("pdf-tools", Some("pdf-tools"), false).is_empty());
        assert!(name_rules("résumé-助手", Some("résumé-助手"), false).is_empty());
        assert!(name_rules("a1", Some("a1"), false).is_empty());
        assert!(name_rules("solo", None, false).is_empty());
    }

    #[test]
    fn invalid_names_are_errors() {
        assert_eq!(
            codes(&name_rules("PDF", Some("PDF"), false)),
            [Code::NameInvalid]
        );
        assert_eq!(
            codes(&name_rules("a/b", Some("a/b"), false)),
            [Code::NameInvalid]
        );
        assert_eq!(
            codes(&name_rules("..", Some(".."), false)),
            [Code::NameInvalid]
        );
        assert_eq!(
            codes(&name_rules("-a", Some("-a"), false)),
            [Code::NameInvalid]
        );
        assert_eq!(
            codes(&name_rules("a--b", Some("a--b"), false)),
            [Code::NameInvalid]
        );
        let long = "a".repeat(65);
        assert_eq!(
            codes(&name_rules(&long, Some(&long), false)),
            [Code::NameLength]
        );
    }

    #[test]
    fn folder_mismatch_is_a_warning() {
        assert_eq!(
            codes(&name_rules("pdf", Some("pdf_tools"), false)),
            [Code::NameFolderMismatch]
        );
    }

    #[test]
    fn namespaced_names_are_checked_part_by_part_in_plugins_only() {
        assert!(name_rules("fmt:format", Some("format"), true).is_empty());
        assert_eq!(
            codes(&name_rules("Team:lint", Some("lint"), true)),
            [Code::NameInvalid]
        );
        assert_eq!(
            codes(&name_rules(":lint", Some("lint"), true)),
            [Code::NameLength]
        );
        assert_eq!(
            codes(&name_rules("team:lint", Some("team-lint"), true)),
            [Code::NameFolderMismatch]
        );
        // Outside a plugin, `:` is not allowed.
        assert_eq!(
            codes(&name_rules("team:lint", Some("team:lint"), false)),
            [Code::NameInvalid]
        );
    }
}
