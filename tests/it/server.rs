//! The MCP server, driven through the real binary over stdio with rmcp's client.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{Fixture, is_error, listed, text};
use rmcp::model::{ClientRequest, CustomRequest, ErrorCode};
use rmcp::service::ServiceError;
use serde_json::{Value, json};

/// The fixture as most tests see it: the custom folder first, the project
/// started in `packages/app`, and the fake home.
const ARGS: &[&str] = &[
    "--skills-dir",
    "custom",
    "--project-dir",
    "project/packages/app",
];

const EXPECTED_DESCRIPTION: &str = "Load a skill by name to get specialized instructions.

Available skills:
- canvas-design: Create visual art in .png and .pdf documents using design philosophy.
- code-fences: A skill whose body must come back byte for byte.
- crlf-skill: Saved on Windows with a BOM and CRLF line endings.
- pdf-tools: Split, merge and rotate PDF pages (folder name uses an underscore).
- Shared-Name: The custom copy of shared-name (beats project and user).
- team:lint: A namespaced name; callable as `team:lint` or by its short name `lint`.
- app-deploy: Deploy the app package to staging, then production.
- release-notes: Write release notes from merged pull requests.
- review: Review checklist for the app package.
- bun: Enhanced documentation skill for 'bun'
- linked-file: A SKILL.md that is itself a symlink to a file elsewhere.
- pdf: Comprehensive PDF manipulation toolkit for extracting text and tables, creating new PDFs, merging and splitting documents.
- symlinked-skill: Lives outside every skills folder; reached through a symlinked folder.
- tone-guide: House tone of voice for customer-facing writing.
- user: 用户的全局技能,必读!";

#[tokio::test]
async fn tool_definition_is_exactly_the_contract() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    let tool = serde_json::to_value(server.tool().await).unwrap();
    assert_eq!(
        tool,
        json!({
            "name": "skill",
            "title": "Load skill",
            "description": EXPECTED_DESCRIPTION,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "description": "Name of the skill to load, exactly as listed (e.g. `pdf` or `document-skills:pdf`); case does not matter."
                    },
                    "file": {
                        "type": "string",
                        "description": "A file inside the skill's folder, as listed when the skill is loaded (e.g. `references/forms.md`); omit it to load the skill itself."
                    }
                },
                "required": ["name"]
            },
            "annotations": {
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": true,
                "openWorldHint": false
            },
            "_meta": { "anthropic/maxResultSizeChars": 500000 }
        })
    );
    server.stop().await;
}

#[tokio::test]
async fn server_info_capabilities_and_instructions() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    let info = server.client.peer_info().expect("initialized");
    let info = serde_json::to_value(&*info).unwrap();
    assert_eq!(info["serverInfo"]["name"], "skillserve");
    assert_eq!(info["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        info["capabilities"]["tools"],
        json!({ "listChanged": true })
    );
    let instructions = info["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("call `skill` with that name"),
        "{instructions}"
    );
    server.stop().await;
}

#[tokio::test]
async fn loads_by_exact_differently_cased_short_and_folder_name() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    let pdf = std::fs::read_to_string(fixture.path("home/.claude/skills/pdf/SKILL.md")).unwrap();
    let expected = format!(
        "Loading: pdf\nBase directory: {}\n\n{pdf}",
        fixture.path("home/.claude/skills/pdf").display()
    );
    for name in ["pdf", "PDF", "Pdf", " pdf "] {
        let result = server.call(name).await;
        assert!(!is_error(&result), "{name}: {result:?}");
        assert_eq!(text(&result), expected, "called with {name:?}");
    }

    // Short name of a namespaced name.
    let result = server.call("lint").await;
    assert!(text(&result).starts_with(&format!(
        "Loading: team:lint\nBase directory: {}\n\n---\n",
        fixture.path("custom/team-lint").display()
    )));

    // Folder name (pdf_tools) of a skill named pdf-tools.
    let result = server.call("PDF_TOOLS").await;
    assert!(
        text(&result).starts_with("Loading: pdf-tools\n"),
        "{}",
        text(&result)
    );

    // Nested three levels below the root.
    assert!(text(&server.call("tone-guide").await).starts_with("Loading: tone-guide\n"));
    server.stop().await;
}

