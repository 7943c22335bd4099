//! The REPL's server-side JavaScript on the current container: `.udf` (user-defined functions,
//! called from queries as `udf.NAME(...)`), `.proc` (stored procedures, `.proc exec` runs one)
//! and `.trigger` (triggers, run by the writes that name them).

use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{ContainerClient, PartitionKey, ProcedureOptions, Script, ScriptKind, TriggerOperation, TriggerType};

use crate::session::Session;
use crate::statements::unquote;

/// The text after the first `n` words of `rest`.
fn after_words(rest: &str, n: usize) -> &str {
    let mut tail = rest.trim_start();
    for _ in 0..n {
        tail = tail.trim_start();
        tail = tail.find(char::is_whitespace).map_or("", |i| &tail[i..]);
    }
    tail.trim()
}

fn read_script(file: &str) -> Result<String, String> {
    let file = unquote(file);
    if file.is_empty() {
        return Err("no FILE given".into());
    }
    std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))
}

/// One line of a list: the name (`udf.tax`, `bulk`, `stamp (Pre Create)`) and the script's first
/// line.
fn listed(script: &Script) -> String {
    let name = match (script.kind, script.trigger) {
        (ScriptKind::UserDefinedFunction, _) => format!("udf.{}", script.id),
        (_, Some((ty, op))) => format!("{} ({} {})", script.id, ty.name(), op.name()),
        _ => script.id.clone(),
    };
    let first = script.body.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
    let mut line: String = first.chars().take(60).collect();
    if first.chars().nth(60).is_some() {
        line.push_str("...");
    }
    format!("{name}  {}", crate::text::for_terminal(&line))
}

impl Session {
    /// `.udf list | create NAME FILE | replace NAME FILE | show NAME | drop NAME`.
    pub(crate) fn udf_command(&mut self, args: &[&str], rest: &str) -> Result<(), String> {
        let usage = "usage: .udf list | create NAME FILE | replace NAME FILE | show NAME | drop NAME";
        let client = self.container()?;
        if self.list_show_or_drop(&client, ScriptKind::UserDefinedFunction, args)? {
            return Ok(());
        }
        match args {
            ["create" | "replace", name, ..] => {
                let body = read_script(after_words(rest, 2)).map_err(|e| format!("{e}\n{usage}"))?;
                if args[0] == "create" {
                    client.create_user_defined_function(name, &body).map_err(|e| e.to_string())?;
                    self.say(&format!("created udf.{name} (call it in a query as udf.{name}(...))"));
                } else {
                    client.replace_user_defined_function(name, &body).map_err(|e| e.to_string())?;
                    self.say(&format!("replaced udf.{name}"));
                }
                Ok(())
            }
            _ => Err(usage.into()),
        }
    }

    /// `.proc list | create NAME FILE | replace NAME FILE | show NAME | drop NAME |
    /// exec NAME PK [ARGS]`.
    pub(crate) fn proc_command(&mut self, args: &[&str], rest: &str) -> Result<(), String> {
        let usage =
            "usage: .proc list | create NAME FILE | replace NAME FILE | show NAME | drop NAME | exec NAME PK [ARGS-JSON]";
        let client = self.container()?;
        if self.list_show_or_drop(&client, ScriptKind::StoredProcedure, args)? {
            return Ok(());
        }
        match args {
            ["create" | "replace", name, ..] => {
                let body = read_script(after_words(rest, 2)).map_err(|e| format!("{e}\n{usage}"))?;
                if args[0] == "create" {
                    client.create_stored_procedure(name, &body).map_err(|e| e.to_string())?;
                    self.say(&format!("created stored procedure {name} (.proc exec {name} PK [ARGS] runs it)"));
                } else {
                    client.replace_stored_procedure(name, &body).map_err(|e| e.to_string())?;
                    self.say(&format!("replaced stored procedure {name}"));
                }
            }
            ["exec", name, pk, ..] => {
                let key = PartitionKey::parse_json(pk).map_err(|e| format!("PK: {e}\n{usage}"))?;
                // ARGS: the parameters as a JSON array (the SDKs' form), or one parameter.
                let params = match after_words(rest, 3) {
                    "" => Vec::new(),
                    text => match parse_json(text).map_err(|e| format!("ARGS: {e}\n{usage}"))? {
                        Value::Array(items) => items.to_vec(),
                        one => vec![one],
                    },
                };
                let options = ProcedureOptions { script_logging: true, ..ProcedureOptions::default() };
                let response =
                    client.execute_stored_procedure(name, &key, &params, &options).map_err(|e| e.to_string())?;
                if !response.log.is_empty() {
                    self.say(&format!("log: {}", crate::text::for_terminal(&response.log)));
                }
                crate::output::page(&format!("{}\n", to_json_string(&response.body).unwrap_or_default()));
                self.note(&format!("request charge {:.2} RU", response.request_charge));
                self.refresh_vocabulary();
            }
            _ => return Err(usage.into()),
        }
        Ok(())
    }

