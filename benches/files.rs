//! The files of a skill (`src/files.rs`, `src/listing.rs`, `src/gate.rs`):
//! listing, the listing cache's check, digests cold and cached, opening a
//! path through the gate. On two skills written into
//! `target/bench-corpus/files/` on every run: `s30` (a SKILL.md and 29 files
//! of 1–40 KB in three folders, about 400 KB, like the larger skills of
//! `anthropics/skills`) and `s600` (600 files of 1 KB in 20 folders: past
//! the 512-file bound).
//!
//! Run with `cargo bench --bench files`; see `benches/README.md`.

#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark builds its corpora with std::fs"
)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};

use skillserve::files::Files;
use skillserve::gate::{Gate, Place};
use skillserve::listing;

fn main() {
    skills();
    divan::main();
}

/// (folders, files per folder, bytes per file) of each skill.
const SHAPES: [(&str, usize, usize, usize); 2] = [("s30", 3, 10, 0), ("s600", 20, 30, 1024)];

/// The skill folders, written once per run.
fn skills() -> &'static [PathBuf; 2] {
    static SKILLS: OnceLock<[PathBuf; 2]> = OnceLock::new();
    SKILLS.get_or_init(|| {
        let base = target_dir().join("bench-corpus").join("files");
        if base.exists() {
            std::fs::remove_dir_all(&base).expect("remove the old skills");
        }
        SHAPES.map(|(name, folders, per_folder, size)| {
            let dir = base.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("SKILL.md"), "---\ndescription: d\n---\nbody\n").unwrap();
            for folder in 0..folders {
                let folder_dir = dir.join(format!("folder{folder:02}"));
                std::fs::create_dir(&folder_dir).unwrap();
                for file in 0..per_folder {
                    // s30: 1 KB to 40 KB, varied; s600: 1 KB each.
                    let len = if size == 0 {
                        1024 * (1 + (folder * per_folder + file) * 39 / 29)
                    } else {
                        size
                    };
                    let len = len.min(40 * 1024);
                    std::fs::write(
                        folder_dir.join(format!("file{file:02}.md")),
                        "x".repeat(len),
                    )
                    .unwrap();
                }
            }
            dir
        })
    })
}

fn skill(name: &str) -> &'static Path {
    let index = SHAPES.iter().position(|s| s.0 == name).unwrap();
    &skills()[index]
}

/// The folder of the skill `name` as the snapshot shares it (the cache's
/// key).
fn shared(name: &str) -> &'static Arc<Path> {
    static SHARED: OnceLock<[Arc<Path>; 2]> = OnceLock::new();
    let shared = SHARED.get_or_init(|| skills().clone().map(Arc::from));
    let index = SHAPES.iter().position(|s| s.0 == name).unwrap();
    &shared[index]
}

/// Where the skill `name` is, for the gate.
fn place(name: &str) -> Place<'static> {
    Place {
        dir: shared(name),
        file_name: "SKILL.md",
        fence: None,
        hidden: skillserve::gate::Hidden::Refused,
    }
}

/// The skill's files, listed without the cache.
fn list(place: Place) -> listing::Listing {
    listing::list(&Gate::open(place).unwrap())
}

/// `$CARGO_TARGET_DIR` when set (relative to the package), else `target/`.
fn target_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => manifest.join(dir),
        _ => manifest.join("target"),
    }
}

const NAMES: [&str; 2] = ["s30", "s600"];

/// The bounded walk, no cache: what a first call costs.
#[divan::bench(args = NAMES)]
fn walk(bencher: Bencher, name: &str) {
    let place = place(name);
    let files = list(place).files.len();
    bencher
        .counter(ItemsCount::new(files))
        .bench(|| list(black_box(place)));
}

/// A cached listing: one `stat` per folder read and per file listed.
#[divan::bench(args = NAMES)]
fn listing_cached(bencher: Bencher, name: &str) {
    let (place, dir) = (place(name), shared(name));
    let files = Files::new(1 << 20);
    let first = files.listing(place, dir).unwrap();
    assert!(Arc::ptr_eq(&first, &files.listing(place, dir).unwrap()));
    bencher
        .counter(ItemsCount::new(first.files.len()))
        .bench(|| files.listing(black_box(place), dir).unwrap());
}

/// What a check of the folders alone would cost (not what the cache does:
/// it would miss a file written in place).
#[divan::bench(args = NAMES)]
fn stat_folders_only(bencher: Bencher, name: &str) {
    let dir = skill(name);
    let mut folders: Vec<PathBuf> = vec![dir.to_path_buf()];
    for entry in list(place(name)).files {
        if let Some((folder, _)) = entry.path.rsplit_once('/') {
            let folder = dir.join(folder);
            if !folders.contains(&folder) {
                folders.push(folder);
            }
        }
    }
    bencher.counter(ItemsCount::new(folders.len())).bench(|| {
        for folder in &folders {
            black_box(std::fs::metadata(folder).unwrap());
        }
    });
}

/// Every listed file's digest with an empty cache: read and hash them all.
#[divan::bench(args = NAMES, sample_count = 20)]
fn digests_cold(bencher: Bencher, name: &str) {
    let (place, dir) = (place(name), shared(name));
    let listing = Arc::new(list(place));
    bencher
        .counter(ItemsCount::new(listing.files.len()))
        .with_inputs(|| Files::new(1 << 20))
        .bench_local_refs(|files| black_box(files.digests(place, dir, &listing).unwrap()));
}

/// Every listed file's digest kept with the cached listing: a `stat` of
/// each.
#[divan::bench(args = NAMES)]
fn digests_cached(bencher: Bencher, name: &str) {
    let (place, dir) = (place(name), shared(name));
    let files = Files::new(1 << 20);
    let listing = files.listing(place, dir).unwrap();
    files.digests(place, dir, &listing).unwrap();
    bencher
        .counter(ItemsCount::new(listing.files.len()))
        .bench(|| black_box(files.digests(place, dir, &listing).unwrap()));
}

/// Opening one path a client asked for through the gate: the skill folder,
/// then the file beneath it (`openat2` on Linux).
#[divan::bench]
fn open_through_the_gate(bencher: Bencher) {
    let place = place("s30");
    bencher.bench(|| {
        Gate::open(black_box(place))
            .unwrap()
            .resolve(black_box("folder01/file05.md"))
            .unwrap()
    });
}
