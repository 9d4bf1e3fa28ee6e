//! Claude Code plugins: which installed plugins are enabled for the project,
//! and where their skills are (behaviour.md §3.4).
//!
//! The result is a list of plugin [`Root`]s that the scan walks like any other
//! root. Every file here is written by Claude Code and read leniently: a
//! malformed manifest, settings file or entry is a diagnostic, and everything
//! else keeps working.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::config::{Config, absolute};
use crate::diagnostic::{Code, Diagnostic, Finding};
use crate::disk::{self, ReadError};
use crate::roots::{self, Layout, Plugin, Root, Source, canonical};

/// Plugin roots and what went wrong finding them.
#[derive(Debug, Default)]
pub struct Plugins {
    /// One or more roots per enabled plugin, plugins sorted by key.
    pub roots: Vec<Root>,
    pub diagnostics: Vec<Diagnostic>,
}

/// `installed_plugins.json`, relative to the Claude config dir.
const MANIFEST: &str = "plugins/installed_plugins.json";

/// The files whose contents decide which plugin skills are served: the install
/// manifest and the settings layers, lowest precedence first. Watched by the
/// refresher.
pub fn config_files(config: &Config) -> Vec<PathBuf> {
    let Some(dir) = config.claude_config_dir.as_ref().filter(|_| config.plugins) else {
        return Vec::new();
    };
    let mut files = vec![dir.join(MANIFEST), dir.join("settings.json")];
    if let Some(project) = &config.project_dir {
        files.push(project.join(".claude/settings.json"));
        files.push(project.join(".claude/settings.local.json"));
    }
    files
}

/// The skill roots of every installed plugin that is enabled for the project.
pub fn discover(config: &Config) -> Plugins {
    let mut out = Plugins::default();
    let files = config_files(config);
    let Some((manifest, settings)) = files.split_first() else {
        return out;
    };
    let installs = read_manifest(
        manifest,
        config.project_dir.as_deref(),
        &mut out.diagnostics,
    );
    // Read even when nothing is installed, so that `check` reports broken settings.
    let enabled = read_enabled(settings, &mut out.diagnostics);

    for (key, install) in installs {
        if let Some((false, file)) = enabled.get(&key) {
            out.diagnostics.push(
                Finding::note(
                    Code::PluginDisabled,
                    format!("plugin {key} is disabled here, so its skills are not served"),
                    format!("set \"enabledPlugins\": {{\"{key}\": true}} to serve them"),
                )
                .at(file),
            );
            continue;
        }
        if !install.install_path.is_dir() {
            out.diagnostics.push(
                Finding::warning(
                    Code::PluginMissing,
                    format!("plugin {key} is installed here, but this folder does not exist"),
                    "reinstall the plugin from Claude Code (/plugin), or uninstall it",
                )
                .at(&install.install_path),
            );
            continue;
        }
        let name = key.split('@').next().unwrap_or(&key).to_owned();
        let plugin = Arc::new(Plugin {
            key,
            name,
            version: install.version,
            install_path: install.install_path,
        });
        plugin_roots(&plugin, &mut out.roots, &mut out.diagnostics);
    }
    out
}

/// An install record, after scope filtering.
#[derive(Debug)]
struct Install {
    install_path: PathBuf,
    version: Option<String>,
}

/// Scopes, most specific first: when several entries of one plugin apply, the
/// first in this list wins.
const SCOPES: [&str; 4] = ["local", "project", "user", "managed"];

/// Reads `installed_plugins.json` (v1 or v2) and keeps, per plugin key, the
/// entry that applies to `project`.
fn read_manifest(
    path: &Path,
    project: Option<&Path>,
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<String, Install> {
    let mut installs = BTreeMap::new();
    let Some(json) = read_json(path, diagnostics) else {
        return installs;
    };
    let Some(plugins) = json.get("plugins").and_then(Value::as_object) else {
        diagnostics.push(
            Finding::error(
                Code::ManifestInvalid,
                "no \"plugins\" object; no plugin skills are served",
                "reinstall a plugin from Claude Code to rewrite this file",
            )
            .at(path),
        );
        return installs;
    };
    let base = path.parent().unwrap_or(path);
    let project = project.map(canonical);
    for (key, value) in plugins {
        // v2 holds a list of entries per key; v1 (no "version", or 1) one object.
        let entries: Vec<&Value> = match value {
            Value::Array(entries) => entries.iter().collect(),
            Value::Object(_) => vec![value],
            _ => {
                diagnostics.push(entry_problem(path, key, "is neither an object nor a list"));
                continue;
            }
        };
        let here = Entries {
            manifest: path,
            key,
            base,
            project: project.as_deref(),
        };
        if let Some(install) = here.pick(&entries, diagnostics) {
            installs.insert(key.clone(), install);
        }
    }
    installs
}

/// The entries of one plugin key in a manifest, and what picking one needs.
struct Entries<'a> {
    manifest: &'a Path,
    key: &'a str,
    /// Relative install paths are relative to the manifest's folder.
    base: &'a Path,
    /// The project being served, canonical.
    project: Option<&'a Path>,
}

