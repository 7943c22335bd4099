//! Help for a command line that went wrong: a mistyped command (`improt`) is named, never taken
//! for a new database directory, and an option given where it does not belong says where it
//! does (clap's own tip, "use '-- --partition-key'", helps no one here).

use std::ffi::OsString;
use std::path::Path;

/// A bare word close to a command's name (`querry`, `improt`) is a mistyped command, not a new
/// database directory to create.
pub fn check_not_a_command(cli: &clap::Command, path: &Path) -> Result<(), String> {
    let word = path.to_string_lossy();
    if word.contains('/') || word.contains('.') {
        return Ok(());
    }
    match closest_command(cli, &word) {
        Some(name) => Err(format!(
            "unknown command `{word}`: did you mean `{name}`? (for a new database directory of that name, write ./{word})"
        )),
        None => Ok(()),
    }
}

/// The command `word` is a typo of: one edit away for a short word, two for one of six letters or
/// more (`improt`), so that ordinary names (`temp`, `ask`) stay names.
fn closest_command<'a>(cli: &'a clap::Command, word: &str) -> Option<&'a str> {
    let allowed = if word.chars().count() >= 6 { 2 } else { 1 };
    cli.get_subcommands()
        .map(|c| (edit_distance(word, c.get_name()), c.get_name()))
        .min()
        .filter(|(d, _)| *d <= allowed)
        .map(|(_, name)| name)
}

/// Edit distance of short words, a swap of two neighbours counting one edit (`improt`,
/// `skwe`): the optimal string alignment distance.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// For clap's "unexpected argument" error: the message to print instead, saying which commands
/// take the option (and, for the REPL given a data file, the command that loads it).
pub fn unknown_option(cli: &clap::Command, args: &[OsString], error: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg) else { return None };
    let option = arg.split('=').next().unwrap_or(arg);
    let words: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    // After `--` every word is a value (`cosmoql item get -- -x ...`).
    if let Some(at) = words.iter().position(|w| w == "--") {
        if words[at + 1..].iter().any(|w| w == option || w.starts_with(&format!("{option}="))) {
            return Some(format!(
                "{option} comes after `--`, after which every word is a value: put the options before `--`"
            ));
        }
    }
    let command = words.iter().find_map(|w| cli.find_subcommand(w));
    // The innermost command named (`cosmoql item upsert`).
    let inner = command.and_then(|c| words.iter().find_map(|w| c.find_subcommand(w)));
    let here = match (command, inner) {
        (Some(c), Some(sub)) => format!("`cosmoql {} {}`", c.get_name(), sub.get_name()),
        (Some(c), None) => format!("`cosmoql {}`", c.get_name()),
        (None, _) => "the REPL (`cosmoql` without a command)".to_string(),
    };
    let long = option.strip_prefix("--");
    let short = option.strip_prefix('-').filter(|s| s.chars().count() == 1).and_then(|s| s.chars().next());
    let takes = |c: &clap::Command| {
        c.get_arguments()
            .any(|a| long.is_some_and(|l| a.get_long() == Some(l)) || short.is_some_and(|s| a.get_short() == Some(s)))
    };
    // The commands that take it (`item replace` for one of `item`'s commands).
    let mut takers: Vec<String> = Vec::new();
    for c in cli.get_subcommands() {
        let subs: Vec<&clap::Command> = c.get_subcommands().filter(|s| takes(s) && !takes(c)).collect();
        if takes(c) {
            takers.push(c.get_name().to_string());
        } else {
            takers.extend(subs.iter().map(|s| format!("{} {}", c.get_name(), s.get_name())));
        }
    }
    // `cosmoql skwe --db d`: the word before is a mistyped command.
    if command.is_none() {
        let first = words.iter().find(|w| !w.starts_with('-'));
        if let Some(name) = first.and_then(|w| closest_command(cli, w).filter(|name| name != w)) {
            return Some(format!(
                "unknown command `{}`: did you mean `{name}`? (`cosmoql {name} --help` lists its options)",
                first.map_or("", String::as_str)
            ));
        }
    }
    let mut message = format!("{option} is not an option of {here}");
    let path = match (command, inner) {
        (Some(c), Some(sub)) => format!("{} {} ", c.get_name(), sub.get_name()),
        (Some(c), None) => format!("{} ", c.get_name()),
        (None, _) => String::new(),
    };
    match takers.as_slice() {
        [] => message.push_str(&format!("; `cosmoql {path}--help` lists its options")),
        [one] => message.push_str(&format!("; it is an option of `cosmoql {one}`")),
        many => message.push_str(&format!("; it is an option of `cosmoql` {}", many.join(", "))),
    }
    // `cosmoql --db mydb`: the REPL takes the directory itself.
    if command.is_none() && long == Some("db") {
        if let Some(dir) = words.iter().skip_while(|w| w.as_str() != option).nth(1) {
            message.push_str(&format!("\nto open the database in the REPL: cosmoql {dir}"));
        }
    }
    // `cosmoql readings.ndjson --partition-key /k`: loading a file is `import`'s work.
    let data = words.iter().find(|w| w.ends_with(".json") || w.ends_with(".ndjson"));
    if let (None, Some(file), true) = (command, data, takers.iter().any(|t| t == "import")) {
        let rest: Vec<&str> = words.iter().filter(|w| *w != file).map(String::as_str).collect();
        message.push_str(&format!(
            "\nto load {file} into a container: cosmoql import {file} {}\nto query it: cosmoql query --data {file} {} \"SELECT ...\"",
            rest.join(" "),
            rest.join(" ")
        ));
    }
    let mut usage = match (command, inner) {
        (Some(c), Some(sub)) => sub.clone().bin_name(format!("cosmoql {} {}", c.get_name(), sub.get_name())),
        (Some(c), None) => c.clone().bin_name(format!("cosmoql {}", c.get_name())),
        (None, _) => cli.clone(),
    };
    message.push_str(&format!("\n\n{}\n\nFor more information, try '--help'.", usage.render_usage()));
    Some(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("improt", "import"), 1);
        assert_eq!(edit_distance("skwe", "skew"), 1);
        assert_eq!(edit_distance("temp", "item"), 2);
        assert_eq!(edit_distance("querry", "query"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
