//! Rebuild or persist? What a durable database would pay to open its analytical store each way
//! (issue 25: "durable databases rebuild or persist it, whichever measures better").
//!
//!     cargo run --profile quick -p cosmoql-analytics --example mirror_persist -- ITEMS.ndjson
//!
//! Loads the items into a container (keyed on `/deviceId`), then times:
//! * **rebuild**: a new mirror synced from the container (what opening did before `persist.rs`,
//!   and still does without files);
//! * **persist**: writing the mirror's batches as an Arrow IPC file, then reading them back (from
//!   the page cache: the most favourable case for persisting). Reading back is not all a
//!   persisted mirror would need: its item handles and schema, checksums, and the changes since
//!   the file was written would come on top.
//!
//! Prints one JSON line. It measured the choice; `persist.rs` is what was built, and
//! `cosmoql bench --analytics --db DIR` times it (`docs/performance.md`, seventeenth stop).

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::sync::Arc;
use std::time::Instant;

use cosmoql::{ContainerClient, ContainerProperties, ContainerSettings, ImportOptions};
use cosmoql_analytics::{Mirror, SchemaMode};
use datafusion::arrow::ipc::reader::FileReader;
use datafusion::arrow::ipc::writer::FileWriter;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: mirror_persist ITEMS.ndjson")?;
    let bytes = std::fs::metadata(&path)?.len();
    let settings = ContainerSettings::for_expected_items(usize::try_from(bytes / 300)?);
    let client = ContainerClient::standalone(ContainerProperties::new("c", "/deviceId")?.settings(settings))?;
    client.import(BufReader::new(File::open(&path)?), ImportOptions { fail_fast: true, ..ImportOptions::default() })?;

    let started = Instant::now();
    let mirror = Mirror::new(Arc::clone(client.container()), SchemaMode::WellDefined);
    mirror.sync()?;
    let rebuild = started.elapsed().as_secs_f64();

    let snapshot = mirror.snapshot();
    let file = std::env::temp_dir().join(format!("mirror-persist-{}.arrow", std::process::id()));
    let started = Instant::now();
    {
        let mut writer = FileWriter::try_new(BufWriter::new(File::create(&file)?), &snapshot.schema)?;
        for batch in snapshot.partitions.iter().flat_map(|p| &p.batches) {
            writer.write(batch)?;
        }
        writer.finish()?;
    }
    let write = started.elapsed().as_secs_f64();
    let size = std::fs::metadata(&file)?.len();

    let started = Instant::now();
    let mut rows = 0;
    for batch in FileReader::try_new(BufReader::new(File::open(&file)?), None)? {
        rows += batch?.num_rows();
    }
    let read = started.elapsed().as_secs_f64();
    std::fs::remove_file(&file)?;

    println!(
        "{{\"items\":{},\"rows\":{rows},\"rebuildSeconds\":{rebuild},\"writeSeconds\":{write},\"readSeconds\":{read},\"fileBytes\":{size}}}",
        client.item_count()
    );
    Ok(())
}
