//! The record of what was last verified, `store/verified`: the lock as
//! parsed with its file's version, and per store entry the versions of its
//! files and folders when it was last hashed, so that a start-up neither
//! parses the lock nor hashes the store when nothing changed.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Paths, Verify};
use crate::digest::{self, hex_of};
use crate::disk::{self, Stamp};
use crate::lock::{
    self, HeaderTemplate, Lock, Locked, LockedSkill, SignatureFormat, SignedObject, Signer,
    SourceKind,
};
use crate::roots::SKILL_FILES;

/// The record's file name, in the store folder.
pub(super) const FILE_NAME: &str = "verified";
/// The first line of the record.
const HEADER: &str = "skillserve verified 1";

/// What was last verified, kept between processes in `store/verified`: the
/// lock (its file's version and what it says), and per store entry the
/// version of each of its files and folders when it was last hashed.
///
/// A text file, one `key value` line each: `lock STAMP`, then the lock's
/// sources (`source ID`, `kind`, `url`, …, and per skill one line `skill
/// DIGEST<tab>NAME<tab>PATH[<tab>ARTIFACT]`), then per entry `entry HEX
/// BYTES STAMP OWN` (the version of its `SKILL.md`) followed by BYTES of
/// `stamp STAMP PATH` lines (`.` for the entry's folder), which a start-up
/// skips over. Values run to the end of the line (the lock's values hold no
/// control character). A record that cannot be read is no record:
/// everything is read and hashed again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    lock: Option<(Stamp, Arc<Lock>)>,
    entries: HashMap<String, Stamps>,
}

/// The recorded versions of one entry's files and folders: as read (its
/// own file's decoded at once, the others' `stamp` lines decoded only when
/// needed: a start-up needs the `SKILL.md` of each alone) or as hashed.
#[derive(Clone, Debug)]
enum Stamps {
    Raw {
        own: Option<(String, Stamp)>,
        text: Arc<String>,
        lines: std::ops::Range<usize>,
    },
    Decoded(Vec<(String, Stamp)>),
}

impl Stamps {
    /// Every file and folder with its version; `None` when a line is
    /// damaged.
    fn decoded(&self) -> Option<Vec<(String, Stamp)>> {
        match self {
            Stamps::Decoded(stamps) => Some(stamps.clone()),
            Stamps::Raw { text, lines, .. } => text[lines.clone()]
                .lines()
                .map(|line| decode_stamp_line(line.strip_prefix("stamp ")?))
                .collect(),
        }
    }

    /// The skill's own file (`SKILL.md`, or `skill.md`) and its version.
    fn own_file(&self) -> Option<(String, Stamp)> {
        match self {
            Stamps::Raw { own, .. } => own.clone(),
            Stamps::Decoded(stamps) => SKILL_FILES
                .iter()
                .find_map(|name| stamps.iter().find(|(rel, _)| rel == name).cloned()),
        }
    }

    /// Writes the entry: `entry HEX BYTES [STAMP OWN]`, then its `stamp`
    /// lines (BYTES of them).
    fn write_to(&self, hex: &str, out: &mut String) {
        let decoded;
        let lines = match self {
            Stamps::Raw { text, lines, .. } => &text[lines.clone()],
            Stamps::Decoded(stamps) => {
                let mut text = String::new();
                for (rel, stamp) in stamps {
                    text.push_str("stamp ");
                    text.push_str(&stamp.encode());
                    text.push(' ');
                    text.push_str(rel);
                    text.push('\n');
                }
                decoded = text;
                &decoded
            }
        };
        out.push_str("entry ");
        out.push_str(hex);
        out.push(' ');
        out.push_str(&lines.len().to_string());
        if let Some((own, stamp)) = self.own_file() {
            out.push(' ');
            out.push_str(&stamp.encode());
            out.push(' ');
            out.push_str(&own);
        }
        out.push('\n');
        out.push_str(lines);
    }
}

/// Equal when they record the same versions. Two `Raw` compare their own
/// lines only (`Arc<str>` equality would compare the whole record).
impl PartialEq for Stamps {
    fn eq(&self, other: &Stamps) -> bool {
        match (self, other) {
            (
                Stamps::Raw {
                    text: a, lines: la, ..
                },
                Stamps::Raw {
                    text: b, lines: lb, ..
                },
            ) => a[la.clone()] == b[lb.clone()],
            _ => self.decoded() == other.decoded(),
        }
    }
}

