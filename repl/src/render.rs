//! Rendering results: tables (nested values as compact, truncated JSON), JSON (pretty, coloured on
//! a terminal), and the bars of `.stats`.

use cosmoql::value::{to_json_string_pretty, Value};

use crate::text::{color, printable, width};

/// Widest a table cell gets before it is cut with `…`.
pub const MAX_CELL: usize = 40;

/// `text` cut to at most `max` terminal columns, ending in `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// The narrowest a column is cut to when a table is fitted to the terminal.
const MIN_FITTED: usize = 6;

/// Fits column `widths` into `max` terminal columns (a table's borders take 3 per column and 1):
/// wide columns give way first, down to their header's width (at least [`MIN_FITTED`]); if that
/// is not enough, the last columns are left out (behind a `…` column); a single column left too
/// wide is cut further. Returns how many columns are shown.
fn fit(widths: &mut [usize], headers: &[usize], max: usize) -> usize {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 3 * w.len() + 1;
    let shrink = |widths: &mut [usize], floors: &[usize], max: usize| {
        while total(widths) > max {
            let widest =
                widths.iter().zip(floors).enumerate().filter(|(_, (w, f))| w > f).max_by_key(|(_, (w, _))| **w);
            let Some((i, _)) = widest else { break };
            widths[i] -= 1;
        }
    };
    let floors: Vec<usize> = widths.iter().zip(headers).map(|(w, h)| (*w).min((*h).max(MIN_FITTED))).collect();
    shrink(widths, &floors, max);
    let mut shown = widths.len();
    // Room for the `…` column that says some are left out (4 columns).
    while shown > 1 && total(widths) > max && total(&widths[..shown]) + 4 > max {
        shown -= 1;
    }
    let room = if shown < widths.len() { max.saturating_sub(4) } else { max };
    let floors = vec![MIN_FITTED; shown];
    shrink(&mut widths[..shown], &floors, room);
    shown
}

/// How [`table_of`] draws.
#[derive(Debug, Clone)]
pub struct TableOptions {
    /// `SELECT *`: leave the system properties out.
    pub hide_system: bool,
    pub max_rows: usize,
    pub colored: bool,
    /// A terminal's columns: the table is fitted to them.
    pub max_width: Option<usize>,
    /// `+`, `-` and `|` instead of box drawing.
    pub ascii: bool,
    pub display: crate::formats::Display,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            hide_system: false,
            max_rows: 100,
            colored: false,
            max_width: None,
            ascii: false,
            display: crate::formats::Display::default(),
        }
    }
}

