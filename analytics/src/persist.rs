//! A durable database's mirrors on disk, so that the next process opens them instead of building
//! them again (issue 25: "durable databases rebuild or persist it, whichever measures better";
//! persisting measured about four times faster, `docs/performance.md`).
//!
//! A mirror's directory (`<database directory>/analytics/<database>/<container>/`, the names
//! escaped) holds a
//! `manifest` and an Arrow IPC file a mirror partition (`p<id>.arrow`). The manifest is a magic
//! header, the CRC-32 and length of its body, and the body: JSON naming the container (its
//! `_rid`), the schema mode, the analytical time to live, the schema, and each partition's range,
//! LSN, live items, the items it does not represent, and its file's length, rows and CRC-32.
//!
//! Every byte read back is checked (the manifest's body, each file whole) before it is decoded,
//! and sizes are bounded. A mirror is restored only when its container is as the files say:
//! [`crate::mirror`] checks the partitions, their LSNs and their live items. Whatever does not
//! check out is a mirror to build again, as without files: the files are a cache, and a failed
//! write costs the next process a build, nothing else.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use cosmoql_catalog::epk::Epk;
use cosmoql_storage::ItemPosition;
use cosmoql_value::{parse_json_slice, to_json_string, Map, Value};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::reader::FileReader;
use datafusion::arrow::ipc::writer::FileWriter;
use datafusion::arrow::record_batch::RecordBatch;

use crate::schema::{Schema, SchemaMode};

/// The manifest's first bytes (the format's version in the last two). Version 02: strings are
/// `Utf8View` (a mirror written by version 01 is not read back, and is built again).
const MAGIC: &[u8; 8] = b"cqmirr02";

/// The largest manifest read back (the schema and every partition's unrepresented items).
const MAX_MANIFEST: u64 = 64 << 20;

/// The largest partition file read back.
const MAX_FILE: u64 = 64 << 30;

/// What a mirror's files must have been written for: the container (its `_rid`), the schema
/// mode and the analytical time to live.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Identity {
    pub container: String,
    pub mode: SchemaMode,
    pub attl: Option<i64>,
}

/// A partition file written: what the manifest says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileEntry {
    pub bytes: u64,
    pub rows: usize,
    pub crc: u32,
}

/// One mirror partition, as written or read back.
#[derive(Debug)]
pub(crate) struct PartitionFile {
    pub id: u32,
    pub min: Epk,
    pub max: Epk,
    pub lsn: u64,
    pub live: usize,
    /// The positions of the items the schema does not represent.
    pub excluded: Vec<ItemPosition>,
    pub file: FileEntry,
    /// Read back: the partition's batches.
    pub batches: Vec<RecordBatch>,
}

/// A mirror read back.
#[derive(Debug)]
pub(crate) struct Persisted {
    pub schema: Schema,
    pub partitions: Vec<PartitionFile>,
}

fn file_name(id: u32) -> String {
    format!("p{id}.arrow")
}

fn failed(what: &str, path: &Path, e: impl std::fmt::Display) -> String {
    format!("cannot {what} {}: {e}", path.display())
}

/// A writer that counts and checksums what passes through it.
struct Checked<W> {
    inner: W,
    crc: crc32fast::Hasher,
    bytes: u64,
}

