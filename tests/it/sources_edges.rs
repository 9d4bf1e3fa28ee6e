//! Sources at their edges (behaviour.md, "Sources"), through the real
//! binary: commands run at the same moment, archives and indexes made to
//! mislead, text made to drive a terminal, scripts `update` must call out,
//! and servers that stall or drip.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::common::{Fixture, sha256_digest};
use crate::sources::{
    StaticHost, expect, git, index_with, lock_text, nothing_written, run, skill_md, sources_env,
    tar_gz,
};

/// The flags that leave only installed skills in `list` and `check`.
const BARE: [&str; 3] = ["--no-project", "--no-user", "--no-plugins"];

/// A git repository at `name` in the fixture holding `files` (path, text),
/// committed; its `file://` URL.
fn repository(fixture: &Fixture, name: &str, files: &[(String, String)]) -> String {
    let repo = fixture.path(name);
    std::fs::create_dir_all(&repo).unwrap();
    git(
        fixture,
        &repo,
        &["init", "--quiet", "--initial-branch", "main"],
    );
    for (path, text) in files {
        fixture.write(&format!("{name}/{path}"), text);
    }
    commit_all(fixture, &repo);
    format!("file://{}", repo.display())
}

fn commit_all(fixture: &Fixture, repo: &Path) {
    git(fixture, repo, &["add", "--all"]);
    git(fixture, repo, &["commit", "--quiet", "--message", "change"]);
}

