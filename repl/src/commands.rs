//! The REPL's dot-commands: [`COMMANDS`], one table of names and handlers, each a small function
//! over the [`Session`]. `.help` has their words (`help.rs`, checked against the table below); a
//! line no command names is an item command (`.insert`, `.get`, ... in `items.rs`) or gets a
//! "did you mean". Running statements and `.read` files is `run.rs`'s.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::sync::atomic::Ordering;
use std::time::Instant;

use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{ChangeFeedStart, ContainerProperties, FeedRange, ImportOptions, IndexingPolicy, PartitionKey};

use crate::printer::Printer;
use crate::progress::Counting;
use crate::reports::{describe_key, plural};
use crate::session::{Mode, Session, INTERRUPTED};
use crate::statements::{quote_hint, unquote, words};
use crate::text;

/// What a command asks of the run it is part of.
pub enum Flow {
    Continue,
    /// Leave, with the exit status asked for (`.exit N`).
    Quit(Option<u8>),
    /// `.read FILE`: run the statements of `text`, read from `path`.
    Read {
        path: String,
        text: String,
    },
}

/// One command line: the command's name, the text after it and that text's words.
pub struct Call<'a> {
    pub name: &'a str,
    pub rest: &'a str,
    pub args: Vec<&'a str>,
}

/// A command: the names it answers to (the first is the one `.help` shows) and what it does.
pub struct Command {
    pub names: &'static [&'static str],
    pub run: fn(&mut Session, &Call<'_>) -> Result<Flow, String>,
}

/// Every dot-command.
pub const COMMANDS: &[Command] = &[
    Command { names: &[".quit", ".exit", ".q"], run: quit },
    Command { names: &[".help", ".h", ".?"], run: help },
    Command { names: &[".output", ".once"], run: output },
    Command { names: &[".read"], run: read },
    Command { names: &[".containers", ".tables"], run: containers },
    Command { names: &[".use"], run: use_container },
    Command { names: &[".create"], run: create_container },
    Command { names: &[".drop"], run: drop_container },
    Command { names: &[".import"], run: import_file },
    Command { names: &[".export"], run: export },
    Command { names: &[".explain"], run: explain },
    Command { names: &[".analytics"], run: |s, c| done(s.analytics_command(&c.args)) },
    Command { names: &[".udf"], run: |s, c| done(s.udf_command(&c.args, c.rest)) },
    Command { names: &[".proc"], run: |s, c| done(s.proc_command(&c.args, c.rest)) },
    Command { names: &[".trigger"], run: |s, c| done(s.trigger_command(&c.args, c.rest)) },
    Command { names: &[".stats"], run: |s, _| done(stats(s)) },
    Command { names: &[".changes"], run: |s, c| done(changes(s, c.rest)) },
    Command { names: &[".skew"], run: |s, _| done(skew(s)) },
    Command { names: &[".throughput"], run: |s, c| done(throughput(s, c.rest)) },
    Command { names: &[".advise"], run: advise },
    Command { names: &[".policy"], run: policy },
    Command { names: &[".mode"], run: mode },
    Command { names: &[".headers"], run: |s, c| done(on_off(&c.args, ".headers").map(|on| s.display.headers = on)) },
    Command {
        names: &[".nullvalue"],
        run: |s, c| {
            s.display.null = unquote(c.rest);
            Ok(Flow::Continue)
        },
    },
    Command {
        names: &[".undefinedvalue"],
        run: |s, c| {
            s.display.undefined = unquote(c.rest);
            Ok(Flow::Continue)
        },
    },
    Command { names: &[".set"], run: |s, c| done(set(s, &c.args, c.rest)) },
    Command { names: &[".metrics"], run: |s, c| done(on_off(&c.args, ".metrics").map(|on| s.metrics = on)) },
    Command { names: &[".timing", ".timer"], run: |s, c| done(on_off(&c.args, c.name).map(|on| s.timing = on)) },
    Command { names: &[".pager"], run: |s, c| done(on_off(&c.args, ".pager").map(|on| s.pager = on)) },
    Command { names: &[".param"], run: param },
    Command { names: &[".params"], run: params },
];

