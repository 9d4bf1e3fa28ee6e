//! [`Recorder`]: where every surface of the server records a use of a
//! skill, off the request path.
//!
//! [`Recorder::record`] makes an [`Event`] (shared pointers and a clock
//! read) and hands it to a bounded channel without waiting: when the
//! channel is full the use is dropped (and counted), never the request
//! held up. A writer thread, started by the first use, adds the events up
//! and writes the file [`FLUSH_EVERY`] after the first use since its last
//! write, and when the server stops ([`Recorder::flush`]). Only that
//! first use wakes the writer; while uses wait to be written it drains the
//! channel on its own clock ([`DRAIN_EVERY`]), so a call costs no system
//! call and no thread switch. Writing takes
//! the file's lock (several servers of one user share the file, one per
//! client session), reads what the others wrote, adds its own, drops what
//! is older than the retention, and replaces the file in one rename within
//! its cap.
//!
//! Failures never reach a request: a data folder that cannot be written (a
//! read-only or full disk) logs one warning, and the uses are kept in
//! memory (bounded) and written when the disk allows it again. A file that
//! is not a usage file is set aside (`usage.json.unreadable`), not deleted;
//! one of another format version is left alone and nothing is recorded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use super::history::{History, ReadError};
use super::{Day, Event, MAX_FILE_BYTES, SkillId, Tally, Use, now_secs};
use crate::disk;
use crate::roots::Root;
use crate::skill::Skill;

/// How long uses wait in memory before they are written: the first use
/// after a write starts the clock.
pub const FLUSH_EVERY: Duration = Duration::from_secs(30);

/// How often a writer with uses to write drains the channel. Waking it at
/// every use would put a system call and a thread switch on every call's
/// path (115 against 95 µs a call at 10,000 skills); the channel holds what
/// arrives in between.
const DRAIN_EVERY: Duration = Duration::from_secs(1);

/// Uses waiting for the writer at most; past this they are dropped (and
/// the writer woken to drain): [`DRAIN_EVERY`] at 8,192 calls a second.
const QUEUE: usize = 8192;

/// Identities the writer keeps at most (a snapshot's skills, and those of
/// the snapshots before it); past this it starts over.
const MAX_IDS: usize = 200_000;

enum Message {
    Event(Event),
    /// Write now, then say so.
    Flush(SyncSender<()>),
}

/// Records uses of skills into the usage file at its path.
#[derive(Debug)]
pub struct Recorder {
    /// `None`: there is no data folder; nothing is written.
    path: Option<PathBuf>,
    enabled: AtomicBool,
    /// Made by the first use.
    writer: OnceLock<Option<Link>>,
    /// Uses dropped because the writer was behind.
    dropped: Arc<AtomicU64>,
    /// Loads per skill for `/metrics`, when it is served.
    tally: OnceLock<Arc<Tally>>,
}

impl Recorder {
    /// A recorder writing to `path` (`None`: nowhere), recording when
    /// `enabled`. Starts nothing: the writer starts with the first use.
    pub fn new(path: Option<PathBuf>, enabled: bool) -> Recorder {
        Recorder {
            path,
            enabled: AtomicBool::new(enabled),
            writer: OnceLock::new(),
            dropped: Arc::new(AtomicU64::new(0)),
            tally: OnceLock::new(),
        }
    }

    /// The usage file, if there is a data folder.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Turns recording on or off (`usage` changed in `config.toml`).
    pub fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Counts every load in `tally` too (`serve --http --metrics`), whether
    /// or not usage is recorded to the file.
    pub fn count_loads_in(&self, tally: Arc<Tally>) {
        let _ = self.tally.set(tally);
    }

    /// The loads per skill counted for `/metrics`, if they are.
    pub fn tally(&self) -> Option<&Arc<Tally>> {
        self.tally.get()
    }