/// The names `list --json` serves.
fn served(fixture: &Fixture) -> Vec<String> {
    let out = expect(fixture, &[&["list", "--json"][..], &BARE].concat(), 0);
    let listed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let mut names: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn adds_run_at_the_same_moment_all_install_and_every_skill_is_served() {
    const SOURCES: usize = 6;
    const SKILLS: usize = 5;
    let fixture = Fixture::empty();
    let mut expected = Vec::new();
    let urls: Vec<String> = (0..SOURCES)
        .map(|i| {
            let files: Vec<(String, String)> = (0..SKILLS)
                .map(|j| {
                    let name = format!("s{i}-{j}");
                    let text = skill_md(&name, "A skill of a team.", "# Body");
                    expected.push(name.clone());
                    (format!("skills/{name}/SKILL.md"), text)
                })
                .collect();
            repository(&fixture, &format!("team{i}"), &files)
        })
        .collect();
    let children: Vec<_> = urls
        .iter()
        .map(|url| {
            let mut command = fixture.command(&["add", url, "--yes"]);
            sources_env(&fixture, &mut command);
            command
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "add team{i}\nstdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("Installed {SKILLS} skills from {}@", urls[i])),
            "{stdout}"
        );
    }
    let lock = lock_text(&fixture).unwrap();
    for i in 0..SOURCES {
        assert!(lock.contains(&format!("[sources.team{i}]")), "{lock}");
    }
    expected.sort();
    assert_eq!(served(&fixture), expected);
    let out = expect(&fixture, &[&["check"][..], &BARE].concat(), 0);
    assert!(!out.stdout.contains("store-"), "{}", out.stdout);
}

#[test]
fn a_prune_running_beside_adds_removes_none_of_what_they_install() {
    const SOURCES: usize = 4;
    let fixture = Fixture::empty();
    let urls: Vec<String> = (0..SOURCES)
        .map(|i| {
            let name = format!("p{i}");
            let text = skill_md(&name, "A skill of a team.", "# Body");
            // Files enough that copying them into the store takes a while.
            let mut files = vec![(format!("skills/{name}/SKILL.md"), text)];
            files.extend(
                (0..200).map(|f| (format!("skills/{name}/references/{f}.md"), format!("{f}\n"))),
            );
            repository(&fixture, &format!("team{i}"), &files)
        })
        .collect();
    let spawn = |args: &[&str]| {
        let mut command = fixture.command(args);
        sources_env(&fixture, &mut command);
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Each add writes its store entry before its lock names it: a prune
    // between the two, which reads the lock without it, must not run.
    // Prunes run one after another for as long as the adds do.
    let adds: Vec<_> = urls
        .iter()
        .map(|url| spawn(&["add", url, "--yes"]))
        .collect();
    let done = std::sync::atomic::AtomicBool::new(false);
    let outputs = std::thread::scope(|scope| {
        let prunes = scope.spawn(|| {
            let mut outputs = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                outputs.push(spawn(&["sync", "--prune"]).wait_with_output().unwrap());
            }
            outputs
        });
        let mut outputs: Vec<_> = adds
            .into_iter()
            .map(|child| child.wait_with_output().unwrap())
            .collect();
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        outputs.extend(prunes.join().unwrap());
        outputs
    });
    for out in outputs {
        assert!(
            out.status.success(),
            "stdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let expected: Vec<String> = (0..SOURCES).map(|i| format!("p{i}")).collect();
    assert_eq!(served(&fixture), expected);
    let out = expect(&fixture, &["sync", "--check"], 0);
    assert!(
        out.stdout
            .ends_with("The store holds exactly what the locks pin.\n"),
        "{}",
        out.stdout
    );
}

/// A zip holding `SKILL.md` and the files `extra` (name, bytes), its
/// central directory records then changed by `patch` (the bytes, a
/// record's offset, its name).
fn zip_of(extra: &[(&str, &[u8])], patch: impl Fn(&mut Vec<u8>, usize, &str)) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().unix_permissions(0o644);
    zip.start_file("SKILL.md", options).unwrap();
    zip.write_all(b"---\nname: x\ndescription: d\n---\nbody\n")
        .unwrap();
    for (name, bytes) in extra {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    let mut bytes = zip.finish().unwrap().into_inner();
    let mut at = 0;
    while let Some(found) = bytes[at..].windows(4).position(|w| w == b"PK\x01\x02") {
        at += found;
        let len = usize::from(u16::from_le_bytes([bytes[at + 28], bytes[at + 29]]));
        let name = String::from_utf8(bytes[at + 46..at + 46 + len].to_vec()).unwrap();
        patch(&mut bytes, at, &name);
        at += 46;
    }
    bytes
}

#[test]
fn a_zip_naming_a_path_twice_or_holding_a_fifo_or_device_is_refused_as_a_tar_is() {
    let fixture = Fixture::empty();
    let host = StaticHost::start(fixture.path("site"));
    let artifact = format!("{}/.well-known/agent-skills/x.tar.gz", host.url());
    let refused = |what: &str| {
        format!(
            "skillserve: {artifact}: the archive of skill 'x' is refused: it holds {what}, which is refused (only files and folders may be unpacked)\n"
        )
    };

    // The second `SKILL.md` (first written as `SKILL.mX`, then renamed in
    // both of its headers) is what the zip crate alone would install.
    let mut twice = zip_of(
        &[(
            "SKILL.mX",
            b"---\nname: x\ndescription: the second copy\n---\n",
        )],
        |_, _, _| {},
    );
    for at in [
        twice.windows(8).position(|w| w == b"SKILL.mX").unwrap(),
        twice.windows(8).rposition(|w| w == b"SKILL.mX").unwrap(),
    ] {
        twice[at + 7] = b'd';
    }
    index_with(&fixture, &twice, None);
    let out = expect(&fixture, &["add", &host.url(), "--yes"], 1);
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: {artifact}: the archive of skill 'x' is refused: it holds `SKILL.md` twice\n"
        )
    );
    nothing_written(&fixture);
    // The tar reader's words for the same archive as a .tar.gz.
    let tar_twice = tar_gz(|b| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_size(1);
        h.set_mode(0o644);
        b.append_data(&mut h, "SKILL.md", &b"x"[..]).unwrap();
    });
    index_with(&fixture, &tar_twice, None);
    assert_eq!(
        expect(&fixture, &["add", &host.url(), "--yes"], 1).stderr,
        out.stderr
    );

    for (mode, what) in [
        (0o010_644, "a FIFO (`pipe`)"),
        (0o020_644, "a device (`pipe`)"),
        (0o060_644, "a device (`pipe`)"),
    ] {
        let special = zip_of(&[("pipe", b"")], |bytes, at, name| {
            if name == "pipe" {
                let attributes: u32 = mode << 16;
                bytes[at + 38..at + 42].copy_from_slice(&attributes.to_le_bytes());
            }
        });
        index_with(&fixture, &special, None);
        let out = expect(&fixture, &["add", &host.url(), "--yes"], 1);
        assert_eq!(out.stderr, refused(what), "{mode:o}");
        nothing_written(&fixture);
    }
    // And the tar reader's FIFO, for the same words.
    let fifo = tar_gz(|b| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Fifo);
        h.set_size(0);
        b.append_data(&mut h, "pipe", &[][..]).unwrap();
    });
    index_with(&fixture, &fifo, None);
    let out = expect(&fixture, &["add", &host.url(), "--yes"], 1);
    assert_eq!(out.stderr, refused("a FIFO (`pipe`)"));
}

