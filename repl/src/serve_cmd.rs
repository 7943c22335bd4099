//! `cosmoql serve`: the Cosmos DB REST API on a socket, for apps on the official SDKs.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use cosmoql::CosmosClient;
use cosmoql_gateway::auth::{Keys, EMULATOR_KEY};
use cosmoql_gateway::tls::Tls;
use cosmoql_gateway::{RangeMode, RetiredRanges, ServerConfig};

/// Options of `cosmoql serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// A database directory to serve (durable: every acknowledged write is on disk; created by
    /// the first write). Without it, the account lives in memory and ends with the process.
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The port to listen on (0: any free port; the `listening on` line says which).
    #[arg(long, default_value_t = 8081)]
    port: u16,
    /// The address to listen on. The default, loopback, is reachable from this machine only.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    bind: IpAddr,
    /// The account's master key (base64, as the portal shows it). Default: the emulator's
    /// well-known key, so the emulator's connection string works unchanged.
    #[arg(long, value_name = "KEY")]
    key: Option<String>,
    /// A read-only key (base64): requests signed with it may read and query, not write (403).
    #[arg(long = "read-only-key", value_name = "KEY")]
    read_only_key: Option<String>,
    /// How containers' partition key ranges are listed: `physical`, one per physical partition
    /// as the service does (SDKs that fan out per range merge what they can and refuse the
    /// rest, as against the service); `single`, one range per container, so such SDKs (the
    /// Rust SDK) send every query whole and get every shape, aggregates and GROUP BY included.
    #[arg(long, value_enum, default_value = "physical")]
    ranges: RangesArg,
    /// How a request for a partition key range that a split retired is answered:
    /// `transparent`, for the span it had (its continuation still valid: no client needs to
    /// handle the split); `gone`, 410 with substatus 1002 as the service answers, so the SDKs
    /// reload the ranges and repair the request themselves.
    #[arg(long = "retired-ranges", value_enum, default_value = "transparent")]
    retired_ranges: RetiredArg,
    /// Serve https with a self-signed certificate made at start, valid for localhost,
    /// 127.0.0.1, ::1 and the --bind address (the emulator's way; clients must trust it or skip
    /// verification, see --cert-out).
    #[arg(long, conflicts_with = "no_tls")]
    tls: bool,
    /// Serve plain http (the default): every SDK allows it for loopback hosts.
    #[arg(long = "no-tls")]
    no_tls: bool,
    /// With --tls, write the certificate (PEM) to FILE before accepting requests, for clients
    /// that trust it (`NODE_EXTRA_CA_CERTS=FILE` for JavaScript, `connection_verify=FILE` for
    /// Python, `curl --cacert FILE`).
    #[arg(long = "cert-out", value_name = "FILE", requires = "tls")]
    cert_out: Option<PathBuf>,
}

/// `--retired-ranges`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum RetiredArg {
    Transparent,
    Gone,
}

/// `--ranges`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum RangesArg {
    Physical,
    Single,
}

/// Runs the server until Ctrl-C or SIGTERM.
pub fn run(args: &ServeArgs) -> Result<(), String> {
    let master = args.key.clone().unwrap_or_else(|| EMULATOR_KEY.to_string());
    let keys = Keys::new(&master, args.read_only_key.as_deref())?;
    let client = match &args.dir {
        Some(dir) => CosmosClient::open(dir).map_err(|e| format!("{}: {e}", dir.display()))?,
        None => CosmosClient::new(),
    };
    let ranges = match args.ranges {
        RangesArg::Physical => RangeMode::Physical,
        RangesArg::Single => RangeMode::Single,
    };
    let tls = if args.tls { Some(Tls::self_signed(args.bind)?) } else { None };
    if let (Some(tls), Some(file)) = (&tls, &args.cert_out) {
        std::fs::write(file, &tls.certificate_pem).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let retired = match args.retired_ranges {
        RetiredArg::Transparent => RetiredRanges::Transparent,
        RetiredArg::Gone => RetiredRanges::Gone,
    };
    let config = ServerConfig {
        bind: SocketAddr::new(args.bind, args.port),
        keys,
        ranges,
        tls,
        retired,
        ..ServerConfig::default()
    };
    let bind = config.bind;
    let scheme = config.scheme();
    let ready = |addr: SocketAddr| {
        let endpoint = format!("{scheme}://{addr}/");
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "cosmoql serve: listening on {endpoint}");
        let _ = writeln!(out, "connection string: AccountEndpoint={endpoint};AccountKey={master};");
        let _ = out.flush();
    };
    cosmoql_gateway::serve_until_signal(client, config, ready).map_err(|e| format!("cannot serve on {bind}: {e}"))
}
