//! In-process benchmarks of the hot paths: scanning + parsing a corpus, a
//! warm-cache rescan, name resolution, the search on a miss and rendering the
//! tool description.
//!
//! Run with `cargo bench --bench scan` (add `-- --sample-count 10` for a quick
//! pass). Corpora are generated once into `target/bench-corpus/<N>/` by
//! `benches/make_corpus.py` and reused while their marker file is intact.
//! See `benches/README.md` for what each figure means and the targets.

#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "a benchmark builds its corpora with std::fs and reports on stderr"
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};

use skillserve::answer;
use skillserve::config::{Config, DEFAULT_MAX_FILE_BYTES, MAX_QUERY_CHARS};
use skillserve::parse::Parsed;
use skillserve::profiles::View;
use skillserve::render;
use skillserve::resolve::{self, Resolution};
use skillserve::roots::{Layout, Root, SkillFile, Source};
use skillserve::scan::{Found, Scan};
use skillserve::search::SearchIndex;
use skillserve::snapshot::Snapshot;
use skillserve::snapshot::{self, Cache};

fn main() {
    // Generate (or find) the corpora before divan starts printing its table.
    for n in [PROJECT_SKILLS, 1_000, 10_000] {
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
    let victim = previous.skills()[n / 2].file();
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

/// A project of this many skills: about what a large repository keeps in
/// `.claude/skills`.
const PROJECT_SKILLS: usize = 300;

/// The same skills as a folder of the user's own (not scanned before being
/// served), for comparison with [`load_project_cold`].
#[divan::bench(args = [PROJECT_SKILLS], sample_count = 20)]
fn load_own_cold(bencher: Bencher, n: usize) {
    let config = config_for(project(n).join(".claude/skills"));
    bencher
        .counter(ItemsCount::new(n))
        .bench_local(|| snapshot::load(&config, &mut Cache::default(), None));
}

/// Start-up with a project of `n` skills: every skill's files read and
/// scanned before it is served (the security screening).
#[divan::bench(args = [PROJECT_SKILLS], sample_count = 20)]
fn load_project_cold(bencher: Bencher, n: usize) {
    let config = project_config(project(n));
    let loaded = snapshot::load(&config, &mut Cache::default(), None);
    assert_eq!(loaded.skills().len(), n);
    assert_eq!(loaded.skills_scanned, n, "every project skill is scanned");
    bencher
        .counter(ItemsCount::new(n))
        .bench_local(|| snapshot::load(&config, &mut Cache::default(), None));
}

/// A refresh of an unchanged project: reports come from the cache (one
/// `stat` per folder and per file), no file is read.
#[divan::bench(args = [PROJECT_SKILLS], sample_count = 20)]
fn load_project_warm(bencher: Bencher, n: usize) {
    let config = project_config(project(n));
    let mut cache = Cache::default();
    let first = snapshot::load(&config, &mut cache, None);
    let warm = snapshot::load(&config, &mut cache, Some(&first));
    assert_eq!(warm.files_parsed, 0);
    assert_eq!(warm.skills_scanned, 0, "an unchanged refresh reads no file");
    assert!(warm.same_skills(&first));
    bencher
        .counter(ItemsCount::new(n))
        .bench_local(|| snapshot::load(&config, &mut cache, Some(&first)));
}

/// A first call of a skill (nothing kept: a fresh `Contents` each time) of
/// the project of [`PROJECT_SKILLS`], as the user's own (`own`: served as
/// read) and as a project's (`project`: its bytes hashed and checked
/// against what the screening read).
#[divan::bench(args = ["own", "project"], sample_count = 50)]
fn first_call(bencher: Bencher, source: &str) {
    let dir = project(PROJECT_SKILLS);
    let config = match source {
        "own" => config_for(dir.join(".claude/skills")),
        _ => project_config(dir),
    };
    let snapshot = snapshot::load(&config, &mut Cache::default(), None);
    let view = View::unfiltered(Arc::new(snapshot), BUDGET);
    let name = view.snapshot().skills()[PROJECT_SKILLS / 2]
        .name
        .to_string();
    let files = skillserve::files::Files::new(DEFAULT_MAX_FILE_BYTES);
    let call = |contents: &skillserve::contents::Contents| {
        answer::lookup(&view, &name, contents, &files, render::Base::Path)
    };
    assert!(matches!(
        call(&skillserve::contents::Contents::new(DEFAULT_MAX_FILE_BYTES)),
        answer::Lookup::Answer(answer::Answer::Skill { .. })
    ));
    bencher
        .with_inputs(|| skillserve::contents::Contents::new(DEFAULT_MAX_FILE_BYTES))
        .bench_local_refs(|contents| call(contents));
}

/// The security scan alone (`check --security`'s), every file of
/// `fixtures/variants` and `fixtures/malicious`: payloads, controls and
/// honest skills, read whole and judged by every rule.
#[divan::bench(sample_count = 20)]
fn scan_fixtures(bencher: Bencher) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut dirs = Vec::new();
    for set in ["variants/attack", "variants/benign", "malicious"] {
        for entry in std::fs::read_dir(root.join(set)).unwrap() {
            let path = entry.unwrap().path();
            if path.join("SKILL.md").is_file() {
                dirs.push(path);
            }
        }
    }
    let bytes: u64 = dirs
        .iter()
        .map(|dir| {
            skillserve::security::scan_dir(skillserve::gate::Place {
                dir,
                file_name: "SKILL.md",
                fence: None,
                hidden: skillserve::gate::Hidden::Refused,
            })
            .bytes_scanned
        })
        .sum();
    bencher
        .counter(divan::counter::BytesCount::new(bytes))
        .bench_local(|| {
            for dir in &dirs {
                black_box(skillserve::security::scan_dir(skillserve::gate::Place {
                    dir,
                    file_name: "SKILL.md",
                    fence: None,
                    hidden: skillserve::gate::Hidden::Refused,
                }));
            }
        });
}

/// `target/bench-corpus/project-<n>/`: a repository (`.git`) with the corpus
/// of `n` skills copied into `.claude/skills` (a symlink out of the
/// repository would not be followed), made once.
fn project(n: usize) -> PathBuf {
    let base = target_dir()
        .join("bench-corpus")
        .join(format!("project-{n}"));
    let marker = base.join("complete");
    if std::fs::read_to_string(&marker).is_ok_and(|t| t.trim() == n.to_string()) {
        return base;
    }
    if base.exists() {
        std::fs::remove_dir_all(&base).expect("remove a stale project");
    }
    std::fs::create_dir_all(base.join(".git")).unwrap();
    copy_tree(&corpus(n), &base.join(".claude/skills"));
    std::fs::write(&marker, format!("{n}\n")).unwrap();
    base
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Serves only the project in `dir`.
fn project_config(dir: PathBuf) -> Config {
    Config {
        custom_dirs: Vec::new(),
        project_dir: Some(dir),
        ..config_for(PathBuf::new())
    }
}

// ---------------------------------------------------------------- resolution

mod resolve_10k {
    use super::*;

    const N: usize = 10_000;

    /// A name from the middle of the display order.
    fn existing(view: &View) -> String {
        let skills = view.snapshot().skills();
        skills[skills.len() / 2].name.to_string()
    }

    #[divan::bench]
    fn exact(bencher: Bencher) {
        let snapshot = view(N);
        let name = existing(snapshot);
        assert!(matches!(
            resolve::resolve(snapshot, &name),
            Resolution::Found(_)
        ));
        bencher.bench(|| resolve::resolve(snapshot, black_box(&name)));
    }

    #[divan::bench]
    fn other_case(bencher: Bencher) {
        let snapshot = view(N);
        let name = other_case_of(&existing(snapshot));
        assert!(matches!(
            resolve::resolve(snapshot, &name),
            Resolution::Found(_)
        ));
        bencher.bench(|| resolve::resolve(snapshot, black_box(&name)));
    }

    #[divan::bench]
    fn miss(bencher: Bencher) {
        let snapshot = view(N);
        let name = "no-such-skill-anywhere";
        assert!(matches!(
            resolve::resolve(snapshot, name),
            Resolution::NotFound
        ));
        bencher.bench(|| resolve::resolve(snapshot, black_box(name)));
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

// ----------------------------------------------------------------- profiles

/// What client profiles add to a call (behaviour.md §17.5): finding the
/// client's key from its name, once per request, and resolving a name in a
/// view that filters (one bit per skill) against one that does not.
mod profiles_10k {
    use super::*;
    use skillserve::config::{Env, Flags, file, settings};
    use skillserve::profiles::{Key, Profiles};

    const N: usize = 10_000;

    /// Three profiles; the first matches `bench-client` and disables one
    /// skill, so its view filters.
    fn profiles() -> &'static (Profiles, Key) {
        static PROFILES: OnceLock<(Profiles, Key)> = OnceLock::new();
        PROFILES.get_or_init(|| {
            let hidden = &snapshot(N).skills()[0].name;
            let text = format!(
                "[clients.\"bench-client\"]\ndisabled = [\"{hidden}\"]\n\
                 [clients.\"cursor*\"]\nexclude = [\"a*\"]\n[clients.codex]\ninclude = [\"*-*\"]\n"
            );
            let env = Env {
                cwd: std::env::temp_dir(),
                ..Env::default()
            };
            let parsed = file::parse(&text, Path::new("/bench/config.toml"), &env).unwrap();
            let flags = Flags {
                skills_dirs: vec![corpus(N).to_string_lossy().into_owned()],
                no_project: true,
                no_user: true,
                no_plugins: true,
                ..Flags::default()
            };
            let settings = settings::resolve(&flags, &env, None, Some(&parsed)).unwrap();
            let profiles = Profiles::new(&settings);
            let key = profiles.key(Some("bench-client"));
            (profiles, key)
        })
    }

    /// The filtered view of `bench-client`, computed once.
    fn filtered() -> &'static View {
        static VIEW: OnceLock<View> = OnceLock::new();
        VIEW.get_or_init(|| {
            let (profiles, key) = profiles();
            let snapshot = Arc::new(snapshot::load(
                &config_for(corpus(N)),
                &mut Cache::default(),
                None,
            ));
            profiles.view(&snapshot, *key)
        })
    }

    #[divan::bench(args = ["bench-client", "claude-code", "Visual Studio Code - Insiders", "unknown-client"])]
    fn key(bencher: Bencher, client: &str) {
        let (profiles, _) = profiles();
        bencher.bench(|| profiles.key(black_box(Some(client))));
    }

    #[divan::bench]
    fn resolve_unfiltered(bencher: Bencher) {
        let view = view(N);
        let name = view.snapshot().skills()[N / 2].name.clone();
        bencher.bench(|| resolve::resolve(view, black_box(&name)));
    }

    #[divan::bench]
    fn resolve_filtered(bencher: Bencher) {
        let view = filtered();
        let name = view.snapshot().skills()[N / 2].name.clone();
        assert!(matches!(
            resolve::resolve(view, &name),
            Resolution::Found(_)
        ));
        bencher.bench(|| resolve::resolve(view, black_box(&name)));
    }

    /// Computing a view: once per snapshot and client, on a blocking thread.
    #[divan::bench(sample_count = 20)]
    fn compute_view(bencher: Bencher) {
        let (profiles, key) = profiles();
        let snapshot = Arc::new(snapshot::load(
            &config_for(corpus(N)),
            &mut Cache::default(),
            None,
        ));
        bencher.bench(|| profiles.view(&snapshot, black_box(*key)));
    }
}

// ------------------------------------------------------------------- search

/// The answer to a miss (behaviour.md §14): the search and its text, as a
/// call's blocking thread computes it. At 100,000 skills the snapshot is the
/// 10,000-skill corpus ten times over, in memory (see [`snapshot_100k`]).
/// Queries:
///
/// - `typo`: a served name with two letters swapped;
/// - `words`: four words of a description;
/// - `common`: the corpus's most common description words, 512 characters
///   of them (every posting budget in use);
/// - `misspelt`: the same words each with its last letter changed, so that
///   none matches exactly and each is looked up one edit away.
mod miss {
    use super::*;

    const QUERIES: [&str; 4] = ["typo", "words", "common", "misspelt"];

    fn bench_miss(bencher: Bencher, snapshot: &View, kind: &str) {
        let query = query(snapshot.snapshot(), kind);
        assert!(query.chars().count() <= MAX_QUERY_CHARS);
        let answer = answer::not_found(snapshot, &query, None);
        assert!(answer.text().starts_with("Skill '"));
        bencher.bench(|| answer::not_found(snapshot, black_box(&query), None));
    }

    #[divan::bench(args = QUERIES)]
    fn at_1000(bencher: Bencher, kind: &str) {
        bench_miss(bencher, view(1_000), kind);
    }

    #[divan::bench(args = QUERIES)]
    fn at_10000(bencher: Bencher, kind: &str) {
        bench_miss(bencher, view(10_000), kind);
    }

    #[divan::bench(args = QUERIES, sample_count = 30)]
    fn at_100000(bencher: Bencher, kind: &str) {
        bench_miss(bencher, snapshot_100k(), kind);
    }

    fn query(snapshot: &Snapshot, kind: &str) -> String {
        let skills = snapshot.skills();
        match kind {
            "typo" => {
                let mut name: Vec<char> = skills[skills.len() / 2].name.chars().collect();
                name.swap(1, 2);
                name.into_iter().collect()
            }
            "words" => skills[skills.len() / 3]
                .description()
                .split_whitespace()
                .skip(5)
                .take(4)
                .collect::<Vec<_>>()
                .join(" "),
            "common" => fill(common_words(snapshot).iter().map(String::as_str)),
            "misspelt" => {
                let misspelt = common_words(snapshot).into_iter().map(|mut word| {
                    word.pop();
                    word.push('q');
                    word
                });
                fill(misspelt.collect::<Vec<_>>().iter().map(String::as_str))
            }
            other => unreachable!("no query {other}"),
        }
    }

    /// The 64 most common description words of five letters or more.
    fn common_words(snapshot: &Snapshot) -> Vec<String> {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for skill in snapshot.skills() {
            for word in skill.description().split(|c: char| !c.is_alphanumeric()) {
                if word.len() >= 5 && word.is_ascii() {
                    *counts.entry(word.to_ascii_lowercase()).or_default() += 1;
                }
            }
        }
        let mut common: Vec<(usize, String)> = counts.into_iter().map(|(w, n)| (n, w)).collect();
        common.sort_by(|a, b| b.cmp(a));
        common.into_iter().take(64).map(|(_, w)| w).collect()
    }

    /// `words` joined by spaces, as many as fit in the longest name allowed.
    fn fill<'a>(words: impl Iterator<Item = &'a str>) -> String {
        let mut out = String::new();
        for word in words {
            if out.len() + 1 + word.len() > MAX_QUERY_CHARS {
                break;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
        }
        out
    }
}

/// Building the search index of a snapshot (part of every start-up and of
/// every rescan that changed a skill).
#[divan::bench(args = [1_000, 10_000])]
fn search_index(bencher: Bencher, n: usize) {
    let snapshot = snapshot(n);
    bencher
        .counter(ItemsCount::new(n))
        .bench(|| SearchIndex::build(black_box(snapshot.candidates())));
}

// ----------------------------------------------------------------- rendering

/// The `skill` tool description within the default 8,000-character budget.
#[divan::bench(args = [1_000, 10_000])]
fn tool_description(bencher: Bencher, n: usize) {
    let snapshot = snapshot(n);
    bencher.bench(|| render::tool_description(black_box(snapshot.skills()).iter(), BUDGET));
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
        folders: Default::default(),
    }
}

/// A snapshot of the corpus of `n` skills, loaded once per process.
fn snapshot(n: usize) -> &'static Snapshot {
    view(n).snapshot()
}

