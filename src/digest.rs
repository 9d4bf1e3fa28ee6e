//! SHA-256 digests as skillserve writes them: `sha256:` and lowercase hex.
//! A file's digest is what the skills extension lists for it; a skill's
//! digest covers all of its files, so that any change to any file changes it.

use std::io::{self, Read};

use sha2::{Digest, Sha256};

/// The prefix of every digest skillserve writes.
pub const PREFIX: &str = "sha256:";

/// A SHA-256 sum.
pub type Sum = [u8; 32];

/// Whether `text` is a digest as skillserve writes them: `sha256:` and 64
/// lowercase hex digits.
pub fn is_digest(text: &str) -> bool {
    text.strip_prefix(PREFIX)
        .is_some_and(|hex| hex.len() == 64 && is_hex(hex))
}

/// Whether `text` is lowercase hex digits only.
pub fn is_hex(text: &str) -> bool {
    text.bytes()
        .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// The hex part of a `sha256:` digest (the digest itself if it has no prefix).
pub fn hex_of(digest: &str) -> &str {
    digest.strip_prefix(PREFIX).unwrap_or(digest)
}

/// The SHA-256 of what `reader` yields, and how many bytes that was.
pub fn sum_of(reader: &mut impl Read) -> io::Result<(Sum, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((hasher.finalize().into(), size))
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    push_hex(&mut out, bytes);
    out
}

/// `sha256:` and the lowercase hex of `sum`.
pub fn text(sum: &Sum) -> String {
    let mut out = String::with_capacity(PREFIX.len() + 64);
    out.push_str(PREFIX);
    push_hex(&mut out, sum);
    out
}

/// By hand: `write!` per byte was 4% of a cached `skills/list` page.
fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
}

/// The digest of a whole skill: the SHA-256 of one line `path NUL hex LF`
/// per file (its `/`-separated path relative to the skill folder, then the
/// lowercase hex of the file's SHA-256), lines sorted by path bytes. Every
/// file of the skill counts, `SKILL.md` included, so renaming, adding,
/// removing or editing any file changes it.
pub fn skill<'a>(files: impl IntoIterator<Item = (&'a str, &'a Sum)>) -> String {
    let mut files: Vec<(&str, &Sum)> = files.into_iter().collect();
    files.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hasher = Sha256::new();
    let mut line = String::new();
    for (path, sum) in files {
        line.clear();
        line.push_str(path);
        line.push('\0');
        push_hex(&mut line, sum);
        line.push('\n');
        hasher.update(line.as_bytes());
    }
    text(&hasher.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(bytes: &[u8]) -> Sum {
        Sha256::digest(bytes).into()
    }

    #[test]
    fn file_digests_are_prefixed_lowercase_hex() {
        assert_eq!(
            text(&sum(b"")),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
    }

    #[test]
    fn a_skill_digest_hashes_sorted_lines_of_path_and_file_digest() {
        let (a, b) = (sum(b"a"), sum(b"b"));
        let expected = format!("SKILL.md\0{}\nscripts/run.sh\0{}\n", hex(&a), hex(&b));
        let in_order = skill([("SKILL.md", &a), ("scripts/run.sh", &b)]);
        assert_eq!(in_order, text(&sum(expected.as_bytes())));
        assert_eq!(skill([("scripts/run.sh", &b), ("SKILL.md", &a)]), in_order);
        assert_ne!(skill([("SKILL.md", &b), ("scripts/run.sh", &a)]), in_order);
        assert_ne!(skill([("SKILL.md", &a)]), in_order);
    }
}