    /// Records `what` of `skill` by the client called `client`: hands it
    /// to the writer and returns at once.
    pub fn record(&self, skill: &Skill, client: Option<&str>, what: Use) {
        if let (Some(tally), Use::Load(_)) = (self.tally.get(), &what) {
            tally.add(&skill.name);
        }
        if !self.enabled.load(Ordering::Relaxed) {
            return;
        }
        let Some(writer) = self.writer() else {
            return;
        };
        let event = Event {
            name: Arc::clone(&skill.name),
            root: Arc::clone(&skill.root),
            client: client.map(Box::from),
            what,
            at: now_secs(),
        };
        if let Err(TrySendError::Full(_)) = writer.sender.try_send(Message::Event(event)) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            writer.thread.unpark();
        }
    }

    /// The writer, which is started now if it is not yet.
    fn writer(&self) -> Option<&Link> {
        self.writer
            .get_or_init(|| {
                let path = self.path.clone()?;
                let (sender, receiver) = mpsc::sync_channel(QUEUE);
                let dropped = Arc::clone(&self.dropped);
                let spawned = std::thread::Builder::new()
                    .name("usage".into())
                    .spawn(move || Writer::new(path, dropped).run(&receiver));
                match spawned {
                    Ok(handle) => Some(Link {
                        sender,
                        thread: handle.thread().clone(),
                    }),
                    Err(err) => {
                        tracing::warn!("usage is not recorded: cannot start its writer: {err}");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Writes what was recorded so far, waiting at most `patience`: when
    /// the server stops, and before the app reads the file. Recording goes
    /// on after it. Nothing to do when nothing was recorded.
    pub fn flush(&self, patience: Duration) {
        let Some(Some(writer)) = self.writer.get() else {
            return;
        };
        let deadline = Instant::now() + patience;
        let (done, written) = mpsc::sync_channel(1);
        let mut message = Message::Flush(done);
        loop {
            match writer.sender.try_send(message) {
                Ok(()) => break,
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    message = back;
                    writer.thread.unpark();
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(_) => return,
            }
        }
        // It may be between two drains.
        writer.thread.unpark();
        let left = deadline.saturating_duration_since(Instant::now());
        if written.recv_timeout(left).is_err() {
            tracing::debug!("usage: not written within {patience:?} of the stop");
        }
    }
}

/// The way to the writer thread.
#[derive(Debug)]
struct Link {
    sender: SyncSender<Message>,
    /// To wake it before its next drain: to write now, or when the channel
    /// is full.
    thread: Thread,
}

/// A skill the writer has met: its name, its root and its id in the file.
type Known = (Arc<str>, Arc<Root>, SkillId);

/// The writer thread's state.
struct Writer {
    path: PathBuf,
    /// The identities of the skills seen, by the addresses of their name's
    /// and root's allocations (held here, so no other takes their place):
    /// a skill's identity is made once, not at every use.
    ids: HashMap<(usize, usize), Known, foldhash::fast::RandomState>,
    /// Uses not written yet.
    pending: History,
    dropped: Arc<AtomicU64>,
    /// The last write failed (and said so): the next failure is quiet.
    failing: bool,
    /// The file is of another format: nothing is written.
    stopped: bool,
}

impl Writer {
    fn new(path: PathBuf, dropped: Arc<AtomicU64>) -> Writer {
        Writer {
            path,
            ids: HashMap::default(),
            pending: History::default(),
            dropped,
            failing: false,
            stopped: false,
        }
    }

    fn run(mut self, receiver: &Receiver<Message>) {
        // When the uses waiting are due to be written; `None`: none wait.
        let mut due: Option<Instant> = None;
        loop {
            match due {
                // Idle: the first use wakes it.
                None => match receiver.recv() {
                    Ok(message) => self.take(message),
                    Err(_) => return,
                },
                Some(at) => std::thread::park_timeout(
                    DRAIN_EVERY.min(at.saturating_duration_since(Instant::now())),
                ),
            }
            // In the order sent: every use sent before a flush is added
            // before it writes.
            loop {
                match receiver.try_recv() {
                    Ok(message) => self.take(message),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        self.write();
                        return;
                    }
                }
            }
            let now = Instant::now();
            due = match due {
                _ if self.pending.is_empty() => None,
                Some(at) if at <= now => {
                    self.write();
                    (!self.pending.is_empty()).then(|| now + FLUSH_EVERY)
                }
                Some(at) => Some(at),
                None => Some(now + FLUSH_EVERY),
            };
        }
    }

    fn take(&mut self, message: Message) {
        match message {
            Message::Event(event) => self.add(&event),
            Message::Flush(done) => {
                self.write();
                let _ = done.send(());
            }
        }
    }

    fn add(&mut self, event: &Event) {
        let key = (
            Arc::as_ptr(&event.name).cast::<u8>() as usize,
            Arc::as_ptr(&event.root) as usize,
        );
        if self.ids.len() >= MAX_IDS && !self.ids.contains_key(&key) {
            self.ids.clear();
        }
        let (_, _, id) = self.ids.entry(key).or_insert_with(|| {
            let id = SkillId::of_parts(&event.name, &event.root);
            (Arc::clone(&event.name), Arc::clone(&event.root), id)
        });
        if !self
            .pending
            .add(id, event.client.as_deref(), &event.what, event.at)
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Writes the pending uses into the file; says once when it cannot.
    fn write(&mut self) {
        if self.pending.is_empty() || self.stopped {
            return;
        }
        let dropped = self.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            tracing::debug!("usage: {dropped} uses were not recorded (the writer was behind)");
        }
        match self.merge_into_file() {
            Ok(()) => {
                if self.failing {
                    tracing::info!("usage: {} is written again", self.path.display());
                }
                self.failing = false;
                self.pending = History::default();
            }
            Err(err) if !self.failing => {
                tracing::warn!(
                    "usage: cannot write {}: {err}; serving goes on, and usage is kept in memory until it can be written",
                    self.path.display()
                );
                self.failing = true;
            }
            Err(_) => {}
        }
    }

    fn merge_into_file(&mut self) -> std::io::Result<()> {
        match merge_into_file(&self.path, &self.pending)? {
            Merged::Written => {}
            Merged::OtherFormat(version) => {
                tracing::warn!(
                    "usage: {} is of format {version}, written by another version of skillserve; usage is not recorded (the file is left as it is)",
                    self.path.display()
                );
                self.stopped = true;
            }
            Merged::SetAside { aside, why } => {
                tracing::warn!(
                    "usage: {} could not be read ({why}); it was set aside as {} and a new one written",
                    self.path.display(),
                    aside.display()
                );
            }
        }
        Ok(())
    }
}

/// What [`merge_into_file`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Merged {
    /// The file holds the uses.
    Written,
    /// The file is of another format (written by another version): it was
    /// left as it is and nothing was written.
    OtherFormat(u64),
    /// The file was not a usage file: it was renamed to `aside`, and a new
    /// one holds the uses.
    SetAside { aside: PathBuf, why: String },
}

/// Adds `pending` to the usage file at `path`, what the writer does at each
/// write: under the file's lock, reads it (what other servers wrote too),
/// adds `pending`, drops the days past the retention, and replaces it in
/// one rename within [`MAX_FILE_BYTES`].
pub fn merge_into_file(path: &Path, pending: &History) -> std::io::Result<Merged> {
    let _editing = disk::lock_editors(path)?;
    let mut merged = Merged::Written;
    let mut history = match History::read(path) {
        Ok(found) => found.unwrap_or_default(),
        Err(ReadError::Version(version)) => return Ok(Merged::OtherFormat(version)),
        Err(ReadError::Io(err)) => return Err(std::io::Error::other(err.to_string())),
        Err(err @ ReadError::Invalid(_)) => {
            let aside = with_suffix(path, ".unreadable");
            // Set aside, not deleted: the user may want what it held.
            std::fs::rename(path, &aside)?;
            merged = Merged::SetAside {
                aside,
                why: err.to_string(),
            };
            History::default()
        }
    };
    let today = Day::today();
    history.merge(pending);
    history.prune(today);
    let bytes = history.to_json(MAX_FILE_BYTES, today);
    disk::write_atomic(path, &bytes, disk::NewFile::Private)?;
    Ok(merged)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The history recorded for a test, without a thread: what the writer does
/// with each event, then its file's text.
#[cfg(test)]
pub(crate) fn write_events(path: &Path, events: impl IntoIterator<Item = Event>) {
    let mut writer = Writer::new(path.to_owned(), Arc::default());
    for event in events {
        writer.add(&event);
    }
    writer.write();
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;
    use crate::usage::{MAX_FILE_BYTES, Surface};

    fn event(skill: &Skill, n: u64) -> Event {
        Event {
            name: Arc::clone(&skill.name),
            root: Arc::clone(&skill.root),
            client: Some(format!("client-{}", n % 3).into()),
            what: if n.is_multiple_of(5) {
                Use::File(format!("references/{}.md", n % 7).into())
            } else {
                Use::Load(Surface::Tool)
            },
            at: now_secs() - (n % 120) * 86_400,
        }
    }

    /// A million uses take half a minute in a debug build: `cargo bench
    /// --bench usage` drives a million through the same code in release.
    #[test]
    fn many_uses_over_many_days_leave_the_file_within_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.json");
        let skills: Vec<Skill> = (0..10_000)
            .map(|i| Skill::for_test(&format!("skill-{i:05}-with-a-longer-name"), "d"))
            .collect();
        // In five writes, as a long-running server would.
        for round in 0..5u64 {
            let events = (0..20_000u64).map(|n| {
                let n = round * 20_000 + n;
                event(&skills[(n * 7919 % 10_000) as usize], n)
            });
            write_events(&path, events);
            let size = std::fs::metadata(&path).unwrap().len();
            assert!(size <= MAX_FILE_BYTES as u64, "round {round}: {size} bytes");
        }
        let history = History::read(&path).unwrap().unwrap();
        let today = Day::today();
        assert!(history.days().all(|d| d >= today.minus(89) && d <= today));
        assert_eq!(history.days().last(), Some(today));
    }

    #[test]
    fn uses_that_cannot_be_written_wait_in_memory_and_the_failure_is_said_once() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::write(&data, "in the way").unwrap();
        let path = data.join("usage.json");
        let skill = Skill::for_test("pdf", "d");
        let mut writer = Writer::new(path.clone(), Arc::default());
        for round in 0..3 {
            writer.add(&event(&skill, 1));
            writer.write();
            assert!(writer.failing, "round {round}");
            assert_eq!(writer.pending.loads().count(), 1);
        }
        std::fs::remove_file(&data).unwrap();
        writer.write();
        assert!(!writer.failing && writer.pending.is_empty());
        let history = History::read(&path).unwrap().unwrap();
        assert_eq!(history.loads().map(|(.., l)| l.total()).sum::<u64>(), 3);
    }

    #[test]
    fn a_file_that_is_not_a_usage_file_is_set_aside_not_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.json");
        std::fs::write(&path, "not json").unwrap();
        let skill = Skill::for_test("pdf", "d");
        write_events(&path, [event(&skill, 1)]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("usage.json.unreadable")).unwrap(),
            "not json"
        );
        assert_eq!(History::read(&path).unwrap().unwrap().loads().count(), 1);
        // A file of a later format is left alone.
        std::fs::write(&path, "{\"skillserve_usage\":7}").unwrap();
        write_events(&path, [event(&skill, 1)]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"skillserve_usage\":7}"
        );
    }

    #[test]
    fn uses_are_written_at_a_flush_and_two_writers_add_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/usage.json");
        let skill = Skill::for_test("pdf", "d");
        for _ in 0..2 {
            let recorder = Recorder::new(Some(path.clone()), true);
            recorder.record(&skill, Some("claude-code"), Use::Load(Surface::Tool));
            recorder.record(&skill, Some("claude-code"), Use::Load(Surface::Prompt));
            recorder.flush(Duration::from_secs(10));
        }
        let history = History::read(&path).unwrap().unwrap();
        let loads: Vec<u64> = history.loads().map(|(.., l)| l.total()).collect();
        assert_eq!(loads, [4]);
        // Turned off, nothing more is recorded.
        let recorder = Recorder::new(Some(path.clone()), false);
        recorder.record(&skill, None, Use::Load(Surface::Tool));
        recorder.flush(Duration::from_secs(10));
        let history = History::read(&path).unwrap().unwrap();
        assert_eq!(history.loads().map(|(.., l)| l.total()).sum::<u64>(), 4);
    }
}
