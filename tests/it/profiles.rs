//! Who sees which skills (behaviour.md §17), through the real binary: the
//! built-in profiles of clients that load skills folders themselves, the
//! filters and profiles of `config.toml`, on every surface, over 2025-11-25
//! (`initialize`) and 2026-07-28 (`server/discover`, client info in each
//! request's `_meta`).

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetSkillRequestParams, ReadResourceRequestParams,
    Reference,
};
use rmcp::service::ServiceError;
use serde_json::json;

use crate::common::{Fixture, Server, blocks, is_error, listed, raw_exchange, text};

/// A home whose skills folders are the ones clients load themselves, a
/// project, a custom folder and a Claude Code plugin:
///
/// | skill | where |
/// |---|---|
/// | `docx`, `team-tool`, `pdf` | `team/` (custom) |
/// | `proj-claude` | `project/.claude/skills` |
/// | `proj-agents` | `project/.agents/skills` |
/// | `claude-notes`, `pdf` | `~/.claude/skills` |
/// | `agents-helper`, `pdf` | `~/.agents/skills` |
/// | `codex-helper` | `~/.codex/skills` |
/// | `cursor-helper` | `~/.cursor/skills` |
/// | `tools:fmt` | plugin `tools@team` |
fn clients_fixture() -> Fixture {
    let fixture = Fixture::empty();
    let skill = |folder: &str, name: &str| {
        fixture.write(
            &format!("{folder}/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: {name} from {folder}.\n---\nUse {name}.\n"),
        );
    };
    for name in ["docx", "team-tool", "pdf"] {
        skill("team", name);
    }
    std::fs::create_dir_all(fixture.path("project/.git")).unwrap();
    skill("project/.claude/skills", "proj-claude");
    skill("project/.agents/skills", "proj-agents");
    skill("home/.claude/skills", "claude-notes");
    skill("home/.claude/skills", "pdf");
    skill("home/.agents/skills", "agents-helper");
    skill("home/.agents/skills", "pdf");
    skill("home/.codex/skills", "codex-helper");
    skill("home/.cursor/skills", "cursor-helper");
    let plugin = fixture.path("home/.claude/plugins/cache/team/tools/1.0.0");
    fixture.write(
        "home/.claude/plugins/cache/team/tools/1.0.0/skills/fmt/SKILL.md",
        "---\nname: fmt\ndescription: fmt from the tools plugin.\n---\nFormat.\n",
    );
    fixture.write(
        "home/.claude/plugins/installed_plugins.json",
        &json!({"version": 2, "plugins": {"tools@team": [
            {"scope": "user", "installPath": plugin, "version": "1.0.0"}
        ]}})
        .to_string(),
    );
    fixture
}

const ARGS: &[&str] = &["--skills-dir", "team", "--project-dir", "project"];

/// Every skill of [`clients_fixture`], in display order.
const ALL: [&str; 10] = [
    "docx",
    "pdf",
    "team-tool",
    "proj-agents",
    "proj-claude",
    "agents-helper",
    "claude-notes",
    "codex-helper",
    "cursor-helper",
    "tools:fmt",
];

/// What each client is shown with the built-in profiles alone.
fn expected(client: &str) -> Vec<&'static str> {
    let hidden: &[&str] = match client {
        // Loads .claude/skills (project, walking up), ~/.claude/skills and
        // plugins; its own `pdf` keeps the name from the custom one.
        "claude-code" => &["proj-claude", "claude-notes", "pdf", "tools:fmt"],
        // Loads .agents/.codex (project, walking up), ~/.agents, ~/.codex;
        // the shadowed ~/.agents/skills/pdf is its own: no `pdf` for it.
        "codex-mcp-client" => &["proj-agents", "agents-helper", "codex-helper", "pdf"],
        // Loads .agents/.claude/.codex/.cursor (project), ~/.claude,
        // ~/.codex, ~/.cursor.
        "cursor-vscode" => &[
            "proj-agents",
            "proj-claude",
            "claude-notes",
            "codex-helper",
            "cursor-helper",
            "pdf",
        ],
        _ => &[],
    };
    ALL.iter()
        .copied()
        .filter(|n| !hidden.contains(n))
        .collect()
}

