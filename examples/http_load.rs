//! Load test of `serve --http` (benches/README.md, "http_load"):
//!
//!     cargo build --release --bin skillserve --example http_load
//!     target/release/examples/http_load [--sessions 100] [--calls 200] [--skills 1000]
//!
//! Starts the release binary on a loopback port over the corpus of
//! `benches/make_corpus.py` (written when missing), then, for each scenario,
//! runs SESSIONS clients at once, each making CALLS `tools/call` round trips
//! over one keep-alive connection, every call for a random skill:
//!
//!   * sessions: 2025-11-25 clients (`initialize`, then calls naming the
//!     session; each answer is an SSE stream);
//!   * stateless: 2026-07-28 clients (per-request `_meta`, JSON answers);
//!   * tokens: stateless, with a bearer token (`--auth-tokens`);
//!   * jwt: stateless, with an ES256 JWT checked against a JWKS this program
//!     serves (`--oauth-issuer`).
//!
//! Prints, per scenario: calls per second, p50 and p99 of the round trip,
//! the server's CPU time per call (which, unlike the rate, does not depend on
//! what else runs on the machine), and its resident memory (peak while
//! loaded, and after the clients have gone). A raw HTTP/1.1 client over tokio keeps the client's
//! own cost small; the machine's two cores are shared by both sides.

#![allow(
    clippy::disallowed_methods,
    clippy::print_stdout,
    reason = "a load generator reads /proc with std::fs and prints its table"
)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const AUDIENCE: &str = "https://skills.example.com/mcp";

struct Options {
    sessions: usize,
    calls: usize,
    skills: usize,
    bin: PathBuf,
}

fn options() -> Options {
    let mut options = Options {
        sessions: 100,
        calls: 200,
        skills: 1000,
        bin: PathBuf::from("target/release/skillserve"),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let value = pair.get(1).expect("a value after each flag");
        match pair[0].as_str() {
            "--sessions" => options.sessions = value.parse().unwrap(),
            "--calls" => options.calls = value.parse().unwrap(),
            "--skills" => options.skills = value.parse().unwrap(),
            "--bin" => options.bin = PathBuf::from(value),
            other => panic!("unknown flag {other}"),
        }
    }
    options
}

fn main() {
    let options = options();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(options));
}

async fn run(options: Options) {
    let corpus = corpus(options.skills);
    let names = skill_names(&corpus);
    let work = tempfile::tempdir().unwrap();
    let tokens = work.path().join("tokens");
    let token = make_token(&options.bin, &tokens);
    let issuer = Issuer::start().await;

    println!(
        "{} clients x {} tools/call each, {} skills, release binary {}",
        options.sessions,
        options.calls,
        names.len(),
        options.bin.display()
    );
    println!(
        "{:<10} {:>9} {:>9} {:>9} {:>13} {:>12} {:>12}",
        "scenario", "calls/s", "p50 ms", "p99 ms", "server CPU µs", "peak RSS MB", "after RSS MB"
    );
    let scenarios: [(&str, Vec<String>, Option<String>, bool); 4] = [
        ("sessions", vec![], None, true),
        ("stateless", vec![], None, false),
        (
            "tokens",
            vec!["--auth-tokens".into(), tokens.display().to_string()],
            Some(token),
            false,
        ),
        (
            "jwt",
            vec![
                "--oauth-issuer".into(),
                issuer.url.clone(),
                "--oauth-audience".into(),
                AUDIENCE.into(),
            ],
            Some(issuer.token()),
            false,
        ),
    ];
    for (name, extra, bearer, sessions) in scenarios {
        let mut server = Server::start(&options.bin, &corpus, work.path(), &extra);
        let cpu_before = cpu_ticks(server.child.id());
        let report = load(&server, &options, &names, bearer, sessions).await;
        let cpu = cpu_ticks(server.child.id()) - cpu_before;
        // Clock ticks of 10 ms (Linux's USER_HZ) per call, in µs.
        let cpu_per_call = cpu as f64 * 1e4 / (options.sessions * options.calls) as f64;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let after = server.rss_mb();
        println!(
            "{name:<10} {:>9.0} {:>9.2} {:>9.2} {cpu_per_call:>13.0} {:>12.1} {after:>12.1}",
            report.rate, report.p50, report.p99, report.peak_rss
        );
        server.stop();
    }
}

