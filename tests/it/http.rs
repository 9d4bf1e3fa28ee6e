//! `serve --http` (behaviour.md §22) through the real binary on a loopback
//! port: both protocol eras, answers without server paths, authentication
//! (tokens and OAuth JWTs), the origin check, the bounds, health, metrics,
//! the stop on SIGTERM, and `token new`.

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::http::{HttpServer, Issuer, V2026, head, read_response, read_until};
use crate::common::{FILES_ARGS, Fixture, files_fixture};

/// The `Base directory` line of an answer over HTTP.
const REMOTE_BASE: &str = "Base directory: skill://pdf/ (this server is remote: read the skill's files with the skill tool's \"file\" argument)";

fn call(name: &str, file: Option<&str>) -> Value {
    let mut arguments = json!({"name": name});
    if let Some(file) = file {
        arguments["file"] = file.into();
    }
    json!({"name": "skill", "arguments": arguments})
}

/// The texts of a `tools/call` answer.
fn texts(answer: &Value) -> Vec<String> {
    answer["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool result: {answer}"))
        .iter()
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn both_protocol_eras_answer_alike_and_name_no_server_path() {
    let fixture = files_fixture();
    fixture.write(
        "files/broken-one/SKILL.md",
        "---\nname: broken-one\ndescription: [unclosed\n---\nbody\n",
    );
    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let root = fixture.root().to_string_lossy().into_owned();

    let session = server.initialize(&[]);
    let legacy = server
        .session_request(&session, 1, "tools/call", call("pdf", None), &[])
        .answer();
    let stateless = server
        .stateless(1, "tools/call", call("pdf", None), &[])
        .answer();
    assert_eq!(legacy["result"]["content"], stateless["result"]["content"]);
    let text = &texts(&legacy)[0];
    assert!(
        text.starts_with(&format!("Loading: pdf\n{REMOTE_BASE}\n\n---\nname: pdf\n")),
        "{text}"
    );

    // Every kind of answer, in both eras: none names a server path.
    let requests = [
        ("tools/call", call("pdf", Some("references/forms.md"))),
        ("tools/call", call("pdf", Some("assets"))),
        ("tools/call", call("pdf", Some("../outside.txt"))),
        ("tools/call", call("pdf", Some("pipe"))),
        ("tools/call", call("broken-one", None)),
        ("tools/call", call("no-such-skill", None)),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "pdf"})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "skill://pdf/SKILL.md"})),
        ("resources/read", json!({"uri": "skill://nope/SKILL.md"})),
        ("skills/list", json!({})),
        ("skills/get", json!({"uri": "skill://pdf/SKILL.md"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "pdf"}, "argument": {"name": "task", "value": ""}}),
        ),
    ];
    for (id, (method, params)) in requests.iter().enumerate() {
        let id = id as u64 + 10;
        for response in [
            server.session_request(&session, id, method, params.clone(), &[]),
            server.stateless(id, method, params.clone(), &[]),
        ] {
            assert!(
                !response.body.contains(&root),
                "{method} names a server path: {}",
                response.body
            );
            let answer = response.answer();
            assert!(
                answer.get("result").is_some() || answer.get("error").is_some(),
                "{method}: {answer}"
            );
        }
    }
    let file = server
        .stateless(
            2,
            "tools/call",
            call("pdf", Some("references/forms.md")),
            &[],
        )
        .answer();
    assert!(texts(&file)[0].starts_with(&format!(
        "Loading: pdf/references/forms.md\n{REMOTE_BASE}\n\n"
    )));
    let broken = server
        .stateless(3, "tools/call", call("broken-one", None), &[])
        .answer();
    assert!(
        texts(&broken)[0]
            .starts_with("Skill 'broken-one' could not be loaded: broken-one/SKILL.md:"),
        "{broken}"
    );
    let instructions = server
        .stateless(4, "server/discover", json!({}), &[])
        .answer();
    assert!(
        instructions.to_string().contains("This server is remote"),
        "{instructions}"
    );
}

