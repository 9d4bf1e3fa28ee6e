//! Skills as prompts (slash commands) and completion of skill names
//! (behaviour.md §10), through the real binary, on 2025-11-25 and 2026-07-28
//! connections.

use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, PaginatedRequestParams, Reference,
    SubscriptionFilter,
};
use rmcp::service::ServiceError;
use serde_json::json;

use crate::common::{Fixture, Server};

const ARGS: &[&str] = &["--skills-dir", "custom", "--no-user", "--no-project"];

fn get(name: &str, arguments: serde_json::Value) -> GetPromptRequestParams {
    let mut params = GetPromptRequestParams::new(name);
    if let serde_json::Value::Object(arguments) = arguments {
        params = params.with_arguments(arguments);
    }
    params
}

async fn prompt_text(server: &Server, params: GetPromptRequestParams) -> String {
    let result = server.client.get_prompt(params).await.expect("prompts/get");
    assert_eq!(result.messages.len(), 1);
    let message = serde_json::to_value(&result.messages[0]).unwrap();
    assert_eq!(message["role"], "user");
    message["content"]["text"].as_str().unwrap().to_owned()
}

async fn prompts_on(server: Server, fixture: &Fixture) {
    let prompts = server
        .client
        .list_all_prompts()
        .await
        .expect("prompts/list");
    let listed: Vec<serde_json::Value> = prompts
        .iter()
        .map(|p| serde_json::to_value(p).unwrap())
        .collect();
    assert_eq!(
        listed[0],
        json!({
            "name": "skill",
            "description": "Load a skill by name and follow its instructions",
            "arguments": [
                {"name": "name", "description": "The skill to load, as listed (completion offers the names)", "required": true},
                {"name": "task", "description": "What to do with the skill (optional)", "required": false}
            ]
        })
    );
    assert_eq!(
        listed[1],
        json!({
            "name": "canvas-design",
            "description": "Create visual art in .png and .pdf documents using design philosophy.",
            "arguments": [
                {"name": "task", "description": "What to do with the skill (optional)", "required": false}
            ]
        })
    );
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "skill",
            "canvas-design",
            "code-fences",
            "crlf-skill",
            "pdf-tools",
            "Shared-Name",
            "team:lint"
        ]
    );

    let on_disk = std::fs::read_to_string(fixture.path("custom/code-fences/SKILL.md")).unwrap();
    let loading = format!(
        "Loading: code-fences\nBase directory: {}\n\n{on_disk}",
        fixture.path("custom/code-fences").display()
    );
    assert_eq!(
        prompt_text(&server, get("code-fences", json!({}))).await,
        loading
    );
    assert_eq!(
        prompt_text(
            &server,
            get("code-fences", json!({"task": "  check the fences "}))
        )
        .await,
        format!("{loading}\n\nTask: check the fences")
    );
    assert_eq!(
        prompt_text(&server, get("skill", json!({"name": "CODE-FENCES"}))).await,
        loading
    );

    for (params, message) in [
        (
            get("skill", json!({})),
            "the `skill` prompt needs the argument `name`: the skill to load",
        ),
        (get("nope", json!({})), "Skill 'nope' not found."),
        (
            get("code-fences", json!({"task": 5})),
            "prompt argument `task` must be a string",
        ),
    ] {
        match server.client.get_prompt(params).await {
            Err(ServiceError::McpError(error)) => {
                assert_eq!(error.code.0, -32602);
                assert!(error.message.starts_with(message), "{}", error.message);
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn every_skill_is_a_prompt_that_loads_it() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    let info = serde_json::to_value(server.client.peer_info().unwrap()).unwrap();
    assert_eq!(
        info["capabilities"]["prompts"],
        json!({"listChanged": true})
    );
    assert_eq!(info["capabilities"]["completions"], json!({}));
    prompts_on(server, &fixture).await;
}

#[tokio::test]
async fn prompts_work_the_same_on_a_2026_connection() {
    let fixture = Fixture::new();
    let server = Server::start_2026(fixture.command(ARGS)).await;
    prompts_on(server, &fixture).await;
}

#[tokio::test]
async fn prompts_come_a_hundred_a_page() {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    // Only read: built once and shared.
    let many = crate::common::shared_tree("prompts-1200-skills-v1", |root| {
        for i in 0..1200 {
            let skill = root.join(format!("skill-{i:04}"));
            std::fs::create_dir(&skill).unwrap();
            let text = format!("---\nname: skill-{i:04}\ndescription: Skill number {i}.\n---\n");
            std::fs::write(skill.join("SKILL.md"), text).unwrap();
        }
    });
    let server = fixture
        .serve(&[
            "--skills-dir",
            many.to_str().unwrap(),
            "--no-user",
            "--no-project",
            "--no-watch",
        ])
        .await;
    let first = server.client.list_prompts(None).await.unwrap();
    assert_eq!(first.prompts.len(), 100);
    // Opaque: not the offset it names.
    let cursor = first.next_cursor.as_deref().expect("a second page");
    assert_ne!(cursor, "100");
    let mut all = first.prompts.len();
    let mut cursor = first.next_cursor;
    let mut pages = 1;
    while let Some(next) = cursor {
        let page = server
            .client
            .list_prompts(Some(
                PaginatedRequestParams::default().with_cursor(Some(next)),
            ))
            .await
            .unwrap();
        all += page.prompts.len();
        cursor = page.next_cursor;
        pages += 1;
    }
    assert_eq!((all, pages), (1201, 13));
    let bad = server
        .client
        .list_prompts(Some(
            PaginatedRequestParams::default().with_cursor(Some("oops".into())),
        ))
        .await;
    assert!(matches!(bad, Err(ServiceError::McpError(e)) if e.code.0 == -32602));

    // Completion: prefix matches, at most 100, with the total.
    let complete = |value: &str| {
        CompleteRequestParams::new(
            Reference::for_prompt("skill"),
            ArgumentInfo::new("name", value),
        )
    };
    let result = server.client.complete(complete("skill-00")).await.unwrap();
    assert_eq!(result.completion.values.len(), 100);
    assert_eq!(result.completion.values[0], "skill-0000");
    assert_eq!(result.completion.total, Some(100));
    assert_eq!(result.completion.has_more, Some(false));
    let result = server.client.complete(complete("")).await.unwrap();
    assert_eq!(result.completion.values.len(), 100);
    assert_eq!(result.completion.total, Some(1200));
    assert_eq!(result.completion.has_more, Some(true));
    server.stop().await;
}

#[tokio::test]
async fn completion_offers_prefixes_first_then_similar_names() {
    let fixture = Fixture::new();
    let server = fixture.serve(ARGS).await;
    let complete = |prompt: &str, argument: &str, value: &str| {
        CompleteRequestParams::new(
            Reference::for_prompt(prompt),
            ArgumentInfo::new(argument, value),
        )
    };
    let values = |result: rmcp::model::CompleteResult| result.completion.values;
    // Prefix of a full name, and of a short name (`lint` of `team:lint`).
    assert_eq!(
        values(
            server
                .client
                .complete(complete("skill", "name", "c"))
                .await
                .unwrap()
        ),
        ["canvas-design", "code-fences", "crlf-skill"]
    );
    assert_eq!(
        values(
            server
                .client
                .complete(complete("skill", "name", "LI"))
                .await
                .unwrap()
        ),
        ["team:lint"]
    );
    // A typo finds the skill after the prefix matches (none here).
    assert_eq!(
        values(
            server
                .client
                .complete(complete("skill", "name", "cnavas"))
                .await
                .unwrap()
        )[0],
        "canvas-design"
    );
    // Other prompts and arguments complete to nothing.
    assert!(
        values(
            server
                .client
                .complete(complete("canvas-design", "task", "x"))
                .await
                .unwrap()
        )
        .is_empty()
    );
    server.stop().await;
}

#[tokio::test]
async fn no_prompts_switches_prompts_and_completion_off() {
    let fixture = Fixture::new();
    let mut args = ARGS.to_vec();
    args.push("--no-prompts");
    let server = fixture.serve(&args).await;
    let info = serde_json::to_value(server.client.peer_info().unwrap()).unwrap();
    assert!(info["capabilities"].get("prompts").is_none(), "{info}");
    assert!(
        matches!(server.client.list_prompts(None).await, Err(ServiceError::McpError(e)) if e.code.0 == -32601)
    );
    server.stop().await;
}

#[tokio::test]
async fn adding_a_skill_changes_the_prompts_and_resources_lists_on_both_protocols() {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    fixture.write(
        "skills/alpha/SKILL.md",
        "---\nname: alpha\ndescription: First.\n---\n",
    );
    let args = ["--skills-dir", "skills", "--no-project", "--no-plugins"];
    let mut old = fixture.serve(&args).await;
    old.watching().await;
    let new = Server::start_2026(fixture.command(&args)).await;
    // A 2026-07-28 session starts with its first request after discovery.
    assert_eq!(new.client.list_all_prompts().await.unwrap().len(), 2);
    new.watching().await;
    let mut subscription = new
        .client
        .peer()
        .listen(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .resources_list_changed()
                .build(),
        )
        .await
        .unwrap();
    assert_eq!(subscription.acknowledged().prompts_list_changed, Some(true));

    fixture.write(
        "skills/beta/SKILL.md",
        "---\nname: beta\ndescription: Added.\n---\n",
    );
    let mut heard = Vec::new();
    while heard.len() < 2 {
        let kind = tokio::time::timeout(Duration::from_secs(10), old.list_changes.recv())
            .await
            .expect("list changes on 2025-11-25");
        heard.push(kind.unwrap());
    }
    assert_eq!(heard, ["prompts", "resources"]);
    let mut kinds = Vec::new();
    while kinds.len() < 3 {
        let notification = tokio::time::timeout(Duration::from_secs(10), subscription.next())
            .await
            .expect("notifications on the listen stream")
            .unwrap()
            .unwrap();
        kinds.push(
            serde_json::to_value(&notification).unwrap()["method"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed"
        ]
    );
    for server in [&old, &new] {
        let prompts = server.client.list_all_prompts().await.unwrap();
        let names: Vec<String> = prompts.into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["skill", "alpha", "beta"]);
        let resources = server.client.list_all_resources().await.unwrap();
        let uris: Vec<String> = resources.into_iter().map(|r| r.uri).collect();
        assert_eq!(uris, ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]);
        assert_eq!(server.client.list_all_skills().await.unwrap().len(), 2);
    }
    old.stop().await;
    new.stop().await;
}
