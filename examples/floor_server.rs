//! The floor of the call benchmark (`benches/callpath.py`): a bare, blocking
//! stdio JSON-RPC server that answers `tools/call` with the very bytes
//! skillserve would, from memory. Whatever skillserve spends above this is
//! its own cost: resolving the name, checking and reading the file, the
//! runtime, rmcp.
//!
//!     cargo build --release --example floor_server
//!     target/release/examples/floor_server SKILLS_DIR

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::{Value, json};

fn main() -> std::io::Result<()> {
    let dir = std::env::args_os()
        .nth(1)
        .expect("usage: floor_server SKILLS_DIR");
    let answers = load(Path::new(&dir))?;
    let stdin = std::io::stdin().lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let Ok(message) = serde_json::from_str::<Value>(&line?) else {
            continue;
        };
        let Some(id) = message.get("id") else {
            continue;
        };
        let reply = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "floor", "version": "0"}
            }),
            "tools/list" => json!({"tools": [{
                "name": "skill",
                "description": "floor",
                "inputSchema": {"type": "object"}
            }]}),
            "tools/call" => {
                let name = message["params"]["arguments"]["name"]
                    .as_str()
                    .unwrap_or_default();
                match answers.get(name) {
                    Some(text) => json!({"content": [{"type": "text", "text": text}]}),
                    None => {
                        json!({"content": [{"type": "text", "text": "not found"}], "isError": true})
                    }
                }
            }
            _ => json!({}),
        };
        serde_json::to_writer(
            &mut out,
            &json!({"jsonrpc": "2.0", "id": id, "result": reply}),
        )?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}

/// Every skill folder's answer text, keyed by folder name.
fn load(dir: &Path) -> std::io::Result<HashMap<String, String>> {
    let mut answers = HashMap::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let Ok(text) = std::fs::read_to_string(path.join("SKILL.md")) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let answer = format!(
            "Loading: {name}\nBase directory: {}\n\n{text}",
            path.display()
        );
        answers.insert(name, answer);
    }
    Ok(answers)
}