impl Eq for Stamps {}

/// `STAMP PATH` (seven numbers, then the path, which may hold spaces).
fn decode_stamp_line(value: &str) -> Option<(String, Stamp)> {
    let mut at = 0;
    for _ in 0..7 {
        at += value[at..].find(' ')? + 1;
    }
    Some((value[at..].to_owned(), Stamp::decode(&value[..at - 1])?))
}

/// The source being read from a record.
fn last_source(lock: &mut Option<(Stamp, Lock)>) -> Option<&mut Locked> {
    lock.as_mut()?.1.sources.last_mut()
}

impl Record {
    /// The record at `path`; empty when it is missing or damaged.
    pub fn read(path: &Path) -> Record {
        disk::read_text(path, lock::MAX_BYTES)
            .ok()
            .and_then(Record::parse)
            .unwrap_or_default()
    }

    fn parse(text: String) -> Option<Record> {
        let text = Arc::new(text);
        let mut record = Record::default();
        let mut lock: Option<(Stamp, Lock)> = None;
        let mut at = 0;
        let mut first = true;
        while at < text.len() {
            let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
            let line = &text[at..end];
            at = (end + 1).min(text.len());
            if first {
                if line != HEADER {
                    return None;
                }
                first = false;
                continue;
            }
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "lock" => lock = Some((Stamp::decode(value)?, Lock::default())),
                "source" => lock.as_mut()?.1.sources.push(Locked {
                    id: value.to_owned(),
                    kind: SourceKind::Git,
                    url: String::new(),
                    reference: None,
                    version: String::new(),
                    subdir: None,
                    picked: Vec::new(),
                    allow_risky: false,
                    trust: Default::default(),
                    signer: None,
                    access: Default::default(),
                    added: String::new(),
                    updated: String::new(),
                    skills: Vec::new(),
                }),
                "kind" => {
                    last_source(&mut lock)?.kind = match value {
                        "git" => SourceKind::Git,
                        "index" => SourceKind::Index,
                        _ => return None,
                    }
                }
                "url" => last_source(&mut lock)?.url = value.to_owned(),
                "ref" => last_source(&mut lock)?.reference = Some(value.to_owned()),
                "version" => last_source(&mut lock)?.version = value.to_owned(),
                "path" => last_source(&mut lock)?.subdir = Some(value.to_owned()),
                "picked" => last_source(&mut lock)?.picked.push(value.to_owned()),
                "risky" => last_source(&mut lock)?.allow_risky = true,
                "trusted" => {
                    last_source(&mut lock)?.trust.trusted_signers = Some(value.to_owned());
                }
                "revoked" => {
                    last_source(&mut lock)?.trust.revoked_signers = Some(value.to_owned());
                }
                "require" => last_source(&mut lock)?.trust.require_signature = true,
                // `signer FORMAT OBJECT KEY<tab>PRINCIPAL`
                "signer" => {
                    let mut fields = value.splitn(3, ' ');
                    let format = match fields.next()? {
                        "ssh" => SignatureFormat::Ssh,
                        "openpgp" => SignatureFormat::Openpgp,
                        _ => return None,
                    };
                    let object = match fields.next()? {
                        "commit" => SignedObject::Commit,
                        "tag" => SignedObject::Tag,
                        "index" => SignedObject::Index,
                        _ => return None,
                    };
                    let (key, principal) = fields.next()?.split_once('\t')?;
                    last_source(&mut lock)?.signer = Some(Signer {
                        format,
                        key: key.to_owned(),
                        principal: principal.to_owned(),
                        object,
                    });
                }
                "header" => last_source(&mut lock)?
                    .access
                    .headers
                    .push(HeaderTemplate::parse(value).ok()?),
                "netrc" => last_source(&mut lock)?.access.netrc = true,
                "added" => last_source(&mut lock)?.added = value.to_owned(),
                "updated" => last_source(&mut lock)?.updated = value.to_owned(),
                // `skill DIGEST<tab>NAME<tab>PATH[<tab>ARTIFACT]` (the lock's
                // values hold no control character).
                "skill" => {
                    let mut fields = value.split('\t');
                    let mut next = || fields.next().map(str::to_owned);
                    let skill = LockedSkill {
                        digest: next()?,
                        name: next()?,
                        path: next()?,
                        artifact: next(),
                    };
                    last_source(&mut lock)?.skills.push(skill);
                }
                // `entry HEX BYTES [STAMP OWN]`, then BYTES of `stamp` lines.
                "entry" => {
                    let mut fields = value.splitn(3, ' ');
                    let hex = fields.next()?;
                    let bytes: usize = fields.next()?.parse().ok()?;
                    let own = match fields.next() {
                        Some(own) => Some(decode_stamp_line(own)?),
                        None => None,
                    };
                    let lines = at..at.checked_add(bytes).filter(|end| *end <= text.len())?;
                    at = lines.end;
                    let stamps = Stamps::Raw {
                        own,
                        text: Arc::clone(&text),
                        lines,
                    };
                    record
                        .entries
                        .insert(format!("{}{hex}", digest::PREFIX), stamps);
                }
                _ => return None,
            }
        }
        record.lock = lock.map(|(stamp, lock)| (stamp, Arc::new(lock)));
        Some(record)
    }

    /// The recorded lock, if it is the lock whose file has version `stamp`
    /// now (and `verify` allows trusting the record).
    pub(super) fn lock_if(&self, verify: Verify, stamp: Stamp) -> Option<Arc<Lock>> {
        match (&self.lock, verify) {
            (Some((recorded, lock)), Verify::Quick | Verify::Stamps) if *recorded == stamp => {
                Some(Arc::clone(lock))
            }
            _ => None,
        }
    }

    /// Records `lock`, read from a file of version `stamp`, unless one of
    /// its values cannot be written on one line.
    pub fn set_lock(&mut self, stamp: Stamp, lock: &Lock) {
        let one_line = |text: &str| !text.contains(['\n', '\r']);
        let representable = lock.sources.iter().all(|s| {
            [&s.id, &s.url, &s.version, &s.added, &s.updated]
                .into_iter()
                .chain(&s.reference)
                .chain(&s.subdir)
                .chain(&s.picked)
                .chain(&s.trust.trusted_signers)
                .chain(&s.trust.revoked_signers)
                .chain(s.signer.iter().map(|signer| &signer.principal))
                .all(|text| one_line(text))
                && s.skills
                    .iter()
                    .all(|k| one_line(&k.name) && one_line(&k.path) && one_line(&k.digest))
        });
        self.lock = representable.then(|| (stamp, Arc::new(lock.clone())));
    }

    /// For each skill whose entry was hashed before: its `SKILL.md` and the
    /// version it had then, without looking at the disk. The server's
    /// start-up ([`Verify::Quick`]) opens every `SKILL.md` anyway, and the
    /// scan refuses one whose version is not this one (`Root::probed`).
    pub(super) fn recorded(
        &self,
        store: &Path,
        skills: &[(&Locked, &LockedSkill)],
    ) -> Vec<Option<(PathBuf, Stamp)>> {
        skills
            .iter()
            .map(|(_, skill)| {
                let (own, stamp) = self.entries.get(&skill.digest)?.own_file()?;
                Some((store.join(hex_of(&skill.digest)).join(own), stamp))
            })
            .collect()
    }

    /// For each skill, when its entry's recorded files and folders all still
    /// have their recorded versions: its own file and that file's version
    /// (the scan then looks no further). One `lstat` per file and folder,
    /// relative to the store folder.
    pub(super) fn unchanged(
        &self,
        store: &Path,
        skills: &[(&Locked, &LockedSkill)],
    ) -> Vec<Option<(PathBuf, Stamp)>> {
        let folder = StoreFolder::open(store);
        let check = |part: &[(&Locked, &LockedSkill)]| -> Vec<Option<(PathBuf, Stamp)>> {
            part.iter()
                .map(|(_, skill)| {
                    let recorded = self.entries.get(&skill.digest)?;
                    let hex = hex_of(&skill.digest);
                    let (own, stamp) = recorded.own_file()?;
                    let same = recorded
                        .decoded()?
                        .iter()
                        .all(|(rel, stamp)| folder.stamp(store, hex, rel) == Some(*stamp));
                    same.then(|| (store.join(hex).join(own), stamp))
                })
                .collect()
        };
        // One thread: starting another cost more than the `stat`s it would
        // share (measured at 1,000 skills: 1.3 ms on one thread, 5.5 ms on
        // two).
        check(skills)
    }

    /// Records what hashing the entry of `digest` found.
    pub fn record_entry(&mut self, digest: &str, stamps: Vec<(String, Stamp)>) {
        self.entries
            .insert(digest.to_owned(), Stamps::Decoded(stamps));
    }

    /// Forgets the entry of `digest`.
    pub fn forget_entry(&mut self, digest: &str) {
        self.entries.remove(digest);
    }

    /// Keeps only the entries `keep` says yes to.
    pub fn retain_entries(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.entries.retain(|digest, _| keep(digest));
    }

    /// Writes the record to `path` atomically, entries in digest order.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        use std::fmt::Write;
        let mut text = String::from(HEADER);
        text.push('\n');
        if let Some((stamp, lock)) = &self.lock {
            let _ = writeln!(text, "lock {}", stamp.encode());
            for s in &lock.sources {
                let _ = writeln!(text, "source {}\nkind {}\nurl {}", s.id, s.kind, s.url);
                if let Some(reference) = &s.reference {
                    let _ = writeln!(text, "ref {reference}");
                }
                let _ = writeln!(text, "version {}", s.version);
                if let Some(subdir) = &s.subdir {
                    let _ = writeln!(text, "path {subdir}");
                }
                for picked in &s.picked {
                    let _ = writeln!(text, "picked {picked}");
                }
                if s.allow_risky {
                    text.push_str("risky 1\n");
                }
                if let Some(path) = &s.trust.trusted_signers {
                    let _ = writeln!(text, "trusted {path}");
                }
                if let Some(path) = &s.trust.revoked_signers {
                    let _ = writeln!(text, "revoked {path}");
                }
                if s.trust.require_signature {
                    text.push_str("require 1\n");
                }
                if let Some(signer) = &s.signer {
                    let _ = writeln!(
                        text,
                        "signer {} {} {}\t{}",
                        signer.format.as_str(),
                        signer.object.as_str(),
                        signer.key,
                        signer.principal
                    );
                }
                for header in &s.access.headers {
                    let _ = writeln!(text, "header {}", header.text());
                }
                if s.access.netrc {
                    text.push_str("netrc 1\n");
                }
                let _ = writeln!(text, "added {}\nupdated {}", s.added, s.updated);
                for k in &s.skills {
                    let _ = write!(text, "skill {}\t{}\t{}", k.digest, k.name, k.path);
                    if let Some(artifact) = &k.artifact {
                        let _ = write!(text, "\t{artifact}");
                    }
                    text.push('\n');
                }
            }
        }
        let mut digests: Vec<&String> = self.entries.keys().collect();
        digests.sort();
        for digest in digests {
            self.entries[digest].write_to(hex_of(digest), &mut text);
        }
        disk::write_atomic(path, text.as_bytes(), disk::NewFile::Shared)
    }
}