/// Runs one dot-command line.
pub fn run(s: &mut Session, line: &str) -> Result<Flow, String> {
    let line = line.trim().trim_end_matches(';').trim_end();
    let (name, rest) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], line[i..].trim()),
        None => (line, ""),
    };
    let call = Call { name, rest, args: rest.split_whitespace().collect() };
    if let Some(command) = COMMANDS.iter().find(|c| c.names.contains(&name)) {
        return (command.run)(s, &call);
    }
    match crate::items::parse(name, rest) {
        Some(op) => done(item(s, op?)),
        None => {
            let known = crate::help::commands();
            let closest = known.into_iter().map(|w| (crate::usage::edit_distance(name, w), w)).min();
            Err(match closest {
                Some((d, w)) if d <= 2 => format!("unknown command {name}: did you mean {w}?"),
                _ => format!("unknown command {name}; .help lists the commands"),
            })
        }
    }
}

/// A handler's result when it asks nothing more of the run.
fn done(result: Result<(), String>) -> Result<Flow, String> {
    result.map(|()| Flow::Continue)
}

fn quit(_: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    match c.args.as_slice() {
        [] => Ok(Flow::Quit(None)),
        [n] => n
            .parse::<u8>()
            .map(|n| Flow::Quit(Some(n)))
            .map_err(|_| format!("{} takes an exit status from 0 to 255, not `{n}`", c.name)),
        _ => Err(format!("usage: {} [STATUS]", c.name)),
    }
}

fn help(_: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let text = match c.args[..] {
        [] => crate::help::HELP.to_string(),
        [topic] => {
            let topic = if topic.starts_with('.') { topic.to_string() } else { format!(".{topic}") };
            crate::help::help_for(&topic).ok_or_else(|| format!("no command {topic} (.help lists them)"))?
        }
        _ => return Err("usage: .help [COMMAND]".into()),
    };
    let _ = writeln!(crate::output::stdout(), "{text}");
    Ok(Flow::Continue)
}

/// `.output [FILE]`, `.once FILE`: where results go.
fn output(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let path = unquote(c.rest);
    if path.is_empty() {
        if c.name == ".once" {
            return Err("usage: .once FILE".into());
        }
        crate::output::redirect(None)?;
    } else {
        crate::output::redirect(Some(&path))?;
        s.once = c.name == ".once";
    }
    Ok(Flow::Continue)
}

