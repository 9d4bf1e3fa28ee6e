//! Claude Code plugin skills, through the real binary (behaviour.md §3.4).
//!
//! `fixtures/plugin-home` is a home whose `~/.claude/plugins` mirrors a real
//! install: a marketplace repository cached once per plugin with `skills` lists,
//! a plain plugin with `skills/` and `plugin.json`, a disabled plugin, project-
//! and local-scoped entries, an orphaned version, a single-skill plugin and an
//! install path that is gone.

use crate::common::{Fixture, is_error, text};
use serde_json::{Value, json};

fn fixture() -> Fixture {
    Fixture::new().with_home("plugin-home")
}

const PROJECT: &[&str] = &["--project-dir", "project"];

const PLUGIN_LINES: &str = "\
- dev-tools:lint: Lint the repository with the team rules.
- dev-tools:release: Cut a release: changelog, tag, publish.
- document-skills:docx: Create, edit and analyze Word documents.
- document-skills:pdf: Comprehensive PDF manipulation toolkit
- example-skills:canvas-design: Create beautiful visual art in .png and .pdf documents.
- example-skills:skill-creator: Guide for creating effective skills.
- fmt:format: A frontmatter name that already holds a colon is kept as it is.
- local-plugin:local-skill: Installed with local scope for this project.
- other:pdf: Another plugin's pdf skill, making the short name pdf ambiguous.
- solo:solo-skill: A single-skill plugin: SKILL.md at the install path.";

#[tokio::test]
async fn description_lists_exactly_the_enabled_plugin_skills_last() {
    let fixture = fixture();
    let server = fixture.serve(PROJECT).await;
    assert_eq!(
        server.description().await,
        format!(
            "Load a skill by name to get specialized instructions.\n\nAvailable skills:\n\
             - release-notes: Write release notes from merged pull requests.\n\
             - review: Repository-wide code review checklist (hidden by the nearer packages/app copy).\n\
             - shared-name: The project copy of shared-name (beats the user copy).\n\
             - skill-creator: The user's own skill-creator: its exact name beats the plugin's short name.\n\
             {PLUGIN_LINES}"
        )
    );
    server.stop().await;
}

#[tokio::test]
async fn full_short_and_ambiguous_names() {
    let fixture = fixture();
    let server = fixture.serve(PROJECT).await;
    let cache = fixture.path("plugin-home/.claude/plugins/cache");

    let pdf = server.call("document-skills:pdf").await;
    let dir = cache.join("anthropic-agent-skills/document-skills/1.0.0/document-skills/pdf");
    let on_disk = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    assert_eq!(
        text(&pdf),
        format!(
            "Loading: document-skills:pdf\nBase directory: {}\n\n{on_disk}",
            dir.display()
        )
    );

    // A unique short name finds the plugin skill.
    let canvas = server.call("canvas-design").await;
    assert!(
        text(&canvas).starts_with("Loading: example-skills:canvas-design\n"),
        "{}",
        text(&canvas)
    );
    assert!(text(&server.call("FORMAT").await).starts_with("Loading: fmt:format\n"));
    assert!(text(&server.call("solo-skill").await).starts_with("Loading: solo:solo-skill\n"));

    // An ambiguous short name lists every candidate.
    let ambiguous = server.call("pdf").await;
    assert!(is_error(&ambiguous));
    assert_eq!(
        text(&ambiguous),
        "Skill name 'pdf' is ambiguous: 2 skills match it.\n- document-skills:pdf\n- other:pdf\nCall `skill` again with one of these full names."
    );

    // The user's skill with the exact name beats the plugin's short name.
    let user = server.call("skill-creator").await;
    assert!(
        text(&user).contains("plugin-home/.claude/skills/skill-creator\n"),
        "{}",
        text(&user)
    );
    let plugin = server.call("example-skills:skill-creator").await;
    assert!(text(&plugin).starts_with("Loading: example-skills:skill-creator\n"));

    // Never served: not in the marketplace list, shadowed by the list, orphaned,
    // disabled, installed for another project.
    for name in [
        "not-in-any-list",
        "stray",
        "old-only",
        "secret-disabled",
        "elsewhere-skill",
    ] {
        let result = server.call(name).await;
        assert!(is_error(&result), "{name} must not be served");
        assert!(text(&result).starts_with(&format!("Skill '{name}' not found.")));
    }
    server.stop().await;
}