/// What an escape sequence that paints a forged line green looks like
/// once escaped.
const FORGED: &str = "\x1b[2K\r\x1b[32mInstalled 3 skills\x1b[0m";
const FORGED_SHOWN: &str = "\\u{1b}[2K\\r\\u{1b}[32mInstalled 3 skills\\u{1b}[0m";

/// Writes `index` (a JSON value) as the index of `site/`.
fn publish_index(fixture: &Fixture, index: &serde_json::Value) {
    fixture.write(
        "site/.well-known/agent-skills/index.json",
        &index.to_string(),
    );
}

#[test]
fn text_from_a_source_reaches_the_terminal_escaped_on_every_failure_line() {
    let fixture = Fixture::empty();
    let host = StaticHost::start(fixture.path("site"));
    let index_url = format!("{}/.well-known/agent-skills/index.json", host.url());
    let schema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
    let digest = sha256_digest(b"x");
    let entry = |name: &str, url: &str, digest: &str| {
        serde_json::json!({"name": name, "type": "skill-md", "description": "d",
                           "url": url, "digest": digest})
    };
    let cases = [
        (
            "$schema",
            serde_json::json!({"$schema": FORGED, "skills": []}),
            format!("`$schema` is {FORGED_SHOWN}; this skillserve reads {schema}"),
        ),
        (
            "name",
            serde_json::json!({"$schema": schema, "skills": [entry(FORGED, "x", &digest)]}),
            format!("skills[0] has the name `{FORGED_SHOWN}`, which is not a skill's name"),
        ),
        (
            "digest",
            serde_json::json!({"$schema": schema, "skills": [entry("x", "x", FORGED)]}),
            format!(
                "skills[0] ('x') has the digest `{FORGED_SHOWN}`; expected `sha256:` and 64 lowercase hex digits"
            ),
        ),
    ];
    for (what, index, problem) in cases {
        publish_index(&fixture, &index);
        let out = expect(&fixture, &["add", &host.url(), "--yes"], 1);
        assert_eq!(
            out.stderr,
            format!("skillserve: {index_url}: {problem}\n"),
            "{what}"
        );
    }
    // A URL leading nowhere: the download's failure names it, escaped.
    publish_index(
        &fixture,
        &serde_json::json!({"$schema": schema, "skills": [entry("x", &format!("missing/{FORGED}"), &digest)]}),
    );
    let out = expect(&fixture, &["add", &host.url(), "--yes"], 1);
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: could not fetch {}/.well-known/agent-skills/missing/{FORGED_SHOWN}: http: invalid uri character\n",
            host.url()
        )
    );
    // An archive's entry path.
    let archive = tar_gz(|b| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_size(1);
        let name = format!("a{FORGED}");
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_cksum();
        b.append(&h, &b"x"[..]).unwrap();
    });
    index_with(&fixture, &archive, None);
    let out = expect(&fixture, &["add", &host.url(), "--yes"], 1);
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: {}/.well-known/agent-skills/x.tar.gz: the archive of skill 'x' is refused: it holds the path `a{FORGED_SHOWN}`, which is absolute, climbs out with `..`, or is not plain UTF-8\n",
            host.url()
        )
    );
    // A git repository's folder name, in the list of what could not be used.
    let url = repository(
        &fixture,
        "upstream",
        &[(format!("{FORGED}/SKILL.md"), skill_md("x", "d", "# Body"))],
    );
    let out = expect(&fixture, &["add", &url, "--yes"], 1);
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: no skills found in {url}: a skill is a folder with a SKILL.md (up to four levels down, or listed in .claude-plugin/marketplace.json); folders that could not be used: {FORGED_SHOWN}: error[path-unusable]: the skill's path holds a control character (a line break, say), so the skill is skipped\n"
        )
    );
    for out in [&out.stdout, &out.stderr] {
        assert!(!out.contains('\x1b'), "{out:?}");
    }
    nothing_written(&fixture);
}

