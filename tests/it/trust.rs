//! Trust: clients that misbehave and repositories that attack (behaviour.md
//! §12), through the real binary.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Fixture, Raw, call, rss_kib, spawn_piped, wait_for_exit};

const ARGS: &[&str] = &["--skills-dir", "custom", "--no-user", "--no-project"];

#[test]
fn every_line_that_is_not_a_notification_gets_an_answer() {
    let fixture = Fixture::new();
    let mut raw = Raw::start(fixture.command(ARGS));
    let mut invalid_utf8 =
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"skill","arguments":{"name":""#
            .to_vec();
    invalid_utf8.extend_from_slice(b"\xff\xfe\"}}}\n");
    let deep = format!("{}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let cases: Vec<(Vec<u8>, i64, Value)> = vec![
        (b"this is not JSON\n".to_vec(), -32700, Value::Null),
        (invalid_utf8, -32700, Value::Null),
        (deep.into_bytes(), -32700, Value::Null),
        (b"[]\n".to_vec(), -32600, Value::Null),
        (b"\"a string\"\n".to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":3}"#.to_vec(), -32600, Value::Null),
        (br#"{"id":4,"method":"ping"}"#.to_vec(), -32600, Value::Null),
        (
            br#"{"jsonrpc":"2.0","id":[5],"method":"ping"}"#.to_vec(),
            -32600,
            Value::Null,
        ),
        (
            br#"{"jsonrpc":"2.0","id":6,"method":{}}"#.to_vec(),
            -32600,
            Value::Null,
        ),
        (
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"x"}"#.to_vec(),
            -32602,
            json!(7),
        ),
    ];
    for (line, code, id) in cases {
        let mut line = line;
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        raw.send(&line);
        let answer = raw
            .next_message(Duration::from_secs(10))
            .unwrap_or_else(|| {
                panic!(
                    "no answer to {:?}",
                    String::from_utf8_lossy(&line[..line.len().min(80)])
                )
            });
        assert_eq!(answer["error"]["code"], code, "{answer}");
        assert_eq!(answer["id"], id, "{answer}");
        assert!(answer.as_object().unwrap().contains_key("id"), "{answer}");
    }
    // Notifications never get an answer, whatever is wrong with them.
    raw.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\",\"params\":5}\n");
    raw.send_json(&json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}));
    assert_eq!(raw.next_message(Duration::from_secs(10)).unwrap()["id"], 99);
    assert_eq!(raw.finish().code(), Some(0));
}

#[test]
fn a_line_over_the_size_limit_is_refused_without_being_kept() {
    let fixture = Fixture::new();
    let mut raw = Raw::start(fixture.command(ARGS));
    let mut huge = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"skill","arguments":{"name":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'a', 6 * 1024 * 1024));
    huge.extend_from_slice(b"\"}}}\n");
    raw.send(&huge);
    let answer = raw.next_message(Duration::from_secs(10)).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], Value::Null);
    raw.send_json(&call(2, "canvas-design"));
    let answer = raw.next_message(Duration::from_secs(10)).unwrap();
    assert_eq!(answer["id"], 2);
    assert!(rss_kib(raw.child.id()) < 64 * 1024);
    assert_eq!(raw.finish().code(), Some(0));
}

#[test]
fn a_duplicate_id_in_flight_is_answered_with_an_error() {
    let fixture = Fixture::new();
    let mut raw = Raw::start(fixture.command(ARGS));
    // Both lines arrive in one write: the second is read while the first is
    // still being handled.
    let first = call(5, "canvas-design").to_string();
    raw.send(format!("{first}\n{first}\n").as_bytes());
    let mut answers = [
        raw.next_message(Duration::from_secs(10)).unwrap(),
        raw.next_message(Duration::from_secs(10)).unwrap(),
    ];
    answers.sort_by_key(|a| a.get("error").is_none());
    assert_eq!(answers[0]["id"], 5);
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert_eq!(
        answers[0]["error"]["message"],
        "Invalid Request: id 5 is already used by a request in flight"
    );
    assert_eq!(answers[1]["id"], 5);
    assert!(
        answers[1]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Loading: canvas-design\n")
    );
    assert_eq!(raw.finish().code(), Some(0));
}

