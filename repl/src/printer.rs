//! Printing a query's results as they come, in the session's output mode, and the statistics
//! the Data Explorer shows after a query.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cosmoql::value::{format_number, to_json_string, Value};
use cosmoql::JsonText;

use crate::formats::{Columns, Display, Mode};
use crate::render;
use crate::reports::plural;

/// Prints a statement's results as they come. The drawn modes keep the first `max_rows` rows
/// (the others are counted); the others write result by result, in bounded chunks (CSV and TSV
/// take their columns from the first results, up to [`COLUMNS_FROM`]).
pub struct Printer {
    mode: Mode,
    /// Pretty JSON (a terminal, or an interactive session), else one compact array.
    pretty: bool,
    colored: bool,
    /// `SELECT *`: tables leave the system properties out.
    star: bool,
    max_rows: usize,
    display: Display,
    kept: Vec<Value>,
    /// CSV and TSV: the columns, once the header is written.
    columns: Option<Columns>,
    /// A result had properties after the columns were fixed (said once).
    warned: bool,
    /// Results taken so far.
    pub total: usize,
    buf: Vec<u8>,
    /// The query's cancel flag: once set, nothing more is printed.
    pub cancel: Option<Arc<AtomicBool>>,
    /// The screen's rows, when a drawn result taller than them goes to the pager.
    page_rows: Option<usize>,
}

/// How a [`Printer`] prints.
#[derive(Debug, Clone)]
pub struct PrintOptions {
    pub mode: Mode,
    /// Pretty JSON (a terminal, or an interactive session), else one compact array.
    pub pretty: bool,
    pub colored: bool,
    /// `SELECT *`: tables leave the system properties out.
    pub star: bool,
    pub max_rows: usize,
    pub display: Display,
    /// The screen's rows, when a drawn result taller than them goes to the pager.
    pub page_rows: Option<usize>,
}

/// CSV and TSV take their columns from this many first results.
const COLUMNS_FROM: usize = 1000;

impl Printer {
    pub fn new(options: PrintOptions) -> Self {
        let PrintOptions { mode, pretty, colored, star, max_rows, display, page_rows } = options;
        Printer {
            mode,
            pretty,
            colored,
            star,
            max_rows,
            display,
            kept: Vec::new(),
            columns: None,
            warned: false,
            total: 0,
            buf: Vec::new(),
            cancel: None,
            page_rows,
        }
    }

    /// Takes one result; false once standard output has failed or the query was cancelled (the
    /// query stops).
    pub fn push(&mut self, item: Value) -> bool {
        if self.cancelled() {
            return false;
        }
        // Every mode shows what the JSON holds: undefined and non-finite numbers (1/0) have no
        // JSON form, so a property with one is left out and a result that is one is dropped.
        let Some(item) = cosmoql::value::json::json_visible(&item) else { return true };
        self.total += 1;
        match self.mode {
            mode if mode.is_drawn() => {
                if self.kept.len() < self.max_rows {
                    self.kept.push(item);
                }
            }
            Mode::Csv | Mode::Tsv => {
                if self.columns.is_none() {
                    self.kept.push(item);
                    if self.kept.len() < COLUMNS_FROM {
                        return true;
                    }
                    self.start_delimited();
                } else {
                    self.delimited_row(&item);
                }
            }
            _ if self.takes_text() => match to_json_string(&item) {
                Some(text) => self.write_text(&text),
                // No JSON form (the engine refuses such results): never an empty element.
                None => self.total -= 1,
            },
            _ => {
                let text = render::json_pretty(&item, self.colored);
                if text.is_empty() {
                    self.total -= 1;
                    return true;
                }
                self.buf.extend_from_slice(if self.total == 1 { b"[\n" } else { b",\n" });
                for (i, line) in text.lines().enumerate() {
                    if i > 0 {
                        self.buf.push(b'\n');
                    }
                    self.buf.extend_from_slice(b"  ");
                    self.buf.extend_from_slice(line.as_bytes());
                }
            }
        }
        self.flush_when_full()
    }