#[test]
fn update_calls_out_every_file_add_counts_as_a_script() {
    let fixture = Fixture::empty();
    let url = repository(
        &fixture,
        "upstream",
        &[
            (
                "tool/SKILL.md".into(),
                skill_md("tool", "Act on things.", "Run bin/act."),
            ),
            ("tool/bin/act".into(), "#!/bin/sh\necho act\n".into()),
            // A shebang without the executable bit is a script too.
            ("tool/bin/helper".into(), "#!/usr/bin/env python3\n".into()),
            ("tool/notes/todo".into(), "plain text\n".into()),
        ],
    );
    let repo = fixture.path("upstream");
    use std::os::unix::fs::PermissionsExt;
    let act = repo.join("tool/bin/act");
    std::fs::set_permissions(&act, std::fs::Permissions::from_mode(0o755)).unwrap();
    commit_all(&fixture, &repo);
    let out = expect(&fixture, &["add", &url, "--yes"], 0);
    assert!(
        out.stdout
            .contains(" · 4 files, 114 B, 2 scripts: bin/act, bin/helper\n"),
        "{}",
        out.stdout
    );

    fixture.write(
        "upstream/tool/bin/act",
        "#!/bin/sh\ncurl https://example.com\n",
    );
    fixture.write(
        "upstream/tool/bin/helper",
        "#!/usr/bin/env python3\nprint()\n",
    );
    fixture.write("upstream/tool/notes/todo", "plain text, changed\n");
    commit_all(&fixture, &repo);
    let out = expect(&fixture, &["update", "--check"], 10);
    assert!(
        out.stdout.contains(
            "  changed    tool: 0 files added, 0 removed, 3 changed\n      changed bin/act\n      changed bin/helper\n      changed notes/todo\n      scripts changed: bin/act, bin/helper (review them before installing)\n"
        ),
        "{}",
        out.stdout
    );
    // A script removed is called out too (the store kept what `add` saw).
    std::fs::remove_file(&act).unwrap();
    commit_all(&fixture, &repo);
    let out = expect(&fixture, &["update", "--check"], 10);
    assert!(
        out.stdout.contains("      removed bin/act\n")
            && out
                .stdout
                .contains("      scripts changed: bin/act, bin/helper (review"),
        "{}",
        out.stdout
    );
}

/// How a [`SlowHost`] answers a path.
#[derive(Clone, Copy)]
enum Pace {
    /// Reads the request and never answers.
    Stall,
    /// Sends its head, then a byte of a long body every 100 ms.
    Drip,
    /// Waits 300 ms, then sends the file (counting downloads in flight).
    Slow,
}

