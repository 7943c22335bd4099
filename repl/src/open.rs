//! Opening the REPL's database: the demo in memory, or a database directory (opened, created at
//! its first write, or loaded with the demo data), and the container a session starts in.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cosmoql::{ContainerClient, CosmosClient, DatabaseClient};

use crate::reports::{describe_key, plural};

/// The database a session works in, and how it came to be.
#[derive(Debug)]
pub struct Opened {
    /// The account: in memory, or the database directory (whose lock it holds while open).
    pub client: CosmosClient,
    /// The database the REPL works in: the directory's first, or `demo`.
    pub db: DatabaseClient,
    /// A database directory that does not exist yet: `client` is an empty one in memory until
    /// the first write, which creates the directory ([`create`]). A run that writes nothing
    /// leaves nothing behind (a mistyped name does not become a database).
    pub pending: Option<PathBuf>,
    /// The container to start in; `None` when there is none, or several and none was chosen
    /// (a statement then says which there are).
    pub current: Option<String>,
    /// What was opened, in a line: the banner of the interactive REPL.
    pub banner: String,
    /// What the user should know before the first statement (a script's standard error; the
    /// REPL's banner).
    pub notes: Vec<String>,
}

/// What the session should open.
#[derive(Debug, Clone, Copy)]
pub struct OpenOptions<'a> {
    /// A database directory; `None`: in memory.
    pub dir: Option<&'a Path>,
    /// Load the demo data (in memory, or into a directory with no container yet).
    pub demo: bool,
    /// The container to start in (`--use`).
    pub container: Option<&'a str>,
    /// An interactive session starts in the first of several containers (and says so); a
    /// script must choose one.
    pub interactive: bool,
}

/// Whether `dir` holds no database yet: missing, or an empty directory.
fn is_new(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// The words of an error opening a database directory: the store's message alone (it names the
/// directory and what to do), any other error as it displays.
pub fn message(e: cosmoql::Error) -> String {
    match e {
        cosmoql::Error::Storage(e) => e.message,
        e => e.to_string(),
    }
}

/// Opens (or creates) the database directory `dir` and the database the REPL works in.
pub fn create(dir: &Path) -> Result<(CosmosClient, DatabaseClient), String> {
    let client = CosmosClient::open(dir).map_err(message)?;
    let db = first_database(&client)?;
    Ok((client, db))
}

/// The account's first database, or a new one named `demo` when it has none.
pub fn first_database(client: &CosmosClient) -> Result<DatabaseClient, String> {
    match client.database_ids().first() {
        Some(id) => Ok(client.database_client(id)),
        None => client.create_database("demo").map_err(|e| e.to_string()),
    }
}

/// The database's containers.
pub fn containers(db: &DatabaseClient) -> Vec<ContainerClient> {
    db.container_ids().unwrap_or_default().iter().filter_map(|id| db.container_client(id).ok()).collect()
}

/// `name (N items, key /k, P physical partitions)` for each container.
fn describe(containers: &[ContainerClient]) -> String {
    containers
        .iter()
        .map(|c| {
            format!(
                "{} ({}, key {}, {})",
                c.id(),
                plural(c.item_count() as u64, "item", "items"),
                describe_key(c.partition_key_definition()),
                plural(c.partition_count() as u64, "physical partition", "physical partitions")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What opening a database directory had to do that its user should know: a last record cut
/// short by a crash (never acknowledged) copied aside and cut off.
pub fn recovery_notes(client: &CosmosClient) -> Vec<String> {
    let Some(recovery) = client.recovery() else { return Vec::new() };
    match &recovery.torn_aside {
        Some(aside) => vec![format!(
            "the log ended in a record cut short by a crash ({} bytes, never acknowledged): copied to {} and cut off",
            recovery.torn_bytes,
            aside.display()
        )],
        None => Vec::new(),
    }
}

/// The session's database (see [`OpenOptions`]).
pub fn open(options: OpenOptions<'_>) -> Result<Opened, String> {
    let started = Instant::now();
    let seconds = || started.elapsed().as_secs_f64();
    let (client, db, pending, place) = match options.dir {
        None => {
            let client = CosmosClient::new();
            let db = client.create_database("demo").map_err(|e| e.to_string())?;
            (client, db, None, "demo database".to_string())
        }
        Some(dir) if is_new(dir) && !options.demo => {
            let client = CosmosClient::new();
            let db = client.create_database("demo").map_err(|e| e.to_string())?;
            (client, db, Some(dir.to_path_buf()), format!("database {}", dir.display()))
        }
        Some(dir) => {
            let (client, db) = create(dir)?;
            (client, db, None, format!("database {}", dir.display()))
        }
    };
    let mut existing = containers(&db);
    let loaded_demo = existing.is_empty() && options.demo;
    let mut banner = if loaded_demo {
        existing = crate::demo::load(&db)?;
        format!("{place} loaded in {:.2} s: {}", seconds(), describe(&existing))
    } else if let Some(dir) = &pending {
        format!(
            "new database: {} does not exist yet and is created at the first write (.create NAME /key)",
            dir.display()
        )
    } else if existing.is_empty() {
        let what = if options.dir.is_some() { format!("new {place}") } else { "empty database".to_string() };
        format!("{what}: .create NAME /key, then .import FILE")
    } else {
        format!("{place} opened in {:.2} s: {}", seconds(), describe(&existing))
    };
    let mut notes = recovery_notes(&client);
    if let (Some(dir), true, false) = (options.dir, options.demo, loaded_demo) {
        notes.push(format!("{} already holds containers: --demo loaded nothing", dir.display()));
    }
    let names: Vec<&str> = existing.iter().map(|c| c.id()).collect();
    let current = match (options.container, names.as_slice()) {
        (Some(name), _) if names.contains(&name) => Some(name.to_string()),
        (Some(name), []) => return Err(format!("no container `{name}`: the database has none yet")),
        (Some(name), _) => {
            return Err(format!("no container `{name}` (the database has {})", names.join(", ")));
        }
        (None, []) => None,
        (None, [one]) => Some(one.to_string()),
        // The demo starts in its main container (loaded now or before).
        (None, _) if options.demo && names.contains(&"telemetry") => Some("telemetry".to_string()),
        (None, [first, ..]) if options.interactive => {
            banner.push_str(&format!("; using {first} (.use NAME switches)"));
            Some(first.to_string())
        }
        (None, _) => None,
    };
    Ok(Opened { client, db, pending, current, banner, notes })
}