#[tokio::test]
async fn content_comes_back_byte_for_byte() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    for (name, folder) in [
        ("code-fences", "custom/code-fences"),
        ("user", "home/.claude/skills/user-global"),
        ("symlinked-skill", "home/.claude/skills/symlinked-skill"),
        ("linked-file", "home/.claude/skills/linked-file"),
    ] {
        let on_disk = std::fs::read_to_string(fixture.path(folder).join("SKILL.md")).unwrap();
        let expected = format!(
            "Loading: {name}\nBase directory: {}\n\n{on_disk}",
            fixture.path(folder).display()
        );
        assert_eq!(text(&server.call(name).await), expected);
    }
    // Tabs, trailing spaces, emoji and CJK survive.
    let fences = server.call("code-fences").await;
    assert!(text(&fences).contains("\treturn \"tab-indented\"   \n"));
    assert!(text(&fences).contains("中文内容 and emoji 🎉🚀"));

    // BOM removed, CRLF kept.
    let crlf = server.call("crlf-skill").await;
    let bytes = std::fs::read(fixture.path("custom/crlf-skill/SKILL.md")).unwrap();
    assert!(bytes.starts_with(b"\xef\xbb\xbf---\r\n"));
    let without_bom = std::str::from_utf8(&bytes[3..]).unwrap();
    assert!(text(&crlf).ends_with(&format!("\n\n{without_bom}")));
    assert!(text(&crlf).contains("Line one.\r\nLine two.\r\n"));
    server.stop().await;
}

/// However a client writes a `tools/call` line (keys in any order, escapes,
/// a `_meta`), the answer is the same, and the same as rmcp's client gets.
#[tokio::test]
async fn a_call_is_answered_alike_however_its_line_is_written() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    let expected = server.call("code-fences").await;
    server.stop().await;

    let mut raw = crate::common::Raw::start(fixture.command(ARGS));
    let arguments = json!({"name": "code-fences"});
    let lines = [
        // As most clients write it.
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "skill", "arguments": arguments}}),
        // Keys in another order, a string id, an escaped name.
        r#"{"params":{"arguments":{"name":"code-\u0066ences"},"name":"skill"},"method":"tools/call","id":"two","jsonrpc":"2.0"}"#
            .parse()
            .unwrap(),
        // With `_meta`.
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "skill", "arguments": arguments, "_meta": {"progressToken": 3}}}),
    ];
    for line in lines {
        raw.send_json(&line);
        let answer = raw.next_message(Duration::from_secs(20)).unwrap();
        assert_eq!(answer["id"], line["id"], "{answer}");
        assert_eq!(
            answer["result"],
            serde_json::to_value(&expected).unwrap(),
            "{line}"
        );
    }
    assert_eq!(raw.finish().code(), Some(0));
}

#[tokio::test]
async fn precedence_is_custom_then_nearer_project_then_user_and_shadowing_is_logged() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    let shared = server.call("shared-name").await;
    assert!(text(&shared).starts_with(&format!(
        "Loading: Shared-Name\nBase directory: {}\n",
        fixture.path("custom/shared-name").display()
    )));
    let review = server.call("review").await;
    assert!(
        text(&review).ends_with("app review\n"),
        "nearer project dir wins"
    );
    let pdf = server.call("pdf").await;
    assert!(
        text(&pdf).contains(".claude/skills/pdf\n"),
        "~/.claude beats ~/.agents"
    );

    let (status, stderr) = server.stop().await;
    assert!(status.success());
    for hidden in [
        "project/.claude/skills/shared-name/SKILL.md",
        "home/.claude/skills/shared-name/SKILL.md",
        "project/.claude/skills/review/SKILL.md",
        "home/.agents/skills/pdf-legacy/SKILL.md",
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains("warning[shadowed]") && l.contains(hidden))
            .unwrap_or_else(|| panic!("no shadowing warning for {hidden} in:\n{stderr}"));
        assert!(line.contains("is hidden by"), "{line}");
    }
}

