//! Load test of `serve --http` (benches/README.md, "http_load"):
//!
//!     cargo build --release --bin skillserve --example http_load
//!     target/release/examples/http_load [--clients 50] [--calls 400 | --seconds S]
//!         [--skills 10000] [--threads 1,2] [--rounds 1] [--scenario stateless,…]
//!         [--server-cpus LIST] [--client-cpus LIST]
//!     target/release/examples/http_load --connect HOST:PORT --skills-dir DIR [--seconds S] …
//!
//! Starts the release binary on a loopback port over the corpus of
//! `benches/make_corpus.py` (written when missing; `--skills-dir` serves
//! another folder), then, for each scenario and each `--threads` count (the
//! server's `--threads`, alternating over `--rounds`), runs CLIENTS clients
//! at once, each making CALLS `tools/call` round trips (or calling for
//! SECONDS) over one keep-alive connection, every call for a random skill:
//!
//!   * sessions: 2025-11-25 clients (`initialize`, then calls naming the
//!     session; each answer is an SSE stream);
//!   * stateless: 2026-07-28 clients (per-request `_meta`, JSON answers);
//!   * tokens: stateless, with a bearer token (`--auth-tokens`);
//!   * jwt: stateless, with an ES256 JWT checked against a JWKS this program
//!     serves (`--oauth-issuer`).
//!
//! Prints, per run: calls per second, p50 and p99 of the round trip, the
//! server's CPU time per call (which, unlike the rate, does not depend on
//! what else runs on the machine) and the cores it kept busy (its CPU time
//! over the run's time), this client's own CPU time per call (to
//! show it is not the bottleneck), the server's resident memory (peak while
//! loaded, and after the clients have gone) and the failed calls; then the
//! medians over the rounds. `--server-cpus` and `--client-cpus` pin either
//! side to CPUs (`taskset` lists such as `0` or `0,1`).
//!
//! With `--connect`, no server is started: the clients call the server (or
//! load balancer) at HOST:PORT, for skills named by the folders of
//! `--skills-dir`. A call that fails (a status other than 2xx, a closed
//! connection, an answer that is not the skill) is counted, the connection
//! opened again, and the run goes on; the program exits 1 when any failed.
//! The replicas script (`tests/replicas/run.sh`) drives a load balancer
//! with it.
//!
//! The client is a raw HTTP/1.1 client on a one-thread tokio runtime: a call
//! costs it 20–30 µs of CPU, a quarter of what the server spends on it.

#![allow(
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a load generator reads /proc with std::fs, prints its table and its usage errors"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const AUDIENCE: &str = "https://skills.example.com/mcp";
const SCENARIOS: [&str; 4] = ["sessions", "stateless", "tokens", "jwt"];

struct Options {
    clients: usize,
    calls: usize,
    seconds: Option<f64>,
    skills: usize,
    skills_dir: Option<PathBuf>,
    bin: PathBuf,
    threads: Vec<usize>,
    rounds: usize,
    scenarios: Vec<String>,
    connect: Option<String>,
    server_cpus: Option<String>,
    client_cpus: Option<String>,
}

