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

/// Whether data may not show `c` raw on a terminal: control characters (C0 but line breaks and
/// tabs, DEL, C1), which move the cursor, set the window title or ring the bell, and the
/// invisible marks that reorder or disguise the text around them (bidirectional embeddings,
/// overrides and isolates, left-to-right and right-to-left marks, line and paragraph
/// separators).
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `text` safe to print on a terminal: the characters of [`unsafe_char`] are written as
/// `\u{1b}`-style escapes. The one sanitizer of the binary: [`for_terminal`] applies it to
/// everything written to a terminal, and what is drawn before that (tables, whose widths count
/// the escapes) applies it first.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        escape_into(&mut out, c);
    }
    std::borrow::Cow::Owned(out)
}

fn escape_into(out: &mut String, c: char) {
    if unsafe_char(c) {
        out.push_str(&format!("\\u{{{:x}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// Text on its way to a terminal, as [`printable`] makes it, but keeping the program's own
/// styles: a Select Graphic Rendition sequence (`ESC [` digits and `;` `m`, the colours of
/// [`color`]) passes; any other escape sequence is written out. Standard output and standard
/// error go through this when they are terminals (`output.rs`), so no text, whichever module
/// prints it, reaches the terminal raw.
pub fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' {
            let sgr = rest[1..]
                .strip_prefix('[')
                .and_then(|r| r.find(|c: char| !(c.is_ascii_digit() || c == ';')).map(|at| (r, at)))
                .filter(|(r, at)| r[*at..].starts_with('m'));
            if let Some((_, at)) = sgr {
                let len = 2 + at + 1;
                out.push_str(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
        }
        escape_into(&mut out, c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_gets_the_programs_colours_and_nothing_else_raw() {
        let styled = format!("{}error:{} {}x{}", color::RED, color::RESET, color::BOLD, color::RESET);
        assert_eq!(for_terminal(&styled), styled);
        assert_eq!(for_terminal("\x1b[1;31mok\x1b[0m"), "\x1b[1;31mok\x1b[0m");
        for (hostile, shown) in [
            ("\x1b]0;title\x07", "\\u{1b}]0;title\\u{7}"),
            ("\x1b[2J", "\\u{1b}[2J"),
            ("\x1b[10;10H", "\\u{1b}[10;10H"),
            ("\x1b[", "\\u{1b}["),
            ("\x1b", "\\u{1b}"),
            ("\u{9b}2J", "\\u{9b}2J"),
            ("a\u{202e}b\u{2066}c\u{200f}", "a\\u{202e}b\\u{2066}c\\u{200f}"),
            ("cr\rlf\n\ttab", "cr\\u{d}lf\n\ttab"),
        ] {
            assert_eq!(for_terminal(hostile), shown);
            assert_eq!(printable(hostile), shown);
        }
        // Data's own colour sequence is escaped by `printable` before it is styled.
        assert_eq!(printable("\x1b[31m"), "\\u{1b}[31m");
    }
}
