//! The search on a miss (behaviour.md §14), through the real binary: what it
//! finds, what it refuses, and that no miss holds up the server.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Fixture, Raw, call, is_error, listed, text, wait_for_exit};

/// `fixtures/catalog`: fourteen skills named and described like those of
/// public skill collections.
const CATALOG: &[&str] = &[
    "--skills-dir",
    "catalog",
    "--no-user",
    "--no-project",
    "--no-plugins",
];

#[tokio::test]
async fn a_miss_finds_skills_by_the_words_of_their_descriptions() {
    let fixture = Fixture::new();
    let server = fixture.serve(CATALOG).await;
    for (query, first) in [
        ("fill a pdf form", "pdf"),
        ("build an mcp server", "mcp-builder"),
        ("test my web app in a browser", "webapp-testing"),
        ("make slides", "pptx"),
        ("release notes from pull requests", "changelog-writer"),
        ("animated gif for slack", "slack-gif-creator"),
        ("clean up a csv", "data-cleaning"),
        ("word document", "docx"),
        ("write a newsletter", "internal-comms"),
        ("create a new skill", "skill-creator"),
        // Other forms of the words: `generative`, `colours`, `screenshots`.
        ("generative art", "algorithmic-art"),
        ("screenshot of my website", "webapp-testing"),
        // Typos in words.
        ("spredsheet formulas", "xlsx"),
        ("exctract tables", "pdf"),
        ("brand colors", "brand-guidelines"),
        // Typos in names.
        ("pfd", "pdf"),
        ("xlxs", "xlsx"),
        ("mcp_bulder", "mcp-builder"),
    ] {
        let result = server.call(query).await;
        assert!(is_error(&result), "{query}");
        let text = text(&result);
        assert!(
            text.starts_with(&format!(
                "Skill '{query}' not found. Did you mean one of these?\n- "
            )),
            "{text}"
        );
        assert!(text.ends_with("\nCall `skill` again with one of these names."));
        let names = listed(text);
        assert!(names.len() <= 5, "{text}");
        assert_eq!(names[0], first, "best match for {query:?}: {text}");
    }

    // Each match with the start of its description, on one line.
    assert_eq!(
        text(&server.call("fill a pdf form").await),
        "Skill 'fill a pdf form' not found. Did you mean one of these?\n\
         - pdf: Work with PDF files: extract text and tables, fill in PDF forms, merge and split documents, add wat…\n\
         - xlsx: Build and analyse spreadsheets: formulas, pivot tables, charts and number formats in Excel (.xlsx)…\n\
         Call `skill` again with one of these names."
    );

    // Nonsense finds nothing.
    for nonsense in ["zzzzqqqq", "qwxz vbnm", "the of and"] {
        assert_eq!(
            text(&server.call(nonsense).await),
            format!(
                "Skill '{nonsense}' not found. There are 14 skills; the `skill` tool description lists them."
            )
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn a_name_over_512_characters_is_invalid_params_and_a_long_one_is_echoed_cut() {
    let fixture = Fixture::new();
    let server = fixture.serve(CATALOG).await;
    let message = "Invalid params: the argument `name` is longer than 512 characters. Call `skill` with a skill's name, or with a few words describing the task.";
    for too_long in ["a".repeat(513), "é".repeat(513), "pdf ".repeat(1000)] {
        let result = server.call(&too_long).await;
        assert!(is_error(&result));
        assert_eq!(text(&result), message);
        assert_eq!(
            result.structured_content,
            Some(json!({ "error": { "code": -32602, "message": message } }))
        );
    }
    // Characters are counted, not bytes: 512 of them are a name.
    for longest in ["a".repeat(512), "é".repeat(512)] {
        let result = server.call(&longest).await;
        let cut: String = longest.chars().take(79).collect();
        assert_eq!(
            text(&result),
            format!(
                "Skill '{cut}…' not found. There are 14 skills; the `skill` tool description lists them."
            )
        );
    }
    // Up to 80 characters are echoed whole.
    let eighty = "z".repeat(80);
    assert!(text(&server.call(&eighty).await).starts_with(&format!("Skill '{eighty}' not found.")));
    server.stop().await;
}

#[test]
fn show_refuses_a_name_over_512_characters() {
    let fixture = Fixture::new();
    let mut args = vec!["show", "placeholder"];
    args.extend(CATALOG);
    let long = "pdf ".repeat(129);
    args[1] = &long;
    let out = fixture.run(&args);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "Invalid params: the argument `name` is longer than 512 characters. Call `skill` with a skill's name, or with a few words describing the task.\n"
    );
}

/// 100,000 skills in ten skills folders of 10,000 (a walk reads at most
/// 20,000 folders per skills folder), their descriptions drawn from a few
/// words so that every word's postings are long. Written once into cargo's
/// scratch folder for tests (`target/tmp`) and reused: writing them takes
/// about 15 s on a two-core machine, and deleting them as long.
fn many_skills() -> PathBuf {
    const WORDS: [&str; 16] = [
        "report", "table", "chart", "deploy", "review", "format", "convert", "invoice", "summary",
        "schema", "pipeline", "release", "document", "dataset", "template", "monitor",
    ];
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skills-100k");
    if base.join("complete").exists() {
        return base;
    }
    let started = Instant::now();
    let partial = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for n in 0..100_000 {
        let skill = partial.path().join(format!("{}/skill-{n}", n / 10_000));
        std::fs::create_dir_all(&skill).unwrap();
        let words: Vec<&str> = (0..6)
            .map(|k| WORDS[(n * 7 + k * 5 + n / 16) % 16])
            .collect();
        let text = format!(
            "---\nname: skill-{n}\ndescription: {}\n---\n",
            words.join(" ")
        );
        std::fs::write(skill.join("SKILL.md"), text).unwrap();
    }
    std::fs::write(partial.path().join("complete"), "100000\n").unwrap();
    // Another test run may have won the race; its copy is as good.
    if std::fs::rename(partial.path(), &base).is_ok() {
        std::mem::forget(partial);
    }
    eprintln!(
        "wrote 100,000 skills in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    base
}

/// The longest name accepted, made of words every skill has, each misspelt
/// (so that each is looked up one edit away) or not.
fn worst_case_name() -> String {
    let words = "reporq tablq charq deploq reviex formaq converq invoicq summarq schemq pipelinq releasq documenq datasew templatq monitoq report table chart deploy review format convert invoice summary schema pipeline release document dataset template monitor";
    let mut name = String::new();
    for word in words.split(' ').cycle() {
        if name.len() + 1 + word.len() > 512 {
            break;
        }
        if !name.is_empty() {
            name.push(' ');
        }
        name.push_str(word);
    }
    assert!(name.chars().count() <= 512);
    name
}

/// A miss at 100,000 skills is searched on a blocking thread: a `ping` sent
/// behind eight worst-case misses is answered before them, and SIGTERM or
/// the end of stdin ends the server while misses are being searched.
/// The first scan of a debug build takes a few seconds.
#[test]
fn no_miss_at_100000_skills_holds_up_a_ping_a_signal_or_the_end_of_stdin() {
    let fixture = Fixture::empty();
    let many = many_skills();
    let roots: Vec<String> = (0..10)
        .flat_map(|root| {
            [
                "--skills-dir".to_owned(),
                many.join(root.to_string()).display().to_string(),
            ]
        })
        .collect();
    let mut args: Vec<&str> = roots.iter().map(String::as_str).collect();
    args.extend(["--no-user", "--no-project", "--no-plugins", "--no-watch"]);
    args.extend(["--refresh-interval", "0"]);
    let worst = worst_case_name();

    for ending in ["SIGTERM", "EOF"] {
        let started = Instant::now();
        let mut raw = Raw::start_within(fixture.command(&args), Duration::from_secs(120));
        eprintln!(
            "{ending}: started in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        // The first miss rescans (and waits for it); the next ones, within
        // the second, mostly do not.
        let asked = Instant::now();
        raw.send_json(&call(1, &worst));
        let first = raw
            .next_message(Duration::from_secs(60))
            .expect("an answer");
        eprintln!(
            "{ending}: first worst-case miss (with a rescan) answered in {:.1} ms",
            asked.elapsed().as_secs_f64() * 1e3
        );
        let text = first["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("Skill 'reporq tablq charq"), "{first}");
        assert_eq!(listed(text).len(), 5, "{text}");

        let mut lines = String::new();
        for id in 10..18 {
            lines.push_str(&format!("{}\n", call(id, &worst)));
        }
        lines.push_str("{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\"}\n");
        let sent = Instant::now();
        raw.send(lines.as_bytes());
        let answer = raw
            .next_message(Duration::from_secs(60))
            .expect("an answer");
        assert_eq!(answer["id"], 99, "the ping comes first: {answer}");
        eprintln!(
            "{ending}: ping answered in {:.1} ms behind eight worst-case misses",
            sent.elapsed().as_secs_f64() * 1e3
        );

        // The misses are still being searched.
        let asked = Instant::now();
        let status = match ending {
            "SIGTERM" => {
                // SAFETY: kill(2) with a pid we own and a valid signal number.
                assert_eq!(
                    unsafe { libc::kill(raw.child.id() as i32, libc::SIGTERM) },
                    0
                );
                wait_for_exit(&mut raw.child, Duration::from_secs(10))
            }
            _ => Some(raw.finish()),
        }
        .expect("exits");
        let took = asked.elapsed();
        eprintln!("{ending}: exited {took:?} after it with {status}");
        assert_eq!(status.code(), Some(0));
        // The contract says 200 ms; a loaded two-core machine running a
        // debug build gets more room.
        assert!(took < Duration::from_secs(2), "{ending}: took {took:?}");
    }
}
