//! Who may do what on `serve --http` (behaviour.md §16.2), through the real
//! binary: admin tokens and the `skills:admin` scope as the handler sees
//! them, sessions that answer only whoever opened them, JWTs read to the
//! letter, the `Host` rule of the resource metadata, and streams that end
//! when their credentials do.

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::http::{HttpServer, Issuer, PATIENCE, V2026, head, read_until};
use crate::common::{FILES_ARGS, Fixture, files_fixture};

const AUDIENCE: &str = "https://skills.example.com/mcp";

/// `token new LABEL [--admin] --file tokens` in `fixture`: the token.
fn new_token(fixture: &Fixture, label: &str, admin: bool) -> String {
    let tokens = fixture.path("tokens");
    let mut args = vec!["token", "new", label, "--file", tokens.to_str().unwrap()];
    if admin {
        args.push("--admin");
    }
    let made = fixture.run(&args);
    assert_eq!(made.status.code(), Some(0), "{}", made.stderr);
    made.stdout.trim().to_owned()
}

/// The server's arguments for the token file and, when given, an issuer.
fn auth_args(fixture: &Fixture, issuer: Option<&Issuer>) -> Vec<String> {
    let mut args: Vec<String> = FILES_ARGS.iter().map(|&a| a.to_owned()).collect();
    args.extend([
        "--auth-tokens".to_owned(),
        fixture.path("tokens").to_string_lossy().into_owned(),
    ]);
    if let Some(issuer) = issuer {
        args.extend([
            "--oauth-issuer".to_owned(),
            issuer.url.clone(),
            "--oauth-audience".to_owned(),
            AUDIENCE.to_owned(),
        ]);
    }
    args
}

fn start(fixture: &Fixture, args: &[String], extra: &[&str]) -> HttpServer {
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend_from_slice(extra);
    HttpServer::ready(fixture, &all)
}

fn call_pdf() -> Value {
    json!({"name": "skill", "arguments": {"name": "pdf"}})
}

#[test]
fn admin_tokens_and_the_admin_scope_reach_the_handler_as_the_caller() {
    let issuer = Issuer::start();
    let fixture = files_fixture();
    let alice = new_token(&fixture, "alice", false);
    let lead = new_token(&fixture, "lead", true);
    // The file keeps the marker after the hash; older lines stay as they were.
    let file = std::fs::read_to_string(fixture.path("tokens")).unwrap();
    let lines: Vec<&str> = file.lines().collect();
    assert_eq!(lines.len(), 2, "{file}");
    assert!(lines[0].starts_with("alice:") && lines[0].len() == "alice:".len() + 64);
    assert!(lines[1].starts_with("lead:") && lines[1].ends_with(":admin"));
    assert_eq!(lines[1].len(), "lead:".len() + 64 + ":admin".len());

    // The handler logs the caller of each tool call at trace level.
    let server = start(
        &fixture,
        &auth_args(&fixture, Some(&issuer)),
        &["--log-level", "info,skillserve::server::handler=trace"],
    );
    let plain = issuer.token("k1", json!({"sub": "reader@example.com"}));
    let scoped = issuer.token(
        "k1",
        json!({"sub": "owner@example.com", "scope": "skills:read skills:admin"}),
    );
    let listed = issuer.token(
        "k1",
        json!({"sub": "ops@example.com", "scp": ["skills:admin"]}),
    );
    let narrow = issuer.token(
        "k1",
        json!({"sub": "near@example.com", "scope": "skills:administrator"}),
    );
    let cases = [
        (&alice, "token:alice", false),
        (&lead, "token:lead", true),
        (&plain, "oauth:reader@example.com", false),
        (&scoped, "oauth:owner@example.com", true),
        (&listed, "oauth:ops@example.com", true),
        (&narrow, "oauth:near@example.com", false),
    ];
    for (token, who, admin) in cases {
        let bearer = format!("Bearer {token}");
        let headers = [("Authorization", bearer.as_str())];
        // Both eras: a session's request and a stateless one.
        let session = server.initialize(&headers);
        let legacy = server.session_request(&session, 1, "tools/call", call_pdf(), &headers);
        assert_eq!(legacy.status, 200, "{who}: {legacy:?}");
        let stateless = server.stateless(2, "tools/call", call_pdf(), &headers);
        assert_eq!(stateless.status, 200, "{who}: {stateless:?}");
        let needle = format!("caller={who} admin={admin}");
        server.wait_until(|server| server.log().matches(&needle).count() == 2);
    }
    assert!(!server.log().contains(&lead), "a token was logged");
}

