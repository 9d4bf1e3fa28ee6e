//! `serve --http` under test: the real binary on a free loopback port (it
//! picks one: ADDR `127.0.0.1:0`, and logs it), and a minimal HTTP/1.1
//! client over a `TcpStream` (every request closes its connection, so a
//! response is read to the end).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Fixture, wait_for_exit};

/// How long a test waits for anything before it fails.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The protocol version of stateless requests.
pub const V2026: &str = "2026-07-28";

/// A running `serve --http`, its stderr collected.
pub struct HttpServer {
    child: Child,
    pub port: u16,
    stderr: Arc<Mutex<String>>,
}

/// A response: status, headers (names lowercase) and body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The JSON-RPC messages of the body: the body itself, or each SSE
    /// `data:` line.
    pub fn messages(&self) -> Vec<serde_json::Value> {
        if self.header("content-type") == Some("application/json") {
            return vec![serde_json::from_str(&self.body).expect("JSON body")];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter(|data| !data.trim().is_empty())
            .map(|data| serde_json::from_str(data.trim()).expect("JSON event"))
            .collect()
    }

    /// The one JSON-RPC answer of the body.
    pub fn answer(&self) -> serde_json::Value {
        self.messages()
            .into_iter()
            .find(|message| message.get("id").is_some())
            .unwrap_or_else(|| panic!("no answer in {self:?}"))
    }
}

impl HttpServer {
    /// Starts `skillserve serve --http 127.0.0.1:0 ARGS…` in `fixture` and
    /// waits until it listens.
    pub fn start(fixture: &Fixture, args: &[&str]) -> HttpServer {
        HttpServer::start_command(HttpServer::command(fixture, args))
    }

    /// The command [`HttpServer::start`] runs, to add to.
    pub fn command(fixture: &Fixture, args: &[&str]) -> std::process::Command {
        let mut all = vec!["serve", "--http", "127.0.0.1:0"];
        all.extend_from_slice(args);
        fixture.command(&all)
    }

    /// Starts `command` (made by [`HttpServer::command`]) and waits until it
    /// listens.
    pub fn start_command(mut command: std::process::Command) -> HttpServer {
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().expect("start skillserve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().unwrap();
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        let mut server = HttpServer {
            child,
            port: 0,
            stderr,
        };
        let line = server.wait_for_log("listening on http://127.0.0.1:");
        let port = line
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line}"));
        server.port = port;
        server
    }

