//! Output modes: how results are shown. The terminal modes (`table`, `ascii`, `line`,
//! `markdown`) draw the first `maxrows` results; `csv`, `tsv`, `json` and `ndjson` stream every
//! result.
//!
//! Every mode shows a result as its JSON holds it (see `Printer::push`): properties in order of
//! first appearance make the columns; a result that is not an object goes to a `value` column; a
//! property a row lacks (undefined) shows as `.undefinedvalue` (empty by default), null as
//! `.nullvalue` (`null` by default); nested values as compact JSON.

use cosmoql::value::{format_number, to_json_string, Value};

use crate::text::SYSTEM_PROPERTIES;

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Unicode box drawing, fitted to the terminal (also `box`).
    Table,
    /// The same table drawn with `+`, `-` and `|`.
    Ascii,
    /// One `name = value` line per property, a blank line between results (psql's `\x`).
    Line,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// RFC 4180 comma-separated values, a header line first.
    Csv,
    /// Tab-separated values (tabs, line breaks and backslashes escaped), a header line first.
    Tsv,
    /// One JSON array per statement.
    Json,
    /// One JSON value per line.
    Ndjson,
}

impl Mode {
    /// Every name `.mode` and `--mode` take.
    pub const NAMES: &'static str = "table|box|ascii|line|markdown|csv|tsv|json|ndjson";

    pub fn parse(name: &str) -> Option<Mode> {
        Some(match name {
            "table" | "box" => Mode::Table,
            "ascii" => Mode::Ascii,
            "line" | "expanded" => Mode::Line,
            "markdown" | "md" => Mode::Markdown,
            "csv" => Mode::Csv,
            "tsv" | "tabs" => Mode::Tsv,
            "json" => Mode::Json,
            "ndjson" | "jsonl" => Mode::Ndjson,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Table => "table",
            Mode::Ascii => "ascii",
            Mode::Line => "line",
            Mode::Markdown => "markdown",
            Mode::Csv => "csv",
            Mode::Tsv => "tsv",
            Mode::Json => "json",
            Mode::Ndjson => "ndjson",
        }
    }

    /// Draws the first `maxrows` results once they are all in (the others are counted).
    pub fn is_drawn(self) -> bool {
        matches!(self, Mode::Table | Mode::Ascii | Mode::Line | Mode::Markdown)
    }
}

/// What the text modes show for null and undefined, and whether they print a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Display {
    pub headers: bool,
    pub null: String,
    pub undefined: String,
}

impl Default for Display {
    fn default() -> Self {
        Display { headers: true, null: "null".into(), undefined: String::new() }
    }
}

/// The columns of a set of results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    pub names: Vec<String>,
    /// The last column holds the results that are not objects.
    value_column: bool,
}

impl Columns {
    /// Properties in order of first appearance (`hide_system`: without `_rid`, `_self`, ...);
    /// a `value` column when some results are not objects.
    pub fn of<'a>(items: impl IntoIterator<Item = &'a Value>, hide_system: bool) -> Columns {
        let mut names: Vec<String> = Vec::new();
        let mut has_scalars = false;
        for item in items {
            match item.as_object() {
                Some(map) => {
                    for key in map.keys() {
                        if hide_system && SYSTEM_PROPERTIES.contains(&key.as_str()) {
                            continue;
                        }
                        if !names.iter().any(|c| c == key) {
                            names.push(key.clone());
                        }
                    }
                }
                None => has_scalars = true,
            }
        }
        let value_column = has_scalars || names.is_empty();
        if value_column {
            names.push(if names.iter().any(|c| c == "value") { "(value)".into() } else { "value".into() });
        }
        Columns { names, value_column }
    }

    /// The row of `item`: one value per column (`None`: the item has no such property).
    pub fn row<'a>(&self, item: &'a Value) -> Vec<Option<&'a Value>> {
        let last = self.names.len() - 1;
        self.names
            .iter()
            .enumerate()
            .map(|(i, name)| match item.as_object() {
                Some(_) if self.value_column && i == last => None,
                Some(map) => map.get(name),
                None if i == last => Some(item),
                None => None,
            })
            .collect()
    }

    /// Whether `item` has properties no column holds (it came after the columns were fixed).
    pub fn misses(&self, item: &Value) -> bool {
        item.as_object().is_some_and(|map| {
            map.keys().any(|k| !SYSTEM_PROPERTIES.contains(&k.as_str()) && !self.names.iter().any(|n| n == k))
        })
    }
}