/// A web host on this machine answering each connection on its own
/// thread: files below `root`, at the pace its path's prefix sets
/// (`/stall/`, `/drip/`, `/slow/`, else at once); it records the most
/// downloads of `/slow/` it served at once.
struct SlowHost {
    port: u16,
    most_at_once: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl SlowHost {
    fn start(root: std::path::PathBuf) -> SlowHost {
        use std::io::{BufRead, BufReader};
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let most_at_once = Arc::new(AtomicUsize::new(0));
        let (most, now) = (Arc::clone(&most_at_once), Arc::new(AtomicUsize::new(0)));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (root, most, now) = (root.clone(), Arc::clone(&most), Arc::clone(&now));
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut request = String::new();
                    let _ = reader.read_line(&mut request);
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
                            break;
                        }
                    }
                    let path = request.split(' ').nth(1).unwrap_or("/").to_owned();
                    let pace = [
                        ("/stall/", Pace::Stall),
                        ("/drip/", Pace::Drip),
                        ("/slow/", Pace::Slow),
                    ]
                    .into_iter()
                    .find(|(prefix, _)| path.starts_with(prefix))
                    .map(|(_, pace)| pace);
                    match pace {
                        Some(Pace::Stall) => {
                            std::thread::sleep(std::time::Duration::from_secs(30));
                            return;
                        }
                        Some(Pace::Drip) => {
                            let _ = stream
                                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n");
                            for _ in 0..300 {
                                std::thread::sleep(std::time::Duration::from_millis(100));
                                if stream.write_all(b"x").is_err() {
                                    return;
                                }
                            }
                            return;
                        }
                        Some(Pace::Slow) => {
                            let at_once = now.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(at_once, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(300));
                            now.fetch_sub(1, Ordering::SeqCst);
                        }
                        None => {}
                    }
                    let response = match std::fs::read(root.join(path.trim_start_matches('/'))) {
                        Ok(body) => {
                            let mut response = format!(
                                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                                body.len()
                            )
                            .into_bytes();
                            response.extend(body);
                            response
                        }
                        Err(_) => b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec(),
                    };
                    let _ = stream.write_all(&response);
                });
            }
        });
        SlowHost { port, most_at_once }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// An index of `skills` skills whose SKILL.md files lie below `folder/`
/// (`stall`, `drip`, `slow` or `fast`) of `site/`.
fn paced_index(fixture: &Fixture, folder: &str, skills: usize) {
    let entries: Vec<serde_json::Value> = (0..skills)
        .map(|i| {
            let name = format!("skill-{i:02}");
            let text = skill_md(&name, "d", "# Body");
            let path = format!("/{folder}/{name}/SKILL.md");
            fixture.write(&format!("site{path}"), &text);
            serde_json::json!({"name": name, "type": "skill-md", "description": "d",
                               "url": path, "digest": sha256_digest(text.as_bytes())})
        })
        .collect();
    publish_index(
        fixture,
        &serde_json::json!({
            "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
            "skills": entries,
        }),
    );
}

/// `skillserve add URL --yes` with the download bounds scaled down to
/// `stall` seconds (the whole download: four times that).
fn add_with_stall(fixture: &Fixture, url: &str, stall: &str) -> (Option<i32>, String, f64) {
    let mut command = fixture.command(&["add", url, "--yes"]);
    sources_env(fixture, &mut command);
    command.env("SKILLSERVE_HTTP_STALL_SECS", stall);
    let started = std::time::Instant::now();
    let output = command.stderr(Stdio::piped()).output().unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stderr).unwrap(),
        started.elapsed().as_secs_f64(),
    )
}