/// Checks every surface of `server` against `shown`: the tool description,
/// calls (a hidden skill answers "not found"), prompts, resources,
/// `skills/list`, `skills/get`, `resources/read` and completion.
async fn assert_surfaces(server: &Server, client: &str, shown: &[&str]) {
    let context = |what: &str| format!("{client}: {what}");
    // Claude Code defers tool definitions: its catalog is in the instructions.
    let catalog = if client == "claude-code" {
        server.instructions()
    } else {
        server.description().await
    };
    assert_eq!(listed(&catalog), shown, "{}", context("catalog"));
    for name in ALL {
        let result = server.call(name).await;
        if shown.contains(&name) {
            assert!(!is_error(&result), "{}: {}", context(name), text(&result));
            assert!(text(&result).starts_with(&format!("Loading: {name}\n")));
        } else {
            assert!(is_error(&result), "{}", context(name));
            assert!(
                text(&result).starts_with(&format!("Skill '{name}' not found.")),
                "{}: {}",
                context(name),
                text(&result)
            );
            // Not offered as a match of the search either.
            assert!(!crate::common::listed(text(&result)).contains(&name));
        }
    }
    let prompts = server.client.list_all_prompts().await.unwrap();
    // The skills' prompts, then the `skill` prompt.
    let (last, skills) = prompts.split_last().unwrap();
    assert_eq!(last.name, "skill", "{}", context("prompts"));
    let prompts: Vec<&str> = skills.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(prompts, shown, "{}", context("prompts"));
    let resources = server.client.list_all_resources().await.unwrap();
    let resources: Vec<&str> = resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(resources, shown, "{}", context("resources"));
    let listed = server.client.list_all_skills().await.unwrap();
    let listed: Vec<&str> = listed.iter().map(|s| s.uri.as_str()).collect();
    let uris: Vec<String> = shown
        .iter()
        .map(|n| format!("skill://{}/SKILL.md", n.replace(':', "/")))
        .collect();
    assert_eq!(listed, uris, "{}", context("skills/list"));
    let completion = server
        .client
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("skill"),
            ArgumentInfo::new("name", ""),
        ))
        .await
        .unwrap();
    assert_eq!(
        completion.completion.values,
        shown,
        "{}",
        context("completion")
    );
    for name in ALL.iter().filter(|n| !shown.contains(n)) {
        let uri = format!("skill://{}/SKILL.md", name.replace(':', "/"));
        let read = server
            .client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await;
        assert!(
            matches!(read, Err(ServiceError::McpError(_))),
            "{}: {read:?}",
            context(&uri)
        );
        let got = server
            .client
            .get_skill(GetSkillRequestParams::new(uri))
            .await;
        assert!(matches!(got, Err(ServiceError::McpError(e)) if e.code.0 == -32602));
    }
}

#[tokio::test]
async fn each_client_is_not_sent_the_skills_it_loads_itself_on_any_surface() {
    let fixture = clients_fixture();
    for v2026 in [false, true] {
        for client in [
            "claude-code",
            "codex-mcp-client",
            "cursor-vscode",
            "my-agent",
        ] {
            let server = Server::start_as(fixture.command(ARGS), client, v2026).await;
            assert_surfaces(&server, client, &expected(client)).await;
            server.stop().await;
        }
    }
}

#[tokio::test]
async fn a_filtered_skill_frees_its_name_and_profiles_narrow_and_switch_surfaces_off() {
    let fixture = clients_fixture();
    fixture.write(
        "home/.config/skillserve/config.toml",
        &format!(
            "# For every client\n\
             disabled = [\"claude-notes\"]\n\
             exclude = [\"team-*\", \"dir:{}\"]\n\
             \n\
             [clients.\"my-*\"]\n\
             include = [\"source:user\", \"docx\"]\n\
             prompts = false\n\
             \n\
             [clients.codex]\n\
             native = false\n",
            fixture.path("team/pdf").display()
        ),
    );
    // The custom `pdf` is excluded: the user one (~/.claude/skills wins
    // over ~/.agents/skills) takes its name.
    let mine = [
        "docx",
        "agents-helper",
        "codex-helper",
        "cursor-helper",
        "pdf",
    ];
    let server = Server::start_as(fixture.command(ARGS), "my-agent", false).await;
    assert_eq!(listed(&server.description().await), mine);
    let pdf = server.call("pdf").await;
    assert!(
        blocks(&pdf)[0].contains(&format!(
            "Base directory: {}",
            fixture.path("home/.claude/skills/pdf").display()
        )),
        "{}",
        text(&pdf)
    );
    let info = serde_json::to_value(server.client.peer_info().unwrap()).unwrap();
    assert!(info["capabilities"].get("prompts").is_none(), "{info}");
    assert!(info["capabilities"].get("resources").is_some(), "{info}");
    let refused = server.client.list_prompts(None).await.unwrap_err();
    let ServiceError::McpError(refused) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(refused.code.0, -32601);
    assert_eq!(
        refused.message,
        "method not found: prompts/list (prompts are off for this client in skillserve's config.toml)"
    );
    server.stop().await;

    // `codex` names Codex's row: its built-in profile is off, so it gets
    // everything the top level lets through.
    for v2026 in [false, true] {
        let server = Server::start_as(fixture.command(ARGS), "codex-mcp-client", v2026).await;
        let shown = [
            "docx",
            "proj-agents",
            "proj-claude",
            "agents-helper",
            "codex-helper",
            "cursor-helper",
            "pdf",
            "tools:fmt",
        ];
        assert_surfaces(&server, "codex", &shown).await;
        server.stop().await;
    }
}

