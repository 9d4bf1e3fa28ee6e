//! stdin, as rmcp gets to see it.
//!
//! rmcp drops a request whose `params` is not an object (`"params": 5`)
//! without answering, which leaves the client waiting forever. A small line
//! filter in front of rmcp replaces such `params` with an object carrying
//! [`INVALID_PARAMS_KEY`]: the request then reaches
//! `ServerHandler::on_custom_request`, which answers -32602 (design §5.3).
//! Every other line passes through untouched.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use serde_json::{Map, Value};
use tokio::io::{AsyncRead, ReadBuf};

/// The key of the object that stands in for params that were not an object.
/// Its value says what they were.
pub const INVALID_PARAMS_KEY: &str = "skillserve/invalid-params";

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
    /// Bytes read but not yet part of a complete line.
    pending: Vec<u8>,
    /// A complete (possibly repaired) line being handed out, and how much of
    /// it has been.
    line: Vec<u8>,
    handed: usize,
    eof: bool,
}

impl<R> Filtered<R> {
    pub fn new(inner: R) -> Self {
        Filtered {
            inner,
            pending: Vec::new(),
            line: Vec::new(),
            handed: 0,
            eof: false,
        }
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
            if let Some(end) = this.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = this.pending.drain(..=end).collect();
                this.line = repair(&line).unwrap_or(line);
                this.handed = 0;
                continue;
            }
            if this.eof {
                // A last line without a newline goes out as it is.
                if this.pending.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                this.line = std::mem::take(&mut this.pending);
                this.handed = 0;
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
    match message.get("params")? {
        Value::Object(_) => return None,
        // Omitted and null mean the same in JSON-RPC; rmcp only accepts omitted.
        Value::Null => {
            message.remove("params");
        }
        other => {
            let kind = match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                _ => "an array",
            };
            let mut marker = Map::new();
            marker.insert(
                INVALID_PARAMS_KEY.into(),
                format!("params must be an object, not {kind}").into(),
            );
            message.insert("params".into(), Value::Object(marker));
        }
    }
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
        assert_eq!(
            fixed["params"][INVALID_PARAMS_KEY],
            "params must be an object, not a number"
        );
        let fixed =
            repaired(r#"{"jsonrpc":"2.0","id":"a","method":"ping","params":["x"]}"#).unwrap();
        assert_eq!(
            fixed["params"][INVALID_PARAMS_KEY],
            "params must be an object, not an array"
        );
    }

    #[test]
    fn null_params_are_dropped() {
        let fixed =
            repaired(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#).unwrap();
        assert!(fixed.get("params").is_none());
    }

    #[tokio::test]
    async fn the_filter_passes_lines_through_and_repairs_bad_ones() {
        use tokio::io::AsyncReadExt;
        let input: &[u8] = b"{\"id\":1,\"method\":\"a\",\"params\":{}}\n{\"id\":2,\"method\":\"b\",\"params\":3}\ntail";
        let mut out = String::new();
        Filtered::new(input).read_to_string(&mut out).await.unwrap();
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], r#"{"id":1,"method":"a","params":{}}"#);
        assert!(lines[1].contains(INVALID_PARAMS_KEY), "{}", lines[1]);
        assert_eq!(lines[2], "tail");
    }

    #[test]
    fn notifications_are_left_alone() {
        assert_eq!(
            repaired(r#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#),
            None
        );
    }
}