#[test]
fn a_session_answers_only_the_token_that_opened_it() {
    let fixture = files_fixture();
    let alice = format!("Bearer {}", new_token(&fixture, "alice", false));
    let bob = format!("Bearer {}", new_token(&fixture, "bob", false));
    let server = start(&fixture, &auth_args(&fixture, None), &[]);
    let as_alice = [("Authorization", alice.as_str())];
    let as_bob = [("Authorization", bob.as_str())];
    let session = server.initialize(&as_alice);

    // Bob meets alice's session as if it did not exist.
    let call = server.session_request(&session, 1, "tools/call", call_pdf(), &as_bob);
    assert_eq!(call.status, 404, "{call:?}");
    assert_eq!(call.body, "Not Found: Session not found");
    let stream = server.get(
        "/mcp",
        &[
            ("Authorization", bob.as_str()),
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &session),
        ],
    );
    assert_eq!(stream.status, 404, "{stream:?}");
    let delete = server.request(
        "DELETE",
        "/mcp",
        &[
            ("Authorization", bob.as_str()),
            ("Mcp-Session-Id", &session),
        ],
        None,
    );
    assert_eq!(delete.status, 404, "{delete:?}");
    // Alice's session is untouched.
    let mine = server.session_request(&session, 2, "tools/call", call_pdf(), &as_alice);
    assert_eq!(mine.status, 200, "{mine:?}");
    assert!(
        mine.answer()["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Loading: pdf\n")
    );
    let delete = server.request(
        "DELETE",
        "/mcp",
        &[
            ("Authorization", alice.as_str()),
            ("Mcp-Session-Id", &session),
        ],
        None,
    );
    assert_eq!(delete.status, 204, "{delete:?}");
}

#[test]
fn deleting_an_unknown_or_ended_session_is_404() {
    let fixture = files_fixture();
    let server = HttpServer::ready(&fixture, FILES_ARGS);
    let delete = |session: &str| {
        server.request(
            "DELETE",
            "/mcp",
            &[
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            None,
        )
    };
    let unknown = delete("no-such-session");
    assert_eq!(unknown.status, 404, "{unknown:?}");
    assert_eq!(unknown.body, "Not Found: Session not found");
    let session = server.initialize(&[]);
    assert_eq!(delete(&session).status, 204);
    let again = delete(&session);
    assert_eq!(again.status, 404, "{again:?}");
    let after = server.session_request(&session, 1, "tools/list", json!({}), &[]);
    assert_eq!(after.status, 404);
}

#[test]
fn jwts_are_read_to_the_letter_and_refusals_use_the_documented_texts() {
    let issuer = Issuer::start();
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend(["--oauth-issuer", &issuer.url, "--oauth-audience", AUDIENCE]);
    let server = HttpServer::ready(&fixture, &args);
    let metadata = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
        server.port
    );
    let refused = |token: &str, reason: &str| {
        let bearer = format!("Bearer {token}");
        let response = server.stateless(1, "tools/list", json!({}), &[("Authorization", &bearer)]);
        assert_eq!(response.status, 401, "{reason}: {response:?}");
        assert_eq!(
            response.header("www-authenticate").unwrap(),
            format!(
                "Bearer realm=\"skillserve\", resource_metadata=\"{metadata}\", error=\"invalid_token\", error_description=\"{reason}\""
            ),
        );
        assert_eq!(response.body, format!("Unauthorized: {reason}\n"));
    };
    let ok = issuer.token("k1", json!({}));
    let bearer = format!("Bearer {ok}");
    assert_eq!(
        server
            .stateless(1, "tools/list", json!({}), &[("Authorization", &bearer)])
            .status,
        200
    );
    // `iss` is a string equal to the issuer: a list holding it is not.
    refused(
        &issuer.token("k1", json!({"iss": [issuer.url]})),
        "the token's `iss` claim is malformed",
    );
    refused(
        &issuer.token("k1", json!({"iss": format!("{}/", issuer.url)})),
        "the token is from another issuer",
    );
    refused(
        &issuer.token("k1", json!({"iss": null})),
        "the token has no `iss` claim",
    );
    // A critical header parameter the server does not know (RFC 7515 §4.1.11).
    refused(
        &issuer.token_with_header(
            json!({"alg": "ES256", "kid": "k1", "crit": ["exp"], "exp": 1}),
            json!({}),
        ),
        "the token has a critical header parameter the server does not understand",
    );
    refused(
        &issuer.token_with_header(json!({"alg": "ES256", "kid": "k1", "crit": []}), json!({})),
        "the token has a critical header parameter the server does not understand",
    );
    // What used to leak the JWT library's own messages.
    refused(
        &issuer.token("k1", json!({"exp": null})),
        "the token has no `exp` claim",
    );
    refused(
        &issuer.token("k1", json!({"exp": "tomorrow"})),
        "the token's `exp` claim is malformed",
    );
    refused(
        &issuer.token("k1", json!({"aud": 7})),
        "the token's `aud` claim is malformed",
    );
    refused(
        &issuer.token("k1", json!({"sub": 7})),
        "the token's `sub` claim is malformed",
    );
    refused("e30.e30.*", "the token is not a JWT");
    refused("not-a-jwt", "the token is not a JWT");
    let (signed, _) = ok.rsplit_once('.').unwrap();
    refused(&format!("{signed}.*"), "the token's signature is invalid");
    refused(
        &issuer.token_with_header(json!({"alg": "ES384", "kid": "k1"}), json!({})),
        "the token's signature is invalid",
    );
    refused(
        &issuer.token_with_header(json!({"alg": "none", "kid": "k1"}), json!({})),
        "the token's algorithm is not accepted",
    );
    // A header parameter given twice.
    let twice = {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let (_, rest) = ok.split_once('.').unwrap();
        let header = b64.encode(r#"{"alg":"ES256","kid":"k1","alg":"ES256"}"#);
        format!("{header}.{rest}")
    };
    refused(&twice, "the token is not a JWT");
}

#[test]
fn the_resource_metadata_keeps_the_host_rule_on_a_loopback_address() {
    let issuer = Issuer::start();
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend(["--oauth-issuer", &issuer.url, "--oauth-audience", AUDIENCE]);
    let server = HttpServer::ready(&fixture, &args);
    // `head` sends `Host: 127.0.0.1:PORT`; these send another Host.
    let with_host = |path: &str, host: &str| {
        let mut stream = server.connect();
        let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        crate::common::http::read_response(&mut stream)
    };
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/mcp",
    ] {
        let foreign = with_host(path, "evil.example");
        assert_eq!(foreign.status, 403, "{path}: {foreign:?}");
        assert_eq!(foreign.body, "Forbidden: Host header is not allowed\n");
        assert!(
            !format!("{foreign:?}").contains("evil.example"),
            "{foreign:?}"
        );
    }
    let local = with_host("/.well-known/oauth-protected-resource/mcp", "localhost:9");
    assert_eq!(local.status, 200, "{local:?}");
    let document: Value = serde_json::from_str(&local.body).unwrap();
    assert_eq!(document["resource"], "http://localhost:9/mcp");
    let port = server.port.to_string();
    let own = server.get("/.well-known/oauth-protected-resource", &[]);
    let document: Value = serde_json::from_str(&own.body).unwrap();
    assert_eq!(document["resource"], format!("http://127.0.0.1:{port}/mcp"));
}

