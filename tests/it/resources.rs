//! A skill is a folder, over MCP (behaviour.md §9, §11): the `skill` tool's
//! `file` argument, `skill://` resources and the skills extension
//! (`skills/list`, `skills/get`, `resources/directory/read`), through the real
//! binary with rmcp's client on 2025-11-25 and 2026-07-28 connections.

use crate::common::{
    FILES_ARGS as ARGS, Fixture, Raw, Server, assert_no_secret, blocks, files_fixture as fixture,
    is_error, raw_exchange, sha256_digest, text,
};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use rmcp::model::{
    CompletionContext, GetSkillRequestParams, PaginatedRequestParams,
    ReadResourceDirectoryRequestParams, ReadResourceRequestParams, ResourceContents,
    SkillResources,
};
use rmcp::service::ServiceError;
use serde_json::json;
use std::time::Duration;

/// The JSON-RPC error code of a failed request.
fn code<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> i32 {
    match result {
        Err(ServiceError::McpError(error)) => error.code.0,
        other => panic!("expected an MCP error, got {other:?}"),
    }
}

/// Files a client may ask for, and ones it must be refused.
const FILES: &[&str] = &[
    "references/forms.md",
    "./references//forms.md",
    "links/refs/nested/deep.md",
    "SKILL.md",
    "references/",
    ".",
    "assets/data.bin",
    "assets/logo.png",
    "reference/form.md",
    "%2e%2e/outside.txt",
    "../outside.txt",
    "references/../../outside.txt",
    "/etc/passwd",
    "references\\forms.md",
    ".secret",
    ".git/config",
    "node_modules/x.js",
    "links/secret",
    "links/escape",
    "links/passwd",
    "links/up/outside.txt",
    "pipe",
    "forms\n.md",
    "REFERENCES/FORMS.MD",
];

