//! Streaming import (a JSON array or NDJSON, never the whole file in memory) and NDJSON export.

use std::io::{self, BufRead, Write};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;

use crate::container::{Container, Prepared};
use crate::doc::Doc;
use crate::error::{Result, StorageError};

/// How an import treats bad input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Stop at the first bad line or rejected item instead of reporting it and going on.
    pub fail_fast: bool,
    /// Write each item as an upsert: an item whose partition key and id exist is replaced (not a
    /// 409), so an import that was interrupted can run again and leaves every item of its input
    /// once, as the input has it.
    pub upsert: bool,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Items stored.
    pub imported: u64,
    /// Of those, items that replaced one with their key and id (only with `upsert`).
    pub replaced: u64,
    /// Of the failed, items whose key and id exist (409s; `upsert` replaces them instead).
    pub conflicts: u64,
    /// Lines or array elements that were not valid JSON objects.
    pub skipped: u64,
    /// Valid documents the store rejected (bad id, duplicate key + id, too large, ...).
    pub failed: u64,
    /// Bytes of input read.
    pub bytes: u64,
    /// The first problems, by line (at most [`MAX_REPORTED_PROBLEMS`]).
    pub problems: Vec<ImportProblem>,
}

/// How many problems an [`ImportSummary`] keeps (the counts are always complete).
pub const MAX_REPORTED_PROBLEMS: usize = 100;

/// One line (or array element) that was not imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportProblem {
    /// 1-based line where the line or element starts.
    pub line: u64,
    /// True for input that is not a JSON object (skipped); false for an item the store rejected.
    pub skipped: bool,
    pub message: String,
}

impl std::fmt::Display for ImportProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.skipped { "skipped" } else { "not imported" };
        write!(f, "line {}: {} ({what})", self.line, self.message)
    }
}

/// An import stopped by `--fail-fast` (or by an I/O error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// What was imported before the stop.
    pub summary: ImportSummary,
    pub message: String,
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.summary.imported;
        write!(f, "{} ({n} item{} imported before it)", self.message, if n == 1 { "" } else { "s" })
    }
}

impl std::error::Error for ImportError {}

/// The UTF-8 encoding of U+FEFF, the byte-order mark.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// A line (or array element) longer than this is no item: it is reported, not held in memory
/// (the service's items are at most [`crate::container::MAX_ITEM_BYTES`]).
pub const MAX_DOCUMENT_TEXT: usize = 4 * crate::container::MAX_ITEM_BYTES;

/// One document's text, or how long it was when it passed [`MAX_DOCUMENT_TEXT`] (its bytes were
/// not kept).
pub type DocumentText<'a> = std::result::Result<&'a [u8], u64>;