/// Opens a 2026-07-28 `subscriptions/listen` stream with these headers and
/// reads up to the end of its response head.
fn listen(server: &HttpServer, headers: &[(&str, &str)]) -> std::net::TcpStream {
    let mut stream = server.connect();
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": true},
            "_meta": crate::common::http::stateless_meta()
        }
    })
    .to_string();
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", V2026),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    all.extend_from_slice(headers);
    stream
        .write_all(&head(server.port, "POST", "/mcp", &all, Some(body.len())))
        .unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let head = read_until(&mut stream, "\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    stream
}

/// Reads `stream` until the server ends it (keep-alive comments and all),
/// or fails after [`PATIENCE`].
fn read_to_end(stream: &mut std::net::TcpStream) -> String {
    let start = std::time::Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    loop {
        assert!(
            start.elapsed() < PATIENCE,
            "the stream did not end: {}",
            String::from_utf8_lossy(&seen)
        );
        match stream.read(&mut buf) {
            Ok(0) => return String::from_utf8_lossy(&seen).into_owned(),
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(err)
                if matches!(
                    err.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(err) => panic!("reading the stream: {err}"),
        }
    }
}

#[test]
fn streams_end_when_their_token_is_revoked_or_their_jwt_expires() {
    let issuer = Issuer::start();
    let fixture = files_fixture();
    let alice = format!("Bearer {}", new_token(&fixture, "alice", false));
    let bob = format!("Bearer {}", new_token(&fixture, "bob", false));
    let server = start(&fixture, &auth_args(&fixture, Some(&issuer)), &[]);
    let as_bob = [("Authorization", bob.as_str())];
    let session = server.initialize(&as_bob);
    let mut get = server.connect();
    get.write_all(&head(
        server.port,
        "GET",
        "/mcp",
        &[
            ("Authorization", bob.as_str()),
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &session),
        ],
        None,
    ))
    .unwrap();
    let opened = read_until(&mut get, "\r\n\r\n");
    assert!(opened.starts_with("HTTP/1.1 200"), "{opened}");
    let mut bobs = listen(&server, &as_bob);
    let mut alices = listen(&server, &[("Authorization", alice.as_str())]);

    // Bob's line goes: his streams end, alice's stays open.
    let tokens = fixture.path("tokens");
    let text = std::fs::read_to_string(&tokens).unwrap();
    let kept: String = text
        .lines()
        .filter(|line| !line.starts_with("bob:"))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&tokens, kept).unwrap();
    read_to_end(&mut get);
    read_to_end(&mut bobs);
    server.wait_for_log("token:bob: its credentials are no longer valid; its stream ends");
    alices
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 64];
    match alices.read(&mut buf) {
        Err(err) => assert!(
            matches!(
                err.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "{err}"
        ),
        Ok(n) => assert!(n > 0, "alice's stream ended"),
    }

    // A JWT past its `exp`, still inside the 60 s leeway for a few seconds.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expiring = format!(
        "Bearer {}",
        issuer.token("k1", json!({"sub": "carol", "exp": now - 57}))
    );
    let mut carols = listen(&server, &[("Authorization", expiring.as_str())]);
    read_to_end(&mut carols);
    server.wait_for_log("oauth:carol: its credentials are no longer valid; its stream ends");
}