#[tokio::test]
async fn the_file_argument_answers_what_show_prints() {
    let fixture = fixture();
    let server = fixture.serve(ARGS).await;
    for file in FILES {
        let result = server
            .call_with(rmcp::object!({ "name": "pdf", "file": file }))
            .await;
        let mut args = vec!["show", "pdf", file];
        args.extend(ARGS);
        let out = fixture.run(&args);
        let (shown, failed) = match out.status.code() {
            Some(0) => (out.stdout, false),
            Some(1) => (out.stderr, true),
            other => panic!("{file:?}: exit {other:?}"),
        };
        assert_eq!(is_error(&result), failed, "{file:?}: {result:?}");
        assert_eq!(text(&result).trim_end(), shown.trim_end(), "{file:?}");
        for block in &result.content {
            assert_no_secret(file, &serde_json::to_string(block).unwrap());
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn a_load_lists_the_files_and_an_image_comes_as_an_image_block() {
    let fixture = fixture();
    let server = fixture.serve(ARGS).await;
    let result = server.call("pdf").await;
    assert!(!is_error(&result));
    let texts = blocks(&result);
    assert_eq!(texts.len(), 2, "{texts:?}");
    // `show` prints the blocks one after the other (its exact text is
    // tested in `files.rs`).
    let mut args = vec!["show", "pdf"];
    args.extend(ARGS);
    let shown = fixture.run(&args).stdout;
    assert_eq!(format!("{}\n{}\n", texts[0], texts[1]), shown);
    assert!(texts[1].starts_with("Files in this skill (call skill with {\"name\": \"pdf\", \"file\": \"assets/data.bin\"} to read one):\n- assets/data.bin (1.0 KB)\n"));
    assert_eq!(blocks(&server.call("plain").await).len(), 1);

    let result = server
        .call_with(rmcp::object!({ "name": "pdf", "file": "assets/logo.png" }))
        .await;
    assert!(!is_error(&result));
    assert_eq!(result.content.len(), 2);
    assert_eq!(
        fixture.anonymize(text(&result)),
        "Loading: pdf/assets/logo.png\nBase directory: <T>/files/pdf\n\nassets/logo.png is an image (image/png, 69 B)."
    );
    let image = result.content[1].as_image().expect("an image block");
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(
        BASE64.decode(&image.data).unwrap(),
        std::fs::read(fixture.path("files/pdf/assets/logo.png")).unwrap()
    );

    // `file` must be a string; `null` is as if it were not given.
    let result = server
        .call_with(rmcp::object!({ "name": "pdf", "file": 3 }))
        .await;
    assert!(is_error(&result));
    assert_eq!(
        text(&result),
        "Invalid params: `file`, when given, must be a string naming a file inside the skill's folder. Example: {\"name\": \"pdf\", \"file\": \"references/forms.md\"}"
    );
    assert_eq!(
        result.structured_content.as_ref().unwrap()["error"]["code"],
        -32602
    );
    let result = server
        .call_with(rmcp::object!({ "name": "pdf", "file": null }))
        .await;
    assert_eq!(blocks(&result).len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn resources_and_skills_on_a_2025_connection() {
    let fixture = fixture();
    let server = fixture.serve(ARGS).await;
    resources_on(server, &fixture, -32002).await;
}

#[tokio::test]
async fn resources_and_skills_on_a_2026_connection() {
    let fixture = fixture();
    let server = Server::start_2026(fixture.command(ARGS)).await;
    // On 2026-07-28, "resource not found" is invalid params.
    resources_on(server, &fixture, -32602).await;
}

/// The URI, MIME type and bytes of resource contents, and whether they came
/// as text.
fn unpack(contents: &ResourceContents) -> (&str, Option<&str>, Vec<u8>, bool) {
    match contents {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } => (uri, mime_type.as_deref(), text.as_bytes().to_vec(), true),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => (
            uri,
            mime_type.as_deref(),
            BASE64.decode(blob).unwrap(),
            false,
        ),
        other => panic!("unexpected contents: {other:?}"),
    }
}

fn read(uri: &str) -> ReadResourceRequestParams {
    ReadResourceRequestParams::new(uri)
}

/// Every resource and skills-extension answer on the `files` fixture, with
/// `not_found` the code of an unknown or refused URI.
async fn resources_on(server: Server, fixture: &Fixture, not_found: i32) {
    let client = &server.client;
    let info = serde_json::to_value(client.peer_info().unwrap()).unwrap();
    assert_eq!(
        info["capabilities"]["resources"],
        json!({"listChanged": true})
    );
    assert_eq!(
        info["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {"directoryRead": true}})
    );

    let listed = serde_json::to_value(client.list_all_resources().await.unwrap()).unwrap();
    assert_eq!(
        listed,
        json!([
            {"uri": "skill://pdf/SKILL.md", "name": "pdf", "mimeType": "text/markdown",
             "description": "Fill PDF forms; a skill with references, scripts and assets."},
            {"uri": "skill://plain/SKILL.md", "name": "plain", "mimeType": "text/markdown",
             "description": "A skill with no other files."}
        ])
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(
        serde_json::to_value(templates).unwrap(),
        json!([
            {"uriTemplate": "skill://{name}/SKILL.md", "name": "skill", "title": "A skill's SKILL.md",
             "description": "The instructions of the skill `name` (a plugin skill `plugin:skill` is `plugin/skill`).",
             "mimeType": "text/markdown"},
            {"uriTemplate": "skill://{name}/{+path}", "name": "skill-file", "title": "A file of a skill",
             "description": "Any file in the skill `name`'s folder, `path` relative to it (e.g. `references/forms.md`)."}
        ])
    );

    // Text byte for byte, binaries as blobs, the type by extension.
    for (path, mime) in [
        ("SKILL.md", "text/markdown"),
        ("references/forms.md", "text/markdown"),
        ("scripts/fill_form.py", "text/x-python"),
        ("links/refs/nested/deep.md", "text/markdown"),
        ("assets/logo.png", "image/png"),
        ("assets/data.bin", "application/octet-stream"),
    ] {
        let uri = format!("skill://pdf/{path}");
        let result = client.read_resource(read(&uri)).await.expect(&uri);
        assert_eq!(result.contents.len(), 1);
        let on_disk = std::fs::read(fixture.path(&format!("files/pdf/{path}"))).unwrap();
        let (got, mime_type, bytes, as_text) = unpack(&result.contents[0]);
        assert_eq!((got, mime_type), (uri.as_str(), Some(mime)));
        assert_eq!(as_text, !path.starts_with("assets/"), "{path}");
        assert_eq!(bytes, on_disk, "{path}");
    }

    // Unknown, refused and folder URIs.
    for uri in [
        "skill://nope/SKILL.md",
        "skill://pdf/nope.md",
        "skill://pdf/%2e%2e/outside.txt",
        "skill://pdf/references/%2E%2E/%2E%2E/outside.txt",
        "skill://pdf/../outside.txt",
        "skill://pdf/.secret",
        "skill://pdf/.git/config",
        "skill://pdf/node_modules/x.js",
        "skill://pdf/links/escape",
        "skill://pdf/links/up/outside.txt",
        "skill://pdf/links/secret",
        "skill://pdf/pipe",
        "skill://pdf/%2Fetc%2Fpasswd",
        "skill://pdf/references",
        "file:///etc/passwd",
        "skill://pdf/SKILL.md?x=1",
    ] {
        let result = client.read_resource(read(uri)).await;
        let debug = format!("{result:?}");
        assert_no_secret(uri, &debug);
        assert_eq!(code(result), not_found, "{uri}");
    }

    let unknown = client.read_resource(read("skill://nope/SKILL.md")).await;
    let Err(ServiceError::McpError(error)) = unknown else {
        panic!("{unknown:?}");
    };
    assert_eq!(
        (error.message.as_ref(), error.data),
        (
            "Resource not found: skill://nope/SKILL.md: no served skill has that address; resources/list lists every skill's SKILL.md",
            Some(json!({"uri": "skill://nope/SKILL.md"}))
        )
    );

    // Directories: the direct children, folders as `inode/directory`.
    let children = |uri: &str| {
        let uri = uri.to_owned();
        async move {
            let result = client
                .read_resource_directory(ReadResourceDirectoryRequestParams::new(&uri))
                .await
                .expect(&uri);
            assert_eq!(result.next_cursor, None);
            serde_json::to_value(result.resources).unwrap()
        }
    };
    assert_eq!(
        children("skill://pdf").await,
        json!([
            {"uri": "skill://pdf/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown", "size": 173},
            {"uri": "skill://pdf/assets", "name": "assets", "mimeType": "inode/directory"},
            {"uri": "skill://pdf/links", "name": "links", "mimeType": "inode/directory"},
            {"uri": "skill://pdf/references", "name": "references", "mimeType": "inode/directory"},
            {"uri": "skill://pdf/scripts", "name": "scripts", "mimeType": "inode/directory"}
        ])
    );
    assert_eq!(
        children("skill://pdf/").await,
        children("skill://pdf").await
    );
    assert_eq!(
        children("skill://pdf/references").await,
        json!([
            {"uri": "skill://pdf/references/forms.md", "name": "forms.md", "mimeType": "text/markdown", "size": 63},
            {"uri": "skill://pdf/references/nested", "name": "nested", "mimeType": "inode/directory"}
        ])
    );
    assert_eq!(
        children("skill://pdf/assets").await,
        json!([
            {"uri": "skill://pdf/assets/data.bin", "name": "data.bin", "size": 1024},
            {"uri": "skill://pdf/assets/logo.png", "name": "logo.png", "mimeType": "image/png", "size": 69}
        ])
    );
    for uri in [
        "skill://pdf/SKILL.md",
        "skill://pdf/nope",
        "skill://pdf/.git",
        "skill://nope",
    ] {
        let result = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(uri))
            .await;
        assert_eq!(code(result), -32602, "{uri}");
    }

    // skills/list: every file with the SHA-256 of its bytes.
    let listed = client.list_skills(None).await.unwrap();
    assert_eq!(listed.next_cursor, None);
    assert_eq!(listed.ttl_ms, Some(30_000));
    let names: Vec<&str> = listed.skills.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["pdf", "plain"]);
    let pdf = &listed.skills[0];
    assert_eq!(pdf.uri, "skill://pdf/SKILL.md");
    assert_eq!(
        serde_json::to_value(&pdf.frontmatter).unwrap(),
        json!({"name": "pdf", "description": "Fill PDF forms; a skill with references, scripts and assets."})
    );
    let SkillResources::Files(files) = &pdf.resources else {
        panic!("pdf's files are listed: {pdf:?}");
    };
    let uris: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://pdf/SKILL.md",
            "skill://pdf/assets/data.bin",
            "skill://pdf/assets/logo.png",
            "skill://pdf/links/forms.md",
            "skill://pdf/links/refs/forms.md",
            "skill://pdf/links/refs/nested/deep.md",
            "skill://pdf/references/forms.md",
            "skill://pdf/references/nested/deep.md",
            "skill://pdf/scripts/fill_form.py",
        ]
    );
    for file in files {
        let path = file.uri.strip_prefix("skill://pdf/").unwrap();
        let on_disk = std::fs::read(fixture.path(&format!("files/pdf/{path}"))).unwrap();
        assert_eq!(
            (file.digest.as_str(), file.size),
            (sha256_digest(&on_disk).as_str(), on_disk.len() as u64),
            "{path}"
        );
        // What resources/read returns is what the digest promises.
        let read = client.read_resource(read(&file.uri)).await.unwrap();
        file.verify(&unpack(&read.contents[0]).2).expect(path);
    }
    // `sha256sum fixtures/files/pdf/SKILL.md`
    assert_eq!(
        files[0].digest,
        "sha256:69dd144eddc8d598d7e4106044662c82739d5ed817e3b2649e28b552eb3996c7"
    );

    // skills/get: the same entry; other URIs are invalid params.
    let got = client
        .get_skill(GetSkillRequestParams::new("skill://pdf/SKILL.md"))
        .await
        .unwrap();
    assert_eq!(&got.skill, pdf);
    assert_eq!(got.ttl_ms, Some(30_000));
    for uri in [
        "skill://nope/SKILL.md",
        "skill://PDF/SKILL.md",
        "skill://pdf/references/SKILL.md",
    ] {
        let result = client.get_skill(GetSkillRequestParams::new(uri)).await;
        assert_eq!(code(result), -32602, "{uri}");
    }

    // Completion of the templates' arguments.
    let completed = client
        .complete_resource_argument("skill://{name}/SKILL.md", "name", "pl", None)
        .await
        .unwrap();
    assert_eq!(completed.values, ["plain"]);
    let context = CompletionContext::with_arguments([("name".to_owned(), "pdf".to_owned())].into());
    let completed = client
        .complete_resource_argument("skill://{name}/{+path}", "path", "ref", Some(context))
        .await
        .unwrap();
    assert_eq!(
        completed.values,
        ["references/forms.md", "references/nested/deep.md"]
    );
    server.stop().await;
}

#[tokio::test]
async fn a_name_the_extension_refuses_is_left_out_of_skills_list_but_served() {
    let fixture = fixture();
    fixture.write(
        "files/pdf-tools/SKILL.md",
        "---\nname: PDF_Tools\ndescription: Tools with a name the spec refuses.\n---\n\nBody.\n",
    );
    let server = fixture.serve(ARGS).await;
    let listed = server.client.list_all_skills().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["pdf", "plain"]);
    let result = server.call("PDF_Tools").await;
    assert!(!is_error(&result));
    assert!(text(&result).ends_with("Body.\n"));
    let resources = server.client.list_all_resources().await.unwrap();
    assert!(
        resources
            .iter()
            .any(|r| r.uri == "skill://PDF_Tools/SKILL.md")
    );
    let read = server
        .client
        .read_resource(read("skill://PDF_Tools/SKILL.md"))
        .await
        .unwrap();
    let (_, _, bytes, as_text) = unpack(&read.contents[0]);
    assert!(as_text && bytes.ends_with(b"Body.\n"));
    let refused = server
        .client
        .get_skill(GetSkillRequestParams::new("skill://PDF_Tools/SKILL.md"))
        .await;
    let Err(ServiceError::McpError(error)) = refused else {
        panic!("{refused:?}");
    };
    assert_eq!(error.code.0, -32602);
    assert!(
        error
            .message
            .contains("the skill 'PDF_Tools' is not offered through the skills extension"),
        "{}",
        error.message
    );
    server.stop().await;

    // `check` says why.
    let mut args = vec!["check"];
    args.extend(ARGS);
    let out = fixture.run(&args);
    assert!(
        out.stdout.contains("note[not-in-skills-list]: 'PDF_Tools' is left out of `skills/list` (the MCP skills extension): invalid skill name \"PDF_Tools\""),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn twelve_hundred_skills_come_in_pages_of_a_hundred() {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    // Only read: built once and shared.
    let skills = crate::common::shared_tree("resources-1200-skills-v1", |root| {
        for i in 0..1200 {
            let skill = root.join(format!("s{i:04}"));
            std::fs::create_dir(&skill).unwrap();
            let text = format!("---\nname: s{i:04}\ndescription: Skill {i}.\n---\n");
            std::fs::write(skill.join("SKILL.md"), text).unwrap();
        }
    });
    let skills = skills.to_str().unwrap();
    let args = ["--skills-dir", skills, "--no-project", "--no-plugins"];
    let server = fixture.serve(&args).await;
    let mut cursor: Option<String> = None;
    let (mut resources, mut pages) = (Vec::new(), 0);
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let page = server.client.list_resources(Some(params)).await.unwrap();
        assert_eq!(page.resources.len(), 100);
        resources.extend(page.resources.into_iter().map(|r| r.uri));
        pages += 1;
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(pages, 12);
    let expected: Vec<String> = (0..1200)
        .map(|i| format!("skill://s{i:04}/SKILL.md"))
        .collect();
    assert_eq!(resources, expected);

    let pages = skill_pages(&server).await;
    let skills: Vec<&str> = pages
        .iter()
        .flat_map(|page| page["skills"].as_array().unwrap())
        .map(|skill| skill["uri"].as_str().unwrap())
        .collect();
    assert_eq!(pages.len(), 12);
    for page in &pages {
        assert_eq!(page["skills"].as_array().unwrap().len(), 100);
    }
    assert_eq!(skills, expected);
    let bad = PaginatedRequestParams::default().with_cursor(Some("1201".to_owned()));
    assert_eq!(code(server.client.list_skills(Some(bad)).await), -32602);
    server.stop().await;

    // A 2026-07-28 request names its version in `_meta`, so rmcp's dispatch
    // answers it and checks each page; a 2025-11-25 session's pages are
    // answered without that check. The same pages either way, but for the
    // `resultType` that only 2026-07-28 results carry.
    assert!(pages.iter().all(|page| page.get("resultType").is_none()));
    let server = Server::start_2026(fixture.command(&args)).await;
    let mut stateless = skill_pages(&server).await;
    for page in &mut stateless {
        let page = page.as_object_mut().unwrap();
        assert_eq!(
            page.remove("resultType"),
            Some(serde_json::Value::from("complete"))
        );
    }
    assert_eq!(stateless, pages);
    server.stop().await;
}

/// On stdio, the page after the one a client asked for is made while it
/// reads that one: a walk gets the same entries `skills/get` gives, and the
/// pages after the first are served from the ones made ahead. A page made
/// ahead is not served once it is a second old: a file changed meanwhile
/// shows with its new digest.
#[tokio::test]
async fn the_next_skills_list_page_is_made_ahead_and_never_served_stale() {
    let fixture = catalog(250, 1);
    let server = serve_catalog(&fixture, "warn,skillserve::server::handler=debug").await;

    let pages = skill_pages(&server).await;
    assert_eq!(pages.len(), 3);
    server
        .stderr()
        .wait_for("a skills/list page made ahead is served", 2)
        .await;
    for entry in pages
        .iter()
        .flat_map(|page| page["skills"].as_array().unwrap())
    {
        let uri = entry["uri"].as_str().unwrap();
        let got = server
            .client
            .get_skill(GetSkillRequestParams::new(uri))
            .await
            .unwrap();
        assert_eq!(serde_json::to_value(&got.skill).unwrap(), *entry, "{uri}");
    }

    // The second page is made ahead as the first is answered; a file of
    // it changes, and the page is asked for after more than a second.
    let first = server.client.list_skills(None).await.unwrap();
    let changed = "many/skill-0150/references/r00.md";
    fixture.write(changed, "changed\n");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let params = PaginatedRequestParams::default().with_cursor(first.next_cursor);
    let second =
        serde_json::to_value(server.client.list_skills(Some(params)).await.unwrap()).unwrap();
    let skill = second["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["uri"] == "skill://skill-0150/SKILL.md")
        .expect("skill-0150 is on the second page");
    let file = skill["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|file| file["uri"] == "skill://skill-0150/references/r00.md")
        .unwrap();
    assert_eq!(file["digest"], sha256_digest(b"changed\n"));
    server.stop().await;
}

/// A skill folder that held only `SKILL.md` when the server scanned it is
/// checked at each call (one `stat`, not a walk): a file added since is
/// listed at the next call, with no rescan (unwatched, within the interval),
/// and none once it is gone again.
#[tokio::test]
async fn a_file_added_to_a_one_file_skill_is_listed_at_its_next_call() {
    let fixture = catalog(2, 0);
    // Unchanged for an hour: a folder changed within the last seconds is not
    // marked (an entry added in the same clock tick could leave its stamp).
    let past = std::time::SystemTime::now() - Duration::from_secs(3600);
    for skill in ["skill-0000", "skill-0001"] {
        let folder = std::fs::File::open(fixture.path(&format!("many/{skill}"))).unwrap();
        folder.set_modified(past).unwrap();
    }
    let server = serve_catalog(&fixture, "warn").await;
    assert_eq!(blocks(&server.call("skill-0000").await).len(), 1);
    fixture.write("many/skill-0000/notes.md", "added\n");
    let result = server.call("skill-0000").await;
    assert_eq!(
        blocks(&result),
        [
            "Loading: skill-0000\nBase directory: ".to_owned()
                + &fixture.path("many/skill-0000").display().to_string()
                + "\n\n---\nname: skill-0000\ndescription: Skill number 0.\n---\n",
            "Files in this skill (call skill with {\"name\": \"skill-0000\", \"file\": \"notes.md\"} to read one):\n- notes.md (6 B)".to_owned(),
        ]
    );
    std::fs::remove_file(fixture.path("many/skill-0000/notes.md")).unwrap();
    assert_eq!(blocks(&server.call("skill-0000").await).len(), 1);
    // The other skill's folder is untouched.
    assert_eq!(blocks(&server.call("skill-0001").await).len(), 1);
    server.stop().await;
}

/// A catalog of `skills` skills (`skill-0000`, ...) in the folder `many`,
/// each with `files` reference files besides its `SKILL.md`.
fn catalog(skills: usize, files: usize) -> Fixture {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    for i in 0..skills {
        let name = format!("skill-{i:04}");
        fixture.write(
            &format!("many/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: Skill number {i}.\n---\n"),
        );
        for j in 0..files {
            fixture.write(
                &format!("many/{name}/references/r{j:02}.md"),
                &format!("{i} {j}\n"),
            );
        }
    }
    fixture
}

/// The server of [`catalog`]'s skills alone, unwatched, logging as `log` says.
async fn serve_catalog(fixture: &Fixture, log: &str) -> Server {
    let args = [
        "--skills-dir",
        "many",
        "--no-user",
        "--no-project",
        "--no-plugins",
        "--no-watch",
    ];
    fixture.serve_logged(&args, log).await
}

/// Every `skills/list` page, as JSON, following the cursors.
async fn skill_pages(server: &Server) -> Vec<serde_json::Value> {
    let mut cursor: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let page = server.client.list_skills(Some(params)).await.unwrap();
        cursor = page.next_cursor.clone();
        pages.push(serde_json::to_value(page).unwrap());
        if cursor.is_none() {
            return pages;
        }
    }
}

/// A session opened by a request with its own metadata (the 2026-07-28
/// lifecycle) requires it in every request, also after an `initialize`:
/// `skills/list` is refused without it, as `resources/list` is (rmcp's
/// dispatch refuses both).
#[test]
fn skills_list_in_a_session_opened_inline_needs_its_metadata() {
    let fixture = fixture();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
    });
    let mut raw = Raw::spawn(&mut fixture.command(ARGS));
    // One at a time: each answer before the next request.
    let mut ask = |id: u64, method: &str, params: serde_json::Value| {
        raw.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = raw.next_message(Duration::from_secs(20)).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    };
    let tools = ask(0, "tools/list", json!({"_meta": meta}));
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    let initialized = ask(
        1,
        "initialize",
        json!({
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}),
    );
    assert_eq!(
        initialized["result"]["protocolVersion"], "2025-11-25",
        "{initialized}"
    );
    let resources = ask(2, "resources/list", json!({}));
    assert_eq!(resources["error"]["code"], -32602, "{resources}");
    let skills = ask(3, "skills/list", json!({}));
    assert_eq!(skills["error"], resources["error"]);
    let skills = ask(4, "skills/list", json!({"_meta": meta}));
    assert_eq!(
        skills["result"]["skills"][0]["uri"], "skill://pdf/SKILL.md",
        "{skills}"
    );
    raw.close_stdin();
    assert!(raw.finish().success());
}

#[test]
fn no_resources_switches_resources_and_the_skills_extension_off() {
    let fixture = fixture();
    let mut args = vec!["--no-resources"];
    args.extend(ARGS);
    let lines = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "skill://pdf/SKILL.md"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "skills/list"}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "resources/directory/read", "params": {"uri": "skill://pdf"}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "skill", "arguments": {"name": "pdf", "file": "references/forms.md"}}}),
    ];
    let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let (responses, _) = raw_exchange(fixture.command(&args), &lines, 6);
    let capabilities = &responses[&0]["result"]["capabilities"];
    assert!(capabilities.get("resources").is_none(), "{capabilities}");
    assert!(capabilities.get("extensions").is_none(), "{capabilities}");
    for id in 1..=4 {
        assert_eq!(
            responses[&id]["error"]["code"], -32601,
            "{}",
            responses[&id]
        );
    }
    assert_eq!(
        responses[&1]["error"]["message"],
        "method not found: resources/list (skillserve runs with --no-resources)"
    );
    // The tool still serves a skill's files.
    let text = responses[&5]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.starts_with("Loading: pdf/references/forms.md\n"),
        "{text}"
    );
}