    /// `.trigger list | create NAME pre|post OPERATION FILE | replace ... | show NAME | drop NAME`.
    pub(crate) fn trigger_command(&mut self, args: &[&str], rest: &str) -> Result<(), String> {
        let usage = "usage: .trigger list | create NAME pre|post all|create|replace|upsert|delete FILE | \
                     replace NAME pre|post OPERATION FILE | show NAME | drop NAME";
        let client = self.container()?;
        if self.list_show_or_drop(&client, ScriptKind::Trigger, args)? {
            return Ok(());
        }
        match args {
            ["create" | "replace", name, ty, op, ..] => {
                let ty = TriggerType::parse(ty).ok_or_else(|| format!("{ty}: not pre or post\n{usage}"))?;
                let op = TriggerOperation::parse(op).ok_or_else(|| format!("{op}: not an operation\n{usage}"))?;
                let body = read_script(after_words(rest, 4)).map_err(|e| format!("{e}\n{usage}"))?;
                if args[0] == "create" {
                    client.create_trigger(name, &body, ty, op).map_err(|e| e.to_string())?;
                    self.say(&format!(
                        "created {}-trigger {name} on {} (it runs on the writes that name it)",
                        ty.name().to_lowercase(),
                        op.name()
                    ));
                } else {
                    client.replace_trigger(name, &body, ty, op).map_err(|e| e.to_string())?;
                    self.say(&format!("replaced trigger {name}"));
                }
            }
            _ => return Err(usage.into()),
        }
        Ok(())
    }

    /// `list`, `show NAME` and `drop NAME`, alike for the three kinds; false for another
    /// subcommand.
    fn list_show_or_drop(&self, client: &ContainerClient, kind: ScriptKind, args: &[&str]) -> Result<bool, String> {
        match args {
            [] | ["list"] => {
                let scripts = client.list_scripts(kind);
                if scripts.is_empty() {
                    self.say(match kind {
                        ScriptKind::UserDefinedFunction => {
                            "no user-defined functions (.udf create NAME FILE registers one)"
                        }
                        ScriptKind::StoredProcedure => "no stored procedures (.proc create NAME FILE registers one)",
                        ScriptKind::Trigger => {
                            "no triggers (.trigger create NAME pre|post OPERATION FILE registers one)"
                        }
                    });
                }
                for script in scripts {
                    self.say(&listed(&script));
                }
            }
            ["show", name] => {
                let script = client.read_script(kind, name).map_err(|e| e.to_string())?;
                self.say(&crate::text::for_terminal(script.body.trim_end()));
            }
            ["drop", name] => {
                client.delete_script(kind, name).map_err(|e| e.to_string())?;
                let what = match kind {
                    ScriptKind::UserDefinedFunction => format!("udf.{name}"),
                    ScriptKind::StoredProcedure => format!("stored procedure {name}"),
                    ScriptKind::Trigger => format!("trigger {name}"),
                };
                self.say(&format!("dropped {what}"));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