#[test]
fn a_change_reaches_the_session_stream_and_the_listen_stream() {
    let fixture = files_fixture();
    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let session = server.initialize(&[]);

    // 2025-11-25: the session's GET stream.
    let mut legacy = server.connect();
    legacy
        .write_all(&head(
            server.port,
            "GET",
            "/mcp",
            &[
                ("Accept", "text/event-stream"),
                ("Mcp-Session-Id", &session),
            ],
            None,
        ))
        .unwrap();
    read_until(&mut legacy, "\r\n\r\n");
    // 2026-07-28: a listen stream.
    let mut listen = server.connect();
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": true, "promptsListChanged": true},
            "_meta": crate::common::http::stateless_meta()
        }
    })
    .to_string();
    listen
        .write_all(&head(
            server.port,
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", V2026),
                ("Mcp-Method", "subscriptions/listen"),
            ],
            Some(body.len()),
        ))
        .unwrap();
    listen.write_all(body.as_bytes()).unwrap();
    read_until(&mut listen, "\r\n\r\n");

    fixture.write(
        "files/fresh/SKILL.md",
        "---\nname: fresh\ndescription: Added while serving.\n---\nbody\n",
    );
    read_until(&mut legacy, "notifications/tools/list_changed");
    read_until(&mut listen, "notifications/tools/list_changed");
    let description = server.stateless(9, "tools/list", json!({}), &[]).answer();
    assert!(
        description
            .to_string()
            .contains("- fresh: Added while serving.")
    );
}

#[test]
fn a_missing_or_wrong_token_gets_401_and_a_revoked_one_stops_working() {
    let fixture = files_fixture();
    let tokens = fixture.path("tokens");
    let made = fixture.run(&["token", "new", "alice", "--file", tokens.to_str().unwrap()]);
    assert_eq!(made.status.code(), Some(0), "{}", made.stderr);
    let alice = made.stdout.trim().to_owned();
    let made = fixture.run(&["token", "new", "bob", "--file", tokens.to_str().unwrap()]);
    let bob = made.stdout.trim().to_owned();

    let mut args = FILES_ARGS.to_vec();
    args.extend(["--auth-tokens", tokens.to_str().unwrap()]);
    let server = HttpServer::ready(&fixture, &args);
    let list = |token: Option<&str>| {
        let bearer = token.map(|token| format!("Bearer {token}"));
        let headers: Vec<(&str, &str)> = bearer
            .iter()
            .map(|value| ("Authorization", value.as_str()))
            .collect();
        server.stateless(1, "tools/list", json!({}), &headers)
    };

    let missing = list(None);
    assert_eq!(missing.status, 401);
    assert_eq!(
        missing.header("www-authenticate"),
        Some("Bearer realm=\"skillserve\"")
    );
    let wrong = list(Some("ss_not-a-token"));
    assert_eq!(wrong.status, 401);
    assert_eq!(
        wrong.header("www-authenticate"),
        Some(
            "Bearer realm=\"skillserve\", error=\"invalid_token\", error_description=\"the token is not valid\""
        )
    );
    assert_eq!(list(Some(&alice)).status, 200);
    assert_eq!(list(Some(&bob)).status, 200);
    server.wait_for_log("POST /mcp tools/list 200");
    assert!(server.log().contains(" token:alice"), "{}", server.log());
    assert!(!server.log().contains(&alice), "a token was logged");
    // The health check needs no token.
    assert_eq!(server.get("/healthz", &[]).status, 200);

    // Revoking: bob's line goes; alice's token keeps working.
    let text = std::fs::read_to_string(&tokens).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.starts_with("bob:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&tokens, kept).unwrap();
    server.wait_until(|_| list(Some(&bob)).status == 401);
    assert_eq!(list(Some(&alice)).status, 200);
    // A broken file keeps the tokens read before.
    std::fs::write(&tokens, "garbage\n").unwrap();
    server.wait_for_log("tokens read before stay valid");
    assert_eq!(list(Some(&alice)).status, 200);
}

#[test]
fn foreign_origins_get_403_and_loopback_or_allowed_ones_pass() {
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend(["--allowed-origin", "https://app.example.com"]);
    let server = HttpServer::ready(&fixture, &args);
    let with_origin = |origin: &str| {
        server
            .stateless(1, "tools/list", json!({}), &[("Origin", origin)])
            .status
    };
    assert_eq!(with_origin("http://evil.example"), 403);
    assert_eq!(with_origin("http://localhost.evil.example:8080"), 403);
    assert_eq!(with_origin("http://localhost:6274"), 200);
    assert_eq!(with_origin("https://app.example.com"), 200);
    // A page of an allowed origin may call /mcp (CORS).
    let preflight = server.request(
        "OPTIONS",
        "/mcp",
        &[
            ("Origin", "https://app.example.com"),
            ("Access-Control-Request-Method", "POST"),
        ],
        None,
    );
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("https://app.example.com")
    );
    assert_eq!(
        preflight.header("access-control-allow-methods"),
        Some("GET, POST, DELETE")
    );
    let allowed = server.stateless(
        1,
        "tools/list",
        json!({}),
        &[("Origin", "https://app.example.com")],
    );
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some("https://app.example.com")
    );
    assert_eq!(
        allowed.header("access-control-expose-headers"),
        Some("Mcp-Session-Id, WWW-Authenticate")
    );
    let refused = server.get("/healthz", &[("Origin", "http://evil.example")]);
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.body,
        "Forbidden: requests from the origin \"http://evil.example\" are not allowed (see --allowed-origin)\n"
    );
}