/// Renders the first rows of a result of `total` rows (the others were counted, not kept) as a
/// table with a row count line. Objects give one column per property (in order of first
/// appearance); other values go to a `value` column. At most `max_rows` rows are drawn.
///
/// With `max_width` (a terminal's columns), the table is fitted to it: wide columns are cut
/// (cells end in `…`) and, if needed, the last columns are left out behind a `…` column.
pub fn table_of(items: &[Value], total: usize, options: &TableOptions) -> String {
    let TableOptions { hide_system, max_rows, colored, max_width, ascii, display } = options;
    let (colored, max_width) = (*colored, *max_width);
    let shown = &items[..items.len().min(*max_rows)];
    let columns = crate::formats::Columns::of(shown, *hide_system);
    let rows: Vec<Vec<(String, bool)>> = shown
        .iter()
        .map(|item| {
            columns
                .row(item)
                .into_iter()
                .map(|v| {
                    let text = crate::formats::text_of(v, display);
                    (
                        truncate(&printable(&text.replace(['\n', '\r', '\t'], " ")), MAX_CELL),
                        matches!(v, Some(Value::Number(_))),
                    )
                })
                .collect()
        })
        .collect();
    let columns = columns.names;
    // Headers are property names from the data: escaped like cells.
    let mut headers: Vec<String> = columns.iter().map(|c| printable(c).replace(['\n', '\t'], " ")).collect();
    let mut widths: Vec<usize> = headers
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let header = if display.headers { width(c) } else { 1 };
            rows.iter().map(|r| width(&r[i].0)).max().unwrap_or(0).max(header)
        })
        .collect();
    let mut rows = rows;
    let mut hidden = 0;
    if let Some(max) = max_width {
        let header_widths: Vec<usize> = headers.iter().map(|h| width(h)).collect();
        let shown = fit(&mut widths, &header_widths, max);
        hidden = widths.len() - shown;
        widths.truncate(shown);
        headers.truncate(shown);
        for (h, w) in headers.iter_mut().zip(&widths) {
            *h = truncate(h, *w);
        }
        for row in &mut rows {
            row.truncate(shown);
            for ((text, _), w) in row.iter_mut().zip(&widths) {
                *text = truncate(text, *w);
            }
        }
        if hidden > 0 {
            widths.push(1);
            headers.push("…".into());
            for row in &mut rows {
                row.push(("…".into(), false));
            }
        }
    }
    let mut out = String::new();
    let (horizontal, vertical) = if *ascii { ("-", "|") } else { ("─", "│") };
    let line = |left: &str, mid: &str, right: &str| {
        let (left, mid, right) = if *ascii { ("+", "+", "+") } else { (left, mid, right) };
        let mut s = left.to_string();
        for (i, w) in widths.iter().enumerate() {
            if i > 0 {
                s.push_str(mid);
            }
            s.push_str(&horizontal.repeat(w + 2));
        }
        s.push_str(right);
        s.push('\n');
        s
    };
    let pad = |text: &str, w: usize, right: bool| {
        let n = w.saturating_sub(width(text));
        if right {
            format!("{}{text}", " ".repeat(n))
        } else {
            format!("{text}{}", " ".repeat(n))
        }
    };
    out.push_str(&line("┌", "┬", "┐"));
    if display.headers {
        out.push_str(vertical);
        for (c, w) in headers.iter().zip(&widths) {
            if colored {
                out.push_str(&format!(" {}{}{} {vertical}", color::BOLD, pad(c, *w, false), color::RESET));
            } else {
                out.push_str(&format!(" {} {vertical}", pad(c, *w, false)));
            }
        }
        out.push('\n');
        out.push_str(&line("├", "┼", "┤"));
    }
    for row in &rows {
        out.push_str(vertical);
        for ((text, numeric), w) in row.iter().zip(&widths) {
            out.push_str(&format!(" {} {vertical}", pad(text, *w, *numeric)));
        }
        out.push('\n');
    }
    out.push_str(&line("└", "┴", "┘"));
    let n = total.max(items.len());
    out.push_str(&format!("({n} {})", if n == 1 { "row" } else { "rows" }));
    if n > shown.len() {
        out.push_str(&format!(", the first {} shown (.set maxrows N, or .mode json)", shown.len()));
    }
    if hidden > 0 {
        out.push_str(&format!(
            "; {hidden} column{} left out to fit the terminal (.mode json shows them)",
            if hidden == 1 { "" } else { "s" }
        ));
    }
    out.push('\n');
    out
}

/// Pretty JSON with colours for keys, strings, numbers and literals.
pub fn json_pretty(v: &Value, colored: bool) -> String {
    let text = to_json_string_pretty(v).unwrap_or_default();
    if !colored {
        return text;
    }
    colorize_json(&text)
}

/// Adds ANSI colours to JSON text (keys cyan, strings green, numbers yellow, literals magenta).
pub fn colorize_json(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() * 2);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' {
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(bytes.len());
            let s = &text[start..i];
            let is_key = text[i..].trim_start().starts_with(':');
            let c = if is_key { color::CYAN } else { color::GREEN };
            out.push_str(c);
            out.push_str(s);
            out.push_str(color::RESET);
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                i += 1;
            }
            out.push_str(color::YELLOW);
            out.push_str(&text[start..i]);
            out.push_str(color::RESET);
        } else if text[i..].starts_with("true") || text[i..].starts_with("null") || text[i..].starts_with("false") {
            let len = if text[i..].starts_with("false") { 5 } else { 4 };
            out.push_str(color::MAGENTA);
            out.push_str(&text[i..i + len]);
            out.push_str(color::RESET);
            i += len;
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// A horizontal bar of `width` cells for `fraction` (0..=1), with eighth-block precision.
pub fn bar(fraction: f64, width: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (fraction.clamp(0.0, 1.0) * (width * 8) as f64).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        s.push(PARTS[eighths % 8]);
    }
    let used = s.chars().count();
    s.push_str(&" ".repeat(width.saturating_sub(used)));
    s
}

