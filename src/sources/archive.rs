//! Skill archives: unpacking a `.tar.gz` or `.zip` artifact safely, and
//! packing a skill into a `.tar.gz` whose bytes depend only on its files
//! (behaviour.md, "Sources").
//!
//! Unpacking refuses the whole archive at the first entry that is not a
//! plain file or folder (links, devices, FIFOs), whose path is absolute,
//! climbs with `..`, or is not plain UTF-8; and it stops at
//! [`MAX_FILES`] files, [`MAX_BYTES`] unpacked bytes, or when the archive
//! unpacks to more than [`MAX_RATIO`] times its own size (past the first
//! [`RATIO_ALLOWANCE`]): a 10 GB bomb costs at most a few MB of work.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Component, Path};

use flate2::Compression;

use crate::disk;

/// At most this many files per skill.
pub const MAX_FILES: usize = 512;
/// At most this many bytes unpacked per skill.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Unpacked bytes may be at most this many times the archive's size...
pub const MAX_RATIO: u64 = 100;
/// ... beyond this many (small archives of small text files compress well).
pub const RATIO_ALLOWANCE: u64 = 1024 * 1024;

/// Why an archive was refused.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("it is neither a .tar.gz nor a .zip archive")]
    UnknownFormat,
    #[error("it holds {0}, which is refused (only files and folders may be unpacked)")]
    Entry(String),
    #[error(
        "it holds the path `{0}`, which is absolute, climbs out with `..`, or is not plain UTF-8"
    )]
    Path(String),
    #[error("it holds more than {MAX_FILES} files")]
    TooManyFiles,
    #[error("it unpacks to more than {} MiB", MAX_BYTES / 1024 / 1024)]
    TooLarge,
    #[error("it unpacks to more than {MAX_RATIO} times its own size (a decompression bomb?)")]
    Ratio,
    #[error("it holds `{0}` twice")]
    Duplicate(String),
    #[error("it is damaged: {0}")]
    Damaged(String),
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: io::Error },
}

/// Unpacks `bytes` (recognised by their first bytes: gzip or zip) into
/// the empty folder `dest`.
pub fn unpack(bytes: &[u8], dest: &Path) -> Result<(), ArchiveError> {
    let bound = bound(bytes.len() as u64);
    if bytes.starts_with(&[0x1f, 0x8b]) {
        unpack_tar_gz(bytes, dest, bound)
    } else if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        unpack_zip(bytes, dest, bound)
    } else {
        Err(ArchiveError::UnknownFormat)
    }
}

/// The most bytes an archive of `len` bytes may unpack to.
fn bound(len: u64) -> Bound {
    let ratio = len.saturating_mul(MAX_RATIO).max(RATIO_ALLOWANCE);
    Bound {
        bytes: MAX_BYTES.min(ratio),
        by_ratio: ratio < MAX_BYTES,
    }
}

#[derive(Clone, Copy)]
struct Bound {
    bytes: u64,
    /// Whether the ratio (not [`MAX_BYTES`]) sets `bytes`.
    by_ratio: bool,
}

impl Bound {
    fn exceeded(self) -> ArchiveError {
        if self.by_ratio {
            ArchiveError::Ratio
        } else {
            ArchiveError::TooLarge
        }
    }
}

/// A reader that fails once more than `left` bytes came through it: the
/// whole decompressed stream (tar headers and padding too) is bounded.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self
            .left
            .checked_sub(n as u64)
            .ok_or_else(|| io::Error::other(CAPPED))?;
        Ok(n)
    }
}

/// The message of [`Capped`]'s error, to tell it from damage.
const CAPPED: &str = "decompressed stream over its bound";

fn is_capped(err: &io::Error) -> bool {
    err.get_ref()
        .is_some_and(|inner| inner.to_string() == CAPPED)
}