/// A client that writes requests but never reads stdout: the server stops
/// reading stdin once its answers back up, instead of queueing them all. The
/// flood goes on until stdin has had no room for a second (the server stopped
/// reading), or until 10,000 requests went in (it did not).
#[test]
fn a_client_that_never_reads_cannot_grow_the_server() {
    use std::io::Write;
    let fixture = Fixture::new();
    // stdout is a pipe nobody reads.
    let mut child = spawn_piped(&mut fixture.command(ARGS));
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "flood", "version": "0"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut batch = String::new();
    for id in 1..=100 {
        batch.push_str(&call(id, "code-fences").to_string());
        batch.push('\n');
    }
    rustix::io::ioctl_fionbio(&stdin, true).unwrap();
    let (mut sent, mut written) = (0, 0);
    while sent < 10_000 {
        match stdin.write(&batch.as_bytes()[written..]) {
            Ok(n) => {
                written += n;
                if written == batch.len() {
                    (sent, written) = (sent + 100, 0);
                }
            }
            // The pipe is full. A server that reads makes room within
            // moments; one that stopped reading never does.
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                if !writable_within(&stdin, Duration::from_secs(1)) {
                    break;
                }
            }
            Err(err) => panic!("the server went away: {err}"),
        }
    }
    assert!(
        sent < 10_000,
        "the server kept reading: {sent} requests went in"
    );
    let rss = rss_kib(pid);
    assert!(rss < 64 * 1024, "resident {rss} KiB after {sent} requests");
    // Still alive, and it stops when killed.
    assert!(child.try_wait().unwrap().is_none());
    child.kill().unwrap();
    child.wait().unwrap();
    eprintln!("flooded {sent} requests; resident {rss} KiB");
}

/// Whether `pipe` has room for a write within `within`.
fn writable_within(pipe: &impl std::os::fd::AsRawFd, within: Duration) -> bool {
    let mut poll = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    let millis = libc::c_int::try_from(within.as_millis()).unwrap();
    // SAFETY: poll reads and writes the one pollfd it is given, which lives
    // on this stack frame for the whole call.
    let ready = unsafe { libc::poll(&mut poll, 1, millis) };
    // -1 (interrupted) tells nothing: the next write will.
    ready != 0
}

#[test]
fn a_closed_stdout_ends_the_server_with_success() {
    use std::io::{BufRead, Write};
    let fixture = Fixture::new();
    let mut child = spawn_piped(&mut fixture.command(ARGS));
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "closer", "version": "0"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":0"), "{line}");
    drop(stdout);
    for id in 1..=3 {
        // The server may be gone before the last write.
        let _ = writeln!(stdin, "{}", call(id, "canvas-design"));
    }
    // stdin stays open until the server has exited: nothing but the closed
    // stdout can have ended it. How soon is a benchmark's question
    // (benches/exit.py); the test only bounds a hang, generously, since a
    // timed assertion fails on a loaded machine.
    let status = wait_for_exit(&mut child, Duration::from_secs(20))
        .expect("exits while stdin is still open");
    drop(stdin);
    assert_eq!(status.code(), Some(0));
}

/// A repository whose project skills point at files outside it: a private
/// key behind a symlinked SKILL.md, a skill folder that is a symlink out of
/// the repository, and a skills folder that is itself such a symlink.
fn hostile_repository() -> Fixture {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    fixture.write(
        "victim/.ssh/id_rsa",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET-KEY-MATERIAL\n-----END OPENSSH PRIVATE KEY-----\n",
    );
    fixture.write(
        "victim/looks-like-a-skill/SKILL.md",
        "---\nname: stolen\ndescription: SECRET frontmatter outside the repository\n---\nSECRET body\n",
    );
    fixture.write(
        "victim/skills-elsewhere/other/SKILL.md",
        "---\nname: other\ndescription: SECRET from a skills folder outside\n---\n",
    );
    std::fs::create_dir_all(fixture.path("repo/.git")).unwrap();
    fixture.write(
        "repo/.claude/skills/honest/SKILL.md",
        "---\nname: honest\ndescription: A real project skill.\n---\nBody.\n",
    );
    fixture.write(
        "repo/shared/inside/SKILL.md",
        "---\nname: inside\ndescription: Linked from inside the repository.\n---\n",
    );
    let link = |target: &str, link: &str| {
        let link = fixture.path(link);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(fixture.path(target), link).unwrap();
    };
    std::fs::create_dir_all(fixture.path("repo/.claude/skills/code-review")).unwrap();
    link(
        "victim/.ssh/id_rsa",
        "repo/.claude/skills/code-review/SKILL.md",
    );
    link(
        "victim/looks-like-a-skill",
        "repo/.claude/skills/linked-out",
    );
    link("repo/shared/inside", "repo/.claude/skills/linked-in");
    link("victim/skills-elsewhere", "repo/.agents/skills");
    fixture
}