#[test]
fn unknown_sessions_oversized_bodies_and_unknown_paths_are_refused() {
    let fixture = files_fixture();
    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let unknown = server.session_request("no-such-session", 1, "tools/list", json!({}), &[]);
    assert_eq!(unknown.status, 404);

    // A declared 100 MB body is refused before it is read.
    let mut stream = server.connect();
    stream
        .write_all(&head(
            server.port,
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            Some(100 * 1024 * 1024),
        ))
        .unwrap();
    let _ = stream.write_all(&[b' '; 64 * 1024]);
    let response = read_response(&mut stream);
    assert_eq!(response.status, 413);
    assert_eq!(
        response.body,
        "Payload Too Large: request bodies are limited to 4194304 bytes\n"
    );
    // A chunked body is cut at the limit.
    let mut stream = server.connect();
    let mut head = String::from_utf8(head(
        server.port,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Transfer-Encoding", "chunked"),
        ],
        None,
    ))
    .unwrap();
    head.truncate(head.len() - 2);
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(b"\r\n").unwrap();
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..5 {
        if stream
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .is_err()
            || stream.write_all(&chunk).is_err()
            || stream.write_all(b"\r\n").is_err()
        {
            break;
        }
    }
    assert_eq!(read_response(&mut stream).status, 413);

    let missing = server.get("/nowhere", &[]);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.body, "Not Found: skillserve serves MCP at /mcp\n");
    // Still serving.
    assert_eq!(
        server.stateless(2, "tools/list", json!({}), &[]).status,
        200
    );
}

#[test]
fn health_is_503_until_the_first_scan_then_200_with_the_count() {
    let fixture = Fixture::empty();
    for i in 0..3000 {
        fixture.write(
            &format!("many/s{i:04}/SKILL.md"),
            &format!("---\nname: s{i:04}\ndescription: Skill number {i}.\n---\nbody\n"),
        );
    }
    let server = HttpServer::start(
        &fixture,
        &["--skills-dir", "many", "--no-user", "--no-plugins"],
    );
    // Asked right after the server listens, before a scan of 3,000 skills can
    // be done on any machine this runs on; both answers are exact.
    let first = server.get("/healthz", &[]);
    if first.status == 503 {
        assert_eq!(first.body, r#"{"status":"starting"}"#);
        let early = server.stateless(1, "tools/list", json!({}), &[]);
        assert!(early.status == 503 || early.status == 200, "{early:?}");
    } else {
        assert_eq!(first.status, 200, "{first:?}");
    }
    server.wait_until(|server| server.get("/healthz", &[]).status == 200);
    assert_eq!(
        server.get("/healthz", &[]).body,
        r#"{"skills":3000,"status":"ok"}"#
    );
}

#[test]
fn metrics_count_requests_by_status_and_sessions() {
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.push("--metrics");
    let server = HttpServer::ready(&fixture, &args);
    let _session = server.initialize(&[]);
    server.stateless(1, "tools/list", json!({}), &[]);
    server.get("/nowhere", &[]);
    let metrics = server.get("/metrics", &[]);
    assert_eq!(metrics.status, 200);
    assert_eq!(
        metrics.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let body = &metrics.body;
    assert!(
        body.contains("skillserve_http_requests_total{status=\"404\"} 1\n"),
        "{body}"
    );
    assert!(
        body.contains("skillserve_http_requests_total{status=\"202\"} 1\n"),
        "{body}"
    );
    assert!(body.contains("\nskillserve_sessions 1\n"), "{body}");
    assert!(
        body.contains("\nskillserve_skills 3\n") || body.contains("\nskillserve_skills "),
        "{body}"
    );
    assert!(body.contains("skillserve_http_request_duration_seconds_bucket{le=\"+Inf\"}"));
    // Without --metrics there is no /metrics.
    let plain = HttpServer::ready(&fixture, FILES_ARGS);
    assert_eq!(plain.get("/metrics", &[]).status, 404);
}

#[test]
fn sigterm_lets_the_request_in_flight_finish_then_exits() {
    let fixture = files_fixture();
    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "skill", "arguments": {"name": "pdf"}, "_meta": crate::common::http::stateless_meta()}
    })
    .to_string();
    let mut stream = server.connect();
    stream
        .write_all(&head(
            server.port,
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", V2026),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "skill"),
            ],
            Some(body.len()),
        ))
        .unwrap();
    // Half the body: the request is in flight.
    let (first, rest) = body.split_at(body.len() / 2);
    stream.write_all(first.as_bytes()).unwrap();
    stream.flush().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: kill(2) with a pid we own and a valid signal number.
    assert_eq!(unsafe { libc::kill(server.pid() as i32, libc::SIGTERM) }, 0);
    server.wait_for_log("stopping: waiting for 1 requests in flight");
    // New connections are refused once the server stops accepting.
    stream.write_all(rest.as_bytes()).unwrap();
    let response = read_response(&mut stream);
    assert_eq!(response.status, 200, "{response:?}");
    assert!(texts(&response.answer())[0].starts_with("Loading: pdf\n"));
    let (status, log) = server.terminate();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("received SIGTERM; exiting"), "{log}");
}

