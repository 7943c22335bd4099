//! Failures to inject into the log and checkpoints, and pauses (tests of the failure paths and
//! of what runs meanwhile). Public only with the `fault-injection` feature: a database opened by
//! a user's program never has any.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

/// Failures to inject, and pauses (tests of the failure paths and of what runs meanwhile).
#[derive(Debug)]
pub struct Faults {
    /// The disk is full once a log file would pass this many bytes: allocating past it fails
    /// with "no space left on device".
    pub disk_full_at: AtomicU64,
    /// Bytes the log allocates at a time; 0: its own chunk (`wal::PREALLOCATE`), and a test sets 1
    /// to reach a full disk at once.
    pub preallocate: AtomicU64,
    /// `Some(n)`: a checkpoint may take `n` more steps, then waits before each (see
    /// [`Faults::hold_checkpoints`]); `None`: it never waits.
    checkpoint_hold: Mutex<Option<u64>>,
    checkpoint_released: Condvar,
    /// Checkpoints waiting at [`Faults::checkpoint_step`] now.
    checkpoints_held: AtomicU64,
    /// Steps checkpoints have taken (stretches they went on to copy).
    checkpoint_steps: AtomicU64,
    /// Microseconds a checkpoint sleeps before copying each stretch (a slow disk, so that a
    /// crash test's kills land inside checkpoints).
    pub checkpoint_step_micros: AtomicU64,
    /// Checkpoints fail at their first step with an I/O error while set.
    pub fail_checkpoints: std::sync::atomic::AtomicBool,
    /// Checkpoints begun (tests count them).
    pub checkpoints_begun: AtomicU64,
}

impl Faults {
    /// No failure planned.
    pub fn none() -> Arc<Faults> {
        Arc::new(Faults {
            disk_full_at: AtomicU64::new(u64::MAX),
            preallocate: AtomicU64::new(0),
            checkpoint_hold: Mutex::new(None),
            checkpoint_released: Condvar::new(),
            checkpoints_held: AtomicU64::new(0),
            checkpoint_steps: AtomicU64::new(0),
            checkpoint_step_micros: AtomicU64::new(0),
            fail_checkpoints: std::sync::atomic::AtomicBool::new(false),
            checkpoints_begun: AtomicU64::new(0),
        })
    }

    /// Makes the disk full once a log file holds `bytes` (`u64::MAX`: never), and allocates
    /// only what each frame needs (so the next frame meets it).
    pub fn set_disk_full_at(&self, bytes: u64) {
        self.disk_full_at.store(bytes, Ordering::Relaxed);
        self.preallocate.store(1, Ordering::Relaxed);
    }

    /// Holds checkpoints after they have begun (their new log is live) and before they copy each
    /// stretch of a partition, until called again with `false` (or let through a step at a time
    /// by [`Faults::release_checkpoint_steps`]).
    pub fn hold_checkpoints(&self, hold: bool) {
        *self.checkpoint_hold.lock() = hold.then_some(0);
        self.checkpoint_released.notify_all();
    }

    /// Lets held checkpoints take `steps` more steps (each copies one stretch) before they are
    /// held again.
    pub fn release_checkpoint_steps(&self, steps: u64) {
        if let Some(n) = self.checkpoint_hold.lock().as_mut() {
            *n += steps;
        }
        self.checkpoint_released.notify_all();
    }

    /// How many steps checkpoints have taken so far.
    pub fn checkpoint_steps_taken(&self) -> u64 {
        self.checkpoint_steps.load(Ordering::Acquire)
    }

    /// How many checkpoints are being held now.
    pub fn checkpoints_held(&self) -> u64 {
        self.checkpoints_held.load(Ordering::Acquire)
    }

    /// Where a checkpoint waits while held (or slowed).
    pub(crate) fn checkpoint_step(&self) {
        let micros = self.checkpoint_step_micros.load(Ordering::Relaxed);
        if micros > 0 {
            std::thread::sleep(std::time::Duration::from_micros(micros));
        }
        let mut hold = self.checkpoint_hold.lock();
        if *hold == Some(0) {
            self.checkpoints_held.fetch_add(1, Ordering::AcqRel);
            while *hold == Some(0) {
                self.checkpoint_released.wait(&mut hold);
            }
            self.checkpoints_held.fetch_sub(1, Ordering::AcqRel);
        }
        if let Some(n) = hold.as_mut() {
            *n -= 1;
        }
        self.checkpoint_steps.fetch_add(1, Ordering::AcqRel);
    }
}
