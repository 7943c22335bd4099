//! The write-ahead log: checksummed frames appended to one file, made durable with group commit.
//!
//! A log file starts with an 8-byte magic; each frame is its payload's length (`u32`, little
//! endian), the payload's CRC-32 (`u32`), the CRC-32 of those eight bytes (`u32`: every byte of
//! a frame is covered, its length too, so a flipped bit in a length can never pass for the end
//! of the log) and the payload. Logs of the first format (`cosmoql\x01`, no header checksum)
//! are still read and appended to. A frame is written with one positioned
//! write while the writer still holds the lock of what it changed, so a write that cannot be
//! logged (disk full) fails before anyone sees it; the `fsync` that makes it durable is shared by
//! every writer waiting at that moment (group commit: one leader syncs, the others wait for it).
//!
//! Reading a log back ([`read_frames`]) stops at the first frame that is incomplete or fails its
//! checksum. If that frame is the last thing in the file, a crash tore it while it was being
//! written: it was never acknowledged, and the log is cut there. Anything after it means the file
//! was damaged afterwards: that is a [`Corruption`] naming the file and the offset.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::faults::Faults;

/// The first bytes of every log file this version creates.
pub const MAGIC: &[u8; 8] = b"cosmoql\x02";
/// The first bytes of a log of the first format, whose frames have no header checksum.
pub const MAGIC_V1: &[u8; 8] = b"cosmoql\x01";
/// Length, payload checksum and header checksum before each payload.
pub const FRAME_HEADER: usize = 12;
/// The first format's header: length and payload checksum.
const FRAME_HEADER_V1: usize = 8;
/// The largest payload a frame may carry (a batch of 100 items of 2 MB, with room to spare).
pub const MAX_FRAME: usize = 256 * 1024 * 1024;

/// When an acknowledged write is on stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// Every write returns only after an `fsync` covered it (concurrent writers share one).
    #[default]
    Full,
    /// Writes return once the operating system has them (they survive the process being killed,
    /// not a power loss); the log is synced every [`NORMAL_SYNC_INTERVAL`] and at checkpoints,
    /// as SQLite's `synchronous=NORMAL` in WAL mode.
    Normal,
}

/// How often [`SyncMode::Normal`] syncs the log.
pub const NORMAL_SYNC_INTERVAL: std::time::Duration = std::time::Duration::from_millis(200);

#[derive(Debug)]
struct Tail {
    file: File,
    /// The end of the last whole frame.
    end: u64,
    /// How far the file is allocated (written with zeros ahead of the frames).
    allocated: u64,
}

/// The log grows by this much at a time, written with zeros ahead of the frames: a frame then
/// overwrites allocated space, so its `fdatasync` writes data only (not the file's size and
/// block map, as an append to the end would), and a full disk shows up when a chunk is
/// allocated, before any frame is half written.
pub const PREALLOCATE: u64 = 4 << 20;

#[derive(Debug, Default)]
struct SyncState {
    durable: u64,
    syncing: bool,
    /// An `fsync` failed: what the page cache holds is unknown, so nothing more is acknowledged
    /// (as PostgreSQL does); reopening the database recovers from what is on disk.
    failed: Option<String>,
}

/// An open log file being appended to.
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    /// The first format (`MAGIC_V1`): its frames have no header checksum.
    v1: bool,
    tail: Mutex<Tail>,
    /// A second handle for `fsync`, so a sync never holds up appends.
    sync_file: File,
    sync: Mutex<SyncState>,
    synced: Condvar,
    mode: SyncMode,
    faults: Arc<Faults>,
}

impl Log {
    /// Creates a new log file (it must not exist) with its magic, synced.
    pub fn create(path: &Path, mode: SyncMode, faults: Arc<Faults>) -> io::Result<Log> {
        let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(path)?;
        file.write_all_at(MAGIC, 0)?;
        file.sync_all()?;
        Self::with_file(path, file, MAGIC.len() as u64, mode, faults, false)
    }

