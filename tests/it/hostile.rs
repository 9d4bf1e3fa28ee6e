//! Hostile skill trees: every kind of bad input, through the real binary. The
//! server must start, serve every good skill, name each problem, never hang and
//! never write anything but JSON-RPC to stdout.
//!
//! `fixtures/hostile` holds the cases that fit in git; [`hostile`] adds the rest
//! (a FIFO, a file over the size cap, a 100 KB description, a bad byte deep in
//! a body, 20,000 empty folders, an unreadable folder, a root that is a file).
//! The 20,000 folders are built once and shared ([`many_folders`]).

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::time::Instant;

use crate::common::{Fixture, is_error, text};
use serde_json::{Value, json};

const ARGS: &[&str] = &[
    "--skills-dir",
    "hostile",
    "--skills-dir",
    "many-folders",
    "--no-project",
    "--no-plugins",
];

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn hostile() -> Fixture {
    let fixture = Fixture::new().with_home("hostile-home");
    let write = |relative: &str, bytes: &[u8]| {
        let path = fixture.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    // Over the 1 MiB cap.
    let mut big = b"---\nname: too-large\ndescription: d\n---\n".to_vec();
    big.resize(1024 * 1024 + 1, b'x');
    write("hostile/too-large/SKILL.md", &big);
    // A 100 KB description.
    let huge = format!(
        "---\nname: huge-description\ndescription: {}\n---\n",
        "word ".repeat(20_000)
    );
    write("hostile/huge-description/SKILL.md", huge.as_bytes());
    // Valid frontmatter, a bad byte 20 KB into the body.
    let mut body =
        b"---\nname: invalid-utf8-body\ndescription: The body has a bad byte.\n---\n".to_vec();
    for _ in 0..400 {
        body.extend_from_slice(b"A line of fifty characters, more or less, padding.\n");
    }
    body.extend_from_slice(b"Latin-1: caf\xe9\n");
    write("hostile/invalid-utf8-body/SKILL.md", &body);
    // A FIFO named SKILL.md.
    std::fs::create_dir_all(fixture.path("hostile/fifo")).unwrap();
    let fifo =
        std::ffi::CString::new(fixture.path("hostile/fifo/SKILL.md").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo only reads the NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    // A folder nobody may list, with a skill inside.
    write(
        "hostile/locked/inside/SKILL.md",
        b"---\nname: inside-locked\ndescription: d\n---\n",
    );
    std::fs::set_permissions(
        fixture.path("hostile/locked"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    // 20,000 folders without skills, in a root of their own.
    let many = many_folders();
    if running_as_root() && !others_may_read(&many) {
        // `nobody` could not reach the shared tree: build a private one.
        write_many_folders(&fixture.path("many-folders"));
    } else {
        std::os::unix::fs::symlink(many, fixture.path("many-folders")).unwrap();
    }
    // A home whose ~/.agents/skills is a file, and a healthy ~/.claude/skills.
    write("hostile-home/.agents/skills", b"not a folder");
    write(
        "hostile-home/.claude/skills/home-good/SKILL.md",
        b"---\nname: home-good\ndescription: Still served.\n---\n",
    );
    // Let an unprivileged child (see `as_unprivileged`) read the tree.
    std::fs::set_permissions(fixture.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    fixture
}

/// 20,001 empty folders, the first holding the one skill, so that the walk
/// stops at its bound of 20,000 folders after finding it. Built once into
/// `target/tmp` and shared: read only, by every test here and every run.
fn many_folders() -> std::path::PathBuf {
    crate::common::shared_tree("hostile-many-folders-v1", write_many_folders)
}

fn write_many_folders(root: &std::path::Path) {
    for i in 0..20_001 {
        std::fs::create_dir_all(root.join(format!("{i:05}"))).unwrap();
    }
    std::fs::write(
        root.join("00000/SKILL.md"),
        b"---\nname: first-of-many\ndescription: Found before the bound.\n---\n",
    )
    .unwrap();
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Whether any user may list the folder `path` (made readable by all when
/// built) and pass through every folder above it.
fn others_may_read(path: &std::path::Path) -> bool {
    let mode = |folder| std::fs::metadata(folder).map_or(0, |m| m.permissions().mode());
    mode(path) & 0o005 == 0o005 && path.ancestors().all(|folder| mode(folder) & 0o001 != 0)
}

/// The binary with `args`, run as `nobody` when the tests run as root (root
/// reads anything, so the locked folder would not be locked). `nobody` may not
/// reach the build directory, so it runs a copy kept in the fixture.
fn unprivileged(fixture: &Fixture, args: &[&str]) -> std::process::Command {
    if !running_as_root() {
        return fixture.command(args);
    }
    let copy = fixture.path("bin/skillserve");
    if !copy.exists() {
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(crate::common::BIN, &copy).unwrap();
        std::fs::set_permissions(
            copy.parent().unwrap(),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut command = fixture.command_of(&copy, args);
    std::os::unix::process::CommandExt::uid(&mut command, 65534);
    command
}

fn served_names(fixture: &Fixture) -> BTreeSet<String> {
    let mut args = vec!["list", "--json"];
    args.extend_from_slice(ARGS);
    let out = unprivileged(fixture, &args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let items: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    items
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_good_or_recoverable_skill_is_served_and_nothing_else() {
    let fixture = hostile();
    let expected: BTreeSet<String> = [
        "good-1",
        "good-2",
        "bom-crlf",
        "colon",
        "42",
        "name-list",
        "name-map",
        "description-number",
        "description-list",
        "description-map",
        "description-empty",
        "a/b",
        "a\\b",
        "..",
        "this-name-is-much-longer-than-the-sixty-four-characters-the-spec-allows",
        "résumé-助手",
        "Case-Dup",
        "huge-description",
        "invalid-utf8-body",
        "first-of-many",
        "home-good",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(served_names(&fixture), expected);
}

#[test]
fn check_names_every_problem_with_its_file() {
    let fixture = hostile();
    let mut args = vec!["check", "--json"];
    args.extend_from_slice(ARGS);
    let out = unprivileged(&fixture, &args).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: BTreeSet<(String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let path = fixture.anonymize(d["path"].as_str().unwrap());
            assert!(!d["message"].as_str().unwrap().is_empty());
            assert!(
                !d["hint"].as_str().unwrap().is_empty(),
                "every finding says what to do: {d}"
            );
            (path, d["code"].as_str().unwrap().to_owned())
        })
        .collect();
    let expect = [
        ("hostile/invalid-utf8/SKILL.md", "invalid-utf8"),
        ("hostile/invalid-utf8-body/SKILL.md", "invalid-utf8"),
        ("hostile/unterminated/SKILL.md", "frontmatter-unterminated"),
        ("hostile/yaml-error/SKILL.md", "yaml-invalid"),
        ("hostile/colon/SKILL.md", "yaml-recovered"),
        ("hostile/no-frontmatter/SKILL.md", "frontmatter-missing"),
        ("hostile/description-empty/SKILL.md", "description-empty"),
        ("hostile/description-list/SKILL.md", "description-empty"),
        ("hostile/name-list/SKILL.md", "name-fallback"),
        ("hostile/name-map/SKILL.md", "name-fallback"),
        ("hostile/name-control/SKILL.md", "name-control"),
        ("hostile/description-list/SKILL.md", "description-not-text"),
        ("hostile/description-map/SKILL.md", "description-not-text"),
        ("hostile/description-empty/SKILL.md", "description-missing"),
        ("hostile/name-slash/SKILL.md", "name-invalid"),
        ("hostile/name-backslash/SKILL.md", "name-invalid"),
        ("hostile/name-dotdot/SKILL.md", "name-invalid"),
        ("hostile/name-too-long/SKILL.md", "name-length"),
        ("hostile/name-number/SKILL.md", "name-folder-mismatch"),
        ("hostile/huge-description/SKILL.md", "description-too-long"),
        ("hostile/empty/SKILL.md", "empty-file"),
        ("hostile/too-large/SKILL.md", "file-too-large"),
        ("hostile/skill-md-dir/SKILL.md", "not-a-file"),
        ("hostile/fifo/SKILL.md", "not-a-file"),
        ("hostile/dangling-skill-md/SKILL.md", "dangling-symlink"),
        ("hostile/loop/again", "symlink-loop"),
        ("hostile/loop/self", "symlink-loop"),
        ("hostile/deep/a/b/c", "depth-limit"),
        ("hostile/case-dup-b/SKILL.md", "shadowed"),
        ("hostile/locked", "dir-unreadable"),
        ("many-folders", "walk-limit"),
        ("hostile-home/.agents/skills", "root-not-a-directory"),
    ];
    for (path, code) in expect {
        let key = (format!("<T>/{path}"), code.to_owned());
        assert!(
            found.contains(&key),
            "no {code} for {path}; found:\n{found:#?}"
        );
    }
    // Healthy and merely unusual skills raise nothing.
    for clean in ["good-1", "good-2", "bom-crlf", "résumé-助手"] {
        let path = format!("<T>/hostile/{clean}/SKILL.md");
        assert!(
            !found.iter().any(|(p, _)| *p == path),
            "{clean} is clean: {found:#?}"
        );
    }
}

#[tokio::test]
async fn the_server_serves_the_good_ones_within_budget() {
    let fixture = hostile();
    let started = Instant::now();
    let server = fixture.serve(ARGS).await;
    let description = server.description().await;
    eprintln!(
        "spawn to tools/list over the hostile tree: {:?}",
        started.elapsed()
    );
    assert!(
        description.chars().count() <= 8000,
        "{}",
        description.chars().count()
    );
    for name in [
        "good-1",
        "42",
        "a/b",
        "..",
        "résumé-助手",
        "huge-description",
        "home-good",
    ] {
        assert!(
            description.contains(&format!("\n- {name}")),
            "{name} is listed"
        );
    }
    assert!(description.contains("- huge-description: word word"));
    assert!(
        description.contains("…"),
        "the 100 KB description was shortened"
    );

    // Names that look like paths are plain keys.
    for (name, folder) in [
        ("42", "name-number"),
        ("a/b", "name-slash"),
        ("..", "name-dotdot"),
    ] {
        let result = server.call(name).await;
        assert!(
            text(&result).starts_with(&format!(
                "Loading: {name}\nBase directory: {}\n",
                fixture.path(&format!("hostile/{folder}")).display()
            )),
            "{name}: {}",
            text(&result)
        );
    }
    // A skill folder whose SKILL.md cannot be loaded says so, with the
    // file, the line and the reason, rather than "not found".
    for (name, location, reason) in [
        (
            "name-control",
            "hostile/name-control/SKILL.md:2",
            "`name` contains a line break or control character, so the skill is skipped",
        ),
        (
            "yaml-error",
            "hostile/yaml-error/SKILL.md:3",
            "the frontmatter is not valid YAML",
        ),
        (
            "no-frontmatter",
            "hostile/no-frontmatter/SKILL.md:1",
            "no YAML frontmatter, so this is not a skill",
        ),
    ] {
        let result = server.call(name).await;
        assert!(is_error(&result));
        let expected = format!(
            "Skill '{name}' could not be loaded: {}: {reason}",
            fixture.path(location).display()
        );
        assert!(text(&result).starts_with(&expected), "{}", text(&result));
    }
    // A bad byte deep in the body surfaces at call time, with its line.
    let result = server.call("invalid-utf8-body").await;
    assert!(is_error(&result));
    assert_eq!(
        text(&result),
        "Skill 'invalid-utf8-body' could not be read: not valid UTF-8 (line 405). The file must be fixed before the skill can be used (`skillserve check` shows how); do not retry, pick another skill or tell the user."
    );
    let (status, stderr) = server.stop().await;
    assert!(status.success(), "{stderr}");
    for code in [
        "walk-limit",
        "root-not-a-directory",
        "not-a-file",
        "symlink-loop",
        "invalid-utf8",
    ] {
        assert!(
            stderr.contains(&format!("[{code}]")),
            "{code} logged:\n{stderr}"
        );
    }
}

#[test]
fn stdout_is_only_json_rpc_over_the_hostile_tree_with_trace_logging() {
    let fixture = hostile();
    let mut command = fixture.command(ARGS);
    command.env("SKILLSERVE_LOG", "trace");
    let names = [
        "good-1",
        "42",
        "a/b",
        "..",
        "../../etc/passwd",
        "invalid-utf8-body",
        "fifo",
        "too-large",
        "locked",
        "\u{1b}[31m",
        "nope",
    ];
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for (i, name) in names.iter().enumerate() {
        lines.push(
            json!({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
            "params": {"name": "skill", "arguments": {"name": name}}}),
        );
    }
    let lines: Vec<String> = lines.iter().map(Value::to_string).collect();
    let (responses, status) = crate::common::raw_exchange(command, &lines, 2 + names.len());
    for (i, name) in names.iter().enumerate() {
        let result = &responses[&(10 + i as i64)]["result"];
        assert!(result["content"][0]["text"].is_string(), "{name}: {result}");
    }
    assert_eq!(status.code(), Some(0));
}

const LINK_FIX: &str = "run `git config core.symlinks true` in the repository, then `git checkout -- .` to check the links out again; on Windows, turn on Developer Mode first so that git may make links";

/// `check` and `list` of the skills folder `root` (relative to the
/// fixture), with no other root.
fn check_and_list(fixture: &Fixture, root: &str) -> (String, String) {
    let args = [
        "--skills-dir",
        root,
        "--no-user",
        "--no-project",
        "--no-plugins",
    ];
    let check = fixture.run(&[&["check"][..], &args].concat());
    assert_eq!(check.status.code(), Some(1), "{}", check.stderr);
    let list = fixture.run(&[&["list"][..], &args].concat());
    assert_eq!(list.status.code(), Some(0), "{}", list.stderr);
    (
        fixture.anonymize(&check.stdout),
        fixture.anonymize(&list.stdout),
    )
}

#[test]
fn symbolic_links_git_wrote_as_text_are_named_in_check_and_list_with_the_fix() {
    let fixture = Fixture::new();
    let (check, list) = check_and_list(&fixture, "links-as-text/skills");
    assert_eq!(
        check,
        format!(
            "<T>/links-as-text/skills/docx/SKILL.md\n  error[symlink-as-text] line 1: SKILL.md holds only `../../shared/docx/SKILL.md`: a symbolic link that git checked out as a text file (`core.symlinks` is false, as on Windows by default), so this skill is not served\n    fix: {LINK_FIX}\n\n\
             <T>/links-as-text/skills/pdf\n  warning[symlink-as-text]: this 13-byte file holds `../shared/pdf`, a skill folder: a symbolic link that git checked out as a text file (`core.symlinks` is false, as on Windows by default), so no skill is served from here\n    fix: {LINK_FIX}\n\n\
             1 error, 1 warning, 0 notes in 2 files (1 skill served).\n"
        )
    );
    assert_eq!(
        list,
        format!(
            "xlsx  custom   <T>/links-as-text/skills/xlsx\n    Edit spreadsheets.\n\n1 skill (custom 1)\n\
             warning[symlink-as-text] <T>/links-as-text/skills/pdf: this 13-byte file holds `../shared/pdf`, a skill folder: a symbolic link that git checked out as a text file (`core.symlinks` is false, as on Windows by default), so no skill is served from here ({LINK_FIX})\n\
             error[symlink-as-text] <T>/links-as-text/skills/docx/SKILL.md:1: SKILL.md holds only `../../shared/docx/SKILL.md`: a symbolic link that git checked out as a text file (`core.symlinks` is false, as on Windows by default), so this skill is not served ({LINK_FIX})\n\
             1 error, 1 warning, 0 notes in 2 files; run `skillserve check` for details\n"
        )
    );
}

#[test]
fn a_clone_made_with_core_symlinks_false_has_its_links_named_not_lost() {
    use std::os::unix::fs::symlink;
    let fixture = Fixture::empty();
    let repo = fixture.path("repo");
    fixture.write(
        "repo/shared/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms.\n---\n",
    );
    fixture.write(
        "repo/shared/docx/SKILL.md",
        "---\nname: docx\ndescription: Edit Word documents.\n---\n",
    );
    std::fs::create_dir_all(fixture.path("repo/skills/docx")).unwrap();
    symlink("../shared/pdf", fixture.path("repo/skills/pdf")).unwrap();
    symlink(
        "../../shared/docx/SKILL.md",
        fixture.path("repo/skills/docx/SKILL.md"),
    )
    .unwrap();
    let git = |args: &[&str]| crate::sources::git(&fixture, fixture.root(), args);
    crate::sources::git(&fixture, &repo, &["init", "--quiet"]);
    crate::sources::git(&fixture, &repo, &["add", "--all"]);
    crate::sources::git(&fixture, &repo, &["commit", "--quiet", "-m", "links"]);
    // As on Windows without the right to make links.
    git(&[
        "clone",
        "--quiet",
        "-c",
        "core.symlinks=false",
        "repo",
        "windows",
    ]);
    assert!(fixture.path("windows/skills/pdf").is_file());
    let (check, list) = check_and_list(&fixture, "windows/skills");
    for out in [&check, &list] {
        assert!(
            out.contains("<T>/windows/skills/pdf") && out.contains("holds `../shared/pdf`"),
            "{out}"
        );
        assert!(
            out.contains("holds only `../../shared/docx/SKILL.md`"),
            "{out}"
        );
        assert!(out.contains(LINK_FIX), "{out}");
    }
    // The same repository cloned with links: both skills, nothing to say.
    git(&["clone", "--quiet", "repo", "unix"]);
    let out = fixture.run(&[
        "list",
        "--skills-dir",
        "unix/skills",
        "--no-user",
        "--no-project",
        "--no-plugins",
    ]);
    let out = fixture.anonymize(&out.stdout);
    assert!(out.contains("2 skills (custom 2)\n"), "{out}");
    assert!(!out.contains("symlink-as-text"), "{out}");
}
