//! `skillserve list`, `show`, `check` and start-up errors, through the real binary.

use crate::common::Fixture;
use serde_json::{Value, json};

const ONLY_CUSTOM: &[&str] = &["--skills-dir", "custom", "--no-user", "--no-project"];

fn args<'a>(command: &[&'a str], rest: &[&'a str]) -> Vec<&'a str> {
    command.iter().chain(rest).copied().collect()
}

#[test]
fn list_prints_name_source_folder_and_description() {
    let fixture = Fixture::new();
    let out = fixture.run(&args(&["list"], ONLY_CUSTOM));
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "\
canvas-design  custom   <T>/custom/canvas-design
    Create visual art in .png and .pdf documents using design philosophy.
code-fences    custom   <T>/custom/code-fences
    A skill whose body must come back byte for byte.
crlf-skill     custom   <T>/custom/crlf-skill
    Saved on Windows with a BOM and CRLF line endings.
pdf-tools      custom   <T>/custom/pdf_tools
    Split, merge and rotate PDF pages (folder name uses an underscore).
Shared-Name    custom   <T>/custom/shared-name
    The custom copy of shared-name (beats project and user).
team:lint      custom   <T>/custom/team-lint
    A namespaced name; callable as `team:lint` or by its short name `lint`.

6 skills (custom 6)
2 errors, 3 warnings, 2 notes in 3 files; run `skillserve check` for details
"
    );
    assert_eq!(out.stderr, "");
}

