//! The REPL's `.help`: every command in a line or a few, and one command's lines.

/// The lines of [`HELP`] about `command` (its line and the lines continuing it).
pub fn help_for(command: &str) -> Option<String> {
    let mut lines = HELP.lines().skip_while(|l| {
        let l = l.trim_start();
        !(l.starts_with(command) && l[command.len()..].starts_with([' ', ',', '|']))
    });
    let first = lines.next()?;
    let indent = first.len() - first.trim_start().len();
    let mut out = vec![first.to_string()];
    out.extend(lines.take_while(|l| l.len() - l.trim_start().len() > indent + 10).map(str::to_string));
    Some(out.join("\n"))
}

/// The text of `.help`.
pub const HELP: &str = "\
Statements end with `;` or an empty line. A query runs on the current container (the name after
FROM is an alias, as in Cosmos DB). Ctrl-C clears the line or cancels a running query; Ctrl-D quits.

  SELECT ...;                       run a query
  EXPLAIN [ANALYZE] SELECT ...;     the plan (targets and why, per-partition work, merges)
  .explain SQL                      same as EXPLAIN
  .analytics [on|off]               statements as standard SQL (DataFusion: joins, window
                                    functions, ...) on the analytical store, the columnar mirror
                                    of the containers that have one (<database>.<container>);
                                    ANALYZE SQL runs one statement there in either mode
  .analytics enable|disable [NAME]  give the current (or NAME) container an analytical store
                                    (analyticalStorageTtl -1), or take it away
  .analytics schema                 the current container's inferred analytical schema and what
                                    it left out
  .analytics route on|off           run the Cosmos SQL aggregates a container's analytical store
                                    answers exactly there (on; EXPLAIN says where and why)
  .udf create|replace NAME FILE     register the current container's user-defined function NAME
                                    (FILE holds its JavaScript, `function (x) { ... }`), called
                                    in queries as udf.NAME(...); also `.udf list`, `show NAME`,
                                    `drop NAME`
  .proc create|replace NAME FILE    register a stored procedure; also `.proc list`, `show NAME`,
                                    `drop NAME`
  .proc exec NAME PK [ARGS]         run it in the logical partition PK (JSON) with ARGS (a JSON
                                    array of its parameters): its writes are one transaction;
                                    prints its response body and script log
  .trigger create NAME pre|post OP FILE
                                    register a trigger for OP (all, create, replace, upsert,
                                    delete); it runs on the writes that name it (.insert and
                                    .upsert take --pre-trigger NAME and --post-trigger NAME, as
                                    the SDKs' options); also `list`, `show NAME`, `drop NAME`
  .containers                       list containers (items, partitions, key)
  .use NAME                         switch the current container
  .create NAME /path [/path2 ...]   new container, keyed on one path or hierarchical (2-3 paths)
  .create NAME                      new container without a partition key
  .create NAME --concat /a,/b [SEP] synthetic key: values of /a and /b joined with SEP (default -)
  .create NAME --random /a N [SEED] synthetic key: value of /a, a dot and a random bucket 1..N
  .create NAME --hash /a /b N       synthetic key: value of /a, a dot and hash(/b) % N + 1
                                    (synthetic keys are written to the item's `partitionKey`)
  .drop NAME                        delete a container
  .insert JSON                      create an item in the current container (409 if its id is taken)
  .upsert JSON                      create or replace an item
  .replace JSON [--if-match ETAG]   replace an item whole (its id and key say which; with the
                                    item's _etag, only if no one changed it since: else 412)
  .get ID [PK]                      read an item (without PK: looked up by a query over every partition)
  .delete ID [PK]                   delete an item, e.g. .delete r1 \"dev-00042\"
  .patch ID [PK] OPERATIONS         patch an item in place, e.g. .patch r1 \"d1\" [{\"op\": \"incr\",
                                    \"path\": \"/n\", \"value\": 1}] (set, add, replace, remove, incr)
                                    (each prints its status and request charge; PK is JSON, or
                                    undefined for an item without the key, and may be left out
                                    in a container without a key or keyed on /id)
  .import [--upsert] FILE           load a JSON array or NDJSON file into the current container
                                    (Ctrl-C stops it; what was imported stays; --upsert
                                    replaces items that exist, to finish a stopped import)
  .export FILE                      write the current container as NDJSON
  .policy [JSON]                    show or replace the current container's indexing policy
                                    (ORDER BY on several paths needs a composite index); a
                                    replacement rebuilds the indexes in the background
  .stats                            data and index memory per item, items and bytes per physical
                                    partition, largest logical partitions, and the skew
  .advise [WORKLOAD]                candidate partition keys for the current container, ranked by
                                    how they spread storage and writes, with the reasons; with a
                                    workload file (as `cosmoql advise --workload`), also by the
                                    queries they keep on one partition and the writes' load
  .throughput [RU | autoscale MAX | off]
                                    show or provision the current container's throughput (the
                                    service's minimums and steps; more than 10,000 RU/s per
                                    partition splits partitions); also `burst on|off`,
                                    `redistribute ID=RU...` and `even`
  .changes [now | reset] [N]        the current container's change feed: what was created or
                                    replaced since the last `.changes` (all of it the first time),
                                    each item once in its latest version, N at a time (20)
  .skew                             per physical partition: items, bytes, logical partitions, RU,
                                    peak RU % of its budget, 429s; spread measures, heaviest
                                    keys and flags (hot partition, 429 rate, key near its cap)
  .mode MODE                        result format: table (box), ascii, line, markdown, csv, tsv,
                                    json, ndjson
  .headers on|off                   header lines in tables, CSV, TSV, Markdown
  .nullvalue TEXT                   how null shows in the text modes (default null)
  .undefinedvalue TEXT              how a missing property shows (default: empty)
  .set maxdop N                     producers at once (-1 one per core, 0/1 serial)
  .set maxbuffered N|off            bound on results buffered by the cross-partition merge
  .set pagesize N|off               fetch in pages of N through continuation tokens
  .set pk JSON|off                  scope queries to one logical partition, e.g. .set pk \"dev-00042\"
  .set crosspartition on|off        allow queries that read several physical partitions
  .set maxrows N                    rows a table shows (default 100; the others are counted, not kept)
  .set budget BYTES|off             memory a query's sorts, groups and DISTINCT may hold (default 1 GiB)
  .set                              show the settings
  .param @name JSON                 bind a parameter for later queries, e.g. .param @d \"dev-00001\"
  .param @name                      remove it
  .params                           list the parameters
  .metrics on|off                   after each query: its charge, partitions, documents and sizes,
                                    index use, times, and the indexes that would help
  .timing on|off                    time of each query (also .timer)
  .pager on|off                     tables and lines longer than the screen through $PAGER (less)
  .output [FILE]                    results to FILE from now on (none: back to the screen)
  .once FILE                        the next statement's results to FILE
  .read FILE                        run the statements of FILE
  .help [COMMAND]                   this text, or one command's
  .quit [N]                         leave, with exit status N if given (also .exit, Ctrl-D)";

/// Every command's name (`.help` lists them, first word of their lines; aliases too): what Tab
/// completes, and what a mistyped command is compared with.
pub fn commands() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = HELP
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| l.starts_with('.'))
        .flat_map(|l| {
            l.split("  ").next().unwrap_or("").split([',', '|']).map(|w| w.split_whitespace().next().unwrap_or(""))
        })
        .filter(|w| w.starts_with('.') && w.len() > 1)
        .collect();
    names.extend([".tables", ".timer", ".exit", ".q", ".h"]);
    names.sort_unstable();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_named_once_and_has_its_help() {
        let names = commands();
        for name in [".help", ".insert", ".get", ".delete", ".patch", ".use", ".mode", ".quit", ".exit", ".tables"] {
            assert!(names.contains(&name), "{name}: {names:?}");
        }
        for name in names.iter().filter(|n| ![".tables", ".timer", ".exit", ".q", ".h"].contains(n)) {
            assert!(help_for(name).is_some(), "{name} has no help line");
        }
    }
}
