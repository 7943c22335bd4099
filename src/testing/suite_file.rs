//! Suite files: `.sql` files of annotated queries (`-- @name`, options, the expected rows or
//! error), parsed into cases with the lines blessing rewrites.

use cosmoql_executor::QueryErrorKind;

use super::*;

#[derive(Debug, Clone)]
pub(super) enum Expect {
    Rows { text: String, line: usize },
    Error { kind: QueryErrorKind, text: String },
    Missing,
}

#[derive(Debug, Clone)]
pub(super) struct Case {
    pub(super) name: String,
    /// 1-based line of `-- @name`.
    pub(super) line: usize,
    pub(super) settings: Settings,
    pub(super) order_any: bool,
    pub(super) sql: String,
    pub(super) expect: Expect,
    /// 0-based line range `[start, end)` that blessing replaces.
    pub(super) span: (usize, usize),
    pub(super) problems: Vec<String>,
}

#[derive(Debug)]
pub(super) struct SuiteFile {
    pub(super) lines: Vec<String>,
    pub(super) trailing_newline: bool,
    pub(super) problems: Vec<(usize, String)>,
    pub(super) cases: Vec<Case>,
}

/// `-- @word rest` → `(word, rest)`.
pub(super) fn directive(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("--")?.trim_start().strip_prefix('@')?;
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    if end == 0 {
        return None;
    }
    Some((&rest[..end], rest[end..].trim()))
}

pub(super) fn apply_option(settings: &mut Settings, order_any: &mut bool, word: &str, arg: &str) -> Result<(), String> {
    let positive = |what: &str| -> Result<usize, String> {
        arg.parse::<usize>().ok().filter(|n| *n >= 1).ok_or_else(|| format!("`-- @{what}` needs a positive integer"))
    };
    match word {
        "container" if !arg.is_empty() => settings.container = Some(arg.to_string()),
        "container" => return Err("`-- @container` needs a container id".into()),
        "partitions" => settings.partitions = Some(positive("partitions")?),
        "pagesize" => settings.page_size = Some(positive("pagesize")?),
        "maxdop" => {
            settings.max_dop = Some(arg.parse().map_err(|_| "`-- @maxdop` needs an integer".to_string())?);
        }
        "order" => match arg {
            "any" => *order_any = true,
            "exact" => *order_any = false,
            _ => return Err("`-- @order` is `any` or `exact`".into()),
        },
        "param" => {
            let (name, json) = arg.split_once('=').ok_or("`-- @param` is `-- @param @name = <JSON>`")?;
            let name = name.trim();
            let valid = name
                .strip_prefix('@')
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_'));
            if !valid {
                return Err(format!("`-- @param`: `{name}` is not a parameter name like @x"));
            }
            let value = parse_json(json.trim()).map_err(|e| format!("`-- @param {name}`: not JSON: {e}"))?;
            settings.set_parameter(name, value);
        }
        "pk" => {
            let key = PartitionKey::parse_json(arg).map_err(|e| format!("`-- @pk`: {e}"))?;
            settings.partition_key = Some(key);
        }
        "name" | "expect" | "error" => return Err(format!("`-- @{word}` is misplaced here")),
        _ => return Err(format!("unknown option `-- @{word}`")),
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum State {
    Header,
    Query,
    Rows,
    AfterError,
}

pub(super) fn parse_suite_file(text: &str) -> SuiteFile {
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut file = SuiteFile {
        trailing_newline: text.ends_with('\n'),
        problems: Vec::new(),
        cases: Vec::new(),
        lines: Vec::new(),
    };
    let mut defaults = Settings::default();
    let mut default_order_any = false;
    let mut state = State::Header;
    let mut current: Option<Case> = None;
    let mut sql_lines: Vec<&str> = Vec::new();
    let mut last_sql_line = 0usize;

    let finish = |case: Option<Case>, sql_lines: &mut Vec<&str>, last_sql_line: usize, cases: &mut Vec<Case>| {
        let Some(mut case) = case else { return };
        case.sql = sql_lines.join("\n").trim().to_string();
        sql_lines.clear();
        if case.sql.is_empty() {
            case.problems.push("the case has no query".into());
        }
        if matches!(case.expect, Expect::Missing) {
            case.span = (last_sql_line + 1, last_sql_line + 1);
        }
        cases.push(case);
    };

    for (i, line) in lines.iter().enumerate() {
        let d = directive(line);
        if let Some(("name", name)) = d {
            finish(current.take(), &mut sql_lines, last_sql_line, &mut file.cases);
            if name.is_empty() {
                file.problems.push((i + 1, "`-- @name` needs a name".into()));
            }
            current = Some(Case {
                name: name.to_string(),
                line: i + 1,
                settings: defaults.clone(),
                order_any: default_order_any,
                sql: String::new(),
                expect: Expect::Missing,
                span: (i + 1, i + 1),
                problems: Vec::new(),
            });
            last_sql_line = i;
            state = State::Query;
            continue;
        }
        let trimmed = line.trim();
        match (state, current.as_mut()) {
            (State::Header, _) | (_, None) => match d {
                Some((word, arg)) => {
                    if let Err(e) = apply_option(&mut defaults, &mut default_order_any, word, arg) {
                        file.problems.push((i + 1, e));
                    }
                }
                None if trimmed.is_empty() || trimmed.starts_with("--") => {}
                None => file.problems.push((i + 1, "text before the first `-- @name`".into())),
            },
            (State::Query, Some(case)) => match d {
                Some(("expect", arg)) => {
                    let text = if arg.is_empty() { String::new() } else { format!("{arg}\n") };
                    case.expect = Expect::Rows { text, line: i + 1 };
                    case.span = (i, i + 1);
                    state = State::Rows;
                }
                Some(("error", arg)) => {
                    let (kind, text) = arg.split_once(char::is_whitespace).unwrap_or((arg, ""));
                    match parse_kind(kind) {
                        Some(kind) => case.expect = Expect::Error { kind, text: text.trim().to_string() },
                        None => {
                            case.problems.push(format!(
                                "line {}: `-- @error` needs a kind: syntax, bind, eval, storage or internal",
                                i + 1
                            ));
                            case.expect = Expect::Error { kind: QueryErrorKind::Internal, text: String::new() };
                        }
                    }
                    case.span = (i, i + 1);
                    state = State::AfterError;
                }
                Some((word, arg)) => {
                    if let Err(e) = apply_option(&mut case.settings, &mut case.order_any, word, arg) {
                        case.problems.push(format!("line {}: {e}", i + 1));
                    }
                }
                None => {
                    sql_lines.push(line);
                    if !trimmed.is_empty() {
                        last_sql_line = i;
                    }
                }
            },
            (State::Rows, Some(case)) => {
                if d.is_some() {
                    case.problems.push(format!("line {}: an option after the expected result", i + 1));
                } else if trimmed.starts_with("--") || trimmed.is_empty() {
                } else if let Expect::Rows { text, .. } = &mut case.expect {
                    text.push_str(line);
                    text.push('\n');
                    case.span.1 = i + 1;
                }
            }
            (State::AfterError, Some(case)) => {
                if d.is_some() {
                    case.problems.push(format!("line {}: an option after the expected error", i + 1));
                } else if !trimmed.is_empty() && !trimmed.starts_with("--") {
                    case.problems.push(format!("line {}: text after `-- @error`", i + 1));
                }
            }
        }
    }
    finish(current.take(), &mut sql_lines, last_sql_line, &mut file.cases);
    file.lines = lines;
    file
}