fn unpack_tar_gz(bytes: &[u8], dest: &Path, bound: Bound) -> Result<(), ArchiveError> {
    // Headers and padding count too: 512 bytes per file and folder, and
    // the final blocks.
    let overhead = (MAX_FILES as u64 * 2 + 64) * 512;
    let stream = Capped {
        inner: flate2::read::GzDecoder::new(bytes),
        left: bound.bytes + overhead,
    };
    let mut archive = tar::Archive::new(stream);
    let mut writer = Writer::new(dest, bound);
    let entries = archive.entries().map_err(|e| damaged(e, bound))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| damaged(e, bound))?;
        let kind = entry.header().entry_type();
        let raw = entry.path_bytes().into_owned();
        if kind.is_pax_global_extensions() {
            continue;
        }
        if kind.is_dir() {
            writer.folder(&raw)?;
        } else if kind.is_file() || kind.is_contiguous() {
            let size = entry.header().size().map_err(|e| damaged(e, bound))?;
            let executable = is_executable(entry.header().mode().ok());
            writer.file(&raw, size, &mut entry, executable)?;
        } else {
            let what = if kind.is_symlink() || kind.is_hard_link() {
                Refused::Link
            } else if kind.is_character_special() || kind.is_block_special() {
                Refused::Device
            } else if kind.is_fifo() {
                Refused::Fifo
            } else {
                Refused::Unknown
            };
            return Err(what.entry(&raw));
        }
    }
    Ok(())
}

/// An entry that is neither a file nor a folder, in either format.
#[derive(Clone, Copy)]
enum Refused {
    Link,
    Device,
    Fifo,
    Unknown,
}

impl Refused {
    /// The refusal of the entry at `raw`: the same words for a tar and a
    /// zip archive.
    fn entry(self, raw: &[u8]) -> ArchiveError {
        let what = match self {
            Refused::Link => "a link",
            Refused::Device => "a device",
            Refused::Fifo => "a FIFO",
            Refused::Unknown => "an entry of an unknown kind",
        };
        ArchiveError::Entry(format!("{what} (`{}`)", String::from_utf8_lossy(raw)))
    }

    /// What a zip entry's Unix mode says it is, when not a file or a
    /// folder. Archives made elsewhere carry no type bits (`None`).
    fn of_mode(mode: Option<u32>) -> Option<Refused> {
        match mode? & 0o170_000 {
            0 | 0o100_000 | 0o040_000 => None,
            0o120_000 => Some(Refused::Link),
            0o020_000 | 0o060_000 => Some(Refused::Device),
            0o010_000 => Some(Refused::Fifo),
            _ => Some(Refused::Unknown),
        }
    }
}

fn unpack_zip(bytes: &[u8], dest: &Path, bound: Bound) -> Result<(), ArchiveError> {
    let bad = |e: zip::result::ZipError| ArchiveError::Damaged(e.to_string());
    let mut archive = zip::ZipArchive::new(io::Cursor::new(bytes)).map_err(bad)?;
    // The zip crate keeps one entry per name (the last): a name given
    // twice is found in the central directory itself.
    let start = usize::try_from(archive.central_directory_start()).unwrap_or(usize::MAX);
    if let Some(twice) = name_given_twice(bytes.get(start..).unwrap_or_default()) {
        return Err(ArchiveError::Duplicate(
            String::from_utf8_lossy(twice).into_owned(),
        ));
    }
    let mut writer = Writer::new(dest, bound);
    for index in 0..archive.len() {
        let mut file = archive.by_index(index).map_err(bad)?;
        let raw = file.name_raw().to_vec();
        if file.is_symlink() {
            return Err(Refused::Link.entry(&raw));
        }
        if let Some(refused) = Refused::of_mode(file.unix_mode()) {
            return Err(refused.entry(&raw));
        }
        if file.is_dir() {
            writer.folder(&raw)?;
        } else {
            let size = file.size();
            let executable = is_executable(file.unix_mode());
            writer.file(&raw, size, &mut file, executable)?;
        }
    }
    Ok(())
}