fn read(_: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let path = unquote(c.rest);
    if path.is_empty() {
        return Err("usage: .read FILE".into());
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    Ok(Flow::Read { path, text })
}

fn use_container(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let [name] = c.args[..] else { return Err("usage: .use NAME".into()) };
    if s.db.container_client(name).is_err() {
        let names = s.container_ids();
        let still = match &s.current {
            Some(current) => format!("; still using {current}"),
            None => String::new(),
        };
        return Err(match names.as_slice() {
            [] => format!("no container `{name}`: the database has none yet (.create NAME /key){still}"),
            _ => format!("no container `{name}` (the database has {}){still}", names.join(", ")),
        });
    }
    s.current = Some(name.to_string());
    s.refresh_vocabulary();
    s.say(&format!("using {name}"));
    Ok(Flow::Continue)
}

fn create_container(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    // A quoted path segment may hold spaces: `.create t /"a b"`.
    let words = words(c.rest);
    done(create(s, &words.iter().map(String::as_str).collect::<Vec<_>>()))
}

fn drop_container(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let [name] = c.args[..] else { return Err("usage: .drop NAME".into()) };
    s.db.delete_container(name).map_err(|e| e.to_string())?;
    if s.current.as_deref() == Some(name) {
        s.current = None;
    }
    s.refresh_vocabulary();
    s.say(&format!("dropped {name}"));
    Ok(Flow::Continue)
}

fn import_file(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let (upsert, file) = match c.rest.strip_prefix("--upsert") {
        Some(file) if file.is_empty() || file.starts_with(char::is_whitespace) => (true, file),
        _ => (false, c.rest),
    };
    let file = unquote(file);
    if file.is_empty() {
        return Err("usage: .import [--upsert] FILE".into());
    }
    done(import(s, &file, upsert))
}

fn export(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let rest = c.rest;
    if rest.is_empty() {
        return Err("usage: .export FILE".into());
    }
    let container = s.container()?;
    let file = File::create(rest).map_err(|e| format!("cannot create {rest}: {e}"))?;
    let n = container.export_ndjson(BufWriter::new(file)).map_err(|e| format!("cannot write {rest}: {e}"))?;
    s.say(&format!("exported {n} items to {rest}"));
    Ok(Flow::Continue)
}

fn explain(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    if c.rest.is_empty() {
        return Err("usage: .explain SQL".into());
    }
    let (analyze, sql) = match c.rest.split_once(char::is_whitespace) {
        Some((w, sql)) if w.eq_ignore_ascii_case("analyze") => (true, sql),
        _ => (false, c.rest),
    };
    done(s.explain(sql, analyze))
}

fn advise(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let client = s.container()?;
    let workload = match c.rest {
        "" => None,
        path => Some(cosmoql::read_workload(std::path::Path::new(path))?),
    };
    let advisor = client.key_advisor();
    let partitions = advisor.partitions(None);
    let ranked = crate::advise_cmd::rank(&advisor, partitions, workload.as_ref()).map_err(|e| match c.rest {
        "" => e.to_string(),
        path => crate::advise_cmd::workload_error(std::path::Path::new(path), &e),
    })?;
    let ranked: Vec<_> = ranked.into_iter().map(|(c, _)| c).collect();
    s.say(&crate::advise_cmd::header(&client, &advisor, partitions));
    let _ = write!(crate::output::stdout(), "{}", cosmoql::ranking_table(&ranked, 10));
    Ok(Flow::Continue)
}

/// `.policy [JSON]`: the indexing policy, or replace it (rebuilt in the background).
fn policy(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let container = s.container()?;
    if c.rest.is_empty() {
        let text = to_json_string(&container.read_indexing_policy().to_json()).unwrap_or_default();
        let _ = writeln!(crate::output::stdout(), "{}", text::printable(&text));
        let progress = container.index_transformation_progress();
        if progress < 100 {
            s.say(&format!("index transformation {progress}% (partitions not yet transformed answer by scanning)"));
        }
    } else {
        let json = parse_json(c.rest).map_err(|e| format!("the policy is not JSON: {e}"))?;
        let policy = IndexingPolicy::from_json(&json).map_err(|e| e.to_string())?;
        // The transformation runs in the background; `.policy` shows how far it is.
        container.replace_indexing_policy(policy).map_err(|e| e.to_string())?;
        s.say("indexing policy replaced; indexes are rebuilt in the background (.policy shows progress)");
    }
    Ok(Flow::Continue)
}

fn mode(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    match c.args[..] {
        [name] => {
            s.mode = Mode::parse(name).ok_or_else(|| {
                let closest = Mode::NAMES
                    .split('|')
                    .map(|m| (crate::usage::edit_distance(name, m), m))
                    .min()
                    .filter(|(d, _)| *d <= 2)
                    .map(|(_, m)| format!(" (did you mean {m}?)"))
                    .unwrap_or_default();
                format!("unknown mode `{name}`{closest}: one of {}", Mode::NAMES)
            })?
        }
        [] => s.say(s.mode.name()),
        _ => return Err(format!("usage: .mode {}", Mode::NAMES)),
    }
    Ok(Flow::Continue)
}

/// `.param @name JSON` sets a parameter, `.param @name` removes it.
fn param(s: &mut Session, c: &Call<'_>) -> Result<Flow, String> {
    let (pname, json) = match c.rest.split_once(char::is_whitespace) {
        Some((n, j)) => (n, j.trim()),
        None => (c.rest, ""),
    };
    let pname = pname.trim_start_matches('@');
    if pname.is_empty() {
        return Err("usage: .param @name JSON".into());
    }
    if json.is_empty() {
        if s.params.remove(pname).is_none() {
            return Err(format!("no parameter @{pname}"));
        }
    } else {
        let value = parse_json(json).map_err(|e| {
            let hint =
                quote_hint(json).map(|q| format!("; a string is quoted: .param @{pname} {q}")).unwrap_or_default();
            format!("the value of @{pname}, `{json}`, is {e}{hint}")
        })?;
        s.params.insert(pname.to_string(), value);
    }
    Ok(Flow::Continue)
}

fn params(s: &mut Session, _: &Call<'_>) -> Result<Flow, String> {
    if s.params.is_empty() {
        s.say("no parameters (.param @name JSON)");
    }
    for (k, v) in &s.params {
        let _ = writeln!(crate::output::stdout(), "@{k} = {}", to_json_string(v).unwrap_or_default());
    }
    Ok(Flow::Continue)
}

fn containers(s: &mut Session, _: &Call<'_>) -> Result<Flow, String> {
    let mut out = crate::output::stdout();
    for id in s.container_ids() {
        let Ok(c) = s.db.container_client(&id) else { continue };
        let mark = if s.current.as_deref() == Some(id.as_str()) { "*" } else { " " };
        let _ = writeln!(
            out,
            "{mark} {id:<16} {:>8} items  {:>3} partitions  key {}",
            c.item_count(),
            c.partition_count(),
            describe_key(c.partition_key_definition())
        );
    }
    Ok(Flow::Continue)
}

/// `.insert`, `.get`, ...: one item operation on the current container; the items it
/// returns print as a query's results do, then its status and charge.
fn item(s: &mut Session, op: crate::items::ItemOp) -> Result<(), String> {
    let client = s.container()?;
    let writes = !matches!(op, crate::items::ItemOp::Get { .. });
    let answer = crate::items::run(&client, op)?;
    if !answer.items.is_empty() {
        // Items carry their system properties: tables leave them out, as for `SELECT *`.
        let mut printer = Printer::new(s.print_options(true));
        for item in answer.items {
            printer.push(item);
        }
        if let Some(text) = printer.finish() {
            crate::output::page(&text);
        }
    }
    if let Some(note) = &answer.note {
        s.say(note);
    }
    s.note(&crate::items::status_line(answer.status, answer.charge));
    if writes {
        s.refresh_vocabulary();
    }
    Ok(())
}

fn create(s: &mut Session, args: &[&str]) -> Result<(), String> {
    let usage =
        "usage: .create NAME [/path ...] | NAME --concat /a,/b [SEP] | NAME --random /a N [SEED] | NAME --hash /a /b N";
    let (&name, rest) = args.split_first().ok_or(usage)?;
    let definition = crate::container_cmd::key_definition(rest).map_err(|e| format!("{e}\n{usage}"))?;
    let described = describe_key(&definition);
    // A new database directory comes to be with its first container: once the container is
    // known to be a valid one (made in memory first), so a refused name creates nothing.
    let properties = ContainerProperties::with_key(name, definition);
    if s.pending.is_some() {
        s.db.create_container(properties.clone()).map_err(|e| e.to_string())?;
    }
    if let Some(dir) = s.pending.take() {
        match crate::open::create(&dir) {
            Ok((client, db)) => {
                s._client = client;
                s.db = db;
                s.say(&format!("created the database directory {}", dir.display()));
            }
            Err(e) => {
                s.pending = Some(dir);
                return Err(e);
            }
        }
    }
    s.db.create_container(properties).map_err(|e| e.to_string())?;
    s.current = Some(name.to_string());
    s.refresh_vocabulary();
    s.say(&format!("created {name} (key {described}); using it"));
    Ok(())
}

fn import(s: &mut Session, path: &str, upsert: bool) -> Result<(), String> {
    let container = s.container()?;
    let file = File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let bar = crate::progress::file_bar(len, path);
    let started = Instant::now();
    let reader = BufReader::with_capacity(1 << 20, Counting { inner: file, bar: bar.clone() });
    // Ctrl-C (the handler sets INTERRUPTED) stops the import between batches.
    INTERRUPTED.store(false, Ordering::SeqCst);
    let options = ImportOptions { upsert, ..ImportOptions::default() };
    let result = container.import_until(reader, options, &INTERRUPTED);
    bar.finish_and_clear();
    let summary = match result {
        Ok(summary) => summary,
        Err(e) if INTERRUPTED.swap(false, Ordering::SeqCst) => {
            s.refresh_vocabulary();
            return Err(format!(
                "{path}: import cancelled (Ctrl-C) after {}; they stay in {} ({} in all)",
                plural(e.summary.imported, "item", "items"),
                container.id(),
                plural(container.item_count() as u64, "item", "items")
            ));
        }
        Err(e) => return Err(format!("{path}: {e}")),
    };
    for problem in summary.problems.iter().take(10) {
        let _ = writeln!(crate::output::stderr(), "{path}: {}", text::printable(&problem.to_string()));
    }
    if summary.skipped + summary.failed > 10 {
        let _ = writeln!(
            crate::output::stderr(),
            "{path}: ... and {} more problems",
            summary.skipped + summary.failed - 10
        );
    }
    s.refresh_vocabulary();
    s.say(&format!(
        "imported {}{} into {}, skipped {}, failed {} ({:.2} s); {}, {}",
        plural(summary.imported, "item", "items"),
        crate::import_cmd::replaced(summary.replaced),
        container.id(),
        summary.skipped,
        summary.failed,
        started.elapsed().as_secs_f64(),
        plural(container.item_count() as u64, "item", "items"),
        plural(container.partition_count() as u64, "physical partition", "physical partitions")
    ));
    match crate::import_cmd::incomplete(&summary, ".import --upsert FILE") {
        Some(message) => Err(format!("{path}: {message}")),
        None => Ok(()),
    }
}

fn set(s: &mut Session, args: &[&str], rest: &str) -> Result<(), String> {
    let positive = |t: &str, what: &str| -> Result<Option<usize>, String> {
        if t == "off" {
            return Ok(None);
        }
        match t.parse::<usize>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!("{what} must be a positive number or off")),
        }
    };
    match args {
        [] => {
            let mut out = crate::output::stdout();
            let _ = writeln!(out, "maxdop          {}", s.options.max_degree_of_parallelism);
            let _ = writeln!(out, "maxbuffered     {}", opt(s.options.max_buffered_item_count));
            let _ = writeln!(out, "pagesize        {}", opt(s.page_size));
            let pk = s.options.partition_key.as_ref().map_or("off".to_string(), |k| k.to_string());
            let _ = writeln!(out, "pk              {pk}");
            let _ = writeln!(
                out,
                "crosspartition  {}",
                if s.options.enable_cross_partition { "on" } else { "off" }
            );
            let _ = writeln!(out, "maxrows         {}", s.max_rows);
            let budget = s.options.memory_budget.unwrap_or(cosmoql::DEFAULT_MEMORY_BUDGET);
            let _ = writeln!(out, "budget          {budget}");
            let _ = writeln!(out, "mode            {}", s.mode.name());
            let _ = writeln!(out, "headers         {}", if s.display.headers { "on" } else { "off" });
            let _ = writeln!(out, "nullvalue       {:?}", s.display.null);
            let _ = writeln!(out, "undefinedvalue  {:?}", s.display.undefined);
            let _ = writeln!(out, "metrics         {}", if s.metrics { "on" } else { "off" });
            let _ = writeln!(out, "timing          {}", if s.timing { "on" } else { "off" });
        }
        ["maxdop", n] => {
            let n: i32 = n.parse().map_err(|_| "maxdop must be -1, 0 or a positive number".to_string())?;
            if n < -1 {
                return Err("maxdop must be -1, 0 or a positive number".into());
            }
            s.options.max_degree_of_parallelism = n;
        }
        ["maxbuffered", n] => s.options.max_buffered_item_count = positive(n, "maxbuffered")?,
        ["pagesize", n] => s.page_size = positive(n, "pagesize")?,
        ["maxrows", n] => s.max_rows = positive(n, "maxrows")?.unwrap_or(usize::MAX),
        ["budget", n] => s.options.memory_budget = positive(n, "budget")?.map(|b| b as u64),
        ["crosspartition", _] => s.options.enable_cross_partition = on_off(&args[1..], ".set crosspartition")?,
        ["pk", "off"] => s.options.partition_key = None,
        ["pk", ..] => {
            let json = rest["pk".len()..].trim();
            s.options.partition_key = Some(PartitionKey::parse_json(json).map_err(|e| {
                let hint = quote_hint(json).map(|q| format!("; a string is quoted: .set pk {q}")).unwrap_or_default();
                format!("pk: {e}{hint}")
            })?);
        }
        _ => return Err(
            "usage: .set maxdop N | maxbuffered N|off | pagesize N|off | pk JSON|off | crosspartition on|off | maxrows N | budget BYTES|off"
                .into(),
        ),
    }
    Ok(())
}

