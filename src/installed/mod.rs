//! Installed skills: what `skillserve add` fetched, read back for serving
//! (behaviour.md, "Sources"). Reading only: fetching, writing the store and
//! changing the lock are the commands' job (`sources`).
//!
//! Two things live in the user's folders ([`Paths`]):
//!
//! - the lock, `sources.lock` in the config folder, which the `lock` module
//!   reads and writes;
//! - the store, `store/` in the data folder: one read-only folder per skill,
//!   named by the hex of its digest (the SHA-256 of its files, see
//!   [`digest::skill`]), so that a folder's name says what it must hold.
//!
//! Every skill of the lock becomes a root of its own ([`Layout::Skill`],
//! [`Source::Installed`]), in lock order: sources in the order they were
//! added, skills in the order of their source. An entry is served only when
//! its files still hash to its name (`entry`). Hashing every file at every
//! start-up would cost more than reading the skills, and so would parsing
//! the lock's TOML: the [`Record`] (`store/verified`, `record`) keeps what
//! was last verified — the lock's contents with the version of its file,
//! and per entry the version (size, modification and change times, inode;
//! `disk::Stamp`) of each of its files and folders when it was last hashed.
//! The lock is parsed again only when its file changed. At every refresh,
//! and for `list` and `show` ([`Verify::Stamps`]), an entry whose every file
//! and folder still has its recorded version is taken as unchanged (one
//! `lstat` each); any other is hashed again and served only if it matches.
//! The server's start-up ([`Verify::Quick`]) takes each entry's `SKILL.md`
//! at its recorded version without looking: the scan opens the file anyway
//! and refuses it when the open file has another version. The server
//! refreshes right after, off the request path, which checks the rest.
//! `check` hashes everything ([`Verify::Full`]).

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::Config;
use crate::diagnostic::Diagnostic;
use crate::digest;
use crate::disk::{self, ReadError, Stamp};
use crate::folders::Folders;
use crate::lock::{self, LockError, Locked, LockedSkill};
use crate::roots::{Layout, Origin, Root, Source};

mod entry;
mod record;

pub use entry::{EntryProblem, Verified, hash_tree, verify_entry};
pub use record::{Record, record_lock};

/// The store's folder name, in the data folder.
pub const STORE_DIR: &str = "store";

/// Where the lock and the store are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// `sources.lock` in the config folder.
    pub lock: PathBuf,
    /// `store/` in the data folder.
    pub store: PathBuf,
}

impl Paths {
    /// The paths under the user's folders; `None` when either is unknown
    /// (no home directory).
    pub fn of(folders: &Folders) -> Option<Paths> {
        Some(Paths {
            lock: folders.config.as_ref()?.join(lock::FILE_NAME),
            store: folders.data.as_ref()?.join(STORE_DIR),
        })
    }

    /// The store entry of the skill whose digest is `digest` (`sha256:…`).
    pub fn entry(&self, digest: &str) -> PathBuf {
        self.store.join(digest::hex_of(digest))
    }

    /// The record of what was last verified.
    pub fn record(&self) -> PathBuf {
        self.store.join(record::FILE_NAME)
    }
}

/// How far store entries are checked before they are served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// The server's start-up: an entry with a record is taken at its
    /// `SKILL.md`'s recorded version, which the scan compares with the file
    /// it opens (no extra `stat`); the server checks everything else right
    /// after ([`Verify::Stamps`]).
    Quick,
    /// Entries whose files and folders all have the versions recorded when
    /// they were last hashed are taken as unchanged; the others are hashed.
    Stamps,
    /// Every entry is hashed (`skillserve check`).
    Full,
}

/// The installed roots and what is wrong with the lock or the store.
#[derive(Debug, Default)]
pub struct Installed {
    /// One root per served skill, in lock order.
    pub roots: Vec<Root>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The file whose changes change the installed roots: the lock (watched by
/// the server).
pub fn lock_file(config: &Config) -> Option<PathBuf> {
    Paths::of(&config.folders).map(|paths| paths.lock)
}

/// The roots of every skill of the lock whose store entry is intact.
pub fn discover(config: &Config, verify: Verify) -> Installed {
    let mut out = Installed::default();
    let Some(paths) = Paths::of(&config.folders) else {
        return out;
    };
    // The lock's version before it is read: if it changes while it is read,
    // the record holds the older version and the next start reads it again.
    let lock_stamp = match fs::metadata(&paths.lock) {
        Ok(meta) => Stamp::of(&meta),
        Err(err) if disk::is_gone(&err) => return out,
        Err(err) => {
            out.diagnostics.push(
                LockError::Unreadable {
                    path: paths.lock.clone(),
                    source: ReadError::Io(err),
                }
                .diagnostic(),
            );
            return out;
        }
    };
    let mut record = Record::read(&paths.record());
    // Whether the record must be written again.
    let mut changed = false;
    let lock = match record.lock_if(verify, lock_stamp) {
        Some(lock) => lock,
        None => match lock::read(&paths.lock) {
            Ok(Some(lock)) => {
                record.set_lock(lock_stamp, &lock);
                changed = true;
                Arc::new(lock)
            }
            Ok(None) => return out,
            Err(err) => {
                out.diagnostics.push(err.diagnostic());
                return out;
            }
        },
    };
    let skills: Vec<(&Locked, &LockedSkill)> = lock
        .sources
        .iter()
        .flat_map(|source| source.skills.iter().map(move |skill| (source, skill)))
        .collect();
    let unchanged = match verify {
        Verify::Quick => record.recorded(&paths.store, &skills),
        Verify::Stamps => record.unchanged(&paths.store, &skills),
        Verify::Full => vec![None; skills.len()],
    };
    for ((source, skill), known) in skills.iter().zip(unchanged) {
        let entry = paths.entry(&skill.digest);
        let known = match known {
            Some(known) => Some(known),
            None => match verify_entry(&entry, &skill.digest) {
                Ok(verified) => {
                    let own = verified.own_file(&entry);
                    record.record_entry(&skill.digest, verified.stamps);
                    changed = true;
                    own
                }
                Err(problem) => {
                    record.forget_entry(&skill.digest);
                    changed = true;
                    out.diagnostics
                        .push(problem.diagnostic(source, skill, &entry));
                    continue;
                }
            },
        };
        let origin = Origin {
            id: source.id.clone(),
            kind: source.kind,
            url: source.url.clone(),
            version: source.version.clone(),
            path: skill.path.clone(),
            digest: skill.digest.clone(),
            folder: skill.folder(source.kind, &source.id),
            allow_risky: source.allow_risky,
        };
        let mut root = Root::new(entry, Source::Installed, Layout::Skill);
        root.origin = Some(Arc::new(origin));
        root.probed = known;
        out.roots.push(root);
    }
    if changed {
        // A record, not a promise: when it cannot be written, the next start
        // reads the lock and hashes those entries again.
        if let Err(err) = record.write(&paths.record()) {
            tracing::debug!("could not record the verified store entries: {err}");
        }
    }
    out
}