const PROJECT_ONLY: &[&str] = &["--project-dir", "repo", "--no-user", "--no-plugins"];

#[tokio::test]
async fn symlinks_out_of_a_project_are_not_followed() {
    let fixture = hostile_repository();
    let server = fixture.serve(PROJECT_ONLY).await;
    let description = server.description().await;
    assert_eq!(
        description,
        "Load a skill by name to get specialized instructions.\n\nAvailable skills:\n\
         - honest: A real project skill.\n\
         - inside: Linked from inside the repository."
    );
    for name in ["code-review", "stolen", "linked-out", "other"] {
        let result = server.call(name).await;
        assert!(crate::common::is_error(&result), "{name}");
        let text = crate::common::text(&result);
        assert!(!text.contains("SECRET"), "{name}: {text}");
    }
    let (status, stderr) = server.stop().await;
    assert!(status.success());
    assert!(!stderr.contains("SECRET"), "{stderr}");
    for link in [
        "repo/.claude/skills/code-review/SKILL.md",
        "repo/.claude/skills/linked-out",
        "repo/.agents/skills",
    ] {
        let path = fixture.path(link);
        assert!(
            stderr
                .lines()
                .any(|l| l.contains("[symlink-outside-project]")
                    && l.contains(&format!("{}:", path.display()))),
            "no symlink-outside-project for {link}:\n{stderr}"
        );
    }
}

#[tokio::test]
async fn a_skill_md_swapped_for_a_link_out_after_start_up_is_not_read() {
    let fixture = hostile_repository();
    // Neither the watcher nor the interval may refresh behind the test's back.
    let mut args = PROJECT_ONLY.to_vec();
    args.extend(["--no-watch", "--refresh-interval", "0"]);
    let server = fixture.serve(&args).await;
    assert!(crate::common::text(&server.call("honest").await).starts_with("Loading: honest\n"));
    let file = fixture.path("repo/.claude/skills/honest/SKILL.md");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(fixture.path("victim/looks-like-a-skill/SKILL.md"), &file).unwrap();
    let result = server.call("honest").await;
    assert!(crate::common::is_error(&result));
    assert_eq!(
        crate::common::text(&result),
        "Skill 'honest' could not be read: it now leads outside the project (a symlink), so it is not read. The file must be fixed before the skill can be used (`skillserve check` shows how); do not retry, pick another skill or tell the user."
    );
    // A file that lost its frontmatter is no skill any more either.
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, "Just some text.\n").unwrap();
    let result = server.call("honest").await;
    assert!(crate::common::text(&result).contains("it has no frontmatter any more"));
    server.stop().await;
}

