//! Where the catalog goes (behaviour.md §5.4), through the real binary: the
//! `skill` tool's description for clients that show tool definitions, the
//! server's `instructions` for clients that defer them (Claude Code), a
//! profile's `catalog` over both, on 2025-11-25 (`initialize`), 2026-07-28
//! (`server/discover`, the client in each request's `_meta`) and over HTTP.

use serde_json::{Value, json};
use skillserve::render::{
    DESCRIPTION_HEADER, INSTRUCTIONS, INSTRUCTIONS_HEADER, REMOTE_INSTRUCTIONS,
    REMOTE_INSTRUCTIONS_HEADER, TOOL_POINTER,
};

use crate::common::http::{HttpServer, V2026};
use crate::common::{Fixture, Server, is_error, listed, text};

/// Two skills in a custom folder: no client loads them itself.
fn fixture() -> Fixture {
    let fixture = Fixture::empty();
    for (name, description) in [("alpha", "Alpha things."), ("beta", "Beta things.")] {
        fixture.write(
            &format!("team/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: {description}\n---\nUse {name}.\n"),
        );
    }
    fixture
}

const ARGS: &[&str] = &["--skills-dir", "team", "--no-project"];

/// The list both places use when they carry the catalog.
const LIST: &str = "\n- alpha: Alpha things.\n- beta: Beta things.";

/// What each place holds for a client whose catalog is where `placement`
/// says (`tool`, `instructions`, `both`), locally or over HTTP.
fn expected(placement: &str, remote: bool) -> (String, String) {
    let (pointing, header) = if remote {
        (REMOTE_INSTRUCTIONS, REMOTE_INSTRUCTIONS_HEADER)
    } else {
        (INSTRUCTIONS, INSTRUCTIONS_HEADER)
    };
    let catalog = |header: &str| format!("{header}{LIST}");
    match placement {
        "tool" => (catalog(DESCRIPTION_HEADER), pointing.to_owned()),
        "instructions" => (TOOL_POINTER.to_owned(), catalog(header)),
        "both" => (catalog(DESCRIPTION_HEADER), catalog(header)),
        other => unreachable!("{other}"),
    }
}

/// The tool description and instructions `server` gives its client.
async fn places(server: &Server) -> (String, String) {
    (server.description().await, server.instructions())
}

#[tokio::test]
async fn claude_code_gets_the_catalog_in_instructions_and_cursor_in_the_tool_on_both_eras() {
    let fixture = fixture();
    for v2026 in [false, true] {
        for (client, placement) in [
            ("claude-code", "instructions"),
            ("cursor-vscode", "tool"),
            ("my-agent", "tool"),
        ] {
            let server = Server::start_as(fixture.command(ARGS), client, v2026).await;
            assert_eq!(
                places(&server).await,
                expected(placement, false),
                "{client}, 2026: {v2026}"
            );
            // A call needs nothing from the description either way.
            let loaded = server.call("beta").await;
            assert!(!is_error(&loaded), "{}", text(&loaded));
            // A miss says where the skills are listed.
            let miss = server.call("zzzzzz").await;
            let listed_in = if placement == "tool" {
                "the `skill` tool description lists them."
            } else {
                "this server's instructions list them."
            };
            assert_eq!(
                text(&miss),
                format!("Skill 'zzzzzz' not found. There are 2 skills; {listed_in}"),
                "{client}"
            );
            server.stop().await;
        }
    }
}

#[tokio::test]
async fn a_profile_catalog_setting_wins_over_the_built_in_table() {
    let fixture = fixture();
    fixture.write(
        "home/.config/skillserve/config.toml",
        "[clients.\"claude-code\"]\ncatalog = \"tool\"\n\n\
         [clients.\"cursor-vscode\"]\ncatalog = \"instructions\"\n\n\
         [clients.\"both-*\"]\ncatalog = \"both\"\n",
    );
    for v2026 in [false, true] {
        for (client, placement) in [
            ("claude-code", "tool"),
            ("cursor-vscode", "instructions"),
            ("both-agent", "both"),
        ] {
            let server = Server::start_as(fixture.command(ARGS), client, v2026).await;
            assert_eq!(
                places(&server).await,
                expected(placement, false),
                "{client}, 2026: {v2026}"
            );
            server.stop().await;
        }
    }
}

#[test]
fn claude_codes_instructions_stay_within_the_2048_characters_it_passes_on() {
    let fixture = Fixture::empty();
    for i in 0..60 {
        fixture.write(
            &format!("team/skill-{i:02}/SKILL.md"),
            &format!(
                "---\nname: skill-{i:02}\ndescription: {}\n---\nbody\n",
                "A long description of what this skill does. ".repeat(3)
            ),
        );
    }
    let mut args = vec!["list", "--instructions", "--client", "claude-code"];
    args.extend(ARGS);
    let out = fixture.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let instructions = out.stdout.strip_suffix('\n').unwrap();
    assert!(instructions.starts_with(INSTRUCTIONS_HEADER));
    assert!(instructions.chars().count() <= 2048, "{instructions}");
    // Every name still fits; the descriptions were shortened.
    assert_eq!(listed(instructions).len(), 60, "{instructions}");
    // A budget set for Claude Code wins over what it passes on.
    fixture.write(
        "home/.config/skillserve/config.toml",
        "[clients.claude-code]\ndescription_budget = 9000\n",
    );
    let out = fixture.run(&args);
    assert!(out.stdout.chars().count() > 2048);
    // Cursor keeps the default budget, in its tool description.
    let mut args = vec!["list", "--description", "--client", "cursor"];
    args.extend(ARGS);
    let out = fixture.run(&args);
    assert!(out.stdout.chars().count() > 2048);
    assert!(out.stdout.starts_with(DESCRIPTION_HEADER));
}

