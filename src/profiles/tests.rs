//! Views on real scans of temporary trees: filters free names, native
//! folders keep them, and every lookup of a view agrees with its list.

#![allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::config::{Env, Flags, file, settings};
use crate::snapshot;
use crate::snapshot::Cache;

fn write(dir: &Path, name: &str, description: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    let text = format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n");
    std::fs::write(dir.join(name).join("SKILL.md"), text).unwrap();
}

/// A home with `~/.claude/skills` and `~/.agents/skills`, a custom folder,
/// and settings from `toml`.
struct Setup {
    _dir: tempfile::TempDir,
    home: std::path::PathBuf,
    custom: std::path::PathBuf,
    profiles: Profiles,
    snapshot: Arc<Snapshot>,
}

impl Setup {
    fn new(toml: &str, build: impl FnOnce(&Path, &Path)) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let custom = dir.path().join("custom");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&custom).unwrap();
        build(&home, &custom);
        let env = Env {
            home: crate::config::Home::at(home.clone()),
            cwd: dir.path().to_path_buf(),
            ..Env::default()
        };
        let parsed = file::parse(toml, &dir.path().join("config.toml"), &env).unwrap();
        let flags = Flags {
            skills_dirs: vec![custom.to_string_lossy().into_owned()],
            no_project: true,
            ..Flags::default()
        };
        let settings = settings::resolve(&flags, &env, None, Some(&parsed)).unwrap();
        let snapshot = Arc::new(snapshot::load(
            &settings.config,
            &mut Cache::default(),
            None,
        ));
        Setup {
            _dir: dir,
            home,
            custom,
            profiles: Profiles::new(&settings),
            snapshot,
        }
    }

    fn view(&self, client: Option<&str>) -> View {
        self.profiles
            .view(&self.snapshot, self.profiles.key(client))
    }
}

/// `name (its root below the temporary folder)` of every shown skill.
fn shown(view: &View) -> Vec<String> {
    view.skills()
        .map(|s| {
            let root = s.root.path.to_string_lossy();
            let below = root
                .split_once("/home/")
                .map_or("custom", |(_, below)| below);
            format!("{} ({below})", s.name)
        })
        .collect()
}

#[test]
fn a_filtered_skill_frees_its_name_for_the_one_it_shadowed() {
    let setup = Setup::new("disabled = [\"pdf\"]\n", |home, custom| {
        write(custom, "pdf", "custom pdf");
        write(&home.join(".claude/skills"), "pdf", "user pdf");
        write(&home.join(".claude/skills"), "docx", "user docx");
    });
    let view = setup.view(None);
    // The custom `pdf` is disabled by name, and so is the user one: a
    // disabled name is disabled wherever it comes from.
    assert_eq!(shown(&view), ["docx (.claude/skills)"]);
    assert!(setup.custom.is_dir());

    let setup = Setup::new("exclude = [\"source:custom\"]\n", |home, custom| {
        write(custom, "pdf", "custom pdf");
        write(&home.join(".agents/skills"), "PDF", "user pdf");
    });
    let view = setup.view(None);
    assert_eq!(shown(&view), ["PDF (.agents/skills)"]);
    let pdf = view.by_name("pdf").unwrap();
    assert_eq!(pdf.description(), "user pdf");
    assert!(
        view.description().contains("- PDF: user pdf"),
        "{}",
        view.description()
    );
    // The search finds the shown skill, never the one left out.
    let found: Vec<String> = view
        .search("pfd", 5)
        .iter()
        .map(|s| s.description().into_owned())
        .collect();
    assert_eq!(found, ["user pdf"]);
    let decision = setup.profiles.decide(&setup.snapshot, Key::default());
    let reasons: Vec<Option<String>> = decision
        .verdicts
        .iter()
        .map(|v| v.reason(&setup.snapshot))
        .collect();
    assert_eq!(
        reasons,
        [
            Some("excluded by \"source:custom\" (config.toml:1)".to_owned()),
            None
        ]
    );
}

#[test]
fn a_skill_the_client_loads_itself_keeps_its_name_taken() {
    let setup = Setup::new("", |home, custom| {
        write(custom, "pdf", "custom pdf");
        write(&home.join(".claude/skills"), "pdf", "claude's own pdf");
        write(&home.join(".claude/skills"), "docx", "claude's docx");
        write(&home.join(".agents/skills"), "bun", "agents bun");
    });
    let claude = setup.view(Some("claude-code"));
    // Claude Code loads ~/.claude/skills: its `docx` is not sent, and
    // neither is the custom `pdf`, whose name its own `pdf` holds.
    assert_eq!(shown(&claude), ["bun (.agents/skills)"]);
    assert!(claude.by_name("pdf").is_none());
    assert!(claude.search("pdf", 5).is_empty());
    let decision = setup
        .profiles
        .decide(&setup.snapshot, setup.profiles.key(Some("claude-code")));
    let mut reasons: Vec<String> = decision
        .verdicts
        .iter()
        .filter_map(|v| v.reason(&setup.snapshot))
        .collect();
    reasons.sort();
    let own_pdf = setup.home.join(".claude/skills/pdf/SKILL.md");
    assert_eq!(
        reasons,
        [
            format!(
                "Claude Code loads a skill of the same name itself ({})",
                own_pdf.display()
            ),
            "Claude Code loads it itself".to_owned(),
            "Claude Code loads it itself".to_owned(),
        ]
    );

    // Claude Desktop loads nothing itself; an unknown client gets everything.
    for client in [Some("claude-ai"), Some("my-agent"), None] {
        assert_eq!(
            shown(&setup.view(client)),
            [
                "pdf (custom)",
                "bun (.agents/skills)",
                "docx (.claude/skills)"
            ],
            "{client:?}"
        );
    }
}