impl<W: Write> Write for Checked<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes `batches` as partition `id`'s file in `dir` (through a temporary file renamed over the
/// old one).
pub(crate) fn write_partition(
    dir: &Path,
    id: u32,
    arrow: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<FileEntry, String> {
    std::fs::create_dir_all(dir).map_err(|e| failed("create", dir, e))?;
    let path = dir.join(file_name(id));
    let temporary = path.with_extension("arrow.tmp");
    let file = File::create(&temporary).map_err(|e| failed("create", &temporary, e))?;
    let mut out = Checked { inner: BufWriter::new(file), crc: crc32fast::Hasher::new(), bytes: 0 };
    let mut rows = 0;
    {
        let mut writer = FileWriter::try_new(&mut out, arrow).map_err(|e| failed("write", &temporary, e))?;
        for batch in batches {
            rows += batch.num_rows();
            writer.write(batch).map_err(|e| failed("write", &temporary, e))?;
        }
        writer.finish().map_err(|e| failed("write", &temporary, e))?;
    }
    out.flush().map_err(|e| failed("write", &temporary, e))?;
    let entry = FileEntry { bytes: out.bytes, rows, crc: out.crc.finalize() };
    std::fs::rename(&temporary, &path).map_err(|e| failed("rename", &temporary, e))?;
    Ok(entry)
}

/// Writes the manifest of `partitions` (their files written already) and removes the files of
/// partitions it no longer names.
pub(crate) fn write_manifest(
    dir: &Path,
    identity: &Identity,
    schema: &Schema,
    partitions: &[PartitionFile],
) -> Result<(), String> {
    let number = |n: u64| Value::from(n as f64);
    let mut map = Map::default();
    map.insert("container".into(), Value::from(identity.container.as_str()));
    map.insert("mode".into(), Value::from(identity.mode.name()));
    map.insert("attl".into(), identity.attl.map_or(Value::Null, |t| Value::from(t as f64)));
    map.insert("schema".into(), schema.to_value());
    let entries: Vec<Value> = partitions
        .iter()
        .map(|p| {
            let mut e = Map::default();
            e.insert("id".into(), number(u64::from(p.id)));
            e.insert("min".into(), Value::from(p.min.to_hex()));
            e.insert("max".into(), Value::from(p.max.to_hex()));
            // LSNs and CRCs as text: past 2^53 a JSON number loses digits.
            e.insert("lsn".into(), Value::from(p.lsn.to_string()));
            e.insert("live".into(), number(p.live as u64));
            let excluded: Vec<Value> = p
                .excluded
                .iter()
                .map(|at| Value::from(vec![Value::from(at.epk.to_hex()), Value::from(at.seq.to_string())]))
                .collect();
            e.insert("excluded".into(), Value::from(excluded));
            e.insert("bytes".into(), Value::from(p.file.bytes.to_string()));
            e.insert("rows".into(), number(p.file.rows as u64));
            e.insert("crc".into(), Value::from(p.file.crc.to_string()));
            Value::from(e)
        })
        .collect();
    map.insert("partitions".into(), Value::from(entries));
    let body = to_json_string(&Value::from(map)).ok_or("a manifest without a JSON form (a bug)")?;
    let mut bytes = Vec::with_capacity(body.len() + 20);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&crc32fast::hash(body.as_bytes()).to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(body.as_bytes());
    let path = dir.join("manifest");
    let temporary = dir.join("manifest.tmp");
    std::fs::write(&temporary, &bytes).map_err(|e| failed("write", &temporary, e))?;
    std::fs::rename(&temporary, &path).map_err(|e| failed("rename", &temporary, e))?;
    // Files of partitions gone (split): no longer named.
    let named: Vec<String> = partitions.iter().map(|p| file_name(p.id)).collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('p') && name.ends_with(".arrow") && !named.contains(&name) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    Ok(())
}

/// Reads `path` whole, at most `limit` bytes (more is an error).
fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let file = File::open(path).map_err(|e| failed("open", path, e))?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| failed("read", path, e))?;
    if bytes.len() as u64 > limit {
        return Err(format!("{} is larger than {limit} bytes", path.display()));
    }
    Ok(bytes)
}

