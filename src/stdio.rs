//! stdin, as rmcp gets to see it.
//!
//! rmcp drops a request whose `params` is not an object (`"params": 5`)
//! without answering, which leaves the client waiting forever. A small line
//! filter in front of rmcp replaces such `params` with an object carrying
//! [`INVALID_PARAMS_KEY`]: the request then reaches
//! `ServerHandler::on_custom_request`, which answers -32602 (design §5.3).
//! Every other line passes through untouched.

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, DuplexStream};

/// The key of the object that stands in for params that were not an object.
/// Its value says what they were.
pub const INVALID_PARAMS_KEY: &str = "skillserve/invalid-params";

/// Bytes in flight between the filter and rmcp.
const PIPE_BYTES: usize = 256 * 1024;

/// stdin (through the filter) and stdout, for `ServiceExt::serve`. The filter
/// runs as a task; when stdin ends, rmcp sees the end too.
pub fn pipes() -> (DuplexStream, rmcp::transport::io::StdioWriter) {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    let (filtered, to_rmcp) = tokio::io::duplex(PIPE_BYTES);
    tokio::spawn(filter(reader, to_rmcp));
    (filtered, writer)
}

async fn filter(stdin: impl AsyncRead + Unpin, mut to_rmcp: DuplexStream) {
    let mut stdin = BufReader::new(stdin);
    let mut line = Vec::new();
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => {
                tracing::debug!("stdin: {err}");
                break;
            }
        }
        let repaired = repair(&line);
        if to_rmcp
            .write_all(repaired.as_deref().unwrap_or(&line))
            .await
            .is_err()
        {
            break;
        }
    }
    // Dropping `to_rmcp` is end-of-file for rmcp.
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

    #[test]
    fn notifications_are_left_alone() {
        assert_eq!(
            repaired(r#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#),
            None
        );
    }
}
