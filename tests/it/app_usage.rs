//! The skills app's usage read (`app_usage`, behaviour.md "The skills
//! app"), through the real binary: after `skill` calls it answers exactly
//! what `skillserve stats --json` then prints for the same data folder, on
//! both protocols; with recording off it says so and how to turn it on;
//! over HTTP it needs an admin token.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};

use crate::common::http::HttpServer;
use crate::common::{Server, is_error, text};
use crate::usage::{ARGS, fixture, stats};

async fn app_usage(server: &Server, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    server
        .client
        .call_tool(CallToolRequestParams::new("app_usage").with_arguments(arguments))
        .await
        .expect("tools/call answers")
}

fn structured(result: &CallToolResult) -> &Value {
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result
        .structured_content
        .as_ref()
        .expect("structured content")
}

#[tokio::test]
async fn after_skill_calls_the_usage_read_is_exactly_stats_json_on_both_protocols() {
    for v2026 in [false, true] {
        let fixture = fixture();
        let server = Server::start_ui(fixture.command(ARGS), v2026).await;
        for _ in 0..3 {
            let loaded = server.call("alpha").await;
            assert!(!is_error(&loaded), "{}", text(&loaded));
        }
        let file = server
            .call_with(rmcp::object!({"name": "alpha", "file": "references/guide.md"}))
            .await;
        assert!(!is_error(&file), "{}", text(&file));

        // No wait for the writer's 30 s: the read writes what is pending.
        let read = app_usage(&server, json!({})).await;
        let report = structured(&read).clone();
        assert_eq!(
            text(&read),
            "3 loads of 1 skill over the last 30 days; 1 of 2 skills served not loaded.",
            "v2026 {v2026}"
        );
        // The CLI, reading the file the server wrote, says the same.
        assert_eq!(report, stats(&fixture, &[]), "v2026 {v2026}");
        let team = fixture.path("team").to_string_lossy().into_owned();
        assert_eq!(report["recording"], true);
        assert_eq!(report["off_by"], Value::Null);
        assert_eq!(report["turn_on"], Value::Null);
        assert_eq!(report["days"], 30);
        let alpha = &report["skills"][0];
        assert_eq!(alpha["name"], "alpha");
        assert_eq!(alpha["source"], "custom");
        assert_eq!(alpha["where"], format!("{team}/alpha"));
        assert_eq!(alpha["loads"], 3);
        assert_eq!(
            alpha["surfaces"],
            json!({"tool": 3, "prompt": 0, "skills_get": 0, "resource": 0})
        );
        assert_eq!(alpha["clients"], json!({"ui-host": 3}));
        assert_eq!(alpha["files"], json!({"references/guide.md": 1}));
        assert_eq!(alpha["daily"].as_array().unwrap().len(), 30);
        assert_eq!(alpha["daily"][29], 3);
        assert_eq!(report["skills"].as_array().unwrap().len(), 1);
        assert_eq!(
            report["unused"],
            json!([{"name": "beta", "source": "custom", "root": team, "where": format!("{team}/beta")}])
        );
        assert_eq!(
            report["clients"],
            json!([{"client": "ui-host", "loads": 3, "skills": 1}])
        );
        assert_eq!(
            report["sources"],
            json!([{"source": "custom", "loads": 3, "skills": 2, "used": 1}])
        );

        // The model may open the manager on this view; the read itself is
        // app-only and reads only.
        let tools = server.client.list_all_tools().await.unwrap();
        let tool =
            serde_json::to_value(tools.iter().find(|t| t.name == "app_usage").unwrap()).unwrap();
        assert_eq!(tool["_meta"]["ui"]["visibility"], json!(["app"]));
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
        assert_eq!(tool["annotations"]["destructiveHint"], false);
        let opened = server
            .client
            .call_tool(
                CallToolRequestParams::new("manage_skills")
                    .with_arguments(rmcp::object!({"view": "usage"})),
            )
            .await
            .unwrap();
        assert_eq!(
            text(&opened),
            "The skills manager is open (usage): 2 skills (2 served)."
        );

        // Days and a client glob, as `--days` and `--client`.
        let other = app_usage(&server, json!({"days": 7, "client": "cursor*"})).await;
        assert_eq!(
            structured(&other),
            &stats(&fixture, &["--days", "7", "--client", "cursor*"])
        );
        assert_eq!(structured(&other)["skills"], json!([]));
        assert_eq!(structured(&other)["client"], "cursor*");
        let mine = app_usage(&server, json!({"days": 90, "client": "UI-*"})).await;
        assert_eq!(structured(&mine)["skills"][0]["loads"], 3);

        // Out of bounds, as the CLI refuses `--days 91`.
        for (arguments, message) in [
            (
                json!({"days": 0}),
                "`days` must be a whole number from 1 to 90 (usage is kept 90 days)",
            ),
            (
                json!({"days": 91}),
                "`days` must be a whole number from 1 to 90 (usage is kept 90 days)",
            ),
            (
                json!({"days": "7"}),
                "`days` must be a whole number from 1 to 90 (usage is kept 90 days)",
            ),
            (json!({"client": 3}), "`client` must be a string"),
            (
                json!({"client": "*".repeat(257)}),
                "`client` is longer than 256 characters",
            ),
        ] {
            let refused = app_usage(&server, arguments.clone()).await;
            assert_eq!(refused.is_error, Some(true), "{arguments}");
            assert_eq!(text(&refused), message, "{arguments}");
            assert_eq!(
                refused.structured_content.as_ref().unwrap()["error"]["code"],
                "failed"
            );
        }
        let (status, log) = server.stop().await;
        assert!(status.success(), "{log}");
    }
}

