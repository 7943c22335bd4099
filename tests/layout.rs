//! The layout rules of docs/ARCHITECTURE.md, checked on the sources: no two modules of a crate
//! import each other (no cycle of `crate::` references among a crate's top-level modules), and
//! no source file (nor script under `scripts/`) is over 1,000 lines, except the few listed here,
//! which may only shrink.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each crate's source folder, from the repository's root.
const CRATES: &[&str] = &[
    "src",
    "value/src",
    "catalog/src",
    "parser/src",
    "planner/src",
    "executor/src",
    "storage/src",
    "repl/src",
    "gateway/src",
    "analytics/src",
    "js/src",
    // A workspace of its own (out of the default build), checked all the same.
    "ballista/src",
];

/// Files over 1,000 lines today, with their length now: they may shrink, not grow (issue 22
/// splits them).
const TOO_LONG_TODAY: &[(&str, usize)] = &[("executor/src/functions/datetime.rs", 1008)];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file as far as imports go: without its tests (a `#[cfg(test)]` module ends a
/// file here) and without comments (a doc link is no import).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

fn identifier(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len());
    &text[..end]
}

/// The top-level modules `code` names through `crate::` (paths and `use crate::{...}` groups).
fn references(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Items of the group at its top level: `a`, `b::c`, `d::{e, f}`.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_ascii_alphabetic() || c == '_') => {
                        out.insert(identifier(&group[i..]).to_string());
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(identifier(rest).to_string());
        }
    }
    out
}

/// A crate's top-level modules and the others each one names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module_of = |path: &Path| -> String {
        let relative = path.strip_prefix(src).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(file);
        if module == "lib" || module == "main" {
            continue;
        }
        let code = code(&std::fs::read_to_string(file).unwrap());
        let named: Vec<String> =
            references(&code).into_iter().filter(|m| *m != module && modules.contains(m)).collect();
        graph.entry(module).or_default().extend(named);
    }
    graph
}

/// A cycle of `graph`, as the modules along it, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_two_modules_of_a_crate_import_each_other() {
    let mut cycles = Vec::new();
    for src in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(src), &mut files);
        assert!(!files.is_empty(), "{src}: no Rust files found");
        // A crate of one file and a binary (ballista/src) has no modules to import each other.
        let graph = module_graph(&root().join(src));
        if let Some(found) = cycle(&graph) {
            cycles.push(format!("{src}: {}", found.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "modules that import each other:\n{}", cycles.join("\n"));
}

#[test]
fn the_checker_finds_what_it_looks_for() {
    let named = references(&code(
        "use crate::a::X;\nuse crate::{b, c::{D, E}, f::*};\nlet x = crate::g::h(); // crate::comment\n/// [`crate::doc`]\n#[cfg(test)]\nuse crate::test_only;",
    ));
    assert_eq!(named.into_iter().collect::<Vec<_>>(), ["a", "b", "c", "f", "g"]);
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["c".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
    ]
    .into();
    assert_eq!(cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    let acyclic: BTreeMap<String, BTreeSet<String>> =
        [("a".to_string(), BTreeSet::from(["b".to_string()])), ("b".to_string(), BTreeSet::new())].into();
    assert_eq!(cycle(&acyclic), None);
}

#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let mut long = Vec::new();
    for src in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(src), &mut files);
        for file in files {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            let name = file.strip_prefix(root()).unwrap().to_string_lossy().to_string();
            let allowed = TOO_LONG_TODAY.iter().find(|(f, _)| *f == name).map_or(1000, |(_, n)| *n);
            if lines > allowed {
                long.push(format!("{name}: {lines} lines (at most {allowed})"));
            }
        }
    }
    assert!(long.is_empty(), "files too long:\n{}", long.join("\n"));
}

/// The scripts (the SDK suites, the tools) keep to the same bound.
#[test]
fn no_script_is_over_a_thousand_lines() {
    fn walk(dir: &Path, long: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, long);
            } else if path.extension().is_some_and(|e| e == "py" || e == "mjs" || e == "sh") {
                let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                if lines > 1000 {
                    long.push(format!("{}: {lines} lines", path.strip_prefix(root()).unwrap().display()));
                }
            }
        }
    }
    let mut long = Vec::new();
    walk(&root().join("scripts"), &mut long);
    assert!(long.is_empty(), "scripts too long:\n{}", long.join("\n"));
}

/// The layers of `docs/ARCHITECTURE.md`: each crate and the workspace crates it may depend on
/// (`[dependencies]`, not dev-dependencies). The planner knows the catalog, never the storage
/// engine; nothing below the facade knows the facade or the REPL; the REPL knows only the facade, the
/// gateway (`cosmoql serve`) and the analytical store (`cosmoql analyze`).
const LAYERS: &[(&str, &[&str])] = &[
    ("value", &[]),
    ("catalog", &["cosmoql-value"]),
    ("parser", &["cosmoql-value"]),
    ("planner", &["cosmoql-value", "cosmoql-parser", "cosmoql-catalog"]),
    ("storage", &["cosmoql-value", "cosmoql-catalog"]),
    ("executor", &["cosmoql-value", "cosmoql-parser", "cosmoql-catalog", "cosmoql-planner", "cosmoql-storage"]),
    // The `cosmoql` binary: the facade (`cosmoql`, not an engine crate), the gateway it serves and
    // the analytical store it queries (`cosmoql analyze`).
    ("repl", &["cosmoql-gateway", "cosmoql-analytics"]),
    // The REST gateway: above the facade, never an engine crate directly.
    ("gateway", &[]),
    // The analytical store (issue 25): above the facade (whose containers it mirrors) and the
    // storage engine, never imported by the query crates.
    ("analytics", &["cosmoql-value", "cosmoql-catalog", "cosmoql-storage"]),
    // Server-side JavaScript (issue 26): a sandbox on the values alone. The facade runs scripts
    // in it (user-defined functions through the executor's `UdfHost`); the query crates never
    // import it.
    ("js", &["cosmoql-value"]),
    // Ballista over the analytical store's Parquet layout: above the analytical store (its values),
    // a workspace of its own that nothing imports.
    ("ballista", &["cosmoql-analytics"]),
];

/// The workspace crates named in a manifest's `[dependencies]` table.
fn workspace_dependencies(manifest: &str) -> BTreeSet<String> {
    let mut in_dependencies = false;
    let mut out = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies && line.starts_with("cosmoql-") {
            out.insert(line.split(['.', ' ', '=']).next().unwrap_or_default().to_string());
        }
    }
    out
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    for (krate, allowed) in LAYERS {
        let manifest = std::fs::read_to_string(root().join(krate).join("Cargo.toml")).unwrap();
        let deps = workspace_dependencies(&manifest);
        let extra: Vec<_> = deps.iter().filter(|d| !allowed.contains(&d.as_str())).collect();
        assert!(extra.is_empty(), "{krate} depends on {extra:?}, above or beside its layer (see docs/ARCHITECTURE.md)");
    }
    let planner = workspace_dependencies(&std::fs::read_to_string(root().join("planner/Cargo.toml")).unwrap());
    assert!(planner.contains("cosmoql-catalog") && !planner.contains("cosmoql-storage"), "{planner:?}");
    assert_eq!(
        workspace_dependencies(
            "[dependencies]\ncosmoql-a.workspace = true\n[dev-dependencies]\ncosmoql-b = { path = \"b\" }\n"
        ),
        BTreeSet::from(["cosmoql-a".to_string()])
    );
}