fn names(fixture: &Fixture, args: &[&str]) -> Vec<String> {
    let mut all = vec!["list", "--json"];
    all.extend_from_slice(args);
    let out = fixture.run(&all);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let items: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    items
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn settings_layers_enable_and_disable_later_file_wins() {
    let fixture = fixture();
    let has = |names: &[String], name: &str| names.iter().any(|n| n == name);
    // project settings say false, settings.local.json says true: enabled.
    assert!(has(
        &names(&fixture, PROJECT),
        "example-skills:canvas-design"
    ));

    // local says false too: disabled.
    fixture.write(
        "project/.claude/settings.local.json",
        r#"{"enabledPlugins": {"example-skills@anthropic-agent-skills": false}}"#,
    );
    assert!(!has(
        &names(&fixture, PROJECT),
        "example-skills:canvas-design"
    ));

    // No local file: the project file's false decides.
    std::fs::remove_file(fixture.path("project/.claude/settings.local.json")).unwrap();
    assert!(!has(
        &names(&fixture, PROJECT),
        "example-skills:canvas-design"
    ));

    // The user file disables dev-tools; a local file re-enables it.
    fixture.write(
        "plugin-home/.claude/settings.json",
        r#"{"enabledPlugins": {"dev-tools@team-marketplace": false}}"#,
    );
    assert!(!has(&names(&fixture, PROJECT), "dev-tools:lint"));
    fixture.write(
        "project/.claude/settings.local.json",
        r#"{"enabledPlugins": {"dev-tools@team-marketplace": true}}"#,
    );
    let now = names(&fixture, PROJECT);
    assert!(has(&now, "dev-tools:lint"));
    // The user file no longer disables disabled-plugin: no entry means enabled.
    assert!(has(&now, "disabled-plugin:secret-disabled"));
}

#[test]
fn project_and_local_scopes_count_only_for_their_project() {
    let fixture = fixture();
    let has = |names: &[String], name: &str| names.iter().any(|n| n == name);
    assert!(has(&names(&fixture, PROJECT), "local-plugin:local-skill"));
    // Another project directory (even one inside the same repository).
    assert!(!has(
        &names(&fixture, &["--project-dir", "project/packages/app"]),
        "local-plugin:local-skill"
    ));
    assert!(!has(
        &names(&fixture, &["--no-project"]),
        "local-plugin:local-skill"
    ));
    // The project path is compared canonically: a symlink to the project counts.
    std::os::unix::fs::symlink(fixture.path("project"), fixture.path("project-link")).unwrap();
    assert!(has(
        &names(&fixture, &["--project-dir", "project-link"]),
        "local-plugin:local-skill"
    ));
}

#[test]
fn no_plugins_turns_the_source_off() {
    let fixture = fixture();
    let all = names(&fixture, &["--no-plugins", "--project-dir", "project"]);
    assert_eq!(
        all,
        ["release-notes", "review", "shared-name", "skill-creator"]
    );
}

#[test]
fn claude_config_dir_is_where_plugins_are_read() {
    let fixture = Fixture::new();
    let out = fixture
        .command(&["list", "--json", "--no-project"])
        .env("CLAUDE_CONFIG_DIR", fixture.path("plugin-home/.claude"))
        .output()
        .unwrap();
    let items: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(items.iter().any(|i| i["name"] == "document-skills:docx"));
}

#[test]
fn list_shows_plugin_key_version_and_install_path() {
    let fixture = fixture();
    let out = fixture.run(&["list", "--project-dir", "project"]);
    let stdout = fixture.anonymize(&out.stdout);
    assert!(stdout.contains(
        "document-skills:docx          plugin   <T>/plugin-home/.claude/plugins/cache/anthropic-agent-skills/document-skills/1.0.0/document-skills/docx\n    \
         Create, edit and analyze Word documents.\n    \
         plugin document-skills@anthropic-agent-skills 1.0.0, installed at <T>/plugin-home/.claude/plugins/cache/anthropic-agent-skills/document-skills/1.0.0\n"
    ), "{stdout}");
    assert!(
        stdout.contains("\n14 skills (project 3, user 1, plugin 10)\n"),
        "{stdout}"
    );

    let out = fixture.run(&["list", "--json", "--project-dir", "project"]);
    let items: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let solo = items
        .iter()
        .find(|i| i["name"] == "solo:solo-skill")
        .unwrap();
    let install = fixture.path("plugin-home/.claude/plugins/cache/team-marketplace/solo/1.0.0");
    assert_eq!(solo["source"], "plugin");
    assert_eq!(
        solo["plugin"],
        json!({ "key": "solo@team-marketplace", "version": "1.0.0", "install_path": install })
    );
}

#[test]
fn check_reports_disabled_missing_and_undeclared_paths() {
    let fixture = fixture();
    let out = fixture.run(&["check", "--project-dir", "project"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "warnings and notes only: {}",
        out.stdout
    );
    let stdout = fixture.anonymize(&out.stdout);
    let cache = "<T>/plugin-home/.claude/plugins/cache";
    for expected in [
        format!("{cache}/team-marketplace/dev-tools/2.1.0/extra/not-there\n  warning[root-missing]: this skills path does not exist (yet)\n"),
        format!("{cache}/team-marketplace/gone/9.9.9\n  warning[plugin-missing]: plugin gone@team-marketplace is installed here, but this folder does not exist\n"),
        "<T>/plugin-home/.claude/settings.json\n  note[plugin-disabled]: plugin disabled-plugin@team-marketplace is disabled here, so its skills are not served\n".to_owned(),
    ] {
        assert!(stdout.contains(&expected), "missing:\n{expected}\nin:\n{stdout}");
    }
    assert!(
        stdout.ends_with("0 errors, 2 warnings, 2 notes in 4 files (14 skills served).\n"),
        "{stdout}"
    );
}

#[test]
fn a_single_skill_plugin_without_a_name_is_named_after_the_plugin() {
    let fixture = fixture();
    fixture.write(
        "plugin-home/.claude/plugins/cache/team-marketplace/solo/1.0.0/SKILL.md",
        "---\ndescription: No name here.\n---\n",
    );
    let all = names(&fixture, PROJECT);
    assert!(all.contains(&"solo:solo".to_owned()), "{all:?}");
    let out = fixture.run(&["show", "solo", "--project-dir", "project"]);
    assert!(
        out.stdout.starts_with("Loading: solo:solo\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn v1_manifest_is_read() {
    let fixture = Fixture::new().with_home("plugin-v1");
    assert_eq!(names(&fixture, &["--no-project"]), ["legacy:legacy-skill"]);
}

#[test]
fn garbage_in_every_plugin_file_is_a_diagnostic_and_hides_nothing() {
    let fixture = Fixture::new().with_home("plugin-garbage");
    let args = ["--project-dir", "plugin-garbage/project"];
    assert_eq!(names(&fixture, &args), ["still-served"]);

    let out = fixture.run(&["check", "--json", "--project-dir", "plugin-garbage/project"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let found: Vec<(String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                fixture.anonymize(d["path"].as_str().unwrap()),
                d["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for (path, code) in [
        (
            "<T>/plugin-garbage/.claude/plugins/installed_plugins.json",
            "json-invalid",
        ),
        ("<T>/plugin-garbage/.claude/settings.json", "json-invalid"),
        (
            "<T>/plugin-garbage/project/.claude/settings.json",
            "json-invalid",
        ),
        (
            "<T>/plugin-garbage/project/.claude/settings.local.json",
            "settings-invalid",
        ),
    ] {
        assert!(
            found.contains(&(path.to_owned(), code.to_owned())),
            "no {code} for {path} in {found:?}"
        );
    }
}

#[test]
fn broken_marketplace_and_plugin_manifests_fall_back_with_a_diagnostic() {
    let fixture = fixture();
    let cache = "plugin-home/.claude/plugins/cache";
    fixture.write(
        &format!(
            "{cache}/anthropic-agent-skills/document-skills/1.0.0/.claude-plugin/marketplace.json"
        ),
        "{ \"plugins\": [ oops",
    );
    fixture.write(
        &format!("{cache}/team-marketplace/dev-tools/2.1.0/.claude-plugin/plugin.json"),
        "[[[",
    );
    let all = names(&fixture, PROJECT);
    // document-skills falls back to its skills/ folder; dev-tools keeps skills/.
    assert!(all.contains(&"document-skills:stray".to_owned()), "{all:?}");
    assert!(!all.contains(&"document-skills:pdf".to_owned()));
    assert!(all.contains(&"dev-tools:lint".to_owned()));
    assert!(
        !all.contains(&"dev-tools:release".to_owned()),
        "plugin.json is unreadable"
    );
    assert!(
        all.contains(&"example-skills:canvas-design".to_owned()),
        "other plugins unaffected"
    );

    let out = fixture.run(&["check", "--project-dir", "project"]);
    let stdout = fixture.anonymize(&out.stdout);
    assert!(stdout.contains("document-skills/1.0.0/.claude-plugin/marketplace.json\n  error[json-invalid] line 1: not valid JSON"), "{stdout}");
    assert!(stdout.contains("dev-tools/2.1.0/.claude-plugin/plugin.json\n  error[json-invalid] line 1: not valid JSON"), "{stdout}");
}

#[test]
fn manifest_paths_cannot_leave_the_plugin_folder() {
    let fixture = fixture();
    fixture.write(
        "plugin-home/.claude/plugins/cache/team-marketplace/dev-tools/2.1.0/.claude-plugin/plugin.json",
        r#"{"name": "dev-tools", "skills": ["../../../../../../../home", "/etc", "./extra/release"]}"#,
    );
    let all = names(&fixture, PROJECT);
    assert!(all.contains(&"dev-tools:release".to_owned()));
    assert!(
        !all.iter()
            .any(|n| n == "dev-tools:bun" || n == "dev-tools:pdf"),
        "{all:?}"
    );
    let out = fixture.run(&["check", "--project-dir", "project"]);
    assert_eq!(
        out.stdout.matches("error[plugin-path-outside]").count(),
        2,
        "{}",
        out.stdout
    );
}

/// A FIFO where a settings file or a plugin manifest belongs (a repository
/// can hold one as its `.claude/settings.json`): never opened for reading,
/// said once, and everything else works.
#[test]
fn a_fifo_as_settings_or_manifest_never_hangs_serve_or_check() {
    let fixture = fixture();
    let mkfifo = |relative: &str| {
        let path = fixture.path(relative);
        let _ = std::fs::remove_file(&path);
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo only reads the NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    };
    mkfifo("project/.claude/settings.json");
    mkfifo(
        "plugin-home/.claude/plugins/cache/team-marketplace/dev-tools/2.1.0/.claude-plugin/plugin.json",
    );

    let mut args = vec!["--no-watch"];
    args.extend(PROJECT);
    let mut raw = crate::common::Raw::start(fixture.command(&args));
    raw.send_json(&crate::common::call(1, "dev-tools:lint"));
    let answer = raw
        .next_message(std::time::Duration::from_secs(20))
        .expect("a call is answered");
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    assert_eq!(raw.finish().code(), Some(0));

    let out = fixture.run(&["check", "--project-dir", "project"]);
    let stdout = fixture.anonymize(&out.stdout);
    const FIFO: &str =
        "error[json-unreadable]: not a regular file (a FIFO or device, say), so it is not read";
    for file in [
        "<T>/project/.claude/settings.json",
        "dev-tools/2.1.0/.claude-plugin/plugin.json",
    ] {
        assert!(
            stdout.contains(&format!("{file}\n  {FIFO}")),
            "{file}:\n{stdout}"
        );
    }
}