/// A value as text: strings bare, numbers as JavaScript prints them, null and undefined as
/// `display` says, arrays and objects as compact JSON.
pub fn text_of(v: Option<&Value>, display: &Display) -> String {
    match v {
        None | Some(Value::Undefined) => display.undefined.clone(),
        Some(Value::Null) => display.null.clone(),
        Some(Value::String(s)) => s.to_string(),
        Some(Value::Number(n)) => format_number(*n),
        Some(other) => to_json_string(other).unwrap_or_default(),
    }
}

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote, a line break, or spaces at
/// its ends.
pub fn csv_field(text: &str) -> String {
    let quote = text.contains([',', '"', '\n', '\r']) || text.starts_with(' ') || text.ends_with(' ');
    if quote {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// One TSV field: tabs, line breaks and backslashes escaped (`\t`, `\n`, `\r`, `\\`).
pub fn tsv_field(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// One line of a CSV or TSV output.
pub fn delimited(fields: &[String], mode: Mode) -> String {
    let (sep, each): (&str, fn(&str) -> String) = if mode == Mode::Csv { (",", csv_field) } else { ("\t", tsv_field) };
    let mut line = fields.iter().map(|f| each(f)).collect::<Vec<_>>().join(sep);
    line.push('\n');
    line
}

fn printable_cell(text: &str) -> String {
    crate::text::printable(&text.replace(['\n', '\r', '\t'], " ")).into_owned()
}

/// A Markdown table of `items` (pipes escaped, line breaks as spaces).
pub fn markdown(items: &[Value], columns: &Columns, display: &Display) -> String {
    let cell = |t: &str| printable_cell(t).replace('|', "\\|");
    let mut out = String::new();
    if display.headers {
        out.push_str(&format!("| {} |\n", columns.names.iter().map(|n| cell(n)).collect::<Vec<_>>().join(" | ")));
        out.push_str(&format!("|{}\n", " --- |".repeat(columns.names.len())));
    }
    for item in items {
        let cells: Vec<String> = columns.row(item).into_iter().map(|v| cell(&text_of(v, display))).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// `name = value` lines, names right-aligned, a blank line between results (sqlite3's line mode,
/// psql's expanded display): for results too wide for a table.
pub fn line_mode(items: &[Value], columns: &Columns, display: &Display) -> String {
    let names: Vec<String> = columns.names.iter().map(|n| printable_cell(n)).collect();
    let width = names.iter().map(|n| crate::text::width(n)).max().unwrap_or(0);
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for (name, v) in names.iter().zip(columns.row(item)) {
            if v.is_none() && display.undefined.is_empty() {
                continue; // the result has no such property
            }
            let pad = " ".repeat(width - crate::text::width(name));
            out.push_str(&format!("{pad}{name} = {}\n", printable_cell(&text_of(v, display))));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cosmoql::value::parse_json;

    fn items() -> Vec<Value> {
        vec![
            parse_json(r#"{"name": "Ada, \"the first\"", "n": 1, "tags": ["a", "b"], "note": null}"#).unwrap(),
            parse_json(r#"{"name": "Bo|b\tc", "n": 2.5}"#).unwrap(),
        ]
    }

    #[test]
    fn csv_and_tsv_quote_and_escape() {
        let items = items();
        let cols = Columns::of(&items, true);
        let d = Display::default();
        let rows: String = items
            .iter()
            .map(|i| {
                let f: Vec<String> = cols.row(i).into_iter().map(|v| text_of(v, &d)).collect();
                delimited(&f, Mode::Csv)
            })
            .collect();
        assert_eq!(
            format!("{}{rows}", delimited(&cols.names, Mode::Csv)),
            "name,n,tags,note\n\"Ada, \"\"the first\"\"\",1,\"[\"\"a\"\",\"\"b\"\"]\",null\nBo|b\tc,2.5,,\n"
        );
        let f: Vec<String> = cols.row(&items[1]).into_iter().map(|v| text_of(v, &d)).collect();
        assert_eq!(delimited(&f, Mode::Tsv), "Bo|b\\tc\t2.5\t\t\n");
    }

    #[test]
    fn markdown_and_line_modes() {
        let items = items();
        let cols = Columns::of(&items, true);
        let d = Display { null: "NULL".into(), ..Display::default() };
        assert_eq!(
            markdown(&items, &cols, &d),
            "| name | n | tags | note |\n| --- | --- | --- | --- |\n| Ada, \"the first\" | 1 | [\"a\",\"b\"] | NULL |\n\
             | Bo\\|b c | 2.5 |  |  |\n"
        );
        assert_eq!(
            line_mode(&items, &cols, &d),
            "name = Ada, \"the first\"\n   n = 1\ntags = [\"a\",\"b\"]\nnote = NULL\n\nname = Bo|b c\n   n = 2.5\n"
        );
        let no_header = Display { headers: false, ..Display::default() };
        assert!(!markdown(&items, &cols, &no_header).contains("---"));
    }

    #[test]
    fn scalars_go_to_a_value_column() {
        let items = vec![Value::from(1.0), parse_json(r#"{"value": 2}"#).unwrap()];
        let cols = Columns::of(&items, true);
        assert_eq!(cols.names, vec!["value".to_string(), "(value)".to_string()]);
        assert_eq!(cols.row(&items[0]), vec![None, Some(&Value::from(1.0))]);
    }
}