/// Reads documents one at a time from a JSON array (`[ {...}, {...} ]`) or NDJSON (one object per
/// line; blank lines are ignored), whichever the input starts with, and hands each to `sink` with
/// the line it starts on. Only one document is in memory at a time, and at most
/// [`MAX_DOCUMENT_TEXT`] of it.
pub fn read_documents<R: BufRead>(reader: R, sink: impl FnMut(u64, DocumentText<'_>) -> bool) -> io::Result<u64> {
    read_documents_until(reader, &AtomicBool::new(false), sink)
}

/// [`read_documents`] that stops when `cancel` is set, also in the middle of a line too long to
/// be an item (an endless one: `/dev/zero`).
pub fn read_documents_until<R: BufRead>(
    mut reader: R,
    cancel: &AtomicBool,
    mut sink: impl FnMut(u64, DocumentText<'_>) -> bool,
) -> io::Result<u64> {
    let mut line = 1u64;
    let mut consumed = 0u64;
    // A UTF-8 byte-order mark (editors on Windows write one) is not part of the data.
    if reader.fill_buf()?.starts_with(UTF8_BOM) {
        reader.consume(UTF8_BOM.len());
        consumed += UTF8_BOM.len() as u64;
    }
    // Find the first significant byte to pick the format.
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(consumed);
        }
        let skip = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        line += buf[..skip].iter().filter(|b| **b == b'\n').count() as u64;
        let first = buf.get(skip).copied();
        reader.consume(skip);
        consumed += skip as u64;
        match first {
            None => continue,
            Some(b'[') => {
                reader.consume(1);
                return read_array(reader, line, consumed + 1, cancel, sink);
            }
            Some(_) => break,
        }
    }
    // NDJSON.
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = io::Read::take(reader.by_ref(), MAX_DOCUMENT_TEXT as u64 + 1).read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(consumed);
        }
        consumed += n as u64;
        if n > MAX_DOCUMENT_TEXT && !buf.ends_with(b"\n") {
            // Too long to be an item: the rest of the line is read past, not kept.
            let mut length = n as u64;
            loop {
                if cancel.load(Ordering::Relaxed) {
                    return Ok(consumed);
                }
                let chunk = reader.fill_buf()?;
                if chunk.is_empty() {
                    break;
                }
                let (take, end) = match chunk.iter().position(|b| *b == b'\n') {
                    Some(at) => (at + 1, true),
                    None => (chunk.len(), false),
                };
                reader.consume(take);
                consumed += take as u64;
                length += take as u64;
                if end {
                    break;
                }
            }
            if !sink(line, Err(length)) {
                return Ok(consumed);
            }
            line += 1;
            continue;
        }
        let text = buf.trim_ascii();
        if !text.is_empty() && !sink(line, Ok(text)) {
            return Ok(consumed);
        }
        line += 1;
    }
}

/// Streams the elements of a JSON array (its `[` already consumed), cutting them apart by
/// tracking strings and nesting, so each element is parsed alone.
fn read_array<R: BufRead>(
    mut reader: R,
    mut line: u64,
    mut consumed: u64,
    cancel: &AtomicBool,
    mut sink: impl FnMut(u64, DocumentText<'_>) -> bool,
) -> io::Result<u64> {
    let mut element = Vec::new();
    // The element's length once it passed the limit (its bytes are no longer kept).
    let mut overlong: Option<u64> = None;
    let mut start_line = line;
    let mut depth = 0usize; // nesting inside the current element
    let mut in_string = false;
    let mut escaped = false;
    let mut closed = false;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Ok(consumed);
        }
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let len = buf.len();
        let mut i = 0;
        while i < len {
            let b = buf[i];
            i += 1;
            if b == b'\n' {
                line += 1;
            }
            if closed {
                if !b.is_ascii_whitespace() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("line {line}: text after the end of the JSON array"),
                    ));
                }
                continue;
            }
            if in_string {
                keep(&mut element, &mut overlong, b);
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
                continue;
            }
            match b {
                b',' | b']' if depth == 0 => {
                    let text = element.trim_ascii();
                    if let Some(length) = overlong.take() {
                        if !sink(start_line, Err(length)) {
                            reader.consume(i);
                            return Ok(consumed + i as u64);
                        }
                    } else if !text.is_empty() {
                        if !sink(start_line, Ok(text)) {
                            reader.consume(i);
                            return Ok(consumed + i as u64);
                        }
                    } else if b == b',' {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("line {line}: empty element in the JSON array"),
                        ));
                    }
                    element.clear();
                    if b == b']' {
                        closed = true;
                    }
                }
                _ => {
                    if element.is_empty() && overlong.is_none() {
                        if b.is_ascii_whitespace() {
                            continue;
                        }
                        start_line = line;
                    }
                    keep(&mut element, &mut overlong, b);
                    match b {
                        b'"' => in_string = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
            }
        }
        reader.consume(len);
        consumed += len as u64;
    }
    if !closed {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("line {line}: the JSON array is not closed")));
    }
    Ok(consumed)
}

/// Keeps byte `b` of an array element, up to [`MAX_DOCUMENT_TEXT`]; past it, only counts.
fn keep(element: &mut Vec<u8>, overlong: &mut Option<u64>, b: u8) {
    match overlong {
        Some(length) => *length += 1,
        None if element.len() >= MAX_DOCUMENT_TEXT => {
            *overlong = Some(element.len() as u64 + 1);
            *element = Vec::new();
        }
        None => element.push(b),
    }
}

