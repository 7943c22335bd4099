//! Paging with continuation tokens across a process restart: the first process reads one page and
//! saves the token; a second process (a fresh start: the container is rebuilt from the same data)
//! resumes from it and reads the rest. `cargo run --example paging`.

use cosmoql::IndexingPolicy;
use cosmoql::{Container, ContainerSettings, PartitionKeyDefinition, QueryOptions, Value};

const SQL: &str = "SELECT c.id, c.score FROM c WHERE c.score > 20 ORDER BY c.score DESC, c.id";

fn container() -> Container {
    let settings = ContainerSettings { initial_partitions: 6, ..ContainerSettings::default() };
    let c = Container::new("scores", PartitionKeyDefinition::hash("/team").expect("key"), settings);
    // ORDER BY on two paths needs a composite index for them, as on the service.
    let policy = r#"{"compositeIndexes": [[{"path": "/score", "order": "descending"}, {"path": "/id"}]]}"#;
    c.replace_indexing_policy(
        IndexingPolicy::from_json(&cosmoql::value::parse_json(policy).expect("JSON")).expect("policy"),
    );
    for i in 0..60 {
        let doc = format!(r#"{{"id":"p{i:02}","team":"t{}","score":{}}}"#, i % 7, (i * 37) % 50);
        c.create(&cosmoql::value::parse_json(&doc).expect("JSON")).expect("write");
    }
    c
}

fn page(token: Option<String>) -> Result<(Vec<Value>, Option<String>), Box<dyn std::error::Error>> {
    let options = QueryOptions { max_item_count: Some(5), continuation: token, ..QueryOptions::default() };
    let out = cosmoql::execute(&container(), SQL, &options)?;
    Ok((out.items, out.continuation))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let token_file = std::env::temp_dir().join(format!("cosmoql-paging-{}.token", std::process::id()));
    if let Some(saved) = std::env::args().nth(1) {
        // The second process: resume from the saved token.
        let token = std::fs::read_to_string(&saved)?;
        let mut next = Some(token);
        let mut n = 1;
        while let Some(t) = next {
            let (items, more) = page(Some(t))?;
            n += 1;
            println!(
                "[process 2] page {n}: {}",
                items.iter().map(|v| v.get("id").to_string()).collect::<Vec<_>>().join(" ")
            );
            next = more;
        }
        std::fs::remove_file(&saved)?;
        return Ok(());
    }
    println!("{SQL}");
    let (items, token) = page(None)?;
    println!("[process 1] page 1: {}", items.iter().map(|v| v.get("id").to_string()).collect::<Vec<_>>().join(" "));
    let token = token.ok_or("expected more pages")?;
    println!("[process 1] saving the continuation token {token} and exiting");
    std::fs::write(&token_file, &token)?;
    let status = std::process::Command::new(std::env::current_exe()?).arg(&token_file).status()?;
    if !status.success() {
        return Err("the second process failed".into());
    }
    // The same query read in one go gives the same sequence.
    let all = cosmoql::execute(&container(), SQL, &QueryOptions::default())?;
    println!("[check] one go: {}", all.items.iter().map(|v| v.get("id").to_string()).collect::<Vec<_>>().join(" "));
    Ok(())
}
