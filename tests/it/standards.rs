//! To the letter of the standards (behaviour.md §10, §11): the skills
//! extension's entries carry the frontmatter exactly as YAML gives it; `list`
//! and `check` say where skills hide in hidden folders; the skills' prompts
//! come before the `skill` prompt, which answers a name it cannot load with
//! the tool's text. Through the real binary.

use rmcp::model::{GetPromptRequestParams, GetSkillRequestParams};
use serde_json::json;

use crate::common::Fixture;

const ARGS: &[&str] = &[
    "--skills-dir",
    "skills",
    "--no-user",
    "--no-project",
    "--no-plugins",
];

/// Skills whose descriptions YAML does not hand back as they are typed.
fn written() -> Fixture {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    fixture.write(
        "skills/literal/SKILL.md",
        "---\nname: literal\ndescription: |\n  First line.\n  Second  line, two spaces.\nlicense: MIT\nversion: 1.0\nmetadata:\n  tags: [pdf, forms]\n  nested:\n    on: true\n    count: 3\n---\n\nBody.\n",
    );
    fixture.write(
        "skills/folded/SKILL.md",
        "---\nname: folded\ndescription: >\n  Folded\n  into one line.\n\n  A second paragraph.\n---\n\nBody.\n",
    );
    fixture.write(
        "skills/plain/SKILL.md",
        "---\nname: plain\ndescription: A plain scalar\n  over  two lines\n---\n\nBody.\n",
    );
    fixture.write(
        "skills/nameless/SKILL.md",
        "---\ndescription: No name of its own.\n---\n\nBody.\n",
    );
    fixture.write(
        "skills/undescribed/SKILL.md",
        "---\nname: undescribed\n---\n\nThe body says what it does.\n",
    );
    fixture.write(
        "skills/long/SKILL.md",
        &format!(
            "---\nname: long\ndescription: {}\n---\n",
            "word ".repeat(206)
        ),
    );
    fixture
}

#[tokio::test]
async fn skills_list_and_skills_get_show_the_frontmatter_as_written() {
    let fixture = written();
    let server = fixture.serve(ARGS).await;
    let listed = server.client.list_all_skills().await.unwrap();
    let frontmatter: Vec<serde_json::Value> = listed
        .iter()
        .map(|entry| serde_json::to_value(&entry.frontmatter).unwrap())
        .collect();
    assert_eq!(
        frontmatter,
        [
            json!({"name": "folded", "description": "Folded into one line.\nA second paragraph.\n"}),
            json!({
                "name": "literal",
                "description": "First line.\nSecond  line, two spaces.\n",
                "license": "MIT",
                "version": 1.0,
                "metadata": {"tags": ["pdf", "forms"], "nested": {"on": true, "count": 3}}
            }),
            json!({"name": "plain", "description": "A plain scalar over  two lines"}),
        ]
    );
    for entry in &listed {
        let got = server
            .client
            .get_skill(GetSkillRequestParams::new(entry.uri.as_str()))
            .await
            .unwrap();
        assert_eq!(&got.skill, entry);
    }
    // Elsewhere the description is one line.
    let prompts = server.client.list_all_prompts().await.unwrap();
    let literal = prompts.iter().find(|p| p.name == "literal").unwrap();
    assert_eq!(
        literal.description.as_deref(),
        Some("First line. Second line, two spaces.")
    );
    assert!(
        server
            .description()
            .await
            .contains("- folded: Folded into one line. A second paragraph.\n"),
    );
    server.stop().await;

    let mut args = vec!["check"];
    args.extend(ARGS);
    let out = fixture.run(&args);
    let stdout = fixture.anonymize(&out.stdout);
    for note in [
        "<T>/skills/nameless/SKILL.md\n  \
         warning[name-missing]: no `name` (the spec requires one); 'nameless' is used\n    \
         fix: add `name: nameless`\n  \
         note[not-in-skills-list]: 'nameless' is left out of `skills/list` (the MCP skills extension): its frontmatter has no usable `name`, and an entry shows the frontmatter as written; the `skill` tool, prompts and resources still serve it\n    \
         fix: add `name: nameless` to the frontmatter\n",
        "note[not-in-skills-list]: 'undescribed' is left out of `skills/list` (the MCP skills extension): its frontmatter has no `description`, and an entry shows the frontmatter as written; the `skill` tool, prompts and resources still serve it\n    \
         fix: add a `description` that says what the skill does and when to use it\n",
        "note[not-in-skills-list]: 'long' is left out of `skills/list` (the MCP skills extension): its description has 1029 characters, over the 1024 the Agent Skills specification allows; the `skill` tool, prompts and resources still serve it\n    \
         fix: keep the description to 1024 characters: what the skill does and when to use it\n",
    ] {
        assert!(stdout.contains(note), "{note}\nnot in:\n{stdout}");
    }
}

