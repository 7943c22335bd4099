//! Standard output with its failures kept: every write goes through [`stdout`], which notes the
//! first failure. A closed pipe (`cosmoql ... | head`) ends the program quietly with success; any
//! other failure (a full disk, `> /dev/full`) is reported once and makes the exit status 1.

use std::io::{self, Write};
use std::sync::Mutex;

/// How writing to standard output went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The reader went away: stop, quietly.
    Closed,
    /// Anything else: an error to report.
    Failed(String),
}

static FAILURE: Mutex<Option<Failure>> = Mutex::new(None);

fn note(e: &io::Error) {
    let mut slot = FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        *slot = Some(if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::Closed
        } else {
            Failure::Failed(format!("cannot write to standard output: {e}"))
        });
    }
}

/// The first failure to write to standard output, if any.
pub fn failure() -> Option<Failure> {
    FAILURE.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Standard output (locked), noting failures.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// See [`stdout`].
#[derive(Debug)]
pub struct Stdout(io::StdoutLock<'static>);

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).inspect_err(note)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().inspect_err(note)
    }
}

impl Drop for Stdout {
    fn drop(&mut self) {
        // Buffered bytes must reach the file (or fail) before the exit status is decided.
        let _ = self.flush();
    }
}

/// `println!` through [`stdout`] (a failure is noted, never a panic).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::output::stdout(), $($arg)*);
    }};
}

/// `print!` through [`stdout`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!($crate::output::stdout(), $($arg)*);
    }};
}

/// The terminal's width in columns when standard output is one (its size, else `$COLUMNS`).
pub fn terminal_columns() -> Option<usize> {
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return None;
    }
    console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| cols as usize)
        .or_else(|| std::env::var("COLUMNS").ok()?.parse().ok())
        .filter(|c| *c >= 20)
}