fn options() -> Options {
    let mut options = Options {
        clients: 50,
        calls: 400,
        seconds: None,
        skills: 10_000,
        skills_dir: None,
        bin: PathBuf::from("target/release/skillserve"),
        threads: vec![2],
        rounds: 1,
        scenarios: SCENARIOS.iter().map(|s| s.to_string()).collect(),
        connect: None,
        server_cpus: None,
        client_cpus: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let flag = pair[0].as_str();
        let value = pair
            .get(1)
            .unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        let number = |value: &str| -> usize {
            value
                .parse()
                .unwrap_or_else(|_| usage(&format!("{flag} takes a number, not {value}")))
        };
        match flag {
            // `--sessions` was this option's name before there were scenarios
            // without sessions.
            "--clients" | "--sessions" => options.clients = number(value),
            "--calls" => options.calls = number(value),
            "--seconds" => {
                options.seconds = Some(
                    value
                        .parse()
                        .unwrap_or_else(|_| usage("--seconds takes a number")),
                );
            }
            "--skills" => options.skills = number(value),
            "--skills-dir" => options.skills_dir = Some(PathBuf::from(value)),
            "--bin" => options.bin = PathBuf::from(value),
            "--threads" => options.threads = value.split(',').map(number).collect(),
            "--rounds" => options.rounds = number(value).max(1),
            "--scenario" => {
                options.scenarios = value.split(',').map(str::to_owned).collect();
                for scenario in &options.scenarios {
                    if !SCENARIOS.contains(&scenario.as_str()) {
                        usage(&format!(
                            "unknown scenario {scenario}; the scenarios are {}",
                            SCENARIOS.join(", ")
                        ));
                    }
                }
            }
            "--connect" => options.connect = Some(value.clone()),
            "--server-cpus" => options.server_cpus = Some(value.clone()),
            "--client-cpus" => options.client_cpus = Some(value.clone()),
            other => usage(&format!("unknown flag {other}")),
        }
    }
    if options.connect.is_some() {
        if options.skills_dir.is_none() {
            usage("--connect needs --skills-dir: the folder of the skills the server serves");
        }
        if options
            .scenarios
            .iter()
            .any(|s| s == "tokens" || s == "jwt")
        {
            options
                .scenarios
                .retain(|s| s == "sessions" || s == "stateless");
            if options.scenarios.is_empty() {
                usage("--connect runs the sessions and stateless scenarios");
            }
        }
    }
    options
}

fn usage(problem: &str) -> ! {
    eprintln!("http_load: {problem} (see the comment at the top of examples/http_load.rs)");
    std::process::exit(2);
}

