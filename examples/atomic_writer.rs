//! The writer that `tests/it/writes.rs` kills midway: it replaces FILE with
//! `disk::write_atomic`, over and over until it is killed, with one of two
//! contents in turn (SIZE bytes of `a`, then of `b`), so that whatever the
//! moment of the kill, FILE must hold one of the two whole.
//!
//!     cargo build --example atomic_writer
//!     target/debug/examples/atomic_writer FILE SIZE

#![allow(
    clippy::print_stderr,
    reason = "a helper program says how it is used on stderr"
)]

use skillserve::disk::{self, NewFile};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(path), Some(size)) = (args.next(), args.next()) else {
        eprintln!("usage: atomic_writer FILE SIZE");
        std::process::exit(2);
    };
    let size: usize = size
        .to_str()
        .and_then(|s| s.parse().ok())
        .expect("SIZE is a number of bytes");
    let contents = [vec![b'a'; size], vec![b'b'; size]];
    for round in 0.. {
        disk::write_atomic(path.as_ref(), &contents[round % 2], NewFile::Shared)?;
    }
    Ok(())
}