#[test]
fn json_output_stays_valid_with_names_that_are_not_utf8_or_hold_line_breaks() {
    use std::os::unix::ffi::OsStrExt;
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    fixture.write(
        "skills/good/SKILL.md",
        "---\nname: good\ndescription: Fine.\n---\n",
    );
    // macOS file systems refuse names that are not UTF-8.
    let latin1 = cfg!(not(target_os = "macos"));
    if latin1 {
        let bad = fixture
            .path("skills")
            .join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
        std::fs::create_dir(&bad).unwrap();
        std::fs::write(
            bad.join("SKILL.md"),
            "---\ndescription: Latin-1 folder.\n---\n",
        )
        .unwrap();
    }
    fixture.write(
        "skills/two\nlines/SKILL.md",
        "---\ndescription: A folder name with a line break.\n---\n",
    );
    let only = ["--skills-dir", "skills", "--no-user", "--no-project"];
    let out = fixture
        .command(&[&["list", "--json"][..], &only].concat())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let items: Vec<Value> = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let names: Vec<&str> = items.iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["good"]);

    let out = fixture
        .command(&[&["check", "--json"][..], &only].concat())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let unusable: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "path-unusable")
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(unusable.len(), 1 + usize::from(latin1), "{report}");
    assert_eq!(unusable.iter().any(|p| p.ends_with("caf\u{fffd}")), latin1);
    assert!(unusable.iter().any(|p| p.ends_with("two\nlines")));

    // The plain listing escapes what it shows.
    let out = fixture.run(&[&["check"][..], &only].concat());
    assert!(out.stdout.contains("two\\nlines"), "{}", out.stdout);
}

#[test]
fn a_mistyped_log_level_is_a_usage_error() {
    let fixture = Fixture::new();
    for level in ["verbose", "debg", "skillserve=loud"] {
        let out = fixture.run(&["--log-level", level, "list"]);
        assert_eq!(out.status.code(), Some(2), "{level}");
        assert_eq!(
            out.stderr,
            format!(
                "skillserve: --log-level `{level}` is not a log level: use one of off, error, warn, info, debug, trace, or a filter such as `skillserve=debug,rmcp=info`\n"
            )
        );
    }
    let out = fixture
        .command(&["list"])
        .env("SKILLSERVE_LOG", "verbose")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = fixture.run(&["--log-level", "DEBUG", "list"]);
    assert_eq!(out.status.code(), Some(0));
    for (filter, reason) in [
        ("=debug", "invalid filter directive"),
        (
            "skillserve[scan]=debug",
            "span and field filters are not supported; use `level` or `target=level`",
        ),
    ] {
        let out = fixture
            .command(&["list"])
            .env("SKILLSERVE_LOG", filter)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{filter}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!("skillserve: invalid log filter `{filter}`: {reason}\n")
        );
    }
}

/// `SKILLSERVE_LOG` sets levels by target, the longest matching target
/// deciding, and logs carry no colours.
#[tokio::test]
async fn a_log_filter_sets_levels_by_target() {
    let fixture = Fixture::new();
    let log = async |filter: &str| {
        let mut command = fixture.command(&[
            "--skills-dir",
            "broken",
            "--no-user",
            "--no-project",
            "--no-plugins",
        ]);
        command.env("SKILLSERVE_LOG", filter);
        crate::common::Server::start(command).await.stop().await.1
    };
    // The scan of each folder is logged at debug by `skillserve::server`; a
    // broken file is logged at warn by `skillserve::diagnostic`.
    let scanned = " DEBUG skillserve::server: scanned ";
    let broken = " WARN skillserve::diagnostic: ";
    let stderr = log(" error , skillserve::server = DEBUG ").await;
    assert!(stderr.contains(scanned), "{stderr}");
    assert!(!stderr.contains(broken), "{stderr}");
    let stderr = log("skillserve=debug,rmcp=info").await;
    assert!(stderr.contains(scanned), "{stderr}");
    assert!(stderr.contains(broken), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    let stderr = log("skillserve=warn,skillserve::diagnostic=off").await;
    assert!(!stderr.contains(scanned), "{stderr}");
    assert!(!stderr.contains(broken), "{stderr}");
}

#[tokio::test]
async fn a_2026_client_that_listens_hears_of_a_change() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    fixture.write(
        "skills/alpha/SKILL.md",
        "---\nname: alpha\ndescription: First.\n---\n",
    );
    let command = fixture.command(&["--skills-dir", "skills", "--no-project", "--no-plugins"]);
    let mut server = crate::common::Server::start_2026(command).await;
    assert!(server.description().await.contains("- alpha: First."));
    server.watching().await;
    let mut subscription = server
        .client
        .peer()
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .expect("subscriptions/listen is accepted");
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    fixture.write(
        "skills/beta/SKILL.md",
        "---\nname: beta\ndescription: Added.\n---\n",
    );
    let notification = tokio::time::timeout(Duration::from_secs(10), subscription.next())
        .await
        .expect("a notification within 10 s")
        .expect("the stream is healthy")
        .expect("not ended");
    assert!(
        matches!(
            notification,
            ServerNotification::ToolListChangedNotification(_)
        ),
        "{notification:?}"
    );
    assert!(server.description().await.contains("- beta: Added."));
    // Nothing was sent outside the stream.
    assert!(server.notifications.try_recv().is_err());
    server.stop().await;
}

