//! In-process benchmarks of the hot paths: scanning + parsing a corpus, a
//! warm-cache rescan, name resolution and rendering the tool description.
//!
//! Run with `cargo bench --bench scan` (add `-- --sample-count 10` for a quick
//! pass). Corpora are generated once into `target/bench-corpus/<N>/` by
//! `../shared/bench/make_corpus.py` when it exists, else by the small generator
//! at the bottom of this file, and reused while their marker file is intact.
//! See `benches/README.md` for what each figure means and the targets.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};

use skillserve::config::{Config, DEFAULT_MAX_FILE_BYTES};
use skillserve::registry;
use skillserve::render;
use skillserve::resolve::{self, Resolution};
use skillserve::scan::Cache;
use skillserve::snapshot::Snapshot;

fn main() {
    // Generate (or find) the corpora before divan starts printing its table.
    for n in [1_000, 10_000] {
        corpus(n);
    }
    divan::main();
}

/// The description budget the server uses by default.
const BUDGET: usize = skillserve::config::DEFAULT_DESCRIPTION_BUDGET;

// ------------------------------------------------------------------ scanning

/// Scanning and parsing every SKILL.md with a cold cache (the start-up scan).
/// The OS page cache is warm after the first iteration, so this measures the
/// walk, `stat`, reading and YAML parsing, not the disk.
#[divan::bench(args = [1_000, 10_000], sample_count = 20)]
fn load_cold(bencher: Bencher, n: usize) {
    let config = config_for(corpus(n));
    let skills = registry::load(&config, &mut Cache::default(), None)
        .skills()
        .len();
    assert_eq!(skills, n, "the corpus at {n} should yield {n} skills");
    bencher
        .counter(ItemsCount::new(n))
        .bench_local(|| registry::load(&config, &mut Cache::default(), None));
}

/// Rescanning an unchanged tree with a warm cache (the periodic refresh): the
/// walk and one `stat` per SKILL.md, no file opened, and the previous
/// snapshot's index shared rather than rebuilt.
#[divan::bench(args = [10_000], sample_count = 20)]
fn load_warm_rescan(bencher: Bencher, n: usize) {
    let config = config_for(corpus(n));
    let mut cache = Cache::default();
    let first = registry::load(&config, &mut cache, None);
    assert_eq!(first.files_parsed, n, "the cold load parses every file");
    let warm = registry::load(&config, &mut cache, Some(&first));
    eprintln!(
        "load_warm_rescan({n}): files_parsed after warm-up = {} (skills = {}, index shared = {})",
        warm.files_parsed,
        warm.skills().len(),
        warm.same_skills(&first)
    );
    assert_eq!(
        warm.files_parsed, 0,
        "a rescan of an unchanged tree must not open any SKILL.md"
    );
    assert!(
        warm.same_skills(&first),
        "an unchanged tree shares its index"
    );
    bencher
        .counter(ItemsCount::new(n))
        .bench_local(|| registry::load(&config, &mut cache, Some(&first)));
}

/// A rescan after one SKILL.md changed: one file parsed, the index rebuilt.
#[divan::bench(args = [10_000], sample_count = 20)]
fn load_after_one_change(bencher: Bencher, n: usize) {
    let dir = corpus(n);
    let config = config_for(dir.clone());
    let mut cache = Cache::default();
    let mut previous = registry::load(&config, &mut cache, None);
    let victim = previous.skills()[n / 2].file.clone();
    let file = std::fs::File::options().write(true).open(&victim).unwrap();
    let mut tick = 0u64;
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        // A new modification time is a change as far as the cache can tell.
        tick += 1;
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000 + tick);
        file.set_modified(when).unwrap();
        let next = registry::load(&config, &mut cache, Some(&previous));
        assert_eq!(next.files_parsed, 1);
        previous = next;
    });
}

// ---------------------------------------------------------------- resolution

mod resolve_10k {
    use super::*;

    const N: usize = 10_000;

    /// A name from the middle of the display order.
    fn existing(snapshot: &Snapshot) -> String {
        snapshot.skills()[snapshot.skills().len() / 2].name.clone()
    }

    #[divan::bench]
    fn exact(bencher: Bencher) {
        let snapshot = snapshot(N);
        let name = existing(snapshot);
        assert!(matches!(
            resolve::resolve(snapshot, &name),
            Resolution::Found(_)
        ));
        bencher.bench(|| resolve::resolve(snapshot, black_box(&name)));
    }