struct Report {
    rate: f64,
    p50: f64,
    p99: f64,
    peak_rss: f64,
}

/// Runs the clients against `server` and measures them.
async fn load(
    server: &Server,
    options: &Options,
    names: &Arc<Vec<String>>,
    bearer: Option<String>,
    sessions: bool,
) -> Report {
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (done, peak, pid) = (done.clone(), peak.clone(), server.child.id());
        tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(pid), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let started = Instant::now();
    let mut clients = Vec::new();
    for client in 0..options.sessions {
        let (port, names, bearer, calls) =
            (server.port, names.clone(), bearer.clone(), options.calls);
        clients.push(tokio::spawn(async move {
            let mut connection = Connection::open(port, bearer).await;
            if sessions {
                connection.initialize().await;
            }
            let mut latencies = Vec::with_capacity(calls);
            let mut seed = client as u64 * 7919 + 1;
            for id in 0..calls {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let name = &names[(seed >> 33) as usize % names.len()];
                let started = Instant::now();
                connection.call(id as u64 + 1, name, sessions).await;
                latencies.push(started.elapsed().as_secs_f64() * 1e3);
            }
            if sessions {
                connection.end_session().await;
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for client in clients {
        latencies.extend(client.await.unwrap());
    }
    let elapsed = started.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    let _ = sampler.await;
    latencies.sort_by(f64::total_cmp);
    let at = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    Report {
        rate: latencies.len() as f64 / elapsed,
        p50: at(0.50),
        p99: at(0.99),
        peak_rss: peak.load(Ordering::Relaxed) as f64 / 1024.0,
    }
}

/// One keep-alive connection to `/mcp`.
struct Connection {
    reader: BufReader<TcpStream>,
    port: u16,
    bearer: Option<String>,
    session: Option<String>,
}

impl Connection {
    async fn open(port: u16, bearer: Option<String>) -> Connection {
        let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Connection {
            reader: BufReader::new(stream),
            port,
            bearer,
            session: None,
        }
    }

    async fn initialize(&mut self) {
        let (headers, _) = self
            .post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "http_load", "version": "1"}}}),
                &[],
            )
            .await;
        self.session = headers.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        });
        assert!(self.session.is_some(), "no session: {headers}");
        self.post(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &[],
        )
        .await;
    }

    async fn call(&mut self, id: u64, name: &str, sessions: bool) {
        let mut params = json!({"name": "skill", "arguments": {"name": name}});
        let mut headers = vec![];
        if !sessions {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "http_load", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            });
            headers = vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "skill"),
            ];
        }
        let (_, body) = self
            .post(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
                &headers,
            )
            .await;
        assert!(body.contains("Loading: "), "not an answer: {body}");
    }

    async fn end_session(&mut self) {
        let head = self.head("DELETE", 0, &[]);
        self.reader
            .get_mut()
            .write_all(head.as_bytes())
            .await
            .unwrap();
        self.response().await;
    }

    fn head(&self, method: &str, length: usize, extra: &[(&str, &str)]) -> String {
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {length}\r\n",
            self.port
        );
        if let Some(token) = &self.bearer {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        if let Some(session) = &self.session {
            head.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
        }
        for (name, value) in extra {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        head
    }

    async fn post(&mut self, message: &Value, extra: &[(&str, &str)]) -> (String, String) {
        let body = message.to_string();
        let mut request = self.head("POST", body.len(), extra);
        request.push_str(&body);
        self.reader
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .unwrap();
        self.response().await
    }

    /// The head and body of one response (Content-Length or chunked).
    async fn response(&mut self) -> (String, String) {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            let n = self.reader.read_line(&mut line).await.unwrap();
            assert!(n > 0, "the server closed the connection");
            if line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        assert!(head.starts_with("HTTP/1.1 2"), "{head}");
        let header = |name: &str| {
            head.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                key.eq_ignore_ascii_case(name)
                    .then(|| value.trim().to_owned())
            })
        };
        let mut body = Vec::new();
        if let Some(length) = header("content-length") {
            body.resize(length.parse().unwrap(), 0);
            self.reader.read_exact(&mut body).await.unwrap();
        } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).await.unwrap();
                let size = usize::from_str_radix(size.trim(), 16).unwrap();
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).await.unwrap();
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        }
        (head, String::from_utf8_lossy(&body).into_owned())
    }
}