    /// Opens an existing log to append after its last whole frame at `end` (what
    /// [`read_frames`] returned); whatever follows is cut off, after the bytes of a torn last
    /// frame were copied aside (`wal-N.log.torn-at-END`: nothing read back as unreadable is ever
    /// just deleted). Returns the log and that copy's path, when there was one.
    pub fn open_at(path: &Path, end: u64, mode: SyncMode, faults: Arc<Faults>) -> io::Result<(Log, Option<PathBuf>)> {
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOFOLLOW).open(path)?
        };
        let len = file.metadata()?.len();
        let mut magic = [0u8; MAGIC.len()];
        file.read_exact_at(&mut magic, 0)?;
        let v1 = &magic == MAGIC_V1;
        let mut aside = None;
        if let Some((copy, last)) = if len > end { keep_torn(path, &file, end, len)? } else { None } {
            // A torn frame is zeroed (the space after `end` stays allocated for the next ones);
            // what is zero already is left alone.
            let zeros = vec![0u8; (last + 1 - end).min(PREALLOCATE) as usize];
            let mut at = end;
            while at <= last {
                let n = (last + 1 - at).min(zeros.len() as u64) as usize;
                file.write_all_at(&zeros[..n], at)?;
                at += n as u64;
            }
            file.sync_data()?;
            aside = Some(copy);
        }
        Ok((Self::with_file(path, file, end, mode, faults, v1)?, aside))
    }

    fn with_file(path: &Path, file: File, end: u64, mode: SyncMode, faults: Arc<Faults>, v1: bool) -> io::Result<Log> {
        let sync_file = file.try_clone()?;
        let allocated = file.metadata()?.len();
        Ok(Log {
            path: path.to_path_buf(),
            v1,
            tail: Mutex::new(Tail { file, end, allocated }),
            sync_file,
            sync: Mutex::new(SyncState { durable: end, ..SyncState::default() }),
            synced: Condvar::new(),
            mode,
            faults,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file (it stays open for appends).
    pub fn rename(&mut self, to: &Path) -> io::Result<()> {
        std::fs::rename(&self.path, to)?;
        self.path = to.to_path_buf();
        Ok(())
    }

    pub fn mode(&self) -> SyncMode {
        self.mode
    }

    /// The log's size in bytes.
    pub fn len(&self) -> u64 {
        self.tail.lock().end
    }

    pub fn is_empty(&self) -> bool {
        self.len() <= MAGIC.len() as u64
    }

    /// Appends one frame; returns the offset it ends at (what [`Log::sync_to`] takes). A failed
    /// write leaves the log as it was (a partly written frame is cut off).
    pub fn append(&self, payload: &[u8]) -> io::Result<u64> {
        self.append_as(payload, false)
    }

    /// [`Log::append`] for writes synced later all together (an import, a checkpoint): the file
    /// grows as they come, with no space allocated ahead (see [`PREALLOCATE`]: that pays only when
    /// each frame is synced on its own).
    pub fn append_bulk(&self, payload: &[u8]) -> io::Result<u64> {
        self.append_as(payload, true)
    }

    fn append_as(&self, payload: &[u8], bulk: bool) -> io::Result<u64> {
        if payload.len() > MAX_FRAME {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a log record of more than 256 MB"));
        }
        let frame = if self.v1 { encode_frame_v1(payload) } else { encode_frame(payload) };
        let mut tail = self.tail.lock();
        let end = tail.end + frame.len() as u64;
        if end > tail.allocated && !bulk && self.mode == SyncMode::Full {
            self.allocate(&mut tail, end)?;
        }
        let full = self.faults.disk_full_at.load(Ordering::Relaxed);
        let result = if end > full {
            // A full disk can refuse even allocated space (copy-on-write file systems do): part
            // of the frame may land.
            let _ = tail
                .file
                .write_all_at(&frame[..full.saturating_sub(tail.end).min(frame.len() as u64) as usize], tail.end);
            Err(io::Error::new(io::ErrorKind::StorageFull, "No space left on device (os error 28)"))
        } else {
            tail.file.write_all_at(&frame, tail.end)
        };
        match result {
            Ok(()) => {
                tail.end = end;
                tail.allocated = tail.allocated.max(end);
                Ok(end)
            }
            Err(e) => {
                // Remove whatever part of the frame landed, so the next frame follows a whole
                // one: zeros inside the allocated space, the file cut back past it.
                let junk = (end.min(tail.allocated) - tail.end.min(tail.allocated)) as usize;
                let _ = tail.file.write_all_at(&vec![0u8; junk], tail.end);
                if end > tail.allocated {
                    let _ = tail.file.set_len(tail.allocated.max(tail.end));
                }
                Err(e)
            }
        }
    }

    /// Allocates the file up to at least `end` (see [`PREALLOCATE`]): a whole chunk, or where
    /// the disk (or the process's file size limit) has no room for one, just up to `end`, so a
    /// nearly full disk still takes what fits.
    fn allocate(&self, tail: &mut Tail, end: u64) -> io::Result<()> {
        let chunk = match self.faults.preallocate.load(Ordering::Relaxed) {
            0 => PREALLOCATE,
            n => n,
        };
        let target = end.div_ceil(chunk).saturating_mul(chunk).max(end);
        match self.allocate_to(tail, target) {
            Err(e) if target > end && no_room(&e) => self.allocate_to(tail, end),
            done => done,
        }
    }

    fn allocate_to(&self, tail: &mut Tail, target: u64) -> io::Result<()> {
        let full = self.faults.disk_full_at.load(Ordering::Relaxed);
        let from = tail.allocated.max(tail.end);
        let zeros = vec![0u8; (target.saturating_sub(from)).min(PREALLOCATE) as usize];
        let mut at = from;
        while at < target {
            let n = (target - at).min(zeros.len() as u64) as usize;
            let written = if at + n as u64 > full {
                // As a full disk does: part of it may land.
                let _ = tail.file.write_all_at(&zeros[..full.saturating_sub(at).min(n as u64) as usize], at);
                Err(io::Error::new(io::ErrorKind::StorageFull, "No space left on device (os error 28)"))
            } else {
                tail.file.write_all_at(&zeros[..n], at)
            };
            if let Err(e) = written {
                // Keep what was allocated whole; a partial chunk is cut off.
                let _ = tail.file.set_len(tail.allocated.max(tail.end));
                return Err(e);
            }
            at += n as u64;
        }
        tail.allocated = target;
        Ok(())
    }

    /// Waits until everything up to `offset` is on stable storage (in [`SyncMode::Normal`]:
    /// returns at once). Writers waiting together share one `fsync`.
    pub fn sync_to(&self, offset: u64) -> io::Result<()> {
        if self.mode == SyncMode::Normal {
            return self.check_failed();
        }
        self.sync_to_now(offset)
    }

    /// Syncs everything appended so far, whatever the mode.
    pub fn sync_all(&self) -> io::Result<()> {
        let end = self.tail.lock().end;
        self.sync_to_now(end)
    }

    fn check_failed(&self) -> io::Result<()> {
        match &self.sync.lock().failed {
            Some(why) => Err(io::Error::other(why.clone())),
            None => Ok(()),
        }
    }

    fn sync_to_now(&self, offset: u64) -> io::Result<()> {
        let mut state = self.sync.lock();
        loop {
            if let Some(why) = &state.failed {
                return Err(io::Error::other(why.clone()));
            }
            if state.durable >= offset {
                return Ok(());
            }
            if !state.syncing {
                break;
            }
            self.synced.wait(&mut state);
        }
        // This writer leads: it syncs everything appended so far, for itself and whoever waits.
        state.syncing = true;
        drop(state);
        let end = self.tail.lock().end;
        let result = self.sync_file.sync_data();
        let mut state = self.sync.lock();
        state.syncing = false;
        let outcome = match result {
            Ok(()) => {
                state.durable = state.durable.max(end);
                Ok(())
            }
            Err(e) => {
                let why = format!("syncing {} failed: {e}; reopen the database to recover", self.path.display());
                state.failed = Some(why.clone());
                Err(io::Error::other(why))
            }
        };
        self.synced.notify_all();
        outcome
    }
}

/// A damaged frame in a log file, with what comes before it intact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    pub file: PathBuf,
    /// Where the damaged frame starts.
    pub offset: u64,
    /// Frames before it, all intact.
    pub intact_frames: u64,
    pub why: String,
}

impl std::fmt::Display for Corruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let intact = match self.intact_frames {
            0 => "no record before it".to_string(),
            1 => "the record before it is intact".to_string(),
            n => format!("the {n} records before it are intact"),
        };
        write!(f, "{}: damaged log record at byte offset {} ({}); {intact}", self.file.display(), self.offset, self.why)
    }
}

