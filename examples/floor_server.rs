//! The floor of the call benchmark (`benches/callpath.py`): a bare, blocking
//! stdio JSON-RPC server that answers `tools/call` (with or without `file`)
//! and `resources/read` with the very text skillserve would, from memory.
//! Whatever skillserve spends above this is its own cost: resolving the
//! name, opening the file through the gate and reading it, the runtime,
//! rmcp.
//!
//!     cargo build --release --example floor_server
//!     target/release/examples/floor_server SKILLS_DIR

#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark's floor server reads the skills with std::fs"
)]

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
                let arguments = &message["params"]["arguments"];
                let name = arguments["name"].as_str().unwrap_or_default();
                let answer = match arguments["file"].as_str() {
                    None => answers.get(name).map(|skill| skill.answer.clone()),
                    Some(file) => answers.get(name).and_then(|skill| {
                        let text = skill.files.get(file)?;
                        Some(format!(
                            "Loading: {name}/{file}\nBase directory: {}\n\n{text}",
                            skill.dir
                        ))
                    }),
                };
                match answer {
                    Some(text) => json!({"content": [{"type": "text", "text": text}]}),
                    None => {
                        json!({"content": [{"type": "text", "text": "not found"}], "isError": true})
                    }
                }
            }
            "resources/read" => {
                let uri = message["params"]["uri"].as_str().unwrap_or_default();
                let text = uri
                    .strip_prefix("skill://")
                    .and_then(|rest| rest.split_once('/'))
                    .and_then(|(name, file)| answers.get(name)?.files.get(file));
                match text {
                    Some(text) => {
                        json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]})
                    }
                    None => json!({"contents": []}),
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

/// A skill, in memory.
struct Skill {
    dir: String,
    /// What a `tools/call` of it returns.
    answer: String,
    /// Its `SKILL.md` and `references/` files' texts, by relative path.
    files: HashMap<String, String>,
}

/// Every skill folder, keyed by folder name.
fn load(dir: &Path) -> std::io::Result<HashMap<String, Skill>> {
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
        let mut files = HashMap::from([("SKILL.md".to_owned(), text)]);
        if let Ok(references) = std::fs::read_dir(path.join("references")) {
            for reference in references {
                let reference = reference?.path();
                let file = reference.file_name().unwrap().to_string_lossy();
                files.insert(
                    format!("references/{file}"),
                    std::fs::read_to_string(&reference)?,
                );
            }
        }
        let dir = path.display().to_string();
        answers.insert(name, Skill { dir, answer, files });
    }
    Ok(answers)
}