#[test]
fn list_and_config_say_where_the_catalog_goes_and_why() {
    let fixture = fixture();
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(ARGS);
        let out = fixture.run(&all);
        assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
        out.stdout
    };
    let header = |stdout: &str| stdout.lines().take(3).collect::<Vec<_>>().join("\n");
    assert_eq!(
        header(&run(&["list", "--client", "claude-code"])),
        "Offered to claude-code: built-in profile of Claude Code (leaves out what it loads itself)\n\
         Catalog: in the server's instructions; the `skill` tool's description points there (up to 2048 characters, all Claude Code passes on)\n  \
         because Claude Code defers tool definitions behind a search, showing the model tool names and server instructions (catalog = \"tool\" in a profile changes that)"
    );
    assert_eq!(
        header(&run(&["list", "--client", "cursor"])),
        "Offered to cursor-vscode: built-in profile of Cursor (leaves out what it loads itself)\n\
         Catalog: in the `skill` tool's description (up to 8000 characters)\n  \
         because cursor-vscode is not known to defer tool definitions (catalog = \"instructions\" in a profile changes that)"
    );
    assert_eq!(
        run(&["list", "--instructions", "--client", "claude-code"]),
        format!("{}\n", expected("instructions", false).1)
    );
    assert_eq!(
        run(&["list", "--description", "--client", "claude-code"]),
        format!("{TOOL_POINTER}\n")
    );
    let config = run(&["config"]);
    assert!(
        config.contains(
            "  claude-code     Claude Code (\"claude-code\")\n      loads .claude/skills (every level up to the repository); ~/.claude/skills; Claude Code plugins\n      defers tool definitions: the catalog goes to the server's instructions (it passes on 2048 characters of them: the catalog's budget)\n"
        ),
        "{config}"
    );

    fixture.write(
        "home/.config/skillserve/config.toml",
        "[clients.\"cursor-vscode\"]\ncatalog = \"both\"\n",
    );
    assert_eq!(
        header(&run(&["list", "--client", "cursor-vscode"])),
        "Offered to cursor-vscode: profile [clients.cursor-vscode] (config.toml:1) and the built-in profile of Cursor (leaves out what it loads itself)\n\
         Catalog: in the `skill` tool's description and in the server's instructions (up to 8000 characters)\n  \
         because [clients.cursor-vscode] sets catalog = \"both\" (config.toml:2)"
    );
    let config = fixture.anonymize(&run(&["config"]));
    assert!(
        config.contains("\n  [clients.cursor-vscode]  config.toml:1\n    (none)\n    catalog            \"both\"                       config.toml:2\n"),
        "{config}"
    );
}

#[test]
fn a_bad_catalog_value_is_named_with_its_line() {
    let fixture = fixture();
    fixture.write(
        "home/.config/skillserve/config.toml",
        "[clients.x]\ncatalog = \"tools\"\n",
    );
    let out = fixture.run(&["list"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fixture.anonymize(&out.stderr),
        "skillserve: <T>/home/.config/skillserve/config.toml:2: `catalog` in [clients.x] must be \"tool\", \"instructions\" or \"both\", not a string (\"tools\")\n"
    );
}

/// `initialize` over HTTP as the client `name`: the answer's instructions,
/// and the tool description of the session.
fn over_http_initialize(server: &HttpServer, name: &str) -> (String, String) {
    let response = server.post(
        &json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": name, "version": "1"}
            }
        }),
        &[],
    );
    let instructions = response.answer()["result"]["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("{response:?}"))
        .to_owned();
    let session = response.header("mcp-session-id").unwrap().to_owned();
    let with_session = [("Mcp-Session-Id", session.as_str())];
    server.post(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &with_session,
    );
    let tools = server
        .session_request(&session, 1, "tools/list", json!({}), &[])
        .answer();
    (description_of(&tools), instructions)
}

fn description_of(tools: &Value) -> String {
    tools["result"]["tools"][0]["description"]
        .as_str()
        .unwrap_or_else(|| panic!("{tools}"))
        .to_owned()
}

/// `server/discover` and `tools/list` over HTTP, stateless, as `name`.
fn over_http_stateless(server: &HttpServer, name: &str) -> (String, String) {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let request = |id: u64, method: &str| {
        server
            .post(
                &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta}}),
                &[("MCP-Protocol-Version", V2026), ("Mcp-Method", method)],
            )
            .answer()
    };
    let discover = request(1, "server/discover");
    let instructions = discover["result"]["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("{discover}"))
        .to_owned();
    (description_of(&request(2, "tools/list")), instructions)
}

#[test]
fn over_http_each_client_gets_the_catalog_where_it_looks_in_both_eras() {
    let fixture = fixture();
    fixture.write(
        "home/.config/skillserve/config.toml",
        "[clients.\"override-me\"]\ncatalog = \"instructions\"\n",
    );
    let server = HttpServer::ready(&fixture, ARGS);
    for (client, placement) in [
        ("claude-code", "instructions"),
        ("cursor-vscode", "tool"),
        ("override-me", "instructions"),
    ] {
        let wanted = expected(placement, true);
        assert_eq!(over_http_initialize(&server, client), wanted, "{client}");
        assert_eq!(over_http_stateless(&server, client), wanted, "{client}");
    }
}
