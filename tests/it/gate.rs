//! The gate through the real binary (behaviour.md §9, §12): a file or folder
//! swapped for a symlink out while requests go through never leaks what is
//! outside; listings, digests and completion hold a project's fence as calls
//! do; a skill's own symlinked `SKILL.md` is served wherever the `skill` tool
//! serves it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CompletionContext, GetSkillRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceRequestParams, ResourceContents, SkillResources,
};
use serde_json::{Value, json};

use crate::common::{Fixture, Raw, is_error, sha256_digest, sha256_hex, text};

/// How a run of requests went.
#[derive(Debug, Default)]
struct Tally {
    answers: usize,
    /// Answered with what was asked for.
    served: usize,
    /// Refused: an error, or a tool result flagged as one.
    refused: usize,
    /// Answers holding a secret: must stay 0.
    leaked: usize,
}

/// Sends `requests` round and round, at most `WINDOW` in flight, until
/// `total` answers have come, and looks for `secrets` in every one.
fn hammer(raw: &mut Raw, requests: &[Value], total: usize, secrets: &[String]) -> Tally {
    const WINDOW: usize = 16;
    let mut tally = Tally::default();
    let mut next = 0_usize;
    let mut id = 10_000_u64;
    while tally.answers < total {
        let mut batch = String::new();
        for _ in 0..WINDOW {
            let mut request = requests[next % requests.len()].clone();
            request["jsonrpc"] = json!("2.0");
            request["id"] = json!(id);
            id += 1;
            next += 1;
            batch.push_str(&request.to_string());
            batch.push('\n');
        }
        raw.send(batch.as_bytes());
        for _ in 0..WINDOW {
            let answer = raw
                .next_message(Duration::from_secs(20))
                .expect("an answer");
            let text = answer.to_string();
            tally.answers += 1;
            if secrets.iter().any(|secret| text.contains(secret.as_str())) {
                tally.leaked += 1;
                eprintln!("LEAKED: {}", &text[..text.len().min(400)]);
            }
            let refused = answer.get("error").is_some()
                || answer["result"]["isError"] == json!(true)
                || answer["result"]["skill"]["resources"] == json!("dynamic");
            if refused {
                tally.refused += 1;
            } else {
                tally.served += 1;
            }
        }
    }
    tally
}

/// Swaps `a` and `b` (`renameat2(RENAME_EXCHANGE)`) until told to stop;
/// returns the number of swaps.
#[cfg(target_os = "linux")]
fn swapper(
    a: std::path::PathBuf,
    b: std::path::PathBuf,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &a,
                rustix::fs::CWD,
                &b,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .expect("renameat2(RENAME_EXCHANGE)");
            swaps += 1;
        }
        swaps
    })
}

/// The requests of a race, all at the skill `race`.
fn race_requests(with_skill_md: bool) -> Vec<Value> {
    let mut requests = vec![
        json!({"method": "tools/call", "params": {"name": "skill", "arguments": {"name": "race", "file": "notes.md"}}}),
        json!({"method": "resources/read", "params": {"uri": "skill://race/notes.md"}}),
        json!({"method": "prompts/get", "params": {"name": "race"}}),
        json!({"method": "skills/get", "params": {"uri": "skill://race/SKILL.md"}}),
        json!({"method": "resources/directory/read", "params": {"uri": "skill://race"}}),
        json!({"method": "completion/complete", "params": {
            "ref": {"type": "ref/resource", "uri": "skill://{name}/{+path}"},
            "argument": {"name": "path", "value": ""},
            "context": {"arguments": {"name": "race"}}}}),
    ];
    if with_skill_md {
        requests.extend([
            json!({"method": "tools/call", "params": {"name": "skill", "arguments": {"name": "race"}}}),
            json!({"method": "resources/read", "params": {"uri": "skill://race/SKILL.md"}}),
        ]);
    }
    requests
}

/// Requests per race: enough for thousands of reads across the swaps, few
/// enough for a couple of seconds.
const RACE_ANSWERS: usize = 3_200;
/// Threads swapping at once: on a busy machine one of them is more likely to
/// run while the server is between a check and a read.
const SWAPPERS: usize = 3;

