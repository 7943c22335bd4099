//! A page whose held results were let go (`executor/src/held.rs`: too many, idle too long, or
//! pushed out by other queries' results) runs the query again and skips what was returned. In a test
//! binary of its own: letting go of every query's results would disturb the other paging tests.

use cosmoql::storage::{Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql::value::parse_json;
use cosmoql::{execute, QueryOptions};

/// Exact when nothing is written between pages.
#[test]
fn pages_whose_held_results_were_let_go_run_again() {
    let c = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: 3, ..ContainerSettings::default() },
    );
    for i in 0..40 {
        c.create(&parse_json(&format!(r#"{{"id":"s{i}","pk":"k{}","n":{}}}"#, i % 5, i % 13)).unwrap()).unwrap();
    }
    for sql in ["SELECT DISTINCT VALUE c.n FROM c", "SELECT c.n, COUNT(1) AS k FROM c GROUP BY c.n"] {
        let whole = execute(&c, sql, &QueryOptions::default()).unwrap().items;
        assert_eq!(whole.len(), 13);
        let mut options = QueryOptions { max_item_count: Some(4), ..QueryOptions::default() };
        let mut all = Vec::new();
        for page in 0.. {
            let out = execute(&c, sql, &options).unwrap();
            all.extend(out.items);
            match out.continuation {
                Some(token) => options.continuation = Some(token),
                None => break,
            }
            if page == 1 {
                cosmoql::executor::held::let_go_all();
            }
        }
        assert_eq!(all, whole, "{sql}");
    }
}
