//! The REPL's analytical store: `.analytics` (the mode, routing, an analytical store for a
//! container, its schema), statements run as standard SQL on the mirrors (in analytics mode, or
//! any statement that starts with `ANALYZE`), and the route that sends the Cosmos SQL aggregates
//! a container's analytical store answers exactly there.

use std::sync::Arc;
use std::time::Instant;

use cosmoql::ContainerClient;
use cosmoql_analytics::{AnalyticalRoute, Analytics, SchemaMode};

use crate::printer::Printer;
use crate::session::Session;

/// The prefix that runs one statement on the analytical store whatever the mode.
const PREFIX: &str = "ANALYZE ";

/// The statement without the `ANALYZE` prefix, when it has one.
pub fn strip_prefix(sql: &str) -> Option<&str> {
    let t = sql.trim_start();
    (t.len() > PREFIX.len() && t[..PREFIX.len()].eq_ignore_ascii_case(PREFIX)).then(|| t[PREFIX.len()..].trim_start())
}

impl Session {
    /// The session's analytical store, made at its first use.
    fn analytics(&self) -> Result<Arc<Analytics>, String> {
        let mut analytics = self.analytics.lock().unwrap_or_else(|e| e.into_inner());
        if analytics.is_none() {
            let made = Analytics::new(SchemaMode::WellDefined).map_err(|e| e.to_string())?;
            *analytics = Some(Arc::new(made.with_account(&self._client)));
        }
        analytics.clone().ok_or_else(|| "the analytical store is missing (a bug)".to_string())
    }

    /// `client`, routing the Cosmos SQL aggregates its analytical store answers exactly there
    /// (when it has one and routing is on).
    pub(crate) fn routed(&self, client: ContainerClient) -> Result<ContainerClient, String> {
        if !self.routing || client.container().analytical_ttl().is_none() {
            return Ok(client);
        }
        Ok(client.with_route(Arc::new(AnalyticalRoute::new(self.analytics()?))))
    }

    /// Runs a statement of standard SQL on the analytical store and prints its rows as a query's.
    pub(crate) fn analyze(&mut self, sql: &str) -> Result<(), String> {
        let started = Instant::now();
        let options = self.print_options(false);
        let rows = self.analytics()?.sql(sql).map_err(|e| e.render(sql))?;
        let mut printer = Printer::new(options);
        for row in rows {
            if !printer.push(row) {
                break;
            }
        }
        if let Some(text) = printer.finish() {
            crate::output::page(&text);
        }
        if self.timing {
            self.note(&format!("{:.1} ms (analytical store)", started.elapsed().as_secs_f64() * 1000.0));
        }
        Ok(())
    }

    /// `.analytics [on|off|route on|off|enable [NAME]|disable [NAME]|schema]`.
    pub(crate) fn analytics_command(&mut self, args: &[&str]) -> Result<(), String> {
        match args {
            [] => {
                let tables = self.analytics()?.tables();
                let names: Vec<String> = tables.iter().map(|(db, c)| format!("{db}.{c}")).collect();
                let mode = if self.analytics_mode { "on" } else { "off" };
                let route = if self.routing { "on" } else { "off" };
                self.say(&format!(
                    "analytics mode {mode}; routing {route}; containers with an analytical store: {}",
                    if names.is_empty() { "none (.analytics enable)".to_string() } else { names.join(", ") }
                ));
                Ok(())
            }
            ["on"] => {
                self.analytics_mode = true;
                self.say("statements now run on the analytical store (standard SQL; .analytics off goes back)");
                Ok(())
            }
            ["off"] => {
                self.analytics_mode = false;
                Ok(())
            }
            ["route", switch @ ("on" | "off")] => {
                self.routing = *switch == "on";
                Ok(())
            }
            ["enable" | "disable", rest @ ..] => {
                let container = match rest {
                    [] => self.container()?,
                    [name] => self.db.container_client(name).map_err(|e| e.to_string())?,
                    _ => return Err("usage: .analytics enable|disable [CONTAINER]".into()),
                };
                let ttl = (args[0] == "enable").then_some(-1);
                container.replace_analytical_storage_ttl(ttl).map_err(|e| e.to_string())?;
                Ok(())
            }
            ["schema"] => {
                let container = self.container()?;
                let id = container.read_properties().get("id").as_str().unwrap_or_default().to_string();
                let db = self.db.id().to_string();
                let schema = self.analytics()?.describe(&db, &id).map_err(|e| e.to_string())?;
                self.say(schema.trim_end());
                Ok(())
            }
            _ => Err("usage: .analytics [on|off|route on|off|enable [CONTAINER]|disable [CONTAINER]|schema]".into()),
        }
    }
}