#[test]
fn the_tool_description_can_be_printed_as_a_client_gets_it() {
    let fixture = Fixture::new();
    let out = fixture.run(&[
        "list",
        "--description",
        "--description-budget",
        "300",
        "--skills-dir",
        "custom",
        "--no-user",
        "--no-project",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let description = out.stdout.strip_suffix('\n').unwrap();
    assert!(description.chars().count() <= 300, "{description}");
    assert!(description.starts_with("Load a skill by name to get specialized instructions.\n\nAvailable skills:\n- canvas-design"));
}

/// Someone who runs `skillserve` by hand in a terminal learns what it is
/// waiting for, in one line on stderr.
#[test]
fn run_by_hand_on_a_terminal_it_says_what_it_waits_for() {
    use std::io::{BufRead, BufReader};
    use std::os::fd::FromRawFd;
    let (mut leader, mut follower) = (0, 0);
    // SAFETY: openpty writes two descriptors it opened into the integers we
    // own; the null pointers ask for no name, settings or window size. (They
    // are `*mut` because macOS declares the last two so; Linux takes `*const`.)
    let opened = unsafe {
        libc::openpty(
            &mut leader,
            &mut follower,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(opened, 0);
    // SAFETY: both descriptors were just opened by openpty and are owned here.
    let (leader, follower) = unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(leader),
            std::os::fd::OwnedFd::from_raw_fd(follower),
        )
    };
    let fixture = Fixture::new();
    let mut child = fixture
        .command(ARGS)
        .stdin(std::process::Stdio::from(follower))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    drop(leader);
    assert_eq!(
        first,
        "skillserve is an MCP server: it is waiting for an MCP client on stdin (press Ctrl-D or Ctrl-C to quit). To see your skills, run `skillserve list`.\n"
    );
}

/// 300 requests written at once, then stdin closed: the server keeps
/// reading past the 32 it has in flight and the 256 it queues (one more is
/// answered "server busy"), sees the end of stdin, answers what is still
/// queued without starting it, and exits without working through the
/// backlog. Each request here hashes a 15 MiB file on a blocking thread,
/// far longer than reading 300 lines takes: had the server waited for room
/// before reading on, every request would have been answered in full.
#[test]
fn the_end_of_stdin_is_seen_behind_a_backlog_of_requests() {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    fixture.write(
        "skills/big/SKILL.md",
        "---\nname: big\ndescription: A skill with a big file.\n---\n",
    );
    // Sparse: nothing is written to disk.
    std::fs::File::create(fixture.path("skills/big/data.bin"))
        .unwrap()
        .set_len(15 * 1024 * 1024)
        .unwrap();
    let args = [
        "--skills-dir",
        "skills",
        "--no-user",
        "--no-project",
        "--no-plugins",
        "--no-watch",
    ];
    let mut raw = Raw::start(fixture.command(&args));
    let mut batch = String::new();
    for id in 1..=300 {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "skills/get",
            "params": {"uri": "skill://big/SKILL.md"}});
        batch.push_str(&format!("{request}\n"));
    }
    raw.send(batch.as_bytes());
    raw.close_stdin();
    let answers = raw.rest();
    let status = wait_for_exit(&mut raw.child, Duration::from_secs(10)).expect("exits");
    assert_eq!(status.code(), Some(0));
    let said = |what: &str| {
        answers
            .iter()
            .filter(|a| {
                a["error"]["code"] == -32000
                    && a["error"]["message"].as_str().unwrap().starts_with(what)
            })
            .count()
    };
    let (busy, stopping) = (said("Server busy: "), said("Server stopping: "));
    let full = answers.iter().filter(|a| a.get("result").is_some()).count();
    eprintln!(
        "{} answers: {full} in full, {busy} busy, {stopping} stopped before they started",
        answers.len()
    );
    assert_eq!(full + busy + stopping, answers.len(), "{answers:?}");
    assert!(stopping > 0, "nothing was queued when stdin ended");
    assert!(full < 300, "the backlog was worked through before the exit");
    let mut ids: Vec<i64> = answers.iter().filter_map(|a| a["id"].as_i64()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), answers.len(), "one answer per request at most");
}

