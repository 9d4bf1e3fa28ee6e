//! Bearer tokens of `serve --http` (behaviour.md §16): the token file, which
//! holds one `label:sha256hex` line per token (hashes, never tokens), or
//! `label:sha256hex:admin` for a token that may also change the catalog, and
//! new tokens for `skillserve token new`.
//!
//! A token is `ss_` and 43 base64url characters: 32 bytes from the operating
//! system's random source. Only its SHA-256 is written down, so the file can be
//! read by whoever deploys the server (a Kubernetes Secret, say) without
//! giving anyone a token. Tokens are compared by their hashes in constant
//! time.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::disk::{self, ReadError};

/// Every token starts with this, so that secret scanners and people can tell
/// what it is.
pub const PREFIX: &str = "ss_";
/// The random bytes of a token.
const TOKEN_BYTES: usize = 32;
/// A token file larger than this is refused: 10,000 tokens fit.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// The longest label.
const MAX_LABEL_CHARS: usize = 64;

/// The marker of an admin token's line (`label:sha256hex:admin`). A line
/// without it is a read-only token, as every line was before admin tokens.
const ADMIN: &str = "admin";

/// The tokens a server accepts: each one's label, SHA-256, and whether it
/// is an admin token.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenFile {
    entries: Vec<Entry>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    label: String,
    hash: [u8; 32],
    admin: bool,
}

/// The holder of a token, as the token file names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder<'a> {
    pub label: &'a str,
    /// An admin token (`token new LABEL --admin`): it may also change the
    /// catalog.
    pub admin: bool,
}

/// A problem with a token file or a new token.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("{}: {error}", path.display())]
    Read { path: PathBuf, error: ReadError },
    #[error("{}: not UTF-8 text", path.display())]
    NotText { path: PathBuf },
    #[error(
        "{}:{line}: {reason}; each line is `label:sha256hex` or `label:sha256hex:admin` (write new tokens with `skillserve token new LABEL`)",
        path.display()
    )]
    Line {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{}: the label `{label}` is already used; pick another or remove its line", path.display())]
    Taken { path: PathBuf, label: String },
    #[error("the label `{0}` {1}")]
    Label(String, &'static str),
    #[error("{}: {error}", path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the operating system gave no random bytes: {0}")]
    Random(String),
}

impl TokenFile {
    /// Reads the token file at `path` (a regular file of at most
    /// [`MAX_FILE_BYTES`]).
    pub fn read(path: &Path) -> Result<TokenFile, TokenError> {
        let bytes = disk::read_bytes(path, MAX_FILE_BYTES).map_err(|error| TokenError::Read {
            path: path.to_owned(),
            error,
        })?;
        TokenFile::decode(path, &bytes)
    }

    /// The token file `path` holds `bytes`.
    fn decode(path: &Path, bytes: &[u8]) -> Result<TokenFile, TokenError> {
        let text = std::str::from_utf8(bytes).map_err(|_| TokenError::NotText {
            path: path.to_owned(),
        })?;
        TokenFile::parse(text).map_err(|(line, reason)| TokenError::Line {
            path: path.to_owned(),
            line,
            reason,
        })
    }

    /// Parses the lines of a token file: `label:sha256hex`, or
    /// `label:sha256hex:admin`; blank lines and lines starting with `#` are
    /// skipped. The error is the line number and what is wrong with it.
    pub fn parse(text: &str) -> Result<TokenFile, (usize, String)> {
        let mut entries: Vec<Entry> = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |reason: String| (index + 1, reason);
            let mut fields = line.split(':').map(str::trim);
            let (Some(label), Some(hash)) = (fields.next(), fields.next()) else {
                return Err(at("no `:` between label and hash".to_owned()));
            };
            let admin = match fields.next() {
                None => false,
                Some(ADMIN) => true,
                Some(other) => {
                    return Err(at(format!(
                        "`{}` after the hash is not `admin`",
                        crate::text::printable(other)
                    )));
                }
            };
            if fields.next().is_some() {
                return Err(at("too many `:`".to_owned()));
            }
            check_label(label).map_err(|why| at(format!("the label `{label}` {why}")))?;
            let hash = parse_hash(hash).ok_or_else(|| {
                at("the hash is not 64 hexadecimal digits (a SHA-256)".to_owned())
            })?;
            if entries.iter().any(|known| known.label == label) {
                return Err(at(format!("the label `{label}` appears twice")));
            }
            entries.push(Entry {
                label: label.to_owned(),
                hash,
                admin,
            });
        }
        Ok(TokenFile { entries })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The holder of `token`, if the file holds its hash. Every entry is
    /// compared, each in constant time, so the time taken says nothing about
    /// which entry (or how much of a hash) matched.
    pub fn holder_of(&self, token: &str) -> Option<Holder<'_>> {
        self.holder_by_hash(&sha256(token))
    }

    /// The holder of the token whose SHA-256 is `hash` ([`sha256`]), as
    /// [`TokenFile::holder_of`].
    pub fn holder_by_hash(&self, hash: &[u8; 32]) -> Option<Holder<'_>> {
        let mut found = None;
        for entry in &self.entries {
            if bool::from(entry.hash.ct_eq(hash)) {
                found = Some(Holder {
                    label: &entry.label,
                    admin: entry.admin,
                });
            }
        }
        found
    }
}