#[test]
fn a_server_that_stalls_or_drips_fails_the_add_in_bounded_time_and_is_named() {
    let fixture = Fixture::empty();
    let host = SlowHost::start(fixture.path("site"));
    let authority = host.url().trim_start_matches("http://").to_owned();

    paced_index(&fixture, "stall", 1);
    let (code, stderr, took) = add_with_stall(&fixture, &host.url(), "0.5");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "skillserve: could not fetch {}/stall/skill-00/SKILL.md: no answer from {authority} within 0.5 s\n",
            host.url()
        )
    );
    assert!(took < 20.0, "a stalled add took {took:.1} s");

    // A byte every 100 ms never trips the bound on one read; the bound on
    // the whole download (4 × 0.5 s) ends it.
    paced_index(&fixture, "drip", 1);
    let (code, stderr, took) = add_with_stall(&fixture, &host.url(), "0.5");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "skillserve: could not fetch {}/drip/skill-00/SKILL.md: {authority} did not send it all within 2 s (it sends too slowly)\n",
            host.url()
        )
    );
    assert!(took < 20.0, "a dripped add took {took:.1} s");
    nothing_written(&fixture);
}

#[test]
fn a_git_host_that_stalls_fails_the_add_in_bounded_time_and_is_named() {
    let fixture = Fixture::empty();
    let host = SlowHost::start(fixture.path("site"));
    let url = format!("{}/stall/skills.git", host.url());
    let (code, stderr, took) = add_with_stall(&fixture, &url, "1");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("skillserve: git could not fetch {url}: "))
            && stderr.ends_with("; the host sent nothing for 1 s\n"),
        "{stderr}"
    );
    assert!(took < 20.0, "a stalled git fetch took {took:.1} s");
    nothing_written(&fixture);
}

#[test]
fn an_index_s_artifacts_are_downloaded_several_at_once() {
    let fixture = Fixture::empty();
    let host = SlowHost::start(fixture.path("site"));
    paced_index(&fixture, "slow", 20);
    let out = expect(&fixture, &["add", &host.url(), "--yes"], 0);
    assert!(out.stdout.contains("Installed 20 skills"), "{}", out.stdout);
    let expected: Vec<String> = (0..20).map(|i| format!("skill-{i:02}")).collect();
    assert_eq!(served(&fixture), expected);
    let most = host.most_at_once.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        (2..=8).contains(&most),
        "{most} downloads were served at once; expected several, at most 8"
    );
}

#[cfg(unix)]
#[test]
fn symlinks_add_does_not_follow_and_names_that_are_not_utf8_are_named_not_dropped() {
    use std::os::unix::ffi::OsStrExt;
    let fixture = Fixture::empty();
    let dir = "skills/tools";
    let url = repository(
        &fixture,
        "upstream",
        &[
            (
                format!("{dir}/SKILL.md"),
                skill_md("tools", "Tools.", "# Tools"),
            ),
            (format!("{dir}/references/a.md"), "a\n".into()),
            ("shared/guide.md".into(), "shared\n".into()),
        ],
    );
    let skill = fixture.path("upstream").join(dir);
    let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, skill.join(at)).unwrap();
    // A monorepo's shared folder, outside the skill: not installed.
    link("../../shared", "shared");
    link("missing.md", "references/gone.md");
    // Inside the skill: installed.
    link("references/a.md", "a.md");
    std::fs::write(
        skill.join(std::ffi::OsStr::from_bytes(b"notes-\xff.md")),
        "x\n",
    )
    .unwrap();
    commit_all(&fixture, &fixture.path("upstream"));
    let out = expect(&fixture, &["add", &url, "--yes"], 0);
    let notes: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("file-left-out"))
        .collect();
    assert_eq!(
        notes,
        [
            "      note[file-left-out] skills/tools/notes-\u{fffd}.md: its name is not UTF-8, so it is not installed",
            "      note[file-left-out] skills/tools/shared: a symlink that leads outside the skill's folder, so it is not installed",
            "      note[file-left-out] skills/tools/references/gone.md: a symlink to nothing (its target does not exist), so it is not installed",
        ],
        "{}",
        out.stdout
    );
    // The symlink that stays inside the skill is installed as a file.
    let out = expect(
        &fixture,
        &[&["show", "tools", "a.md"][..], &BARE].concat(),
        0,
    );
    assert!(out.stdout.ends_with("a\n"), "{}", out.stdout);
}