#[tokio::test]
async fn with_recording_off_the_read_says_so_and_how_to_turn_it_on() {
    let fixture = fixture();
    let config = fixture.write("home/.config/skillserve/config.toml", "usage = false\n");
    let server = Server::start_ui(fixture.command(ARGS), false).await;
    assert!(!is_error(&server.call("alpha").await));
    let read = app_usage(&server, json!({})).await;
    let report = structured(&read);
    let turn_on = format!(
        "set `usage = true` (or remove the line `usage = false`) at line 1 of {}",
        config.display()
    );
    assert_eq!(
        text(&read),
        format!(
            "Usage is not recorded: it is off (config.toml:1); to record it, {turn_on}. Recorded before: 0 loads of 0 skills over the last 30 days; 2 of 2 skills served not loaded."
        )
    );
    assert_eq!(report["recording"], false);
    assert_eq!(report["off_by"], "config.toml:1");
    assert_eq!(report["turn_on"], turn_on);
    // The call made with recording off was not recorded.
    assert_eq!(report["skills"], json!([]));
    assert_eq!(report, &stats(&fixture, &[]));
    server.stop().await;
    assert!(
        !fixture
            .path("home/.local/share/skillserve/usage.json")
            .exists()
    );

    // Off by the flag, on the other protocol.
    std::fs::remove_file(&config).unwrap();
    let args = [ARGS, &["--no-usage"]].concat();
    let server = Server::start_ui(fixture.command(&args), true).await;
    assert!(!is_error(&server.call("alpha").await));
    let read = app_usage(&server, json!({})).await;
    assert_eq!(structured(&read)["off_by"], "--no-usage");
    assert_eq!(
        structured(&read)["turn_on"],
        "start the server without `--no-usage`"
    );
    assert!(
        text(&read).starts_with("Usage is not recorded: it is off (--no-usage); to record it, start the server without `--no-usage`. Recorded before: "),
        "{}",
        text(&read)
    );
    server.stop().await;
}

