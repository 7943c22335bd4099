//! `cosmoql-ballista`: standard SQL over the analytical store's Parquet layout on a Ballista
//! cluster, or on a scheduler and executors started in this process (`--standalone`).

use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "\
cosmoql-ballista: standard SQL over the files `cosmoql export-parquet` writes, run by Ballista

USAGE:
    cosmoql-ballista --parquet DIR [--scheduler df://HOST:PORT | --standalone [--executors N]] SQL...

Each container under DIR (DIR/<database>/<container>/pkrange=<id>/*.parquet) is a table
<database>.<container>, and <container> when no other database has one of that name; the
partition key range is a column `pkrange`. Each statement's rows are printed as JSON, a row a line.

OPTIONS:
    --parquet DIR         the layout `cosmoql export-parquet --out DIR` wrote
    --scheduler URL       a Ballista scheduler (default df://localhost:50050); its executors must
                          see DIR at the same path (a shared volume)
    --standalone          start a scheduler and executors in this process, on loopback ports
    --executors N         executors of --standalone (default 2)
    -h, --help            this text
";

struct Args {
    parquet: PathBuf,
    scheduler: Option<String>,
    executors: Option<usize>,
    statements: Vec<String>,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut parquet = None;
    let mut scheduler = None;
    let mut standalone = false;
    let mut executors = None;
    let mut statements = Vec::new();
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--parquet" => parquet = Some(PathBuf::from(value("--parquet")?)),
            "--scheduler" => scheduler = Some(value("--scheduler")?),
            "--standalone" => standalone = true,
            "--executors" => {
                let n = value("--executors")?;
                match n.parse::<usize>() {
                    Ok(n) if (1..=64).contains(&n) => executors = Some(n),
                    _ => return Err(format!("--executors takes a number from 1 to 64, not {n:?}")),
                }
            }
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag} (see --help)")),
            _ => statements.push(arg),
        }
    }
    let parquet = parquet.ok_or("--parquet DIR is required (see --help)")?;
    if statements.is_empty() {
        return Err("no SQL statement given (see --help)".into());
    }
    match (standalone, &scheduler, executors) {
        (true, Some(_), _) => return Err("--standalone and --scheduler exclude each other".into()),
        (false, _, Some(_)) => return Err("--executors goes with --standalone".into()),
        _ => {}
    }
    let executors = if standalone { Some(executors.unwrap_or(2)) } else { None };
    Ok(Some(Args { parquet, scheduler, executors, statements }))
}

async fn run(args: Args) -> Result<(), String> {
    let url = match args.executors {
        Some(n) => cosmoql_ballista::start_loopback(n, 2).await.map_err(|e| e.to_string())?,
        None => args.scheduler.unwrap_or_else(|| "df://localhost:50050".into()),
    };
    let ctx = cosmoql_ballista::connect(&url).await.map_err(|e| format!("{url}: {e}"))?;
    cosmoql_ballista::register_layout(&ctx, &args.parquet).await.map_err(|e| e.to_string())?;
    for statement in &args.statements {
        let rows = cosmoql_ballista::sql(&ctx, statement).await.map_err(|e| format!("{statement}\n{e}"))?;
        for row in rows {
            println!("{}", cosmoql::value::to_json_string(&row).ok_or("a row without a JSON form (a bug)")?);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