    #[divan::bench]
    fn other_case(bencher: Bencher) {
        let snapshot = snapshot(N);
        let name = other_case_of(&existing(snapshot));
        assert!(matches!(
            resolve::resolve(snapshot, &name),
            Resolution::Found(_)
        ));
        bencher.bench(|| resolve::resolve(snapshot, black_box(&name)));
    }

    #[divan::bench]
    fn miss(bencher: Bencher) {
        let snapshot = snapshot(N);
        let name = "no-such-skill-anywhere";
        assert!(matches!(
            resolve::resolve(snapshot, name),
            Resolution::NotFound
        ));
        bencher.bench(|| resolve::resolve(snapshot, black_box(name)));
    }

    /// The "did you mean" list of a miss: compares against every skill.
    #[divan::bench(sample_count = 30)]
    fn suggest(bencher: Bencher) {
        let snapshot = snapshot(N);
        bencher
            .counter(ItemsCount::new(N))
            .bench(|| resolve::suggest(snapshot, black_box("typo-name"), 5));
    }

    /// Upper-cases every other letter, so the lookup must fold case.
    fn other_case_of(name: &str) -> String {
        name.chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect()
    }
}

// ----------------------------------------------------------------- rendering

/// The `skill` tool description within the default 8,000-character budget.
#[divan::bench(args = [1_000, 10_000])]
fn tool_description(bencher: Bencher, n: usize) {
    let snapshot = snapshot(n);
    bencher.bench(|| render::tool_description(black_box(snapshot.skills()), BUDGET));
}

// ------------------------------------------------------------------ fixtures

/// A configuration that serves `corpus` and nothing else.
fn config_for(corpus: PathBuf) -> Config {
    Config {
        custom_dirs: vec![corpus],
        project_dir: None,
        home: None,
        user: false,
        claude_config_dir: None,
        codex_home: None,
        plugins: false,
        max_file_bytes: DEFAULT_MAX_FILE_BYTES,
    }
}

/// A snapshot of the corpus of `n` skills, loaded once per process.
fn snapshot(n: usize) -> &'static Snapshot {
    static SNAPSHOTS: Mutex<Option<HashMap<usize, &'static Snapshot>>> = Mutex::new(None);
    let mut snapshots = SNAPSHOTS.lock().unwrap();
    snapshots
        .get_or_insert_with(HashMap::new)
        .entry(n)
        .or_insert_with(|| {
            let snapshot = registry::load(&config_for(corpus(n)), &mut Cache::default(), None);
            assert_eq!(snapshot.skills().len(), n);
            Box::leak(Box::new(snapshot))
        })
}

/// The corpus of `n` skills, generated on first use and reused afterwards.
fn corpus(n: usize) -> PathBuf {
    static CORPORA: OnceLock<Mutex<HashMap<usize, PathBuf>>> = OnceLock::new();
    let mut corpora = CORPORA.get_or_init(Default::default).lock().unwrap();
    corpora.entry(n).or_insert_with(|| prepare(n)).clone()
}

const MAKE_CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/bench/make_corpus.py"
);

/// `target/bench-corpus/<n>/skills`, (re)generated unless its marker says it
/// holds `n` skills already.
fn prepare(n: usize) -> PathBuf {
    let base = target_dir().join("bench-corpus").join(n.to_string());
    let skills = base.join("skills");
    let marker = base.join("complete");
    if let Ok(text) = std::fs::read_to_string(&marker)
        && text.split_whitespace().next() == Some(&n.to_string())
        && skills.is_dir()
    {
        return skills;
    }
    let _ = std::fs::remove_file(&marker);
    if skills.exists() {
        std::fs::remove_dir_all(&skills).expect("remove a stale corpus");
    }
    std::fs::create_dir_all(&skills).expect("create the corpus directory");
    let started = std::time::Instant::now();
    let generator = if Path::new(MAKE_CORPUS).is_file() && run_make_corpus(&skills, n) {
        "make_corpus.py"
    } else {
        eprintln!(
            "bench: {MAKE_CORPUS} is missing or failed; using the built-in generator for {n} skills"
        );
        if skills.exists() {
            std::fs::remove_dir_all(&skills).expect("remove a partial corpus");
        }
        fallback::generate(&skills, n).expect("write the fallback corpus");
        "builtin"
    };
    std::fs::write(&marker, format!("{n} {generator}\n")).expect("write the corpus marker");
    eprintln!(
        "bench: generated {n} skills with {generator} in {:.1} s at {}",
        started.elapsed().as_secs_f64(),
        skills.display()
    );
    skills
}

