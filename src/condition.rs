//! A conditional patch's filter predicate (`FROM c WHERE <condition>`, the service's
//! `x-ms-cosmos-patch-condition` / the SDKs' `filter_predicate`), evaluated with the query engine
//! on the current item, so a condition means exactly what the same WHERE means in a query.

use std::sync::Arc;

use cosmoql_executor::QueryOptions;
use cosmoql_planner::Plan;
use cosmoql_storage::{Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql_value::Value;

use crate::Error;

/// A compiled condition.
#[derive(Debug)]
pub(crate) struct Condition {
    /// A container of its own that holds the item under test for the time of a test (the
    /// predicate runs under the tested item's partition lock, so it must not touch that container).
    scratch: Container,
    plan: Arc<Plan>,
}

impl Condition {
    /// Compiles `text` (`FROM c WHERE ...`) for items of `container`; a query error (400) if it
    /// is not a FROM clause with an optional WHERE the engine accepts.
    pub(crate) fn compile(container: &Container, text: &str) -> Result<Condition, Error> {
        let scratch = Container::new(
            format!("{}-condition", container.id()),
            PartitionKeyDefinition::none(),
            ContainerSettings::default(),
        );
        let sql = format!("SELECT VALUE true {text}");
        let plan = cosmoql_executor::plan_query(&scratch, &sql, &QueryOptions::default())
            .map_err(|error| Error::Query { sql: sql.clone(), error })?;
        Ok(Condition { scratch, plan: Arc::new(plan) })
    }

    /// Whether the condition holds on `item` (any result row); false if the item cannot be
    /// evaluated (it is then not the item the condition was written for).
    pub(crate) fn holds(&self, item: &Value) -> bool {
        let Some(id) = item.get("id").as_str() else { return false };
        let key = cosmoql_storage::PartitionKey::none();
        let write = cosmoql_storage::WriteOptions::default();
        if self.scratch.upsert(item, &write).is_err() {
            return false;
        }
        let options = QueryOptions::default();
        let held = cosmoql_executor::execute_plan(&self.scratch, &self.plan, &options)
            .is_ok_and(|out| out.items.iter().any(|v| *v == Value::Bool(true)));
        let _ = self.scratch.delete(&key, id, &write);
        held
    }
}
