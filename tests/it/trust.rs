//! Trust: clients that misbehave and repositories that attack (behaviour.md
//! §12), through the real binary.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Fixture, Raw, call, rss_kib, wait_for_exit};

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
/// reading stdin once its answers back up, instead of queueing them all.
#[test]
fn a_client_that_never_reads_cannot_grow_the_server() {
    let fixture = Fixture::new();
    // stdout is a pipe nobody reads.
    let mut child = fixture
        .command(ARGS)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let flood = std::thread::spawn(move || {
        use std::io::Write;
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "flood", "version": "0"}}});
        let _ = writeln!(stdin, "{init}");
        let mut batch = String::new();
        for id in 1..=100 {
            batch.push_str(&call(id, "code-fences").to_string());
            batch.push('\n');
        }
        let started = Instant::now();
        let mut sent = 0;
        while started.elapsed() < Duration::from_secs(10) {
            // Blocks once the server stops reading: that is the point.
            if stdin.write_all(batch.as_bytes()).is_err() {
                break;
            }
            sent += 100;
        }
        sent
    });
    std::thread::sleep(Duration::from_secs(10));
    let rss = rss_kib(pid);
    assert!(rss < 64 * 1024, "resident {rss} KiB after 10 s of flooding");
    // Still alive, and it stops when killed (the flooder's write then fails).
    assert!(child.try_wait().unwrap().is_none());
    child.kill().unwrap();
    child.wait().unwrap();
    let sent = flood.join().unwrap();
    assert!(
        sent < 10_000,
        "the server stopped reading: {sent} requests went in"
    );
    eprintln!("flooded {sent} requests; resident {rss} KiB");
}

#[test]
fn a_closed_stdout_ends_the_server_promptly_with_success() {
    use std::io::{BufRead, Write};
    let fixture = Fixture::new();
    let mut child = fixture
        .command(ARGS)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
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
    let started = Instant::now();
    for id in 1..=3 {
        // The server may be gone before the last write.
        let _ = writeln!(stdin, "{}", call(id, "canvas-design"));
    }
    let status = wait_for_exit(&mut child, Duration::from_secs(5)).expect("exits");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "exited {:?} after stdout closed",
        started.elapsed()
    );
    assert_eq!(status.code(), Some(0));
}
