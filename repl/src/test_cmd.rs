//! `cosmoql test SUITE [--bless] [--endpoint URL --key KEY [--cacert FILE]]`: a query suite on the
//! embedded engine, or on any Cosmos DB endpoint (the service, an emulator, `cosmoql serve`).
//!
//! On an endpoint the run creates a database `cosmoql-test-<random>`, a container per fixture
//! container and partition count a case asks for (the throughput that gives that many physical
//! partitions on the service: about 6,000 RU/s each beyond the first, 400 RU/s at least), upserts
//! the fixture's items, runs every case through `cosmoql_gateway::remote` (the SDKs' way: a query
//! plan, then each range's query merged on the client), and deletes the database at the end. With
//! `--bless` the endpoint's answers become the suite's expectations.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cosmoql::testing::{self, ContainerSpec, Fixture, RunOptions, Settings, SuiteTarget};
use cosmoql::{QueryError, Value};
use cosmoql_gateway::remote::{container_properties, Account, Collection, QueryRequest};

/// Options of `cosmoql test`.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// The suite folder.
    dir: PathBuf,
    /// Write the actual results of failing cases into the `.sql` files (with --endpoint: the
    /// endpoint's answers).
    #[arg(long)]
    bless: bool,
    /// Run the suite on a Cosmos DB endpoint (`https://ACCOUNT.documents.azure.com:443/`, an
    /// emulator, `cosmoql serve`'s URL) instead of the embedded engine. It creates a database
    /// for the run and deletes it at the end; containers get the throughput their partition
    /// count needs (billed on the service).
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
    /// The account key (base64). Default: the emulator's well-known key.
    #[arg(long, value_name = "KEY", requires = "endpoint")]
    key: Option<String>,
    /// A CA certificate (PEM) to trust besides the WebPKI roots: `cosmoql serve --tls
    /// --cert-out FILE`'s, an emulator's.
    #[arg(long, value_name = "FILE", requires = "endpoint")]
    cacert: Option<PathBuf>,
    /// Plan every cross-partition query and merge the ranges' results here, as the JavaScript
    /// and Rust SDKs do; by default a query is sent whole and planned only when the endpoint
    /// refuses it whole (400/1004), as the Python SDK does.
    #[arg(long = "client-merge", requires = "endpoint")]
    client_merge: bool,
}

/// Runs the suite; `Ok(true)` when every case passed.
pub fn run(args: &TestArgs) -> Result<(bool, String), String> {
    let options = RunOptions { bless: args.bless };
    let report = match &args.endpoint {
        None => testing::run_suite(&args.dir, &options).map_err(|e| e.to_string())?,
        Some(endpoint) => {
            let fixture = Fixture::load(&args.dir).map_err(|e| e.to_string())?;
            let ca = match &args.cacert {
                Some(file) => Some(std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?),
                None => None,
            };
            let key = args.key.clone().unwrap_or_else(|| cosmoql_gateway::auth::EMULATOR_KEY.to_string());
            let account = Account::connect(endpoint, &key, ca.as_deref()).map_err(|e| e.to_string())?;
            let target =
                Endpoint::new(account, &args.dir, args.client_merge).map_err(|e| format!("{endpoint}: {e}"))?;
            testing::run_suite_on(&fixture, &target, &options).map_err(|e| e.to_string())?
        }
    };
    Ok((report.is_ok(), report.render()))
}

/// A suite's queries on an endpoint, in a database of their own.
struct Endpoint {
    account: Account,
    database: String,
    dir: PathBuf,
    client_merge: bool,
    containers: Mutex<HashMap<(String, usize), Collection>>,
}

impl Endpoint {
    fn new(account: Account, dir: &Path, client_merge: bool) -> Result<Endpoint, String> {
        let mut id = [0u8; 6];
        getrandom::fill(&mut id).map_err(|e| format!("no randomness for the database name: {e}"))?;
        let database = format!("cosmoql-test-{}", id.iter().map(|b| format!("{b:02x}")).collect::<String>());
        account.create_database(&database).map_err(|e| e.to_string())?;
        Ok(Endpoint { account, database, dir: dir.to_path_buf(), client_merge, containers: Mutex::new(HashMap::new()) })
    }

    fn problem(&self, message: String) -> testing::Error {
        testing::Error::Fixture { path: self.dir.clone(), message }
    }

    /// The container for `spec` with `partitions` physical partitions: created and loaded the
    /// first time a case asks for it.
    fn collection(&self, spec: &ContainerSpec, partitions: usize) -> Result<Collection, testing::Error> {
        let mut containers = self.containers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = containers.get(&(spec.id.clone(), partitions)) {
            return Ok(c.clone());
        }
        if spec.partition_key.synthetic_key().is_some() {
            return Err(self.problem(format!(
                "container \"{}\": a synthetic partition key is cosmoql's own; an endpoint cannot load it",
                spec.id
            )));
        }
        let id = if partitions == spec.partitions { spec.id.clone() } else { format!("{}-p{partitions}", spec.id) };
        let properties = container_properties(&id, &spec.partition_key, Some(spec.indexing_policy.to_json()), None);
        // ceil(RU / 6,000) physical partitions, as the service starts a container.
        let throughput = (6000 * (partitions.max(1) as u32 - 1) + 100).max(400);
        self.account
            .create_container(&self.database, &properties, throughput)
            .map_err(|e| self.problem(format!("container \"{id}\": {e}")))?;
        let collection =
            Collection { database: self.database.clone(), id: id.clone(), definition: spec.partition_key.clone() };
        for item in spec.items()? {
            self.account.upsert(&collection, &item).map_err(|e| self.problem(format!("container \"{id}\": {e}")))?;
        }
        for (udf, body) in &spec.udfs {
            self.account
                .create_user_defined_function(&collection, udf, body)
                .map_err(|e| self.problem(format!("container \"{id}\": udf.{udf}: {e}")))?;
        }
        containers.insert((spec.id.clone(), partitions), collection.clone());
        Ok(collection)
    }
}

impl SuiteTarget for Endpoint {
    fn run(
        &self,
        fixture: &Fixture,
        settings: &Settings,
        sql: &str,
    ) -> Result<Result<Vec<Value>, QueryError>, testing::Error> {
        let spec = match &settings.container {
            None => &fixture.containers()[0],
            Some(id) => fixture
                .containers()
                .iter()
                .find(|c| &c.id == id)
                .ok_or_else(|| self.problem(format!("no container \"{id}\" in the fixture")))?,
        };
        let collection = self.collection(spec, settings.partitions.unwrap_or(spec.partitions))?;
        let request = QueryRequest {
            sql: sql.to_string(),
            parameters: settings.parameters.clone(),
            partition_key: settings.partition_key.clone(),
            page_size: settings.page_size,
            client_merge: self.client_merge,
        };
        match self.account.query(&collection, &request) {
            Ok(result) => Ok(result.map(|rows| rows.iter().map(testing::strip_system).collect())),
            Err(e) => Err(self.problem(e.to_string())),
        }
    }

    fn finish(&self) -> Result<(), testing::Error> {
        self.account.delete_database(&self.database).map_err(|e| self.problem(e.to_string()))
    }
}