#[test]
fn an_admin_token_may_change_the_catalog_through_the_skills_app_and_a_reader_may_not() {
    let fixture = files_fixture();
    let reader = format!("Bearer {}", new_token(&fixture, "reader", false));
    let lead = format!("Bearer {}", new_token(&fixture, "lead", true));
    let server = start(&fixture, &auth_args(&fixture, None), &[]);
    let call = |bearer: &str, name: &str, arguments: Value| {
        let message = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {
                "name": name, "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": V2026,
                    "io.modelcontextprotocol/clientInfo": {"name": "skillserve-app", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {
                        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
                    }
                }
            }
        });
        server
            .post(
                &message,
                &[
                    ("Authorization", bearer),
                    ("MCP-Protocol-Version", V2026),
                    ("Mcp-Method", "tools/call"),
                    ("Mcp-Name", name),
                ],
            )
            .answer()
    };
    for (bearer, allowed) in [(&reader, false), (&lead, true)] {
        let overview = call(bearer, "app_overview", json!({}));
        assert_eq!(
            overview["result"]["structuredContent"]["changes"],
            json!({"rule": "admin", "allowed": allowed}),
            "{overview}"
        );
    }
    let config = fixture.path("home/.config/skillserve/config.toml");
    let refused = call(&reader, "app_disable", json!({"name": "pdf"}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(!config.exists());
    let done = call(&lead, "app_disable", json!({"name": "pdf"}));
    assert_ne!(done["result"]["isError"], true, "{done}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("\"pdf\""), "{text}");
    server.wait_for_log("http token:lead app_disable 'pdf'");
}

#[test]
fn every_accepted_algorithm_is_checked_against_the_issuers_keys() {
    let issuer = Issuer::start();
    let algorithms = [
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
    ];
    for alg in algorithms {
        issuer.add_key_for(alg, alg);
    }
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend(["--oauth-issuer", &issuer.url, "--oauth-audience", AUDIENCE]);
    let server = HttpServer::ready(&fixture, &args);
    let status = |token: &str| {
        let bearer = format!("Bearer {token}");
        let response = server.stateless(1, "tools/list", json!({}), &[("Authorization", &bearer)]);
        (
            response.status,
            response.header("www-authenticate").map(str::to_owned),
        )
    };
    for alg in algorithms {
        let header = json!({"alg": alg, "typ": "JWT", "kid": alg});
        let token = issuer.token_with_header(header, json!({"sub": alg}));
        assert_eq!(status(&token), (200, None), "{alg}");
        // The same signature over other claims.
        let (head, rest) = token.split_once('.').unwrap();
        let (_, signature) = rest.split_once('.').unwrap();
        let other =
            issuer.token_with_header(json!({"alg": alg, "kid": alg}), json!({"sub": "mallory"}));
        let (_, other_rest) = other.split_once('.').unwrap();
        let (other_payload, _) = other_rest.split_once('.').unwrap();
        let forged = format!("{head}.{other_payload}.{signature}");
        let (code, challenge) = status(&forged);
        assert_eq!(code, 401, "{alg}");
        assert!(
            challenge
                .unwrap()
                .contains("error_description=\"the token's signature is invalid\""),
            "{alg}"
        );
    }
    // A key serves only the algorithm its JWK names: an RS256 key's
    // signature claimed as PS256 is refused.
    let rs256 = issuer.token_with_header(json!({"alg": "RS256", "kid": "RS256"}), json!({}));
    let (_, rest) = rs256.split_once('.').unwrap();
    let header = {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"alg":"PS256","kid":"RS256"}"#)
    };
    assert_eq!(status(&format!("{header}.{rest}")).0, 401);
}