fn run_make_corpus(out: &Path, n: usize) -> bool {
    let status = Command::new("python3")
        .arg(MAKE_CORPUS)
        .arg(out)
        .arg(n.to_string())
        .args(["--seed", "1", "--force"])
        .status();
    match status {
        Ok(status) if status.success() => true,
        Ok(status) => {
            eprintln!("bench: make_corpus.py exited with {status}");
            false
        }
        Err(err) => {
            eprintln!("bench: cannot run python3: {err}");
            false
        }
    }
}

/// `$CARGO_TARGET_DIR` when set (relative to the package), else `target/`.
fn target_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => manifest.join(dir),
        _ => manifest.join("target"),
    }
}

/// A dependency-free stand-in for make_corpus.py: `n` skills named
/// `<topic>-<role>-<i>` with a one-line description and a body of about 6 KB
/// (3–12 KB) of headings, paragraphs, lists and code blocks. Deterministic.
mod fallback {
    use super::*;

    const TOPICS: &str = "pdf excel csv docker kubernetes git api sql react rust python deploy
        review auth cache email report chart design security metrics backup search translation
        invoice schema";
    const ROLES: &str = "builder helper generator extractor converter analyzer validator writer
        reviewer planner formatter scanner migrator auditor";
    const WORDS: &str = "the a of to and for with in on data file output input config option
        step result error value key table row request response user project service module test
        rule format template schema cache index query report summary section page version release
        branch commit build job task event log latency budget timeout retry queue worker memory
        network";

    /// A xorshift64* generator (small, fast, the same everywhere) with the
    /// word lists it draws from.
    struct Gen {
        state: u64,
        topics: Vec<&'static str>,
        roles: Vec<&'static str>,
        words: Vec<&'static str>,
    }

    impl Gen {
        fn new() -> Gen {
            Gen {
                state: 0x9E37_79B9_7F4A_7C15,
                topics: TOPICS.split_whitespace().collect(),
                roles: ROLES.split_whitespace().collect(),
                words: WORDS.split_whitespace().collect(),
            }
        }

        fn next(&mut self) -> u64 {
            self.state ^= self.state >> 12;
            self.state ^= self.state << 25;
            self.state ^= self.state >> 27;
            self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn topic(&mut self) -> &'static str {
            let i = self.below(self.topics.len());
            self.topics[i]
        }

        fn role(&mut self) -> &'static str {
            let i = self.below(self.roles.len());
            self.roles[i]
        }

        fn word(&mut self) -> &'static str {
            let i = self.below(self.words.len());
            self.words[i]
        }

        /// Appends one capitalised sentence of 6–15 words.
        fn sentence(&mut self, out: &mut String) {
            let words = 6 + self.below(10);
            let start = out.len();
            for i in 0..words {
                if i > 0 {
                    out.push(' ');
                }
                let word = self.word();
                out.push_str(word);
            }
            out[start..=start].make_ascii_uppercase();
            out.push('.');
        }
    }

    pub fn generate(dir: &Path, n: usize) -> std::io::Result<()> {
        let mut g = Gen::new();
        for i in 0..n {
            let name = format!("{}-{}-{i}", g.topic(), g.role());
            let skill = dir.join(&name);
            std::fs::create_dir_all(&skill)?;
            std::fs::write(skill.join("SKILL.md"), skill_md(&mut g, &name))?;
        }
        Ok(())
    }

    fn skill_md(g: &mut Gen, name: &str) -> String {
        let mut description = format!(
            "Use this skill to work with {} {} output.",
            g.topic(),
            g.word()
        );
        let target = 50 + g.below(300);
        while description.len() < target {
            description.push(' ');
            g.sentence(&mut description);
        }
        let body_target = 3_000 + g.below(9_000);
        let mut out = String::with_capacity(body_target + 600);
        let _ = write!(
            out,
            "---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n"
        );
        let mut section = 0;
        while out.len() < body_target {
            match g.below(5) {
                0 => {
                    section += 1;
                    let _ = writeln!(out, "## Section {section}\n");
                }
                1 => {
                    for _ in 0..3 + g.below(4) {
                        out.push_str("- ");
                        g.sentence(&mut out);
                        out.push('\n');
                    }
                    out.push('\n');
                }
                2 => {
                    out.push_str("```bash\nset -euo pipefail\n");
                    for _ in 0..2 + g.below(6) {
                        out.push_str("# ");
                        g.sentence(&mut out);
                        out.push('\n');
                    }
                    out.push_str("```\n\n");
                }
                _ => {
                    for _ in 0..2 + g.below(5) {
                        g.sentence(&mut out);
                        out.push(' ');
                    }
                    out.push_str("\n\n");
                }
            }
        }
        out
    }
}