/// `openai/skills` keeps its skills in `skills/.curated/` and
/// `skills/.system/`; `.git` is never counted.
fn hidden() -> Fixture {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    for (path, name) in [
        ("skills/.curated/pdf/SKILL.md", "pdf"),
        ("skills/.curated/docx/SKILL.md", "docx"),
        ("skills/.system/skill-creator/SKILL.md", "skill-creator"),
        ("skills/.git/objects/SKILL.md", "git"),
    ] {
        fixture.write(
            path,
            &format!("---\nname: {name}\ndescription: A hidden skill.\n---\n"),
        );
    }
    fixture
}

#[test]
fn list_says_how_many_skills_hidden_folders_hold_and_how_to_serve_them() {
    let fixture = hidden();
    let out = fixture.run(&[
        "list",
        "--skills-dir",
        "skills",
        "--no-user",
        "--no-project",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "No skills found. Looked in:\n  \
         custom   <T>/skills\n\
         note[hidden-skills] <T>/skills/.curated: 2 SKILL.md files below this hidden folder are not served: the scan skips hidden folders (to serve them, pass --skills-dir <T>/skills/.curated)\n\
         note[hidden-skills] <T>/skills/.system: 1 SKILL.md file below this hidden folder is not served: the scan skips hidden folders (to serve it, pass --skills-dir <T>/skills/.system)\n\
         0 errors, 0 warnings, 2 notes in 2 files; run `skillserve check` for details\n"
    );

    // Served as the note says.
    let out = fixture.run(&[
        "list",
        "--skills-dir",
        "skills/.curated",
        "--no-user",
        "--no-project",
    ]);
    assert!(
        out.stdout.contains("\n2 skills (custom 2)\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn check_says_how_many_skills_hidden_folders_hold_and_how_to_serve_them() {
    let fixture = hidden();
    let out = fixture.run(&[
        "check",
        "--skills-dir",
        "skills",
        "--no-user",
        "--no-project",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "<T>/skills/.curated\n  \
         note[hidden-skills]: 2 SKILL.md files below this hidden folder are not served: the scan skips hidden folders\n    \
         fix: to serve them, pass --skills-dir <T>/skills/.curated\n\
         \n\
         <T>/skills/.system\n  \
         note[hidden-skills]: 1 SKILL.md file below this hidden folder is not served: the scan skips hidden folders\n    \
         fix: to serve it, pass --skills-dir <T>/skills/.system\n\
         \n\
         0 errors, 0 warnings, 2 notes in 2 files (0 skills served).\n"
    );
    let json = fixture.run(&[
        "check",
        "--json",
        "--skills-dir",
        "skills",
        "--no-user",
        "--no-project",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["notes"], 2);
    assert_eq!(report["diagnostics"][0]["code"], "hidden-skills");
}

#[tokio::test]
async fn skill_prompts_come_first_and_the_skill_prompt_answers_any_name() {
    let fixture = written();
    let server = fixture.serve(ARGS).await;
    let prompts = server.client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "folded",
            "literal",
            "long",
            "nameless",
            "plain",
            "undescribed",
            "skill"
        ]
    );

    // What a test suite does: the first prompt, every argument "test".
    let first = server
        .client
        .get_prompt(
            GetPromptRequestParams::new("folded")
                .with_arguments(json!({"task": "test"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = serde_json::to_value(&first.messages[0]).unwrap()["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.starts_with("Loading: folded\n"), "{text}");
    assert!(text.ends_with("\n\nTask: test"), "{text}");

    // A name that is no skill: the tool's answer, as the message.
    let missing = server
        .client
        .get_prompt(
            GetPromptRequestParams::new("skill").with_arguments(
                json!({"name": "test", "task": "test"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    let message = serde_json::to_value(&missing.messages[0]).unwrap();
    assert_eq!(message["role"], "user");
    assert_eq!(
        message["content"]["text"],
        server.call("test").await.content[0].as_text().unwrap().text
    );
    assert!(
        message["content"]["text"]
            .as_str()
            .unwrap()
            .starts_with("Skill 'test' not found.")
    );
    server.stop().await;
}
