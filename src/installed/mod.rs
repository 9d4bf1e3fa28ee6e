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
use crate::lock::{self, Lock, LockError, Locked, LockedSkill};
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
    /// The store entries of skills whose entry is not there.
    pub missing: Vec<PathBuf>,
}

/// The files whose changes change the installed roots: the user's lock
/// and the project's `skills.lock` (watched by the server).
pub fn lock_files(config: &Config) -> Vec<PathBuf> {
    Paths::of(&config.folders)
        .map(|paths| paths.lock)
        .into_iter()
        .chain(project_lock(config))
        .collect()
}

/// The project's `skills.lock`: at the top of the project's folders (the
/// repository's root, or the project folder outside a repository).
pub fn project_lock(config: &Config) -> Option<PathBuf> {
    let dir = config.project_dir.as_ref()?;
    let root = crate::roots::project_dirs(dir).pop()?;
    Some(root.join(lock::PROJECT_FILE_NAME))
}

/// The user's lock: as the record holds it when its file has not changed,
/// else read (and recorded). `None` when there is none or it cannot be read
/// (then a diagnostic says why).
fn user_lock(
    paths: &Paths,
    verify: Verify,
    record: &mut Record,
    changed: &mut bool,
    out: &mut Installed,
) -> Option<Arc<Lock>> {
    // The lock's version before it is read: if it changes while it is read,
    // the record holds the older version and the next start reads it again.
    let lock_stamp = match fs::metadata(&paths.lock) {
        Ok(meta) => Stamp::of(&meta),
        Err(err) if disk::is_gone(&err) => return None,
        Err(err) => {
            out.diagnostics.push(
                LockError::Unreadable {
                    path: paths.lock.clone(),
                    source: ReadError::Io(err),
                }
                .diagnostic(),
            );
            return None;
        }
    };
    Some(match record.lock_if(verify, lock_stamp) {
        Some(lock) => lock,
        None => match lock::read(&paths.lock) {
            Ok(Some(lock)) => {
                record.set_lock(lock_stamp, &lock);
                *changed = true;
                Arc::new(lock)
            }
            Ok(None) => return None,
            Err(err) => {
                out.diagnostics.push(err.diagnostic());
                return None;
            }
        },
    })
}

/// Pushes a root for every skill of `lock` whose store entry is intact, and
/// a diagnostic for every other; whether the record changed.
fn push_roots(
    paths: &Paths,
    lock: &Lock,
    scope: lock::Scope,
    verify: Verify,
    record: &mut Record,
    out: &mut Installed,
) -> bool {
    let mut changed = false;
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
                    if matches!(problem, EntryProblem::Missing) {
                        out.missing.push(entry.clone());
                    }
                    out.diagnostics
                        .push(problem.diagnostic(source, skill, &entry, scope));
                    continue;
                }
            },
        };
        let project = scope == lock::Scope::Project;
        let origin = Origin {
            id: source.id.clone(),
            kind: source.kind,
            url: source.url.clone(),
            version: source.version.clone(),
            path: skill.path.clone(),
            digest: skill.digest.clone(),
            folder: skill.folder(source.kind, &source.id),
            // The project's authors, not the user, said `--allow-risky`.
            allow_risky: source.allow_risky && !project,
            signer: source.signer.clone(),
            scope,
        };
        let mut root = Root::new(entry.clone(), Source::Installed, Layout::Skill);
        // Fenced like every project root: no symlink leads out of the entry.
        if project {
            root.fence = Some(Arc::new(crate::gate::Fence::new(&entry)));
        }
        root.origin = Some(Arc::new(origin));
        root.probed = known;
        out.roots.push(root);
    }
    changed
}

/// The roots of every skill of the user's lock and of the project's
/// `skills.lock` whose store entry is intact, the user's first.
pub fn discover(config: &Config, verify: Verify) -> Installed {
    let mut out = Installed::default();
    let Some(paths) = Paths::of(&config.folders) else {
        return out;
    };
    let mut record = Record::read(&paths.record());
    // Whether the record must be written again.
    let mut changed = false;
    if let Some(lock) = user_lock(&paths, verify, &mut record, &mut changed, &mut out) {
        changed |= push_roots(
            &paths,
            &lock,
            lock::Scope::User,
            verify,
            &mut record,
            &mut out,
        );
    }
    if let Some(project) = project_lock(config) {
        match lock::read(&project) {
            Ok(Some(lock)) => {
                // A project's lock comes with the repository: its skills are
                // checked now, never taken on the record's word at start-up
                // (`Quick`), and screened like every project skill.
                let verify = match verify {
                    Verify::Quick => Verify::Stamps,
                    other => other,
                };
                changed |= push_roots(
                    &paths,
                    &lock,
                    lock::Scope::Project,
                    verify,
                    &mut record,
                    &mut out,
                );
            }
            Ok(None) => {}
            Err(err) => out.diagnostics.push(err.diagnostic()),
        }
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