#[test]
fn profiles_match_by_name_or_table_id_first_match_wins_and_can_turn_native_off() {
    let toml = "[clients.codex]\nexclude = [\"bun\"]\nnative = false\n\n[clients.\"*\"]\ndisabled = [\"docx\"]\ndescription_budget = 400\nprompts = false\n";
    let setup = Setup::new(toml, |home, _| {
        write(&home.join(".agents/skills"), "bun", "agents bun");
        write(&home.join(".agents/skills"), "deno", "agents deno");
        write(&home.join(".claude/skills"), "docx", "claude docx");
    });
    let codex = setup.profiles.key(Some("codex-mcp-client"));
    assert_eq!(setup.profiles.native(codex), None);
    assert_eq!(
        setup.profiles.describe(codex),
        "profile [clients.codex] (config.toml:1)"
    );
    let names = |view: &View| {
        view.skills()
            .map(|s| s.name.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&setup.profiles.view(&setup.snapshot, codex)),
        ["deno", "docx"]
    );
    let cursor = setup.profiles.key(Some("cursor-vscode"));
    assert_eq!(setup.profiles.native(cursor).unwrap().id, "cursor");
    // Cursor loads ~/.claude/skills; `*` disables docx anyway.
    assert_eq!(
        names(&setup.profiles.view(&setup.snapshot, cursor)),
        ["bun", "deno"]
    );
    let surfaces = setup.profiles.surfaces(cursor);
    assert_eq!(
        (
            surfaces.description_budget,
            surfaces.prompts,
            surfaces.resources
        ),
        (400, false, true)
    );
    assert!(
        setup
            .profiles
            .view(&setup.snapshot, cursor)
            .description()
            .chars()
            .count()
            <= 400
    );
    assert_eq!(setup.profiles.any_surfaces(), (true, true));
    assert_ne!(setup.profiles.slot(codex), setup.profiles.slot(cursor));
    assert!(setup.profiles.slot(cursor) < setup.profiles.slots());
}

#[test]
fn a_replacing_skill_answers_to_its_own_names_only() {
    let setup = Setup::new("exclude = [\"dir:custom\"]\n", |home, custom| {
        write(custom, "team:lint", "custom lint");
        std::fs::create_dir_all(home.join(".agents/skills/linter")).unwrap();
        std::fs::write(
            home.join(".agents/skills/linter/SKILL.md"),
            "---\nname: team:lint\ndescription: user lint\n---\n",
        )
        .unwrap();
    });
    let view = setup.view(None);
    assert_eq!(
        view.by_name("team:lint").unwrap().description(),
        "user lint"
    );
    assert_eq!(view.by_short_name("lint").len(), 1);
    assert_eq!(view.by_short_name("linter").len(), 1);
    // The custom skill's folder name belongs to the hidden skill.
    assert!(view.by_short_name("team:lint").is_empty());
    let none = setup.view(Some("other"));
    assert_eq!(none.len(), 1);
}

#[test]
fn a_reused_view_is_the_view_computed_again() {
    let setup = Setup::new("exclude = [\"b*\"]\n", |home, _| {
        write(&home.join(".agents/skills"), "bun", "agents bun");
        write(&home.join(".agents/skills"), "deno", "agents deno");
    });
    let key = setup.profiles.key(Some("cursor-vscode"));
    let first = setup.profiles.view(&setup.snapshot, key);
    let again = setup
        .profiles
        .view_after(Some(&first), &setup.snapshot, key);
    assert!(again.shares(&first));
    assert!(again.same_listing(&first));
    assert_eq!(again.description(), first.description());
    assert_eq!(first.visible(), again.visible());
}

#[test]
fn a_view_id_knows_its_view_without_keeping_it_alive() {
    let setup = Setup::new("", |home, _| {
        write(&home.join(".claude/skills"), "pdf", "user pdf");
    });
    let view = setup.view(None);
    let id = view.id();
    assert!(id.is(&view.clone()));
    // Another snapshot of the same skills is another view.
    let other = Setup::new("", |home, _| {
        write(&home.join(".claude/skills"), "pdf", "user pdf");
    });
    assert!(!id.is(&other.view(None)));
    // The id holds no snapshot: dropping the views and the setup frees it.
    let snapshot = Arc::downgrade(&setup.snapshot);
    drop((view, setup));
    assert!(snapshot.upgrade().is_none());
    drop(id);
}
