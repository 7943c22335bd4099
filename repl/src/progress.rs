//! Progress on a terminal: a bar for reading a file (drawn on standard error only when it is a
//! terminal; `indicatif` hides it otherwise) and a reader that moves it.

use std::io::{self, Read};

use indicatif::{ProgressBar, ProgressStyle};

/// A bar for reading `len` bytes of `name` (a spinner counting bytes when the length is not
/// known: standard input, a device).
pub fn file_bar(len: u64, name: &str) -> ProgressBar {
    if len == 0 {
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {bytes} {bytes_per_sec}") {
            bar.set_style(style);
        }
        bar.set_message(crate::text::printable(name).into_owned());
        return bar;
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(crate::text::printable(name).into_owned());
    bar
}

/// A bar for `len` steps of a long computation (`what` says what they are).
pub fn steps_bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} eta {eta}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(crate::text::printable(what).into_owned());
    bar
}

/// A spinner saying `what` is under way (a step whose length is not known).
pub fn spinner(what: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_message(crate::text::printable(what).into_owned());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// A reader that moves a progress bar as bytes go through it (`import` and the REPL's `.import`).
pub struct Counting<R> {
    pub inner: R,
    pub bar: ProgressBar,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}