#[tokio::test]
async fn a_usage_file_that_cannot_be_read_is_a_clear_error() {
    let fixture = fixture();
    let file = fixture.write("home/.local/share/skillserve/usage.json", "not json\n");
    let server = Server::start_ui(fixture.command(ARGS), true).await;
    let read = app_usage(&server, json!({})).await;
    assert_eq!(read.is_error, Some(true), "{read:?}");
    let message = text(&read);
    assert!(
        message.starts_with(&format!(
            "cannot read the usage file {}: not a usage file of skillserve: ",
            file.display()
        )),
        "{message}"
    );
    // The CLI says the same.
    let out = fixture.run(&[&["stats"][..], ARGS].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.contains(message), "{}", out.stderr);
    server.stop().await;
}

#[test]
fn over_http_the_usage_read_needs_an_admin_token() {
    let fixture = fixture();
    let tokens = fixture.path("tokens");
    let token = |label: &str, admin: bool| {
        let mut args = vec!["token", "new", label, "--file", tokens.to_str().unwrap()];
        if admin {
            args.push("--admin");
        }
        let made = fixture.run(&args);
        assert_eq!(made.status.code(), Some(0), "{}", made.stderr);
        made.stdout.trim().lines().last().unwrap().trim().to_owned()
    };
    let reader = format!("Bearer {}", token("reader", false));
    let lead = format!("Bearer {}", token("lead", true));
    let server = HttpServer::ready(
        &fixture,
        &[
            "--skills-dir",
            "team",
            "--auth-tokens",
            tokens.to_str().unwrap(),
        ],
    );
    let call = |bearer: &str, name: &str, arguments: Value| {
        let message = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {
                "name": name, "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "skillserve-app", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {
                        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
                    }
                }
            }
        });
        server
            .post(
                &message,
                &[
                    ("Authorization", bearer),
                    ("MCP-Protocol-Version", "2026-07-28"),
                    ("Mcp-Method", "tools/call"),
                    ("Mcp-Name", name),
                ],
            )
            .answer()
    };
    let loaded = call(&reader, "skill", json!({"name": "beta"}));
    assert_ne!(loaded["result"]["isError"], true, "{loaded}");

    let refused = call(&reader, "app_usage", json!({}));
    let result = &refused["result"];
    assert_eq!(result["isError"], true, "{refused}");
    assert_eq!(result["structuredContent"]["error"]["code"], "forbidden");
    assert_eq!(
        result["content"][0]["text"],
        "Refused: this token may read the catalog but not which clients use which skills: the usage report needs a token with admin (`skillserve token new LABEL --admin`, or the OAuth scope `skills:admin`)"
    );
    server.wait_for_log("http token:reader app_usage: refused");

    let answered = call(&lead, "app_usage", json!({}));
    let report = &answered["result"]["structuredContent"];
    assert_ne!(answered["result"]["isError"], true, "{answered}");
    assert_eq!(report["skills"][0]["name"], "beta");
    assert_eq!(report["skills"][0]["clients"], json!({"skillserve-app": 1}));
    let args = ["stats", "--json", "--skills-dir", "team", "--no-project"];
    let out = fixture.run(&args);
    assert_eq!(
        report,
        &serde_json::from_str::<Value>(&out.stdout).unwrap(),
        "{}",
        out.stderr
    );
    let (status, log) = server.terminate();
    assert!(status.success(), "{log}");

    // Without authentication (loopback, no tokens) no caller is admin.
    let open = HttpServer::ready(&fixture, &["--skills-dir", "team"]);
    let refused = open
        .post(
            &json!({
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "app_usage", "arguments": {}, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "skillserve-app", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {
                        "extensions": {"io.modelcontextprotocol/ui": {}}
                    }
                }}
            }),
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "app_usage"),
            ],
        )
        .answer();
    assert_eq!(
        refused["result"]["structuredContent"]["error"]["code"], "forbidden",
        "{refused}"
    );
    open.wait_for_log("http - app_usage: refused");
    open.terminate();
}