/// The release binary, serving the corpus on a port it picked.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(bin: &Path, corpus: &Path, work: &Path, extra: &[String]) -> Server {
        let mut child = Command::new(bin)
            .args([
                "serve",
                "--http",
                "127.0.0.1:0",
                "--no-user",
                "--no-plugins",
                "--skills-dir",
            ])
            .arg(corpus)
            .args(extra)
            .env_clear()
            .env("HOME", work)
            .env(
                "SKILLSERVE_LOG",
                "warn,skillserve=info,skillserve::access=warn",
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let stderr = child.stderr.take().unwrap();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut sent = false;
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent && let Some(rest) = line.split("listening on http://127.0.0.1:").nth(1) {
                    let port: u16 = rest.split('/').next().unwrap().parse().unwrap();
                    let _ = send.send(port);
                    sent = true;
                }
            }
        });
        let port = receive
            .recv_timeout(Duration::from_secs(30))
            .expect("the server listens");
        let server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !server.healthy() {
            assert!(Instant::now() < deadline, "the server never became healthy");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn healthy(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.starts_with("HTTP/1.1 200")
    }

    fn rss_mb(&self) -> f64 {
        rss_kib(self.child.id()) as f64 / 1024.0
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The CPU time the process has used (user and system), in clock ticks:
/// unlike the rate, it does not depend on what else the machine runs.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let field = |n: usize| {
        fields
            .get(n - 3)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(14) + field(15)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|value| value.split_whitespace().next())
                .and_then(|value| value.parse().ok())
        })
        .unwrap_or(0)
}

/// `target/bench-corpus/N/skills`, written by `benches/make_corpus.py` when
/// missing (as the other benchmarks do).
fn corpus(n: usize) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/bench-corpus/{n}"));
    if !root.join("complete").exists() {
        let status = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/make_corpus.py"))
            .arg(root.join("skills"))
            .arg(n.to_string())
            .args(["--seed", "1"])
            .status()
            .expect("python3 runs make_corpus.py");
        assert!(status.success());
        std::fs::write(root.join("complete"), "").unwrap();
    }
    root.join("skills")
}

fn skill_names(corpus: &Path) -> Arc<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(corpus)
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().join("SKILL.md").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Arc::new(names)
}

fn make_token(bin: &Path, file: &Path) -> String {
    let output = Command::new(bin)
        .args(["token", "new", "load", "--file"])
        .arg(file)
        .env_clear()
        .output()
        .expect("token new");
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// An OAuth issuer on a loopback port: its metadata, its key set, and
/// tokens signed with its key.
struct Issuer {
    url: String,
    key: ring::signature::EcdsaKeyPair,
}

impl Issuer {
    async fn start() -> Issuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
        let random = ring::rand::SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
        let key =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
                .unwrap();
        // `04 || x || y`.
        let point = key.public_key().as_ref().to_vec();
        let jwks = json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256",
            "x": b64(&point[1..33]), "y": b64(&point[33..])}]})
        .to_string();
        let metadata = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")}).to_string();
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    break;
                };
                let (jwks, metadata) = (jwks.clone(), metadata.clone());
                tokio::spawn(async move {
                    let mut request = [0u8; 4096];
                    let n = stream.read(&mut request).await.unwrap_or(0);
                    let request = String::from_utf8_lossy(&request[..n]);
                    let body = if request.starts_with("GET /jwks") {
                        jwks
                    } else {
                        metadata
                    };
                    let response = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                });
            }
        });
        Issuer { url, key }
    }

    fn token(&self) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let header = json!({"alg": "ES256", "typ": "JWT", "kid": "k1"});
        let claims = json!({"iss": self.url, "aud": AUDIENCE, "sub": "load", "exp": now + 3600});
        let signed = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let signature = self
            .key
            .sign(&ring::rand::SystemRandom::new(), signed.as_bytes())
            .unwrap();
        format!("{signed}.{}", b64(signature.as_ref()))
    }
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