/// `.throughput [off | N | autoscale N | burst on|off | redistribute ID=RU... | even]`.
fn throughput(s: &Session, args: &str) -> Result<(), String> {
    let text = crate::container_cmd::throughput(&s.container()?, args)?;
    let _ = write!(crate::output::stdout(), "{text}");
    Ok(())
}

/// `.changes [now | reset] [N]`: the current container's change feed since the last
/// `.changes` (from the beginning the first time): each changed item once, in its latest
/// version, at most N (default 20) at a time.
fn changes(s: &mut Session, args: &str) -> Result<(), String> {
    let client = s.container()?;
    let name = client.id().to_string();
    let mut max = 20;
    for word in args.split_whitespace() {
        match word {
            "reset" => {
                s.changes.remove(&name);
                s.say("the change feed of this container starts from the beginning again");
                return Ok(());
            }
            "now" => {
                let page = client
                    .read_change_feed::<Value>(&FeedRange::All, ChangeFeedStart::Now, None, 1)
                    .map_err(|e| e.to_string())?;
                s.changes.insert(name, page.continuation);
                s.say("the change feed of this container starts now: `.changes` shows what is written next");
                return Ok(());
            }
            n => max = n.parse::<usize>().map_err(|_| format!("usage: .changes [now | reset] [N], not `{n}`"))?,
        }
    }
    let token = s.changes.get(&name).cloned();
    let page = client
        .read_change_feed::<Value>(&FeedRange::All, ChangeFeedStart::Beginning, token.as_deref(), max)
        .map_err(|e| e.to_string())?;
    let mut out = crate::output::stdout();
    for item in &page.items {
        let _ = writeln!(out, "{}", text::printable(&to_json_string(item).unwrap_or_default()));
    }
    let n = page.items.len();
    s.changes.insert(name, page.continuation);
    s.say(&match n {
        0 => "no changes since the last `.changes`".to_string(),
        1 => "1 change".to_string(),
        n if n == max => format!("{n} changes (more may follow: `.changes` again)"),
        n => format!("{n} changes"),
    });
    Ok(())
}