    /// Whether the query was stopped (Ctrl-C): results are no longer taken.
    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Writes the buffer out once it holds 64 KiB; false when that write failed (the query stops).
    fn flush_when_full(&mut self) -> bool {
        self.buf.len() < 1 << 16 || self.flush()
    }

    /// Whether the mode writes each result's compact JSON text as it is (NDJSON, and JSON when
    /// not pretty): then results may come as text ([`Printer::push_text`]), an item returned
    /// whole written straight from its stored bytes.
    pub fn takes_text(&self) -> bool {
        self.mode == Mode::Ndjson || (self.mode == Mode::Json && !self.pretty)
    }

    /// [`Printer::push`] of a result's compact JSON text, in the modes that [take
    /// text](Printer::takes_text).
    pub fn push_text(&mut self, text: JsonText) -> bool {
        if self.cancelled() {
            return false;
        }
        self.total += 1;
        self.write_text(text.as_str());
        self.flush_when_full()
    }

    /// One result's compact JSON text: a line of NDJSON, or the next element of the JSON array.
    fn write_text(&mut self, text: &str) {
        if self.mode == Mode::Ndjson {
            self.buf.extend_from_slice(text.as_bytes());
            self.buf.push(b'\n');
        } else {
            self.buf.extend_from_slice(if self.total == 1 { b"[" } else { b"," });
            self.buf.extend_from_slice(text.as_bytes());
        }
    }

    /// CSV/TSV: fixes the columns from the results kept so far, writes the header and them.
    fn start_delimited(&mut self) {
        let columns = Columns::of(&self.kept, self.star);
        if self.display.headers {
            let header = crate::formats::delimited(&columns.names, self.mode);
            self.buf.extend_from_slice(header.as_bytes());
        }
        self.columns = Some(columns);
        for item in std::mem::take(&mut self.kept) {
            self.delimited_row(&item);
        }
    }

    fn delimited_row(&mut self, item: &Value) {
        let Some(columns) = &self.columns else { return };
        if !self.warned && columns.misses(item) {
            self.warned = true;
            let _ = writeln!(
                crate::output::stderr(),
                "warning: a result has properties the first {COLUMNS_FROM} did not: {} leaves them out (.mode json \
                 shows them)",
                self.mode.name()
            );
        }
        let fields: Vec<String> =
            columns.row(item).into_iter().map(|v| crate::formats::text_of(v, &self.display)).collect();
        self.buf.extend_from_slice(crate::formats::delimited(&fields, self.mode).as_bytes());
    }

    fn flush(&mut self) -> bool {
        let ok = crate::output::stdout().write_all(&self.buf).is_ok();
        self.buf.clear();
        ok
    }

    /// The query failed: a JSON array already begun is closed (what was printed stays JSON), a
    /// table is not drawn.
    pub fn abort(mut self) {
        if self.cancelled() {
            return;
        }
        if self.mode == Mode::Json && self.total > 0 {
            self.buf.extend_from_slice(if self.pretty { b"\n]\n" } else { b"]\n" });
        }
        self.flush();
    }

