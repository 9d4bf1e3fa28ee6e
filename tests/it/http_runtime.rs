//! `serve --http` on several threads (`--threads`) and its stop behind a
//! load balancer (`--drain`), through the real binary (behaviour.md §16.3,
//! §16.4). The balancer itself is in tests/replicas (HAProxy).

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::http::{HttpServer, V2026, read_response, stateless_meta};
use crate::common::{FILES_ARGS, files_fixture};

/// The first text of a `tools/call` answer.
fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a tool result: {answer}"))
}

/// A counter of `/metrics` (0 when absent).
fn counter(metrics: &str, series: &str) -> u64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map_or(0, |value| value.parse().unwrap())
}

fn sigterm(server: &HttpServer) {
    // SAFETY: kill(2) with a pid we own and a valid signal number.
    let sent = unsafe { libc::kill(server.pid() as i32, libc::SIGTERM) };
    assert_eq!(sent, 0);
}

#[test]
fn many_clients_at_once_on_four_threads_each_get_their_own_answers() {
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend(["--threads", "4", "--metrics"]);
    let server = HttpServer::ready(&fixture, &args);
    assert!(
        server
            .log()
            .contains("; no authentication (loopback only); 4 threads\n"),
        "{}",
        server.log()
    );
    let before = server.get("/metrics", &[]).body;
    std::thread::scope(|scope| {
        // 16 stateless clients and 8 sessions at once, every answer checked
        // against its own request.
        for client in 0..16u64 {
            let server = &server;
            scope.spawn(move || {
                for n in 0..10u64 {
                    let id = client * 100 + n;
                    let name = if id % 2 == 0 { "pdf" } else { "plain" };
                    let response = server.stateless(
                        id,
                        "tools/call",
                        json!({"name": "skill", "arguments": {"name": name}}),
                        &[],
                    );
                    assert_eq!(response.status, 200, "{response:?}");
                    let answer = response.answer();
                    assert_eq!(answer["id"], id);
                    assert!(text(&answer).starts_with(&format!("Loading: {name}\n")));
                }
            });
        }
        let sessions: Vec<_> = (0..8u64)
            .map(|client| {
                let server = &server;
                scope.spawn(move || {
                    let session = server.initialize(&[]);
                    for n in 0..5u64 {
                        let name = if (client + n) % 2 == 0 {
                            "pdf"
                        } else {
                            "plain"
                        };
                        let response = server.session_request(
                            &session,
                            n + 1,
                            "tools/call",
                            json!({"name": "skill", "arguments": {"name": name}}),
                            &[],
                        );
                        assert_eq!(response.status, 200, "{response:?}");
                        let answer = response.answer();
                        assert_eq!(answer["id"], n + 1);
                        assert!(text(&answer).starts_with(&format!("Loading: {name}\n")));
                    }
                    session
                })
            })
            .collect();
        let mut ids: Vec<String> = sessions.into_iter().map(|s| s.join().unwrap()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 8, "every session has an id of its own");
    });
    // The counters saw every request once: 160 stateless calls, 8
    // initialize and 40 session calls answered 200 (and the /metrics before),
    // 8 notifications 202.
    let after = server.get("/metrics", &[]).body;
    let delta = |series: &str| counter(&after, series) - counter(&before, series);
    assert_eq!(
        delta("skillserve_http_requests_total{status=\"200\"}"),
        160 + 8 + 40 + 1,
        "{after}"
    );
    assert_eq!(
        delta("skillserve_http_requests_total{status=\"202\"}"),
        8,
        "{after}"
    );
    assert_eq!(
        delta("skillserve_http_request_duration_seconds_count"),
        160 + 8 + 40 + 8 + 1,
        "{after}"
    );
    assert!(after.contains("\nskillserve_sessions 8\n"), "{after}");
}

#[test]
fn threads_and_drain_need_http_and_sane_values() {
    let fixture = crate::common::Fixture::empty();
    let output = fixture.run(&["serve", "--threads", "2"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        output.stderr,
        "skillserve: --threads only applies with --http\n"
    );
    let output = fixture.run(&["serve", "--drain", "5"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        output.stderr,
        "skillserve: --drain only applies with --http\n"
    );
    for bad in [["--threads", "0"], ["--drain", "301"]] {
        let output = fixture.run(&["serve", "--http", "127.0.0.1:0", bad[0], bad[1]]);
        assert_eq!(output.status.code(), Some(2), "{bad:?}: {}", output.stderr);
        assert!(
            output
                .stderr
                .contains(&format!("invalid value '{}' for '{} ", bad[1], bad[0])),
            "{}",
            output.stderr
        );
    }
}

#[test]
fn with_drain_a_signalled_server_answers_on_while_healthz_says_draining_then_exits() {
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend(["--drain", "2"]);
    let server = HttpServer::ready(&fixture, &args);
    // A keep-alive connection opened before the signal, idle when it
    // arrives: draining does not cut it.
    let mut idle = server.connect();
    sigterm(&server);
    server.wait_for_log(
        "received SIGTERM; draining for 2 s: /healthz answers 503 and every answer closes its connection, then the server stops accepting",
    );

    let health = server.get("/healthz", &[]);
    assert_eq!(health.status, 503);
    assert_eq!(health.body, r#"{"status":"draining"}"#);

    // New connections are still answered.
    let call = json!({"name": "skill", "arguments": {"name": "pdf"}});
    let response = server.stateless(1, "tools/call", call.clone(), &[]);
    assert_eq!(response.status, 200, "{response:?}");
    assert!(text(&response.answer()).starts_with("Loading: pdf\n"));
    assert_eq!(response.header("connection"), Some("close"));

    // The idle connection's next request is answered, and the connection
    // then closes (the answer says so), so the client (a load balancer)
    // opens a new one, which finds another replica once this one is out.
    let mut params = call;
    params["_meta"] = stateless_meta();
    let body =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: {V2026}\r\nMcp-Method: tools/call\r\nMcp-Name: skill\r\nContent-Length: {}\r\n\r\n",
        server.port,
        body.len()
    );
    idle.write_all(head.as_bytes()).unwrap();
    idle.write_all(body.as_bytes()).unwrap();
    // Read to the end: it returns because the server closes the connection.
    let response = read_response(&mut idle);
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(response.header("connection"), Some("close"));
    assert!(text(&response.answer()).starts_with("Loading: pdf\n"));

    let (status, log) = server.exited();
    assert_eq!(status.code(), Some(0), "{log}");
    let draining = log.find("draining for 2 s").unwrap();
    let exiting = log.find("received SIGTERM; exiting").expect(&log);
    assert!(draining < exiting, "{log}");
}

#[test]
fn a_second_signal_while_draining_stops_the_server_at_once() {
    let fixture = files_fixture();
    let mut args = FILES_ARGS.to_vec();
    args.extend(["--drain", "300"]);
    let server = HttpServer::ready(&fixture, &args);
    sigterm(&server);
    server.wait_for_log("received SIGTERM; draining for 300 s");
    std::thread::sleep(Duration::from_millis(100));
    sigterm(&server);
    // Well within the test's patience, not 300 s.
    let (status, log) = server.exited();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(
        log.contains("received SIGTERM while draining; stopping now"),
        "{log}"
    );
    assert!(log.contains("received SIGTERM; exiting"), "{log}");
}
