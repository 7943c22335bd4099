//! The REPL's server-side JavaScript: `.udf` (the current container's user-defined functions,
//! called from queries as `udf.NAME(...)`).

use crate::session::Session;
use crate::statements::unquote;

impl Session {
    /// `.udf list | create NAME FILE | replace NAME FILE | show NAME | drop NAME`.
    pub(crate) fn udf_command(&mut self, args: &[&str], rest: &str) -> Result<(), String> {
        let usage = "usage: .udf list | create NAME FILE | replace NAME FILE | show NAME | drop NAME";
        let client = self.container()?;
        match args {
            [] | ["list"] => {
                let udfs = client.list_user_defined_functions();
                if udfs.is_empty() {
                    self.say("no user-defined functions (.udf create NAME FILE registers one)");
                }
                for udf in udfs {
                    let first = udf.body.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
                    let mut line: String = first.chars().take(60).collect();
                    if first.chars().nth(60).is_some() {
                        line.push_str("...");
                    }
                    self.say(&format!("udf.{}  {}", udf.id, crate::text::for_terminal(&line)));
                }
                Ok(())
            }
            ["create" | "replace", name, ..] => {
                let file = unquote(rest.splitn(3, char::is_whitespace).nth(2).unwrap_or_default().trim());
                if file.is_empty() {
                    return Err(usage.into());
                }
                let body = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
                if args[0] == "create" {
                    client.create_user_defined_function(name, &body).map_err(|e| e.to_string())?;
                    self.say(&format!("created udf.{name} (call it in a query as udf.{name}(...))"));
                } else {
                    client.replace_user_defined_function(name, &body).map_err(|e| e.to_string())?;
                    self.say(&format!("replaced udf.{name}"));
                }
                Ok(())
            }
            ["show", name] => {
                let udf = client.read_user_defined_function(name).map_err(|e| e.to_string())?;
                self.say(&crate::text::for_terminal(udf.body.trim_end()));
                Ok(())
            }
            ["drop", name] => {
                client.delete_user_defined_function(name).map_err(|e| e.to_string())?;
                self.say(&format!("dropped udf.{name}"));
                Ok(())
            }
            _ => Err(usage.into()),
        }
    }
}
