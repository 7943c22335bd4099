//! Text on a terminal: its colours, the columns a string takes, and making data safe to print.
//! The one home of these rules for every other module of the binary.

/// ANSI colours, used only when writing to a terminal.
pub mod color {
    pub const RESET: &str = "\x1b[0m";
    pub const BOLD: &str = "\x1b[1m";
    pub const DIM: &str = "\x1b[2m";
    pub const RED: &str = "\x1b[31m";
    pub const GREEN: &str = "\x1b[32m";
    pub const YELLOW: &str = "\x1b[33m";
    pub const BLUE: &str = "\x1b[34m";
    pub const MAGENTA: &str = "\x1b[35m";
    pub const CYAN: &str = "\x1b[36m";
}

/// Whether to colour a stream that is (or is not) a terminal: never with `NO_COLOR` set or on a
/// terminal that says it takes none (`TERM=dumb`).
pub fn colors_for(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none() && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// System properties a `SELECT *` returns; tables leave them out (`.mode json` shows them).
pub const SYSTEM_PROPERTIES: [&str; 4] = ["_rid", "_self", "_etag", "_attachments"];

/// The columns `text` takes on a terminal (CJK and most emoji take two, combining marks none).
pub fn width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text` safe to print on a terminal: control characters (C0 but line breaks and tabs, DEL,
/// C1) are written as `\u{1b}`-style escapes, so data can never move the cursor, set the window
/// title or ring the bell.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let escape = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