#[test]
fn each_request_of_2026_is_answered_for_the_client_its_meta_names() {
    let fixture = clients_fixture();
    let request = |id: u64, client: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"}
        }}})
        .to_string()
    };
    let lines = [
        request(1, "claude-code"),
        request(2, "cursor-vscode"),
        request(3, "anyone"),
    ];
    let (answers, status) = raw_exchange(fixture.command(ARGS), &lines, 3);
    assert!(status.success());
    for (id, client) in [(2, "cursor-vscode"), (3, "anyone")] {
        let description = answers[&id]["result"]["tools"][0]["description"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", answers[&id]));
        assert_eq!(listed(description), expected(client), "{client}");
    }
    // Claude Code's catalog is in its instructions; its tool says so.
    assert_eq!(
        answers[&1]["result"]["tools"][0]["description"],
        skillserve::render::TOOL_POINTER
    );
}

#[test]
fn list_client_shows_what_a_client_gets_and_why_not_the_rest() {
    let fixture = clients_fixture();
    let mut args = vec!["list", "--client", "claude-code", "--all"];
    args.extend(ARGS);
    let out = fixture.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "\
Offered to claude-code: built-in profile of Claude Code (leaves out what it loads itself)
Catalog: in the server's instructions; the `skill` tool's description points there (up to 2048 characters, all Claude Code passes on)
  because Claude Code defers tool definitions behind a search, showing the model tool names and server instructions (catalog = \"tool\" in a profile changes that)

docx           custom   <T>/team/docx
    docx from team.
team-tool      custom   <T>/team/team-tool
    team-tool from team.
proj-agents    project  <T>/project/.agents/skills/proj-agents
    proj-agents from project/.agents/skills.
agents-helper  user     <T>/home/.agents/skills/agents-helper
    agents-helper from home/.agents/skills.
codex-helper   user     <T>/home/.codex/skills/codex-helper
    codex-helper from home/.codex/skills.
cursor-helper  user     <T>/home/.cursor/skills/cursor-helper
    cursor-helper from home/.cursor/skills.

Left out because Claude Code loads them itself:
pdf            custom   <T>/team/pdf
    pdf from team.
    Claude Code loads a skill of the same name itself (<T>/home/.claude/skills/pdf/SKILL.md)
proj-claude    project  <T>/project/.claude/skills/proj-claude
    proj-claude from project/.claude/skills.
    Claude Code loads it itself
claude-notes   user     <T>/home/.claude/skills/claude-notes
    claude-notes from home/.claude/skills.
    Claude Code loads it itself
tools:fmt      plugin   <T>/home/.claude/plugins/cache/team/tools/1.0.0/skills/fmt
    fmt from the tools plugin.
    plugin tools@team 1.0.0, installed at <T>/home/.claude/plugins/cache/team/tools/1.0.0
    Claude Code loads it itself
pdf            user     <T>/home/.claude/skills/pdf
    pdf from home/.claude/skills.
    Claude Code loads it itself
pdf            user     <T>/home/.agents/skills/pdf
    pdf from home/.agents/skills.
    Claude Code loads a skill of the same name itself (<T>/home/.claude/skills/pdf/SKILL.md)

6 skills (custom 2, project 1, user 3); 6 hidden
0 errors, 2 warnings, 0 notes in 2 files; run `skillserve check` for details
"
    );
    // A row's id stands for the name its client sends; without --all the
    // left-out skills are only counted.
    let mut args = vec!["list", "--client", "codex"];
    args.extend(ARGS);
    let out = fixture.run(&args);
    let first = out.stdout.lines().next().unwrap();
    assert_eq!(
        first,
        "Offered to codex-mcp-client: built-in profile of Codex (CLI, IDE extension, app) (leaves out what it loads itself)"
    );
    assert!(
        out.stdout
            .contains("\n6 skills (custom 2, project 1, user 2, plugin 1); 6 hidden (see --all)\n"),
        "{}",
        out.stdout
    );
    // `show` says why a name finds nothing, on stderr.
    let mut args = vec!["show", "--client", "claude-code", "claude-notes"];
    args.extend(ARGS);
    let out = fixture.run(&args);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        fixture.anonymize(&out.stderr).ends_with(
            "note: 'claude-notes' (<T>/home/.claude/skills/claude-notes) is not offered: Claude Code loads it itself\n"
        ),
        "{}",
        out.stderr
    );
}
