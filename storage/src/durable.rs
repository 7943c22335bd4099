//! A database directory: the write-ahead log that makes a [`crate::Store`] durable.
//!
//! The directory holds
//! - `LOCK`: locked (`flock`) by the process that has the database open, with its pid;
//! - `CURRENT`: the name of the log file replay starts from;
//! - `wal-NNNNNN.log`: logs (see [`crate::wal`] for their frames). Each starts with a checkpoint
//!   (every database and container, then every item, interleaved with the writes made while it
//!   was copied) and continues with the writes since. A checkpoint makes the next generation's
//!   file live at once and fills it while writes go on (`Durable::checkpoint_of`); once it is
//!   whole and synced, `CURRENT` names it (an atomic rename) and older files are removed. Until
//!   then, `CURRENT`'s file and the later ones form a chain that opening replays in order.
//!
//! Opening replays the chain into memory (indexes are rebuilt in bulk, as an import does) and
//! appends to its last log from there. What memory holds is always what the log says: a write is
//! logged while it still holds its partition's lock, so one the log refuses (disk full) is taken
//! back and fails, and it returns once the log is synced ([`SyncMode`]).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::{RwLock, RwLockReadGuard};

use crate::error::{ErrorKind, Result, StorageError};
use crate::faults::Faults;
use crate::wal::{Log, SyncMode};

/// Record kinds (the first byte of every frame).
pub(crate) mod tag {
    pub const CREATE_DATABASE: u8 = 1;
    pub const DELETE_DATABASE: u8 = 2;
    pub const DATABASE_THROUGHPUT: u8 = 3;
    pub const CREATE_CONTAINER: u8 = 4;
    pub const DELETE_CONTAINER: u8 = 5;
    pub const CONTAINER_PROPERTIES: u8 = 6;
    pub const WRITES: u8 = 7;
    pub const SPLIT: u8 = 8;
    pub const HISTORY: u8 = 9;
    pub const SCRIPTS: u8 = 10;
}

/// How a database directory is opened.
#[derive(Debug, Clone)]
pub struct DurableOptions {
    /// When a write is acknowledged (default: after an `fsync`).
    pub sync: SyncMode,
    /// A checkpoint is written when the log has grown past this many bytes and past twice its
    /// size after the last checkpoint.
    pub checkpoint_bytes: u64,
    /// On a damaged log record: keep the intact records before it, set the rest of the file
    /// aside (`wal-NNNNNN.log.damaged-at-OFFSET`) and open, instead of refusing to open.
    pub recover: bool,
    /// Failures to inject (tests, with the `fault-injection` feature).
    #[cfg(feature = "fault-injection")]
    pub faults: Arc<Faults>,
}

impl Default for DurableOptions {
    fn default() -> Self {
        DurableOptions {
            sync: SyncMode::Full,
            checkpoint_bytes: 64 << 20,
            recover: false,
            #[cfg(feature = "fault-injection")]
            faults: Faults::none(),
        }
    }
}

impl DurableOptions {
    /// The failures to inject: none without the `fault-injection` feature.
    fn faults(&self) -> Arc<Faults> {
        #[cfg(feature = "fault-injection")]
        return Arc::clone(&self.faults);
        #[cfg(not(feature = "fault-injection"))]
        {
            static NONE: OnceLock<Arc<Faults>> = OnceLock::new();
            Arc::clone(NONE.get_or_init(Faults::none))
        }
    }
}

/// Holds off checkpoints while a change is made and logged; derefs to the live log.
pub type Gate<'a> = RwLockReadGuard<'a, Arc<Log>>;

/// What opening a directory found, for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Records replayed.
    pub records: u64,
    /// Log files replayed: more than one when a checkpoint had not finished (see the module
    /// documentation).
    pub logs: u32,
    /// Bytes of a torn last record cut off (a write that crashed before it was acknowledged).
    pub torn_bytes: u64,
    /// Where those bytes were copied before the log was cut (`wal-N.log.torn-at-OFFSET`).
    pub torn_aside: Option<PathBuf>,
    /// With [`DurableOptions::recover`]: where the damaged part of the log was set aside.
    pub set_aside: Option<PathBuf>,
}