/// A record as a frame: its length, its checksum, the checksum of those, itself.
pub fn encode_frame(payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(FRAME_HEADER + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let header = crc32fast::hash(&frame[..8]);
    frame.extend_from_slice(&header.to_le_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// A record as a frame of the first format (no header checksum).
fn encode_frame_v1(payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(FRAME_HEADER_V1 + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// Copies the written bytes of a torn frame (from `end` to the last byte that is not zero) to
/// `wal-N.log.torn-at-END`, synced; returns that path, `None` when past `end` is only zeros.
fn keep_torn(path: &Path, file: &File, end: u64, len: u64) -> io::Result<Option<(PathBuf, u64)>> {
    let Some(last) = last_nonzero(file, end, len)? else { return Ok(None) };
    let mut chunk = vec![0u8; 1 << 16];
    let aside = path.with_extension(format!("log.torn-at-{end}"));
    let copy = std::fs::OpenOptions::new().write(true).create_new(true).open(&aside);
    let copy = match copy {
        Ok(f) => f,
        // Kept by an earlier opening that stopped before cutting the log.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(Some((aside, last))),
        Err(e) => return Err(e),
    };
    let mut at = end;
    while at <= last {
        let n = (last + 1 - at).min(chunk.len() as u64) as usize;
        file.read_exact_at(&mut chunk[..n], at)?;
        copy.write_all_at(&chunk[..n], at - end)?;
        at += n as u64;
    }
    copy.sync_all()?;
    Ok(Some((aside, last)))
}

/// The offset of the last byte that is not zero in `from..len`, or `None`. Holes of a sparse
/// file are skipped (`SEEK_DATA`/`SEEK_HOLE`) and data is checked a chunk at a time, so a log
/// allocated far ahead (or extended to gigabytes of zeros) is read at the speed of its data.
fn last_nonzero(file: &File, from: u64, len: u64) -> io::Result<Option<u64>> {
    use rustix::fs::{seek, SeekFrom};
    // Where the data after `at` starts and ends (the whole rest where holes are not reported).
    // Only the descriptor's offset moves; every read here gives its own.
    let extent = |at: u64| -> (u64, u64) {
        let data = match seek(file, SeekFrom::Data(at)) {
            Ok(data) => data.max(at),
            // ENXIO: no data after `at`; anything else (no support): read it all.
            Err(e) if e == rustix::io::Errno::NXIO => return (len, len),
            Err(_) => return (at, len),
        };
        let hole = seek(file, SeekFrom::Hole(data)).map_or(len, |hole| hole.clamp(data, len));
        (data, hole)
    };
    let mut chunk = vec![0u8; 1 << 16];
    let mut last = None;
    let mut at = from;
    while at < len {
        let (data, hole) = extent(at);
        if data >= len || hole <= data {
            break;
        }
        let mut pos = data;
        while pos < hole {
            let n = (hole - pos).min(chunk.len() as u64) as usize;
            file.read_exact_at(&mut chunk[..n], pos)?;
            if !chunk[..n].iter().all(|b| *b == 0) {
                last = chunk[..n].iter().rposition(|b| *b != 0).map(|k| pos + k as u64);
            }
            pos += n as u64;
        }
        at = hole;
    }
    Ok(last)
}

/// A full disk, a quota, or the process's file size limit (`RLIMIT_FSIZE`, when SIGXFSZ is
/// ignored as `cosmoql` does).
pub fn no_room(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::StorageFull | io::ErrorKind::FileTooLarge | io::ErrorKind::QuotaExceeded)
}

/// What reading a log found.
#[derive(Debug)]
pub struct ReadLog {
    /// Where the last whole frame ends (appends go there).
    pub end: u64,
    /// The file's length past `end` that was a torn write, cut off (0: none).
    pub torn_bytes: u64,
    /// A damaged frame followed by more data (`None`: the log is sound).
    pub corruption: Option<Corruption>,
}

/// Reads a log file's frames in order, calling `each` with every intact payload and its offset;
/// stops at the end, at a torn tail, or at a damaged frame (see the module documentation).
/// `each` may stop the reading by returning an error, which is returned. The file is streamed:
/// one frame is in memory at a time.
pub fn read_frames<E>(
    path: &Path,
    mut each: impl FnMut(u64, &[u8]) -> Result<(), E>,
) -> Result<io::Result<ReadLog>, E> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    let len = match file.metadata() {
        Ok(m) => m.len(),
        Err(e) => return Ok(Err(e)),
    };
    let mut reader = io::BufReader::with_capacity(1 << 20, &file);
    let mut magic = [0u8; MAGIC.len()];
    let read_magic = len >= MAGIC.len() as u64 && io::Read::read_exact(&mut reader, &mut magic).is_ok();
    let v1 = &magic == MAGIC_V1;
    let header_size = if v1 { FRAME_HEADER_V1 } else { FRAME_HEADER };
    if !read_magic || !(&magic == MAGIC || v1) {
        // A log is created with its magic and synced before anything is appended.
        let corruption = Corruption {
            file: path.to_path_buf(),
            offset: 0,
            intact_frames: 0,
            why: "not a cosmoql log file (bad header)".into(),
        };
        return Ok(Ok(ReadLog { end: 0, torn_bytes: 0, corruption: Some(corruption) }));
    }
    let mut at = MAGIC.len() as u64;
    let mut frames = 0u64;
    let mut payload = Vec::new();
    // What follows a bad frame at `at` decides: only zeros (or nothing) after `from` is a torn
    // write; anything else is damage.
    let judge = |at: u64, from: u64, frames: u64, why: &str| -> io::Result<ReadLog> {
        let last_nonzero = last_nonzero(&file, at, len)?;
        let damaged_after = last_nonzero.is_some_and(|p| p >= from);
        Ok(if !damaged_after {
            // Zeros are allocated space, not a torn write.
            let written = last_nonzero.map_or(at, |p| (p + 1).max(at));
            ReadLog { end: at, torn_bytes: written - at, corruption: None }
        } else {
            let corruption =
                Corruption { file: path.to_path_buf(), offset: at, intact_frames: frames, why: why.to_string() };
            ReadLog { end: at, torn_bytes: 0, corruption: Some(corruption) }
        })
    };
    loop {
        if at == len {
            return Ok(Ok(ReadLog { end: len, torn_bytes: 0, corruption: None }));
        }
        if len - at < header_size as u64 {
            return Ok(judge(at, len, frames, "incomplete record header"));
        }
        let mut header = [0u8; FRAME_HEADER];
        if let Err(e) = io::Read::read_exact(&mut reader, &mut header[..header_size]) {
            return Ok(Err(e));
        }
        let size = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as u64;
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let start = at + header_size as u64;
        if header[..header_size].iter().all(|b| *b == 0) {
            // Zeros: space allocated ahead, or left after the last frame.
            return Ok(judge(at, start, frames, "a zero record header"));
        }
        if !v1 && crc32fast::hash(&header[..8]).to_le_bytes() != header[8..12] {
            // A header that does not check (a length or checksum changed since it was written):
            // its length cannot be trusted to say where the log ends.
            return Ok(judge(at, start, frames, "a damaged record header"));
        }
        if size > MAX_FRAME as u64 {
            return Ok(judge(at, start, frames, "a record length past the limit"));
        }
        if start + size > len {
            return Ok(judge(at, len, frames, "a record cut short"));
        }
        payload.resize(size as usize, 0);
        if let Err(e) = io::Read::read_exact(&mut reader, &mut payload) {
            return Ok(Err(e));
        }
        if crc32fast::hash(&payload) != crc {
            return Ok(judge(at, start + size, frames, "checksum mismatch"));
        }
        each(at, &payload)?;
        frames += 1;
        at = start + size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log file in a folder of its own, removed with the folder when dropped.
    struct Temp(PathBuf);

    impl std::ops::Deref for Temp {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl AsRef<Path> for Temp {
        fn as_ref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            if let Some(dir) = self.0.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }

    fn temp(name: &str) -> Temp {
        let dir = std::env::temp_dir().join(format!("cosmoql-wal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Temp(dir.join("wal.log"))
    }

    fn frames(path: &Path) -> (Vec<Vec<u8>>, ReadLog) {
        let mut out = Vec::new();
        let read = read_frames::<()>(path, |_, p| {
            out.push(p.to_vec());
            Ok(())
        })
        .unwrap()
        .unwrap();
        (out, read)
    }

    #[test]
    fn frames_round_trip_and_a_torn_tail_is_cut() {
        let path = temp("torn");
        let log = Log::create(&path, SyncMode::Full, Faults::none()).unwrap();
        let a = log.append(b"first").unwrap();
        let b = log.append(b"second").unwrap();
        log.sync_to(b).unwrap();
        assert!(a < b);
        drop(log);
        let (got, read) = frames(&path);
        assert_eq!(got, vec![b"first".to_vec(), b"second".to_vec()]);
        assert_eq!(read.end, b);
        // Half a frame after the last one: torn, not corrupt.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(b as usize);
        bytes.extend_from_slice(&[9, 0, 0, 0, 1, 2]);
        std::fs::write(&path, &bytes).unwrap();
        let (got, read) = frames(&path);
        assert_eq!(got.len(), 2);
        assert_eq!((read.end, read.torn_bytes, read.corruption.is_none()), (b, 6, true));
        let (log, _) = Log::open_at(&path, read.end, SyncMode::Full, Faults::none()).unwrap();
        log.append(b"third").unwrap();
        drop(log);
        assert_eq!(frames(&path).0.len(), 3);
    }

    #[test]
    fn a_damaged_frame_followed_by_more_is_corruption_with_its_offset() {
        let path = temp("corrupt");
        let log = Log::create(&path, SyncMode::Full, Faults::none()).unwrap();
        let first_end = log.append(b"one").unwrap();
        log.append(b"two").unwrap();
        log.append(b"three").unwrap();
        drop(log);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[first_end as usize + FRAME_HEADER] ^= 0xFF; // a byte of "two"
        std::fs::write(&path, &bytes).unwrap();
        let (got, read) = frames(&path);
        assert_eq!(got, vec![b"one".to_vec()]);
        let c = read.corruption.unwrap();
        assert_eq!((c.offset, c.intact_frames), (first_end, 1));
        assert!(c.to_string().contains(&format!("byte offset {first_end}")), "{c}");
    }

    /// A log of `payloads` as bytes, and where each frame starts.
    fn log_bytes(payloads: &[Vec<u8>]) -> (Vec<u8>, Vec<usize>) {
        let mut bytes = MAGIC.to_vec();
        let mut starts = Vec::new();
        for p in payloads {
            starts.push(bytes.len());
            bytes.extend_from_slice(&encode_frame(p));
        }
        (bytes, starts)
    }

    #[test]
    fn every_flipped_bit_is_damage_never_the_end_of_the_log() {
        // The case among them: a bit of a length field, which used to read as a frame
        // running past the end of the file (a torn write), and cut everything after it.
        let payloads = vec![b"first record".to_vec(), vec![7u8; 300], b"third".to_vec(), b"last".to_vec()];
        let (bytes, starts) = log_bytes(&payloads);
        let path = temp("bits");
        for byte in 0..bytes.len() {
            for bit in 0..8 {
                let mut damaged = bytes.clone();
                damaged[byte] ^= 1 << bit;
                std::fs::write(&path, &damaged).unwrap();
                let (got, read) = frames(&path);
                let hit = starts.iter().rposition(|s| *s <= byte);
                let what = format!("bit {bit} of byte {byte}");
                match hit {
                    // The magic: not a log.
                    None => assert_eq!(read.corruption.map(|c| c.offset), Some(0), "{what}"),
                    // The last frame: a damaged last frame cannot be told from a torn one; it is
                    // cut and reported (Log::open_at keeps its bytes aside).
                    Some(k) if k == payloads.len() - 1 => {
                        assert_eq!(got, payloads[..k], "{what}");
                        assert!(read.corruption.is_some() || read.torn_bytes > 0, "{what}: {read:?}");
                    }
                    // Any other: the frames before it, and the damage with its offset.
                    Some(k) => {
                        assert_eq!(got, payloads[..k], "{what}");
                        let c = read.corruption.as_ref().unwrap_or_else(|| panic!("{what}: {read:?}"));
                        assert_eq!((c.offset, c.intact_frames), (starts[k] as u64, k as u64), "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_last_record_cut_anywhere_is_a_torn_tail_kept_aside() {
        let payloads = vec![b"one".to_vec(), vec![9u8; 200]];
        let (bytes, starts) = log_bytes(&payloads);
        let path = temp("cut");
        for cut in starts[1]..bytes.len() {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let (got, read) = frames(&path);
            assert_eq!(got, payloads[..1], "cut at {cut}");
            assert!(read.corruption.is_none(), "cut at {cut}: {read:?}");
            assert_eq!(read.end, starts[1] as u64, "cut at {cut}");
            // What was written of it is copied aside before the log is cut.
            let (_, aside) = Log::open_at(&path, read.end, SyncMode::Full, Faults::none()).unwrap();
            let written = bytes[starts[1]..cut].iter().rposition(|b| *b != 0).map(|p| p + 1);
            match (written, aside) {
                (Some(n), Some(aside)) => {
                    assert_eq!(std::fs::read(&aside).unwrap(), &bytes[starts[1]..starts[1] + n], "cut at {cut}");
                    let _ = std::fs::remove_file(aside);
                }
                (None, None) => {}
                (w, a) => panic!("cut at {cut}: written {w:?}, kept {a:?}"),
            }
        }
    }

    #[test]
    fn logs_of_the_first_format_are_read_and_appended_to() {
        let path = temp("v1");
        let mut bytes = MAGIC_V1.to_vec();
        bytes.extend_from_slice(&encode_frame_v1(b"old"));
        std::fs::write(&path, &bytes).unwrap();
        let (got, read) = frames(&path);
        assert_eq!(got, vec![b"old".to_vec()]);
        let (log, _) = Log::open_at(&path, read.end, SyncMode::Full, Faults::none()).unwrap();
        log.append(b"new").unwrap();
        drop(log);
        let (got, read) = frames(&path);
        assert_eq!((got, read.corruption.is_none()), (vec![b"old".to_vec(), b"new".to_vec()], true));
    }

    #[test]
    fn a_full_disk_fails_the_append_and_leaves_the_log_whole() {
        let path = temp("full");
        let faults = Faults::none();
        let log = Log::create(&path, SyncMode::Full, Arc::clone(&faults)).unwrap();
        let end = log.append(b"kept").unwrap();
        faults.set_disk_full_at(end + 5);
        let err = log.append(b"does not fit").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert_eq!(log.len(), end);
        faults.set_disk_full_at(u64::MAX);
        log.append(b"after").unwrap();
        drop(log);
        assert_eq!(frames(&path).0, vec![b"kept".to_vec(), b"after".to_vec()]);
    }

    #[test]
    fn synced_frames_overwrite_space_allocated_ahead_and_bulk_frames_grow_the_file() {
        let path = temp("prealloc");
        let log = Log::create(&path, SyncMode::Full, Faults::none()).unwrap();
        let end = log.append(b"one").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), PREALLOCATE, "allocated ahead");
        drop(log);
        let (got, read) = frames(&path);
        assert_eq!((got.len(), read.end, read.torn_bytes, read.corruption.is_none()), (1, end, 0, true));
        let (log, _) = Log::open_at(&path, end, SyncMode::Full, Faults::none()).unwrap();
        let big = vec![7u8; PREALLOCATE as usize];
        let end = log.append_bulk(&big).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), end, "bulk frames append at the end");
        let end = log.append(b"two").unwrap();
        drop(log);
        let (got, read) = frames(&path);
        assert_eq!((got.len(), read.end), (3, end));
        assert_eq!(got[2], b"two".to_vec());
    }

    #[test]
    fn concurrent_writers_share_syncs() {
        let path = temp("group");
        let log = Arc::new(Log::create(&path, SyncMode::Full, Faults::none()).unwrap());
        std::thread::scope(|s| {
            for t in 0..8 {
                let log = Arc::clone(&log);
                s.spawn(move || {
                    for i in 0..50 {
                        let end = log.append(format!("{t}-{i}").as_bytes()).unwrap();
                        log.sync_to(end).unwrap();
                    }
                });
            }
        });
        drop(log);
        assert_eq!(frames(&path).0.len(), 400);
    }
}