/// A new token, from the operating system's random source.
pub fn generate() -> Result<String, TokenError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|err| TokenError::Random(err.to_string()))?;
    Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// The line a token file holds for `token` under `label`.
pub fn line(label: &str, token: &str, admin: bool) -> String {
    let mut out = format!("{label}:");
    for byte in sha256(token) {
        let _ = write!(out, "{byte:02x}");
    }
    if admin {
        out.push(':');
        out.push_str(ADMIN);
    }
    out
}

/// Makes a new token labelled `label` (an admin token when `admin`), adds
/// its hash at the end of the token file at `path` (created, readable by
/// its owner only, when missing) and returns the token, which is written
/// nowhere. The file is replaced whole (`disk::write_atomic`: a server
/// re-reading it never sees half a line), under the lock of its editors,
/// so that two `token new` at once both land.
pub fn add(path: &Path, label: &str, admin: bool) -> Result<String, TokenError> {
    check_label(label).map_err(|why| TokenError::Label(label.to_owned(), why))?;
    let write_error = |error| TokenError::Write {
        path: path.to_owned(),
        error,
    };
    let _editing = disk::lock_editors(path).map_err(write_error)?;
    let mut bytes = match disk::read_bytes(path, MAX_FILE_BYTES) {
        Ok(bytes) => bytes,
        Err(error) if error.is_gone() => Vec::new(),
        Err(error) => {
            return Err(TokenError::Read {
                path: path.to_owned(),
                error,
            });
        }
    };
    let existing = TokenFile::decode(path, &bytes)?;
    if existing.entries.iter().any(|known| known.label == label) {
        return Err(TokenError::Taken {
            path: path.to_owned(),
            label: label.to_owned(),
        });
    }
    let token = generate()?;
    // A file whose last line has no line break gets one first.
    if bytes.last().is_some_and(|&b| b != b'\n') {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line(label, &token, admin).as_bytes());
    bytes.push(b'\n');
    disk::write_atomic(path, &bytes, disk::NewFile::Private).map_err(write_error)?;
    Ok(token)
}

/// Why `label` cannot label a token, if it cannot: 1 to 64 letters, digits,
/// `.`, `_`, `-` or `@` (it is logged with every request).
fn check_label(label: &str) -> Result<(), &'static str> {
    if label.is_empty() {
        return Err("is empty");
    }
    if label.chars().count() > MAX_LABEL_CHARS {
        return Err("is longer than 64 characters");
    }
    if !label
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
    {
        return Err("may only hold letters, digits, `.`, `_`, `-` and `@`");
    }
    Ok(())
}

fn parse_hash(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(hex.chunks(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

/// A token's SHA-256, as the token file holds it.
pub fn sha256(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_found_by_its_hash_and_only_by_it() {
        let token = generate().unwrap();
        assert!(token.starts_with(PREFIX));
        assert_eq!(token.len(), PREFIX.len() + 43);
        let admin = generate().unwrap();
        let file = TokenFile::parse(&format!(
            "# team\n\n{}\n{}\n",
            line("ci-bot", &token, false),
            line("lead", &admin, true)
        ))
        .unwrap();
        assert_eq!(file.len(), 2);
        assert_eq!(
            file.holder_of(&token),
            Some(Holder {
                label: "ci-bot",
                admin: false
            })
        );
        assert_eq!(
            file.holder_of(&admin),
            Some(Holder {
                label: "lead",
                admin: true
            })
        );
        assert_eq!(file.holder_of("ss_wrong"), None);
        assert_eq!(file.holder_of(""), None);
    }

    #[test]
    fn bad_lines_are_named() {
        let err = |text: &str| TokenFile::parse(text).unwrap_err();
        assert_eq!(err("just-a-label").0, 1);
        assert_eq!(
            err(&format!("\nalice:{}", "z".repeat(64))),
            (
                2,
                "the hash is not 64 hexadecimal digits (a SHA-256)".to_owned()
            )
        );
        assert!(
            err(&format!("a b:{}", "0".repeat(64)))
                .1
                .contains("may only hold")
        );
        let twice = format!("a:{0}\na:{0}", "0".repeat(64));
        assert_eq!(err(&twice), (2, "the label `a` appears twice".to_owned()));
        assert_eq!(
            err(&format!("a:{}:root", "0".repeat(64))),
            (1, "`root` after the hash is not `admin`".to_owned())
        );
        assert_eq!(
            err(&format!("a:{}:admin:x", "0".repeat(64))),
            (1, "too many `:`".to_owned())
        );
    }

    #[test]
    fn two_tokens_differ() {
        assert_ne!(generate().unwrap(), generate().unwrap());
    }
}