impl Entries<'_> {
    /// The entry of the most specific scope that applies to the project;
    /// entries that cannot apply are skipped, malformed ones with a warning.
    fn pick(&self, entries: &[&Value], diagnostics: &mut Vec<Diagnostic>) -> Option<Install> {
        let mut best: Option<(usize, Install)> = None;
        for entry in entries {
            let scope = entry.get("scope").and_then(Value::as_str).unwrap_or("user");
            let Some(rank) = SCOPES.iter().position(|s| *s == scope) else {
                diagnostics.push(entry_problem(
                    self.manifest,
                    self.key,
                    &format!("has an unknown scope \"{scope}\""),
                ));
                continue;
            };
            if matches!(scope, "project" | "local") {
                let here = entry
                    .get("projectPath")
                    .and_then(Value::as_str)
                    .map(|p| canonical(Path::new(p)));
                if here.is_none() || here.as_deref() != self.project {
                    continue;
                }
            }
            let Some(install_path) = entry.get("installPath").and_then(Value::as_str) else {
                diagnostics.push(entry_problem(
                    self.manifest,
                    self.key,
                    "has no \"installPath\"",
                ));
                continue;
            };
            let install = Install {
                install_path: absolute(Path::new(install_path), self.base),
                version: entry
                    .get("version")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            };
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, install));
            }
        }
        best.map(|(_, install)| install)
    }
}

fn entry_problem(path: &Path, key: &str, problem: &str) -> Diagnostic {
    Finding::warning(
        Code::ManifestEntryInvalid,
        format!("the entry for {key} {problem}; it is ignored"),
        "reinstall the plugin from Claude Code to rewrite its entry",
    )
    .at(path)
}

