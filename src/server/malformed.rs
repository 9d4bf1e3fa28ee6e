//! The answer to a message rmcp cannot read, the same on stdio and over HTTP
//! (behaviour.md §12): invalid JSON gets -32700 and an invalid request
//! -32600 (both with `"id": null`), a request whose params rmcp refuses
//! -32602 with its id; a notification or a response the server did not ask
//! for gets nothing.

use rmcp::model::{ErrorCode, RequestId};
use serde_json::Value;

/// What to answer a message rmcp could not read.
#[derive(Debug, PartialEq)]
pub enum Malformed {
    /// This error, to this id (`None`: `"id": null`).
    Answer {
        id: Option<RequestId>,
        code: ErrorCode,
        message: String,
    },
    /// Nothing: a notification, or a response from the client.
    Ignore,
}

impl Malformed {
    /// The error as a JSON-RPC message; `None` for [`Malformed::Ignore`].
    pub fn to_json(&self) -> Option<Value> {
        let Malformed::Answer { id, code, message } = self else {
            return None;
        };
        let error = rmcp::model::ErrorData::new(*code, message.clone(), None);
        Some(serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}))
    }
}

/// Why `bytes`, a message rmcp could not read, is not one.
pub fn judge(bytes: &[u8]) -> Malformed {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => judge_value(&value),
        Err(err) => Malformed::Answer {
            id: None,
            code: ErrorCode::PARSE_ERROR,
            message: format!("Parse error: {}", parse_problem(&err)),
        },
    }
}

/// Why a message that parsed as JSON is not one rmcp can read.
fn judge_value(value: &Value) -> Malformed {
    let invalid = |what: &str| Malformed::Answer {
        id: None,
        code: ErrorCode::INVALID_REQUEST,
        message: format!("Invalid Request: {what}"),
    };
    let Value::Object(message) = value else {
        return invalid(match value {
            Value::Array(_) => "batches are not supported; send one message at a time",
            _ => "a message must be a JSON object",
        });
    };
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    let Some(method) = message.get("method") else {
        // A response from the client; rmcp ignores those it did not ask for.
        if message.contains_key("id")
            && (message.contains_key("result") || message.contains_key("error"))
        {
            return Malformed::Ignore;
        }
        return invalid("no \"method\"");
    };
    let Some(method) = method.as_str() else {
        return invalid("\"method\" must be a string");
    };
    let Some(id) = message.get("id") else {
        // A notification gets no answer, whatever is wrong with it.
        return Malformed::Ignore;
    };
    let Ok(id) = serde_json::from_value::<RequestId>(id.clone()) else {
        return invalid("\"id\" must be a string or an integer");
    };
    let problem = match message.get("params") {
        Some(Value::Object(_)) | Some(Value::Null) | None => "malformed params".to_owned(),
        Some(other) => format!(
            "params must be an object, not {}",
            crate::text::json_kind(other)
        ),
    };
    Malformed::Answer {
        id: Some(id),
        code: ErrorCode::INVALID_PARAMS,
        message: format!("invalid params for {method}: {problem}"),
    }
}

/// serde_json's message, in words a client author can act on.
fn parse_problem(err: &serde_json::Error) -> String {
    let text = err.to_string();
    if text.contains("recursion limit") {
        return "nested too deeply".to_owned();
    }
    text
}