/// Records `lock` (just written to `paths.lock`) and `record`'s entries:
/// the commands that change the store call this last.
pub fn record_lock(paths: &Paths, lock: &Lock, record: &mut Record) -> io::Result<()> {
    let stamp = Stamp::of(&fs::metadata(&paths.lock)?);
    record.set_lock(stamp, lock);
    record.write(&paths.record())
}

/// The store folder, open, so that an entry's files are looked up relative
/// to it (two or three path components instead of a dozen).
#[cfg(unix)]
struct StoreFolder(Option<std::os::fd::OwnedFd>);

#[cfg(unix)]
impl StoreFolder {
    fn open(store: &Path) -> StoreFolder {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        StoreFolder(rustix::fs::open(store, flags, Mode::empty()).ok())
    }

    /// The version of `rel` in entry `hex` (`lstat`), if it exists.
    fn stamp(&self, store: &Path, hex: &str, rel: &str) -> Option<Stamp> {
        let path = if rel == "." {
            PathBuf::from(hex)
        } else {
            Path::new(hex).join(rel)
        };
        match &self.0 {
            Some(fd) => rustix::fs::statat(fd, &path, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                .ok()
                .map(|st| Stamp::of_stat(&st)),
            None => fs::symlink_metadata(store.join(path))
                .ok()
                .map(|meta| Stamp::of(&meta)),
        }
    }
}

// Elsewhere, paths are looked up whole.
#[cfg(not(unix))]
struct StoreFolder;

#[cfg(not(unix))]
impl StoreFolder {
    fn open(_store: &Path) -> StoreFolder {
        StoreFolder
    }