#[test]
fn a_public_address_without_authentication_is_refused() {
    let fixture = Fixture::empty();
    let output = fixture.run(&["serve", "--http", "0.0.0.0:0"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        output.stderr,
        "skillserve: --http 0.0.0.0:0 is not a loopback address, so requests must be authenticated: give --auth-tokens FILE (see `skillserve token new`) or --oauth-issuer URL --oauth-audience AUD, or --insecure-no-auth when a proxy in front authenticates\n"
    );
    let output = fixture.run(&["serve", "--metrics"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        output.stderr,
        "skillserve: --metrics only applies with --http\n"
    );
    let output = fixture.run(&["serve", "--http", "example.com"]);
    assert_eq!(output.status.code(), Some(2));
    let output = fixture.run(&["serve", "--http", "127.0.0.1:0", "--auth-tokens", "missing"]);
    assert_eq!(output.status.code(), Some(2), "{}", output.stderr);
    assert!(output.stderr.contains("missing"), "{}", output.stderr);
}

#[test]
fn token_new_prints_a_token_once_and_keeps_only_its_hash() {
    let fixture = Fixture::empty();
    let made = fixture.run(&["token", "new", "ci-bot", "--file", "secrets/tokens"]);
    assert_eq!(made.status.code(), Some(0), "{}", made.stderr);
    let token = made.stdout.trim();
    assert!(token.starts_with("ss_") && token.len() == 46, "{token}");
    assert!(
        made.stderr
            .contains("copy the token now, it is not shown again")
    );
    let file = std::fs::read_to_string(fixture.path("secrets/tokens")).unwrap();
    let hash = file.strip_prefix("ci-bot:").unwrap().trim();
    assert_eq!(hash.len(), 64);
    assert!(!file.contains(token));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(fixture.path("secrets/tokens"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let again = fixture.run(&["token", "new", "ci-bot", "--file", "secrets/tokens"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        again.stderr.contains("the label `ci-bot` is already used"),
        "{}",
        again.stderr
    );
    let bad = fixture.run(&["token", "new", "two words", "--file", "secrets/tokens"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        bad.stderr,
        "skillserve: the label `two words` may only hold letters, digits, `.`, `_`, `-` and `@`\n"
    );
    // The default file lives in the config folder.
    let default = fixture.run(&["token", "new", "laptop"]);
    assert_eq!(default.status.code(), Some(0), "{}", default.stderr);
    assert!(fixture.path("home/.config/skillserve/tokens").is_file());
}

#[test]
fn oauth_tokens_are_checked_against_the_issuers_keys() {
    let issuer = Issuer::start();
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend([
        "--oauth-issuer",
        &issuer.url,
        "--oauth-audience",
        "https://skills.example.com/mcp",
        "--oauth-refetch-interval",
        "3",
    ]);
    let server = HttpServer::ready(&fixture, &args);
    let list = |token: &str| {
        let bearer = format!("Bearer {token}");
        server.stateless(1, "tools/list", json!({}), &[("Authorization", &bearer)])
    };
    let metadata = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
        server.port
    );

    let missing = server.stateless(1, "tools/list", json!({}), &[]);
    assert_eq!(missing.status, 401);
    assert_eq!(
        missing.header("www-authenticate").unwrap(),
        format!("Bearer realm=\"skillserve\", resource_metadata=\"{metadata}\"")
    );
    let document = server.get("/.well-known/oauth-protected-resource/mcp", &[]);
    assert_eq!(document.status, 200);
    let document: Value = serde_json::from_str(&document.body).unwrap();
    assert_eq!(document["authorization_servers"], json!([issuer.url]));
    assert_eq!(
        document["resource"],
        format!("http://127.0.0.1:{}/mcp", server.port)
    );

    assert_eq!(list(&issuer.token("k1", json!({}))).status, 200);
    server.wait_for_log("POST /mcp tools/list 200");
    assert!(
        server.log().contains(" oauth:alice@example.com"),
        "{}",
        server.log()
    );

    let refused = |claims: Value, reason: &str| {
        let response = list(&issuer.token("k1", claims));
        assert_eq!(response.status, 401, "{reason}");
        assert_eq!(
            response.header("www-authenticate").unwrap(),
            format!(
                "Bearer realm=\"skillserve\", resource_metadata=\"{metadata}\", error=\"invalid_token\", error_description=\"{reason}\""
            )
        );
    };
    refused(json!({"exp": 1_000_000}), "the token has expired");
    refused(
        json!({"aud": "https://other.example.com/mcp"}),
        "the token is for another audience",
    );
    refused(
        json!({"iss": "https://evil.example.com"}),
        "the token is from another issuer",
    );
    refused(
        json!({"nbf": 9_999_999_999u64}),
        "the token is not valid yet",
    );
    let forged = {
        let token = issuer.token("k1", json!({}));
        let (signed, _) = token.rsplit_once('.').unwrap();
        format!("{signed}.{}", "A".repeat(86))
    };
    assert_eq!(list(&forged).status, 401);
    let hs256 = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
    assert!(
        list(hs256)
            .header("www-authenticate")
            .unwrap()
            .contains("error_description=\"the token's algorithm is not accepted\"")
    );

    // A new key: refused while fetching again is rate-limited, then found.
    // An unknown key fetches the keys once the interval (3 s here) has
    // passed since the start-up fetch; right after that fetch, the next one
    // is rate-limited.
    let unknown = {
        use base64::Engine;
        let header = json!({"alg": "ES256", "typ": "JWT", "kid": "k0"}).to_string();
        let token = issuer.token("k1", json!({}));
        let (_, rest) = token.split_once('.').unwrap();
        let header = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(header);
        format!("{header}.{rest}")
    };
    let before = issuer.fetches();
    let start = std::time::Instant::now();
    while issuer.fetches() == before {
        assert_eq!(list(&unknown).status, 401);
        assert!(start.elapsed() < Duration::from_secs(60), "never fetched");
        std::thread::sleep(Duration::from_millis(100));
    }
    let fetched = issuer.fetches();
    issuer.add_key("k2");
    let rotated = issuer.token("k2", json!({}));
    assert!(
        list(&rotated)
            .header("www-authenticate")
            .unwrap()
            .contains("the token was signed with an unknown key")
    );
    assert_eq!(issuer.fetches(), fetched, "no fetch within the rate limit");
    while list(&rotated).status != 200 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "k2 never fetched"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(issuer.fetches(), fetched + 1);
    assert!(!server.log().contains(&rotated), "a token was logged");
}

#[test]
fn abandoned_sessions_stay_within_the_cap_and_the_oldest_makes_room() {
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend(["--max-sessions", "20", "--metrics"]);
    let server = HttpServer::ready(&fixture, &args);
    let first = server.initialize(&[]);
    let mut last = String::new();
    for _ in 0..60 {
        last = server.initialize(&[]);
    }
    let metrics = server.get("/metrics", &[]).body;
    assert!(metrics.contains("\nskillserve_sessions 20\n"), "{metrics}");
    assert!(
        metrics.contains("\nskillserve_sessions_evicted_total 41\n"),
        "{metrics}"
    );
    // The session idle longest was ended: its client must start again.
    let gone = server.session_request(&first, 1, "tools/list", json!({}), &[]);
    assert_eq!(gone.status, 404);
    let alive = server.session_request(&last, 1, "tools/list", json!({}), &[]);
    assert_eq!(alive.status, 200);
    assert_eq!(
        server
            .log()
            .matches("sessions are open (--max-sessions)")
            .count(),
        1,
        "logged once"
    );
}

#[test]
fn clients_that_send_half_a_request_are_cut_off_and_slow_nobody() {
    let fixture = files_fixture();
    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let mut slow: Vec<std::net::TcpStream> = (0..50)
        .map(|_| {
            let mut stream = server.connect();
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                .unwrap();
            stream
        })
        .collect();
    // Everyone else is served meanwhile.
    for id in 0..5 {
        assert_eq!(
            server.stateless(id, "tools/list", json!({}), &[]).status,
            200
        );
    }
    // The header read timeout closes each half-sent request.
    for stream in &mut slow {
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(stream, &mut rest);
        let text = String::from_utf8_lossy(&rest);
        assert!(
            text.is_empty() || text.starts_with("HTTP/1.1 408"),
            "{text}"
        );
    }
}

#[test]
fn json_bodies_that_are_not_json_rpc_get_the_answers_stdio_gives() {
    let fixture = files_fixture();
    let bodies = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#,
        "null",
        r#"[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#,
        r#"{"jsonrpc":"1.0","id":3,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[1]}"#,
    ];
    // What stdio answers each line.
    let mut raw = crate::common::Raw::start(fixture.command(FILES_ARGS));
    let stdio: Vec<Value> = bodies
        .iter()
        .map(|body| {
            raw.send(format!("{body}\n").as_bytes());
            raw.next_message(Duration::from_secs(10))
                .unwrap_or_else(|| panic!("no answer to {body}"))
        })
        .collect();
    assert_eq!(stdio[0]["error"]["code"], -32700, "{}", stdio[0]);
    assert_eq!(stdio[1]["error"]["code"], -32600, "{}", stdio[1]);
    assert_eq!(
        stdio[2]["error"]["message"],
        "Invalid Request: batches are not supported; send one message at a time"
    );
    assert_eq!(stdio[3]["error"]["code"], -32600, "{}", stdio[3]);
    assert_eq!(
        stdio[4],
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "invalid params for tools/call: params must be an object, not an array"}})
    );
    drop(raw);

    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let session = server.initialize(&[]);
    for (body, expected) in bodies.iter().zip(&stdio) {
        let status = if expected["id"].is_null() { 400 } else { 200 };
        // Both eras: a session's request and a stateless one.
        for headers in [
            vec![("Mcp-Session-Id", session.as_str())],
            vec![("MCP-Protocol-Version", V2026)],
        ] {
            let mut all = vec![
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ];
            all.extend(headers);
            let response = server.request("POST", "/mcp", &all, Some(body));
            assert_eq!(response.status, status, "{body}: {response:?}");
            assert_eq!(response.header("content-type"), Some("application/json"));
            let answer: Value = serde_json::from_str(&response.body).unwrap();
            assert_eq!(&answer, expected, "{body}");
        }
    }
    // A notification that is not one gets nothing, as on stdio.
    let notification = server.request(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        Some(r#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#),
    );
    assert_eq!(notification.status, 202, "{notification:?}");
    assert_eq!(notification.body, "");
}

#[test]
fn a_request_body_trickled_byte_by_byte_is_cut() {
    let fixture = files_fixture();
    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let mut stream = server.connect();
    stream
        .write_all(&head(
            server.port,
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            Some(200),
        ))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        // One byte every 2 s, up to 30 s: never the whole body.
        for _ in 0..15 {
            if writer.write_all(b" ").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(2));
        }
    });
    let response = read_response(&mut stream);
    assert_eq!(response.status, 408, "{response:?}");
    assert_eq!(
        response.body,
        "Request Timeout: the request body did not arrive within 10 s\n"
    );
    trickle.join().unwrap();
    assert_eq!(
        server.stateless(1, "tools/list", json!({}), &[]).status,
        200
    );
}

