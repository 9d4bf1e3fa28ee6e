//! Test environment: a private copy of `fixtures/`, the real binary started in
//! it with a hermetic environment, and an rmcp client connected over its stdio.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;
use tokio::sync::{Notify, mpsc};

pub mod http;

pub const BIN: &str = env!("CARGO_BIN_EXE_skillserve");

/// A temporary copy of `fixtures/` (symlinks preserved) with
/// `project/.git` created, since git cannot store a `.git` directory.
pub struct Fixture {
    _dir: tempfile::TempDir,
    /// The temporary directory with every symlink resolved: the server
    /// starts in it, and the working directory it sees is the resolved one
    /// (on macOS the temporary directory is under `/var`, a symlink to
    /// `/private/var`), so paths the tests expect must be resolved too.
    root: PathBuf,
    home: String,
}

impl Fixture {
    pub fn new() -> Fixture {
        let fixture = Fixture::empty();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        copy_tree(&source, fixture.root(), fixture.root());
        std::fs::create_dir_all(fixture.path("project/.git")).unwrap();
        fixture
    }

    /// An empty temporary directory (no fixtures).
    pub fn empty() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("the temp dir resolves");
        Fixture {
            _dir: dir,
            root,
            home: "home".to_owned(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// The fake home: `home/` unless [`Fixture::with_home`] chose another.
    pub fn home(&self) -> PathBuf {
        self.path(&self.home)
    }

    /// The same fixture with `HOME` set to `relative` (e.g. `plugin-home`).
    pub fn with_home(mut self, relative: &str) -> Fixture {
        self.home = relative.to_owned();
        self
    }

    /// Writes `text` to `relative`, creating folders.
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Replaces the file at `relative` with `text` the way editors save: a
    /// hidden temporary file renamed over it. A plain write truncates first,
    /// and a rescan at that moment rightly sees an empty file.
    pub fn replace(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let temporary = self.write(
            &format!(
                "{}/.{name}.tmp",
                Path::new(relative).parent().unwrap().display()
            ),
            text,
        );
        std::fs::rename(temporary, path).unwrap();
    }

    /// The binary with an environment that holds nothing from the real one:
    /// `HOME` is the fixture's home and the working directory its root.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        self.command_of(Path::new(BIN), args)
    }

    /// [`Fixture::command`] with another copy of the binary.
    pub fn command_of(&self, program: &Path, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(program);
        command
            .args(args)
            .env_clear()
            .env("HOME", self.home())
            .env("SKILLSERVE_LOG", "info")
            .current_dir(self.root());
        command
    }

    /// Runs a CLI command to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        let output = self.command(args).output().expect("run skillserve");
        Output {
            status: output.status,
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        }
    }

    /// Starts the server with `args` and connects a client.
    pub async fn serve(&self, args: &[&str]) -> Server {
        Server::start(self.command(args)).await
    }

    /// [`Fixture::serve`] with the log filter `log` (`SKILLSERVE_LOG`), for
    /// tests that wait for a log line.
    pub async fn serve_logged(&self, args: &[&str], log: &str) -> Server {
        let mut command = self.command(args);
        command.env("SKILLSERVE_LOG", log);
        Server::start(command).await
    }

    /// Replaces the fixture's absolute path with `<T>` so that output can be
    /// compared as exact text.
    pub fn anonymize(&self, text: &str) -> String {
        text.replace(self.root().to_str().unwrap(), "<T>")
    }
}

pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

fn copy_tree(from: &Path, to: &Path, root: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            let link = std::fs::read_link(entry.path()).unwrap();
            std::os::unix::fs::symlink(link, &target).unwrap();
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target, root);
        } else if target.extension().is_some_and(|e| e == "json") {
            // Claude Code writes absolute paths into its JSON files; fixtures
            // spell the fixture root `@ROOT@`.
            let text = std::fs::read_to_string(entry.path()).unwrap();
            std::fs::write(&target, text.replace("@ROOT@", root.to_str().unwrap())).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Client side: forwards `tools/list_changed` notifications into one channel,
/// and prompts and resources list changes into another; introduces itself
/// with `info` (its `clientInfo.name` is what the server's profiles match).
pub struct Notifications {
    sender: mpsc::UnboundedSender<()>,
    lists: mpsc::UnboundedSender<&'static str>,
    info: rmcp::model::ClientConfig,
}

impl ClientHandler for Notifications {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        self.info.clone()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.sender.send(());
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.lists.send("prompts");
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.lists.send("resources");
    }
}

