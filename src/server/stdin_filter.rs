//! A workaround for rmcp: stdin, as rmcp gets to see it.
//!
//! rmcp 3.11 cannot deserialize a request whose `params` is neither an object
//! nor `null` (`"params": 5`, `"params": [..]`), and drops it without an
//! answer, which leaves the client waiting forever. A line filter in front of
//! rmcp ([`Filtered`]) renames such a request to [`INVALID_PARAMS_METHOD`],
//! with the original method and the problem as params: it then reaches
//! `ServerHandler::on_custom_request`, which answers -32602 (behaviour.md
//! §5.3). Every other line passes through untouched.
//!
//! The test `rmcp_still_rejects_params_that_are_not_an_object` fails once rmcp
//! accepts such requests; this module can then be deleted.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use serde_json::{Map, Value};
use tokio::io::{AsyncRead, ReadBuf};

/// The method a request whose params were not an object is renamed to; its
/// params then hold the original method and what was wrong.
pub const INVALID_PARAMS_METHOD: &str = "skillserve/invalid-params";

/// Lines longer than this are passed on as they come, never repaired: a
/// request with bad params is short, and holding a huge line to look at it
/// would cost memory and time (rmcp applies its own limit).
const MAX_REPAIRED_LINE: usize = 64 * 1024;

/// stdin (through the filter) and stdout, for `ServiceExt::serve`.
pub fn pipes() -> (
    Filtered<rmcp::transport::io::StdioReader>,
    rmcp::transport::io::StdioWriter,
) {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    (Filtered::new(reader), writer)
}

/// An `AsyncRead` that hands its reader's bytes on line by line, repairing
/// lines as they pass. It works inside rmcp's own read calls: a separate task
/// with a pipe in between cost about 40 µs per request (measured with
/// `benches/e2e.py`-style round trips at 1,000 skills).
pub struct Filtered<R> {
    inner: R,
    /// Bytes read but not yet handed on.
    pending: Vec<u8>,
    /// How much of `pending` is known to hold no newline.
    scanned: usize,
    /// Inside a line too long to repair: hand bytes on until its newline.
    passthrough: bool,
    /// Bytes being handed out, and how many have been.
    line: Vec<u8>,
    handed: usize,
    eof: bool,
}

impl<R> Filtered<R> {
    pub fn new(inner: R) -> Self {
        Filtered {
            inner,
            pending: Vec::new(),
            scanned: 0,
            passthrough: false,
            line: Vec::new(),
            handed: 0,
            eof: false,
        }
    }

    /// Makes `bytes` the next thing to hand out.
    fn hand_out(&mut self, bytes: Vec<u8>) {
        self.line = bytes;
        self.handed = 0;
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Filtered<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.handed < this.line.len() {
                let n = buf.remaining().min(this.line.len() - this.handed);
                buf.put_slice(&this.line[this.handed..this.handed + n]);
                this.handed += n;
                return Poll::Ready(Ok(()));
            }
            let newline = this.pending[this.scanned..]
                .iter()
                .position(|&b| b == b'\n');
            if let Some(at) = newline {
                let line: Vec<u8> = this.pending.drain(..=this.scanned + at).collect();
                this.scanned = 0;
                let line = if std::mem::take(&mut this.passthrough) {
                    line
                } else {
                    repair(&line).unwrap_or(line)
                };
                this.hand_out(line);
                continue;
            }
            this.scanned = this.pending.len();
            if (this.passthrough || this.pending.len() > MAX_REPAIRED_LINE)
                && !this.pending.is_empty()
            {
                this.passthrough = true;
                this.scanned = 0;
                let bytes = std::mem::take(&mut this.pending);
                this.hand_out(bytes);
                continue;
            }
            if this.eof {
                if this.pending.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                // rmcp reads whole lines only: end the last one.
                let mut line = std::mem::take(&mut this.pending);
                this.scanned = 0;
                line.push(b'\n');
                let line = repair(&line).unwrap_or(line);
                this.hand_out(line);
                continue;
            }
            let mut chunk = [0u8; 8192];
            let mut chunk = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut chunk))?;
            if chunk.filled().is_empty() {
                this.eof = true;
            } else {
                this.pending.extend_from_slice(chunk.filled());
            }
        }
    }
}

