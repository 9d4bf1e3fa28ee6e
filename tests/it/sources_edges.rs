//! Sources at their edges (behaviour.md, "Sources"), through the real
//! binary: commands run at the same moment.

use std::path::Path;
use std::process::Stdio;

use crate::common::Fixture;
use crate::sources::{expect, git, lock_text, skill_md, sources_env};

/// The flags that leave only installed skills in `list` and `check`.
const BARE: [&str; 3] = ["--no-project", "--no-user", "--no-plugins"];

/// A git repository at `name` in the fixture holding `files` (path, text),
/// committed; its `file://` URL.
fn repository(fixture: &Fixture, name: &str, files: &[(String, String)]) -> String {
    let repo = fixture.path(name);
    std::fs::create_dir_all(&repo).unwrap();
    git(
        fixture,
        &repo,
        &["init", "--quiet", "--initial-branch", "main"],
    );
    for (path, text) in files {
        fixture.write(&format!("{name}/{path}"), text);
    }
    commit_all(fixture, &repo);
    format!("file://{}", repo.display())
}

fn commit_all(fixture: &Fixture, repo: &Path) {
    git(fixture, repo, &["add", "--all"]);
    git(fixture, repo, &["commit", "--quiet", "--message", "change"]);
}

/// The names `list --json` serves.
fn served(fixture: &Fixture) -> Vec<String> {
    let out = expect(fixture, &[&["list", "--json"][..], &BARE].concat(), 0);
    let listed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let mut names: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn adds_run_at_the_same_moment_all_install_and_every_skill_is_served() {
    const SOURCES: usize = 6;
    const SKILLS: usize = 5;
    let fixture = Fixture::empty();
    let mut expected = Vec::new();
    let urls: Vec<String> = (0..SOURCES)
        .map(|i| {
            let files: Vec<(String, String)> = (0..SKILLS)
                .map(|j| {
                    let name = format!("s{i}-{j}");
                    let text = skill_md(&name, "A skill of a team.", "# Body");
                    expected.push(name.clone());
                    (format!("skills/{name}/SKILL.md"), text)
                })
                .collect();
            repository(&fixture, &format!("team{i}"), &files)
        })
        .collect();
    let children: Vec<_> = urls
        .iter()
        .map(|url| {
            let mut command = fixture.command(&["add", url, "--yes"]);
            sources_env(&fixture, &mut command);
            command
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "add team{i}\nstdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("Installed {SKILLS} skills from {}@", urls[i])),
            "{stdout}"
        );
    }
    let lock = lock_text(&fixture).unwrap();
    for i in 0..SOURCES {
        assert!(lock.contains(&format!("[sources.team{i}]")), "{lock}");
    }
    expected.sort();
    assert_eq!(served(&fixture), expected);
    let out = expect(&fixture, &[&["check"][..], &BARE].concat(), 0);
    assert!(!out.stdout.contains("store-"), "{}", out.stdout);
}