#[tokio::test]
async fn not_found_suggests_typos_transpositions_and_separator_mixups() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    for (query, suggestion) in [
        ("pdf-tols", "pdf-tools"),          // a missing letter
        ("cnavas-design", "canvas-design"), // transposition
        ("pdf_tool", "pdf-tools"),          // `_` for `-`
        ("releasenotes", "release-notes"),
        ("tone", "tone-guide"), // substring
    ] {
        let result = server.call(query).await;
        assert!(is_error(&result));
        let text = text(&result);
        assert!(
            text.starts_with(&format!(
                "Skill '{query}' not found. Did you mean one of these?\n"
            )),
            "{text}"
        );
        let listed = listed(text);
        assert!(listed.len() <= 5);
        assert_eq!(listed[0], suggestion, "best match for {query}: {text}");
        assert!(text.ends_with("\nCall `skill` again with one of these names."));
    }
    let none = server.call("zzzzqqqq").await;
    assert!(is_error(&none));
    assert_eq!(
        text(&none),
        "Skill 'zzzzqqqq' not found. There are 15 skills; the `skill` tool description lists them."
    );
    server.stop().await;
}

#[tokio::test]
async fn bad_name_arguments_are_tool_errors_carrying_minus_32602() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    let cases = [
        (rmcp::object!({}), "it is missing"),
        (rmcp::object!({ "name": "" }), "it is empty"),
        (rmcp::object!({ "name": "   " }), "it is empty"),
        (rmcp::object!({ "name": 42 }), "got a number"),
        (rmcp::object!({ "name": ["pdf"] }), "got an array"),
        (rmcp::object!({ "name": null }), "it is missing"),
    ];
    for (arguments, problem) in cases {
        let result = server.call_with(arguments).await;
        assert!(is_error(&result));
        let expected = format!(
            "Invalid params: the string argument `name` is required ({problem}). Example: {{\"name\": \"pdf\"}}"
        );
        assert_eq!(text(&result), expected);
        assert_eq!(
            result.structured_content,
            Some(json!({ "error": { "code": -32602, "message": expected } }))
        );
    }
    // No arguments object at all.
    let result = server
        .client
        .call_tool(rmcp::model::CallToolRequestParams::new("skill"))
        .await
        .unwrap();
    assert!(is_error(&result));
    assert!(text(&result).starts_with("Invalid params:"));
    server.stop().await;
}

fn expect_protocol_error(result: Result<impl std::fmt::Debug, ServiceError>) -> rmcp::ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn unknown_tool_malformed_params_and_unknown_methods_are_protocol_errors() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;

    let error = expect_protocol_error(
        server
            .client
            .call_tool(rmcp::model::CallToolRequestParams::new("search"))
            .await,
    );
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "unknown tool 'search': this server has one tool, `skill`"
    );

    let raw = |method: &str, params: Value| {
        server
            .client
            .send_request(ClientRequest::CustomRequest(CustomRequest::new(
                method,
                Some(params),
            )))
    };
    // tools/call without `name`, and with arguments that are not an object.
    for params in [
        json!({ "arguments": { "name": "pdf" } }),
        json!({ "name": "skill", "arguments": "pdf" }),
        json!(5),
    ] {
        let error = expect_protocol_error(raw("tools/call", params).await);
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
        assert!(
            error.message.starts_with("invalid params for tools/call: "),
            "{}",
            error.message
        );
    }
    let error = expect_protocol_error(raw("skills/teleport", json!({})).await);
    assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);

    // The server is still fine.
    assert!(!is_error(&server.call("bun").await));
    server.stop().await;
}

#[tokio::test]
async fn ambiguous_short_name_lists_every_candidate() {
    let fixture = Fixture::new();
    fixture.write(
        "extra/one/SKILL.md",
        "---\nname: alpha:deploy\ndescription: one\n---\n",
    );
    fixture.write(
        "extra/two/SKILL.md",
        "---\nname: beta:deploy\ndescription: two\n---\n",
    );
    let server = fixture
        .serve(&["--skills-dir", "extra", "--no-user", "--no-project"])
        .await;
    let result = server.call("deploy").await;
    assert!(is_error(&result));
    assert_eq!(
        text(&result),
        "Skill name 'deploy' is ambiguous: 2 skills match it.\n- alpha:deploy\n- beta:deploy\nCall `skill` again with one of these full names."
    );
    assert!(text(&server.call("beta:deploy").await).starts_with("Loading: beta:deploy\n"));
    server.stop().await;
}