#[test]
fn near_the_connection_cap_slow_clients_make_room_for_health_checks() {
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend(["--max-connections", "20", "--metrics"]);
    let server = HttpServer::ready(&fixture, &args);
    // 30 clients that send headers and then a body one byte at a time.
    let slow: Vec<std::net::TcpStream> = (0..30)
        .map(|_| {
            let mut stream = server.connect();
            stream
                .write_all(&head(
                    server.port,
                    "POST",
                    "/mcp",
                    &[
                        ("Content-Type", "application/json"),
                        ("Accept", "application/json, text/event-stream"),
                    ],
                    Some(1000),
                ))
                .unwrap();
            stream.write_all(b"{").unwrap();
            stream
        })
        .collect();
    // Health checks and new clients still get in, long before the slow
    // bodies time out.
    let health = server.get("/healthz", &[]);
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(
        server.stateless(1, "tools/list", json!({}), &[]).status,
        200
    );
    let metrics = server.get("/metrics", &[]).body;
    let shed: u64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("skillserve_connections_shed_total "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{metrics}"));
    // Ten to admit the last slow ones, one each for the requests above.
    assert!(shed >= 11, "{metrics}");
    // The oldest slow clients were closed without an answer.
    let mut first = slow.into_iter().next().unwrap();
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut first, &mut rest);
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    server.wait_for_log("20 connections are open (--max-connections)");
}

