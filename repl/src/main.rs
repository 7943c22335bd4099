//! `cosmoql`: the command-line tool.

use std::io::{Read, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Azure Cosmos DB for NoSQL-style SQL over a partitioned JSON document store.
#[derive(Debug, Parser)]
#[command(name = "cosmoql", version, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse a query and print it in normalized form (exit 0), or print the syntax error (exit 1).
    ///
    /// The normalized form has upper-case keywords, one space between tokens and only the
    /// parentheses the precedence rules need; parsing it again gives the same syntax tree.
    Parse {
        /// The query text, or `-` to read it from standard input.
        sql: String,
        /// Print the syntax tree (with byte spans) instead of the normalized SQL.
        #[arg(long)]
        ast: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Parse { sql, ast } => parse(&sql, ast),
    }
}

fn parse(sql: &str, ast: bool) -> ExitCode {
    let text = if sql == "-" {
        let mut buf = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut buf) {
            eprintln!("error: cannot read the query from standard input: {e}");
            return ExitCode::FAILURE;
        }
        buf
    } else {
        sql.to_string()
    };
    match cosmoql::parse(&text) {
        Ok(query) => {
            let out = if ast { format!("{query:#?}") } else { query.to_string() };
            // A closed pipe (`cosmoql parse ... | head`) is not an error worth a panic.
            let _ = writeln!(std::io::stdout(), "{out}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "{err}");
            ExitCode::FAILURE
        }
    }
}