    fn stamp(&self, store: &Path, hex: &str, rel: &str) -> Option<Stamp> {
        let path = if rel == "." {
            store.join(hex)
        } else {
            store.join(hex).join(rel)
        };
        fs::symlink_metadata(path).ok().map(|meta| Stamp::of(&meta))
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;
    use crate::digest::Sum;
    use crate::installed::{EntryProblem, verify_entry};
    use sha2::{Digest, Sha256};

    #[test]
    fn an_entry_verifies_until_a_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("e");
        std::fs::create_dir_all(first.join("scripts")).unwrap();
        std::fs::write(first.join("SKILL.md"), "a").unwrap();
        std::fs::write(first.join("scripts/run.sh"), "b").unwrap();
        let sum = |bytes: &[u8]| -> Sum { Sha256::digest(bytes).into() };
        let (a, b) = (sum(b"a"), sum(b"b"));
        let digest = digest::skill([("SKILL.md", &a), ("scripts/run.sh", &b)]);
        let entry = dir.path().join(hex_of(&digest));
        std::fs::rename(dir.path().join("e"), &entry).unwrap();
        let verified = verify_entry(&entry, &digest).unwrap();
        assert_eq!(verified.files.len(), 2);
        let mut record = Record::default();
        let lock = Lock {
            sources: vec![Locked {
                id: "s".into(),
                kind: SourceKind::Index,
                url: "https://example.com/index.json".into(),
                reference: Some("v1".into()),
                version: digest.clone(),
                subdir: Some("a b".into()),
                picked: vec!["x".into()],
                allow_risky: true,
                trust: crate::lock::Trust {
                    trusted_signers: Some("/home/u/allowed signers".into()),
                    revoked_signers: Some("/home/u/revoked".into()),
                    require_signature: true,
                },
                signer: Some(Signer {
                    format: SignatureFormat::Ssh,
                    key: "SHA256:Urfzw/a4Gz01I8Qthzw9h//DH3nDbXPw+RyDeEvRUYs".into(),
                    principal: "Alice <alice@example.com>".into(),
                    object: SignedObject::Index,
                }),
                access: crate::lock::Access {
                    headers: vec![HeaderTemplate::parse("Authorization: Bearer ${T}").unwrap()],
                    netrc: true,
                },
                added: "2026-01-01T00:00:00Z".into(),
                updated: "2026-01-02T00:00:00Z".into(),
                skills: vec![LockedSkill {
                    name: "x".into(),
                    path: "x y/SKILL.md".into(),
                    digest: digest.clone(),
                    artifact: Some(digest.clone()),
                }],
            }],
        };
        let lock_stamp = Stamp::of(&std::fs::metadata(dir.path()).unwrap());
        record.set_lock(lock_stamp, &lock);
        record.record_entry(&digest, verified.stamps);
        let skills: Vec<(&Locked, &LockedSkill)> =
            vec![(&lock.sources[0], &lock.sources[0].skills[0])];
        let known = record.unchanged(dir.path(), &skills);
        assert_eq!(
            known[0].as_ref().map(|k| k.0.clone()),
            Some(dir.path().join(hex_of(&digest)).join("SKILL.md"))
        );
        let file = dir.path().join("verified");
        record.write(&file).unwrap();
        let reread = Record::read(&file);
        assert_eq!(reread.lock, record.lock);
        reread.write(&file).unwrap();
        assert_eq!(
            Record::read(&file).entries[&digest].decoded(),
            record.entries[&digest].decoded()
        );
        assert_eq!(
            record.lock_if(Verify::Stamps, lock_stamp).as_deref(),
            Some(&lock)
        );
        assert_eq!(record.lock_if(Verify::Full, lock_stamp), None);

        let read = Record::read(&file);
        assert_eq!(read.unchanged(dir.path(), &skills), known);
        std::fs::write(entry.join("scripts/run.sh"), "c").unwrap();
        assert_eq!(record.unchanged(dir.path(), &skills), vec![None]);
        assert_eq!(read.unchanged(dir.path(), &skills), vec![None]);
        // A start-up takes SKILL.md's recorded version (the scan compares).
        assert_eq!(read.recorded(dir.path(), &skills), known);
        assert!(matches!(
            verify_entry(&entry, &digest),
            Err(EntryProblem::Tampered(_))
        ));
        assert_eq!(
            verify_entry(&dir.path().join("gone"), &digest).unwrap_err(),
            EntryProblem::Missing
        );
    }
}