fn main() {
    let options = options();
    if let Some(cpus) = &options.client_cpus {
        pin_self(cpus);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let failed = runtime.block_on(run(options));
    std::process::exit(i32::from(failed));
}

/// One load run's figures.
#[derive(Clone, Copy)]
struct Figures {
    rate: f64,
    p50: f64,
    p99: f64,
    /// The server's CPU per call, µs (`None` with `--connect`).
    server_cpu: Option<f64>,
    /// The server's CPU time over the run's wall time: how many cores it
    /// kept busy.
    server_cores: Option<f64>,
    client_cpu: f64,
    peak_rss: Option<f64>,
    after_rss: Option<f64>,
    failures: usize,
}

/// Runs every scenario (and thread count, round after round); whether any
/// call failed.
async fn run(options: Options) -> bool {
    let corpus = match &options.skills_dir {
        Some(dir) => dir.clone(),
        None => corpus(options.skills),
    };
    let names = skill_names(&corpus);
    assert!(!names.is_empty(), "no skills in {}", corpus.display());
    let work = tempfile::tempdir().unwrap();
    println!(
        "{} clients x {}, {} skills; {}; load average {}",
        options.clients,
        match options.seconds {
            Some(seconds) => format!("{seconds} s of tools/call each"),
            None => format!("{} tools/call each", options.calls),
        },
        names.len(),
        match &options.connect {
            Some(target) => format!("the server at {target}"),
            None => format!("release binary {}", options.bin.display()),
        },
        load_average()
    );
    println!(
        "{:<10} {:>7} {:>5} {:>9} {:>8} {:>8} {:>11} {:>7} {:>11} {:>9} {:>9} {:>8}",
        "scenario",
        "threads",
        "round",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "server µs",
        "cores",
        "client µs",
        "peak MB",
        "after MB",
        "failures"
    );
    let mut all: BTreeMap<(usize, usize), Vec<Figures>> = BTreeMap::new();
    let mut failed = false;
    if let Some(target) = &options.connect {
        for (index, scenario) in options.scenarios.iter().enumerate() {
            for round in 1..=options.rounds {
                let target = Target {
                    addr: target.clone(),
                    host: target.clone(),
                };
                let report = load(&target, &options, &names, None, scenario == "sessions").await;
                let figures = figures(&report, None, None);
                print_row(scenario, 0, &round.to_string(), &figures);
                failed |= report.failures > 0;
                print_failures(&report);
                all.entry((index, 0)).or_default().push(figures);
            }
        }
    } else {
        let tokens = work.path().join("tokens");
        let token = make_token(&options.bin, &tokens);
        let issuer = Issuer::start().await;
        for (index, scenario) in options.scenarios.iter().enumerate() {
            let (extra, bearer): (Vec<String>, Option<String>) = match scenario.as_str() {
                "tokens" => (
                    vec!["--auth-tokens".into(), tokens.display().to_string()],
                    Some(token.clone()),
                ),
                "jwt" => (
                    vec![
                        "--oauth-issuer".into(),
                        issuer.url.clone(),
                        "--oauth-audience".into(),
                        AUDIENCE.into(),
                    ],
                    Some(issuer.token()),
                ),
                _ => (vec![], None),
            };
            // Alternating thread counts round after round: a change in the
            // machine's load hits them alike.
            for round in 1..=options.rounds {
                for &threads in &options.threads {
                    let mut extra = extra.clone();
                    extra.extend(["--threads".into(), threads.to_string()]);
                    let mut server = Server::start(&options, &corpus, work.path(), &extra);
                    let target = Target {
                        addr: format!("127.0.0.1:{}", server.port),
                        host: format!("127.0.0.1:{}", server.port),
                    };
                    let cpu_before = cpu_ticks(server.child.id());
                    let peak = PeakRss::sample(server.child.id());
                    let report = load(
                        &target,
                        &options,
                        &names,
                        bearer.clone(),
                        scenario == "sessions",
                    )
                    .await;
                    let cpu = cpu_ticks(server.child.id()) - cpu_before;
                    let peak = peak.stop().await;
                    // Clock ticks of 10 ms (Linux's USER_HZ) per call, in µs.
                    let server_cpu = cpu as f64 * 1e4 / report.calls.max(1) as f64;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    let mut figures = figures(&report, Some(server_cpu), Some(peak));
                    figures.server_cores = Some(cpu as f64 / 100.0 / report.elapsed);
                    figures.after_rss = Some(server.rss_mb());
                    print_row(scenario, threads, &round.to_string(), &figures);
                    failed |= report.failures > 0;
                    print_failures(&report);
                    all.entry((index, threads)).or_default().push(figures);
                    server.stop();
                }
            }
        }
    }
    if options.rounds > 1 {
        println!("medians of {} rounds:", options.rounds);
        for ((index, threads), runs) in &all {
            print_row(&options.scenarios[*index], *threads, "med", &median(runs));
        }
    }
    failed
}

fn figures(report: &Report, server_cpu: Option<f64>, peak_rss: Option<f64>) -> Figures {
    Figures {
        rate: report.rate,
        p50: report.p50,
        p99: report.p99,
        server_cpu,
        server_cores: None,
        client_cpu: report.client_cpu,
        peak_rss,
        after_rss: None,
        failures: report.failures,
    }
}

fn print_row(scenario: &str, threads: usize, round: &str, figures: &Figures) {
    let optional = |value: Option<f64>, decimals: usize| {
        value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
    };
    println!(
        "{scenario:<10} {:>7} {round:>5} {:>9.0} {:>8.2} {:>8.2} {:>11} {:>7} {:>11.1} {:>9} {:>9} {:>8}",
        if threads == 0 {
            "-".to_owned()
        } else {
            threads.to_string()
        },
        figures.rate,
        figures.p50,
        figures.p99,
        optional(figures.server_cpu, 0),
        optional(figures.server_cores, 2),
        figures.client_cpu,
        optional(figures.peak_rss, 1),
        optional(figures.after_rss, 1),
        figures.failures
    );
}

fn print_failures(report: &Report) {
    for failure in &report.first_failures {
        println!("  failed: {failure}");
    }
}

/// Each figure's median over the runs.
fn median(runs: &[Figures]) -> Figures {
    let of = |pick: &dyn Fn(&Figures) -> f64| {
        let mut values: Vec<f64> = runs.iter().map(pick).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let optional = |pick: &dyn Fn(&Figures) -> Option<f64>| {
        runs.iter()
            .all(|run| pick(run).is_some())
            .then(|| of(&|run| pick(run).unwrap_or(0.0)))
    };
    Figures {
        rate: of(&|run| run.rate),
        p50: of(&|run| run.p50),
        p99: of(&|run| run.p99),
        server_cpu: optional(&|run| run.server_cpu),
        server_cores: optional(&|run| run.server_cores),
        client_cpu: of(&|run| run.client_cpu),
        peak_rss: optional(&|run| run.peak_rss),
        after_rss: optional(&|run| run.after_rss),
        failures: runs.iter().map(|run| run.failures).sum(),
    }
}

/// Where the clients connect, and the `Host` they name.
struct Target {
    addr: String,
    host: String,
}

struct Report {
    calls: usize,
    /// Seconds from the first call to the last answer.
    elapsed: f64,
    rate: f64,
    p50: f64,
    p99: f64,
    client_cpu: f64,
    failures: usize,
    first_failures: Vec<String>,
}

/// Runs the clients against `target` and measures them.
async fn load(
    target: &Target,
    options: &Options,
    names: &Arc<Vec<String>>,
    bearer: Option<String>,
    sessions: bool,
) -> Report {
    let target = Arc::new((target.addr.clone(), target.host.clone()));
    let deadline = options
        .seconds
        .map(|seconds| Instant::now() + Duration::from_secs_f64(seconds));
    let cpu_before = cpu_ticks(std::process::id());
    let started = Instant::now();
    let mut clients = Vec::new();
    for client in 0..options.clients {
        let (target, names, bearer, calls) =
            (target.clone(), names.clone(), bearer.clone(), options.calls);
        clients.push(tokio::spawn(async move {
            let mut outcome = Outcome::default();
            let mut connection = None;
            let mut seed = client as u64 * 7919 + 1;
            let mut id = 0u64;
            loop {
                match deadline {
                    Some(deadline) if Instant::now() >= deadline => break,
                    None if outcome.latencies.len() + outcome.failures.len() >= calls => break,
                    _ => {}
                }
                let open = match connection.as_mut() {
                    Some(open) => open,
                    None => {
                        match Connection::open(&target, bearer.clone(), sessions.then_some(None))
                            .await
                        {
                            Ok(open) => connection.insert(open),
                            Err(err) => {
                                outcome.failures.push(err);
                                tokio::time::sleep(Duration::from_millis(10)).await;
                                continue;
                            }
                        }
                    }
                };
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let name = &names[(seed >> 33) as usize % names.len()];
                id += 1;
                let started = Instant::now();
                match open.call(id, name).await {
                    Ok(()) => outcome
                        .latencies
                        .push(started.elapsed().as_secs_f64() * 1e3),
                    Err(err) => {
                        outcome.failures.push(format!("tools/call {name}: {err}"));
                        connection = None;
                    }
                }
            }
            if sessions && let Some(mut open) = connection {
                let _ = open.end_session().await;
            }
            outcome
        }));
    }
    let mut latencies = Vec::new();
    let mut failures = Vec::new();
    for client in clients {
        let outcome = client.await.unwrap();
        latencies.extend(outcome.latencies);
        failures.extend(outcome.failures);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let client_cpu = cpu_ticks(std::process::id()) - cpu_before;
    latencies.sort_by(f64::total_cmp);
    let at = |p: f64| {
        if latencies.is_empty() {
            return f64::NAN;
        }
        latencies[((latencies.len() - 1) as f64 * p).round() as usize]
    };
    Report {
        calls: latencies.len(),
        elapsed,
        rate: latencies.len() as f64 / elapsed,
        p50: at(0.50),
        p99: at(0.99),
        client_cpu: client_cpu as f64 * 1e4 / latencies.len().max(1) as f64,
        failures: failures.len(),
        first_failures: failures.into_iter().take(5).collect(),
    }
}

/// What one client saw.
#[derive(Default)]
struct Outcome {
    latencies: Vec<f64>,
    failures: Vec<String>,
}

/// One keep-alive connection to `/mcp`.
struct Connection {
    reader: BufReader<TcpStream>,
    addr: String,
    host: String,
    bearer: Option<String>,
    session: Option<String>,
    sessions: bool,
    /// The server closes the connection after the last answer (it said
    /// `Connection: close`, as a draining server does): the next request
    /// goes over a new one, in the same session.
    closed: bool,
    line: Vec<u8>,
}

impl Connection {
    /// A connection for stateless requests (`session` is `None`), or for
    /// the session given (`Some(Some(id))`) or a new one (`Some(None)`).
    async fn open(
        target: &(String, String),
        bearer: Option<String>,
        session: Option<Option<String>>,
    ) -> Result<Connection, String> {
        let mut connection = Connection {
            reader: BufReader::new(connect(&target.0).await?),
            addr: target.0.clone(),
            host: target.1.clone(),
            bearer,
            sessions: session.is_some(),
            session: session.flatten(),
            closed: false,
            line: Vec::new(),
        };
        if connection.sessions && connection.session.is_none() {
            connection.initialize().await?;
        }
        Ok(connection)
    }

    async fn initialize(&mut self) -> Result<(), String> {
        let (headers, _) = self
            .post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "http_load", "version": "1"}}}),
                &[],
            )
            .await
            .map_err(|err| format!("initialize: {err}"))?;
        self.session = headers.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        });
        if self.session.is_none() {
            return Err(format!("initialize: no session: {headers}"));
        }
        self.post(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &[],
        )
        .await
        .map_err(|err| format!("notifications/initialized: {err}"))?;
        Ok(())
    }

    async fn call(&mut self, id: u64, name: &str) -> Result<(), String> {
        let mut params = json!({"name": "skill", "arguments": {"name": name}});
        let mut headers = vec![];
        if !self.sessions {
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
            .await?;
        if !body.contains(&format!("Loading: {name}")) {
            return Err(format!("not the skill's answer: {}", excerpt(&body)));
        }
        Ok(())
    }

    async fn end_session(&mut self) -> Result<(), String> {
        let head = self.head("DELETE", 0, &[]);
        self.send(head.as_bytes()).await?;
        self.response().await.map(drop)
    }

    fn head(&self, method: &str, length: usize, extra: &[(&str, &str)]) -> String {
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {length}\r\n",
            self.host
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

    async fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        if self.closed {
            self.reader = BufReader::new(connect(&self.addr).await?);
            self.closed = false;
        }
        self.reader
            .get_mut()
            .write_all(bytes)
            .await
            .map_err(|err| format!("sending the request: {err}"))
    }

    async fn post(
        &mut self,
        message: &Value,
        extra: &[(&str, &str)],
    ) -> Result<(String, String), String> {
        let body = message.to_string();
        let mut request = self.head("POST", body.len(), extra);
        request.push_str(&body);
        self.send(request.as_bytes()).await?;
        self.response().await
    }

    /// One line of the response, without its line end.
    async fn read_line(&mut self) -> Result<&[u8], String> {
        self.line.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.line)
            .await
            .map_err(|err| format!("reading the response: {err}"))?;
        if n == 0 {
            return Err("the server closed the connection".to_owned());
        }
        Ok(self.line.trim_ascii_end())
    }

    /// The head and body of one 2xx response (Content-Length or chunked).
    async fn response(&mut self) -> Result<(String, String), String> {
        let mut head = String::new();
        loop {
            let line = self.read_line().await?;
            if line.is_empty() {
                break;
            }
            head.push_str(&String::from_utf8_lossy(line));
            head.push('\n');
        }
        let header = |name: &str| {
            head.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                key.eq_ignore_ascii_case(name)
                    .then(|| value.trim().to_owned())
            })
        };
        let mut body = Vec::new();
        if let Some(length) = header("content-length") {
            let length = length
                .parse()
                .map_err(|_| format!("a Content-Length of {length}"))?;
            body.resize(length, 0);
            self.reader
                .read_exact(&mut body)
                .await
                .map_err(|err| format!("reading the body: {err}"))?;
        } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            loop {
                let size = String::from_utf8_lossy(self.read_line().await?).into_owned();
                let size = usize::from_str_radix(size.trim(), 16)
                    .map_err(|_| format!("a chunk size of {size}"))?;
                let mut chunk = vec![0; size + 2];
                self.reader
                    .read_exact(&mut chunk)
                    .await
                    .map_err(|err| format!("reading a chunk: {err}"))?;
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        }
        let body = String::from_utf8_lossy(&body).into_owned();
        if !head.starts_with("HTTP/1.1 2") {
            let status = head.lines().next().unwrap_or_default().to_owned();
            return Err(format!("{status}: {}", excerpt(&body)));
        }
        if header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
            self.closed = true;
        }
        Ok((head, body))
    }
}