#[test]
fn list_all_shows_hidden_skills_and_what_hides_them() {
    let fixture = Fixture::new();
    let out = fixture.run(&[
        "list",
        "--all",
        "--skills-dir",
        "custom",
        "--project-dir",
        "project/packages/app",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = fixture.anonymize(&out.stdout);
    assert!(
        stdout.contains(
            "\nHidden by a skill of the same name with higher precedence:\n\
         review           project  <T>/project/.claude/skills/review\n    \
         Repository-wide code review checklist (hidden by the nearer packages/app copy).\n    \
         hidden by <T>/project/packages/app/.claude/skills/review/SKILL.md\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(
            "\n15 skills (custom 6, project 3, user 6); 4 hidden\n\
             note[hidden-skills] <T>/home/.agents/skills/.hidden: 1 SKILL.md file below this hidden folder is not served: the scan skips hidden folders (to serve it, pass --skills-dir <T>/home/.agents/skills/.hidden)\n\
             3 errors, 9 warnings, 3 notes in 9 files; run `skillserve check` for details\n"
        ),
        "{stdout}"
    );

    let out = fixture.run(&[
        "list",
        "--skills-dir",
        "custom",
        "--project-dir",
        "project/packages/app",
    ]);
    assert!(
        out.stdout.contains("; 4 hidden (see --all)\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("Hidden by"));
}

#[test]
fn list_json_is_structured() {
    let fixture = Fixture::new();
    let out = fixture.run(&[
        "list",
        "--json",
        "--all",
        "--skills-dir",
        "custom",
        "--project-dir",
        "project",
        "--no-user",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let items: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(items.len(), 9, "6 custom + 2 project + 1 hidden");
    let root = fixture.root().to_str().unwrap();
    assert_eq!(
        items[0],
        json!({
            "name": "canvas-design",
            "description": "Create visual art in .png and .pdf documents using design philosophy.",
            "source": "custom",
            "dir": format!("{root}/custom/canvas-design"),
            "file": format!("{root}/custom/canvas-design/SKILL.md"),
            "root": format!("{root}/custom"),
        })
    );
    let hidden: Vec<&Value> = items
        .iter()
        .filter(|i| i.get("shadowed_by").is_some())
        .collect();
    assert_eq!(hidden.len(), 1);
    assert_eq!(hidden[0]["name"], "shared-name");
    assert_eq!(hidden[0]["source"], "project");
    assert_eq!(
        hidden[0]["shadowed_by"],
        format!("{root}/custom/shared-name/SKILL.md")
    );
}

#[test]
fn list_with_no_skills_says_where_it_looked() {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    let out = fixture.run(&["list", "--no-project"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = fixture.anonymize(&out.stdout);
    assert!(
        stdout.starts_with("No skills found. Looked in:\n  user     <T>/home/.claude/skills\n"),
        "{stdout}"
    );
    assert!(stdout.contains("  user     <T>/home/.copilot/skills\n"));
}

#[test]
fn show_prints_exactly_what_the_tool_returns() {
    let fixture = Fixture::new();
    let out = fixture.run(&args(&["show", "CRLF-SKILL"], ONLY_CUSTOM));
    assert_eq!(out.status.code(), Some(0));
    let on_disk = std::fs::read(fixture.path("custom/crlf-skill/SKILL.md")).unwrap();
    let expected = format!(
        "Loading: crlf-skill\nBase directory: {}\n\n{}",
        fixture.path("custom/crlf-skill").display(),
        std::str::from_utf8(&on_disk[3..]).unwrap()
    );
    assert_eq!(out.stdout, expected);
}

#[test]
fn show_unknown_name_exits_1_with_suggestions_on_stderr() {
    let fixture = Fixture::new();
    let out = fixture.run(&args(&["show", "canvas_desing"], ONLY_CUSTOM));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "Skill 'canvas_desing' not found. Did you mean one of these?\n- canvas-design: Create visual art in .png and .pdf documents using design philosophy.\nCall `skill` again with one of these names.\n"
    );
}

#[test]
fn check_reports_every_broken_file_and_exits_1() {
    let fixture = Fixture::new();
    let out = fixture.run(&[
        "check",
        "--skills-dir",
        "broken",
        "--no-user",
        "--no-project",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = fixture.anonymize(&out.stdout);
    assert!(stdout.contains(
        "<T>/broken/bad-yaml/SKILL.md\n  error[yaml-invalid] line 3: the frontmatter is not valid YAML: while parsing a flow sequence, expected ',' or ']'\n    fix: "
    ), "{stdout}");
    assert!(stdout.contains(
        "<T>/broken/invalid-utf8/SKILL.md\n  error[invalid-utf8] line 3: file is not valid UTF-8\n    fix: save the file as UTF-8\n"
    ), "{stdout}");
    assert!(
        stdout.contains("<T>/broken/loop/back-up\n  warning[symlink-loop]:"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("6 errors, 3 warnings, 0 notes in 9 files (2 skills served).\n"),
        "{stdout}"
    );
}

#[test]
fn check_json_has_the_same_findings() {
    let fixture = Fixture::new();
    let out = fixture.run(&[
        "check",
        "--json",
        "--skills-dir",
        "broken",
        "--no-user",
        "--no-project",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (report["errors"].as_u64(), report["warnings"].as_u64()),
        (Some(6), Some(3))
    );
    assert_eq!(report["skills"], 2);
    let first = &report["diagnostics"][0];
    assert_eq!(
        first,
        &json!({
            "path": fixture.path("broken/bad-yaml/SKILL.md"),
            "severity": "error",
            "code": "yaml-invalid",
            "line": 3,
            "message": "the frontmatter is not valid YAML: while parsing a flow sequence, expected ',' or ']'",
            "hint": "fix the YAML; quote values that contain `: `, `#` or start with a special character",
        })
    );
}

#[test]
fn check_reports_shadowing_and_is_clear_on_a_clean_tree() {
    let fixture = Fixture::new();
    let out = fixture.run(&[
        "check",
        "--skills-dir",
        "custom/code-fences",
        "--skills-dir",
        "custom/crlf-skill",
        "--skills-dir",
        "custom/canvas-design",
        "--no-user",
        "--no-project",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stdout);
    assert_eq!(out.stdout, "No problems found (3 skills served).\n");

    let out = fixture.run(&[
        "check",
        "--skills-dir",
        "custom",
        "--project-dir",
        "project",
        "--no-user",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "`Shared-Name` breaks the spec's name rules"
    );
    let stdout = fixture.anonymize(&out.stdout);
    assert!(stdout.contains(
        "<T>/project/.claude/skills/shared-name/SKILL.md\n  warning[shadowed]: skill 'shared-name' is hidden by 'Shared-Name' at <T>/custom/shared-name/SKILL.md (custom skills take precedence over project skills)\n"
    ), "{stdout}");
}

#[test]
fn help_explains_where_skills_come_from() {
    let out = Fixture::empty().run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    for needle in [
        "{\"command\": \"skillserve\"}",
        "--skills-dir",
        "SKILLSERVE_SKILLS_DIRS",
        "~/.claude/skills",
        "list",
        "show",
        "check",
        "--refresh-interval",
        "--description-budget",
    ] {
        assert!(
            out.stdout.contains(needle),
            "--help lacks {needle}:\n{}",
            out.stdout
        );
    }
    let out = Fixture::empty().run(&["--version"]);
    assert_eq!(
        out.stdout,
        format!("skillserve {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn start_up_failures_exit_non_zero_with_one_line() {
    let fixture = Fixture::new();
    let out = fixture.run(&["--skills-dir", "custom/pdf_tools/SKILL.md"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fixture.anonymize(&out.stderr),
        "skillserve: skills folder `<T>/custom/pdf_tools/SKILL.md` is not a directory\n"
    );

    let out = fixture.run(&[
        "list",
        "--skills-dir",
        "$SKILLSERVE_NOT_SET_ANYWHERE/skills",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        out.stderr,
        "skillserve: --skills-dir `$SKILLSERVE_NOT_SET_ANYWHERE/skills`: environment variable SKILLSERVE_NOT_SET_ANYWHERE is not set\n"
    );

    let out = fixture.run(&["--description-budget", "50"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        out.stderr,
        "skillserve: --description-budget must be at least 300 characters, got 50\n"
    );

    let out = fixture.run(&["--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));

    let out = fixture.run(&["list", "--skills-dir", ""]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        out.stderr,
        "skillserve: --skills-dir is empty; give a folder\n"
    );

    let out = fixture.run(&["--no-watch", "check"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        out.stderr,
        "skillserve: --no-watch only applies to the server, not to `check`\n"
    );
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let fixture = Fixture::new();
    let mut child = fixture
        .command(&["list", "--skills-dir", "custom"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn paths_expand_tilde_and_variables_from_the_environment() {
    let fixture = Fixture::new();
    let out = fixture
        .command(&[
            "list",
            "--json",
            "--no-user",
            "--no-project",
            "--skills-dir",
            "~/../custom",
        ])
        .env("EXTRA", fixture.path("broken"))
        .env("SKILLSERVE_SKILLS_DIRS", "${EXTRA}")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let items: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = items.iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"canvas-design") && names.contains(&"good"),
        "{names:?}"
    );
    // Flags come before the environment list.
    assert_eq!(items[0]["source"], "custom");
    assert_eq!(items[0]["root"], fixture.path("custom").to_str().unwrap());
}

#[test]
fn environment_variables_choose_project_and_config_dirs() {
    let fixture = Fixture::new();
    fixture.write(
        "alt-claude/skills/from-config-dir/SKILL.md",
        "---\nname: from-config-dir\ndescription: d\n---\n",
    );
    fixture.write(
        "alt-codex/skills/from-codex-home/SKILL.md",
        "---\nname: from-codex-home\ndescription: d\n---\n",
    );
    let out = fixture
        .command(&["list", "--json"])
        .env("CLAUDE_PROJECT_DIR", fixture.path("project/packages/app"))
        .env("CLAUDE_CONFIG_DIR", fixture.path("alt-claude"))
        .env("CODEX_HOME", fixture.path("alt-codex"))
        .output()
        .unwrap();
    let items: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = items.iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"app-deploy"),
        "CLAUDE_PROJECT_DIR used: {names:?}"
    );
    assert!(
        names.contains(&"from-config-dir") && names.contains(&"from-codex-home"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"tone-guide"),
        "~/.claude replaced by CLAUDE_CONFIG_DIR: {names:?}"
    );
    assert!(names.contains(&"bun"), "~/.agents still read: {names:?}");
}

#[test]
fn no_home_means_no_user_skills_and_one_warning() {
    let fixture = Fixture::new();
    let out = fixture
        .command(&["list", "--json", "--skills-dir", "custom"])
        .env_remove("HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.matches("HOME is not set").count(), 1, "{stderr}");
    let items: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(items.iter().all(|i| i["source"] == "custom"));
}

/// A relative `HOME` is no home folder, and the warning says why; the
/// server's start-up log says which variable gave the home folder.
#[test]
fn the_home_folder_and_where_it_came_from_are_said() {
    let fixture = Fixture::new();
    let out = fixture
        .command(&["list", "--json", "--skills-dir", "custom"])
        .env("HOME", "relative/home")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // On Windows USERPROFILE would be next; the fixture's environment has none.
    let why = if cfg!(windows) {
        "HOME is `relative/home`, not an absolute Windows path and USERPROFILE is not set"
    } else {
        "HOME is `relative/home`, not an absolute path"
    };
    assert!(
        stderr.ends_with(&format!(
            " WARN skillserve: {why}, so skills in your home folders (~/.claude/skills, ...) are not served\n"
        )),
        "{stderr}"
    );

    let out = fixture
        .command(&["serve", "--no-watch"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let said = format!(
        " INFO skillserve::server: home folder: {} (from HOME)\n",
        fixture.home().display()
    );
    assert!(stderr.contains(&said), "{stderr}");
}

/// `list` names a skills folder that does not exist, and counts problems the
/// way `check` does.
#[test]
fn list_names_missing_folders_and_agrees_with_check() {
    let fixture = Fixture::new();
    let only = [
        "--skills-dir",
        "custom",
        "--skills-dir",
        "typo",
        "--no-user",
        "--no-project",
    ];
    let list = fixture.run(&args(&["list"], &only));
    assert_eq!(list.status.code(), Some(0));
    let stdout = fixture.anonymize(&list.stdout);
    assert!(
        stdout.ends_with(
            "6 skills (custom 6)\n\
             warning[root-missing] <T>/typo: this skills path does not exist (yet) (check the path given to --skills-dir or SKILLSERVE_SKILLS_DIRS)\n\
             2 errors, 4 warnings, 2 notes in 4 files; run `skillserve check` for details\n"
        ),
        "{stdout}"
    );
    let check = fixture.run(&args(&["check"], &only));
    assert!(
        check
            .stdout
            .ends_with("2 errors, 4 warnings, 2 notes in 4 files (6 skills served).\n"),
        "{}",
        check.stdout
    );
}