/// The view of every skill of the corpus of `n` skills (a client no
/// setting concerns), loaded once per process.
fn view(n: usize) -> &'static View {
    static VIEWS: Mutex<Option<HashMap<usize, &'static View>>> = Mutex::new(None);
    let mut views = VIEWS.lock().unwrap();
    views
        .get_or_insert_with(HashMap::new)
        .entry(n)
        .or_insert_with(|| {
            let snapshot = snapshot::load(&config_for(corpus(n)), &mut Cache::default(), None);
            assert_eq!(snapshot.skills().len(), n);
            Box::leak(Box::new(View::unfiltered(Arc::new(snapshot), BUDGET)))
        })
}

/// 100,000 skills in memory: the 10,000 of the corpus ten times, each copy
/// with its own names (`-copy1` … appended) and the same descriptions, so
/// that every word's postings are ten times as long. Nothing on disk: 100,000
/// generated skills would be 820 MB.
fn snapshot_100k() -> &'static View {
    static SNAPSHOT: OnceLock<View> = OnceLock::new();
    SNAPSHOT.get_or_init(|| {
        let base = snapshot(10_000);
        let root = Root::new(corpus(10_000), Source::Custom, Layout::Folders);
        let skills = (0..10).flat_map(|copy| {
            base.skills().iter().map(move |skill| {
                let name = format!("{}-copy{copy}", skill.name);
                let dir = skill.dir.with_file_name(&name);
                Found {
                    dir: dir.into(),
                    file_name: SkillFile::Upper,
                    root: 0,
                    parsed: Arc::new({
                        let mut parsed = Parsed::clone(&skill.parsed);
                        parsed.name = name.into();
                        parsed
                    }),
                    lone: None,
                }
            })
        });
        let scan = Scan {
            skills: skills.collect(),
            ..Scan::default()
        };
        let snapshot = Snapshot::build(vec![root], scan, Vec::new(), None);
        assert_eq!(snapshot.skills().len(), 100_000);
        View::unfiltered(Arc::new(snapshot), BUDGET)
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