/// A durable store's directory and live log.
#[derive(Debug)]
pub struct Durable {
    dir: PathBuf,
    /// Held (locked) while the database is open.
    _lock: File,
    /// The live log; writers read-lock it around a change and its logging, a checkpoint
    /// write-locks it to switch files.
    log: RwLock<Arc<Log>>,
    /// The live log's generation.
    generation: AtomicU64,
    /// The generation `CURRENT` names: replaying starts there (earlier than `generation` while
    /// a checkpoint is under way or after one that did not finish).
    first_generation: AtomicU64,
    options: DurableOptions,
    next_handle: AtomicU32,
    /// The log's size after the last checkpoint.
    checkpointed_len: AtomicU64,
    /// A checkpoint is started or running on a thread of its own.
    checkpointing: AtomicBool,
    /// Held by the checkpoint being written (one at a time).
    checkpoint_running: parking_lot::Mutex<()>,
    /// Why the last checkpoint started in the background failed (`None`: it did not).
    checkpoint_failure: parking_lot::Mutex<Option<String>>,
    /// Writes a checkpoint (set by the store that owns this log).
    checkpointer: OnceLock<Weak<dyn Checkpoint>>,
    pub(crate) recovery: RwLock<Recovery>,
}

/// What can write a checkpoint of itself (the store).
pub(crate) trait Checkpoint: Send + Sync + std::fmt::Debug {
    /// The records that recreate every database and container, empty, with its layout and
    /// counters, passed to `out` (called with the log write-locked: no change is under way).
    fn checkpoint_header(&self, out: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()>;

    /// The records of every item and kept change, passed to `out` while writes go on (see
    /// `Container::checkpoint_frames`); `false` when `keep_going` stopped it.
    fn checkpoint_items(&self, out: &mut dyn FnMut(&[u8]) -> Result<()>, keep_going: &dyn Fn() -> bool)
        -> Result<bool>;

    /// The log the checkpoint goes to.
    fn durable_log(&self) -> Option<&Arc<Durable>>;
}

/// A database directory locked by this process, its log not yet open.
#[derive(Debug)]
pub(crate) struct LockedDir {
    pub dir: PathBuf,
    lock: File,
    /// The logs to replay, in order (never empty): `CURRENT`'s and each later generation that
    /// follows it without a gap (a checkpoint that did not finish: its file holds the writes made
    /// since it began). The last one is live.
    pub chain: Vec<(u64, PathBuf)>,
    /// No `CURRENT` yet: a new database.
    pub new: bool,
}

/// An I/O failure as a storage error naming the file.
pub(crate) fn io_error(doing: &str, path: &Path, e: &io::Error) -> StorageError {
    let hint = match e.kind() {
        io::ErrorKind::StorageFull => {
            ": the disk is full; the write was not made (free some space: the database stays usable)"
        }
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            ": the database directory is not writable"
        }
        _ => "",
    };
    StorageError::new(ErrorKind::Unavailable, format!("{doing} {} failed: {e}{hint}", path.display()))
}

/// Makes a directory's entries (a file created or renamed in it) durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

fn log_name(generation: u64) -> String {
    format!("wal-{generation:06}.log")
}

/// The generations of the log files in `dir` (`wal-NNNNNN.log`), oldest first.
fn log_generations(dir: &Path) -> Vec<u64> {
    let mut found: Vec<u64> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    name.strip_prefix("wal-").and_then(|n| n.strip_suffix(".log")).and_then(|n| n.parse().ok())
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort_unstable();
    found
}

/// A file the database writes (or opens to write) must not be a symbolic link: writing
/// through it would change whatever it points at.
fn refuse_link(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(StorageError::new(
            ErrorKind::Unavailable,
            format!(
                "{} is a symbolic link: cosmoql never writes through links in a database directory (remove it)",
                path.display()
            ),
        )),
        _ => Ok(()),
    }
}

/// The error for a directory another process holds, with its pid when the lock file says it.
fn open_elsewhere(dir: &Path) -> StorageError {
    let holder = std::fs::read_to_string(dir.join("LOCK")).unwrap_or_default();
    let holder = holder.trim();
    let who = if holder.is_empty() || !holder.bytes().all(|b| b.is_ascii_digit()) {
        String::new()
    } else {
        format!(" (pid {holder})")
    };
    StorageError::new(
        ErrorKind::Unavailable,
        format!(
            "the database {} is open in another process{who}: one process at a time may open a database directory",
            dir.display()
        ),
    )
}

/// [`open_elsewhere`]'s error when `dir`'s `LOCK` is held by another process now (it is never
/// created here, and never followed when it is a link).
fn held_elsewhere(dir: &Path) -> Option<StorageError> {
    use std::os::unix::fs::OpenOptionsExt;
    let lock = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(dir.join("LOCK")).ok()?;
    match lock.try_lock_shared() {
        Err(std::fs::TryLockError::WouldBlock) => Some(open_elsewhere(dir)),
        _ => None,
    }
}

