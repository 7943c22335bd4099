//! Where time comes from, for throughput, time to live and the change feed's timestamps:
//! [`SystemClock`] in the API and the REPL, [`ManualClock`] in tests (it never sleeps).

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where time comes from.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Time since an arbitrary start.
    fn now(&self) -> Duration;
    /// Waits (a manual clock moves forward instead).
    fn sleep(&self, d: Duration);
    /// Seconds since the Unix epoch (an item's `_ts`, and what its time to live counts from).
    fn unix_seconds(&self) -> u64;
}

/// Real time.
#[derive(Debug)]
pub struct SystemClock {
    start: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock { start: Instant::now() }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
    fn unix_seconds(&self) -> u64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }
}

/// Time that moves only when told to (or when something sleeps on it). It starts at
/// [`ManualClock::EPOCH`] seconds after the Unix epoch.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: Mutex<Duration>,
}

impl ManualClock {
    /// Where a manual clock's Unix time starts: 2026-01-01T00:00:00Z.
    pub const EPOCH: u64 = 1_767_225_600;

    pub fn advance(&self, d: Duration) {
        if let Ok(mut now) = self.now.lock() {
            *now = now.saturating_add(d);
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        self.now.lock().map_or(Duration::ZERO, |n| *n)
    }
    fn sleep(&self, d: Duration) {
        self.advance(d);
    }
    fn unix_seconds(&self) -> u64 {
        ManualClock::EPOCH + self.now().as_secs()
    }
}
