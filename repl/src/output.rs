//! Standard output with its failures kept: every write goes through [`stdout`], which notes the
//! first failure. A closed pipe (`cosmoql ... | head`) ends the program quietly with success; any
//! other failure (a full disk, `> /dev/full`) is reported once and makes the exit status 1.

use std::io::{self, IsTerminal, Write};
use std::sync::{Mutex, OnceLock};

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

/// Where results go instead of standard output (`.output FILE`, `.once FILE`).
#[derive(Debug)]
pub struct Redirect {
    file: io::BufWriter<std::fs::File>,
    path: String,
}

static REDIRECT: Mutex<Option<Redirect>> = Mutex::new(None);

/// Sends results to `path` (created or truncated) from now on; `None`: back to standard output.
pub fn redirect(path: Option<&str>) -> Result<(), String> {
    let mut slot = REDIRECT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(mut old) = slot.take() {
        old.file.flush().map_err(|e| format!("cannot write {}: {e}", old.path))?;
    }
    if let Some(path) = path {
        let file = std::fs::File::create(path).map_err(|e| format!("cannot create {path}: {e}"))?;
        *slot = Some(Redirect { file: io::BufWriter::new(file), path: path.to_string() });
    }
    Ok(())
}

/// Whether results go to a file (`.output`, `.once`).
pub fn redirected() -> bool {
    REDIRECT.lock().unwrap_or_else(|p| p.into_inner()).is_some()
}

/// Standard output (locked), or the `.output` file, noting failures.
pub fn stdout() -> Stdout {
    let redirect = REDIRECT.lock().unwrap_or_else(|p| p.into_inner());
    if redirect.is_some() {
        Stdout::File(redirect)
    } else {
        drop(redirect);
        screen()
    }
}

/// Standard output itself, never the `.output` file: what the user is told, not results.
pub fn screen() -> Stdout {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    Stdout::Terminal(io::stdout().lock(), *TERMINAL.get_or_init(|| io::stdout().is_terminal()))
}

/// Standard error (locked); on a terminal, through the same guard as standard output.
pub fn stderr() -> Stderr {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    Stderr(io::stderr().lock(), *TERMINAL.get_or_init(|| io::stderr().is_terminal()))
}

/// Writes `buf` to `out`, through [`crate::text::for_terminal`] when `out` is a terminal: no
/// text, whichever module prints it, reaches a terminal with its control characters raw.
fn guarded(out: &mut impl Write, terminal: bool, buf: &[u8]) -> io::Result<usize> {
    if !terminal {
        return out.write(buf);
    }
    let text = String::from_utf8_lossy(buf);
    out.write_all(crate::text::for_terminal(&text).as_bytes())?;
    Ok(buf.len())
}

/// See [`stdout`]: standard output (and whether it is a terminal), or the `.output` file.
#[derive(Debug)]
pub enum Stdout {
    Terminal(io::StdoutLock<'static>, bool),
    File(std::sync::MutexGuard<'static, Option<Redirect>>),
}

/// See [`stderr`].
#[derive(Debug)]
pub struct Stderr(io::StderrLock<'static>, bool);

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        guarded(&mut self.0, self.1, buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stdout::Terminal(out, terminal) => guarded(out, *terminal, buf).inspect_err(note),
            Stdout::File(slot) => match slot.as_mut() {
                Some(r) => r.file.write(buf),
                None => Ok(buf.len()),
            },
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stdout::Terminal(out, _) => out.flush().inspect_err(note),
            Stdout::File(slot) => match slot.as_mut() {
                Some(r) => r.file.flush(),
                None => Ok(()),
            },
        }
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

/// `eprintln!` through [`stderr`] (a failure is ignored, as `eprintln!` would panic on it).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::output::stderr(), $($arg)*);
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
    if !io::stdout().is_terminal() || redirected() {
        return None;
    }
    console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| cols as usize)
        .or_else(|| std::env::var("COLUMNS").ok()?.parse().ok())
        .filter(|c| *c >= 20)
}

/// The terminal's height in rows when standard output is one (its size, else `$LINES`).
pub fn terminal_rows() -> Option<usize> {
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() || redirected() {
        return None;
    }
    console::Term::stdout()
        .size_checked()
        .map(|(rows, _)| rows as usize)
        .or_else(|| std::env::var("LINES").ok()?.parse().ok())
        .filter(|r| *r >= 2)
}

/// Shows `text` through `$PAGER` (default `less -FRX`: quits when it fits, keeps colours and the
/// screen); prints it directly when there is no pager to run.
pub fn page(text: &str) {
    let pager = std::env::var("PAGER").ok().filter(|p| !p.trim().is_empty()).unwrap_or_else(|| "less -FRX".into());
    let child = std::process::Command::new("sh").args(["-c", &pager]).stdin(std::process::Stdio::piped()).spawn();
    match child {
        Ok(mut child) => {
            if let Some(mut stdin) = child.stdin.take() {
                // The reader may quit early (`q` in less): a closed pipe is no error.
                let _ = stdin.write_all(text.as_bytes());
            }
            // A pager that is not there (`sh: less: not found`, status 127): the text goes out
            // as it is.
            if child.wait().is_ok_and(|s| s.code() == Some(127)) {
                let _ = stdout().write_all(text.as_bytes());
            }
        }
        Err(_) => {
            let _ = stdout().write_all(text.as_bytes());
        }
    }
}