async fn connect(addr: &str) -> Result<TcpStream, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|err| format!("connect to {addr}: {err}"))?;
    stream.set_nodelay(true).unwrap();
    Ok(stream)
}

fn excerpt(text: &str) -> String {
    text.chars()
        .take(200)
        .collect::<String>()
        .replace('\n', " ")
}

/// The release binary, serving the corpus on a port it picked.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(options: &Options, corpus: &Path, work: &Path, extra: &[String]) -> Server {
        let mut command = match &options.server_cpus {
            Some(cpus) => {
                let mut command = Command::new("taskset");
                command.args(["-c", cpus]).arg(&options.bin);
                command
            }
            None => Command::new(&options.bin),
        };
        let mut child = command
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
        let deadline = Instant::now() + Duration::from_secs(120);
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

/// The peak resident memory of a process, sampled every 50 ms.
struct PeakRss {
    done: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    sampler: tokio::task::JoinHandle<()>,
}

impl PeakRss {
    fn sample(pid: u32) -> PeakRss {
        let done = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let sampler = {
            let (done, peak) = (done.clone(), peak.clone());
            tokio::spawn(async move {
                while !done.load(Ordering::Relaxed) {
                    peak.fetch_max(rss_kib(pid), Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
        };
        PeakRss {
            done,
            peak,
            sampler,
        }
    }

    /// The peak, in MB.
    async fn stop(self) -> f64 {
        self.done.store(true, Ordering::Relaxed);
        let _ = self.sampler.await;
        self.peak.load(Ordering::Relaxed) as f64 / 1024.0
    }
}

/// Pins this process (and the threads it starts) to `cpus`, a list such
/// as `0` or `0,1`.
fn pin_self(cpus: &str) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET and
    // sched_setaffinity get a pointer to it and its size, for this process.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in cpus.split(',') {
            let cpu: usize = cpu
                .trim()
                .parse()
                .unwrap_or_else(|_| usage("--client-cpus takes a list such as 0 or 0,1"));
            libc::CPU_SET(cpu, &mut set);
        }
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0,
            "sched_setaffinity: {}",
            std::io::Error::last_os_error()
        );
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_owned())
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
        .unwrap_or_else(|err| usage(&format!("cannot read {}: {err}", corpus.display())))
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