/// Starts the server, swaps `swapped` back and forth on [`SWAPPERS`]
/// threads while [`RACE_ANSWERS`] requests go through, and checks that no
/// answer held a secret, that some were served and that swaps happened.
#[cfg(target_os = "linux")]
fn race(
    command: std::process::Command,
    swapped: (&std::path::Path, &std::path::Path),
    with_skill_md: bool,
    secrets: &[String],
    label: &str,
) {
    let mut raw = Raw::start(command);
    let stop = Arc::new(AtomicBool::new(false));
    let swappers: Vec<_> = (0..SWAPPERS)
        .map(|_| {
            swapper(
                swapped.0.to_path_buf(),
                swapped.1.to_path_buf(),
                Arc::clone(&stop),
            )
        })
        .collect();
    let tally = hammer(
        &mut raw,
        &race_requests(with_skill_md),
        RACE_ANSWERS,
        secrets,
    );
    stop.store(true, Ordering::Relaxed);
    let swaps: usize = swappers.into_iter().map(|s| s.join().unwrap()).sum();
    eprintln!("race in a {label}: {swaps} swaps; {tally:?}");
    assert_eq!(tally.leaked, 0, "{tally:?}");
    assert!(tally.served > 0 && swaps > 0, "{tally:?}, {swaps} swaps");
    assert_eq!(raw.finish().code(), Some(0));
}

/// A skill's file swapped for a symlink to a secret outside, back and forth,
/// in a custom root (where the skill folder's own symlinks are followed, but
/// never out of it): no answer ever holds the secret.
#[cfg(target_os = "linux")]
#[test]
fn a_file_swapped_for_a_symlink_out_never_leaks_in_a_custom_root() {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    let secret = "SECRET-RACE-OUTSIDE\n";
    let outside = fixture.write("secret.txt", secret);
    fixture.write(
        "skills/race/SKILL.md",
        "---\nname: race\ndescription: A skill whose file is swapped.\n---\nBody.\n",
    );
    let notes = fixture.write("skills/race/notes.md", "Inside notes.\n");
    let swap = fixture.path("skills/race/swap");
    std::os::unix::fs::symlink(&outside, &swap).unwrap();
    let secrets = vec!["SECRET-RACE".to_owned(), sha256_hex(secret.as_bytes())];
    let args = [
        "--skills-dir",
        "skills",
        "--no-user",
        "--no-project",
        "--no-plugins",
        "--no-watch",
        "--refresh-interval",
        "0",
    ];
    race(
        fixture.command(&args),
        (&notes, &swap),
        false,
        &secrets,
        "custom root",
    );
}

/// A project skill's folder swapped for a symlink to a folder outside the
/// repository, back and forth: no answer of any surface (the tool, prompts,
/// resources, the skills extension, completion) holds anything from out
/// there, its text, its files' names or their digests.
#[cfg(target_os = "linux")]
#[test]
fn a_project_skill_folder_swapped_out_never_leaks() {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    let victim_md =
        "---\nname: race\ndescription: SECRET-RACE-DESCRIPTION\n---\nSECRET-RACE-BODY\n";
    let victim_notes = "SECRET-RACE-NOTES\n";
    fixture.write("victim/race/SKILL.md", victim_md);
    fixture.write("victim/race/notes.md", victim_notes);
    fixture.write("victim/race/SECRET-RACE-FILENAME.md", "x");
    std::fs::create_dir_all(fixture.path("repo/.git")).unwrap();
    let inside = fixture.path("repo/.claude/skills/race");
    fixture.write(
        "repo/.claude/skills/race/SKILL.md",
        "---\nname: race\ndescription: The real race skill.\n---\nInside body.\n",
    );
    fixture.write("repo/.claude/skills/race/notes.md", "Inside notes.\n");
    let link = fixture.path("repo/.claude/skills/race-out");
    std::os::unix::fs::symlink(fixture.path("victim/race"), &link).unwrap();
    let secrets = vec![
        "SECRET-RACE".to_owned(),
        sha256_hex(victim_md.as_bytes()),
        sha256_hex(victim_notes.as_bytes()),
    ];
    let args = [
        "--project-dir",
        "repo",
        "--no-user",
        "--no-plugins",
        "--no-watch",
        "--refresh-interval",
        "0",
    ];
    race(
        fixture.command(&args),
        (&inside, &link),
        true,
        &secrets,
        "project root",
    );
}

/// A project whose skill `pdf` is served, then moved out of the repository
/// and linked back in its place (the very same files, now outside).
fn project_with_pdf() -> Fixture {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    std::fs::create_dir_all(fixture.path("repo/.git")).unwrap();
    fixture.write(
        "repo/.claude/skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms.\n---\nBody.\n",
    );
    fixture.write("repo/.claude/skills/pdf/references/forms.md", "Forms.\n");
    fixture
}

const PROJECT_ARGS: &[&str] = &[
    "--project-dir",
    "repo",
    "--no-user",
    "--no-plugins",
    "--no-watch",
    "--refresh-interval",
    "0",
];