    /// [`HttpServer::start`], then waits until the first scan is done.
    pub fn ready(fixture: &Fixture, args: &[&str]) -> HttpServer {
        let server = HttpServer::start(fixture, args);
        server.wait_until(|server| server.get("/healthz", &[]).status == 200);
        server
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The first log line holding `needle`, once there is one.
    pub fn wait_for_log(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            if let Some(line) = self.log().lines().find(|line| line.contains(needle)) {
                return line.to_owned();
            }
            assert!(
                start.elapsed() < PATIENCE,
                "no log line with {needle:?} in:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until `done` holds.
    pub fn wait_until(&self, done: impl Fn(&HttpServer) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(
                start.elapsed() < PATIENCE,
                "gave up waiting:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        self.request("GET", path, headers, None)
    }

    /// A request, its connection closed after the response.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Response {
        let mut stream = self.connect();
        stream
            .write_all(&head(self.port, method, path, headers, body.map(str::len)))
            .unwrap();
        if let Some(body) = body {
            stream.write_all(body.as_bytes()).unwrap();
        }
        read_response(&mut stream)
    }

    /// A new connection to the server.
    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        stream
    }

    /// A JSON-RPC POST to `/mcp` as MCP clients send it.
    pub fn post(&self, message: &serde_json::Value, headers: &[(&str, &str)]) -> Response {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        self.request("POST", "/mcp", &all, Some(&message.to_string()))
    }

    /// `initialize` and `notifications/initialized` (2025-11-25): the
    /// session's id.
    pub fn initialize(&self, headers: &[(&str, &str)]) -> String {
        let response = self.post(
            &serde_json::json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "it", "version": "1"}
                }
            }),
            headers,
        );
        assert_eq!(response.status, 200, "{response:?}");
        let session = response
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned();
        let mut with_session = headers.to_vec();
        with_session.push(("Mcp-Session-Id", &session));
        let initialized = self.post(
            &serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &with_session,
        );
        assert_eq!(initialized.status, 202, "{initialized:?}");
        session
    }

    /// A request of session `session` (2025-11-25).
    pub fn session_request(
        &self,
        session: &str,
        id: u64,
        method: &str,
        params: serde_json::Value,
        headers: &[(&str, &str)],
    ) -> Response {
        let mut all = vec![("Mcp-Session-Id", session)];
        all.extend_from_slice(headers);
        self.post(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            &all,
        )
    }

    /// A stateless request (2026-07-28): the protocol version and client in
    /// `_meta`, and the headers the version asks for.
    pub fn stateless(
        &self,
        id: u64,
        method: &str,
        mut params: serde_json::Value,
        headers: &[(&str, &str)],
    ) -> Response {
        params["_meta"] = stateless_meta();
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(|v| v.as_str())
            .map(str::to_owned);
        let mut all = vec![("MCP-Protocol-Version", V2026), ("Mcp-Method", method)];
        if let Some(name) = &name {
            all.push(("Mcp-Name", name));
        }
        all.extend_from_slice(headers);
        self.post(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            &all,
        )
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(self) -> (ExitStatus, String) {
        // SAFETY: kill(2) with a pid we own and a valid signal number.
        let sent = unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        assert_eq!(sent, 0);
        self.exited()
    }

    /// Waits for the exit (a signal was sent already): its status and the
    /// whole log.
    pub fn exited(mut self) -> (ExitStatus, String) {
        let status = wait_for_exit(&mut self.child, PATIENCE).expect("exits after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
        (status, self.log())
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `_meta` of a 2026-07-28 request.
pub fn stateless_meta() -> serde_json::Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientInfo": {"name": "it", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A request's head (`Connection: close`).
pub fn head(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    length: Option<usize>,
) -> Vec<u8> {
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(length) = length {
        head.push_str(&format!("Content-Length: {length}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// Reads a whole response (the server closes the connection after it).
pub fn read_response(stream: &mut TcpStream) -> Response {
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse_response(&bytes)
}

fn parse_response(bytes: &[u8]) -> Response {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {text:?}"));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            out.push_str(&rest[..size.min(rest.len())]);
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].strip_prefix("\r\n").unwrap_or(&rest[size..]);
    }
    out
}

/// Reads from an open stream (an SSE response) until `needle` has arrived;
/// everything read so far.
pub fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let start = Instant::now();
    while !String::from_utf8_lossy(&seen).contains(needle) {
        assert!(
            start.elapsed() < PATIENCE,
            "no {needle:?} in {}",
            String::from_utf8_lossy(&seen)
        );
        match stream.read(&mut buf) {
            Ok(0) => panic!(
                "the stream ended before {needle:?}: {}",
                String::from_utf8_lossy(&seen)
            ),
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(err) => panic!("reading the stream: {err}"),
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// An OAuth issuer for the tests: its metadata and key set served from a
/// loopback port, and keys to sign tokens with (ES256 unless added with
/// another algorithm).
pub struct Issuer {
    pub url: String,
    keys: std::sync::Arc<std::sync::Mutex<Vec<(String, SigningKey)>>>,
    /// How often the key set was fetched.
    fetches: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Issuer {
    pub fn start() -> Issuer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let issuer = Issuer {
            url: url.clone(),
            keys: Default::default(),
            fetches: Default::default(),
        };
        issuer.add_key("k1");
        let (keys, fetches) = (issuer.keys.clone(), issuer.fetches.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { break };
                let mut request = [0u8; 4096];
                let n = std::io::Read::read(&mut stream, &mut request).unwrap_or(0);
                let request = String::from_utf8_lossy(&request[..n]);
                let path = request.split(' ').nth(1).unwrap_or("").to_owned();
                let body = match path.as_str() {
                    "/.well-known/oauth-authorization-server" => {
                        serde_json::json!({"issuer": url, "jwks_uri": format!("{url}/jwks")})
                            .to_string()
                    }
                    "/jwks" => {
                        let keys = keys.lock().unwrap();
                        let body = serde_json::json!({"keys": keys.iter().map(|(kid, key)| jwk(kid, key)).collect::<Vec<_>>()}).to_string();
                        // Counted once the keys are read: a key added after
                        // the count has moved is not in this answer.
                        fetches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        body
                    }
                    _ => String::new(),
                };
                let status = if body.is_empty() {
                    "404 Not Found"
                } else {
                    "200 OK"
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        issuer
    }

    /// A new ES256 key.
    pub fn add_key(&self, kid: &str) {
        self.add_key_for(kid, "ES256");
    }

    /// A new key for `alg`, published with it as its JWK's `alg`.
    pub fn add_key_for(&self, kid: &str, alg: &'static str) {
        let key = SigningKey::new(alg);
        self.keys.lock().unwrap().push((kid.to_owned(), key));
    }

    /// A token signed with key `kid`, with `claims` over the defaults.
    pub fn token(&self, kid: &str, claims: serde_json::Value) -> String {
        self.token_with_header(
            serde_json::json!({"alg": "ES256", "typ": "JWT", "kid": kid}),
            claims,
        )
    }

    /// A token with this header, signed with the key its `kid` names, with
    /// `claims` over the defaults (a claim set to `null` is left out).
    pub fn token_with_header(
        &self,
        header: serde_json::Value,
        claims: serde_json::Value,
    ) -> String {
        use base64::Engine;
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let mut payload = serde_json::json!({
            "iss": self.url, "aud": "https://skills.example.com/mcp",
            "sub": "alice@example.com", "iat": now, "nbf": now - 10, "exp": now + 600
        });
        for (key, value) in claims.as_object().unwrap() {
            if value.is_null() {
                payload.as_object_mut().unwrap().remove(key);
            } else {
                payload[key] = value.clone();
            }
        }
        let kid = header["kid"].as_str().unwrap();
        let signed = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(payload.to_string().as_bytes())
        );
        let keys = self.keys.lock().unwrap();
        let key = &keys.iter().find(|(k, _)| k == kid).expect("a key").1;
        format!("{signed}.{}", b64(&key.sign(signed.as_bytes())))
    }

    pub fn fetches(&self) -> usize {
        self.fetches.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A test-only RSA key (PKCS#8): ring cannot make RSA keys.
const RSA_KEY: &[u8] = include_bytes!("../../../fixtures/oauth/test-rsa-2048.pk8");

/// A key of the test issuer, for one algorithm.
pub struct SigningKey {
    alg: &'static str,
    key: Key,
}

enum Key {
    Ec(ring::signature::EcdsaKeyPair),
    Ed(ring::signature::Ed25519KeyPair),
    Rsa(ring::signature::RsaKeyPair),
}

impl SigningKey {
    fn new(alg: &'static str) -> SigningKey {
        use ring::signature::{
            ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaKeyPair,
            Ed25519KeyPair, RsaKeyPair,
        };
        let random = ring::rand::SystemRandom::new();
        let key = match alg {
            "ES256" | "ES384" => {
                let signing = if alg == "ES256" {
                    &ECDSA_P256_SHA256_FIXED_SIGNING
                } else {
                    &ECDSA_P384_SHA384_FIXED_SIGNING
                };
                let pkcs8 = EcdsaKeyPair::generate_pkcs8(signing, &random).unwrap();
                Key::Ec(EcdsaKeyPair::from_pkcs8(signing, pkcs8.as_ref(), &random).unwrap())
            }
            "EdDSA" => {
                let pkcs8 = Ed25519KeyPair::generate_pkcs8(&random).unwrap();
                Key::Ed(Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap())
            }
            _ => Key::Rsa(RsaKeyPair::from_pkcs8(RSA_KEY).unwrap()),
        };
        SigningKey { alg, key }
    }

    fn sign(&self, message: &[u8]) -> Vec<u8> {
        use ring::signature;
        let random = ring::rand::SystemRandom::new();
        match &self.key {
            Key::Ec(key) => key.sign(&random, message).unwrap().as_ref().to_vec(),
            Key::Ed(key) => key.sign(message).as_ref().to_vec(),
            Key::Rsa(key) => {
                let padding: &'static dyn signature::RsaEncoding = match self.alg {
                    "RS256" => &signature::RSA_PKCS1_SHA256,
                    "RS384" => &signature::RSA_PKCS1_SHA384,
                    "RS512" => &signature::RSA_PKCS1_SHA512,
                    "PS256" => &signature::RSA_PSS_SHA256,
                    "PS384" => &signature::RSA_PSS_SHA384,
                    _ => &signature::RSA_PSS_SHA512,
                };
                let mut out = vec![0; key.public().modulus_len()];
                key.sign(padding, &random, message, &mut out).unwrap();
                out
            }
        }
    }
}

/// The public JWK of `key`.
fn jwk(kid: &str, key: &SigningKey) -> serde_json::Value {
    use base64::Engine;
    use ring::signature::KeyPair;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let mut jwk = match &key.key {
        Key::Ec(pair) => {
            // `04 || x || y`.
            let point = pair.public_key().as_ref();
            let half = (point.len() - 1) / 2;
            let crv = if key.alg == "ES256" { "P-256" } else { "P-384" };
            serde_json::json!({"kty": "EC", "crv": crv, "x": b64(&point[1..=half]), "y": b64(&point[1 + half..])})
        }
        Key::Ed(pair) => {
            serde_json::json!({"kty": "OKP", "crv": "Ed25519", "x": b64(pair.public_key().as_ref())})
        }
        Key::Rsa(pair) => {
            let public: ring::signature::RsaPublicKeyComponents<Vec<u8>> = pair.public().into();
            serde_json::json!({"kty": "RSA", "n": b64(&public.n), "e": b64(&public.e)})
        }
    };
    jwk["kid"] = kid.into();
    jwk["alg"] = key.alg.into();
    jwk["use"] = "sig".into();
    jwk
}