fn skew(s: &Session) -> Result<(), String> {
    let report = s.container()?.skew_report();
    let mut out = crate::output::stdout();
    let _ = write!(out, "{report}");
    Ok(())
}

fn stats(s: &Session) -> Result<(), String> {
    let text = crate::reports::stats(&s.container()?);
    let _ = write!(crate::output::stdout(), "{text}");
    Ok(())
}

fn opt(v: Option<usize>) -> String {
    v.map_or("off".to_string(), |n| n.to_string())
}

fn on_off(args: &[&str], what: &str) -> Result<bool, String> {
    match args {
        ["on"] => Ok(true),
        ["off"] => Ok(false),
        _ => Err(format!("usage: {what} on|off")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_the_help_name_the_same_commands() {
        let named: Vec<&str> = COMMANDS.iter().flat_map(|c| c.names.iter().copied()).collect();
        let mut seen = std::collections::HashSet::new();
        for name in &named {
            assert!(seen.insert(*name), "{name} is in the table twice");
        }
        for name in crate::help::commands() {
            let item = crate::items::parse(name, "").is_some();
            assert!(named.contains(&name) || item, "{name} has help but no handler");
        }
        for command in COMMANDS {
            assert!(crate::help::help_for(command.names[0]).is_some(), "{} has no help line", command.names[0]);
            assert!(crate::help::commands().contains(&command.names[0]), "{} is not completed", command.names[0]);
        }
    }
}