#[tokio::test]
async fn listings_digests_and_completion_refuse_a_project_skill_folder_moved_out() {
    let fixture = project_with_pdf();
    let server = fixture.serve(PROJECT_ARGS).await;
    let client = &server.client;
    let listed = client.list_skills(None).await.unwrap();
    assert!(matches!(
        &listed.skills[0].resources,
        SkillResources::Files(files) if files.len() == 2
    ));
    let context = || {
        Some(CompletionContext::with_arguments(
            [("name".to_owned(), "pdf".to_owned())].into(),
        ))
    };
    let completed = client
        .complete_resource_argument("skill://{name}/{+path}", "path", "", context())
        .await
        .unwrap();
    assert_eq!(completed.values, ["SKILL.md", "references/forms.md"]);

    // Moved out and linked back: every file is the same file, outside now.
    let inside = fixture.path("repo/.claude/skills/pdf");
    let outside = fixture.path("elsewhere-SECRET/pdf");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    std::fs::rename(&inside, &outside).unwrap();
    fixture.write("elsewhere-SECRET/pdf/SECRET-new-file.md", "SECRET");
    std::os::unix::fs::symlink(&outside, &inside).unwrap();

    let listed = client.list_skills(None).await.unwrap();
    assert_eq!(listed.skills[0].resources, SkillResources::Dynamic);
    let got = client
        .get_skill(GetSkillRequestParams::new("skill://pdf/SKILL.md"))
        .await
        .unwrap();
    assert_eq!(got.skill.resources, SkillResources::Dynamic);
    let completed = client
        .complete_resource_argument("skill://{name}/{+path}", "path", "", context())
        .await
        .unwrap();
    assert!(completed.values.is_empty(), "{:?}", completed.values);
    let directory = client
        .read_resource_directory(ReadResourceDirectoryRequestParams::new("skill://pdf"))
        .await;
    let error = format!("{directory:?}");
    assert!(directory.is_err() && !error.contains("SECRET"), "{error}");
    assert!(
        error.contains("it leads outside the project through a symlink, so it is not read"),
        "{error}"
    );
    for uri in ["skill://pdf/SKILL.md", "skill://pdf/references/forms.md"] {
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await;
        let error = format!("{read:?}");
        assert!(read.is_err() && !error.contains("SECRET"), "{error}");
    }
    let result = server
        .call_with(rmcp::object!({"name": "pdf", "file": "references/forms.md"}))
        .await;
    assert!(is_error(&result));
    assert_eq!(
        text(&result),
        "Skill 'pdf' cannot serve 'references/forms.md': it leads outside the project through a symlink, so it is not read."
    );
    let result = server.call("pdf").await;
    assert!(is_error(&result));
    assert!(
        text(&result).starts_with("Skill 'pdf' could not be read: it now leads outside the project (a symlink), so it is not read."),
        "{}",
        text(&result)
    );
    server.stop().await;
}

/// Repositories that link one skill tree into several agents' folders: the
/// skill's own `SKILL.md` is a symlink out of the skill folder.
fn linked_skill_md() -> Fixture {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    fixture.write(
        "shared/linked.md",
        "---\nname: linked\ndescription: One SKILL.md for several agents.\n---\nShared body.\n",
    );
    fixture.write("skills/linked/references/a.md", "A.\n");
    std::os::unix::fs::symlink(
        "../../shared/linked.md",
        fixture.path("skills/linked/SKILL.md"),
    )
    .unwrap();
    fixture
}

#[tokio::test]
async fn a_symlinked_own_skill_md_is_served_everywhere_the_tool_serves_it() {
    let fixture = linked_skill_md();
    let bytes = std::fs::read(fixture.path("shared/linked.md")).unwrap();
    let args = [
        "--skills-dir",
        "skills",
        "--no-user",
        "--no-project",
        "--no-plugins",
    ];
    let server = fixture.serve(&args).await;
    let body = String::from_utf8(bytes.clone()).unwrap();
    assert!(text(&server.call("linked").await).ends_with(&body));
    let result = server
        .call_with(rmcp::object!({"name": "linked", "file": "SKILL.md"}))
        .await;
    assert!(!is_error(&result), "{result:?}");
    assert!(text(&result).starts_with("Loading: linked/SKILL.md\n"));
    assert!(text(&result).ends_with(&body));
    let read = server
        .client
        .read_resource(ReadResourceRequestParams::new("skill://linked/SKILL.md"))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text: got, .. } = &read.contents[0] else {
        panic!("{read:?}");
    };
    assert_eq!(got.as_bytes(), bytes);
    let listed = server.client.list_skills(None).await.unwrap();
    let SkillResources::Files(files) = &listed.skills[0].resources else {
        panic!("not dynamic: {listed:?}");
    };
    let digests: Vec<(&str, &str, u64)> = files
        .iter()
        .map(|f| (f.uri.as_str(), f.digest.as_str(), f.size))
        .collect();
    assert_eq!(
        digests,
        [
            (
                "skill://linked/SKILL.md",
                sha256_digest(&bytes).as_str(),
                bytes.len() as u64
            ),
            (
                "skill://linked/references/a.md",
                sha256_digest(b"A.\n").as_str(),
                3
            ),
        ]
    );
    server.stop().await;
}