/// The first name that two records of a zip's central directory (which
/// starts `directory`) give, byte for byte. Each record is the signature
/// `PK\x01\x02`, 46 bytes, then its name, extra field and comment, whose
/// lengths are at offsets 28, 30 and 32; the records end at the first
/// other signature.
fn name_given_twice(directory: &[u8]) -> Option<&[u8]> {
    let field = |at: usize| usize::from(u16::from_le_bytes([directory[at], directory[at + 1]]));
    let mut seen = std::collections::HashSet::new();
    let mut at = 0;
    while directory.len() >= at + 46 && directory[at..].starts_with(b"PK\x01\x02") {
        let (name, extra, comment) = (field(at + 28), field(at + 30), field(at + 32));
        let name = directory.get(at + 46..at + 46 + name)?;
        if !seen.insert(name) {
            return Some(name);
        }
        at += 46 + name.len() + extra + comment;
    }
    None
}

fn is_executable(mode: Option<u32>) -> bool {
    mode.is_some_and(|mode| mode & 0o111 != 0)
}

/// An error of the decompressor or the tar reader: the bound, or damage.
fn damaged(err: io::Error, bound: Bound) -> ArchiveError {
    if is_capped(&err) {
        bound.exceeded()
    } else {
        ArchiveError::Damaged(err.to_string())
    }
}

/// Writes checked entries below `dest`, counting files and bytes.
struct Writer<'a> {
    dest: &'a Path,
    bound: Bound,
    files: usize,
    bytes: u64,
    seen: std::collections::HashSet<String>,
}

impl<'a> Writer<'a> {
    fn new(dest: &'a Path, bound: Bound) -> Writer<'a> {
        Writer {
            dest,
            bound,
            files: 0,
            bytes: 0,
            seen: Default::default(),
        }
    }

    fn folder(&mut self, raw: &[u8]) -> Result<(), ArchiveError> {
        let Some(rel) = checked_path(raw)? else {
            return Ok(());
        };
        let path = self.dest.join(&rel);
        fs::create_dir_all(&path).map_err(|source| ArchiveError::Write { path: rel, source })
    }

    fn file(
        &mut self,
        raw: &[u8],
        declared: u64,
        data: &mut dyn Read,
        executable: bool,
    ) -> Result<(), ArchiveError> {
        let Some(rel) = checked_path(raw)? else {
            return Err(ArchiveError::Path(
                String::from_utf8_lossy(raw).into_owned(),
            ));
        };
        if !self.seen.insert(rel.clone()) {
            return Err(ArchiveError::Duplicate(rel));
        }
        self.files += 1;
        if self.files > MAX_FILES {
            return Err(ArchiveError::TooManyFiles);
        }
        let left = self.bound.bytes - self.bytes;
        if declared > left {
            return Err(self.bound.exceeded());
        }
        let path = self.dest.join(&rel);
        let write_error = |source| ArchiveError::Write {
            path: rel.clone(),
            source,
        };
        let mut out = disk::create_file(&path).map_err(write_error)?;
        // The declared size may lie: never read more than is left.
        let copied = io::copy(&mut data.take(left + 1), &mut out).map_err(|e| {
            if is_capped(&e) {
                self.bound.exceeded()
            } else {
                ArchiveError::Damaged(e.to_string())
            }
        })?;
        if copied > left {
            return Err(self.bound.exceeded());
        }
        self.bytes += copied;
        #[cfg(unix)]
        if executable {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).map_err(write_error)?;
        }
        #[cfg(not(unix))]
        let _ = executable;
        Ok(())
    }
}

/// The entry's path as a relative `/`-separated path, or `None` for the
/// archive's root itself (`./`); refused when absolute, when it climbs with
/// `..`, or when it is not UTF-8 without control characters or backslashes.
fn checked_path(raw: &[u8]) -> Result<Option<String>, ArchiveError> {
    let refuse = || ArchiveError::Path(String::from_utf8_lossy(raw).into_owned());
    let text = std::str::from_utf8(raw).map_err(|_| refuse())?;
    if text.starts_with('/')
        || text.contains('\\')
        || text.chars().any(char::is_control)
        || text
            .split('/')
            .next()
            .is_some_and(|first| first.contains(':'))
    {
        return Err(refuse());
    }
    let mut parts = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(refuse()),
            part => parts.push(part),
        }
    }
    // Belt and braces: the platform's own reading of the path is relative too.
    let joined = parts.join("/");
    if Path::new(&joined)
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(refuse());
    }
    Ok((!parts.is_empty()).then_some(joined))
}

