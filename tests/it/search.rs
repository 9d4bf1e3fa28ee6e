//! The search on a miss (behaviour.md §14), through the real binary: what it
//! finds, what it refuses, and that no miss holds up the server.

use std::path::PathBuf;
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
/// words so that every word's postings are long. Built once and shared
/// (`common::shared_tree`): writing them takes about 15 s on a two-core
/// machine, and deleting them as long.
fn many_skills() -> PathBuf {
    crate::common::shared_tree("skills-100k", |root| {
        const WORDS: [&str; 16] = [
            "report", "table", "chart", "deploy", "review", "format", "convert", "invoice",
            "summary", "schema", "pipeline", "release", "document", "dataset", "template",
            "monitor",
        ];
        let started = Instant::now();
        for n in 0..100_000 {
            let skill = root.join(format!("{}/skill-{n}", n / 10_000));
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
        eprintln!(
            "wrote 100,000 skills in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    })
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
/// the end of stdin ends the server while a miss waits for its rescan.
///
/// Slow (a minute on two cores, plus writing the skills the first time), so
/// it runs only when asked: `.ci/run --slow`, or
/// `cargo test --test it -- --ignored`. The first scan of a debug build
/// takes a few seconds.
#[test]
#[ignore = "slow: 100,000 skills; `.ci/run --slow` runs it"]
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
    let ping = |id: u64| {
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
        )
    };
    let next = |raw: &mut Raw| {
        raw.next_message(Duration::from_secs(60))
            .expect("an answer")
    };

    for ending in ["SIGTERM", "EOF"] {
        let started = Instant::now();
        let mut raw = Raw::start_within(fixture.command(&args), Duration::from_secs(120));
        eprintln!(
            "{ending}: started in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        // The first miss rescans (and waits for it); the next ones, within
        // the second, do not.
        raw.send_json(&call(1, &worst));
        let first = next(&mut raw);
        let text = first["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("Skill 'reporq tablq charq"), "{first}");
        assert_eq!(listed(text).len(), 5, "{text}");

        let mut lines = String::new();
        for id in 10..18 {
            lines.push_str(&format!("{}\n", call(id, &worst)));
        }
        lines.push_str(&ping(99));
        raw.send(lines.as_bytes());
        assert_eq!(next(&mut raw)["id"], 99, "the ping comes first");
        let mut searched: Vec<i64> = (0..8)
            .map(|_| next(&mut raw)["id"].as_i64().unwrap())
            .collect();
        searched.sort_unstable();
        assert_eq!(searched, (10..18).collect::<Vec<_>>());

        // Every rescan so far started before its miss was answered; a second
        // later a miss rescans again (behaviour.md §5.2). The ping behind it
        // shows it was read; then the server must end without waiting for
        // its rescan.
        std::thread::sleep(Duration::from_millis(1100));
        raw.send(format!("{}\n{}", call(2, &worst), ping(98)).as_bytes());
        assert_eq!(next(&mut raw)["id"], 98, "the ping comes before the rescan");
        match ending {
            "SIGTERM" => {
                // SAFETY: kill(2) with a pid we own and a valid signal number.
                let sent = unsafe { libc::kill(raw.child.id() as i32, libc::SIGTERM) };
                assert_eq!(sent, 0);
            }
            _ => raw.close_stdin(),
        }
        let status = wait_for_exit(&mut raw.child, Duration::from_secs(10)).expect("exits");
        assert_eq!(status.code(), Some(0), "{ending}");
        let after = raw.rest();
        assert!(
            after.is_empty(),
            "{ending}: the exit came before the rescan ended, so nothing more is answered: {after:?}"
        );
    }
}