/// One input document after the parsing stage.
enum Parsed {
    Ready(u64, Prepared),
    Problem(ImportProblem),
}

/// What became of one document of a batch.
enum Step {
    /// Written (`true`: replaced an item with its key and id).
    Inserted(u64, Result<bool>),
    Problem(ImportProblem),
}

/// Documents handed from the parsing thread to the inserting thread at a time.
const IMPORT_BATCH: usize = 1024;

impl Container {
    /// Imports every document of a JSON array or NDJSON stream. A bad line is reported with its line
    /// number and skipped (or, with `fail_fast`, stops the import); `progress` is called every 4,096
    /// imported items and at the end.
    ///
    /// Two stages run in parallel: one thread reads, parses and validates documents (JSON to the
    /// binary form, id rules, partition key and EPK), the calling thread inserts them in input
    /// order, so the result is the same as a serial import.
    pub fn import<R: BufRead + Send>(
        &self,
        reader: R,
        options: ImportOptions,
        progress: impl FnMut(&ImportSummary),
    ) -> Result<ImportSummary, ImportError> {
        self.import_until(reader, options, &AtomicBool::new(false), progress)
    }

    /// [`Container::import`] that stops when `cancel` is set (Ctrl-C): the items imported so far
    /// stay, and the error says how many.
    pub fn import_until<R: BufRead + Send>(
        &self,
        reader: R,
        options: ImportOptions,
        cancel: &AtomicBool,
        mut progress: impl FnMut(&ImportSummary),
    ) -> Result<ImportSummary, ImportError> {
        // Indexes are suspended while items stream in and rebuilt in bulk at the end (queries
        // meanwhile scan), whatever way the import ends.
        struct Rebuild<'c>(&'c Container);
        impl Drop for Rebuild<'_> {
            fn drop(&mut self) {
                self.0.transform_indexes(usize::MAX);
            }
        }
        self.suspend_indexes();
        let _rebuild = Rebuild(self);
        // In a durable store the items are synced once, before the import returns.
        let bulk = crate::container::Bulk::start();
        let mut summary = ImportSummary::default();
        let mut stop: Option<String> = None;
        let cancelled = AtomicBool::new(false);
        let (tx, rx) = sync_channel::<Vec<Parsed>>(4);
        let read = std::thread::scope(|scope| {
            let parser = scope.spawn(|| {
                let tx = tx;
                let mut batch = Vec::with_capacity(IMPORT_BATCH);
                let read = read_documents_until(reader, cancel, |line, text| {
                    let parsed = match text.map(Doc::from_json_slice) {
                        Err(length) => Parsed::Problem(ImportProblem {
                            line,
                            skipped: true,
                            message: format!(
                                "{length} bytes without an end: no item is that large (the limit is {} MiB)",
                                crate::container::MAX_ITEM_BYTES >> 20
                            ),
                        }),
                        Ok(Err(e)) => Parsed::Problem(ImportProblem { line, skipped: true, message: e.to_string() }),
                        Ok(Ok(doc)) => match self.prepare(doc) {
                            Ok(prep) => Parsed::Ready(line, prep),
                            Err(e) => Parsed::Problem(ImportProblem { line, skipped: false, message: e.to_string() }),
                        },
                    };
                    batch.push(parsed);
                    if batch.len() == IMPORT_BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(IMPORT_BATCH));
                        if tx.send(full).is_err() || cancelled.load(Ordering::Relaxed) {
                            return false;
                        }
                    }
                    true
                });
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
                read
            });
            'batches: for batch in rx.iter() {
                if cancel.load(Ordering::Relaxed) {
                    stop = Some("cancelled".to_string());
                    cancelled.store(true, Ordering::Relaxed);
                    break 'batches;
                }
                // In a durable store a batch goes in with one frame per partition
                // (`Container::insert_many`); stopping at the first problem takes them one by one.
                let steps: Box<dyn Iterator<Item = Step>> = if self.is_durable() && !options.fail_fast {
                    let mut lines = Vec::new();
                    let mut preps = Vec::new();
                    let mut problems = Vec::new();
                    for (i, parsed) in batch.into_iter().enumerate() {
                        match parsed {
                            Parsed::Ready(line, prep) => {
                                lines.push((i, line));
                                preps.push(prep);
                            }
                            Parsed::Problem(p) => problems.push((i, Step::Problem(p))),
                        }
                    }
                    let inserted = lines
                        .into_iter()
                        .zip(self.insert_many(preps, options.upsert))
                        .map(|((i, line), result)| (i, Step::Inserted(line, result)));
                    let mut all: Vec<(usize, Step)> = inserted.chain(problems).collect();
                    all.sort_by_key(|(i, _)| *i);
                    Box::new(all.into_iter().map(|(_, step)| step))
                } else {
                    Box::new(batch.into_iter().map(|parsed| match parsed {
                        Parsed::Ready(line, prep) => Step::Inserted(line, self.import_one(prep, options.upsert)),
                        Parsed::Problem(p) => Step::Problem(p),
                    }))
                };
                for step in steps {
                    let problem = match step {
                        Step::Inserted(_, Ok(replaced)) => {
                            summary.imported += 1;
                            summary.replaced += u64::from(replaced);
                            if summary.imported % 4096 == 0 {
                                progress(&summary);
                            }
                            continue;
                        }
                        Step::Inserted(line, Err(e)) => {
                            summary.conflicts += u64::from(e.status_code() == 409);
                            ImportProblem { line, skipped: false, message: e.to_string() }
                        }
                        Step::Problem(problem) => problem,
                    };
                    if problem.skipped {
                        summary.skipped += 1;
                    } else {
                        summary.failed += 1;
                    }
                    if options.fail_fast {
                        // The import stops here: nothing was "skipped" and gone on from.
                        stop = Some(format!("line {}: {}", problem.line, problem.message));
                        cancelled.store(true, Ordering::Relaxed);
                        break 'batches;
                    }
                    if summary.problems.len() < MAX_REPORTED_PROBLEMS {
                        summary.problems.push(problem);
                    }
                }
            }
            // Unblock the parser if it is waiting to send, then wait for it.
            drop(rx);
            parser.join()
        });
        match read {
            Ok(Ok(bytes)) => summary.bytes = bytes,
            Ok(Err(e)) if stop.is_none() => {
                return Err(ImportError { message: format!("cannot read the input: {e}"), summary })
            }
            Ok(Err(_)) => {}
            Err(_) => {
                return Err(ImportError {
                    message:
                        "internal error (a bug in cosmoql, please report it): the import's parsing thread panicked"
                            .to_string(),
                    summary,
                })
            }
        }
        // Cancelled while reading, before a batch came (a line that never ends).
        if stop.is_none() && cancel.load(Ordering::Relaxed) {
            stop = Some("cancelled".to_string());
        }
        progress(&summary);
        drop(bulk);
        if let Err(e) = self.sync_log() {
            return Err(ImportError { message: e.to_string(), summary });
        }
        match stop {
            Some(message) => Err(ImportError { message, summary }),
            None => Ok(summary),
        }
    }

    /// Writes every item as one JSON object per line (NDJSON), in scan order, without system
    /// properties. Returns how many items were written.
    pub fn export_ndjson<W: Write>(&self, mut out: W) -> io::Result<u64> {
        let mut n = 0;
        for item in self.scan().items() {
            if let Some(json) = item.doc.to_json_string() {
                out.write_all(json.as_bytes())?;
                out.write_all(b"\n")?;
                n += 1;
            }
        }
        out.flush()?;
        Ok(n)
    }

    /// Copies every item into `target`, which may have another partition key (the way to change a
    /// container's key). Returns how many items were copied; stops at the first rejected item.
    pub fn copy_into(&self, target: &Container) -> Result<u64> {
        let mut n = 0;
        for item in self.scan().items() {
            target.insert_doc(item.doc.clone()).map_err(|e| {
                StorageError::new(e.kind, format!("copying item {n} into container `{}`: {}", target.id(), e.message))
            })?;
            n += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &str) -> io::Result<Vec<(u64, String)>> {
        let mut out = Vec::new();
        read_documents(input.as_bytes(), |line, text| {
            out.push((line, text.map_or_else(|n| format!("<{n} bytes>"), |t| String::from_utf8_lossy(t).into_owned())));
            true
        })?;
        Ok(out)
    }

    #[test]
    fn an_endless_line_stops_when_cancelled() {
        let cancel = AtomicBool::new(false);
        let endless = io::Read::take(io::repeat(b'x'), 1 << 36);
        let read = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(100));
                cancel.store(true, Ordering::Relaxed);
            });
            read_documents_until(io::BufReader::new(endless), &cancel, |_, _| true).unwrap()
        });
        assert!(read < 1 << 36, "stopped part way: {read}");
    }

    #[test]
    fn a_document_longer_than_any_item_is_reported_not_held() {
        let long = "x".repeat(MAX_DOCUMENT_TEXT + 10);
        let docs = collect(&format!("{{\"a\":1}}\n{long}\n{{\"a\":2}}\n")).unwrap();
        let n = MAX_DOCUMENT_TEXT + 11;
        assert_eq!(docs, vec![(1, "{\"a\":1}".into()), (2, format!("<{n} bytes>")), (3, "{\"a\":2}".into())]);
        let docs = collect(&format!("[{{\"a\":1}}, \"{long}\", {{\"a\":2}}]")).unwrap();
        assert_eq!(docs.len(), 3);
        assert!(docs[1].1.starts_with('<') && docs[2].1 == "{\"a\":2}", "{:?}", &docs[1..]);
        // Endless input without a line break: read through, never held.
        let zeros = io::Read::take(io::repeat(0), 3 * MAX_DOCUMENT_TEXT as u64);
        let mut seen = Vec::new();
        read_documents(io::BufReader::new(zeros), |line, text| {
            seen.push((line, text.err()));
            true
        })
        .unwrap();
        assert_eq!(seen, vec![(1, Some(3 * MAX_DOCUMENT_TEXT as u64))]);
    }

    #[test]
    fn ndjson_lines_with_line_numbers() {
        let docs = collect("{\"a\":1}\n\n  {\"a\":2}  \n{bad\n").unwrap();
        assert_eq!(docs, vec![(1, "{\"a\":1}".into()), (3, "{\"a\":2}".into()), (4, "{bad".into())]);
    }

    #[test]
    fn json_array_elements_are_cut_apart() {
        let input = "\n [\n {\"a\": \"x,]}\\\"\"},\n {\"b\": [1, {\"c\": 2}]} ,\n 3\n]\n";
        let docs = collect(input).unwrap();
        assert_eq!(
            docs,
            vec![(3, "{\"a\": \"x,]}\\\"\"}".into()), (4, "{\"b\": [1, {\"c\": 2}]}".into()), (5, "3".into())]
        );
        assert!(collect("[{\"a\":1}").is_err());
        assert!(collect("[{\"a\":1},,{}]").is_err());
        assert!(collect("[{\"a\":1}] x").is_err());
        assert_eq!(collect("[]").unwrap(), vec![]);
        assert_eq!(collect("").unwrap(), vec![]);
    }

    #[test]
    fn array_elements_split_across_reads() {
        // A reader that hands out one byte at a time.
        let input = "[{\"id\":\"1\"},\n{\"id\":\"2\"}]";
        let reader = io::BufReader::with_capacity(1, input.as_bytes());
        let mut out = Vec::new();
        read_documents(reader, |line, text| {
            out.push((line, String::from_utf8_lossy(text.unwrap_or_default()).into_owned()));
            true
        })
        .unwrap();
        assert_eq!(out, vec![(1, "{\"id\":\"1\"}".into()), (2, "{\"id\":\"2\"}".into())]);
    }
}