#[test]
fn hidden_files_of_an_installed_skill_are_served_and_what_is_left_out_is_named() {
    let fixture = Fixture::empty();
    let dev = "skills/devcontainer-setup";
    let url = repository(
        &fixture,
        "upstream",
        &[
            (
                format!("{dev}/SKILL.md"),
                skill_md("devcontainer-setup", "Set up a dev container.", "# Dev"),
            ),
            (
                format!("{dev}/install.sh"),
                "#!/bin/sh\ncp resources/.zshrc ~\n".into(),
            ),
            (format!("{dev}/resources/.zshrc"), "export X=1\n".into()),
            (
                format!("{dev}/.github/workflows/ci.yml"),
                "on: push\n".into(),
            ),
            (format!("{dev}/node_modules/a/index.js"), "1\n".into()),
            (format!("{dev}/node_modules/b.js"), "2\n".into()),
            (format!("{dev}/vendor/.svn"), "x\n".into()),
        ],
    );
    let out = expect(&fixture, &["add", &url, "--yes"], 0);
    assert!(
        out.stdout
            .contains("      skills/devcontainer-setup · 4 files, "),
        "{}",
        out.stdout
    );
    let notes: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("file-left-out"))
        .collect();
    assert_eq!(
        notes,
        [
            "      note[file-left-out] skills/devcontainer-setup/node_modules/: what a package manager installed (2 files), so it is not installed",
            "      note[file-left-out] skills/devcontainer-setup/vendor/.svn: version-control metadata, so it is not installed",
        ],
        "{}",
        out.stdout
    );
    // Served: the hidden files the publisher committed.
    for (file, text) in [
        ("resources/.zshrc", "export X=1\n"),
        (".github/workflows/ci.yml", "on: push\n"),
    ] {
        let out = expect(
            &fixture,
            &[&["show", "devcontainer-setup", file][..], &BARE].concat(),
            0,
        );
        assert!(out.stdout.ends_with(text), "{file}: {}", out.stdout);
    }
    let out = run(
        &fixture,
        &[
            &["show", "devcontainer-setup", "node_modules/b.js"][..],
            &BARE,
        ]
        .concat(),
    );
    assert_ne!(out.status.code(), Some(0), "{}", out.stdout);
    // The user's own skills keep the hidden rule.
    fixture.write("mine/own/SKILL.md", &skill_md("own", "Mine.", "# Own"));
    fixture.write("mine/own/.zshrc", "export Y=2\n");
    let out = run(
        &fixture,
        &[
            "show",
            "own",
            ".zshrc",
            "--skills-dir",
            "mine",
            "--no-user",
            "--no-project",
            "--no-plugins",
        ],
    );
    assert_ne!(out.status.code(), Some(0), "{}", out.stdout);
    assert!(
        out.stderr.contains("`.zshrc` is not served"),
        "{}",
        out.stderr
    );
    // An update names what it leaves out of a changed skill, and installs
    // a new hidden file.
    fixture.write(&format!("upstream/{dev}/.env.example"), "X=1\n");
    fixture.write(&format!("upstream/{dev}/node_modules/c.js"), "3\n");
    commit_all(&fixture, &fixture.path("upstream"));
    let out = expect(&fixture, &["update", "--yes"], 0);
    assert!(
        out.stdout.contains(
            "note[file-left-out] skills/devcontainer-setup/node_modules/: what a package manager installed (3 files), so it is not installed"
        ) && out.stdout.contains("added .env.example"),
        "{}",
        out.stdout
    );
    let out = expect(
        &fixture,
        &[&["show", "devcontainer-setup", ".env.example"][..], &BARE].concat(),
        0,
    );
    assert!(out.stdout.ends_with("X=1\n"), "{}", out.stdout);
}
