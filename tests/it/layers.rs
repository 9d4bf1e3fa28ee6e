//! The layers of ARCHITECTURE.md, held by construction: every `crate::`
//! path in `src/` is read; a module may name modules of its own layer or
//! lower ones, never higher, and the modules never form a cycle. The blocking
//! core also never names the async crates: only `server`, `import` (and
//! `main`, which starts their runtimes) use tokio, rmcp or notify, except
//! `uri`, which asks rmcp's model types (no runtime) whether a name is
//! listable. Below the modules, no two source files import each other in a
//! circle either (a `crate::` or `super::` path names the file it reaches).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Layers, lowest first; a module may use modules of its own layer and of
/// lower ones. ARCHITECTURE.md draws the same table.
const LAYERS: &[&[&str]] = &[
    &[
        "diagnostic",
        "digest",
        "exit_codes",
        "folders",
        "memory",
        "mime",
        "parallel",
        "platform",
        "similarity",
        "spec",
        "text",
    ],
    &["disk"],
    &["approvals", "config", "gate", "lock", "parse"],
    &["contents", "listing", "program", "roots", "tokens"],
    &["files", "installed", "plugins", "skill"],
    &["render", "scan", "search", "security", "usage"],
    &["snapshot"],
    &["profiles"],
    &["resolve", "uri"],
    &["answer", "lint"],
    &["commands", "import", "manage", "server", "sources", "trust"],
    &["cli"],
];

/// Modules that may use the async crates.
const ASYNC: &[&str] = &["import", "server"];

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| {
            panic!("module `{module}` is in no layer: add it to LAYERS and to ARCHITECTURE.md")
        })
}

/// Every `.rs` file below `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules `text` names as `crate::module`.
fn used_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        // `skillserve::crate::` does not exist; a preceding identifier
        // character means another path (`other_crate::`).
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = text[at + "crate::".len()..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// The top-level module a source file belongs to (`server/handler.rs` →
/// `server`), or `None` for the crate roots.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let module = first.trim_end_matches(".rs");
    (module != "lib" && module != "main").then(|| module.to_owned())
}

/// A cycle among the `edges` (module → module it uses), as the modules on
/// it with the first one repeated at the end, if there is one.
fn find_cycle(edges: &BTreeMap<(String, String), String>) -> Option<Vec<String>> {
    fn visit<'a>(
        module: &'a str,
        uses: &BTreeMap<&'a str, Vec<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| *m == module) {
            let mut cycle: Vec<String> = path[start..].iter().map(|m| m.to_string()).collect();
            cycle.push(module.to_owned());
            return Some(cycle);
        }
        if done.contains(&module) {
            return None;
        }
        path.push(module);
        for used in uses.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(used, uses, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.push(module);
        None
    }
    let mut uses: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        uses.entry(from).or_default().push(to);
    }
    let mut done = Vec::new();
    uses.keys()
        .find_map(|module| visit(module, &uses, &mut Vec::new(), &mut done))
}

#[test]
fn modules_never_use_higher_layers_nor_form_cycles_and_the_core_has_no_async_crates() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();

    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut problems = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let shown = file.strip_prefix(&src).unwrap().display().to_string();
        for used in used_modules(&text) {
            if used != module {
                edges.entry((module.clone(), used)).or_insert(shown.clone());
            }
        }
        if !ASYNC.contains(&module.as_str()) {
            for library in ["tokio::", "notify::"] {
                if text.contains(library) {
                    problems.push(format!(
                        "{shown} uses {library} outside server/ and import/"
                    ));
                }
            }
            if text.contains("rmcp::") && module != "uri" {
                problems.push(format!(
                    "{shown} uses rmcp:: outside server/, import/ and uri"
                ));
            }
        }
    }
    for ((from, to), file) in &edges {
        if layer_of(to) > layer_of(from) {
            problems.push(format!(
                "{file}: `{from}` (layer {}) uses `{to}` (layer {}): a module may use only its own layer and lower ones",
                layer_of(from),
                layer_of(to)
            ));
        }
    }
    if let Some(cycle) = find_cycle(&edges) {
        problems.push(format!("the modules form a cycle: {}", cycle.join(" -> ")));
    }
    // Every module of lib.rs is in a layer (a new module must be placed).
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(module) = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(';'))
        {
            layer_of(module);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    println!(
        "{} modules in {} layers, {} edges, none upward, no cycle:",
        LAYERS.iter().map(|l| l.len()).sum::<usize>(),
        LAYERS.len(),
        edges.len()
    );
    for (rank, layer) in LAYERS.iter().enumerate().rev() {
        println!("  {rank}: {}", layer.join(" "));
    }
}

/// The module path of a source file: `server/http/auth.rs` is
/// `server::http::auth`, `server/http/mod.rs` is `server::http`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_owned())
        .collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// The source file a module path reaches: its longest prefix that is a
/// file (`server::http::auth::Caller` → `server/http/auth.rs`).
fn file_of(src: &Path, path: &[String]) -> Option<PathBuf> {
    (1..=path.len()).rev().find_map(|len| {
        let base = src.join(path[..len].join("/"));
        [base.with_extension("rs"), base.join("mod.rs")]
            .into_iter()
            .find(|candidate| candidate.is_file())
    })
}

/// The paths of `rest` (what follows `crate::` or `super::`) below
/// `prefix`, one for each item of a `{...}` group.
fn paths_at(rest: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let (mut depth, mut start) = (0, 0);
        for (at, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth > 0 => depth -= 1,
                '}' | ',' if depth == 0 => {
                    paths_at(&group[start..at], prefix.clone(), out);
                    if c == '}' {
                        return;
                    }
                    start = at + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() || name == "self" {
        out.push(prefix);
        return;
    }
    let mut path = prefix;
    path.push(name.clone());
    match rest[name.len()..].strip_prefix("::") {
        Some(more) => paths_at(more, path, out),
        None => out.push(path),
    }
}

/// The module paths a source file names with `crate::` and `super::`
/// outside comments and its test module (which clippy keeps last, and
/// whose `super` is the file itself).
fn named_paths(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let code: String = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap()
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            paths_at(&code[at + "crate::".len()..], Vec::new(), &mut out);
        }
    }
    for (at, _) in code.match_indices("super::") {
        if code[..at].ends_with("::") {
            continue;
        }
        let mut rest = &code[at..];
        let mut base = module.to_vec();
        while let Some(more) = rest.strip_prefix("super::") {
            base.pop();
            rest = more;
        }
        paths_at(rest, base, &mut out);
    }
    out
}

#[test]
fn no_two_source_files_import_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let shown = |file: &Path| file.strip_prefix(&src).unwrap().display().to_string();
    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for path in named_paths(&text, &module_path(&src, file)) {
            if let Some(used) = file_of(&src, &path).filter(|used| used != file) {
                edges
                    .entry((shown(file), shown(&used)))
                    .or_insert_with(|| path.join("::"));
            }
        }
    }
    if let Some(cycle) = find_cycle(&edges) {
        let ties: Vec<String> = cycle
            .windows(2)
            .map(|pair| {
                let via = &edges[&(pair[0].clone(), pair[1].clone())];
                format!("{} -> {} (crate::{via})", pair[0], pair[1])
            })
            .collect();
        panic!(
            "source files import each other in a circle:\n{}",
            ties.join("\n")
        );
    }
    assert!(edges.len() > 200, "only {} edges were read", edges.len());
}
