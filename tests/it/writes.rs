//! Files skillserve replaces are never torn, and edits at once all land:
//! a writer (`examples/atomic_writer`, which replaces a file through
//! `disk::write_atomic` in a loop) killed at random moments leaves the old
//! file or the new one, whole; `skillserve disable` run many times at once
//! loses no name.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::{BIN, Fixture};

/// The writer, next to the binary under test (built by a plain `cargo
/// test`; `cargo test --test it` does not build examples).
fn atomic_writer() -> PathBuf {
    let path = Path::new(BIN)
        .parent()
        .expect("the binary has a folder")
        .join("examples/atomic_writer");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/atomic_writer.rs");
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    assert!(
        modified(&path) >= modified(&source),
        "{} is missing or older than its source; run `cargo build --examples` (a plain `cargo test` does)",
        path.display()
    );
    path
}

#[test]
fn a_writer_killed_midway_leaves_the_old_file_or_the_new_one_never_a_torn_one() {
    const SIZE: usize = 4 << 20;
    const KILLS: usize = 24;
    let writer = atomic_writer();
    let fixture = Fixture::empty();
    let file = fixture.path("state/sources.lock");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, vec![b'a'; SIZE]).unwrap();
    // Kill moments spread over 0–40 ms after the start (each write of 4 MiB
    // with its fsync takes a few ms): a xorshift seeded by the clock, shown
    // on failure.
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
        | 1;
    let mut state = seed;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let mut cut_short = 0;
    for kill in 0..KILLS {
        let mut child = std::process::Command::new(&writer)
            .arg(&file)
            .arg(SIZE.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(u64::from(next() % 40_000)));
        child.kill().unwrap();
        child.wait().unwrap();
        let bytes = std::fs::read(&file).unwrap();
        let whole = bytes.len() == SIZE
            && (bytes.iter().all(|&b| b == b'a') || bytes.iter().all(|&b| b == b'b'));
        assert!(
            whole,
            "kill {kill} (seed {seed}) left a torn file: {} bytes, starting {:?}",
            bytes.len(),
            String::from_utf8_lossy(&bytes[..bytes.len().min(16)])
        );
        // A kill midway leaves the writer's temporary file beside it.
        for entry in std::fs::read_dir(file.parent().unwrap()).unwrap() {
            let name = entry.unwrap().file_name();
            let name = name.to_string_lossy();
            if name != "sources.lock" {
                assert!(
                    name.starts_with(".sources.lock.") && name.ends_with(".tmp"),
                    "{name}"
                );
                cut_short += 1;
                std::fs::remove_file(file.with_file_name(&*name)).unwrap();
            }
        }
    }
    // Else no kill landed inside a write, and the test proved nothing.
    assert!(
        cut_short > 0,
        "no kill of {KILLS} (seed {seed}) interrupted a write"
    );
}

#[test]
fn disables_run_at_once_all_land_in_config_toml() {
    let fixture = Fixture::empty();
    let config = fixture.write(
        "home/.config/skillserve/config.toml",
        "# mine\ndisabled = [\"first\"]\n",
    );
    let names: Vec<String> = (0..8).map(|i| format!("skill-{i}")).collect();
    let children: Vec<_> = names
        .iter()
        .map(|name| {
            fixture
                .command(&["disable", name])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.starts_with("# mine\ndisabled = [\"first\", "),
        "{text}"
    );
    for name in &names {
        assert!(
            text.contains(&format!("\"{name}\"")),
            "{name} lost:\n{text}"
        );
    }
}