/// The line with its `params` made an object, or `None` when it needs no
/// change (the common case, decided without parsing the whole line).
pub fn repair(line: &[u8]) -> Option<Vec<u8>> {
    if !may_have_bad_params(line) {
        return None;
    }
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(line) else {
        return None;
    };
    if !message.contains_key("id") || !message.get("method").is_some_and(Value::is_string) {
        return None;
    }
    let kind = match message.get("params")? {
        // rmcp reads `null` as omitted, as JSON-RPC does.
        Value::Object(_) | Value::Null => return None,
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
    };
    // Renamed, so that even a method whose params are all optional
    // (`tools/list`, `ping`) answers -32602 instead of succeeding.
    let method = message.insert("method".into(), INVALID_PARAMS_METHOD.into());
    let mut params = Map::new();
    params.insert("method".into(), method.unwrap_or_default());
    params.insert(
        "problem".into(),
        format!("params must be an object, not {kind}").into(),
    );
    message.insert("params".into(), Value::Object(params));
    let mut bytes = serde_json::to_vec(&message).ok()?;
    bytes.push(b'\n');
    Some(bytes)
}

/// Whether `"params"` appears followed by something other than `{`. A false
/// positive (the word inside a string) only costs a full parse.
fn may_have_bad_params(line: &[u8]) -> bool {
    const KEY: &[u8] = b"\"params\"";
    line.windows(KEY.len()).enumerate().any(|(at, window)| {
        window == KEY
            && line[at + KEY.len()..]
                .iter()
                .find(|b| !b.is_ascii_whitespace() && **b != b':')
                .is_some_and(|b| *b != b'{')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repaired(line: &str) -> Option<Value> {
        repair(line.as_bytes()).map(|bytes| serde_json::from_slice(&bytes).unwrap())
    }

    #[test]
    fn object_params_pass_untouched() {
        assert_eq!(
            repaired(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"skill"}}"#),
            None
        );
        assert_eq!(
            repaired(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            None
        );
        assert_eq!(repaired("not json"), None);
    }

    #[test]
    fn other_params_become_a_marked_object() {
        let fixed =
            repaired(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":5}"#).unwrap();
        assert_eq!(fixed["id"], 7);
        assert_eq!(fixed["method"], INVALID_PARAMS_METHOD);
        assert_eq!(fixed["params"]["method"], "tools/call");
        assert_eq!(
            fixed["params"]["problem"],
            "params must be an object, not a number"
        );
        let fixed =
            repaired(r#"{"jsonrpc":"2.0","id":"a","method":"ping","params":["x"]}"#).unwrap();
        assert_eq!(
            fixed["params"]["problem"],
            "params must be an object, not an array"
        );
    }

    #[tokio::test]
    async fn the_filter_passes_lines_through_and_repairs_bad_ones() {
        use tokio::io::AsyncReadExt;
        let input: &[u8] = b"{\"id\":1,\"method\":\"a\",\"params\":{}}\n{\"id\":2,\"method\":\"b\",\"params\":3}\ntail";
        let mut out = String::new();
        Filtered::new(input).read_to_string(&mut out).await.unwrap();
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], r#"{"id":1,"method":"a","params":{}}"#);
        assert!(lines[1].contains(INVALID_PARAMS_METHOD), "{}", lines[1]);
        assert_eq!(lines[2], "tail", "a last line without newline is ended");
        assert_eq!(lines[3], "");
    }

    #[tokio::test]
    async fn a_huge_line_passes_through_whole_and_the_next_is_still_repaired() {
        use tokio::io::AsyncReadExt;
        let mut input = format!(
            "{{\"id\":1,\"method\":\"a\",\"params\":\"{}\"}}\n",
            "x".repeat(300_000)
        );
        input.push_str("{\"id\":2,\"method\":\"b\",\"params\":3}\n");
        let mut out = String::new();
        Filtered::new(input.as_bytes())
            .read_to_string(&mut out)
            .await
            .unwrap();
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(
            lines[0],
            input.lines().next().unwrap(),
            "passed on unrepaired"
        );
        assert!(lines[1].contains(INVALID_PARAMS_METHOD), "{}", lines[1]);
    }

    /// The reason this filter exists. When this fails, rmcp has learnt to
    /// read such requests itself: delete the filter (and this test).
    #[test]
    fn rmcp_still_rejects_params_that_are_not_an_object() {
        use rmcp::model::ClientJsonRpcMessage;
        for params in ["5", "[\"skill\"]", "\"x\"", "true"] {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{params}}}"#);
            assert!(
                serde_json::from_str::<ClientJsonRpcMessage>(&line).is_err(),
                "rmcp now reads `\"params\": {params}`: the stdin filter can go"
            );
        }
    }

    #[test]
    fn notifications_are_left_alone() {
        assert_eq!(
            repaired(r#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#),
            None
        );
    }
}