/// The digests of a whole catalog are kept: a second walk through
/// `skills/list` hashes nothing, also past the 16,384 digests an earlier
/// cache held (1,100 skills of 16 files here). Read from the debug line of
/// each page.
#[tokio::test]
async fn a_second_skills_list_walk_hashes_nothing_however_many_files() {
    let fixture = catalog(1100, 15);
    let server = serve_catalog(&fixture, "info,skillserve::server::skills=debug").await;
    let tally = |log: &str| -> (usize, usize) {
        log.lines()
            .filter_map(|line| line.split("skills/list: ").nth(1))
            .map(|rest| {
                let number = |word: &str| -> usize {
                    let before = rest.split(word).next().unwrap();
                    before.rsplit(' ').next().unwrap().parse().unwrap()
                };
                (number(" hashed"), number(" digests kept"))
            })
            .fold((0, 0), |(h, k), (a, b)| (h + a, k + b))
    };
    // Eleven pages of 100 skills a walk; each page's line is logged before
    // it is answered, and collected from stderr as it comes.
    let walk = |pages: usize| {
        let server = &server;
        async move {
            let skills = server.client.list_all_skills().await.unwrap();
            assert_eq!(skills.len(), 1100);
            server.stderr().wait_for("skills/list: ", pages).await;
        }
    };
    walk(11).await;
    let first = tally(&server.stderr().text());
    assert_eq!(first, (17_600, 0));
    walk(22).await;
    let both = tally(&server.stderr().text());
    assert_eq!((both.0 - first.0, both.1 - first.1), (0, 17_600));
    server.stop().await;
}