/// Bytes in human units.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_in_tables() {
        let item = parse_json(r#"{"a\u001b]0;pwned\u0007": "x\u001b[2Jy\u0007", "n": "\u009b1m"}"#).unwrap();
        let t = table_of(&[item], 1, &TableOptions { max_rows: 10, ..TableOptions::default() });
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t:?}");
        assert!(t.contains("x\\u{1b}[2Jy\\u{7}"), "{t}");
        assert_eq!(printable("line\nnext\tok"), "line\nnext\tok");
        assert_eq!(printable("\u{7f}"), "\\u{7f}");
    }
    use cosmoql::value::parse_json;

    #[test]
    fn tables_take_columns_from_objects_and_truncate_nested_values() {
        let items = vec![
            parse_json(r#"{"id": "a", "n": 1, "tags": ["x","y"]}"#).unwrap(),
            parse_json(r#"{"id": "b", "deep": {"k": "a very long string that goes on and on and on"}}"#).unwrap(),
        ];
        let t = table_of(&items, items.len(), &TableOptions { hide_system: true, ..TableOptions::default() });
        assert!(t.contains("│ id │"), "{t}");
        assert!(t.contains(r#"["x","y"]"#), "{t}");
        assert!(t.contains('…'), "{t}");
        assert!(t.ends_with("(2 rows)\n"), "{t}");
    }

    #[test]
    fn scalars_go_to_a_value_column() {
        let items = vec![Value::from(1.0), Value::from("two")];
        let t =
            table_of(&items, items.len(), &TableOptions { hide_system: true, max_rows: 1, ..TableOptions::default() });
        assert!(t.contains("value"), "{t}");
        assert!(t.contains("the first 1 shown"), "{t}");
    }

    #[test]
    fn bars_have_the_requested_width() {
        assert_eq!(bar(1.0, 10).chars().count(), 10);
        assert_eq!(bar(0.0, 10).chars().count(), 10);
        assert_eq!(bar(0.55, 10).chars().count(), 10);
    }

    fn widths_of(table: &str) -> Vec<usize> {
        table.lines().filter(|l| l.starts_with(['┌', '│', '├', '└'])).map(width).collect()
    }

    #[test]
    fn wide_characters_keep_the_borders_straight() {
        let items = vec![
            parse_json(r#"{"name": "東京タワー", "tag": "🗼"}"#).unwrap(),
            parse_json(r#"{"name": "Paris", "tag": "tower"}"#).unwrap(),
        ];
        let t = table_of(&items, 2, &TableOptions { hide_system: true, ..TableOptions::default() });
        let w = widths_of(&t);
        assert!(w.iter().all(|x| *x == w[0]), "{t}");
        assert!(t.contains("│ 東京タワー │"), "{t}");
    }

    #[test]
    fn tables_fit_the_terminal_cutting_wide_columns_then_leaving_columns_out() {
        let long = "x".repeat(60);
        let item = parse_json(&format!(r#"{{"a": "{long}", "b": "東京タワー東京タワー東京タワー", "c": 1}}"#)).unwrap();
        let t = table_of(
            std::slice::from_ref(&item),
            1,
            &TableOptions { hide_system: true, max_width: Some(40), ..TableOptions::default() },
        );
        let w = widths_of(&t);
        assert!(w.iter().all(|x| *x == w[0] && *x <= 40), "{t}");
        assert!(t.contains('…'), "{t}");
        // Too many columns for the width: the last ones are left out, and it says so.
        let many: String = (0..20).map(|i| format!(r#""column{i}": {i}"#)).collect::<Vec<_>>().join(",");
        let item = parse_json(&format!("{{{many}}}")).unwrap();
        let t =
            table_of(&[item], 1, &TableOptions { hide_system: true, max_width: Some(50), ..TableOptions::default() });
        let w = widths_of(&t);
        assert!(w.iter().all(|x| *x == w[0] && *x <= 50), "{t}");
        assert!(t.contains("columns left out to fit the terminal"), "{t}");
        assert!(t.contains("column0") && !t.contains("column19"), "{t}");
    }
}