#[tokio::test]
async fn in_a_project_the_own_skill_md_keeps_the_fence() {
    let fixture = linked_skill_md();
    std::fs::create_dir_all(fixture.path("repo/.git")).unwrap();
    // Inside the repository, out of the skill folder: served everywhere.
    fixture.write(
        "repo/agents/shared.md",
        "---\nname: inside\ndescription: Linked inside the repository.\n---\nInside.\n",
    );
    fixture.write("repo/.claude/skills/inside/notes.md", "N.\n");
    std::os::unix::fs::symlink(
        "../../../agents/shared.md",
        fixture.path("repo/.claude/skills/inside/SKILL.md"),
    )
    .unwrap();
    // Out of the repository: not a skill at all.
    std::fs::create_dir_all(fixture.path("repo/.claude/skills/linked")).unwrap();
    std::os::unix::fs::symlink(
        fixture.path("shared/linked.md"),
        fixture.path("repo/.claude/skills/linked/SKILL.md"),
    )
    .unwrap();
    let server = fixture.serve(PROJECT_ARGS).await;
    let result = server
        .call_with(rmcp::object!({"name": "inside", "file": "SKILL.md"}))
        .await;
    assert!(text(&result).ends_with("Inside.\n"), "{result:?}");
    let listed = server.client.list_skills(None).await.unwrap();
    let names: Vec<&str> = listed.skills.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["inside"]);
    assert!(matches!(
        &listed.skills[0].resources,
        SkillResources::Files(files) if files.len() == 2
    ));
    let result = server.call("linked").await;
    assert!(is_error(&result));
    let answer = text(&result);
    assert!(
        answer.contains("a symlink leads outside the project; it is not followed"),
        "{answer}"
    );
    // Nothing says where the link points.
    assert!(!answer.contains("shared"), "{answer}");
    for uri in ["skill://linked/SKILL.md", "skill://linked/references/a.md"] {
        let read = server
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await;
        assert!(read.is_err(), "{uri}");
    }
    server.stop().await;
}

/// Whether a project symlink out of the repository leads somewhere that
/// exists or nowhere, the model is told the same words.
#[tokio::test]
async fn a_refusal_says_the_same_whether_the_place_outside_exists_or_not() {
    let fixture = project_with_pdf();
    fixture.write("victim/exists.md", "x");
    let link = |target: &str, at: &str| {
        std::os::unix::fs::symlink(target, fixture.path(at)).unwrap();
    };
    let exists = fixture.path("victim/exists.md");
    link(
        exists.to_str().unwrap(),
        "repo/.claude/skills/pdf/references/there.md",
    );
    link(
        "/nonexistent/victim.md",
        "repo/.claude/skills/pdf/references/nowhere.md",
    );
    link(
        "../../../../../victim/exists.md",
        "repo/.claude/skills/pdf/references/up-there.md",
    );
    link(
        "../../../../../victim/missing.md",
        "repo/.claude/skills/pdf/references/up-nowhere.md",
    );
    for skill in ["there", "nowhere"] {
        std::fs::create_dir_all(fixture.path(&format!("repo/.claude/skills/{skill}"))).unwrap();
    }
    link(
        exists.to_str().unwrap(),
        "repo/.claude/skills/there/SKILL.md",
    );
    link(
        "/nonexistent/victim.md",
        "repo/.claude/skills/nowhere/SKILL.md",
    );
    let server = fixture.serve(PROJECT_ARGS).await;
    let mut answers = Vec::new();
    for file in ["there.md", "nowhere.md", "up-there.md", "up-nowhere.md"] {
        let result = server
            .call_with(rmcp::object!({"name": "pdf", "file": format!("references/{file}")}))
            .await;
        answers.push(text(&result).replace(file, "F"));
    }
    assert!(answers.iter().all(|a| a == &answers[0]), "{answers:#?}");
    assert_eq!(
        answers[0],
        "Skill 'pdf' cannot serve 'references/F': it leads outside the skill's folder through a symlink, so it is not read."
    );
    let there = text(&server.call("there").await).replace("there", "X");
    let nowhere = text(&server.call("nowhere").await).replace("nowhere", "X");
    assert_eq!(there, nowhere);
    assert!(!there.contains("victim"), "{there}");
    server.stop().await;
}