/// How the test client connects.
enum Protocol {
    /// 2025-11-25 and older: `initialize`.
    Initialize,
    /// 2026-07-28: `server/discover`, then self-contained requests.
    Discover,
}

/// The server process and an rmcp client connected to it.
pub struct Server {
    pub client: RunningService<RoleClient, Notifications>,
    pub child: tokio::process::Child,
    pub notifications: mpsc::UnboundedReceiver<()>,
    /// `prompts` and `resources` list changes, in the order they came.
    pub list_changes: mpsc::UnboundedReceiver<&'static str>,
    stderr: Stderr,
}

/// The server's stderr, collected line by line as it arrives, so that a test
/// can wait for a log line (the watcher saying it is armed, say) instead of
/// sleeping.
#[derive(Clone, Default)]
pub struct Stderr {
    text: Arc<Mutex<String>>,
    grew: Arc<Notify>,
    reader: Arc<Mutex<Option<tokio::task::JoinHandle<()>>>>,
}

impl Stderr {
    fn collect(stderr: tokio::process::ChildStderr) -> Stderr {
        let collected = Stderr::default();
        let sink = collected.clone();
        let reader = tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut text = sink.text.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
                drop(text);
                sink.grew.notify_waiters();
            }
            sink.grew.notify_waiters();
        });
        *collected.reader.lock().unwrap() = Some(reader);
        collected
    }

    /// Everything so far.
    pub fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// Waits (at most 20 s) until `needle` has appeared on `count` lines.
    pub async fn wait_for(&self, needle: &str, count: usize) {
        let seen = || {
            let text = self.text.lock().unwrap();
            text.lines().filter(|l| l.contains(needle)).count() >= count
        };
        let waited = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                let grew = self.grew.notified();
                if seen() {
                    return;
                }
                grew.await;
            }
        })
        .await;
        assert!(
            waited.is_ok(),
            "no {count}× `{needle}` in the log:\n{}",
            self.text()
        );
    }

    /// Everything, once the server has closed stderr.
    async fn finish(self) -> String {
        let reader = self.reader.lock().unwrap().take();
        if let Some(reader) = reader {
            let _ = reader.await;
        }
        self.text()
    }
}

impl Server {
    pub async fn start(command: std::process::Command) -> Server {
        Server::start_with(command, Protocol::Initialize, None).await
    }

    /// Starts the server and connects a client of the 2026-07-28 protocol:
    /// `server/discover` and per-request `_meta`, no `initialize`.
    pub async fn start_2026(command: std::process::Command) -> Server {
        Server::start_with(command, Protocol::Discover, None).await
    }

    /// [`Server::start`] (or with `v2026`, [`Server::start_2026`]) with a
    /// client that calls itself `name` (`clientInfo.name`).
    pub async fn start_as(command: std::process::Command, name: &str, v2026: bool) -> Server {
        let protocol = if v2026 {
            Protocol::Discover
        } else {
            Protocol::Initialize
        };
        Server::start_with(command, protocol, Some(name)).await
    }

    /// [`Server::start`] (or with `v2026`, [`Server::start_2026`]) with a
    /// client that declares the MCP Apps extension
    /// (`io.modelcontextprotocol/ui`), as a host that renders apps does.
    pub async fn start_ui(command: std::process::Command, v2026: bool) -> Server {
        let protocol = if v2026 {
            Protocol::Discover
        } else {
            Protocol::Initialize
        };
        let mut info = rmcp::model::ClientConfig::default();
        info.client_info = rmcp::model::Implementation::new("ui-host", "1.0.0");
        let mut extensions = rmcp::model::ExtensionCapabilities::new();
        extensions.insert(
            "io.modelcontextprotocol/ui".to_owned(),
            rmcp::object!({ "mimeTypes": ["text/html;profile=mcp-app"] }),
        );
        info.capabilities.extensions = Some(extensions);
        Server::start_configured(command, protocol, info).await
    }