/// The `result` of `skills/list`, without its entries.
fn skills_list_shape(answer: &Value) -> Value {
    let mut result = answer["result"].clone();
    result.as_object_mut().unwrap().remove("skills");
    result
}

#[test]
fn skills_list_answers_alike_over_stdio_and_http_in_both_eras() {
    let fixture = files_fixture();
    // stdio, 2025-11-25 (a session) and 2026-07-28 (`_meta`).
    let mut raw = crate::common::Raw::start(fixture.command(FILES_ARGS));
    raw.send_json(&json!({"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {}}));
    let stdio_legacy = raw.next_message(Duration::from_secs(10)).unwrap();
    raw.send_json(&json!({"jsonrpc": "2.0", "id": 2, "method": "skills/list",
        "params": {"_meta": crate::common::http::stateless_meta()}}));
    let stdio_stateless = raw.next_message(Duration::from_secs(10)).unwrap();
    drop(raw);

    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let session = server.initialize(&[]);
    let http_legacy = server
        .session_request(&session, 1, "skills/list", json!({}), &[])
        .answer();
    let http_stateless = server.stateless(2, "skills/list", json!({}), &[]).answer();

    assert_eq!(
        http_legacy["result"]["skills"],
        stdio_legacy["result"]["skills"]
    );
    assert_eq!(
        http_stateless["result"]["skills"],
        stdio_stateless["result"]["skills"]
    );
    // 2026-07-28 marks every result complete; older peers get the shape
    // they knew, without `resultType` (rmcp strips it for them).
    assert_eq!(
        skills_list_shape(&stdio_stateless)["resultType"],
        "complete"
    );
    assert_eq!(
        skills_list_shape(&http_stateless),
        skills_list_shape(&stdio_stateless)
    );
    assert_eq!(skills_list_shape(&stdio_legacy).get("resultType"), None);
    assert_eq!(
        skills_list_shape(&http_legacy),
        skills_list_shape(&stdio_legacy)
    );
}

#[test]
fn tasks_methods_are_unknown_to_a_server_without_the_tasks_extension() {
    let fixture = files_fixture();
    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let session = server.initialize(&[]);
    for (method, params) in [
        ("tasks/get", json!({"taskId": "t"})),
        ("tasks/update", json!({"taskId": "t", "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": "t"})),
    ] {
        // The extension is not advertised, so the methods do not exist
        // (-32601), whether or not the client declares the extension.
        let stateless = server.stateless(1, method, params.clone(), &[("Mcp-Name", "t")]);
        assert_eq!(stateless.status, 404, "{method}: {stateless:?}");
        assert_eq!(stateless.answer()["error"]["code"], -32601, "{method}");
        let legacy = server
            .session_request(&session, 2, method, params, &[])
            .answer();
        assert_eq!(legacy["error"]["code"], -32601, "{method}: {legacy}");
    }
    let discover = server
        .stateless(3, "server/discover", json!({}), &[])
        .answer();
    let extensions = &discover["result"]["capabilities"]["extensions"];
    assert!(
        extensions.get("io.modelcontextprotocol/tasks").is_none(),
        "{discover}"
    );
}