/// `enabledPlugins` merged over the settings layers (later files win), with the
/// file that decided each key.
fn read_enabled(
    files: &[PathBuf],
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<String, (bool, PathBuf)> {
    let mut enabled = BTreeMap::new();
    for file in files {
        let Some(json) = read_json(file, diagnostics) else {
            continue;
        };
        let Some(map) = json.get("enabledPlugins") else {
            continue;
        };
        let Some(map) = map.as_object() else {
            diagnostics.push(
                Finding::warning(
                    Code::SettingsInvalid,
                    "\"enabledPlugins\" is not an object; it is ignored",
                    "write it as {\"plugin@marketplace\": true, ...}",
                )
                .at(file),
            );
            continue;
        };
        for (key, value) in map {
            match value.as_bool() {
                Some(on) => {
                    enabled.insert(key.clone(), (on, file.clone()));
                }
                None => diagnostics.push(
                    Finding::warning(
                        Code::SettingsInvalid,
                        format!("enabledPlugins[\"{key}\"] is not true or false; it is ignored"),
                        "use true or false",
                    )
                    .at(file),
                ),
            }
        }
    }
    enabled
}

/// Appends the roots that hold `plugin`'s skills (behaviour.md §3.4, steps 1–3).
fn plugin_roots(plugin: &Arc<Plugin>, roots: &mut Vec<Root>, diagnostics: &mut Vec<Diagnostic>) {
    let base = &plugin.install_path;
    let root = |path: PathBuf, layout| Root {
        path,
        source: Source::Plugin,
        layout,
        plugin: Some(Arc::clone(plugin)),
        origin: None,
        probed: None,
        fence: None,
    };

    // 1. A marketplace entry with a `skills` list names exactly the skills.
    let marketplace = base.join(".claude-plugin/marketplace.json");
    if let Some(json) = read_json(&marketplace, diagnostics) {
        let entry = json
            .get("plugins")
            .and_then(Value::as_array)
            .and_then(|entries| {
                entries
                    .iter()
                    .find(|e| e.get("name").and_then(Value::as_str) == Some(&plugin.name))
            });
        if let Some(entry) = entry
            && let Some(skills) = entry.get("skills")
        {
            // `source` is relative to the marketplace root; other source kinds
            // (a git repository, say) were installed at the install path itself.
            let source = entry.get("source").and_then(Value::as_str).unwrap_or("./");
            if let Some(source) = confined(base, source, &marketplace, diagnostics) {
                for path in string_list(skills, &marketplace, diagnostics) {
                    if let Some(path) = confined(&source, &path, &marketplace, diagnostics) {
                        roots.push(root(path, Layout::SkillOrFolders));
                    }
                }
            }
            return;
        }
    }

    // 2. The default `skills/` folder plus the paths `plugin.json` adds.
    roots.push(root(base.join("skills"), Layout::Folders));
    let manifest = base.join(".claude-plugin/plugin.json");
    if let Some(json) = read_json(&manifest, diagnostics)
        && let Some(skills) = json.get("skills")
    {
        for path in string_list(skills, &manifest, diagnostics) {
            if let Some(path) = confined(base, &path, &manifest, diagnostics) {
                roots.push(root(path, Layout::SkillOrFolders));
            }
        }
    }

    // 3. A SKILL.md at the top makes a single-skill plugin.
    if roots::SKILL_FILES.iter().any(|f| base.join(f).exists()) {
        roots.push(root(base.clone(), Layout::Skill));
    }
}

/// Every skill folder a repository's Claude Code manifests declare, for
/// `skillserve add`: the `skills` lists of every plugin of
/// `.claude-plugin/marketplace.json` (relative to the entry's `source`), as
/// `anthropics/skills` lists its skills, and of `.claude-plugin/plugin.json`.
/// Paths leading outside `base` are refused with a diagnostic, as for
/// installed plugins; a listed path may be a skill or a folder of skills.
pub fn declared_skill_paths(base: &Path, diagnostics: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // A fetched repository may hold anything: only plain files are read (a
    // symlink to /dev/zero would never end).
    let plain = |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
    let marketplace = base.join(".claude-plugin/marketplace.json");
    if plain(&marketplace)
        && let Some(json) = read_json(&marketplace, diagnostics)
    {
        let entries = json.get("plugins").and_then(Value::as_array);
        for entry in entries.into_iter().flatten() {
            let Some(skills) = entry.get("skills") else {
                continue;
            };
            let source = entry.get("source").and_then(Value::as_str).unwrap_or("./");
            let Some(source) = confined(base, source, &marketplace, diagnostics) else {
                continue;
            };
            for path in string_list(skills, &marketplace, diagnostics) {
                out.extend(confined(&source, &path, &marketplace, diagnostics));
            }
        }
    }
    let manifest = base.join(".claude-plugin/plugin.json");
    if plain(&manifest)
        && let Some(json) = read_json(&manifest, diagnostics)
        && let Some(skills) = json.get("skills")
    {
        for path in string_list(skills, &manifest, diagnostics) {
            out.extend(confined(base, &path, &manifest, diagnostics));
        }
    }
    out
}

/// A `skills` field: one string or a list of strings.
fn string_list(value: &Value, file: &Path, diagnostics: &mut Vec<Diagnostic>) -> Vec<String> {
    let items: Vec<&Value> = match value {
        Value::String(_) => vec![value],
        Value::Array(items) => items.iter().collect(),
        _ => {
            diagnostics.push(
                Finding::warning(
                    Code::ManifestInvalid,
                    "\"skills\" is neither a path nor a list of paths; it is ignored",
                    "list skill folders as strings, e.g. [\"./skills/pdf\"]",
                )
                .at(file),
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for item in items {
        match item.as_str() {
            Some(s) => out.push(s.to_owned()),
            None => diagnostics.push(
                Finding::warning(
                    Code::ManifestInvalid,
                    format!("\"skills\" entry {item} is not a path string; it is ignored"),
                    "list skill folders as strings, e.g. \"./skills/pdf\"",
                )
                .at(file),
            ),
        }
    }
    out
}

/// `relative` joined to `base`, refused (with a diagnostic) if it is absolute or
/// leads outside `base`: a manifest only points inside its own plugin.
fn confined(
    base: &Path,
    relative: &str,
    file: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<PathBuf> {
    let joined = absolute(Path::new(relative), base);
    if Path::new(relative).is_absolute() || !joined.starts_with(base) {
        diagnostics.push(
            Finding::error(
                Code::PluginPathOutside,
                format!(
                    "skill path \"{relative}\" points outside the plugin folder; it is ignored"
                ),
                "use a path relative to the plugin, like \"./skills/pdf\"",
            )
            .at(file),
        );
        return None;
    }
    Some(joined)
}

/// A JSON file, or `None` when it does not exist or is broken (with a
/// diagnostic for the latter). Read with [`disk::read_settings`]: a project's
/// `.claude/settings.json` comes from whatever repository the client opened,
/// and a FIFO or a huge file there must not hang or bloat the server.
fn read_json(path: &Path, diagnostics: &mut Vec<Diagnostic>) -> Option<Value> {
    let text = match disk::read_settings(path) {
        Ok(text) => text,
        Err(err) if err.is_gone() => return None,
        Err(err) => {
            let (message, fix) = match &err {
                ReadError::NotRegular => (
                    "not a regular file (a FIFO or device, say), so it is not read".to_owned(),
                    "replace it with a regular JSON file",
                ),
                ReadError::TooLarge { len, max } => (
                    format!(
                        "the file is {len} bytes, over the {max}-byte limit of a settings file; it is not read"
                    ),
                    "replace it with a settings file of a sensible size",
                ),
                ReadError::InvalidUtf8 { .. } => (
                    "not valid UTF-8; the file is ignored".to_owned(),
                    "save the file as UTF-8",
                ),
                other => (
                    format!("cannot read: {other}"),
                    "check the file's permissions",
                ),
            };
            diagnostics.push(Finding::error(Code::JsonUnreadable, message, fix).at(path));
            return None;
        }
    };
    match serde_json::from_str(&text) {
        Ok(json) => Some(json),
        Err(err) => {
            diagnostics.push(
                Finding::error(
                    Code::JsonInvalid,
                    format!("not valid JSON ({err}); the file is ignored"),
                    "fix the JSON, or let Claude Code rewrite the file",
                )
                .on_line(err.line())
                .at(path),
            );
            None
        }
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

    #[test]
    fn the_most_specific_applicable_scope_wins() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("proj");
        std::fs::create_dir(&project).unwrap();
        let manifest = dir.path().join("installed_plugins.json");
        // Absolute on every platform (`/user-copy` is not, on Windows).
        let (user_copy, local_copy) = (dir.path().join("user-copy"), dir.path().join("local-copy"));
        let json = json!({
            "version": 2,
            "plugins": {
                "p@m": [
                    { "scope": "user", "installPath": user_copy },
                    { "scope": "local", "projectPath": project, "installPath": local_copy },
                    { "scope": "project", "projectPath": "/elsewhere", "installPath": "/other-project" },
                ],
                "bad@m": [ { "scope": "weird", "installPath": "/x" }, { "scope": "user" } ],
            }
        });
        std::fs::write(&manifest, json.to_string()).unwrap();
        let mut diagnostics = Vec::new();
        let installs = read_manifest(&manifest, Some(&project), &mut diagnostics);
        assert_eq!(installs["p@m"].install_path, local_copy);
        assert!(!installs.contains_key("bad@m"));
        assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");

        let installs = read_manifest(&manifest, None, &mut Vec::new());
        assert_eq!(installs["p@m"].install_path, user_copy);
    }

    #[test]
    fn confined_refuses_escapes() {
        let mut diagnostics = Vec::new();
        let base = Path::new("/plugins/p/1.0");
        let file = Path::new("/plugins/p/1.0/.claude-plugin/plugin.json");
        assert_eq!(
            confined(base, "./skills/x", file, &mut diagnostics),
            Some(PathBuf::from("/plugins/p/1.0/skills/x"))
        );
        assert_eq!(confined(base, "../../q", file, &mut diagnostics), None);
        assert_eq!(confined(base, "/etc", file, &mut diagnostics), None);
        assert_eq!(diagnostics.len(), 2);
    }
}
