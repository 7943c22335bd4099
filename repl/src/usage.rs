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
    let closest = cli.get_subcommands().map(|c| (edit_distance(&word, c.get_name()), c.get_name())).min();
    match closest {
        Some((d, name)) if d <= 2 => Err(format!(
            "unknown command `{word}`: did you mean `{name}`? (for a new database directory of that name, write ./{word})"
        )),
        _ => Ok(()),
    }
}

/// Levenshtein distance (short words).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// For clap's "unexpected argument" error: the message to print instead, saying which commands
/// take the option (and, for the REPL given a data file, the command that loads it).
pub fn unknown_option(cli: &clap::Command, args: &[OsString], error: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg) else { return None };
    let option = arg.split('=').next().unwrap_or(arg);
    let words: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let command = words.iter().find_map(|w| cli.find_subcommand(w));
    let here = match command {
        Some(c) => format!("`cosmoql {}`", c.get_name()),
        None => "the REPL (`cosmoql` without a command)".to_string(),
    };
    let long = option.strip_prefix("--");
    let short = option.strip_prefix('-').filter(|s| s.chars().count() == 1).and_then(|s| s.chars().next());
    let takers: Vec<&str> = cli
        .get_subcommands()
        .filter(|c| {
            c.get_arguments().any(|a| {
                long.is_some_and(|l| a.get_long() == Some(l)) || short.is_some_and(|s| a.get_short() == Some(s))
            })
        })
        .map(|c| c.get_name())
        .collect();
    let mut message = format!("{option} is not an option of {here}");
    match takers.as_slice() {
        [] => message.push_str(&format!(
            "; `cosmoql {}--help` lists its options",
            command.map(|c| format!("{} ", c.get_name())).unwrap_or_default()
        )),
        [one] => message.push_str(&format!("; it is an option of `cosmoql {one}`")),
        many => message.push_str(&format!("; it is an option of `cosmoql` {}", many.join(", "))),
    }
    // `cosmoql readings.ndjson --partition-key /k`: loading a file is `import`'s work.
    let data = words.iter().find(|w| w.ends_with(".json") || w.ends_with(".ndjson"));
    if let (None, Some(file), true) = (command, data, takers.contains(&"import")) {
        let rest: Vec<&str> = words.iter().filter(|w| *w != file).map(String::as_str).collect();
        message.push_str(&format!(
            "\nto load {file} into a container: cosmoql import {file} {}\nto query it: cosmoql query --data {file} {} \"SELECT ...\"",
            rest.join(" "),
            rest.join(" ")
        ));
    }
    let mut usage = match command {
        Some(c) => c.clone().bin_name(format!("cosmoql {}", c.get_name())),
        None => cli.clone(),
    };
    message.push_str(&format!("\n\n{}\n\nFor more information, try '--help'.", usage.render_usage()));
    Some(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("improt", "import"), 2);
        assert_eq!(edit_distance("querry", "query"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