/// For a database directory whose `CURRENT` was lost (the logs are there): writes `CURRENT`
/// naming the oldest log, where replay then starts (a finished checkpoint removes the logs
/// before it, so the oldest left is where the last one began). Returns the log named; `None`
/// when `CURRENT` is there or there is no log.
pub fn restore_current(dir: &Path) -> Result<Option<String>> {
    let current = dir.join("CURRENT");
    if std::fs::symlink_metadata(&current).is_ok() {
        return Ok(None);
    }
    let Some(first) = log_generations(dir).first().copied() else { return Ok(None) };
    let name = log_name(first);
    let tmp = dir.join("CURRENT.tmp");
    refuse_link(&tmp)?;
    let write = || -> io::Result<()> {
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(format!("{name}\n").as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &current)?;
        sync_dir(dir)
    };
    write().map_err(|e| io_error("writing", &current, &e))?;
    Ok(Some(name))
}

impl Durable {
    /// Locks `dir` (creating it if needed) and finds its live log; [`Durable::start`] opens it
    /// for appends once it is replayed.
    pub(crate) fn lock(dir: &Path) -> Result<LockedDir> {
        let fail = |what: &str, path: &Path, e: io::Error| {
            let hint = match e.kind() {
                io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                    ": the database directory must be writable (copy it somewhere writable to read it)"
                }
                _ => "",
            };
            StorageError::new(ErrorKind::Unavailable, format!("cannot {what} {}: {e}{hint}", path.display()))
        };
        std::fs::create_dir_all(dir).map_err(|e| fail("create the database directory", dir, e))?;
        // A directory with files of its own and no CURRENT is somebody else's: never litter it.
        // (`CURRENT` itself may appear meanwhile: another process creating the database, which
        // the lock then names.)
        if !dir.join("CURRENT").exists() {
            let ours = |name: &str| {
                name == "LOCK"
                    || name == "CURRENT"
                    || name == "CURRENT.tmp"
                    || (name.starts_with("wal-") && name.contains(".log"))
            };
            let foreign = std::fs::read_dir(dir)
                .map_err(|e| fail("read", dir, e))?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .find(|name| !ours(name));
            if let Some(name) = foreign {
                // Another process may be creating the database right now (its files appear
                // between the check of CURRENT and the listing): say so, not "foreign".
                if let Some(open) = held_elsewhere(dir) {
                    return Err(open);
                }
                return Err(StorageError::new(
                    ErrorKind::Unavailable,
                    format!(
                        "{} is not a cosmoql database directory (it holds `{name}` and no CURRENT file): give a new or \
                         empty directory",
                        dir.display()
                    ),
                ));
            }
        }
        let lock_path = dir.join("LOCK");
        refuse_link(&lock_path)?;
        let lock = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&lock_path)
                .map_err(|e| fail("open", &lock_path, e))?
        };
        // This process may still be letting go of the directory (a store just dropped whose log
        // thread is finishing a sync, or whose checkpoint is stopping after its current stretch):
        // wait a moment (up to 2 s) for it, never for another process.
        let mut attempts = 0;
        let locked = loop {
            match lock.try_lock() {
                Err(std::fs::TryLockError::WouldBlock)
                    if attempts < 200
                        && std::fs::read_to_string(&lock_path)
                            .is_ok_and(|pid| pid.trim() == std::process::id().to_string()) =>
                {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                other => break other,
            }
        };
        match locked {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(open_elsewhere(dir)),
            Err(std::fs::TryLockError::Error(e)) => return Err(fail("lock", &lock_path, e)),
        }
        // The pid, written over the old one before the rest is cut, so a reader never finds the
        // file empty while it is held.
        let pid = format!("{}\n", std::process::id());
        let _ = std::os::unix::fs::FileExt::write_all_at(&lock, pid.as_bytes(), 0);
        let _ = lock.set_len(pid.len() as u64);
        let current = dir.join("CURRENT");
        let (generation, new) = match std::fs::read_to_string(&current) {
            Ok(name) => {
                let name = name.trim();
                let generation = name
                    .strip_prefix("wal-")
                    .and_then(|n| n.strip_suffix(".log"))
                    .and_then(|n| n.parse::<u64>().ok())
                    .ok_or_else(|| {
                        StorageError::new(
                            ErrorKind::Unavailable,
                            format!("{}: `{name}` is not a log file name (wal-NNNNNN.log)", current.display()),
                        )
                    })?;
                (generation, false)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Logs without CURRENT: a damaged database, never a new one (opening it as new
                // would delete the log).
                let logs = log_generations(dir);
                if let Some(first) = logs.first() {
                    return Err(StorageError::new(
                        ErrorKind::Unavailable,
                        format!(
                            "{} holds log files ({}) but no CURRENT file naming where replay starts: the directory \
                             was damaged. Nothing was changed. `cosmoql recover {}` points CURRENT at the oldest log, \
                             {}, and opens what the logs hold",
                            dir.display(),
                            logs.iter().map(|g| log_name(*g)).collect::<Vec<_>>().join(", "),
                            dir.display(),
                            log_name(*first)
                        ),
                    ));
                }
                (1, true)
            }
            Err(e) => return Err(fail("read", &current, e)),
        };
        let mut chain = vec![(generation, dir.join(log_name(generation)))];
        if !new {
            while let Some(next) = chain.last().map(|(g, _)| g + 1) {
                let path = dir.join(log_name(next));
                if !path.exists() {
                    break;
                }
                chain.push((next, path));
            }
        }
        for (_, path) in &chain {
            refuse_link(path)?;
        }
        Ok(LockedDir { dir: dir.to_path_buf(), lock, chain, new })
    }

    /// Opens the live log (the chain's last) for appends after its last whole record at `end`
    /// (`None`: a new database, whose log is created), removes files of other generations, and
    /// starts the periodic sync of [`SyncMode::Normal`].
    pub(crate) fn start(
        locked: LockedDir,
        end: Option<u64>,
        options: DurableOptions,
        mut recovery: Recovery,
        next_handle: u32,
    ) -> Result<Arc<Durable>> {
        let LockedDir { dir, lock, chain, .. } = locked;
        let (first, (generation, path)) = (chain[0].0, chain[chain.len() - 1].clone());
        let faults = options.faults();
        let log = match end {
            Some(end) => Log::open_at(&path, end, options.sync, faults).map(|(log, aside)| {
                recovery.torn_aside = aside;
                log
            }),
            // A new database (a directory with logs and no CURRENT is refused before this).
            None => {
                let _ = std::fs::remove_file(&path);
                Log::create(&path, options.sync, faults)
            }
        };
        let log = log.map_err(|e| io_error("opening", &path, &e))?;
        let durable = Arc::new(Durable {
            dir,
            _lock: lock,
            checkpointed_len: AtomicU64::new(log.len()),
            log: RwLock::new(Arc::new(log)),
            generation: AtomicU64::new(generation),
            first_generation: AtomicU64::new(first),
            options,
            next_handle: AtomicU32::new(next_handle),
            checkpointing: AtomicBool::new(false),
            checkpoint_running: parking_lot::Mutex::new(()),
            checkpoint_failure: parking_lot::Mutex::new(None),
            checkpointer: OnceLock::new(),
            recovery: RwLock::new(recovery),
        });
        if end.is_none() {
            durable.write_current(generation)?;
        }
        durable.remove_stale_logs();
        if durable.options.sync == SyncMode::Normal {
            let weak = Arc::downgrade(&durable);
            std::thread::Builder::new()
                .name("cosmoql-log-sync".into())
                .spawn(move || loop {
                    std::thread::sleep(crate::wal::NORMAL_SYNC_INTERVAL);
                    let Some(durable) = weak.upgrade() else { return };
                    let log = Arc::clone(&durable.log.read_recursive());
                    let _ = log.sync_all();
                })
                .map_err(|e| StorageError::internal(format!("starting the log sync thread: {e}")))?;
        }
        Ok(durable)
    }

    pub(crate) fn set_checkpointer(&self, store: Weak<dyn Checkpoint>) {
        let _ = self.checkpointer.set(store);
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn options(&self) -> &DurableOptions {
        &self.options
    }

    /// The live log file and its size.
    pub fn log_file(&self) -> (PathBuf, u64) {
        let log = self.log.read_recursive();
        (log.path().to_path_buf(), log.len())
    }

    /// What opening the directory found.
    pub fn recovery(&self) -> Recovery {
        self.recovery.read().clone()
    }

    /// A new container number.
    pub(crate) fn next_handle(&self) -> u32 {
        self.next_handle.fetch_add(1, Ordering::Relaxed)
    }

    /// Holds off checkpoints (see [`Gate`]). A fair lock: a waiting checkpoint is not starved
    /// by a stream of writers; so a holder never takes it again (nested appends use
    /// `read_recursive`).
    pub(crate) fn gate(&self) -> Gate<'_> {
        self.log.read()
    }

    /// An I/O failure as a storage error naming the file.
    pub(crate) fn io_error(&self, doing: &str, path: &Path, e: &io::Error) -> StorageError {
        io_error(doing, path, e)
    }

    /// Appends a record now (the caller holds the gate); not synced.
    pub(crate) fn append_now(&self, payload: &[u8]) -> Result<u64> {
        let log = self.log.read_recursive();
        log.append(payload).map_err(|e| self.io_error("writing to", log.path(), &e))
    }

    /// Appends a record and waits until it is durable (the caller holds the gate or not: the
    /// append is made under it, so it lands in the live log, never in one a checkpoint has just
    /// left behind).
    pub(crate) fn append_synced(&self, payload: &[u8]) -> Result<()> {
        let (log, end) = {
            let live = self.log.read_recursive();
            let end = live.append(payload).map_err(|e| self.io_error("writing to", live.path(), &e))?;
            (Arc::clone(&live), end)
        };
        log.sync_to(end).map_err(|e| self.io_error("syncing", log.path(), &e))
    }

    /// Waits until `log` is durable up to `end` (per [`SyncMode`]); then starts a checkpoint
    /// on a thread of its own if the log has grown enough. Called with no lock held.
    pub(crate) fn sync(&self, log: &Log, end: u64) -> Result<()> {
        log.sync_to(end).map_err(|e| self.io_error("syncing", log.path(), &e))?;
        let grown = self.checkpointed_len.load(Ordering::Relaxed);
        if end > self.options.checkpoint_bytes.max(grown.saturating_mul(2))
            && !self.checkpointing.swap(true, Ordering::AcqRel)
        {
            let store = self.checkpointer.get().cloned();
            let started = std::thread::Builder::new().name("cosmoql-checkpoint".into()).spawn(move || {
                // The thread keeps the log, not the store: a store let go stops the checkpoint.
                let durable = store.as_ref().and_then(Weak::upgrade).and_then(|s| s.durable_log().cloned());
                let Some(durable) = durable else { return };
                // A failed checkpoint loses nothing (the logs it began stay in the chain); it is
                // not tried again until the log has doubled once more.
                if let Err(e) = durable.checkpoint() {
                    durable.checkpointed_len.store(durable.log_file().1, Ordering::Relaxed);
                    *durable.checkpoint_failure.lock() = Some(e.message);
                }
                durable.checkpointing.store(false, Ordering::Release);
            });
            if started.is_err() {
                self.checkpointing.store(false, Ordering::Release);
            }
        }
        Ok(())
    }

    /// Writes a checkpoint now (see the module documentation) and returns when it is done
    /// (after the one under way on another thread, if there is one). Nothing is lost if it
    /// fails (the error says why).
    pub fn checkpoint(&self) -> Result<()> {
        let Some(store) = self.checkpointer.get().and_then(Weak::upgrade) else { return Ok(()) };
        let _running = self.checkpoint_running.lock();
        let result = self.checkpoint_of(&store);
        if result.is_ok() {
            *self.checkpoint_failure.lock() = None;
        }
        result
    }

    /// Why the last checkpoint started in the background (as the log grew) failed, if it did;
    /// the next one that succeeds clears it.
    pub fn checkpoint_failure(&self) -> Option<String> {
        self.checkpoint_failure.lock().clone()
    }

    /// A checkpoint, while writes go on:
    /// 1. with the log write-locked (no change under way, briefly): the live log is synced, the
    ///    next generation's file is written aside with every database and container (empty,
    ///    with their layouts and counters), renamed into place and made the live log; writes go
    ///    there from then on;
    /// 2. every partition's items and kept changes are appended to it a stretch at a time, each
    ///    stretch while that partition's lock is held (its writes wait, the others' do not; see
    ///    `Container::checkpoint_frames`);
    /// 3. it is synced and `CURRENT` names it (an atomic rename); older files are removed.
    ///
    /// Until step 3, opening replays the old log and then the new one (its copies of items are
    /// after-images: replaying one sets the item to what it was when it was copied, and the
    /// writes logged after it follow). A checkpoint stopped early (the store was let go) or
    /// failed (a full disk) leaves both in that chain, and opening finishes a checkpoint.
    fn checkpoint_of(&self, store: &Arc<dyn Checkpoint>) -> Result<()> {
        let generation = self.generation.load(Ordering::Relaxed) + 1;
        let path = self.dir.join(log_name(generation));
        // Written aside and renamed once whole, so a log in the chain always begins with its
        // whole header.
        let aside = path.with_extension("log.tmp");
        let log = {
            let mut live = self.log.write();
            let _ = std::fs::remove_file(&aside); // what a crashed step 1 left
            let begin = || -> Result<Log> {
                let faults = self.options.faults();
                faults.checkpoints_begun.fetch_add(1, Ordering::Relaxed);
                if faults.fail_checkpoints.load(Ordering::Relaxed) {
                    let e = io::Error::other("injected failure");
                    return Err(self.io_error("creating", &aside, &e));
                }
                live.sync_all().map_err(|e| self.io_error("syncing", live.path(), &e))?;
                let mut log = Log::create(&aside, self.options.sync, Arc::clone(&faults))
                    .map_err(|e| self.io_error("creating", &aside, &e))?;
                store.checkpoint_header(&mut |record| {
                    log.append_bulk(record).map(drop).map_err(|e| self.io_error("writing to", &aside, &e))
                })?;
                log.sync_all().map_err(|e| self.io_error("syncing", &aside, &e))?;
                log.rename(&path).map_err(|e| self.io_error("renaming", &aside, &e))?;
                // The new file's name must survive a power loss before a write goes there.
                sync_dir(&self.dir).map_err(|e| self.io_error("syncing", &self.dir, &e))?;
                Ok(log)
            };
            match begin() {
                Ok(log) => {
                    let log = Arc::new(log);
                    *live = Arc::clone(&log);
                    self.generation.store(generation, Ordering::Relaxed);
                    log
                }
                Err(e) => {
                    // Never left behind under its own name: it would join the chain at the
                    // next opening with a header older than the writes logged since.
                    let _ = std::fs::remove_file(&aside);
                    if std::fs::remove_file(&path).is_ok() {
                        let _ = sync_dir(&self.dir);
                    }
                    return Err(e);
                }
            }
        };
        // The store's owner let it go: stop (the chain keeps everything) rather than keep it
        // open behind their back.
        let keep_going = || {
            self.options.faults().checkpoint_step();
            Arc::strong_count(store) > 1
        };
        let finished = store.checkpoint_items(
            &mut |record| log.append_bulk(record).map(drop).map_err(|e| self.io_error("writing to", &path, &e)),
            &keep_going,
        )?;
        if !finished || !keep_going() {
            return Ok(());
        }
        log.sync_all().map_err(|e| self.io_error("syncing", &path, &e))?;
        self.write_current(generation)?;
        self.first_generation.store(generation, Ordering::Relaxed);
        self.checkpointed_len.store(log.len(), Ordering::Relaxed);
        self.remove_stale_logs();
        Ok(())
    }

    /// Points `CURRENT` at a generation's log: written aside, synced, renamed over, directory
    /// synced.
    fn write_current(&self, generation: u64) -> Result<()> {
        let tmp = self.dir.join("CURRENT.tmp");
        let current = self.dir.join("CURRENT");
        let write = || -> io::Result<()> {
            // Never through a link planted under the name: the old file (or link) goes first.
            let _ = std::fs::remove_file(&tmp);
            let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            f.write_all(format!("{}\n", log_name(generation)).as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &current)?;
            sync_dir(&self.dir)
        };
        write().map_err(|e| self.io_error("writing", &current, &e))
    }

    /// Removes the log files outside the chain from `CURRENT`'s generation to the live one
    /// (a finished checkpoint's predecessors) and a crashed checkpoint's unfinished beginning.
    fn remove_stale_logs(&self) {
        let chain = self.first_generation.load(Ordering::Relaxed)..=self.generation.load(Ordering::Relaxed);
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                let generation =
                    name.strip_prefix("wal-").and_then(|n| n.strip_suffix(".log")).and_then(|n| n.parse().ok());
                let unfinished = name.starts_with("wal-") && name.ends_with(".log.tmp");
                if generation.is_some_and(|g| !chain.contains(&g)) || unfinished {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
    }

    /// Syncs the log (a clean close).
    pub fn sync_all(&self) -> Result<()> {
        let log = Arc::clone(&self.log.read_recursive());
        log.sync_all().map_err(|e| self.io_error("syncing", log.path(), &e))
    }
}
