//! `skillserve import` and `skillserve invoke` against real MCP servers: the
//! example `mcp_test_server` (built by `cargo test`), started as a child
//! process in its modes `varied`, `fail`, `hang` and `from-file`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use skillserve::import::DEFAULT_TIMEOUT_SECS;

use crate::common::{BIN, Fixture, Output, text};

/// The test server, next to the binary under test. A plain `cargo test`
/// builds examples; `cargo test --test it` does not, so a missing or stale one
/// is said plainly rather than tested.
fn test_server() -> String {
    let path: PathBuf = Path::new(BIN)
        .parent()
        .expect("the binary has a folder")
        .join("examples/mcp_test_server");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mcp_test_server.rs");
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    assert!(
        modified(&path) >= modified(&source),
        "{} is missing or older than its source; run `cargo build --examples` (a plain `cargo test` does)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// A stdio server entry running the test server with `args`.
fn server(args: &[&str]) -> Value {
    json!({"command": test_server(), "args": args})
}

/// Writes `mcp.json` with `servers`, in this order, as its `mcpServers`
/// (through text: `json!` objects sort their keys).
fn settings(fixture: &Fixture, servers: &[(&str, Value)]) {
    let entries: Vec<String> = servers
        .iter()
        .map(|(name, server)| format!("    {}: {server}", Value::from(*name)))
        .collect();
    let text = format!(
        "{{\n  \"mcpServers\": {{\n{}\n  }}\n}}\n",
        entries.join(",\n")
    );
    fixture.write("mcp.json", &text);
}

/// Writes the tool list a `from-file` server serves: one tool per name.
fn tools_file(fixture: &Fixture, relative: &str, names: &[&str]) {
    let tools: Vec<Value> = names
        .iter()
        .map(|name| json!({"name": name, "description": format!("The {name} tool."), "inputSchema": {"type": "object"}}))
        .collect();
    fixture.write(relative, &Value::Array(tools).to_string());
}

/// Runs the binary with `vars` added to the hermetic environment and `stdin`.
fn run_with(fixture: &Fixture, args: &[&str], vars: &[(&str, &str)], stdin: &str) -> Output {
    let mut command = fixture.command(args);
    command
        .env("SKILLSERVE_LOG", "warn")
        .envs(vars.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("run skillserve");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    let output = child.wait_with_output().unwrap();
    Output {
        status: output.status,
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

fn run(fixture: &Fixture, args: &[&str]) -> Output {
    run_with(fixture, args, &[], "")
}

/// `import --mcp-settings mcp.json --output-dir out` plus `extra`.
fn import(fixture: &Fixture, extra: &[&str]) -> Output {
    let mut args = vec![
        "import",
        "--mcp-settings",
        "mcp.json",
        "--output-dir",
        "out",
    ];
    args.extend_from_slice(extra);
    run(fixture, &args)
}

/// [`import`], which must end before the default `--timeout`
/// ([`DEFAULT_TIMEOUT_SECS`]) could have: otherwise it is killed and the test
/// fails.
fn import_before_the_default_timeout(fixture: &Fixture, extra: &[&str]) -> Output {
    let mut command =
        fixture.command(&[&["import", "--mcp-settings", "mcp.json"][..], extra].concat());
    command
        .args(["--output-dir", "out"])
        .env("SKILLSERVE_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = command.spawn().expect("run skillserve");
    let pid = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output()));
    let within = Duration::from_secs(DEFAULT_TIMEOUT_SECS);
    let Ok(output) = finished.recv_timeout(within) else {
        // SAFETY: kill(2) with the pid of a child we spawned and a valid signal.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        panic!("import still ran after the default timeout of {within:?}");
    };
    let output = output.unwrap();
    Output {
        status: output.status,
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// `invoke --mcp-settings mcp.json` plus `rest`.
fn invoke(fixture: &Fixture, rest: &[&str]) -> Output {
    let mut args = vec!["invoke", "--mcp-settings", "mcp.json"];
    args.extend_from_slice(rest);
    run(fixture, &args)
}

/// The entries of `out`, sorted (hidden ones included).
fn entries(fixture: &Fixture) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixture.path("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn lock(fixture: &Fixture) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(fixture.path("out/.skillserve-import.json")).unwrap(),
    )
    .unwrap()
}

/// `skillserve check` over `out` finds no error.
fn assert_check_passes(fixture: &Fixture) {
    let out = run(
        fixture,
        &[
            "check",
            "--skills-dir",
            "out",
            "--no-user",
            "--no-project",
            "--no-plugins",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stdout);
    assert!(!out.stdout.contains("error["), "{}", out.stdout);
}

const SEARCH_SKILL: &str = r#"---
name: varied-search
description: "Search the index for documents."
metadata:
  generated-by: "skillserve import"
  mcp-server: "varied"
  mcp-tool: "search"
---

# Search the index

Search the index for documents. Results are ranked by relevance.

Use `options` to tune it.

## Parameters

| Name | Type | Required | Description | Allowed values / default |
|---|---|---|---|---|
| `options` | object | no | How to search. |  |
| `options.depth` | integer | no | Links to follow. | default: `2`; minimum 0 |
| `options.mode` | string | yes |  | `"fast"`, `"thorough"` |
| `query` | string | yes | What to look for. |  |
| `tags` | array of string | no | Only documents with these tags. |  |

## Output

The result's `structuredContent` follows this JSON Schema:

```json
{
  "properties": {
    "hits": {
      "type": "integer"
    }
  },
  "required": [
    "hits"
  ],
  "type": "object"
}
```

## Annotations

The server describes this tool as follows (hints, not guarantees):

- Read-only: it does not change its environment.
- Closed world: it works only within its own domain.

## How to call it

If the `varied` MCP server is connected to your client, call its tool `search` directly.

Otherwise, from a shell:

```sh
skillserve invoke --mcp-settings '<T>/mcp.json' varied search '{"query":"<query>"}'
```

The last argument is a JSON object of the parameters above (`-` reads it from stdin). The command prints the text the tool returns (`--json`: the whole result) and exits with 1 when the tool reports an error.
"#;

#[test]
fn import_writes_one_skill_per_tool() {
    let fixture = Fixture::empty();
    settings(&fixture, &[("varied", server(&["varied"]))]);
    let out = import(&fixture, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "Generated 8 skills from 1 server\n");
    assert_eq!(
        entries(&fixture),
        [
            ".skillserve-import.json",
            "varied-delete-item",
            "varied-echo",
            "varied-fail",
            "varied-get-user-profile",
            "varied-getenv",
            "varied-ping",
            "varied-search",
            "varied-stats",
        ]
    );
    let search = std::fs::read_to_string(fixture.path("out/varied-search/SKILL.md")).unwrap();
    assert_eq!(fixture.anonymize(&search), SEARCH_SKILL);

    let ping = std::fs::read_to_string(fixture.path("out/varied-ping/SKILL.md")).unwrap();
    assert!(
        ping.contains("\ndescription: \"Call the ping tool of the varied MCP server.\"\n"),
        "{ping}"
    );
    assert!(
        ping.contains(
            "\n# ping\n\n## Parameters\n\nThis tool takes no parameters.\n\n## How to call it\n"
        ),
        "{ping}"
    );
    assert!(ping.contains(" varied ping '{}'\n"), "{ping}");

    let profile =
        std::fs::read_to_string(fixture.path("out/varied-get-user-profile/SKILL.md")).unwrap();
    assert!(
        profile.contains("  mcp-tool: \"Get_User.Profile\"\n"),
        "{profile}"
    );
    assert!(
        profile.contains(" varied Get_User.Profile '{\"id\":0}'\n"),
        "{profile}"
    );

    let delete = std::fs::read_to_string(fixture.path("out/varied-delete-item/SKILL.md")).unwrap();
    assert!(
        delete.contains(
            "- Not read-only: it may change its environment.\n\
         - Destructive: it may delete or overwrite data.\n\
         - Idempotent: calling it again with the same arguments has no further effect.\n"
        ),
        "{delete}"
    );

    assert_check_passes(&fixture);
}

#[test]
fn lock_file_skips_unchanged_servers_until_force_refresh() {
    let fixture = Fixture::empty();
    settings(&fixture, &[("varied", server(&["varied"]))]);
    assert_eq!(import(&fixture, &[]).status.code(), Some(0));

    let written = lock(&fixture);
    assert_eq!(written["version"], 1);
    assert_eq!(
        written["settings"],
        fixture.path("mcp.json").to_str().unwrap()
    );
    let digest = written["servers"]["varied"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(digest.len(), 64);
    assert!(digest.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        written["servers"]["varied"]["skills"]
            .as_array()
            .unwrap()
            .len(),
        8
    );

    // A hand edit survives a run that finds nothing new ...
    let ping = fixture.path("out/varied-ping/SKILL.md");
    let original = std::fs::read_to_string(&ping).unwrap();
    std::fs::write(&ping, original.replace("# ping", "# ping (edited)")).unwrap();
    let out = import(&fixture, &[]);
    assert_eq!(
        out.stdout,
        "Generated 0 skills from 0 servers\n  skipped varied (unchanged; --force-refresh regenerates)\n"
    );
    assert_eq!(lock(&fixture), written);
    assert!(std::fs::read_to_string(&ping).unwrap().contains("(edited)"));

    // ... and --force-refresh writes everything again.
    let out = import(&fixture, &["--force-refresh"]);
    assert_eq!(out.stdout, "Generated 8 skills from 1 server\n");
    assert_eq!(std::fs::read_to_string(&ping).unwrap(), original);

    // A generated folder that was deleted brings its server back.
    std::fs::remove_dir_all(fixture.path("out/varied-echo")).unwrap();
    let out = import(&fixture, &[]);
    assert_eq!(out.stdout, "Generated 8 skills from 1 server\n");
    assert!(fixture.path("out/varied-echo/SKILL.md").exists());
}

#[test]
fn changed_tools_regenerate_and_stale_skills_go_without_touching_other_files() {
    let fixture = Fixture::empty();
    tools_file(&fixture, "tools.json", &["alpha", "beta", "gamma"]);
    let path = fixture.path("tools.json");
    settings(
        &fixture,
        &[("files", server(&["from-file", path.to_str().unwrap()]))],
    );
    assert_eq!(
        import(&fixture, &[]).stdout,
        "Generated 3 skills from 1 server\n"
    );
    let before = lock(&fixture)["servers"]["files"]["sha256"].clone();

    // Things in the output folder that import did not write.
    fixture.write("out/notes.txt", "mine");
    fixture.write(
        "out/my-skill/SKILL.md",
        "---\nname: my-skill\ndescription: Mine.\n---\nHands off.\n",
    );
    fixture.write("out/files-gamma/references.md", "added by hand");
    // A generated skill rewritten by hand, without the marker, is the user's now.
    fixture.write(
        "out/files-beta/SKILL.md",
        "---\nname: files-beta\ndescription: Taken over.\n---\n",
    );

    tools_file(&fixture, "tools.json", &["alpha", "delta"]);
    let out = import(&fixture, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stdout);
    assert_eq!(
        out.stdout,
        "Generated 2 skills from 1 server\n  \
         removed files-gamma/SKILL.md (tool gone; the folder holds other files, so it stays)\n"
    );
    assert_ne!(lock(&fixture)["servers"]["files"]["sha256"], before);
    assert_eq!(
        lock(&fixture)["servers"]["files"]["skills"],
        json!(["files-alpha", "files-delta"])
    );
    assert_eq!(
        entries(&fixture),
        [
            ".skillserve-import.json",
            "files-alpha",
            "files-beta",
            "files-delta",
            "files-gamma",
            "my-skill",
            "notes.txt",
        ]
    );
    assert!(!fixture.path("out/files-gamma/SKILL.md").exists());
    assert_eq!(
        std::fs::read_to_string(fixture.path("out/files-gamma/references.md")).unwrap(),
        "added by hand"
    );
    assert!(
        std::fs::read_to_string(fixture.path("out/files-beta/SKILL.md"))
            .unwrap()
            .contains("Taken over.")
    );

    // The server leaves the settings: its skills go, nothing else does.
    settings(&fixture, &[]);
    let out = import(&fixture, &[]);
    assert_eq!(
        out.stdout,
        "Generated 0 skills from 0 servers\n  removed files-alpha (server gone)\n  removed files-delta (server gone)\n"
    );
    assert_eq!(
        entries(&fixture),
        [
            ".skillserve-import.json",
            "files-beta",
            "files-gamma",
            "my-skill",
            "notes.txt"
        ]
    );
    assert_eq!(lock(&fixture)["servers"], json!({}));
}

#[test]
fn disabled_and_remote_servers_are_not_started_and_lose_their_skills() {
    let fixture = Fixture::empty();
    tools_file(&fixture, "tools.json", &["one"]);
    let path = fixture.path("tools.json");
    let mut files = server(&["from-file", path.to_str().unwrap()]);
    settings(&fixture, &[("files", files.clone())]);
    assert_eq!(import(&fixture, &[]).status.code(), Some(0));
    assert!(fixture.path("out/files-one/SKILL.md").exists());

    files["disabled"] = json!(true);
    settings(
        &fixture,
        &[
            ("files", files),
            (
                "web",
                json!({"type": "http", "url": "https://example.com/mcp"}),
            ),
            ("sse", json!({"url": "https://example.com/sse"})),
        ],
    );
    let out = import(&fixture, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        out.stdout,
        "Generated 0 skills from 0 servers\n  \
         disabled files (not started)\n  \
         removed files-one (server disabled)\n  \
         skipped web (only stdio servers can be imported)\n  \
         skipped sse (only stdio servers can be imported)\n"
    );
    assert_eq!(entries(&fixture), [".skillserve-import.json"]);
}

#[test]
fn failing_and_hanging_servers_are_reported_and_the_others_go_on() {
    let fixture = Fixture::empty();
    tools_file(&fixture, "tools.json", &["kept"]);
    let path = fixture.path("tools.json");
    settings(
        &fixture,
        &[
            ("broken", server(&["fail"])),
            ("varied", server(&["varied"])),
            ("slow", server(&["hang"])),
            ("files", server(&["from-file", path.to_str().unwrap()])),
            (
                "ghost",
                json!({"command": fixture.path("no-such-server").to_str().unwrap()}),
            ),
        ],
    );
    // The hanging server is given up on when --timeout says, not when the
    // default timeout would have: the import ends before that could happen.
    let out = import_before_the_default_timeout(&fixture, &["--timeout", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "\
Generated 9 skills from 2 servers
  failed broken: exited (or closed its stdout) before answering `initialize`
    mcp-test-server: starting
    fatal: cannot open database /nowhere/db.sqlite
  failed slow: did not answer `initialize` within 2 s (--timeout sets the limit)
    mcp-test-server: warming up, this takes forever
  failed ghost: cannot start `<T>/no-such-server`: <T>/no-such-server does not exist or is not a program
"
    );
    assert_check_passes(&fixture);

    // A server that worked before and fails now keeps its skills.
    std::fs::remove_file(&path).unwrap();
    let out = import(&fixture, &["--timeout", "2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.contains(
            "\n  failed files: exited (or closed its stdout) before answering `initialize`\n"
        ),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("removed"), "{}", out.stdout);
    assert!(fixture.path("out/files-kept/SKILL.md").exists());
    assert_eq!(
        lock(&fixture)["servers"]["files"]["skills"],
        json!(["files-kept"])
    );
}

/// Waits until process `pid` is gone (or a zombie waiting for init).
#[cfg(target_os = "linux")]
fn assert_ends(pid: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state follows the command name in parentheses.
        let state = state.rsplit(')').next().unwrap_or("").trim_start();
        if state.is_empty() || state.starts_with('Z') {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "process {pid} still runs: {state}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server that hangs is killed when its time is up, and when `import` is
/// stopped by a signal (the servers have process groups of their own, so a
/// terminal's Ctrl-C does not reach them).
#[cfg(target_os = "linux")]
#[test]
fn hanging_servers_are_killed_on_timeout_and_on_signals() {
    let fixture = Fixture::empty();
    let pidfile = fixture.path("pid");
    settings(
        &fixture,
        &[("slow", server(&["hang", pidfile.to_str().unwrap()]))],
    );
    let out = import(&fixture, &["--timeout", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_ends(&std::fs::read_to_string(&pidfile).unwrap());

    std::fs::remove_file(&pidfile).unwrap();
    let mut child = fixture
        .command(&["import", "--mcp-settings", "mcp.json", "--timeout", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !pidfile.exists() || std::fs::read_to_string(&pidfile).unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the server starts");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) with the pid of a child we spawned and a valid signal.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.ends_with("skillserve: stopped by SIGTERM\n"),
        "{stderr}"
    );
    assert_ends(&std::fs::read_to_string(&pidfile).unwrap());
}

#[test]
fn variables_expand_in_command_and_args_and_env_reaches_the_server() {
    let fixture = Fixture::empty();
    tools_file(&fixture, "tools.json", &["listed"]);
    settings(
        &fixture,
        &[
            (
                "files",
                json!({"command": "${TEST_SERVER}", "args": ["from-file", "$TOOLS"]}),
            ),
            (
                "varied",
                json!({"command": "$TEST_SERVER", "args": ["varied"], "env": {"GREETING": "hello from env"}}),
            ),
            (
                "unset",
                json!({"command": "$TEST_SERVER", "args": ["from-file", "$SURELY_NOT_SET_ANYWHERE"]}),
            ),
        ],
    );
    let tools = fixture.path("tools.json");
    let server = test_server();
    let vars = [
        ("TEST_SERVER", server.as_str()),
        ("TOOLS", tools.to_str().unwrap()),
    ];
    let args = [
        "import",
        "--mcp-settings",
        "mcp.json",
        "--output-dir",
        "out",
    ];
    let out = run_with(&fixture, &args, &vars, "");
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "Generated 9 skills from 2 servers\n  \
         failed unset: <T>/mcp.json: mcpServers.unset.args[1] uses $SURELY_NOT_SET_ANYWHERE, which is not set\n"
    );
    assert!(fixture.path("out/files-listed/SKILL.md").exists());

    let args = [
        "invoke",
        "--mcp-settings",
        "mcp.json",
        "varied",
        "getenv",
        r#"{"name": "GREETING"}"#,
    ];
    let out = run_with(&fixture, &args, &vars, "");
    assert_eq!(
        (out.status.code(), out.stdout.as_str()),
        (Some(0), "hello from env\n"),
        "{}",
        out.stderr
    );
}

/// A bare `command` is looked for in `PATH` (the one a server's `env` sets,
/// if any), as a shell would: a launcher script such as `npx` is found and
/// started with its arguments; a file without an executable bit is not a
/// program, and the current folder is not searched.
#[cfg(unix)]
#[test]
fn launchers_are_found_on_path_like_a_shell_finds_them() {
    use std::os::unix::fs::PermissionsExt;
    let fixture = Fixture::empty();
    tools_file(&fixture, "tools.json", &["listed"]);
    let launcher = format!("#!/bin/sh\nexec '{}' \"$@\"\n", test_server());
    for (path, mode) in [
        ("bin/fake-npx", 0o755),
        ("bin/not-executable", 0o644),
        ("private/private-npx", 0o755),
        ("in-cwd", 0o755),
    ] {
        fixture.write(path, &launcher);
        std::fs::set_permissions(fixture.path(path), std::fs::Permissions::from_mode(mode))
            .unwrap();
    }
    let tools = fixture.path("tools.json");
    let tools = tools.to_str().unwrap();
    let private = fixture.path("private");
    settings(
        &fixture,
        &[
            (
                "npx",
                json!({"command": "fake-npx", "args": ["from-file", tools]}),
            ),
            (
                "args",
                json!({"command": "fake-npx", "args": ["argv", "two words", "say \"hi\"", "%PATH%", "a&b", ""]}),
            ),
            (
                "private",
                json!({"command": "private-npx", "args": ["from-file", tools],
                       "env": {"PATH": private.to_str().unwrap()}}),
            ),
            ("ghost", json!({"command": "no-such-program"})),
            ("plain", json!({"command": "not-executable"})),
            ("cwd", json!({"command": "in-cwd"})),
        ],
    );
    let path = format!("{}:/usr/bin:/bin", fixture.path("bin").display());
    let vars = [("PATH", path.as_str())];
    let args = [
        "import",
        "--mcp-settings",
        "mcp.json",
        "--output-dir",
        "out",
    ];
    let out = run_with(&fixture, &args, &vars, "");
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "Generated 3 skills from 3 servers
  failed ghost: cannot start `no-such-program`: not found in PATH (3 folders searched)
  failed plain: cannot start `not-executable`: not found in PATH (3 folders searched)
  failed cwd: cannot start `in-cwd`: not found in PATH (3 folders searched)
"
    );
    assert_eq!(
        entries(&fixture),
        [
            ".skillserve-import.json",
            "args-argv",
            "npx-listed",
            "private-listed"
        ]
    );

    let args = [
        "invoke",
        "--mcp-settings",
        "mcp.json",
        "npx",
        "listed",
        "{}",
    ];
    let out = run_with(&fixture, &args, &vars, "");
    assert_eq!(
        (out.status.code(), out.stdout.as_str()),
        (Some(0), "called listed\n"),
        "{}",
        out.stderr
    );
    // The launcher passes every argument on unchanged.
    let args = ["invoke", "--mcp-settings", "mcp.json", "args", "argv", "{}"];
    let out = run_with(&fixture, &args, &vars, "");
    assert_eq!(
        (out.status.code(), out.stdout.as_str()),
        (
            Some(0),
            "[\"two words\",\"say \\\"hi\\\"\",\"%PATH%\",\"a&b\",\"\"]\n"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn name_collisions_are_made_unique_and_reported() {
    let fixture = Fixture::empty();
    tools_file(&fixture, "a.json", &["b-c"]);
    tools_file(&fixture, "ab.json", &["c"]);
    tools_file(&fixture, "mine.json", &["skill"]);
    let file = |name: &str| fixture.path(name).to_str().unwrap().to_owned();
    settings(
        &fixture,
        &[
            ("a", server(&["from-file", &file("a.json")])),
            ("a-b", server(&["from-file", &file("ab.json")])),
            ("mine", server(&["from-file", &file("mine.json")])),
        ],
    );
    // A skill of the user's with a name import would choose.
    fixture.write(
        "out/Mine-Skill/SKILL.md",
        "---\nname: mine-skill\ndescription: Mine.\n---\n",
    );
    let out = import(&fixture, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        out.stdout,
        "Generated 3 skills from 3 servers\n  \
         renamed a-b-c-2 (name collision: a-b-c is taken)\n  \
         renamed mine-skill-2 (name collision: mine-skill is taken)\n"
    );
    let renamed = std::fs::read_to_string(fixture.path("out/a-b-c-2/SKILL.md")).unwrap();
    assert!(renamed.starts_with("---\nname: a-b-c-2\n"), "{renamed}");
    assert!(
        renamed.contains("  mcp-server: \"a-b\"\n  mcp-tool: \"c\"\n"),
        "{renamed}"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.path("out/Mine-Skill/SKILL.md")).unwrap(),
        "---\nname: mine-skill\ndescription: Mine.\n---\n"
    );
}

#[test]
fn bad_settings_files_are_one_line_errors_with_exit_2() {
    let fixture = Fixture::empty();
    let cases: [(&str, Option<&str>, String); 4] = [
        ("missing.json", None, "cannot read MCP settings file <T>/missing.json: No such file or directory (os error 2)".to_owned()),
        ("syntax.json", Some("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}"), "MCP settings file <T>/syntax.json is not valid JSON: trailing comma at line 3, column 26".to_owned()),
        ("none.json", Some("{\"other\": {}}"), "MCP settings file <T>/none.json: there is no `mcpServers` object; write the servers as {\"mcpServers\": {\"name\": {\"command\": ...}}}".to_owned()),
        ("list.json", Some("{\"mcpServers\": [\"a\"]}"), "MCP settings file <T>/list.json: `mcpServers` must be an object of servers by name, not an array".to_owned()),
    ];
    for (file, text, message) in cases {
        if let Some(text) = text {
            fixture.write(file, text);
        }
        for command in [
            vec!["import", "--mcp-settings", file],
            vec!["invoke", "--mcp-settings", file, "a", "b"],
        ] {
            let out = run(&fixture, &command);
            assert_eq!(out.status.code(), Some(2), "{command:?}");
            assert_eq!(
                fixture.anonymize(&out.stderr),
                format!("skillserve: {message}\n")
            );
            assert_eq!(out.stdout, "");
        }
    }
    assert!(!fixture.path("mcp-skills").exists());

    // One malformed server fails alone.
    settings(
        &fixture,
        &[
            ("odd", json!({"command": "x", "args": ["ok", 2]})),
            ("varied", server(&["varied"])),
        ],
    );
    let out = run(&fixture, &["import", "--mcp-settings", "mcp.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "Generated 8 skills from 1 server\n  failed odd: <T>/mcp.json: mcpServers.odd.args[1] must be a string, not a number\n"
    );
    // The default output folder is ./mcp-skills.
    assert!(fixture.path("mcp-skills/varied-search/SKILL.md").exists());
    let out = invoke(&fixture, &["odd", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fixture.anonymize(&out.stderr),
        "skillserve: <T>/mcp.json: mcpServers.odd.args[1] must be a string, not a number\n"
    );
}

#[test]
fn invoke_prints_text_and_exits_by_the_result() {
    let fixture = Fixture::empty();
    settings(
        &fixture,
        &[
            ("varied", server(&["varied"])),
            ("broken", server(&["fail"])),
            ("off", json!({"command": "x", "disabled": true})),
        ],
    );

    let out = invoke(&fixture, &["varied", "echo", r#"{"text": "hi there"}"#]);
    assert_eq!(
        (out.status.code(), out.stdout.as_str(), out.stderr.as_str()),
        (Some(0), "hi there\n", "")
    );

    let out = run_with(
        &fixture,
        &[
            "invoke",
            "--mcp-settings",
            "mcp.json",
            "varied",
            "echo",
            "-",
        ],
        &[],
        r#"{"text": "from stdin"}"#,
    );
    assert_eq!(
        (out.status.code(), out.stdout.as_str()),
        (Some(0), "from stdin\n")
    );

    // Text blocks and one line for an image; --json gives everything.
    let out = invoke(&fixture, &["varied", "search", r#"{"query": "cats"}"#]);
    assert_eq!(
        out.stdout,
        "3 hits for cats\n\n[image image/png, 5 bytes]\n"
    );
    let out = invoke(
        &fixture,
        &["varied", "search", r#"{"query": "cats"}"#, "--json"],
    );
    let result: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(result["structuredContent"], json!({"hits": 3}));
    assert_eq!(result["content"][0]["text"], "3 hits for cats");
    // Structured content only: printed as JSON.
    let out = invoke(&fixture, &["varied", "stats"]);
    assert_eq!(out.stdout, "{\n  \"count\": 42\n}\n");

    // isError: the text on stderr, exit 1.
    let out = invoke(&fixture, &["varied", "fail"]);
    assert_eq!(
        (out.status.code(), out.stdout.as_str(), out.stderr.as_str()),
        (Some(1), "", "something went wrong\n")
    );

    // A JSON-RPC error: the server's message, and the tools there are.
    let out = invoke(&fixture, &["varied", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        out.stderr,
        "skillserve: unknown tool: nope\n\
         skillserve: varied has no tool \"nope\"; its tools are: search, ping, Get_User.Profile, fail, echo, getenv, delete_item, stats\n"
    );

    // A server that cannot start: its stderr, exit 1.
    let out = invoke(&fixture, &["broken", "anything"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        out.stderr,
        "skillserve: broken: exited (or closed its stdout) before answering `initialize`\n  \
         mcp-test-server: starting\n  fatal: cannot open database /nowhere/db.sqlite\n"
    );

    // Mistakes in the input: exit 2, nothing started.
    for (args, message) in [
        (
            vec!["varied", "echo", "{bad"],
            "skillserve: JSON_ARGS is not valid JSON (key must be a string at line 1 column 2); give an object such as '{\"path\": \"/tmp\"}'\n",
        ),
        (
            vec!["varied", "echo", "[1, 2]"],
            "skillserve: JSON_ARGS must be a JSON object such as '{\"path\": \"/tmp\"}', not an array\n",
        ),
        (
            vec!["nosuch", "echo"],
            "skillserve: no server named \"nosuch\" in <T>/mcp.json; the servers are: varied, broken, off\n",
        ),
        (
            vec!["off", "echo"],
            "skillserve: server \"off\" is disabled in <T>/mcp.json\n",
        ),
    ] {
        let out = invoke(&fixture, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(fixture.anonymize(&out.stderr), message);
    }
}

#[tokio::test]
async fn list_check_and_serve_see_the_generated_skills() {
    let fixture = Fixture::empty();
    settings(&fixture, &[("varied", server(&["varied"]))]);
    assert_eq!(import(&fixture, &[]).status.code(), Some(0));

    let only_out = [
        "--skills-dir",
        "out",
        "--no-user",
        "--no-project",
        "--no-plugins",
    ];
    let mut list = vec!["list"];
    list.extend(only_out);
    let out = run(&fixture, &list);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        fixture.anonymize(&out.stdout).contains(
            "varied-search            custom   <T>/out/varied-search\n    Search the index for documents.\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("\n8 skills (custom 8)\n"),
        "{}",
        out.stdout
    );

    let server = fixture.serve(&only_out).await;
    let description = server.description().await;
    assert!(
        description.contains("\n- varied-get-user-profile: Fetch a user's profile by id.\n"),
        "{description}"
    );
    assert!(description.contains("\n- varied-search: Search the index for documents.\n"));
    let result = server.call("varied-search").await;
    let expected = SEARCH_SKILL.replace("<T>", fixture.root().to_str().unwrap());
    assert!(text(&result).ends_with(&expected), "{}", text(&result));
    server.stop().await;
}

/// A server's names, titles, descriptions and parameter names with escape
/// sequences, bells and carriage returns: `import` writes none of them raw,
/// in any line of any file, and the skill still checks clean.
#[test]
fn control_characters_of_a_server_are_escaped_in_every_line_written() {
    let fixture = Fixture::empty();
    let nasty = "get\u{1b}[2J\r\u{7}it";
    let tools = json!([{
        "name": nasty,
        "title": format!("Title {nasty}"),
        "description": format!("Fetch {nasty}.\r\nSecond line {nasty}\n"),
        "inputSchema": {
            "type": "object",
            "properties": {
                nasty: {"type": "string", "description": format!("The {nasty} value"), "enum": [nasty]}
            },
            "required": [nasty]
        },
        "annotations": {"title": format!("Annotated {nasty}"), "readOnlyHint": true}
    }]);
    fixture.write("tools.json", &tools.to_string());
    let file = fixture.path("tools.json").to_str().unwrap().to_owned();
    settings(&fixture, &[("srv", server(&["from-file", &file]))]);
    let out = import(&fixture, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let raw = |text: &str| {
        text.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t')
    };
    assert!(!raw(&out.stdout) && !raw(&out.stderr), "{}", out.stdout);
    let mut written = 0;
    for entry in std::fs::read_dir(fixture.path("out")).unwrap() {
        let path = entry.unwrap().path();
        let files: Vec<PathBuf> = if path.is_dir() {
            std::fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect()
        } else {
            vec![path]
        };
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (i, line) in text.lines().enumerate() {
                assert!(!raw(line), "{}:{}: {line:?}", file.display(), i + 1);
            }
            written += 1;
        }
    }
    assert_eq!(written, 2, "the SKILL.md and the lock file");
    let folders: Vec<String> = entries(&fixture)
        .into_iter()
        .filter(|name| !name.starts_with('.'))
        .collect();
    assert_eq!(folders, ["srv-get-2-j-it"]);
    let skill = std::fs::read_to_string(fixture.path("out/srv-get-2-j-it/SKILL.md")).unwrap();
    for shown in [
        "# Title get\\u{1b}[2J \\u{7}it\n",
        "\nFetch get\\u{1b}[2J\\r\\u{7}it.\nSecond line get\\u{1b}[2J\\r\\u{7}it\n",
        "| `get\\u{1b}[2J \\u{7}it` | string | yes | The get\\u{1b}[2J \\u{7}it value |",
        "call its tool `get\\u{1b}[2J \\u{7}it` directly.",
        "srv $'get\\x1b[2J\\x0d\\x07it' ",
        "- Title: Annotated get\\u{1b}[2J \\u{7}it\n",
    ] {
        assert!(skill.contains(shown), "{shown:?} in\n{skill}");
    }
    assert_check_passes(&fixture);
}
