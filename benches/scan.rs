//! In-process benchmarks of the hot paths: scanning + parsing a corpus, a
//! warm-cache rescan, name resolution and rendering the tool description.
//!
//! Run with `cargo bench --bench scan` (add `-- --sample-count 10` for a quick
//! pass). Corpora are generated once into `target/bench-corpus/<N>/` by
//! `benches/make_corpus.py` and reused while their marker file is intact.
//! See `benches/README.md` for what each figure means and the targets.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};

use skillserve::config::{Config, DEFAULT_MAX_FILE_BYTES};
use skillserve::render;
use skillserve::resolve::{self, Resolution};
use skillserve::scan::Cache;
use skillserve::snapshot;
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
    let skills = snapshot::load(&config, &mut Cache::default(), None)
        .skills()
        .len();
    assert_eq!(skills, n, "the corpus at {n} should yield {n} skills");
    bencher
        .counter(ItemsCount::new(n))
        .bench_local(|| snapshot::load(&config, &mut Cache::default(), None));
}

/// Rescanning an unchanged tree with a warm cache (the periodic refresh): the
/// walk and one `stat` per SKILL.md, no file opened, and the previous
/// snapshot's index shared rather than rebuilt.
#[divan::bench(args = [10_000], sample_count = 20)]
fn load_warm_rescan(bencher: Bencher, n: usize) {
    let config = config_for(corpus(n));
    let mut cache = Cache::default();
    let first = snapshot::load(&config, &mut cache, None);
    assert_eq!(first.files_parsed, n, "the cold load parses every file");
    let warm = snapshot::load(&config, &mut cache, Some(&first));
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
        .bench_local(|| snapshot::load(&config, &mut cache, Some(&first)));
}

/// A rescan after one SKILL.md changed: one file parsed, the index rebuilt.
#[divan::bench(args = [10_000], sample_count = 20)]
fn load_after_one_change(bencher: Bencher, n: usize) {
    let dir = corpus(n);
    let config = config_for(dir.clone());
    let mut cache = Cache::default();
    let mut previous = snapshot::load(&config, &mut cache, None);
    let victim = previous.skills()[n / 2].file.clone();
    let file = std::fs::File::options().write(true).open(&victim).unwrap();
    let mut tick = 0u64;
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        // A new modification time is a change as far as the cache can tell.
        tick += 1;
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000 + tick);
        file.set_modified(when).unwrap();
        let next = snapshot::load(&config, &mut cache, Some(&previous));
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
            let snapshot = snapshot::load(&config_for(corpus(n)), &mut Cache::default(), None);
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

const MAKE_CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/make_corpus.py");

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
    assert!(
        run_make_corpus(&skills, n),
        "bench: {MAKE_CORPUS} failed; it needs python3"
    );
    std::fs::write(&marker, format!("{n} make_corpus.py\n")).expect("write the corpus marker");
    eprintln!(
        "bench: generated {n} skills with make_corpus.py in {:.1} s at {}",
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