#[tokio::test]
async fn unreadable_file_at_call_time_is_a_tool_error_and_vanished_skill_is_not_found() {
    let fixture = Fixture::new();
    // Neither the watcher nor the interval may refresh behind the test's back.
    let server = fixture
        .serve(&[
            "--skills-dir",
            "custom",
            "--no-user",
            "--no-project",
            "--no-watch",
            "--refresh-interval",
            "0",
        ])
        .await;

    // Replace a SKILL.md with a directory after start-up.
    let file = fixture.path("custom/canvas-design/SKILL.md");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let result = server.call("canvas-design").await;
    assert!(is_error(&result));
    assert_eq!(
        text(&result),
        "Skill 'canvas-design' could not be read: not a regular file. The file must be fixed before the skill can be used (`skillserve check` shows how); do not retry, pick another skill or tell the user."
    );

    // Delete a skill folder: the answer is "not found", never an I/O error.
    std::fs::remove_dir_all(fixture.path("custom/code-fences")).unwrap();
    let result = server.call("code-fences").await;
    assert!(is_error(&result));
    assert!(
        text(&result).starts_with("Skill 'code-fences' not found."),
        "{}",
        text(&result)
    );
    assert!(!server.description().await.contains("code-fences"));

    server.stop().await;
}

#[tokio::test]
async fn names_that_look_like_paths_never_read_outside_the_skills() {
    let fixture = Fixture::new();
    fixture.write("secret.txt", "TOP SECRET");
    let server = fixture.serve(ARGS).await;
    for name in [
        "../secret.txt",
        "../../secret.txt",
        "/etc/passwd",
        "custom/../secret.txt",
        "pdf/../../../secret.txt",
        "~/.ssh/id_rsa",
        "..",
        ".",
        "pdf/SKILL.md",
        "\0",
    ] {
        let result = server.call(name).await;
        assert!(is_error(&result), "{name:?} must not load anything");
        let text = text(&result);
        assert!(
            text.starts_with(&format!("Skill '{name}' not found.")),
            "{text}"
        );
        assert!(
            !text.contains("TOP SECRET") && !text.contains("root:"),
            "{text}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn two_hundred_concurrent_calls_are_all_answered_correctly() {
    let fixture = Fixture::new();
    let server = Arc::new(fixture.serve(ARGS).await);
    let names = [
        "pdf",
        "bun",
        "code-fences",
        "review",
        "user",
        "lint",
        "Shared-Name",
        "nope",
    ];
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let server = Arc::clone(&server);
        let name = names[i % names.len()];
        tasks.spawn(async move { (name, server.call(name).await) });
    }
    let mut answered = 0;
    while let Some(joined) = tasks.join_next().await {
        let (name, result) = joined.unwrap();
        let text = text(&result);
        if name == "nope" {
            assert!(is_error(&result) && text.starts_with("Skill 'nope' not found."));
        } else {
            let expected = match name {
                "lint" => "team:lint",
                other => other,
            };
            assert!(
                text.to_lowercase()
                    .starts_with(&format!("loading: {}\n", expected.to_lowercase())),
                "{name}: {text}"
            );
        }
        answered += 1;
    }
    assert_eq!(answered, 200);
    let server = Arc::into_inner(server).expect("all tasks done");
    server.stop().await;
}

#[tokio::test]
async fn exits_zero_on_stdin_eof() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    let (status, stderr) = server.stop().await;
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("client closed stdin; exiting"), "{stderr}");
}

#[tokio::test]
async fn exits_zero_on_sigterm_and_sigint() {
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGINT, "SIGINT")] {
        let fixture = Fixture::new();
        let server = fixture.serve(ARGS).await;
        let (status, stderr) = server.signal(signal).await;
        assert_eq!(status.code(), Some(0), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("received {name}; exiting")),
            "{stderr}"
        );
    }
}