/// The mirror the files in `dir` hold, written for `identity`, its batches of the Arrow schema
/// `arrow_of` gives for the schema read. `Ok(None)` without a manifest; an error when anything
/// read does not check out (the mirror is then built again).
pub(crate) fn read(
    dir: &Path,
    identity: &Identity,
    arrow_of: impl Fn(&Schema) -> SchemaRef,
) -> Result<Option<Persisted>, String> {
    let path = dir.join("manifest");
    if !path.exists() {
        return Ok(None);
    }
    let bytes = read_bounded(&path, MAX_MANIFEST)?;
    let damaged = |what: &str| format!("{}: {what}", path.display());
    if bytes.len() < 20 || &bytes[..8] != MAGIC {
        return Err(damaged("not a mirror manifest of this version"));
    }
    let crc = u32::from_le_bytes(bytes[8..12].try_into().map_err(|_| damaged("short header"))?);
    let len = u64::from_le_bytes(bytes[12..20].try_into().map_err(|_| damaged("short header"))?);
    let body = &bytes[20..];
    if body.len() as u64 != len || crc32fast::hash(body) != crc {
        return Err(damaged("its checksum does not match (damaged or torn)"));
    }
    let manifest = parse_json_slice(body).map_err(|e| damaged(&e.to_string()))?;
    let attl = match manifest.get("attl") {
        Value::Null => None,
        v => Some(v.as_i64().ok_or_else(|| damaged("attl"))?),
    };
    let written = Identity {
        container: manifest.get("container").as_str().ok_or_else(|| damaged("container"))?.to_string(),
        mode: manifest.get("mode").as_str().and_then(SchemaMode::from_name).ok_or_else(|| damaged("mode"))?,
        attl,
    };
    if written != *identity {
        return Err(damaged("written for another container, schema mode or analytical time to live"));
    }
    let schema = Schema::from_value(manifest.get("schema")).ok_or_else(|| damaged("schema"))?;
    let arrow = arrow_of(&schema);
    let mut partitions = Vec::new();
    for e in manifest.get("partitions").as_array().ok_or_else(|| damaged("partitions"))? {
        let number = |k: &str| e.get(k).as_i64().and_then(|n| u64::try_from(n).ok()).ok_or_else(|| damaged(k));
        let text = |k: &str| e.get(k).as_str().and_then(|s| s.parse::<u64>().ok()).ok_or_else(|| damaged(k));
        let epk = |v: &Value| v.as_str().and_then(|s| Epk::from_hex(s).ok()).ok_or_else(|| damaged("an EPK"));
        let id = u32::try_from(number("id")?).map_err(|_| damaged("id"))?;
        let mut excluded = Vec::new();
        for at in e.get("excluded").as_array().ok_or_else(|| damaged("excluded"))? {
            let seq = at.index(1).as_str().and_then(|s| s.parse().ok()).ok_or_else(|| damaged("excluded"))?;
            excluded.push(ItemPosition { epk: epk(at.index(0))?, seq });
        }
        let file = FileEntry {
            bytes: text("bytes")?,
            rows: usize::try_from(number("rows")?).map_err(|_| damaged("rows"))?,
            crc: u32::try_from(text("crc")?).map_err(|_| damaged("crc"))?,
        };
        let batches = read_partition(&dir.join(file_name(id)), &file, &arrow)?;
        partitions.push(PartitionFile {
            id,
            min: epk(e.get("min"))?,
            max: epk(e.get("max"))?,
            lsn: text("lsn")?,
            live: usize::try_from(number("live")?).map_err(|_| damaged("live"))?,
            excluded,
            file,
            batches,
        });
    }
    Ok(Some(Persisted { schema, partitions }))
}

/// A partition's batches from its file, which must be `entry`'s bytes and rows, of `arrow`.
fn read_partition(path: &Path, entry: &FileEntry, arrow: &SchemaRef) -> Result<Vec<RecordBatch>, String> {
    let bytes = read_bounded(path, entry.bytes.min(MAX_FILE))?;
    if bytes.len() as u64 != entry.bytes || crc32fast::hash(&bytes) != entry.crc {
        return Err(format!("{}: its checksum does not match the manifest's (damaged or torn)", path.display()));
    }
    let reader = FileReader::try_new(std::io::Cursor::new(bytes), None).map_err(|e| failed("read", path, e))?;
    if reader.schema() != *arrow {
        return Err(format!("{}: of another schema than the manifest's", path.display()));
    }
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>().map_err(|e| failed("read", path, e))?;
    if batches.iter().map(RecordBatch::num_rows).sum::<usize>() != entry.rows {
        return Err(format!("{}: not the manifest's rows", path.display()));
    }
    Ok(batches)
}

/// The directory of the mirror of `database.container` in a database directory (the names
/// escaped: only letters, digits, `-` and `_` as they are, every other byte as `%XX`, so no name
/// is a path of its own).
pub(crate) fn mirror_dir(database_dir: &Path, database: &str, container: &str) -> PathBuf {
    fn escaped(name: &str) -> String {
        name.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }
    database_dir.join("analytics").join(escaped(database)).join(escaped(container))
}