/// Every paginated list accepts only the cursors it issued: numbers,
/// offsets, arrays, booleans and garbage are -32602; an issued cursor works,
/// also on a second server started on the same skills.
#[test]
fn only_issued_cursors_are_accepted_on_every_list_and_by_any_server() {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    for i in 0..150 {
        fixture.write(
            &format!("skills/s{i:03}/SKILL.md"),
            &format!("---\nname: s{i:03}\ndescription: Skill {i}.\n---\n"),
        );
        fixture.write(&format!("skills/s000/files/f{i:03}.md"), "x");
    }
    let args = [
        "--skills-dir",
        "skills",
        "--no-user",
        "--no-project",
        "--no-plugins",
        "--no-watch",
    ];
    let lists: [(&str, Value); 6] = [
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("skills/list", json!({})),
        (
            "resources/directory/read",
            json!({"uri": "skill://s000/files"}),
        ),
        ("tools/list", json!({})),
        ("resources/templates/list", json!({})),
    ];
    let mut raw = Raw::start(fixture.command(&args));
    let mut id = 0;
    let mut ask = |raw: &mut Raw, method: &str, params: &Value| -> Value {
        id += 1;
        raw.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = raw
            .next_message(Duration::from_secs(20))
            .expect("an answer");
        assert_eq!(answer["id"], id, "{answer}");
        answer
    };
    let mut issued = Vec::new();
    for (method, params) in &lists {
        let first = ask(&mut raw, method, params);
        let cursor = first["result"]["nextCursor"].clone();
        if method.ends_with("templates/list") || *method == "tools/list" {
            assert_eq!(cursor, Value::Null, "{method}: one page");
        } else {
            assert!(cursor.is_string(), "{method}: {first}");
            issued.push((*method, params.clone(), cursor.clone()));
        }
        for bad in [
            json!("0"),
            json!("+100"),
            json!("50"),
            json!("100"),
            json!("not a cursor"),
            json!(100),
            json!([1]),
            json!(true),
            json!({}),
        ] {
            let mut params = params.clone();
            params["cursor"] = bad.clone();
            let answer = ask(&mut raw, method, &params);
            assert_eq!(answer["error"]["code"], -32602, "{method} {bad}: {answer}");
        }
        // Another list's cursor is not this list's.
        if let Some((other, _, cursor)) = issued.first()
            && other != method
        {
            let mut params = params.clone();
            params["cursor"] = cursor.clone();
            let answer = ask(&mut raw, method, &params);
            assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        }
    }
    let second_pages: Vec<Value> = issued
        .iter()
        .map(|(method, params, cursor)| {
            let mut params = params.clone();
            params["cursor"] = cursor.clone();
            ask(&mut raw, method, &params)["result"].clone()
        })
        .collect();
    assert_eq!(raw.finish().code(), Some(0));
    assert_eq!(second_pages[0]["prompts"][0]["name"], "s100");
    assert_eq!(
        second_pages[1]["resources"][0]["uri"],
        "skill://s100/SKILL.md"
    );
    assert_eq!(second_pages[2]["skills"][0]["uri"], "skill://s100/SKILL.md");
    assert_eq!(
        second_pages[3]["resources"][0]["uri"],
        "skill://s000/files/f100.md"
    );

    // Another process, the same skills: the same pages.
    let mut other = Raw::start(fixture.command(&args));
    for ((method, params, cursor), page) in issued.iter().zip(&second_pages) {
        let mut params = params.clone();
        params["cursor"] = cursor.clone();
        other.send_json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
        let answer = other.next_message(Duration::from_secs(20)).unwrap();
        assert_eq!(&answer["result"], page, "{method}");
    }
    assert_eq!(other.finish().code(), Some(0));
}