#[test]
fn stdout_carries_only_json_rpc_even_with_debug_logs_and_early_requests() {
    let fixture = Fixture::new();
    let mut command = fixture.command(&["--skills-dir", "custom", "--skills-dir", "broken"]);
    command.env("SKILLSERVE_LOG", "trace");
    let mut lines: Vec<String> = [
        // A request before initialize must not crash the server.
        json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "skill", "arguments": {"name": "good"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "skill", "arguments": {"name": "bad-yaml"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "no/such/method"}),
        // Params that are not an object still get an answer (-32602).
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": 5}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": ["skill"]}),
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": null}),
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": 5}),
        json!({"jsonrpc": "2.0", "id": 10, "method": "ping", "params": [1]}),
    ]
    .iter()
    .map(Value::to_string)
    .collect();
    lines.push("this line is not JSON".to_owned());

    let (responses, status) = crate::common::raw_exchange(command, &lines, 11);
    assert!(responses.contains_key(&0), "the early request was answered");
    let text = responses[&3]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.starts_with("Loading: good\n"), "{text}");
    assert_eq!(responses[&5]["error"]["code"], -32601);
    for id in [6, 7] {
        let error = &responses[&id]["error"];
        assert_eq!(error["code"], -32602, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with("invalid params for tools/call: params must be an object"),
            "{message}"
        );
    }
    assert_eq!(responses[&8]["result"]["tools"][0]["name"], "skill");
    // Even where every param is optional, params that are not an object are wrong.
    for (id, method) in [(9, "tools/list"), (10, "ping")] {
        assert_eq!(
            responses[&id]["error"]["code"], -32602,
            "{}",
            responses[&id]
        );
        let message = responses[&id]["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "invalid params for {method}: params must be an object"
            )),
            "{message}"
        );
    }
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn description_budget_keeps_every_name() {
    let fixture = Fixture::new();
    let mut args = ARGS.to_vec();
    args.extend(["--description-budget", "700"]);
    let server = fixture.serve(&args).await;
    let description = server.description().await;
    assert!(
        description.chars().count() <= 700,
        "{}",
        description.chars().count()
    );
    assert!(description.starts_with(
        "Load a skill by name to get specialized instructions.\n\nAvailable skills:\n"
    ));
    for name in ["canvas-design", "pdf", "user", "team:lint", "tone-guide"] {
        assert!(
            description.contains(&format!("\n- {name}")),
            "{name} missing:\n{description}"
        );
    }
    assert!(description.contains('…'));
    server.stop().await;
}

#[tokio::test]
async fn broken_files_never_hide_good_skills() {
    let fixture = Fixture::new();
    let server = fixture
        .serve(&["--skills-dir", "broken", "--no-user", "--no-project"])
        .await;
    let description = server.description().await;
    assert_eq!(
        description,
        "Load a skill by name to get specialized instructions.\n\nAvailable skills:\n\
         - colon: Use when: the user asks about colons\n\
         - good: A healthy skill next to broken ones."
    );
    assert!(!is_error(&server.call("good").await));
    let (status, stderr) = server.stop().await;
    assert!(status.success());
    for code in [
        "yaml-invalid",
        "frontmatter-unterminated",
        "invalid-utf8",
        "empty-file",
        "not-a-file",
        "symlink-loop",
        "dangling-symlink",
        "yaml-recovered",
    ] {
        assert!(
            stderr.contains(&format!("[{code}]")),
            "no {code} in:\n{stderr}"
        );
    }
}

#[tokio::test]
async fn a_fifo_named_skill_md_does_not_hang_start_up() {
    let fixture = Fixture::new();
    let fifo = fixture.path("custom/fifo-skill/SKILL.md");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo only reads the NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let server = tokio::time::timeout(Duration::from_secs(10), fixture.serve(ARGS))
        .await
        .expect("start-up does not hang on a FIFO");
    assert!(!server.description().await.contains("fifo-skill"));
    let (_, stderr) = server.stop().await;
    assert!(
        stderr.contains("fifo-skill/SKILL.md: SKILL.md is not a regular file"),
        "{stderr}"
    );
}