    async fn start_with(
        command: std::process::Command,
        protocol: Protocol,
        name: Option<&str>,
    ) -> Server {
        let mut info = rmcp::model::ClientConfig::default();
        if let Some(name) = name {
            info.client_info = rmcp::model::Implementation::new(name, "1.0.0");
        }
        Server::start_configured(command, protocol, info).await
    }

    async fn start_configured(
        command: std::process::Command,
        protocol: Protocol,
        info: rmcp::model::ClientConfig,
    ) -> Server {
        use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
        let mut command = tokio::process::Command::from(command);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("spawn skillserve");
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stderr = Stderr::collect(child.stderr.take().unwrap());
        let (sender, notifications) = mpsc::unbounded_channel();
        let (lists, list_changes) = mpsc::unbounded_channel();
        let handler = Notifications {
            sender,
            lists,
            info,
        };
        let connect = async {
            match protocol {
                Protocol::Initialize => handler.serve((stdout, stdin)).await,
                Protocol::Discover => {
                    let lifecycle = ClientLifecycleMode::Discover {
                        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
                    };
                    handler
                        .serve_with_lifecycle((stdout, stdin), lifecycle)
                        .await
                }
            }
        };
        let client = tokio::time::timeout(Duration::from_secs(20), connect)
            .await
            .expect("connected within 20 s")
            .expect("the handshake succeeds");
        Server {
            client,
            child,
            notifications,
            list_changes,
            stderr,
        }
    }

    /// The server's log so far.
    pub fn stderr(&self) -> &Stderr {
        &self.stderr
    }

    /// Waits until the file watcher says it is armed: from then on every
    /// change is seen.
    pub async fn watching(&self) {
        self.stderr.wait_for("watching ", 1).await;
    }

    /// The one tool.
    pub async fn tool(&self) -> Tool {
        let mut tools = self.client.list_all_tools().await.expect("tools/list");
        assert_eq!(tools.len(), 1, "exactly one tool");
        tools.remove(0)
    }

    pub async fn description(&self) -> String {
        self.tool().await.description.unwrap().into_owned()
    }

    /// The server's `instructions`, as `initialize` (or on 2026-07-28
    /// `server/discover`) gave them.
    pub fn instructions(&self) -> String {
        let info = self.client.peer_info().expect("connected");
        info.instructions
            .clone()
            .expect("the server gives instructions")
    }

    /// Calls `skill` with `{"name": name}`.
    pub async fn call(&self, name: &str) -> CallToolResult {
        self.call_with(rmcp::object!({ "name": name })).await
    }

    pub async fn call_with(&self, arguments: rmcp::model::JsonObject) -> CallToolResult {
        self.client
            .call_tool(CallToolRequestParams::new("skill").with_arguments(arguments))
            .await
            .expect("tools/call returns a result")
    }

    /// Closes stdin (the client goes away) and returns the exit status and
    /// everything the server wrote to stderr.
    pub async fn stop(self) -> (ExitStatus, String) {
        let Server {
            client,
            mut child,
            stderr,
            ..
        } = self;
        let _ = client.cancel().await;
        let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .expect("exits within 5 s of stdin closing")
            .unwrap();
        (status, stderr.finish().await)
    }

    /// Sends `signal` and returns the exit status and stderr.
    pub async fn signal(self, signal: i32) -> (ExitStatus, String) {
        let Server {
            client,
            mut child,
            stderr,
            ..
        } = self;
        let pid = child.id().expect("running") as i32;
        // SAFETY: kill(2) with a pid we own and a valid signal number.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .expect("exits within 5 s of the signal")
            .unwrap();
        drop(client);
        (status, stderr.finish().await)
    }
}

