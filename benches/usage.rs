//! The usage file under a million uses (`cargo bench --bench usage`):
//! a million uses of 10,000 skills by 5 clients over 120 days go through
//! the writer's code (`History::add`, then `usage::merge_into_file`: read
//! the file, add, drop what is past 90 days, write it within its cap) in
//! ten writes of 100,000, as a long-running server would; after each write
//! the file must be within `usage::MAX_FILE_BYTES` (the bench fails if
//! not). It prints the time per use added, the time of each write, and the
//! file's size. Plain `main` (no harness): each figure is one pass.

#![allow(
    clippy::disallowed_methods,
    clippy::print_stdout,
    reason = "a benchmark reads back its file with std::fs and reports on stdout"
)]

use std::time::Instant;

use skillserve::usage::{self, History, Merged, SkillId, Surface, Use};

const USES: u64 = 1_000_000;
const WRITES: u64 = 10;
const SKILLS: u64 = 10_000;
const DAY: u64 = 86_400;

fn main() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(usage::FILE_NAME);
    let ids: Vec<SkillId> = (0..SKILLS)
        .map(|i| SkillId {
            source: "user".into(),
            root: "/home/someone/.claude/skills".into(),
            name: format!("skill-{i:05}-of-the-benchmark"),
        })
        .collect();
    let now = usage::now_secs();
    let per_write = USES / WRITES;
    let (mut adding, mut writing) = (0.0, Vec::new());
    let mut largest = 0;
    for write in 0..WRITES {
        let started = Instant::now();
        let mut pending = History::default();
        for n in write * per_write..(write + 1) * per_write {
            // Spread over skills, clients and 120 days (30 past the
            // retention), a file read in every fifth use.
            let id = &ids[(n * 7919 % SKILLS) as usize];
            let client = [
                "claude-code",
                "cursor-vscode",
                "codex-mcp-client",
                "goose",
                "Zed",
            ][(n % 5) as usize];
            let what = if n % 5 == 0 {
                Use::File(format!("references/{}.md", n % 7).into())
            } else {
                Use::Load(Surface::Tool)
            };
            let at = now - (n % 120) * DAY;
            pending.add(id, Some(client), &what, at);
        }
        adding += started.elapsed().as_secs_f64();
        let started = Instant::now();
        let merged = usage::merge_into_file(&path, &pending).expect("the file is written");
        writing.push(started.elapsed().as_secs_f64() * 1e3);
        assert_eq!(merged, Merged::Written);
        let size = std::fs::metadata(&path).expect("the file").len();
        largest = largest.max(size);
        assert!(
            size <= usage::MAX_FILE_BYTES as u64,
            "write {write}: {size} bytes, over the cap of {}",
            usage::MAX_FILE_BYTES
        );
    }
    let history = History::read(&path).expect("readable").expect("there");
    let days = history.days().count();
    let oldest = history
        .days()
        .next()
        .map(|d| d.to_string())
        .unwrap_or_default();
    writing.sort_by(f64::total_cmp);
    println!(
        "usage file under {USES} uses of {SKILLS} skills, 5 clients, 120 days, {WRITES} writes:"
    );
    println!(
        "  adding a use (History::add):     {:.0} ns each",
        adding / USES as f64 * 1e9
    );
    println!(
        "  a write (merge_into_file):       median {:.1} ms, max {:.1} ms",
        writing[writing.len() / 2],
        writing[writing.len() - 1]
    );
    println!(
        "  the file:                        at most {largest} bytes (cap {}), {days} days kept from {oldest}",
        usage::MAX_FILE_BYTES
    );
}