/// A file to pack: its path in the archive and its bytes.
pub struct Packed<'a> {
    pub path: &'a str,
    pub bytes: &'a [u8],
    pub executable: bool,
}

/// A `.tar.gz` of `files`, the same bytes for the same files: entries
/// sorted by path, no folder entries, mode 0644 (0755 for executables),
/// owner 0, times 0, no user or group names; gzip without a name or time.
pub fn pack_tar_gz(files: &mut [Packed<'_>]) -> io::Result<Vec<u8>> {
    files.sort_unstable_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let gzip = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), Compression::best());
    let mut builder = tar::Builder::new(gzip);
    for file in files.iter() {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(file.bytes.len() as u64);
        header.set_mode(if file.executable { 0o755 } else { 0o644 });
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_username("")?;
        header.set_groupname("")?;
        builder.append_data(&mut header, file.path, file.bytes)?;
    }
    let gzip = builder.into_inner()?;
    let mut bytes = gzip.finish()?;
    bytes.flush()?;
    Ok(bytes)
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    fn tar_gz(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        build(&mut builder);
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    }

    fn header(kind: tar::EntryType, size: u64) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(size);
        header.set_mode(0o644);
        header
    }

    /// Writes a raw path into a header, as a hostile archive would.
    fn raw_path(header: &mut tar::Header, path: &str) {
        let name = &mut header.as_old_mut().name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_cksum();
    }

    #[test]
    fn a_packed_skill_unpacks_to_the_same_files_and_packs_to_the_same_bytes() {
        let mut files = [
            Packed {
                path: "scripts/run.sh",
                bytes: b"#!/bin/sh\n",
                executable: true,
            },
            Packed {
                path: "SKILL.md",
                bytes: b"---\nname: x\n---\n",
                executable: false,
            },
        ];
        let packed = pack_tar_gz(&mut files).unwrap();
        assert_eq!(pack_tar_gz(&mut files).unwrap(), packed);
        let dir = tempfile::tempdir().unwrap();
        unpack(&packed, dir.path()).unwrap();
        assert_eq!(
            fs::read(dir.path().join("scripts/run.sh")).unwrap(),
            b"#!/bin/sh\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join("scripts/run.sh"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o111, 0o111);
        }
    }

    #[test]
    fn links_devices_and_climbing_paths_are_refused() {
        let link = tar_gz(|b| {
            let mut h = header(tar::EntryType::Symlink, 0);
            b.append_link(&mut h, "SKILL.md", "/etc/passwd").unwrap();
        });
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            unpack(&link, dir.path()),
            Err(ArchiveError::Entry(_))
        ));

        let fifo = tar_gz(|b| {
            let mut h = header(tar::EntryType::Fifo, 0);
            b.append_data(&mut h, "pipe", &[][..]).unwrap();
        });
        assert!(matches!(
            unpack(&fifo, dir.path()),
            Err(ArchiveError::Entry(_))
        ));

        for path in ["../evil", "/etc/evil", "a/../../evil"] {
            let climbing = tar_gz(|b| {
                let mut h = header(tar::EntryType::Regular, 1);
                raw_path(&mut h, path);
                b.append(&h, &b"x"[..]).unwrap();
            });
            let dir = tempfile::tempdir().unwrap();
            assert!(
                matches!(unpack(&climbing, dir.path()), Err(ArchiveError::Path(_))),
                "{path}"
            );
            assert!(!dir.path().parent().unwrap().join("evil").exists());
        }
    }

    #[test]
    fn a_bomb_stops_at_the_bound() {
        // 200 MiB of zeros compress to about 200 KB: over the ratio.
        let bomb = tar_gz(|b| {
            let size = 200 * 1024 * 1024;
            let mut h = header(tar::EntryType::Regular, size);
            b.append_data(&mut h, "zeros", io::repeat(0).take(size))
                .unwrap();
        });
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            unpack(&bomb, dir.path()),
            Err(ArchiveError::Ratio | ArchiveError::TooLarge)
        ));
        let written = fs::metadata(dir.path().join("zeros")).map_or(0, |m| m.len());
        assert!(written <= bound(bomb.len() as u64).bytes + 1, "{written}");
    }

    #[test]
    fn too_many_files_are_refused() {
        let many = tar_gz(|b| {
            for i in 0..=MAX_FILES {
                let mut h = header(tar::EntryType::Regular, 1);
                b.append_data(&mut h, format!("f{i}"), &b"x"[..]).unwrap();
            }
        });
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            unpack(&many, dir.path()),
            Err(ArchiveError::TooManyFiles)
        ));
    }

    #[test]
    fn zip_archives_unpack_and_their_links_are_refused() {
        let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("SKILL.md", options).unwrap();
        zip.write_all(b"---\nname: z\n---\n").unwrap();
        zip.add_directory("references/", options).unwrap();
        zip.start_file("references/a.md", options).unwrap();
        zip.write_all(b"a").unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        let dir = tempfile::tempdir().unwrap();
        unpack(&bytes, dir.path()).unwrap();
        assert_eq!(fs::read(dir.path().join("references/a.md")).unwrap(), b"a");

        let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        zip.add_symlink("SKILL.md", "/etc/passwd", options).unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            unpack(&bytes, dir.path()),
            Err(ArchiveError::Entry(_))
        ));
        assert!(matches!(
            unpack(b"plain text", dir.path()),
            Err(ArchiveError::UnknownFormat)
        ));
    }

    /// A zip of `names` (each holding its name), its central directory
    /// then changed by `patch` (a record's offset in the bytes, its name).
    fn zip_of(names: &[&str], patch: impl Fn(&mut Vec<u8>, usize, &str)) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().unix_permissions(0o644);
        for name in names {
            zip.start_file(*name, options).unwrap();
            zip.write_all(name.as_bytes()).unwrap();
        }
        let mut bytes = zip.finish().unwrap().into_inner();
        let mut at = 0;
        while let Some(found) = bytes[at..].windows(4).position(|w| w == b"PK\x01\x02") {
            at += found;
            let len = usize::from(u16::from_le_bytes([bytes[at + 28], bytes[at + 29]]));
            let name = String::from_utf8(bytes[at + 46..at + 46 + len].to_vec()).unwrap();
            patch(&mut bytes, at, &name);
            at += 46;
        }
        bytes
    }

    #[test]
    fn a_zip_naming_a_path_twice_is_refused_as_a_tar_is() {
        // `SKILL.mX` renamed `SKILL.md` in both headers: the zip crate
        // would keep the second copy.
        let mut bytes = zip_of(&["SKILL.md", "SKILL.mX"], |_, _, _| {});
        let local = bytes.windows(8).position(|w| w == b"SKILL.mX").unwrap();
        bytes[local + 7] = b'd';
        let central = bytes.windows(8).rposition(|w| w == b"SKILL.mX").unwrap();
        bytes[central + 7] = b'd';
        let dir = tempfile::tempdir().unwrap();
        let err = unpack(&bytes, dir.path()).unwrap_err();
        assert_eq!(err.to_string(), "it holds `SKILL.md` twice");
        assert!(!dir.path().join("SKILL.md").exists());
    }

    #[test]
    fn zip_fifos_and_devices_are_refused_with_the_tar_readers_words() {
        for (mode, words) in [
            (0o010_644, "a FIFO (`pipe`)"),
            (0o020_644, "a device (`pipe`)"),
            (0o060_644, "a device (`pipe`)"),
            (0o140_644, "an entry of an unknown kind (`pipe`)"),
        ] {
            let bytes = zip_of(&["SKILL.md", "pipe"], |bytes, at, name| {
                if name == "pipe" {
                    let attributes: u32 = mode << 16;
                    bytes[at + 38..at + 42].copy_from_slice(&attributes.to_le_bytes());
                }
            });
            let dir = tempfile::tempdir().unwrap();
            let err = unpack(&bytes, dir.path()).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "it holds {words}, which is refused (only files and folders may be unpacked)"
                ),
                "{mode:o}"
            );
            assert!(!dir.path().join("pipe").exists(), "{mode:o}");
        }
    }
}