    /// Writes the rest; a drawn result taller than the screen is returned instead, for the pager.
    pub fn finish(mut self) -> Option<String> {
        let shown = &self.kept[..self.kept.len().min(self.max_rows)];
        match self.mode {
            Mode::Table | Mode::Ascii => {
                // On a terminal the table fits its width (COLUMNS when it does not say).
                let options = render::TableOptions {
                    hide_system: self.star,
                    max_rows: self.max_rows,
                    colored: self.colored,
                    max_width: crate::output::terminal_columns(),
                    ascii: self.mode == Mode::Ascii,
                    display: self.display.clone(),
                };
                let text = render::table_of(&self.kept, self.total, &options);
                if self.page_rows.is_some_and(|rows| text.lines().count() >= rows) {
                    self.flush();
                    return Some(text);
                }
                self.buf.extend_from_slice(text.as_bytes());
            }
            Mode::Line | Mode::Markdown => {
                let columns = Columns::of(shown, self.star);
                let mut text = if self.mode == Mode::Line {
                    crate::formats::line_mode(shown, &columns, &self.display)
                } else {
                    crate::formats::markdown(shown, &columns, &self.display)
                };
                if self.total > shown.len() {
                    text.push_str(&format!("({} rows, the first {} shown)\n", self.total, shown.len()));
                }
                if self.page_rows.is_some_and(|rows| text.lines().count() >= rows) {
                    self.flush();
                    return Some(text);
                }
                self.buf.extend_from_slice(text.as_bytes());
            }
            Mode::Csv | Mode::Tsv => {
                if self.columns.is_none() && !self.kept.is_empty() {
                    self.start_delimited();
                }
            }
            Mode::Ndjson => {}
            Mode::Json => self.buf.extend_from_slice(match (self.total, self.pretty) {
                (0, _) => b"[]\n",
                (_, true) => b"\n]\n",
                (_, false) => b"]\n",
            }),
        }
        self.flush();
        None
    }
}

/// The query's statistics as the Data Explorer's "Query Stats" shows them: charge, partitions,
/// documents retrieved and output with their sizes, index entries, the time of each phase, and
/// the indexes used and those that would help.
pub fn query_stats(m: &cosmoql::QueryMetrics, index: Option<&Value>, results: usize, pages: usize) -> Vec<String> {
    let ms = |ns: u64| format!("{:.2} ms", ns as f64 / 1e6);
    let ratio = if m.retrieved_document_count == 0 {
        1.0
    } else {
        (m.output_document_count as f64 / m.retrieved_document_count as f64).min(1.0)
    };
    let mut out = vec![
        format!("request charge      {} RU", format_number((m.request_charge * 100.0).round() / 100.0)),
        format!(
            "partitions          {} of {} read",
            m.partitions_touched,
            plural(m.physical_partitions as u64, "physical partition", "physical partitions")
        ),
        format!(
            "retrieved           {} ({} bytes)",
            plural(m.retrieved_document_count, "document", "documents"),
            m.retrieved_document_size
        ),
        format!(
            "output              {} ({} bytes){}",
            plural(results as u64, "result", "results"),
            m.output_document_size,
            if pages > 1 { format!(" in {pages} pages") } else { String::new() }
        ),
        format!(
            "index               {} read, utilization {:.0}%",
            plural(m.index_entries_read, "entry", "entries"),
            ratio * 100.0
        ),
        format!(
            "time                compile {}, execution {}, total {}",
            ms(m.compile_time_ns),
            ms(m.execution_time_ns),
            ms(m.compile_time_ns.saturating_add(m.execution_time_ns))
        ),
    ];
    if let Some(index) = index {
        let specs = |kind: &str| -> Vec<String> {
            let mut found = Vec::new();
            for single in index.get(kind).get("SingleIndexes").as_array().into_iter().flat_map(|a| a.iter()) {
                if let Some(spec) = single.get("IndexSpec").as_str() {
                    found.push(spec.to_string());
                }
            }
            for composite in index.get(kind).get("CompositeIndexes").as_array().into_iter().flat_map(|a| a.iter()) {
                let parts: Vec<&str> = composite
                    .get("IndexSpecs")
                    .as_array()
                    .into_iter()
                    .flat_map(|a| a.iter())
                    .filter_map(Value::as_str)
                    .collect();
                let impact =
                    composite.get("IndexImpactScore").as_str().map(|s| format!(" ({s} impact)")).unwrap_or_default();
                found.push(format!("({}){impact}", parts.join(", ")));
            }
            found
        };
        let used = specs("UtilizedIndexes");
        let potential = specs("PotentialIndexes");
        out.push(format!("indexes used        {}", if used.is_empty() { "none".into() } else { used.join(", ") }));
        if !potential.is_empty() {
            out.push(format!("indexes that help   {}", potential.join(", ")));
        }
    }
    out
}