/// The text of a result's first content block: the whole answer, but for
/// the list of a skill's other files (see [`blocks`]).
/// Lowercase hex of `bytes`, written here rather than taken from skillserve so
/// that the tests check its digests against an independent computation.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The lowercase hex of the SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// A digest as skillserve writes it: `sha256:` and the hex.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

pub fn text(result: &CallToolResult) -> &str {
    assert!(!result.content.is_empty(), "a content block: {result:?}");
    &result.content[0].as_text().expect("text content").text
}

/// The texts of a result's content blocks.
pub fn blocks(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .map(|block| block.as_text().expect("text content").text.as_str())
        .collect()
}

pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// The names a "not found" answer (best first) or the tool description
/// lists: each line `- name: description`.
pub fn listed(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.split_once(": ").map_or(l, |(name, _)| name))
        .collect()
}

/// A raw `tools/call` request of `skill` with `{"name": name}`.
pub fn call(id: u64, name: &str) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "skill", "arguments": {"name": name}}})
}

/// Starts `command` with stdin and stdout piped and stderr discarded: the
/// server as a raw client (or one that misbehaves) drives it.
pub fn spawn_piped(command: &mut std::process::Command) -> std::process::Child {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn skillserve")
}

/// Talks to the server without rmcp, as a raw client would: writes each of
/// `lines` to stdin, reads stdout until `answers` responses (messages with an
/// `id`) have arrived, closes stdin and reads the rest. Every line on stdout
/// must be a JSON-RPC message. Returns the responses by id and the exit status.
pub fn raw_exchange(
    mut command: std::process::Command,
    lines: &[String],
    answers: usize,
) -> (
    std::collections::HashMap<i64, serde_json::Value>,
    ExitStatus,
) {
    use std::io::{BufRead, BufReader, Write};
    let mut child = spawn_piped(&mut command);
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let parse = |line: String| -> serde_json::Value {
        let message: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC: {line}");
        message
    };
    let mut responses = std::collections::HashMap::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    while responses.len() < answers {
        let message = parse(stdout.next().expect("a response line").unwrap());
        if let Some(id) = message.get("id").and_then(serde_json::Value::as_i64) {
            responses.insert(id, message);
        }
    }
    drop(stdin);
    for line in stdout {
        parse(line.unwrap());
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "exits after stdin closes"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (responses, child.wait().unwrap())
}

/// A client that speaks raw bytes to the server, for lines no SDK would send:
/// a thread reads stdout line by line into a channel, so that reads can time
/// out.
pub struct Raw {
    pub child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Raw {
    /// Starts the server and completes the 2025-11-25 handshake.
    pub fn start(command: std::process::Command) -> Raw {
        Raw::start_within(command, Duration::from_secs(20))
    }

    /// [`Raw::start`], waiting up to `within` for the first scan.
    pub fn start_within(mut command: std::process::Command, within: Duration) -> Raw {
        let mut raw = Raw::spawn(&mut command);
        raw.initialize(within);
        raw
    }

    /// Completes the 2025-11-25 handshake, waiting up to `within` for the
    /// first scan.
    pub fn initialize(&mut self, within: Duration) {
        self.send_json(
            &serde_json::json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        );
        let answer = self.next_message(within).expect("initialize answered");
        assert_eq!(answer["id"], "init", "{answer}");
        self.send_json(
            &serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
    }

    /// Starts the server without a handshake, its stderr discarded.
    pub fn spawn(command: &mut std::process::Command) -> Raw {
        Raw::spawn_with(command, Stdio::null())
    }

    /// [`Raw::spawn`], with the server's stderr going to `stderr`.
    pub fn spawn_with(command: &mut std::process::Command, stderr: Stdio) -> Raw {
        use std::io::BufRead;
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn skillserve");
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Raw {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    /// Writes `bytes` as they are (add the newline yourself).
    pub fn send(&mut self, bytes: &[u8]) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send_json(&mut self, message: &serde_json::Value) {
        self.send(format!("{message}\n").as_bytes());
    }

    /// The next line on stdout, parsed (it must be JSON-RPC), or `None` when
    /// nothing comes within `within`.
    pub fn next_message(&mut self, within: Duration) -> Option<serde_json::Value> {
        let line = self.lines.recv_timeout(within).ok()?;
        let message: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC: {line}");
        Some(message)
    }

    /// Closes stdin: the client is done.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Every message still to come until the server closes stdout (at
    /// most 20 s: a hang guard), parsed.
    pub fn rest(&mut self) -> Vec<serde_json::Value> {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(!left.is_zero(), "stdout still open after 20 s");
            match self.lines.recv_timeout(left) {
                Ok(line) => out.push(
                    serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}")),
                ),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return out,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Closes stdin and waits (at most 10 s) for the exit.
    pub fn finish(mut self) -> ExitStatus {
        self.close_stdin();
        wait_for_exit(&mut self.child, Duration::from_secs(10)).expect("exits after stdin closes")
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The exit status, if the process exits within `within`.
pub fn wait_for_exit(child: &mut std::process::Child, within: Duration) -> Option<ExitStatus> {
    let deadline = std::time::Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Resident memory of a process in KiB (`VmRSS`).
#[cfg(target_os = "linux")]
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

/// Resident memory of a process in KiB, as `ps` reports it (there is no
/// `/proc` on macOS).
#[cfg(not(target_os = "linux"))]
pub fn rss_kib(pid: u32) -> u64 {
    let out = std::process::Command::new("ps")
        .args(["-o", "rss=", "-p", &pid.to_string()])
        .output()
        .expect("run ps");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("ps -o rss= -p {pid}: {out:?}"))
}

/// A tree of files that tests only read, built once and kept in cargo's
/// scratch folder for tests (`target/tmp/NAME`, which `cargo clean`
/// removes): the next test, and the next run, use it as it is. Writing tens
/// of thousands of folders takes seconds on a slow disk, and deleting them
/// as long again. `build` writes the tree into a temporary folder, renamed
/// to NAME once complete, so a build that was interrupted is never used.
/// Change NAME (a version suffix) when `build` changes.
pub fn shared_tree(name: &str, build: impl FnOnce(&Path)) -> PathBuf {
    // One build at a time in this test binary: tests that want the same
    // tree wait for the first to build it.
    static BUILDING: Mutex<()> = Mutex::new(());
    let _building = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let tree = scratch.join(name);
    if !tree.exists() {
        let partial = tempfile::tempdir_in(scratch).unwrap();
        build(partial.path());
        // Another test binary may have won the race; its tree is as good
        // (and this one is deleted).
        if std::fs::rename(partial.path(), &tree).is_ok() {
            let _ = partial.keep();
        }
    }
    tree.canonicalize().unwrap()
}

/// Options that serve `fixtures/files` alone.
pub const FILES_ARGS: &[&str] = &[
    "--skills-dir",
    "files",
    "--no-user",
    "--no-project",
    "--no-plugins",
];

/// Strings only files outside the skill, hidden files and `node_modules` of
/// `fixtures/files` hold: no answer may ever contain one.
pub const SECRETS: &[&str] = &[
    "SECRET-OUTSIDE",
    "SECRET-DOTFILE",
    "SECRET-GIT",
    "SECRET-NODE-MODULES",
    "root:",
];

/// `fixtures/files` with what git cannot hold: a `.git` folder and a FIFO
/// (`pdf/pipe`) in the `pdf` skill.
pub fn files_fixture() -> Fixture {
    let fixture = Fixture::new();
    fixture.write("files/pdf/.git/config", "[core] # SECRET-GIT\n");
    let pipe = fixture.path("files/pdf/pipe");
    let c_path = std::ffi::CString::new(pipe.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo only reads the NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    fixture
}

/// Panics when `text` holds one of the [`SECRETS`].
pub fn assert_no_secret(context: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{context} leaked {secret}: {text}");
    }
}
